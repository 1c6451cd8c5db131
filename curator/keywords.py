"""Keyword patterns, and the literals a match of each must contain.

Compiling the ~130 triage keyword patterns costs ~10 ms (sre's compiler is
Python), more than the Stop hook's whole budget. So each pattern is reduced,
once, to requirements: sets of literal substrings such that every match
contains a member of each set (``(?:is|are) not (?:allowed|available)`` needs
one of {is, are}, "not", and one of {allowed, available}). A message that does
not meet them cannot match, and the pattern is never compiled for it. The
requirements are worked out when the config is parsed and kept in its cache.
"""

from __future__ import annotations

import re

from .lazyre import LazyRegex

_LITERAL = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ',-_:;/!&%@#=<>\"")


def _group_end(p: str, i: int) -> int | None:
    """Index of the ')' that closes the '(' at p[i], or None."""
    depth = 0
    while i < len(p):
        c = p[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            j = p.find("]", i + 2)
            if j < 0:
                return None
            i = j + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _split_top(p: str) -> list[str] | None:
    """The top-level alternatives of a pattern, or None when it is malformed."""
    parts, start, i = [], 0, 0
    while i < len(p):
        c = p[i]
        if c == "\\":
            i += 2
            continue
        if c == "(":
            j = _group_end(p, i)
            if j is None:
                return None
            i = j + 1
            continue
        if c == "[":
            j = p.find("]", i + 2)
            if j < 0:
                return None
            i = j + 1
            continue
        if c == "|":
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
            j = _group_end(p, i)
            if j is None:
                return reqs
            optional = j + 1 < len(p) and p[j + 1] in "?*{"
            lookaround = p.startswith(("(?=", "(?!", "(?<=", "(?<!"), i)
            if not optional and not lookaround:
                inner = p[i + 3:j] if p.startswith("(?:", i) else p[i + 1:j]
                group = anchors(inner)
                if group:
                    reqs.append(group)
            i = j + 1
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


class Keyword:
    """One keyword pattern, compiled only when a message holds all of its required literals."""

    __slots__ = ("category", "weak", "needs", "regex", "index", "literal")

    def __init__(self, category: str, pattern: str, weak: bool, needs: list | None = None) -> None:
        self.category = category
        self.weak = weak
        # A plain phrase ("root cause") is found with str.find: no regex to compile at all.
        self.literal = pattern.lower() if pattern and all(c in _LITERAL for c in pattern) else None
        needs = [tuple(n) for n in (requirements(pattern) if needs is None else needs)]
        # The most selective requirement first: it rules most messages out at once.
        self.needs = sorted(needs, key=lambda alts: -min(len(a) for a in alts))
        self.regex = LazyRegex(rf"(?<!\w)(?:{pattern})(?!\w)", re.I)
        self.index = 0

    def find(self, text: str, lowered: str):
        """(start, matched text in lowercase) of each match in `text`; `lowered` is text.lower()."""
        lit = self.literal
        if lit is None or len(lowered) != len(text):  # lower() changed lengths: let the regex align
            for m in self.regex.finditer(text):
                yield m.start(), m.group(0).lower()
            return
        n = len(lit)
        i = lowered.find(lit)
        while i >= 0:
            before = lowered[i - 1] if i else " "
            after = lowered[i + n] if i + n < len(lowered) else " "
            if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
                yield i, lit
                i = lowered.find(lit, i + n)  # matches do not overlap, as with finditer
            else:
                i = lowered.find(lit, i + 1)

    def may_match(self, lowered: str) -> bool:
        for alternatives in self.needs:
            for a in alternatives:
                if a in lowered:
                    break
            else:
                return False
        return True


class KeywordSet:
    """Keywords indexed by the literals of their most selective requirement.

    `candidates(lowered)` tests each distinct literal once per message instead
    of every keyword's requirements one by one.
    """

    def __init__(self, keywords: list[Keyword]) -> None:
        self.keywords = keywords
        self.always: list[Keyword] = []
        self.by_literal: dict[str, list[Keyword]] = {}
        for i, kw in enumerate(keywords):
            kw.index = i
            if not kw.needs:
                self.always.append(kw)
            else:
                for lit in kw.needs[0]:
                    self.by_literal.setdefault(lit, []).append(kw)

    def candidates(self, lowered: str) -> list[Keyword]:
        """The keywords that may match `lowered` (a lowercased message), in their configured order."""
        found = {kw.index: kw for kw in self.always}
        for lit, kws in self.by_literal.items():
            if lit in lowered:
                for kw in kws:
                    found[kw.index] = kw
        return [found[i] for i in sorted(found) if found[i].may_match(lowered)]
