"""The constraint recipe: Rule / Impact / Workaround."""

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
    reason_sentence,
    split_reason,
    strip_interjections,
)
from memcurate.curator.drafting.offline.tags import content_words
from memcurate.curator.drafting.offline.text import finish, inside_code
from memcurate.curator.drafting.offline.titles import describe, title_from, with_heading

_WORKAROUND = re.compile(
    r"^(?:make|use|set|skip|mark|run|add|put|keep|only|instead"
    r"|i'll (?:mark|make|set|add|skip|use)"
    r"|(?:it |they |this )?can be "
    r"(?:enabled|disabled|configured|set|overridden|bypassed|skipped))\b"
    r"|\b(?:skip unless|only when|instead|via `|can be (?:enabled|disabled|configured))",
    re.I,
)


def draft_constraint(ev: Evidence) -> Draft:
    main = main_statement(ev, "constraint")
    used = [main]
    text = strip_interjections(main.text)
    cl = split_reason(text)
    rule = finish(with_heading(main, cl.core + (", " + cl.reason if cl.reason else "")))
    impact: list[str] = []
    workaround: list[str] = []
    if cl.consequence:
        cons = cl.consequence
        if ": " in cons and not inside_code(cons, cons.index(": ")):
            cons, fix = cons.split(": ", 1)
            workaround.append(finish(fix))
        impact.append(finish(cons))
    topic = content_words(f"{main.heading} {text}")
    same_line = [s for s in ev.sents if s.line == main.line and s.order > main.order]
    near = ev.near(main, lines=1)
    keyed = sorted(
        (s for s in ev.sents if s.weight > 0 and s.kind != "error" and s.line != main.line),
        key=lambda s: (-s.weight, s.order),
    )
    for s in dedupe(same_line + near + keyed, used):
        if not usable(s) or s.text.endswith("?"):
            continue
        t = strip_interjections(s.text)
        close = s in same_line or s in near
        shared = len(content_words(t) & topic)
        if _WORKAROUND.search(t) and (close or shared >= 2):
            if len(workaround) < 2:
                workaround.append(body_text(s))
                used.append(s)
            continue
        if len(impact) < 2 and (s in same_line or shared >= 2):
            sc = split_reason(t)
            if sc.consequence:
                cons = sc.consequence
                if ": " in cons and not inside_code(cons, cons.index(": ")):
                    cons, fix = cons.split(": ", 1)
                    if len(workaround) < 2:
                        workaround.append(finish(fix))
                impact.append(finish(cons))
            else:
                impact.append(body_text(s))
            used.append(s)
    weak: list[str] = []
    if not impact:
        nxt = next(
            (s for s in ev.after(main) if usable(s) and s.turn == main.turn and s not in used), None
        )
        if cl.reason:
            impact.append(reason_sentence(cl.reason))
        elif nxt:
            impact.append(body_text(nxt))
            used.append(nxt)
        else:
            impact.append(NOT_STATED)
            weak.append("Impact: no consequence of the limit stated in the session")
    sections = {"Rule": f"{rule} ({attribution(main)})", "Impact": " ".join(impact)}
    if workaround:
        sections["Workaround"] = " ".join(workaround)
    title = title_from(text, "constraint", sent=main)
    return Draft(
        title,
        describe(title, reason_sentence(cl.reason) if cl.reason else ("" if weak else impact[0])),
        sections,
        used,
        other_notes(ev, used),
        weak,
    )
