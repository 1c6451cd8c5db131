"""The last look at an offline draft, with the reviewer's own checks (curator/review/form.py).

- The title must state the fact: a label in front of it is dropped; a title that is still a question,
  a prompt, a first-person sentence, a progress report or a fragment is replaced by one made from the
  topic and the category, and `weak` says so.
- The description (the MEMORY.md line) says when the memory applies: "When changing ci.yml and pyright:
  it is less work", never the assistant's narration.
- A draft whose main section is chatter or says nothing is skipped: the session states no fact of the
  category, as a model would answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from curator.categories import CATEGORIES
from curator.drafting.offline.choosing import Draft
from curator.drafting.offline.text import bounded_line, lower_first, norm, sentence_case
from curator.drafting.offline.titles import DESCRIPTION_SOFT, TITLE_SOFT
from curator.review.form import description_flaws, section_flaws, title_flaws

# A title made from the topic: "Decision on ci.yml and pyright".
_TOPIC_TITLE = {"decision": "Decision on", "constraint": "Limit on", "runbook": "Fixing",
                "tech_debt": "Deferred work on", "preference": "Preference about", "session_summary": "Work on"}
# When the memory applies, the description's opening.
_WHEN = {"decision": "When changing", "constraint": "When working with", "runbook": "When troubleshooting",
         "tech_debt": "When touching", "preference": "When working on", "session_summary": "When resuming work on"}
TOPIC_TITLE_WEAK = "title: no statement of the fact, made from the topic"


@dataclass
class Finished:
    title: str
    description: str
    weak: list[str]
    skipped: str | None = None


def topic(tags: list[str], category: str) -> str:
    """The draft's subject in a few words: its first tags ("ci.yml and pyright")."""
    words = [t for t in tags if t != category.replace("_", "-")][:2]
    return " and ".join(words) or category.replace("_", " ")


def _title(title: str, category: str, tags: list[str], weak: list[str]) -> str:
    if title and not title_flaws(title, category):
        return title
    if title and ": " in title:  # "Key finding: the sandbox VM is unreachable" -> the finding
        rest = sentence_case(title.split(": ", 1)[1].strip())
        if len(rest.split()) >= 3 and not title_flaws(rest, category):
            return rest
    weak.append(TOPIC_TITLE_WEAK)
    return bounded_line(f"{_TOPIC_TITLE[category]} {topic(tags, category)}", TITLE_SOFT)


def _lower(s: str) -> str:
    """"It is less work" -> "it is less work"; names stay ("PreToolUse", "JWT", "`x`")."""
    first = s.split(" ", 1)[0]
    return lower_first(s) if first[1:].islower() or len(first) == 1 else s


def _description(d: Draft, title: str, category: str, tags: list[str]) -> str:
    when = f"{_WHEN[category]} {topic(tags, category)}"
    if category == "runbook" and title.startswith("Fix ") and len(title) < 90:
        when = f"When {_lower(title[4:])} appears"  # "When KeyError: slice(None, 8000) appears"
    extra = d.description.strip().rstrip(".")
    if not extra or norm(extra) == norm(d.title) or norm(extra) in norm(title) or description_flaws(extra):
        return bounded_line(when, DESCRIPTION_SOFT)
    return bounded_line(f"{when}: {_lower(extra)}", DESCRIPTION_SOFT)


def finish_draft(d: Draft, category: str, tags: list[str]) -> Finished:
    """The title, the description and what is weak in `d`; `skipped` says why there is no memory here."""
    main = CATEGORIES[category].required[0]
    flawed = [f for f in section_flaws(category, main, d.sections.get(main, ""))
              if f.code in ("section-chatter", "section-vacuous")]
    weak = list(d.weak)
    if flawed:
        what = category.replace("_", " ")
        return Finished("", "", weak, skipped=f"nothing in the evidence states a {what}: {flawed[0].message}")
    title = _title(re.sub(r"\s+", " ", d.title).strip(), category, tags, weak)
    return Finished(title, _description(d, title, category, tags), weak)
