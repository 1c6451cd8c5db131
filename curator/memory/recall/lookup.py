"""The index side of recall: a prompt's words searched across every category's FTS5 table, rarest
first, ranked, and kept only when relevant enough.

- Words: the prompt's content words (terms.words: no stop words), in order, at most PROMPT_WORDS.
- Rarity is counted across categories (the `terms` table's document frequency, summed); a word no
  memory holds as written may still match a stemmed form ("deploying" → "deploy"), so its matches
  are counted in the FTS tables themselves. Words in more than COMMON of the memories (or 25, in a
  small root) are not searched for: they would make every memory a match. At most MAX_TERMS words.
- Each category's table gives its best few by bm25 (title weighing most); for those, which of the
  searched words each one holds (one query per category).
- Relevance is the share of the prompt's weight a memory covers: each prompt word weighs its IDF over
  all memories (a word no memory holds weighs the most: a prompt about something else), and a memory
  covers the words it holds. A memory is kept when it holds at least MIN_MATCHED of the words and
  covers at least MIN_COVERAGE and NEAR_BEST of the best one's coverage (chosen from measurements:
  see the README's "Recall" section); the kept ones are ranked by coverage, then bm25.
"""

from __future__ import annotations

import math
import sqlite3
from collections import namedtuple

from memcurate.curator.categories import CATEGORIES
from memcurate.curator.memory.index.schema import WEIGHTS, fts_table
from memcurate.curator.memory.index.terms import match_expression, words

PROMPT_WORDS = 40  # content words of a prompt considered (a pasted log adds nothing past them)
PROMPT_CHARS = 20_000  # characters of a prompt read for its words
MAX_TERMS = 16
COMMON = 0.10
MIN_MATCHED = 2
MIN_COVERAGE = 0.40
NEAR_BEST = 0.5  # and at least this share of the best one's coverage


class Hit(namedtuple("Hit", "category name id bm25 matched coverage")):
    """A relevant memory: `name` its file name (<id>.md), `bm25` -bm25 in its category's table (higher is
    better), `matched` the prompt's words it holds, `coverage` the share of the prompt's weight they carry."""

    __slots__ = ()

    @property
    def key(self) -> str:
        return f"{self.category}/{self.id}"


def prompt_words(prompt: str) -> list[str]:
    out: dict[str, None] = {}
    for w in words(prompt[:PROMPT_CHARS]):
        out.setdefault(w)
        if len(out) >= PROMPT_WORDS:
            break
    return list(out)


def search(
    conn: sqlite3.Connection, prompt: list[str], per_category: int, unindexed=None, words_of=None
) -> list[Hit]:
    """The relevant memories for the prompt's words `prompt`, best first (at most `per_category` looked
    at in each category). Runs inside the caller's read transaction. `unindexed` (folders.Unindexed):
    files added or changed since the index saw them, scored from `words_of(category, name)` (their id
    and set of words, None when unreadable) instead of their stale rows; files gone are left out."""
    if not prompt:
        return []
    stale = set()
    extra: list[tuple[str, str, str, set[str]]] = []
    if unindexed:
        stale = {
            (c, n)
            for part in (unindexed.changed, unindexed.gone)
            for c, names in part.items()
            for n in names
        }
        for cat, names in unindexed.changed.items():
            for name in names:
                got = words_of(cat, name)
                if got:
                    extra.append((cat, name, *got))
    n = conn.execute("SELECT count(*) FROM files WHERE broken IS NULL").fetchone()[0] + len(extra)
    if not n:
        return []
    marks = ",".join("?" * len(prompt))
    df = dict(
        conn.execute(
            f"SELECT term, sum(df) FROM terms WHERE term IN ({marks}) GROUP BY term", prompt
        )
    )
    unseen = [w for w in prompt if not df.get(w)]
    if unseen:
        for cat in CATEGORIES:
            fts = fts_table(cat)
            query = " UNION ALL ".join(
                f"SELECT ?, count(*) FROM {fts} WHERE {fts} MATCH ?" for _ in unseen
            )
            for w, count in conn.execute(
                query, [x for u in unseen for x in (u, match_expression([u]))]
            ):
                df[w] = df.get(w, 0) + count
    for *_, held in extra:
        for w in prompt:
            if w in held:
                df[w] = df.get(w, 0) + 1
    idf = {
        w: math.log(1 + (n - min(df.get(w, 0), n) + 0.5) / (min(df.get(w, 0), n) + 0.5))
        for w in prompt
    }
    total = sum(idf.values())
    if total <= 0:
        return []

    def hit(cat: str, name: str, id: str, score: float, matched: list[str]) -> Hit | None:
        coverage = sum(idf[w] for w in matched) / total
        if len(matched) < MIN_MATCHED or coverage < MIN_COVERAGE:
            return None
        return Hit(cat, name, id, score, tuple(matched), round(coverage, 3))

    hits = [
        h
        for h in (
            hit(cat, name, id, 0.0, [w for w in prompt if w in held])
            for cat, name, id, held in extra
        )
        if h
    ]
    ceiling = max(25, COMMON * n)
    searched = sorted((w for w in prompt if 0 < df.get(w, 0) <= ceiling), key=lambda w: df[w])[
        :MAX_TERMS
    ]
    if len(searched) >= MIN_MATCHED:
        hits += _indexed_hits(conn, searched, per_category, stale, hit)
    if not hits:
        return []
    hits.sort(key=lambda h: (-h.coverage, -h.bm25, h.key))
    return [h for h in hits if h.coverage >= NEAR_BEST * hits[0].coverage]


def _indexed_hits(
    conn: sqlite3.Connection, searched: list[str], per_category: int, stale: set, hit
) -> list[Hit]:
    """Each category's best few by bm25 for the words `searched`, with the words each one holds (one
    query per category), as `hit` judges them; rows of files in `stale` are not what the files say now."""
    weights = ", ".join(str(w) for w in WEIGHTS)
    hits: list[Hit] = []
    for cat in CATEGORIES:
        fts = fts_table(cat)
        rows = conn.execute(
            f"SELECT rowid, bm25({fts}, {weights}) AS s FROM {fts} WHERE {fts} MATCH ? "
            f"ORDER BY s LIMIT ?",
            (match_expression(searched), per_category),
        ).fetchall()
        if not rows:
            continue
        ids = ",".join(str(int(r[0])) for r in rows)
        held: dict[int, list[str]] = {}
        query = " UNION ALL ".join(
            f"SELECT ?, rowid FROM {fts} WHERE {fts} MATCH ? AND rowid IN ({ids})" for _ in searched
        )
        for w, rowid in conn.execute(
            query, [x for s in searched for x in (s, match_expression([s]))]
        ):
            held.setdefault(rowid, []).append(w)
        files = {
            doc: (name, id)
            for doc, name, id in conn.execute(
                f"SELECT doc, name, id FROM files WHERE doc IN ({ids}) AND broken IS NULL"
            )
        }
        for rowid, score in rows:
            if rowid not in files or (cat, files[rowid][0]) in stale:
                continue
            found = hit(cat, *files[rowid], -score, held.get(rowid, []))
            if found:
                hits.append(found)
    return hits
