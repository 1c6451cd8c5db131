"""The preference recipe: the user's words, quoted / Reason / Examples."""

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
    usable,
)
from memcurate.curator.drafting.offline.evidence import Evidence
from memcurate.curator.drafting.offline.statements import (
    REASON,
    reason_sentence,
    split_reason,
    strip_interjections,
)
from memcurate.curator.drafting.offline.text import (
    bullets,
    finish,
    lower_first,
    quote,
    third_person,
)
from memcurate.curator.drafting.offline.titles import describe, title_from

_ASK_TAIL = re.compile(
    r"^(.{12,}?),\s+(?:so\s+)?(?:can|could|would) you (?:please )?(.{8,}?)\??$", re.I
)


def draft_preference(ev: Evidence) -> Draft:
    main = main_statement(ev, "preference", speakers=("user", "parent"))
    used = [main]
    text = strip_interjections(main.text)
    text = re.sub(r"^(?:and |but |also )?(?:in general,?\s+)?", "", text, flags=re.I)
    reason: list[str] = []
    m = _ASK_TAIL.match(text)
    if m:  # "I didn't find those links helpful, can you please replace them with …?"
        said, asked = m.group(1), m.group(2)
        pref_words = finish(asked)
        reason.append(f"In the user's words: {quote(finish(said))}")
        np = re.search(r"\b(?:those|these|the)\s+((?:[\w-]+\s+){0,4}[\w-]+s)\b", said)
        title = title_from(
            re.sub(r"\b(?:them|those)\b", np.group(1), asked, count=1)
            if np
            else f"{said}: {asked}",
            "preference",
            sent=main,
        )
        why = said
    else:
        cl = split_reason(text)
        pref_words = finish(cl.core) if cl.reason else finish(text)
        title = title_from(text, "preference", sent=main)
        why = reason_sentence(cl.reason) if cl.reason else ""
        if cl.reason:  # verbatim: "…because every new package has to go through review."
            reason.append(f"In the user's words: {quote('…' + lower_first(finish(cl.reason)))}")
    sections = {"Preference": f"> {pref_words}\n\n({attribution(main)})"}
    weak: list[str] = []
    if not reason:
        for s in ev.near(main, lines=1):
            if s.user and usable(s) and REASON.search(s.text):
                reason.append(f"In the user's words: {quote(body_text(s))}")
                used.append(s)
                why = why or body_text(s)
                break
    if not reason:
        ctx = [s for s in ev.near(main, lines=1) if s.user and usable(s) and s.order < main.order]
        if ctx:
            reason.append(f"Not stated separately; the user's context: {quote(body_text(ctx[-1]))}")
            used.append(ctx[-1])
        else:
            reason.append(NOT_STATED)
            weak.append("Reason: no reason stated in the session")
    sections["Reason"] = " ".join(reason)
    # Examples: what the preference led to, in the same message or the reply to it.
    examples = [
        s
        for s in ev.near(main, lines=2)
        if usable(s)
        and s not in used
        and s.user
        and re.search(r"\b(?:skip|use|instead|so|e\.g\.|for example|like)\b", s.text, re.I)
    ]
    reply = [
        s
        for s in ev.sents
        if s.speaker == "assistant"
        and s.turn == main.turn
        and usable(s)
        and s.order > main.order
        and not re.match(r"^you'?re (?:absolutely )?right", s.text, re.I)
    ]
    ex = dedupe(examples + reply[:1], used)[:2]
    if ex:
        sections["Examples"] = bullets([body_text(s) for s in ex])
        used += ex
    return Draft(
        title, describe(title, third_person(why)), sections, used, other_notes(ev, used), weak
    )
