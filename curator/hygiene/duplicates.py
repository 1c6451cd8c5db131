"""Near-duplicate and contradicting memories, across both owners (memcurate's and Claude's own files).

Two memories pair when they are about one thing: of the same category, or one of them a topic file of
Claude's (which has no category). Candidates come first from shared rare words (an inverted index of
content words, each memory looking only at its rarest ones), so 10,000 memories cost about n·k
comparisons, never n². Each candidate pair is then scored with the similarity the decisions use
(`verify.decide.similarity`, the words of title and first section with the things they name, or
`verify.checks.similarity` over the whole text when that says more).

A contradiction is a newer and an older memory on the same subject that disagree: one says "do not"
where the other does (a negation flip), they give a different value to the same setting, number or
version, or the newer says the older's choice was replaced ("instead of X", "no longer X"). Both
facts cannot stand, so a contradiction is never merged: the person decides (tidy proposes archiving
the older). Each pair says why in one line.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING

from memcurate.curator import __version__
from memcurate.curator.categories import CATEGORIES, CLAUDE, ONE_PER_SESSION
from memcurate.curator.hygiene import forked, merging
from memcurate.curator.hygiene import statements as said
from memcurate.curator.hygiene.merging import CONTRADICTION, DUPLICATE  # noqa: F401 (a pair's kinds, used here and by callers)
from memcurate.curator.hygiene.texts import known_text, library_entries, once, peek, text_of
from memcurate.curator.library.entries import is_line_ref
from memcurate.curator.memory import memfile
from memcurate.curator.memory.front_matter import MemoryFormatError, split_front_matter
from memcurate.curator.util.stamps import content_hash
from memcurate.curator.util.textsafe import one_line
from memcurate.curator.verify.checks import content_words
from memcurate.curator.verify.decide import (
    FactWords,
    fact_words,
    identifiers,
    jaccard,
    similarity_of,
    unattributed,
)

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

DEFAULT_THRESHOLD = 0.6
SUBJECT = 0.4  # subject words shared (Jaccard) for two memories to be about one thing and able to disagree
RARE_TERMS = 16  # the rarest words of a memory that find its candidates
MAX_DF = 48  # a word in more memories than this says nothing about which two are alike
MAX_CANDIDATES = 24  # per memory, most shared rare words first
# the pairs (percent of the work) a forked child judges: forked from the check's full heap, it runs a
# little slower than its parent (each page it touches is copied first): ~7 % at 10,000
CHILD_PART = 48
CLOSE_CHUNK = 500  # candidate pairs a side of the check takes at a time (a few ms of work)
GATE = 0.3  # words shared (whole texts, or titles and descriptions) for a candidate pair to be scored at all


@dataclass(frozen=True)
class Pair:
    a: str  # the older memory's ref
    b: str  # the newer memory's ref
    score: float  # how alike (0..1)
    kind: str  # duplicate | contradiction
    why: str  # one line


@dataclass(frozen=True)
class Memo:
    """What the comparison needs of one memory, read once."""

    ref: str
    owner: str
    category: str
    # a Claude file as a document of category "claude": title, description, body; None for a memory
    # whose words were kept from a check before (`doc` parses its text when first asked)
    document: memfile.MemoryDoc | None
    stamp: str  # updated (or created): newer is later
    words: frozenset
    hash: str = ""  # of the file's bytes: the base of any change proposed to it
    content: str | None = None  # the file's text; of a kept memory read when first asked (`text`)
    # what the comparisons derive from it, once (a memory meets up to 2 x MAX_CANDIDATES others)
    derived: dict = field(default_factory=dict, compare=False, repr=False)

    def once(self, key: str, fn):
        if key not in self.derived:
            self.derived[key] = fn()
        return self.derived[key]

    @property
    def text(self) -> str:
        """The file's text; of a kept memory read now ("" when it is gone since the listing)."""
        if self.content is not None:
            return self.content
        return self.once("text", lambda: self.derived["read"]() or "")

    @property
    def doc(self) -> memfile.MemoryDoc:
        """The document; of a kept memory parsed now (MemoryFormatError, a ValueError, when its file no
        longer parses: `found_pairs` finds its words again then)."""
        if self.document is not None:
            return self.document
        return self.once("doc", lambda: memfile.parse(self.text))

    @property
    def kept(self) -> bool:
        """Whether its words were read back from a check before (`KEPT`), not found from its text."""
        return self.document is None

    @property
    def whole(self) -> str:
        return self.once("whole", lambda: _whole(self.doc))

    @property
    def fact(self) -> FactWords:
        """The words the decisions' similarity compares."""
        # once, read without a call: every pair scored asks
        fact = self.derived.get("fact")
        if fact is None:
            fact = self.derived["fact"] = fact_words(self.doc)
        return fact


