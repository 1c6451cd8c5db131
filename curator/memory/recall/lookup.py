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

from curator.categories import CATEGORIES
from curator.memory.index.schema import WEIGHTS, fts_table
from curator.memory.index.terms import match_expression, words

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


def search(conn: sqlite3.Connection, prompt: list[str], per_category: int) -> list[Hit]:
    """The relevant memories for the prompt's words `prompt`, best first (at most `per_category` looked
    at in each category). Runs inside the caller's read transaction."""
    if not prompt:
        return []
    n = conn.execute("SELECT count(*) FROM files WHERE broken IS NULL").fetchone()[0]
    if not n:
        return []
    marks = ",".join("?" * len(prompt))
    df = dict(conn.execute(f"SELECT term, sum(df) FROM terms WHERE term IN ({marks}) GROUP BY term", prompt))
    unseen = [w for w in prompt if not df.get(w)]
    if unseen:
        for cat in CATEGORIES:
            fts = fts_table(cat)
            query = " UNION ALL ".join(f"SELECT ?, count(*) FROM {fts} WHERE {fts} MATCH ?" for _ in unseen)
            for w, count in conn.execute(query, [x for w in unseen for x in (w, match_expression([w]))]):
                df[w] = df.get(w, 0) + count
    idf = {w: math.log(1 + (n - min(df.get(w, 0), n) + 0.5) / (min(df.get(w, 0), n) + 0.5)) for w in prompt}
    total = sum(idf.values())
    ceiling = max(25, COMMON * n)
    searched = sorted((w for w in prompt if 0 < df.get(w, 0) <= ceiling), key=lambda w: df[w])[:MAX_TERMS]
    if len(searched) < MIN_MATCHED or total <= 0:
        return []
    weights = ", ".join(str(w) for w in WEIGHTS)
    hits: list[Hit] = []
    for cat in CATEGORIES:
        fts = fts_table(cat)
        rows = conn.execute(f"SELECT rowid, bm25({fts}, {weights}) AS s FROM {fts} WHERE {fts} MATCH ? "
                            f"ORDER BY s LIMIT ?", (match_expression(searched), per_category)).fetchall()
        if not rows:
            continue
        ids = ",".join(str(int(r[0])) for r in rows)
        held: dict[int, list[str]] = {}
        query = " UNION ALL ".join(f"SELECT ?, rowid FROM {fts} WHERE {fts} MATCH ? AND rowid IN ({ids})"
                                   for _ in searched)
        for w, rowid in conn.execute(query, [x for w in searched for x in (w, match_expression([w]))]):
            held.setdefault(rowid, []).append(w)
        files = {doc: (name, id) for doc, name, id in conn.execute(
            f"SELECT doc, name, id FROM files WHERE doc IN ({ids}) AND broken IS NULL")}
        for rowid, score in rows:
            matched = held.get(rowid, [])
            if rowid not in files or len(matched) < MIN_MATCHED:
                continue
            coverage = sum(idf[w] for w in matched) / total
            if coverage < MIN_COVERAGE:
                continue
            name, id = files[rowid]
            hits.append(Hit(cat, name, id, -score, tuple(matched), round(coverage, 3)))
    hits.sort(key=lambda h: (-h.coverage, -h.bm25, h.key))
    return [h for h in hits if h.coverage >= NEAR_BEST * hits[0].coverage]
