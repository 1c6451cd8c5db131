"""The tech_debt recipe: Description / Why deferred / Suggested fix."""

from __future__ import annotations

import re

from memcurate.curator.drafting.offline.choosing import (
    NOT_STATED,
    Draft,
    attribution,
    body_text,
    dedupe,
    main_statement,
    other_notes,
    supporting,
    usable,
)
from memcurate.curator.drafting.offline.evidence import Evidence
from memcurate.curator.drafting.offline.statements import (
    reason_sentence,
    split_reason,
    strip_interjections,
)
from memcurate.curator.drafting.offline.tags import content_words
from memcurate.curator.drafting.offline.text import finish
from memcurate.curator.drafting.offline.titles import describe, title_from

_SUGGEST = re.compile(
    r"\b(?:should (?:move|be|use|eventually|later)|todo|once|next time|follow-?up|"
    r"suggest|would be (?:better|to)|could be (?:improved|refactored|moved)|move (?:it )?to)\b",
    re.I,
)


def draft_tech_debt(ev: Evidence) -> Draft:
    main = main_statement(ev, "tech_debt")
    used = [main]
    text = strip_interjections(main.text)
    cl = split_reason(text)
    core = re.sub(r"^(?:so |also )", "", cl.core, flags=re.I)
    description = [finish(core)]
    # What holds meanwhile ("For now clients just log in again …") belongs to the description.
    for s in [s for s in ev.sents if s.line == main.line and s.order > main.order and usable(s)][
        :2
    ]:
        t = strip_interjections(s.text)
        if (
            re.search(r"\b(?:for now|until then|meanwhile|currently|still)\b", t, re.I)
            and not _SUGGEST.search(t)
            and not re.match(r"^(?:put|add|make|write|create|leave|mark)\b", t, re.I)
        ):
            description.append(finish(t))
            used.append(s)
    description[-1] += f" ({attribution(main)})"
    why: list[str] = []
    if cl.reason:
        why.append(reason_sentence(cl.reason))
    topic = content_words(text)
    related = dedupe(supporting(ev, main, turns=12), used)
    for s in related:
        if len(why) >= 2:
            break
        if (
            usable(s)
            and re.search(
                r"\b(?:because|since|until|out of scope|deferred|rather than|not worth)\b",
                s.text,
                re.I,
            )
            and len(content_words(s.text) & topic) >= 2
        ):
            why.append(body_text(s))
            used.append(s)
    weak: list[str] = []
    if not why:
        why.append(NOT_STATED)
        weak.append("Why deferred: no reason for deferring stated in the session")
    suggested = [
        s
        for s in dedupe(related, used)
        if usable(s) and _SUGGEST.search(s.text) and len(content_words(s.text) & topic) >= 2
    ][:2]
    used += suggested
    sections = {"Description": " ".join(description), "Why deferred": " ".join(why)}
    if suggested:
        sections["Suggested fix"] = " ".join(body_text(s) for s in suggested)
    title = title_from(text, "tech_debt", sent=main)
    return Draft(
        title,
        describe(title, why[0] if cl.reason else ""),
        sections,
        used,
        other_notes(ev, used),
        weak,
    )