def memo_of(entry, text: str) -> Memo | None:
    """The comparable form of a library entry and its text; None for what is not compared: archived,
    broken or unreadable memories, Claude's MEMORY.md lines (an index entry, not a memory of its own),
    session summaries (each is its own session's, alike by nature)."""
    if getattr(entry, "broken", "") or getattr(entry, "status", "active") != "active":
        return None
    if is_line_ref(entry.ref) or entry.category in ONE_PER_SESSION:
        return None
    if entry.owner == CLAUDE:
        try:
            _, body = split_front_matter(text)
        except MemoryFormatError:
            body = text
        doc = memfile.MemoryDoc(
            id=entry.ref,
            category=CLAUDE,
            title=entry.title or "",
            description=entry.description or "",
            tags=[],
            created=entry.created,
            updated=entry.updated,
            body=body.strip("\n"),
        )
    else:
        try:
            doc = memfile.parse(text)
        except MemoryFormatError:
            return None
        if doc.category not in CATEGORIES:
            return None
    return Memo(
        entry.ref,
        entry.owner,
        entry.category,
        doc,
        entry.updated or entry.created or "",
        _words_of(doc),
        getattr(entry, "hash", "") or content_hash(text),
        text,
    )


def _words_of(doc: memfile.MemoryDoc) -> frozenset[str]:
    return frozenset(content_words(_whole(doc)))


def _whole(doc: memfile.MemoryDoc) -> str:
    """A memory's title, description and body, without attributions: what its words are found in."""
    return unattributed(f"{doc.title}\n{doc.description}\n{doc.body}")


def _subject_of(doc: memfile.MemoryDoc) -> str:
    """Its title and description, without attributions: what it is about."""
    return unattributed(f"{doc.title}\n{doc.description}")


def comparable(x: Memo, y: Memo) -> bool:
    """Same category, or one of them Claude's (a topic file may hold any kind of memory)."""
    return x.category == y.category or x.owner == CLAUDE or y.owner == CLAUDE


def candidates(memos: list[Memo]) -> set[tuple[int, int]]:
    """Index pairs (i < j) worth scoring: memories that share some of their rarest words (two or more;
    each memory's MAX_CANDIDATES sharing the most, the first met of those sharing as many)."""
    df: Counter = Counter()
    for m in memos:
        df.update(m.words)
    # the words that can tell which memories are alike: in two of them at least, in few
    telling = {w for w, n in df.items() if 1 < n <= MAX_DF}
    postings: dict[str, list[int]] = defaultdict(list)
    # each telling word's place among them, rarest first (ties by the word): one sort of the
    # vocabulary, then each memory's words sorted by a lookup instead of a key tuple per word
    rank = {w: n for n, w in enumerate(sorted(telling, key=lambda w: (df[w], w)))}
    rare: list[list[str]] = []
    for i, m in enumerate(memos):
        words = sorted(m.words & telling, key=rank.__getitem__)[:RARE_TERMS]
        rare.append(words)
        for w in words:
            postings[w].append(i)
    out: set[tuple[int, int]] = set()
    for i, words in enumerate(rare):
        shared: Counter = Counter(chain.from_iterable(postings[w] for w in words))
        del shared[i]
        # most_common(MAX_CANDIDATES) of those sharing two or more: a stable sort, so ties keep
        # the order met
        many = [(j, n) for j, n in shared.items() if n >= 2]
        if len(many) > MAX_CANDIDATES:
            many = heapq.nlargest(MAX_CANDIDATES, many, key=itemgetter(1))
        for j, _n in many:
            out.add((i, j) if i < j else (j, i))
    return out


# below this the whole text is mostly boilerplate ("Not stated in the session")
WHOLE_MIN_WORDS = 15


