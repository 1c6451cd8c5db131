"""Choosing the sentences a draft is built from.

The *main* sentence is the best sentence of the snippets' lines for the
category: snippet weight (which already says who spoke), whether it holds the
keyword, and its shape (narration, questions, requests, pasted code count
less; a reason clause and the category's own wording count more). The
sections after it come from its reason clause and the sentences that may
support it; other strong statements the draft leaves out are listed in the
result's notes, so a reviewer can see what else the evidence held.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memcurate.curator.drafting.offline.evidence import Evidence, Sent
from memcurate.curator.drafting.offline.statements import (
    GENERAL,
    NARRATION,
    REASON,
    REQUEST,
    is_codeish,
    is_fluff,
    is_lead_in,
    split_reason,
    strip_interjections,
)
from memcurate.curator.drafting.offline.text import bounded_line, finish, norm
from memcurate.curator.errors import MemcurateError
from memcurate.curator.verify.form import is_chatter, is_foreign

# What a required section says when the session does not state it: the least that is true, never filler.
# The recipe lists it in the draft's `weak` too ("Rationale: no reason stated in the session").
NOT_STATED = "Not stated in the session."


class NoEvidence(MemcurateError):
    """The evidence holds no usable statement for the category."""


class NotStated(NoEvidence):
    """The evidence has statements, but none of the category (only chatter, no fix): the draft is skipped."""


_BOOST = {
    "decision": re.compile(
        r"\b(?:let's (?:go with|use|keep|switch|stick|just)|we(?:'ll| will) (?:go with|use)|decided|"
        r"go with|settled on|chose|should (?:use|change|switch|modify|run)|no need|"
        r"(?:we|i) don't need|we're not doing|instead of|rather than|combine)\b",
        re.I,
    ),
    "constraint": re.compile(
        r"\b(?:must|never|can't|cannot|no (?:network|access)|only|not (?:allowed|available|"
        r"supported)|requires?|blocked|denied|doesn't|didn't|won't)\b",
        re.I,
    ),
    "tech_debt": re.compile(
        r"\b(?:todo|for now|later|defer(?:red)?|leave .{1,60} out|left out|out of (?:this|the) "
        r"(?:change|scope)|temporar|hack|known (?:issue|problem|limitation)"
        r"|allow .{1,40} failures)\b",
        re.I,
    ),
    "preference": GENERAL,
}


_ERROR_MESSAGE = re.compile(
    r"^(?:\w*(?:error|exception|warning|fatal|failed|failure)\b\s*[:!]|traceback\b|"
    r"E\s{1,3}\w+(?:\.\w+)*(?:Error|Exception)\b)",
    re.I,
)


def shape_factor(s: Sent, category: str) -> float:
    """How well a sentence's shape suits the main statement of a memory."""
    text = strip_interjections(s.text)
    core = split_reason(text).core
    f = 1.0
    if NARRATION.match(text) or NARRATION.match(core):
        f *= 0.15
    if is_lead_in(text):
        f *= 0.4
    if text.endswith("?"):
        f *= 0.6 if category in ("decision", "preference") else 0.4
    if REQUEST.match(text):
        f *= 0.35 if category == "preference" else 0.75
    boost = _BOOST.get(category)
    if boost is not None and boost.search(text):
        f *= 1.3
    if not s.key and s.weight > 0 and not (boost is not None and boost.search(text)):
        f *= 0.7  # beside the keyword, and not saying anything of the category either
    if category in ("decision", "tech_debt") and REASON.search(text):
        f *= 1.5  # the reason fills the second required section
    elif category == "constraint" and REASON.search(text):
        f *= 1.2
    words = len(text.split())
    if words < 4:
        f *= 0.3
    if text.endswith("…"):
        f *= 0.9
    if is_fluff(s.text) or is_codeish(s.text) or is_chatter(text):
        f *= 0.05
    if category != "runbook" and _ERROR_MESSAGE.match(text):
        f *= 0.2  # a pasted error is what happened; the fact is what it means (a runbook's symptom is its own)
    if is_foreign(text):
        f *= 0.2  # the drafter cannot restate it: an English statement of the fact, when there is one, reads better
    return f


