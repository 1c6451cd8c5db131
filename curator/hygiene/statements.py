"""What a memory's sentences say, for telling whether two memories disagree and what a merge may keep:
each sentence's content words and whether it is negated ("use X" / "do not use X"), the values it gives
settings ("timeout = 30", "Python 3.12"). Pure functions over text (duplicates.py and merging.py)."""

from __future__ import annotations

import re
from collections import defaultdict

from curator.drafting.offline.text import sentences
from curator.review.decide import unattributed
from curator.review.verify import content_words

_NEGATION = re.compile(r"\b(?:not|never|no longer|don't|do not|doesn't|does not|mustn't|must not|shouldn't|"
                       r"should not|avoid|stop using|stopped using|cannot|can't|won't|isn't|aren't)\b", re.I)
# A setting and its value: "timeout = 30", "max_retries: 5", "workers is 4", "Python 3.12", "timeout 30s".
# A bare "word N" is not one ("page 4", "note 6" count or name things), unless N is a version or has a unit.
_VALUE = re.compile(r"\b([A-Za-z][\w.-]{2,})\b(?:\s*(?:=|:)\s*|\s+(?:is|are|to|of|at)\s+)`?(v?\d+(?:\.\d+)*[a-z%]*)\b`?"
                    r"|\b([A-Za-z][\w.-]{2,})\s+`?(v?\d+\.\d+(?:\.\d+)*|\d+(?:ms|s|m|h|kb|mb|gb|%))(?![\w.])`?")
# Words before a number that count things, not settings: two memories counting differently do not disagree.
_NOT_SETTINGS = frozenset("""turn turns line lines session sessions step steps page item items issue issues pr
commit commits test tests file files run runs times minute minutes hour hours day days week weeks month months
year years and the for with from after before about over under than top last first next only""".split())


_POLARITY_WORDS = frozenset({"avoid", "stop", "stopped", "longer", "never", "don't", "doesn't", "cannot", "can't",
                             "won't"})
SAME_STATEMENT = 0.75  # words shared (Jaccard) for two sentences to make one statement


def statement(sentence: str) -> tuple[frozenset, bool]:
    """A sentence's content words (without the words that negate it; a verb's -s dropped: "uses" and
    "does not use" say one thing) and whether it is negated."""
    words = content_words(sentence) - _POLARITY_WORDS
    return frozenset(_singular(w) for w in words), bool(_NEGATION.search(sentence))


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word


def statements(text: str) -> list[tuple[frozenset, bool, str]]:
    """(words, negated, sentence) of each sentence of `text` that says something (two words or more)."""
    out = []
    for part in unattributed(text).split("\n"):
        for s in sentences(part.strip(" -*#>")):
            words, negated = statement(s)
            if len(words) >= 2:
                out.append((words, negated, s))
    return out


def flipped(a: tuple[frozenset, bool], b: tuple[frozenset, bool]) -> bool:
    """One statement said by one and denied by the other: "use X" / "do not use X"."""
    (wa, na), (wb, nb) = a, b
    return na != nb and bool(wa) and len(wa & wb) / len(wa | wb) >= SAME_STATEMENT


_VERBS = frozenset("set sets use uses using keep keeps raise raised lower lowered increase increased bump bumped "
                   "change changed need needs require requires run runs pin pinned".split())
_OWNER_WORDS = re.compile(r"((?:[A-Za-z][\w-]*[ \t]+){1,2})\Z")


def values(text: str) -> dict[str, set[str]]:
    """setting -> the values `text` gives it ("timeout = 30", "Python 3.12"). The setting is named with
    what it belongs to, the words right before it ("payments client timeout"): the search client's
    timeout is another setting than the payments client's."""
    out: dict[str, set[str]] = defaultdict(set)
    for match in _VALUE.finditer(text):
        key = (match.group(1) or match.group(3)).lower()
        if key not in _NOT_SETTINGS and not key.isdigit():
            out[" ".join([*_owner(text, match.start()), key])].add(
                (match.group(2) or match.group(4)).lower().lstrip("v"))
    return out


def _owner(text: str, start: int) -> list[str]:
    """The content words (at most two) right before a setting's name, in its sentence: what it belongs to."""
    m = _OWNER_WORDS.search(text[max(0, start - 80):start])
    owner: list[str] = []
    for word in reversed(m.group(1).split() if m else []):
        if not content_words(word) or word.lower() in _NOT_SETTINGS or word.lower() in _VERBS:
            break
        owner.insert(0, _singular(word.lower()))
    return owner


def conflicts(ov: dict[str, set[str]], nv: dict[str, set[str]]) -> list[str]:
    """The settings both give a value, with no value in common."""
    return [key for key in sorted(set(ov) & set(nv)) if not ov[key] & nv[key]]


def other_value(ov: dict[str, set[str]], nv: dict[str, set[str]], keys: list[str] | None = None) -> str | None:
    """A setting both give a value, with no value in common (of `keys`, when given): why, in one line."""
    for key in conflicts(ov, nv) if keys is None else keys:
        return (f"gives {key} = {', '.join(sorted(nv[key]))} where the older one says "
                f"{', '.join(sorted(ov[key]))}")
    return None