def score(x: Memo, y: Memo) -> float:
    """The decisions' similarity of two facts; the whole texts' when both are long enough to say more."""
    sim = similarity_of(x.fact, y.fact)
    if min(len(x.words), len(y.words)) >= WHOLE_MIN_WORDS:
        # text_similarity(x.whole, y.whole), its words found once
        sim = max(sim, jaccard(x.words, y.words))
    return sim


def find_pairs(memos: list[Memo], threshold: float = DEFAULT_THRESHOLD) -> list[Pair]:
    """Every duplicate and contradicting pair among `memos`, most alike first."""
    # the gate below drops most candidate pairs (tens of thousands at 10,000 memories): its words are
    # looked up once per memory, and its Jaccards are `jaccard`'s, inline
    subjects = [_subject_words(m) for m in memos]
    todo = list(candidates(memos))
    if not forked.worth_it(len(memos)):
        return _sorted(_judged(memos, _close(memos, subjects, todo, threshold), threshold))
    # the pairs gated and scored here and by a forked child (it reads the memories as they are here),
    # a chunk at a time, each side taking the next (a fixed part each: the parent waited up to 0.1 s)
    chunks = [todo[i : i + CLOSE_CHUNK] for i in range(0, len(todo), CLOSE_CHUNK)]

    def close_of(chunk: list[tuple[int, int]]) -> list[_Close]:
        return _close(memos, subjects, chunk, threshold)

    here, there = forked.share(chunks, close_of, close_of)
    close = [pair for part in (*here, *there) for pair in part]
    if not forked.worth_it(len(close)):
        return _sorted(_judged(memos, close, threshold))
    # the few close enough to be one or to disagree judged, part of them by a child: grouped by the
    # memories they share, so that each memory's statements are found in one process, not both
    mine, theirs = _shares(memos, close)
    # a kept memory in both shares (of a group shared pair by pair) parsed here, before the child
    # is forked: it finds it parsed (no memory is parsed twice, in one process or in two)
    for i in {x for p in mine for x in p[:2]} & {x for p in theirs for x in p[:2]}:
        memos[i].doc  # noqa: B018 (parsed and kept)
    with forked.Child(lambda: _judged_and_read(memos, theirs, threshold)) as child:
        out = _judged(memos, mine, threshold)
        pairs, read = child.result()
    for i, (fields, text) in read.items():
        memos[i].derived.setdefault("doc", memfile.as_sent(fields))
        memos[i].derived.setdefault("text", text)
    return _sorted(out + pairs)


def _judged_and_read(
    memos: list[Memo], close: list[_Close], threshold: float
) -> tuple[list[Pair], dict[int, tuple[dict, str]]]:
    """`_judged`, with the document and text of each kept memory of its pairs that it read and parsed:
    the parent needs them again (found_pairs, the merges), and would parse them a second time."""
    pairs = _judged(memos, close, threshold)
    refs = {r for p in pairs for r in (p.a, p.b)}
    read = {
        i: (vars(m.derived["doc"]), m.derived["text"])
        for i, m in enumerate(memos)
        if m.ref in refs and "doc" in m.derived and "text" in m.derived
    }
    return pairs, read


def _sorted(pairs: list[Pair]) -> list[Pair]:
    return sorted(pairs, key=lambda p: (-p.score, p.a, p.b))


# a candidate pair worth judging: (older, newer) indexes of `memos`, how alike their subjects and facts
_Close = tuple[int, int, float, float]


def _close(
    memos: list[Memo], subjects: list[set[str]], todo: list[tuple[int, int]], threshold: float
) -> list[_Close]:
    """The candidate pairs `todo` (indexes of `memos`) alike enough to be one, or to disagree."""
    out = []
    for i, j in todo:
        x, y = memos[i], memos[j]
        if x.category != y.category and x.owner != CLAUDE and y.owner != CLAUDE:
            continue  # not comparable()
        # text_similarity of the subjects
        a, b = subjects[i], subjects[j]
        shared = len(a & b) if a and b else 0
        subject = shared / (len(a) + len(b) - shared) if shared else 0.0
        if subject < GATE:
            wa, wb = x.words, y.words
            shared = len(wa & wb) if wa and wb else 0
            if not shared or shared / (len(wa) + len(wb) - shared) < GATE:
                # too little in common to say one thing, or to disagree on one: not worth scoring
                continue
        old, new = (i, j) if (x.stamp, x.ref) <= (y.stamp, y.ref) else (j, i)
        sim = score(memos[old], memos[new])
        if max(subject, sim) >= SUBJECT or sim >= threshold:
            out.append((old, new, subject, sim))
    return out


