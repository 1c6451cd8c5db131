"""The last look at an offline draft, with the reviewer's own checks (curator/verify/form.py).

- The title must state the fact: a label in front of it is dropped; a title that is still a question,
  a prompt, a first-person sentence, a progress report, a fragment or not English gives way to the next
  sentence of the main section that states the fact, else to one made from the topic and the category
  ("Decision on ci.yml and pyright"), and `weak` says so. The topic is the subject's names and nouns;
  a draft with neither a statement nor a subject is skipped.
- The description (the MEMORY.md line) says when the memory applies and what it is, readable on its own:
  "When changing ci.yml and pyright: it is less work" only when the second half stands alone, else the
  fact itself; never the assistant's narration, a dangling "otherwise …" or a trailing list.
- A draft whose main section is chatter or says nothing is skipped: the session states no fact of the
  category, as a model would answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memcurate.curator.categories import CATEGORIES
from memcurate.curator.drafting.offline.choosing import Draft
from memcurate.curator.drafting.offline.statements import REQUEST
from memcurate.curator.drafting.offline.tags import SCAFFOLD, subject_words
from memcurate.curator.drafting.offline.text import bounded_line, lower_first, norm, sentence_case
from memcurate.curator.drafting.offline.titles import DESCRIPTION_SOFT, TITLE_SOFT, title_from
from memcurate.curator.util.redact import find_secrets
from memcurate.curator.verify.form import (
    IMPERATIVE as _IMPERATIVE,
)
from memcurate.curator.verify.form import (
    description_flaws,
    is_chatter,
    is_foreign,
    section_flaws,
    section_sentences,
    title_flaws,
)

# A title made from the topic: "Decision on ci.yml and pyright".
_TOPIC_TITLE = {
    "decision": "Decision on",
    "constraint": "Limit on",
    "runbook": "Fixing",
    "tech_debt": "Deferred work on",
    "preference": "Preference about",
    "session_summary": "Work on",
}
# When the memory applies, the description's opening.
_WHEN = {
    "decision": "When changing",
    "constraint": "When working with",
    "runbook": "When troubleshooting",
    "tech_debt": "When touching",
    "preference": "When working on",
    "session_summary": "When resuming work on",
}
TOPIC_TITLE_WEAK = "title: no statement of the fact, made from the topic"
FOREIGN_WEAK = "title: the evidence is not in English, made from the names it holds"
# A clause that leans on the sentence it was cut from ("otherwise anyone can …", "it's simpler because …").
_DANGLING = re.compile(
    r"^(?:otherwise|so that|so|because|since|as|which|and|but|or|then|to|thus|hence|due to|"
    r"whereas|while|unless)\b",
    re.I,
)


@dataclass
class Finished:
    title: str
    description: str
    weak: list[str]
    skipped: str | None = None


def topic(
    tags: list[str], category: str, texts: Sequence[str] = (), *, names_only: bool = False
) -> str:
    """The draft's subject in a few words: its names and nouns ("ci.yml and pyright"); '' when it names none."""
    words = subject_words(
        [t for t in tags if t != category.replace("_", "-")], list(texts), names_only=names_only
    )
    return " and ".join(words[:2])


def _states(title: str, category: str) -> bool:
    return (
        bool(title)
        and not title_flaws(title, category)
        and not is_foreign(title)
        and not is_chatter(title)
    )


def _candidates(d: Draft, category: str) -> list[str]:
    """The titles to try in turn: the recipe's, its part after a label, then the main section's other sentences."""
    title = re.sub(r"\s+", " ", d.title).strip()
    out = [title]
    if ": " in title:  # "Key finding: the sandbox VM is unreachable" -> the finding
        rest = sentence_case(title.split(": ", 1)[1].strip())
        if len(rest.split()) >= 3:
            out.append(rest)
    if category != "session_summary":
        main = SCAFFOLD.sub(" ", d.sections.get(CATEGORIES[category].required[0], ""))
        # The session's statements, not what a person asked for ("Fix GitHub issue #396: …" is the request).
        out += [
            title_from(s.lstrip("> "), category)
            for s in section_sentences(main)
            if not REQUEST.match(s)
            and (category in ("decision", "preference") or not _IMPERATIVE.match(s))
        ]
    return out


def _title(d: Draft, category: str, tags: list[str], weak: list[str]) -> str | None:
    """The title; None when nothing states the fact and the evidence names no subject."""
    for t in _candidates(d, category):
        if _states(t, category):
            return t
    texts = list(d.sections.values())
    foreign = any(
        is_foreign(s)
        for s in section_sentences(d.sections.get(CATEGORIES[category].required[0], ""))
    )
    subject = topic(tags, category, texts, names_only=foreign)
    if not subject:
        return None
    weak.append(FOREIGN_WEAK if foreign else TOPIC_TITLE_WEAK)
    return bounded_line(f"{_TOPIC_TITLE[category]} {subject}", TITLE_SOFT)


def _lower(s: str) -> str:
    """ "It is less work" -> "it is less work"; names stay ("PreToolUse", "JWT", "`x`")."""
    first = s.split(" ", 1)[0]
    return lower_first(s) if first[1:].islower() or len(first) == 1 else s


def _description(d: Draft, title: str, category: str, tags: list[str], weak: list[str]) -> str:
    subject = topic(tags, category, list(d.sections.values()), names_only=FOREIGN_WEAK in weak)
    when = f"{_WHEN[category]} {subject}" if subject else ""
    if category == "runbook" and title.startswith("Fix ") and len(title) < 90:
        when = f"When {_lower(title[4:])} appears"  # "When KeyError: slice(None, 8000) appears"
    extra = d.description.strip().rstrip(".")
    # "… on its own: the dependency, the auth module, …"
    extra = re.sub(r":\s+[^:]*,[^:]*$", "", extra)
    if (
        not extra
        or norm(extra) == norm(d.title)
        or norm(extra) in norm(title)
        or description_flaws(extra)
        or _DANGLING.match(extra)
        or is_foreign(extra)
    ):
        # A clause cut from its sentence cannot stand alone: say what the memory is, the fact itself (a summary's
        # title and a topic title say nothing the line does not already show).
        topical = TOPIC_TITLE_WEAK in weak or FOREIGN_WEAK in weak
        extra = "" if topical or category == "session_summary" or not when else title
    line = f"{when}: {_lower(extra)}" if when and extra else when or title
    # "… total_input_tokens: updated …" reads as a secret
    if find_secrets(line) and not find_secrets(extra):
        line = when
    return bounded_line(line, DESCRIPTION_SOFT)


def finish_draft(d: Draft, category: str, tags: list[str]) -> Finished:
    """The title, the description and what is weak in `d`; `skipped` says why there is no memory here."""
    main = CATEGORIES[category].required[0]
    flawed = [
        f
        for f in section_flaws(category, main, d.sections.get(main, ""))
        if f.code in ("section-chatter", "section-vacuous")
    ]
    weak = list(d.weak)
    what = category.replace("_", " ")
    if flawed:
        return Finished(
            "", "", weak, skipped=f"nothing in the evidence states a {what}: {flawed[0].message}"
        )
    title = _title(d, category, tags, weak)
    if title is None:
        return Finished(
            "",
            "",
            weak,
            skipped=f"no sentence of the evidence states a {what}, and it names no "
            "subject to title one by",
        )
    return Finished(title, _description(d, title, category, tags, weak), weak)
