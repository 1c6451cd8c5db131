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

from memcurate.curator.util.lazyre import IGNORECASE, LazyRegex

# ASCII characters that are not word characters (what `\w` leaves out): white space to `words`.
_ASCII_BREAKS = {i: " " for i in range(128) if not (chr(i).isalnum() or chr(i) == "_")}

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


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


def words(text: str) -> list[str]:
    r"""The runs of word characters in `text`, as `re.findall(r"\w+", text)` gives them: a word character
    is what `\w` takes (alphanumeric, or "_"). Without the regex a hook pass with no cue in its text never
    imports `re`; and on a long message, two C loops are faster than sre."""
    table = _ASCII_BREAKS
    if not text.isascii():
        table = table | {ord(c): " " for c in set(text) if not _is_word(c) and c > "\x7f"}
    return text.translate(table).split()


class Keyword:
    """One keyword pattern.

    A pattern that is a small set of phrases is found with str.find; any other
    is a regex compiled on first use, and only for a message that holds all of
    its required literals.
    """

    __slots__ = ("category", "pattern", "weak", "needs", "phrases", "words", "regex", "index")

    def __init__(
        self, category: str, pattern: str, weak: bool, analysis: dict | None = None
    ) -> None:
        a = analysis or analyse(pattern)
        self.category = category
        self.pattern = pattern
        self.weak = weak
        self.needs = [tuple(n) for n in a["needs"]]
        self.phrases = a["phrases"]
        self.words = a["words"] if "words" in a else anchor_words(self.phrases)
        self.regex = LazyRegex(rf"(?<!\w)(?:{pattern})(?!\w)", IGNORECASE)
        self.index = 0

    def find(self, text: str, lowered: str):
        """(start, matched text in lowercase) of matches in `text` (`lowered` is text.lower()).

        Phrases may report overlapping matches where a regex would not; callers
        count a keyword once per line, so that does not change a score.
        """
        # lower() changed lengths: let the regex align
        if self.phrases is None or len(lowered) != len(text):
            for m in self.regex.finditer(text):
                yield m.start(), m.group(0).lower()
            return
        for phrase in self.phrases:
            n = len(phrase)
            i = lowered.find(phrase)
            while i >= 0:
                if not (i and _is_word(lowered[i - 1])) and not (
                    i + n < len(lowered) and _is_word(lowered[i + n])
                ):
                    yield i, phrase
                i = lowered.find(phrase, i + 1)

    def may_match(self, lowered: str) -> bool:
        for alternatives in self.needs:
            for a in alternatives:
                if a in lowered:
                    break
            else:
                return False
        return True


# Separators of a keyword's record in the config cache: none is a literal character (_LITERAL), so no
# requirement or phrase holds one; the pattern, which may hold anything, comes last.
_FIELD, _SET, _ALT = "|", "~", "^"


def _record(kw: Keyword) -> str:
    needs = _SET.join(_ALT.join(alts) for alts in kw.needs)
    return _FIELD.join(
        [kw.category, "w" if kw.weak else "", needs, _ALT.join(kw.phrases or ()), kw.pattern]
    )


def _from_record(record: str) -> Keyword:
    category, weak, needs, found, pattern = record.split(_FIELD, 4)
    analysis = {
        "needs": [alts.split(_ALT) for alts in needs.split(_SET)] if needs else [],
        "phrases": found.split(_ALT) if found else None,
        "words": None,
    }
    return Keyword(category, pattern, bool(weak), analysis)


class KeywordSet:
    """Keywords indexed so that one message is tested against each index entry once, not keyword by keyword.

    A plain-phrase keyword matches only at word boundaries, so every word of a phrase is a whole word of
    the message: it is indexed by the longest word of each of its phrases, and a message's set of words
    finds it with one set intersection however many such keywords there are. Any other keyword is indexed
    by the literals of its most selective requirement, each tested with `in`.

    The index maps to keyword positions ("3,17"). The config cache keeps it ready-made (`index_data`),
    each keyword a flat string (`_record`) made a Keyword only when a message reaches it (`from_index`):
    a hook call pays for the cues its new messages can match, not for every cue of the config.
    """

    def __init__(self, keywords: list[Keyword]) -> None:
        by_word: dict[str, list[int]] = {}
        by_literal: dict[str, list[int]] = {}
        self.always: list[int] = []
        for i, kw in enumerate(keywords):
            kw.index = i
            if kw.words:
                for w in kw.words:
                    by_word.setdefault(w, []).append(i)
            elif not kw.needs:
                self.always.append(i)
            else:
                for lit in kw.needs[0]:
                    by_literal.setdefault(lit, []).append(i)
        self._built: list[Keyword | None] = list(keywords)
        self._records: list[str] = []
        self.by_literal = {lit: ",".join(map(str, ids)) for lit, ids in by_literal.items()}
        self._by_word: dict[str, str] | None = {
            w: ",".join(map(str, ids)) for w, ids in by_word.items()
        }
        self._words = ("", "")

    @classmethod
    def from_index(cls, data: dict) -> KeywordSet:
        """The set `index_data` describes; its keywords, and its word index, built on first use."""
        s = cls.__new__(cls)
        s._records = data["records"]
        s._built = [None] * len(s._records)
        s.always, s.by_literal = data["always"], data["by_literal"]
        s._by_word, s._words = None, (data["words"], data["word_ids"])
        return s

    def index_data(self) -> dict:
        """This set as the config cache keeps it: plain JSON types, few and flat, quick to load (see from_index)."""
        by_word = self.by_word
        return {
            "records": [_record(kw) for kw in self.keywords],
            "always": self.always,
            "by_literal": self.by_literal,
            "words": " ".join(by_word),
            "word_ids": " ".join(by_word.values()),
        }

    @property
    def by_word(self) -> dict[str, str]:
        # words are \w+ and positions digits and commas: neither holds a space
        if self._by_word is None:
            words, ids = self._words
            self._by_word = dict(zip(words.split(" "), ids.split(" "))) if words else {}
        return self._by_word

    def _build(self, i: int) -> Keyword:
        kw = self._built[i] = _from_record(self._records[i])
        kw.index = i
        return kw

    @property
    def keywords(self) -> list[Keyword]:
        """Every keyword, in configured order (built now if not yet)."""
        return [kw or self._build(i) for i, kw in enumerate(self._built)]

    def candidates(self, lowered: str) -> list[Keyword]:
        """The keywords that may match `lowered` (a lowercased message), in their configured order."""
        hit = [
            ids for lit, ids in self.by_literal.items() if lit in lowered
        ]  # the hot loop: kept lean
        by_word = self.by_word
        if by_word:
            hit.extend(by_word[w] for w in by_word.keys() & words(lowered))
        if not hit and not self.always:
            return []
        found = set(self.always)
        for ids in hit:
            found.update(map(int, ids.split(",")))
        built = self._built
        out = []
        for i in sorted(found):
            kw = built[i] or self._build(i)
            if kw.may_match(lowered):
                out.append(kw)
        return out