def _judged(memos: list[Memo], close: list[_Close], threshold: float) -> list[Pair]:
    """The pairs among `close` that disagree (contradictions) or are alike (duplicates)."""
    out = []
    for o, n, subject, sim in close:
        old, new = memos[o], memos[n]
        why = disagreement(old, new) if max(subject, sim) >= SUBJECT else None
        if why:
            out.append(Pair(old.ref, new.ref, round(max(sim, subject), 3), CONTRADICTION, why))
        elif sim >= threshold:
            out.append(
                Pair(
                    old.ref,
                    new.ref,
                    round(sim, 3),
                    DUPLICATE,
                    f"{sim:.0%} alike: {one_line(new.doc.title, 60)!r} says what "
                    f"{one_line(old.doc.title, 60)!r} says",
                )
            )
    return out


def _shares(memos: list[Memo], close: list[_Close]) -> tuple[list[_Close], list[_Close]]:
    """`close` in two shares of about the same work, the pairs of one group of memories (joined by the
    pairs) in one share; a group of more than half of them is shared pair by pair."""
    root = merging.union_find((o, n) for o, n, _s, _m in close)
    groups: dict[int, list[_Close]] = defaultdict(list)
    for pair in close:
        groups[root(pair[0])].append(pair)
    # each group's work: its memories' statements found (unless a call before found them: a forked child
    # finds them found too), then each pair compared
    weight = {
        g: len({x for p in pairs for x in p[:2] if "statements" not in memos[x].derived})
        + len(pairs)
        for g, pairs in groups.items()
    }
    total = sum(weight.values())
    shares: tuple[list[_Close], list[_Close]] = ([], [])
    # the child's share CHILD_PART of the work: each side's load counted against its part
    part = (100 - CHILD_PART, CHILD_PART)
    load = [0, 0]
    for g in sorted(groups, key=lambda g: (-weight[g], g)):
        if weight[g] * 2 > total:
            big = groups[g]
            cut = len(big) * part[0] // 100
            shares[0].extend(big[:cut])
            shares[1].extend(big[cut:])
            load[0] += weight[g] * part[0] // 100
            load[1] += weight[g] - weight[g] * part[0] // 100
            continue
        side = 0 if load[0] * part[1] <= load[1] * part[0] else 1
        shares[side].extend(groups[g])
        load[side] += weight[g]
    return shares


def _subject_words(m: Memo) -> set[str]:
    # once per memory, read without a call: every candidate pair asks
    words = m.derived.get("subject_words")
    if words is None:
        words = m.derived["subject_words"] = content_words(_subject(m))
    return words


def _subject(m: Memo) -> str:
    return m.once("subject", lambda: _subject_of(m.doc))


# -- disagreement --------------------------------------------------------------

_REPLACED = re.compile(
    r"\b(?:instead of|rather than|in place of|replaced?s?|replacing|no longer (?:use|using)|"
    r"switched (?:away )?from|migrated (?:away )?from|moved (?:away )?from|dropped|"
    r"deprecated|superseded)\b\s+(?:the\s+|a\s+|an\s+|by\s+|with\s+)?([`\w][\w./`+-]*)",
    re.I,
)


def disagreement(old: Memo, new: Memo) -> str | None:
    """Why `new` contradicts `old` (one line), or None when they do not disagree."""
    return (
        _negation_flip(old, new)
        or _replaced(old, new)
        or _other_value(old, new)
        or _other_words(old, new)
    )


def _statements(m: Memo) -> list[tuple[frozenset, bool, str]]:
    return m.once(
        "statements", lambda: said.statements(f"{m.doc.title}\n{m.doc.description}\n{m.doc.body}")
    )


def _negation_flip(old: Memo, new: Memo) -> str | None:
    olds = _statements(old)
    for words, negated, s in _statements(new):
        for owords, onegated, o in olds:
            # only a negated and an affirmed statement can flip
            if negated != onegated and said.flipped((words, negated), (owords, onegated)):
                return (
                    f"{'denies' if negated else 'asserts'} what the older one "
                    f"{'asserts' if negated else 'denies'}: {one_line(s, 70)!r} vs {one_line(o, 70)!r}"
                )
    return None