def substantive(s: str) -> bool:
    """Says something: at least three words of letters (not "---", "id: x" or a bare path)."""
    return len(re.findall(r"[A-Za-z]{2,}", re.sub(r"`[^`]*`", "", s))) >= 3


def main_statement(ev: Evidence, category: str, **kw) -> Sent:
    """The statement a draft is built on; NoEvidence when there is none."""
    main = pick_main(ev, category, **kw)
    if main is None:
        raise NotStated() if pick_main(ev, category, chatter=True, **kw) else NoEvidence()
    return main


def pick_main(
    ev: Evidence, category: str, *, speakers: tuple[str, ...] = (), chatter: bool = False
) -> Sent | None:
    texts = [s for s in ev.sents if s.kind != "error" and substantive(s.text)]
    pool = [s for s in texts if s.weight > 0] or texts
    if speakers and any(s.speaker in speakers for s in pool):
        pool = [s for s in pool if s.speaker in speakers]
    # Narration, progress reports and tracker chatter state nothing worth keeping.
    pool = [s for s in pool if chatter or not is_chatter(strip_interjections(s.text))]
    if not pool:
        return None
    return max(
        pool,
        key=lambda s: (
            max(s.weight, 0.05) * shape_factor(s, category),
            -s.order[0],
            -s.order[1],
            -s.order[2],
        ),
    )


def usable(s: Sent) -> bool:
    t = strip_interjections(s.text)
    return not (
        is_fluff(s.text)
        or NARRATION.match(t)
        or len(t.split()) < 3
        or is_lead_in(t)
        or is_codeish(t)
        or is_chatter(t)
    )


def body_text(s: Sent) -> str:
    return finish(strip_interjections(s.text))


def attribution(s: Sent) -> str:
    who = {"user": "the user", "parent": "the parent agent", "assistant": "the assistant"}.get(
        s.speaker, s.speaker
    )
    return f"{who}, turn {s.turn}" if s.turn else who


@dataclass
class Draft:
    """What a recipe made: the document's parts, the sentences it used (their turns are the sources), notes,
    and `weak`: what the session did not state ("Rationale: no reason stated in the session")."""

    title: str
    description: str
    sections: dict[str, str]
    used: list[Sent]
    notes: list[str] = field(default_factory=list)
    weak: list[str] = field(default_factory=list)


def dedupe(sents: list[Sent], used: list[Sent]) -> list[Sent]:
    """`sents` without those already used or saying the same as one (repeated lines, quotes)."""
    seen = [norm(s.text) for s in used]
    ids = {id(s) for s in used}
    out = []
    for s in sents:
        n = norm(s.text)
        if id(s) in ids or any(
            n == o or (len(o) > 30 and len(n) > 30 and (n in o or o in n)) for o in seen
        ):
            continue
        seen.append(n)
        ids.add(id(s))
        out.append(s)
    return out


def supporting(ev: Evidence, main: Sent, *, turns: int = 1) -> list[Sent]:
    """Sentences that may support `main`: its block first, then its turn and the next ones."""
    near = ev.near(main, lines=3)
    ids = {id(s) for s in near}
    rest = [
        s
        for s in ev.sents
        if id(s) not in ids and s is not main and 0 <= s.turn - main.turn <= turns
    ]
    return near + rest


def other_notes(ev: Evidence, used: list[Sent]) -> list[str]:
    """Other statements of the evidence: the draft keeps to one, the reviewer may want another."""
    lines = {s.line for s in used}
    out = []
    for s in sorted(
        (s for s in ev.keyed() if s.kind != "error"), key=lambda s: (-s.weight, s.order)
    ):
        if s.line in lines or not usable(s):
            continue
        lines.add(s.line)
        out.append(
            f"also in the evidence, not drafted: turn {s.turn} ({s.speaker}): "
            f"{bounded_line(strip_interjections(s.text), 140)}"
        )
    return out[:4]
