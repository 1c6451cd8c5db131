"""What a memory's sentences say, for telling whether two memories disagree and what a merge may keep:
each sentence's content words and whether it is negated ("use X" / "do not use X"), the values it gives
settings ("timeout = 30", "Python 3.12"). Pure functions over text (duplicates.py and merging.py)."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

from memcurate.curator.drafting.offline.text import sentences
from memcurate.curator.verify.checks import content_words
from memcurate.curator.verify.decide import unattributed

_NEGATION = re.compile(
    r"\b(?:not|never|no longer|don't|do not|doesn't|does not|mustn't|must not|shouldn't|"
    r"should not|avoid|stop using|stopped using|cannot|can't|won't|isn't|aren't)\b",
    re.I,
)
# A setting and its value: "timeout = 30", "max_retries: 5", "workers is 4", "Python 3.12", "timeout 30s".
# A bare "word N" is not one ("page 4", "note 6" count or name things), unless N is a version or has a unit.
_VALUE = re.compile(
    r"\b([A-Za-z][\w.-]{2,})\b(?:\s*(?:=|:)\s*|\s+(?:is|are|to|of|at)\s+)`?(v?\d+(?:\.\d+)*[a-z%]*)\b`?"
    r"|\b([A-Za-z][\w.-]{2,})\s+`?(v?\d+\.\d+(?:\.\d+)*|\d+(?:ms|s|m|h|kb|mb|gb|%))(?![\w.])`?"
)
_DIGIT = re.compile(r"\d")
# Words before a number that count things, not settings: two memories counting differently do not disagree.
_NOT_SETTINGS = frozenset(
    """turn turns line lines session sessions step steps page item items issue issues pr
commit commits test tests file files run runs times minute minutes hour hours day days week weeks month months
year years and the for with from after before about over under than top last first next only""".split()
)


_POLARITY_WORDS = frozenset(
    {"avoid", "stop", "stopped", "longer", "never", "don't", "doesn't", "cannot", "can't", "won't"}
)
SAME_STATEMENT = 0.75  # words shared (Jaccard) for two sentences to make one statement


def statement(sentence: str) -> tuple[frozenset, bool]:
    """A sentence's content words (without the words that negate it; a verb's -s dropped: "uses" and
    "does not use" say one thing) and whether it is negated."""
    words = content_words(sentence) - _POLARITY_WORDS
    # _singular of each, inline: a check finds the statements of thousands of memories
    singular = frozenset(
        w[:-1] if len(w) > 4 and w[-1] == "s" and w[-2] != "s" else w for w in words
    )
    return singular, bool(_NEGATION.search(sentence))


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word


def statements(text: str) -> list[tuple[frozenset, bool, str]]:
    """(words, negated, sentence) of each sentence of `text` that says something (two words or more)."""
    out: list[tuple[frozenset, bool, str]] = []
    for part in unattributed(text).split("\n"):
        out += _line_statements(part)
    return out


@lru_cache(maxsize=1024)
def _line_statements(line: str) -> tuple[tuple[frozenset, bool, str], ...]:
    """`statements` of one line. Kept for the lines seen last: a memory's main statements (its title,
    description and lead) are lines of its whole text, whose statements were just found."""
    out = []
    for s in sentences(line.strip(" -*#>")):
        words, negated = statement(s)
        if len(words) >= 2:
            out.append((words, negated, s))
    return tuple(out)


def flipped(a: tuple[frozenset, bool], b: tuple[frozenset, bool]) -> bool:
    """One statement said by one and denied by the other: "use X" / "do not use X"."""
    (wa, na), (wb, nb) = a, b
    return na != nb and bool(wa) and len(wa & wb) / len(wa | wb) >= SAME_STATEMENT


_VERBS = frozenset(
    "set sets use uses using keep keeps raise raised lower lowered increase increased bump bumped "
    "change changed need needs require requires run runs pin pinned".split()
)
_OWNER_WORDS = re.compile(r"((?:[A-Za-z][\w-]*[ \t]+){1,2})\Z")


def values(text: str) -> dict[str, set[str]]:
    """setting -> the values `text` gives it ("timeout = 30", "Python 3.12"). The setting is named with
    what it belongs to, the words right before it ("payments client timeout"): the search client's
    timeout is another setting than the payments client's."""
    out: dict[str, set[str]] = defaultdict(set)
    # each value holds a digit: a text without one (most) gives none, found without the search
    if not _DIGIT.search(text):
        return out
    for match in _VALUE.finditer(text):
        key = (match.group(1) or match.group(3)).lower()
        if key not in _NOT_SETTINGS and not key.isdigit():
            out[" ".join([*_owner(text, match.start()), key])].add(
                (match.group(2) or match.group(4)).lower().lstrip("v")
            )
    return out