def _replaced(old: Memo, new: Memo) -> str | None:
    """The newer says the older's choice was replaced: "instead of X", "no longer X", "replaced X"."""
    choice = old.once("choice", lambda: _subject_words(old) | identifiers(_subject(old)))
    said = _subject_words(new)
    for m in new.once("replaced", lambda: list(_REPLACED.finditer(new.whole))):
        named = m.group(1).strip("`.").lower()
        if named in choice and named not in _replaced_in(old):
            if named in said and not new.once(
                "replaced_subject", lambda: bool(_REPLACED.search(_subject(new)))
            ):
                continue  # the newer's own subject names it as its choice too
            return f"says {one_line(m.group(0), 50)!r}, the older one's choice"
    return None


def _replaced_in(m: Memo) -> set[str]:
    """Words the older memory itself already says were replaced (it is not its choice then)."""
    return m.once(
        "replaced_names",
        lambda: {x.group(1).strip("`.").lower() for x in _REPLACED.finditer(m.whole)},
    )


def _other_value(old: Memo, new: Memo) -> str | None:
    """The same setting, number or version given another value: "Python 3.11" / "Python 3.12". Only
    between memories about the same thing: their subjects, less the setting's own words, must match
    ("Payments client timeout" and "Search client timeout" set two timeouts)."""
    ov = old.once("values", lambda: said.values(old.whole))
    nv = new.once("values", lambda: said.values(new.whole))
    keys = [key for key in said.conflicts(ov, nv) if _same_owner(old, new, set(key.split()))]
    return said.other_value(ov, nv, keys)


def _other_words(old: Memo, new: Memo) -> str | None:
    """One's main statement (its title, description or first sentence) said by the other with another
    value: a number in words or digits, a duration, a version, a name ("Keep logs for seven days" /
    "Keep logs for fourteen days"). Two such memories are not one: merged, the memory would say both.
    (The same clash in a detail of two memories that are one is left to the merge: the newer's stands.)"""
    new_main, old_main = _valued(new, "main", _main), _valued(old, "main", _main)
    # a main statement without a value clashes with none: the other's sentences are not looked at then
    pairs = [(s, o) for s in new_main for o in _valued(old, "sentences", _sentences)]
    if old_main:
        pairs += [(s, o) for s in _valued(new, "sentences", _sentences) for o in old_main]
    for s, o in pairs:
        clash = said.clash(s, o)
        if clash:
            return (
                f"says {one_line(s.sentence, 70)!r} ({', '.join(sorted(clash[0]))}) where the older "
                f"one says {one_line(o.sentence, 70)!r} ({', '.join(sorted(clash[1]))})"
            )
    return None


def _valued(m: Memo, key: str, of) -> list[said.Said]:
    """The sentences `of` gives that give a value, each as `said.clash` compares it: the others clash
    with none."""
    return m.once("valued " + key, lambda: [x for x in map(said.said_of, of(m)) if x.values])


def _sentences(m: Memo) -> list[str]:
    return m.once("sentences", lambda: [s for _w, _n, s in _statements(m)])


def _main(m: Memo) -> list[str]:
    """A memory's main statements: its title, description and the first sentence of its first section."""

    def main() -> list[str]:
        first = next((text for text in m.doc.sections.values() if text.strip()), "")
        lead = said.statements(unattributed(first))[:1]
        return [s for _w, _n, s in said.statements(f"{m.doc.title}\n{m.doc.description}") + lead]

    return m.once("main", main)


def _same_owner(old: Memo, new: Memo, setting: set[str]) -> bool:
    a = _singular_subject(old) - setting
    b = _singular_subject(new) - setting
    return not a or not b or jaccard(a, b) >= SUBJECT


def _singular_subject(m: Memo) -> set[str]:
    return m.once("singular_subject", lambda: {said._singular(w) for w in _subject_words(m)})


# -- over a project ------------------------------------------------------------


def threshold_of(cfg: dict | None) -> float:
    return float(((cfg or {}).get("hygiene") or {}).get("duplicate_threshold", DEFAULT_THRESHOLD))


def memos(engine: Context) -> list[Memo]:
    """The comparable memories of the project's library, each parsed once (once for a whole check), or
    its words kept from a check before (`KEPT`)."""
    return once(engine, "memos", lambda: _memos(engine, library_entries(engine)))


