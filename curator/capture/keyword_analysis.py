"""What a keyword pattern requires of a message: the literal substrings every match contains, the plain
phrases it is when it is a small finite set of them, and the word each phrase is indexed by (keywords.py).

Worked out once per pattern when the config is parsed, and kept in the config cache: the hook matches with
what is kept and never loads this module.
"""

from __future__ import annotations

from memcurate.curator.capture.keywords import Keyword, words

_ASCII_LITERAL = set(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ',-_:;/!&%@#=<>\""
)


class _Literals:
    """The characters that stand for themselves in a pattern: ASCII ones, and any letter beyond
    ASCII, so "pour l'instant" or "nicht ändern" stay plain phrases found with str.find."""

    def __contains__(self, c: str) -> bool:
        return c in _ASCII_LITERAL or (c > "\x7f" and c.isalpha())


_LITERAL = _Literals()


def _past_atom(p: str, i: int) -> int | None:
    """When p[i] starts an escape or a [class], the index just past it (None if unclosed); else i."""
    if p[i] == "\\":
        return i + 2
    if p[i] == "[":
        j = p.find("]", i + 2)
        return None if j < 0 else j + 1
    return i


def _group_end(p: str, i: int) -> int | None:
    """Index of the ')' that closes the '(' at p[i], or None."""
    depth = 0
    while i < len(p):
        j = _past_atom(p, i)
        if j is None:
            return None
        if j != i:
            i = j
            continue
        if p[i] == "(":
            depth += 1
        elif p[i] == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _split_top(p: str) -> list[str] | None:
    """The top-level alternatives of a pattern, or None when it is malformed."""
    parts, start, i = [], 0, 0
    while i < len(p):
        j = _past_atom(p, i)
        if j is None:
            return None
        if j != i:
            i = j
            continue
        if p[i] == "(":
            j = _group_end(p, i)
            if j is None:
                return None
            i = j + 1
            continue
        if p[i] == "|":
            parts.append(p[start:i])
            start = i + 1
        i += 1
    parts.append(p[start:])
    return parts


def _sequence_requirements(p: str) -> list[tuple[str, ...]]:
    """For one alternative (no top-level '|'): sets of literals, each set one of whose members every match contains."""
    reqs: list[tuple[str, ...]] = []
    run = ""

    def close_run(r: str) -> None:
        r = r.strip().lower()
        if len(r) >= 2:
            reqs.append((r,))

    i = 0
    while i < len(p):
        c = p[i]
        if c in "?*+{":
            close_run(run[:-1])  # the char before a quantifier is optional
            run = ""
            if c == "{":
                j = p.find("}", i)
                i = j if j > 0 else len(p)
            i += 1
            continue
        if c in _LITERAL:
            run += c
            i += 1
            continue
        close_run(run)
        run = ""
        if c == "(":
            end = _group_end(p, i)
            if end is None:
                return reqs
            optional = end + 1 < len(p) and p[end + 1] in "?*{"
            lookaround = p.startswith(("(?=", "(?!", "(?<=", "(?<!"), i)
            if not optional and not lookaround:
                inner = p[i + 3 : end] if p.startswith("(?:", i) else p[i + 1 : end]
                group = anchors(inner)
                if group:
                    reqs.append(group)
            i = end + 1
        elif c == "[":
            j = p.find("]", i + 2)
            i = (j if j > 0 else len(p)) + 1
        elif c == "\\":
            i += 2
        else:
            i += 1
    close_run(run)
    return reqs


def requirements(pattern: str) -> list[tuple[str, ...]]:
    """Lowercase literal sets such that every match contains a member of each set (empty: no filter)."""
    branches = _split_top(pattern)
    if branches is None:
        return []
    if len(branches) == 1:
        return _sequence_requirements(pattern)
    a = anchors(pattern)
    return [a] if a else []