def _owner(text: str, start: int) -> list[str]:
    """The content words (at most two) right before a setting's name, in its sentence: what it belongs to."""
    m = _OWNER_WORDS.search(text[max(0, start - 80) : start])
    owner: list[str] = []
    for word in reversed(m.group(1).split() if m else []):
        if not content_words(word) or word.lower() in _NOT_SETTINGS or word.lower() in _VERBS:
            break
        owner.insert(0, _singular(word.lower()))
    return owner


def conflicts(ov: dict[str, set[str]], nv: dict[str, set[str]]) -> list[str]:
    """The settings both give a value, with no value in common."""
    return [key for key in sorted(set(ov) & set(nv)) if not ov[key] & nv[key]]


def other_value(
    ov: dict[str, set[str]], nv: dict[str, set[str]], keys: list[str] | None = None
) -> str | None:
    """A setting both give a value, with no value in common (of `keys`, when given): why, in one line."""
    for key in conflicts(ov, nv) if keys is None else keys:
        return (
            f"gives {key} = {', '.join(sorted(nv[key]))} where the older one says "
            f"{', '.join(sorted(ov[key]))}"
        )
    return None


# -- values said in words -------------------------------------------------------------------------
# "keep logs for seven days" and "keep logs for fourteen days" say one statement with two values: never
# one memory that says both. A value is a number (in digits or in words, with its unit), a frequency, a
# version, or a name (a capitalised word inside a sentence, an identifier). Counts of evidence ("seen in
# 2 files", "turn 3") are not values: two memories counting differently do not disagree.

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
_TENS = {
    w: 10 * i
    for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split())
    if i > 1
}
NUMBER_WORDS: dict[str, int] = {
    **{w: i for i, w in enumerate(_ONES)},
    **_TENS,
    "dozen": 12,
    "once": 1,
    "twice": 2,
}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_UNITS = {
    "ms": "ms",
    "millisecond": "ms",
    "s": "second",
    "sec": "second",
    "second": "second",
    "m": "minute",
    "min": "minute",
    "minute": "minute",
    "h": "hour",
    "hr": "hour",
    "hour": "hour",
    "d": "day",
    "day": "day",
    "week": "week",
    "month": "month",
    "year": "year",
    "kb": "kb",
    "mb": "mb",
    "gb": "gb",
    "tb": "tb",
    "%": "percent",
    "percent": "percent",
    "time": "time",
    "x": "time",
}
_FREQUENCIES = frozenset(
    "hourly daily nightly weekly fortnightly biweekly monthly quarterly yearly annually".split()
)
_EVIDENCE = frozenset("turn session file line commit step page item issue pr test".split())
_TOKEN = re.compile(r"`[^`\n]+`|\d+(?:\.\d+)*[a-z%]*|%|[A-Za-z][\w'.-]*[A-Za-z0-9]|[A-Za-z]")
_OPENS = re.compile(r"(?:^|[.!?:;(\"'*#>-]|\n)\s*\Z")
_DIGITS = re.compile(r"(\d+(?:\.\d+)*)[a-z%]*")
_ATTACHED = re.compile(r"[\d.]+([a-z%]+)")  # a number's unit written onto it: "30s", "5%"
_IDENTIFIER = re.compile(r"[a-z][A-Z]|[A-Z]{2}|_|\w\.\w")
# What any value needs (a digit, `code`, an identifier's `_` or `a.b`), past the sentence's first letter
# a capital (a name); else one of the words below.
_MAYBE_VALUE = re.compile(r"[\d`_]|\w\.\w")
_LETTERS = re.compile(r"[A-Za-z]+")
_BLANK = re.compile(r"\s*")