# The version of the words a check keeps of each memory (memory/index/compared.py): another release may
# find other words. (A row that disagrees with its file is caught all the same: `found_pairs`.)
KEPT = f"{__version__}:1"


def _memos(engine: Context, entries, *, kept: bool = True) -> list[Memo]:
    todo = [
        entry
        for entry in entries
        if not (
            is_line_ref(entry.ref)
            or getattr(entry, "broken", False)
            or getattr(entry, "status", "active") != "active"
        )
    ]
    found = _kept(engine, todo) if kept and todo else {}
    rest = iter(_found(engine, [e for i, e in enumerate(todo) if i not in found]))
    out = []
    for i in range(len(todo)):
        memo = found[i] if i in found else next(rest)
        if memo is not None:
            out.append(memo)
    return out


def _kept(engine: Context, todo: list) -> dict[int, Memo]:
    """The memories of `todo` (by place) whose words a check before kept for the bytes the index says
    their files hold: neither read nor parsed until a pair asks (`Memo.text`, `Memo.doc`). Claude's
    files are not kept (their words are of the library's title and description, not of the file)."""
    rows = engine.index.kept_words(KEPT, 2 * len(todo) + 64)
    out: dict[int, Memo] = {}
    if not rows:
        return out
    for i, entry in enumerate(todo):
        digest: str = getattr(entry, "hash", None) or ""
        row = rows.get(digest) if digest and entry.owner != CLAUDE else None
        if row is not None:
            memo = out[i] = _of_row(entry, None, None, digest, row)
            memo.derived["read"] = partial(text_of, engine, entry)
    return out


def _found(engine: Context, todo: list) -> list[Memo | None]:
    """The memos of `todo`, in its order, each read and parsed now (None: not compared)."""
    if not forked.worth_it(len(todo)):
        return [_memo(engine, entry) for entry in todo]
    # read and parsed here from the front and by a forked child from the back, the child's with the
    # words every pair compares, sent back packed (a text per set of words: a tenth of the cost of
    # pickling the sets)
    mine, theirs = forked.share(
        todo, lambda entry: _compared(_memo(engine, entry)), lambda entry: _packed(engine, entry)
    )
    out: list[Memo | None] = list(mine)
    for entry, packed in zip(todo[len(mine) :], theirs):
        if packed is None:
            out.append(None)
            continue
        text, fields, digest, *row = packed
        out.append(_of_row(entry, memfile.as_sent(fields), text, digest, tuple(row)))
        # read by the child: the other detectors find it read
        known_text(engine, entry, text)
    return out


def _memo(engine: Context, entry) -> Memo | None:
    text = text_of(engine, entry)
    return memo_of(entry, text) if text is not None else None


_Packed = tuple[str, dict, str, str, str, str, str, str]


def _compared(m: Memo | None) -> Memo | None:
    """`m` with the words every candidate pair compares found now."""
    if m is not None:
        _subject_words(m)
        m.fact  # noqa: B018 (found and kept)
    return m


def _packed(engine: Context, entry) -> _Packed | None:
    """What a forked child sends of an entry's memo: its text, its document's fields, its hash and its
    row of words (`_row`)."""
    m = _memo(engine, entry)
    if m is None:
        return None
    return (m.text, vars(m.doc), m.hash, *_row(m))


def _row(m: Memo) -> tuple[str, str, str, str, str]:
    """The sets of words every pair compares, each one text (words hold no NUL): what a forked child
    sends, and what is kept for the next check (`KEPT`)."""
    fact = m.fact
    return (
        "\0".join(m.words),
        "\0".join(_subject_words(m)),
        "\0".join(fact.key),
        "\0".join(fact.title),
        "\0".join(fact.names),
    )


def _of_row(
    entry, doc: memfile.MemoryDoc | None, text: str | None, digest: str, row: tuple
) -> Memo:
    """The memo of `entry` whose words are `row` (`_row`), as memo_of makes it."""
    words, subject, key, title, names = row
    memo = Memo(
        entry.ref,
        entry.owner,
        entry.category,
        doc,
        entry.updated or entry.created or "",
        _words(words),
        digest,
        text,
    )
    memo.derived["subject_words"] = set(_words(subject))
    memo.derived["fact"] = FactWords(_words(key), _words(title), _words(names))
    return memo