def anchors(pattern: str) -> tuple[str, ...] | None:
    """Lowercase substrings one of which every match of `pattern` contains; None when unsure."""
    branches = _split_top(pattern)
    if branches is None:
        return None
    out: list[str] = []
    for b in branches:
        reqs = _sequence_requirements(b)
        if not reqs:
            return None
        # the single most selective requirement of this branch: its longest literal set member
        best = max(reqs, key=lambda r: min(len(x) for x in r))
        out.extend(best)
    return tuple(out)


MAX_PHRASES = 64


def phrases(pattern: str, limit: int = MAX_PHRASES) -> list[str] | None:
    """Every text `pattern` matches, lowercased, when that is a small finite set of plain phrases.

    Handles literals, groups of alternatives, classes of plain characters and `?`;
    anything else (ranges, repeats, lookarounds, escapes) returns None and the
    pattern stays a regex.
    "(?:does not|doesn't) (?:support|work)" gives four phrases.
    """
    out, end = _alternatives(pattern, 0, limit)
    return sorted(out) if out is not None and end == len(pattern) and all(out) else None


def _alternatives(p: str, i: int, limit: int) -> tuple[set[str] | None, int]:
    result: set[str] = set()
    while True:
        seq, i = _sequence(p, i, limit)
        if seq is None:
            return None, i
        result |= seq
        if len(result) > limit:
            return None, i
        if i < len(p) and p[i] == "|":
            i += 1
            continue
        return result, i


def _sequence(p: str, i: int, limit: int) -> tuple[set[str] | None, int]:
    acc = {""}
    item: set[str] | None
    while i < len(p) and p[i] not in "|)":
        c = p[i]
        if c in _LITERAL:
            item, i = {c.lower()}, i + 1
        elif c == "(":
            if p.startswith("(?:", i):
                i += 3
            elif p.startswith("(?", i):
                return None, i  # lookarounds, flags, named groups
            else:
                i += 1
            item, i = _alternatives(p, i, limit)
            if item is None or i >= len(p) or p[i] != ")":
                return None, i
            i += 1
        elif c == "[":  # a class of plain characters, as in "obbligatori[oa]": one of them
            j = p.find("]", i + 1)
            chars = p[i + 1 : j] if j > i + 1 else ""
            if not chars or "-" in chars or not all(ch in _LITERAL for ch in chars):
                return None, i  # ranges, negations, escapes
            item, i = {ch.lower() for ch in chars}, j + 1
        else:
            return None, i
        if i < len(p) and p[i] == "?":
            item = item | {""}
            i += 1
        elif i < len(p) and p[i] in "*+{":
            return None, i
        acc = {a + b for a in acc for b in item}
        if len(acc) > limit:
            return None, i
    return acc, i


# Words in almost every message: a phrase is indexed by another of its words when it has one.
_COMMON = frozenset(
    """a an the and or but not no to of in on at for with from by as is are be was it its this that
these those we you i he she they let lets let's do does did can will would should could have has had just like
what when if so than then there here all any some more don doesn didn isn aren won""".split()
)


def anchor_words(phrase_list: list[str] | None) -> list[str] | None:
    """The word each phrase is indexed by (see KeywordSet): its longest uncommon word of three letters or
    more, else its longest; None when a phrase has no word."""
    if not phrase_list:
        return None
    chosen = {
        max(words(p), key=lambda w: (len(w) > 2 and w not in _COMMON, len(w)), default="")
        for p in phrase_list
    }
    return None if "" in chosen else sorted(chosen)


def analyse(pattern: str) -> dict:
    """What the config cache keeps per keyword pattern (see Keyword)."""
    found = phrases(pattern)
    # The most selective requirement first: it rules most messages out at once.
    needs = sorted(requirements(pattern), key=lambda alts: -min(len(x) for x in alts))
    return {"needs": [list(alts) for alts in needs], "phrases": found, "words": anchor_words(found)}


def keyword(category: str, pattern: str, weak: bool) -> Keyword:
    """A keyword of `category` matching `pattern`, analysed now."""
    return Keyword(category, pattern, weak, analyse(pattern))
