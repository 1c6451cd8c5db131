"""Keyword patterns, matched through the literals a match of each must contain.

Compiling the ~130 triage keyword patterns costs ~10 ms (sre's compiler is
Python), more than the Stop hook's whole budget. So each pattern is reduced,
once, to requirements: sets of literal substrings such that every match
contains a member of each set (``(?:is|are) not (?:allowed|available)`` needs
one of {is, are}, "not", and one of {allowed, available}). A message that does
not meet them cannot match, and the pattern is never compiled for it. The
requirements are worked out when the config is parsed (keyword_analysis.py) and
kept in its cache: the hook reads them, and never loads the analysis.
"""

from __future__ import annotations

from memcurate.curator.util.lazyre import IGNORECASE, LazyRegex

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the hook milliseconds at import
    from collections.abc import Set as AbstractSet

# ASCII characters that are not word characters (what `\w` leaves out): white space to `words`.
_ASCII_BREAKS = {i for i in range(128) if not (chr(i).isalnum() or chr(i) == "_")}


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


# the same for ASCII bytes: bytes.translate with a table is a plain C loop, str.translate looks each
# character up in a dict
_ASCII_BREAK_BYTES = bytes(32 if i in _ASCII_BREAKS else i for i in range(256))


def words(text: str) -> list[str]:
    r"""The runs of word characters in `text`, as `re.findall(r"\w+", text)` gives them: a word character
    is what `\w` takes (alphanumeric, or "_"). Without the regex a hook pass with no cue in its text never
    imports `re`; and on a long message, two C loops are faster than sre."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_BREAK_BYTES).decode("ascii").split()
    # UTF-8 keeps ASCII bytes for ASCII characters only: the table leaves the others whole
    raw = text.encode("utf-8", "surrogatepass").translate(_ASCII_BREAK_BYTES)
    text = raw.decode("utf-8", "surrogatepass")
    for c in set(text):
        if c > "\x7f" and not _is_word(c):
            text = text.replace(c, " ")
    return text.split()


class Keyword:
    """One keyword pattern.

    A pattern that is a small set of phrases is found with str.find; any other
    is a regex compiled on first use, and only for a message that holds all of
    its required literals.
    """

    __slots__ = (
        "category",
        "pattern",
        "weak",
        "needs",
        "phrases",
        "words",
        "regex",
        "index",
        "_spelled",
    )

    def __init__(self, category: str, pattern: str, weak: bool, analysis: dict) -> None:
        """`analysis`: what keyword_analysis.analyse found the pattern requires (keyword_analysis.keyword
        makes a Keyword of a pattern), or what the config cache kept of it."""
        self.category = category
        self.pattern = pattern
        self.weak = weak
        self.needs = [tuple(n) for n in analysis["needs"]]
        self.phrases = analysis["phrases"]
        self.words = analysis.get("words")
        self.regex = LazyRegex(rf"(?<!\w)(?:{pattern})(?!\w)", IGNORECASE)
        self.index = 0
        self._spelled: list[tuple[str, frozenset[str]]] | None = None

    def find(self, text: str, lowered: str, present: AbstractSet[str] | None = None):
        """(start, matched text in lowercase) of matches in `text` (`lowered` is text.lower()).

        Phrases may report overlapping matches where a regex would not; callers
        count a keyword once per line, so that does not change a score.

        `present`: the words of `lowered` (message_words), when the caller has them. A phrase found at
        word boundaries has each of its words there whole, so a phrase missing one is not looked for
        (once the phrases' words are known: see KeywordSet._spelled_at).
        """
        # lower() changed lengths: let the regex align
        if self.phrases is None or len(lowered) != len(text):
            for m in self.regex.finditer(text):
                yield m.start(), m.group(0).lower()
            return
        phrases = self.phrases
        if present is not None and self._spelled is not None:  # (not worked out for this alone)
            phrases = [p for p, ws in self._spelled if ws <= present]
        for phrase in phrases:
            n = len(phrase)
            i = lowered.find(phrase)
            while i >= 0:
                if not (i and _is_word(lowered[i - 1])) and not (
                    i + n < len(lowered) and _is_word(lowered[i + n])
                ):
                    yield i, phrase
                i = lowered.find(phrase, i + 1)

    def spelled(self) -> list[tuple[str, frozenset[str]]]:
        """Each phrase with its words (a phrase keyword's)."""
        if self._spelled is None:
            self._spelled = [(p, frozenset(words(p))) for p in self.phrases or ()]
        return self._spelled

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


_last_words: list = [
    "",
    set(),
]  # the last message's words: the keywords and the reasons look at it in turn


def message_words(lowered: str) -> set[str]:
    """The set of words of `lowered`, worked out once for the keywords and the reasons (each a KeywordSet)
    that look at the same message in turn, and their phrases (Keyword.find)."""
    if lowered != _last_words[0]:
        _last_words[:] = lowered, set(words(lowered))
    return _last_words[1]


# Messages an index word reaches (candidates with `spelled`) before its phrases are sorted by their words
# (_spelled_at): a short pass, which meets most words a few times, tests requirements as it always has.
SPELL_AFTER = 32


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
        self._positions: dict[str, tuple[int, ...]] = {}  # an index entry's positions, read once
        self._phrases_at: dict[str, _Spelled] = {}  # see _spelled_at
        self._seen: dict[str, int] = {}  # messages an index word reached, until its phrases are

    @classmethod
    def from_index(cls, data: dict) -> KeywordSet:
        """The set `index_data` describes; its keywords, and its word index, built on first use."""
        s = cls.__new__(cls)
        s._records = data["records"]
        s._built = [None] * len(s._records)
        s.always, s.by_literal = data["always"], data["by_literal"]
        s._by_word, s._words = None, (data["words"], data["word_ids"])
        s._positions = {}
        s._phrases_at, s._seen = {}, {}
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

    def _ids(self, ids: str) -> tuple[int, ...]:
        at = self._positions.get(ids)
        if at is None:
            at = self._positions[ids] = tuple(map(int, ids.split(",")))
        return at

    def candidates(self, lowered: str, *, spelled: bool = False) -> list[Keyword]:
        """The keywords that may match `lowered` (a lowercased message), in their configured order.

        `spelled`: the caller's text lowercases to `lowered` character for character, so Keyword.find
        looks for a phrase keyword's phrases themselves; one is then a candidate only when one of its
        phrases has each of its words in `lowered` (see _spelled_at), and needs no other test. (Through
        an index word that reached SPELL_AFTER messages: sorting a word's phrases costs a few of them.)"""
        hit = [
            ids for lit, ids in self.by_literal.items() if lit in lowered
        ]  # the hot loop: kept lean
        sure: set[int] = set()
        by_word = self.by_word
        if by_word:
            present = message_words(lowered)
            indexed = by_word.keys() & present
            if spelled:
                for w in indexed:
                    at = self._phrases_at.get(w)
                    if at is None:
                        seen = self._seen[w] = self._seen.get(w, 0) + 1
                        if seen < SPELL_AFTER:
                            hit.append(by_word[w])
                            continue
                        at = self._spelled_at(w)
                    sure.update(at.whole)
                    hit.extend(at.unsure)
                    pairs = at.pairs
                    for other in pairs.keys() & present:
                        for ws, i in pairs[other]:
                            if ws <= present:
                                sure.add(i)
            else:
                hit.extend(by_word[w] for w in indexed)
        if not hit and not self.always and not sure:
            return []
        found = set(self.always)
        for ids in hit:
            found.update(self._ids(ids))
        found -= sure
        built = self._built
        out = []
        for i in sorted(found | sure):
            kw = built[i] or self._build(i)
            if i in sure or kw.may_match(lowered):
                out.append(kw)
        return out

    def _spelled_at(self, word: str) -> _Spelled:
        """The phrases holding `word` of the keywords it indexes, for a message holding it: each found by a
        second word of its own, so that a message's words reach only the phrases they may spell (a few,
        where the keywords of a common word hold dozens). Each phrase is indexed by one of its words (the
        config's analysis makes the index so): a message that spells it holds that word, which reaches it."""
        at = self._phrases_at[word] = _Spelled()
        for i in self._ids(self.by_word[word]):
            kw = self._built[i] or self._build(i)
            if kw.phrases is None:  # (a cache that says otherwise: tested as any keyword is)
                at.unsure.append(str(i))
                continue
            for _, ws in kw.spelled():
                if word not in ws:
                    continue  # reached by a word of its own
                rest = ws - {word}
                if not rest:
                    at.whole.append(i)
                else:  # the longest other word: the rarest, most likely
                    at.pairs.setdefault(max(sorted(rest), key=len), []).append((ws, i))
        return at


class _Spelled:
    """A KeywordSet's phrases reached from one word of a message (see KeywordSet._spelled_at): the keywords
    with a phrase of that word alone (or of no word), the phrases of more words by a second word, and
    keywords with no phrases (tested as any keyword is)."""

    __slots__ = ("whole", "pairs", "unsure")

    def __init__(self) -> None:
        self.whole: list[int] = []
        self.pairs: dict[str, list[tuple[frozenset[str], int]]] = {}
        self.unsure: list[str] = []
