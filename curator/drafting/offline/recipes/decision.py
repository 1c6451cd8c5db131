"""The decision recipe: Decision / Rationale / Alternatives / Consequences."""

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
    REASON,
    TRADEOFF,
    reason_sentence,
    split_reason,
    strip_interjections,
)
from memcurate.curator.drafting.offline.text import bullets, finish, quote
from memcurate.curator.drafting.offline.titles import describe, meta_split, title_from

_BACKREF = re.compile(
    r"^(?:this|that|it|which|doing so|this approach|that approach|this way)(?:'s| is| was| would|"
    r" will| keeps| makes)\b",
    re.I,
)


_ALTERNATIVE = re.compile(
    r"\b(?:instead of|rather than|over (?:using|the)|alternatives?|options?|would mean|"
    r"vs\.?|versus|considered|not (?:use|go with))\b",
    re.I,
)
_EXPLICIT_ALT = re.compile(
    r"\b(?:alternatives?|options?|would mean|considered|versus|vs\.?)\b", re.I
)
_CONSEQUENCE = re.compile(r"\b(?:means that|as a result|no longer)\b", re.I)
_CHANGE_LOG = re.compile(
    r"^(?:updated|changed|added|fixed|replaced|removed|used|created|modified|renamed|moved)\b", re.I
)
_CONFIRM = re.compile(
    r"\b(?:agreed|you're (?:absolutely )?right|good (?:idea|call|point)|makes sense|better fit|"
    r"(?:much |a lot )?(?:cleaner|simpler|better)|will do)\b",
    re.I,
)


def draft_decision(ev: Evidence) -> Draft:
    main = main_statement(ev, "decision")
    backref = None
    prev = ev.previous(main)
    if _BACKREF.match(strip_interjections(main.text)) and prev is not None and usable(prev):
        # "I should modify `generate_html` … . This is much cleaner than …": the choice is the sentence before.
        main, backref = prev, main
    used = [main] + ([backref] if backref else [])
    text = strip_interjections(main.text)
    context, text = meta_split(text)
    cl = split_reason(text)
    decision = [finish(text)]
    # Later key sentences of the same line are part of the statement ("… also we don't need to check …").
    for s in ev.sents:
        if (
            s.line == main.line
            and s.order > main.order
            and s.key
            and usable(s)
            and len(decision) < 3
            and s is not backref
        ):
            decision.append(body_text(s))
            used.append(s)
    decision = [" ".join(decision) + f" ({attribution(main)})"]
    related = dedupe(supporting(ev, main), used)
    # The other party agreeing belongs with the decision.
    confirm = next(
        (
            s
            for s in related
            if s.speaker != main.speaker
            and s.turn >= main.turn
            and usable(s)
            and s.speaker in ("user", "assistant", "parent")
            and _CONFIRM.search(s.text)
            and not TRADEOFF.search(s.text)
        ),
        None,
    )
    rationale: list[str] = []
    if cl.reason:
        rationale.append(reason_sentence(cl.reason))
    if backref:
        rationale.append(body_text(backref))
    if confirm:
        used.append(confirm)
        if REASON.search(confirm.text):  # an agreement that says why is part of the rationale
            who = "The assistant" if confirm.speaker == "assistant" else "The user"
            agreed = f"{who} agreed ({attribution(confirm).split(', ')[-1]}): {quote(body_text(confirm))}"
        else:
            decision.append(f"Confirmed by {attribution(confirm)}: {quote(body_text(confirm))}")
            agreed = ""
    for s in dedupe(related, used):
        if len(rationale) >= 2:
            break
        if (
            usable(s)
            and REASON.search(s.text)
            and not _ALTERNATIVE.search(s.text)
            and not TRADEOFF.search(s.text)
            and not s.text.endswith("?")
            and (s.turn == main.turn or s.speaker == main.speaker)
        ):
            rationale.append(body_text(s))
            used.append(s)
    if confirm and agreed:
        rationale.append(agreed)
    weak: list[str] = []
    if not rationale:  # the least that is true; the draft is weaker for it
        rationale.append(NOT_STATED)
        weak.append("Rationale: no reason stated in the session")
    pool = dedupe(related, used)
    alternatives = [
        s
        for s in pool
        if usable(s)
        and _ALTERNATIVE.search(s.text)
        and not s.text.endswith("?")
        and s.turn == main.turn
        and not _CHANGE_LOG.match(strip_interjections(s.text))
        and (s.speaker == main.speaker or _EXPLICIT_ALT.search(s.text))
    ][:3]
    used += alternatives
    consequences = [
        s
        for s in dedupe(related, used)
        if usable(s)
        and s.turn == main.turn
        and (TRADEOFF.search(s.text) or _CONSEQUENCE.search(s.text))
    ][:2]
    used += consequences
    sections = {
        "Decision": "\n\n".join(decision),
        "Rationale": " ".join(rationale) if len(rationale) < 3 else bullets(rationale),
    }
    if alternatives:
        sections["Alternatives"] = bullets([body_text(s) for s in alternatives])
    if consequences:
        sections["Consequences"] = " ".join(body_text(s) for s in consequences)
    notes = other_notes(ev, used)
    if main.speaker == "assistant" and _CHANGE_LOG.match(
        strip_interjections(_LABEL_PREFIX.sub("", main.text))
    ):
        notes.insert(
            0,
            "weak evidence: the statement is a change the assistant reported, not a choice it or the "
            "user made between alternatives",
        )
    title = title_from(text, "decision", sent=main)
    why = (
        rationale[0]
        if not rationale[0].startswith((NOT_STATED, "The assistant agreed", "The user agreed"))
        else ""
    )
    return Draft(title, describe(title, why), sections, used, notes, weak)


_LABEL_PREFIX = re.compile(r"^[^:`]{3,50}:\s+")