@lru_cache(maxsize=16384)
def said_values(sentence: str) -> tuple[frozenset[str], str]:
    """The values a sentence gives (normalised: "seven days" and "7 days" are "7 day") and the sentence
    with them blanked out (what it says of them). Kept for the sentences seen last: the check compares a
    memory with up to 2 x duplicates.MAX_CANDIDATES others, sentence by sentence, and this is its cost."""
    if _gives_none(sentence):
        return frozenset(), sentence
    toks = list(_TOKEN.finditer(sentence))
    values: set[str] = set()
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(toks):
        number, j = _number_at(toks, i)
        if number is not None:
            prev = _noun(toks[i - 1].group(0)) if i else ""
            nxt = _noun(toks[j].group(0)) if j < len(toks) else ""
            attached = _ATTACHED.fullmatch(toks[j - 1].group(0).lower())
            unit = _UNITS.get(attached.group(1)) if attached else _UNITS.get(nxt)
            end = j + (1 if unit and not attached else 0)
            if prev not in _EVIDENCE and nxt not in _EVIDENCE:
                values.add(f"{number} {unit}" if unit else number)
                spans.append((toks[i].start(), toks[end - 1].end()))
            i = end
            continue
        tok = toks[i]
        word = tok.group(0)
        if word.lower() in _FREQUENCIES or _is_name(sentence, tok):
            values.add(word.strip("`").lower())
            spans.append(tok.span())
        i += 1
    blanked = sentence
    for start, end in reversed(spans):
        blanked = blanked[:start] + " " + blanked[end:]
    return frozenset(values), blanked


def _gives_none(sentence: str) -> bool:
    """True when `sentence` surely gives no value (most do not): no digit, code or identifier, no capital
    but an opening one, no number or frequency word. Tokenising it would find none, at ten times the cost."""
    if _MAYBE_VALUE.search(sentence):
        return False
    first = _LETTERS.search(sentence)
    if first is None:
        return True
    start = first.start()
    # a capital past the first letter may be a name; a first letter after anything but blanks too
    if not _BLANK.fullmatch(sentence, 0, start) or not sentence[start + 1 :].islower():
        return False
    return not any(
        w.lower() in NUMBER_WORDS or w.lower() in _FREQUENCIES
        for w in _LETTERS.findall(sentence, start)
    )


def _noun(word: str) -> str:
    """A unit or a counted noun, singular: "days" -> "day", "PRs" -> "pr"."""
    word = word.lower()
    return (
        word[:-1]
        if word.endswith("s") and (word[:-1] in _UNITS or word[:-1] in _EVIDENCE)
        else word
    )


def _number_at(toks: list, i: int) -> tuple[str | None, int]:
    """The number that starts at token `i` (digits, or words: "twenty-one", "one hundred") and the index
    after it; (None, i) when none does."""
    word = toks[i].group(0).lower()
    m = _DIGITS.fullmatch(word)
    if m:
        return m.group(1), i + 1
    total, j, seen = 0, i, False
    while j < len(toks):
        parts = toks[j].group(0).lower().split("-")
        if len(parts) <= 2 and all(p in NUMBER_WORDS for p in parts):
            total += sum(NUMBER_WORDS[p] for p in parts)
        elif parts[0] in _SCALES and len(parts) == 1 and seen:
            total = max(total, 1) * _SCALES[parts[0]]
        else:
            break
        seen, j = True, j + 1
    return (str(total), j) if seen else (None, i)


def _is_name(sentence: str, tok) -> bool:
    """A name: `code`, an identifier (snake_case, dotted, CamelCase, MySQL), or a capitalised word that
    does not open its sentence."""
    word = tok.group(0)
    if _noun(word) in _EVIDENCE:
        return False
    if word.startswith("`") or _IDENTIFIER.search(word):
        return len(word) > 1
    return word[0].isupper() and word != "I" and not _OPENS.search(sentence[: tok.start()])


@dataclass(frozen=True)
class Said:
    """A sentence as `value_clash` compares it, found once: a memory's sentences meet those of dozens."""

    sentence: str
    values: frozenset[str]  # the values it gives (said_values)
    # the statement of the rest (the sentence with its values blanked); none when it gives no value
    words: frozenset
    negated: bool


@lru_cache(maxsize=16384)
def said_of(sentence: str) -> Said:
    values, rest = said_values(sentence)
    # a sentence without values clashes with none: its statement is never looked at
    words, negated = statement(rest) if values else (frozenset(), False)
    return Said(sentence, values, words, negated)


def value_clash(a: str, b: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """`clash` of two sentences."""
    return clash(said_of(a), said_of(b))


def clash(a: Said, b: Said) -> tuple[frozenset[str], frozenset[str]] | None:
    """(a's values, b's values) when two sentences say one statement but give it other values ("keep logs
    for seven days" / "for fourteen days", "deploys go through Alice" / "through Bob"): what each gives that
    the other does not. None when they say different things, or agree."""
    only_a, only_b = a.values - b.values, b.values - a.values
    if not only_a or not only_b:
        return None
    wa, wb = a.words, b.words
    if a.negated != b.negated or not wa or not wb or len(wa & wb) / len(wa | wb) < SAME_STATEMENT:
        return None
    return only_a, only_b