def _words(packed: str) -> frozenset[str]:
    return frozenset(packed.split("\0")) if packed else frozenset()


def found_pairs(engine: Context) -> tuple[list[Memo], list[Pair]]:
    """The project's comparable memories and their near-duplicate and contradicting pairs. Each memory
    in a pair whose words were kept from a check before has them found again from its file: when one
    disagrees (a row forged in the data dir, or kept by another build), every kept row is dropped and
    every memory's words are found again. So a kept row can choose which memories are compared, never
    what a pair says."""
    threshold = threshold_of(engine.cfg)
    comparable = memos(engine)
    try:
        found = find_pairs(comparable, threshold)
        if all(_as_filed(m) for m in _in_pairs(comparable, found)):
            return comparable, found
    except MemoryFormatError:
        # a kept memory's file no longer parses (or a fresh one's raised: it raises again below)
        if not any(m.kept for m in comparable):
            raise
    engine.index.forget_kept_words()
    comparable = once(
        engine, "memos", lambda: _memos(engine, library_entries(engine), kept=False), again=True
    )
    return comparable, find_pairs(comparable, threshold)


def _in_pairs(memos: list[Memo], found: list[Pair]) -> list[Memo]:
    refs = {r for p in found for r in (p.a, p.b)}
    return [m for m in memos if m.ref in refs]


def _as_filed(m: Memo) -> bool:
    """Whether `m`'s words are those of its file's text (always, but for a kept one that disagrees)."""
    if not m.kept:
        return True
    if content_hash(m.text) != m.hash:
        return False  # changed since the index read it
    try:
        doc = m.doc
    except MemoryFormatError:
        return False
    if doc.category not in CATEGORIES:
        return False
    return (
        m.words == _words_of(doc)
        and m.derived["subject_words"] == content_words(_subject_of(doc))
        and m.fact == fact_words(doc)
    )


def keep_words(engine: Context, leave: set[str]) -> None:
    """The words found of each memory this check compared kept for the next one, but those of the
    memories in `leave` (they hold a secret: nothing under the data dir holds one). Only after a check
    that compared them; a row whose memory is gone (or left) goes."""
    found = peek(engine, "memos")
    if not isinstance(found, list):
        return
    ours = [m for m in found if m.owner != CLAUDE and m.ref not in leave]
    # by the hash of the text they were found from (the index's may be older: the file changed since)
    rows = [(m.hash, _row(m)) for m in ours if not m.kept and content_hash(m.text) == m.hash]
    engine.index.keep_words(KEPT, rows, {m.hash for m in ours})


def detect(engine: Context) -> list:
    """The check's findings: each group of near-duplicates and each contradiction, carrying tidy's
    proposal (merged structurally: the check runs in the background and asks no model). A group tidy
    cannot merge (one of Claude's files with one memory of ours) is a finding that proposes nothing."""
    from memcurate.curator.hygiene import Finding, fix

    comparable_memos, found = found_pairs(engine)
    notes: list[str] = []
    proposed = {
        tuple(sorted(s["refs"])): s
        for s in merging.specs(engine, found, comparable_memos, draft=False, notes=notes)
    }
    out = []
    for group in merging.groups(found):
        spec = proposed.get(tuple(group))
        claude = [r for r in group if r.startswith(CLAUDE + "/")]
        message = f"{len(group)} memories say the same: {', '.join(group)}"
        if spec is None and claude:
            message += f" ({', '.join(claude)} is Claude's own: adopt it to merge)"
        score = max(p.score for p in found if p.kind == DUPLICATE and p.a in group)
        detail = {"score": score, **({"fix": _fix_of(fix, spec)} if spec else {})}
        out.append(Finding(DUPLICATE, "medium", tuple(group), one_line(message, 300), detail))
    for p in found:
        if p.kind != CONTRADICTION:
            continue
        spec = proposed.get(tuple(sorted((p.a, p.b))))
        message = f"{p.b} contradicts the older {p.a}: {p.why}"
        detail = {"score": p.score, **({"fix": _fix_of(fix, spec)} if spec else {})}
        out.append(Finding(CONTRADICTION, "high", (p.a, p.b), one_line(message, 300), detail))
    return out


def _fix_of(fix, spec: dict) -> dict:
    return fix(spec["kind"], spec["title"], spec["reason"], spec["ops"])
