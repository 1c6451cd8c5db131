"""The runbook recipe: Symptom from the person's report and the failing run, Steps from the fix
sentences, Verification from the "passes now" line or a re-run of the failing command, Root cause."""

from __future__ import annotations

import re

from memcurate.curator.drafting.offline.choosing import (
    NOT_STATED,
    Draft,
    NoEvidence,
    NotStated,
    attribution,
    body_text,
    dedupe,
    other_notes,
    substantive,
    usable,
)
from memcurate.curator.drafting.offline.evidence import Evidence, Sent
from memcurate.curator.drafting.offline.statements import (
    NARRATION,
    WEAK_END,
    is_codeish,
    is_fluff,
    is_lead_in,
    reason_sentence,
    split_reason,
    strip_interjections,
)
from memcurate.curator.drafting.offline.text import (
    MAX_ITEMS,
    bounded_line,
    bullets,
    drop_parens,
    finish,
    inline_code,
    norm,
    sentence_case,
    shorten,
)
from memcurate.curator.drafting.offline.titles import TITLE_SOFT, describe, title_from
from memcurate.curator.verify.form import section_flaws

_ERROR_NAMED = re.compile(
    r"(?:^|[\s(])(?<!except )(?<!raise )([A-Za-z_][\w.]*(?:Error|Exception|Exit))"
    r"(?::\s+(.+)|\s*$)"
)
_PYTEST_NODE = re.compile(r"(\S+\.py)::(\S+?)\s+(?:FAILED|ERROR)\b")
_LINT = re.compile(r"(\S+\.\w+):\d+(?::\d+)?\s*[-:]?\s*(error|warning)\b:?\s*(.+)", re.I)
_FIX = re.compile(
    r"\b(?:fix(?:ed|es)? by|the fix (?:is|was)|to fix (?:this|it|the)|the solution (?:is|was)|"
    r"solved by|resolved by|workaround|added|adding|changed|changing|replaced|replacing|updated|"
    r"updating|removed|removing|moved|switched|installed|renamed|wrapped|set `|now (?:uses|sets|calls)|"
    r"use[sd]? `|using `|by (?:adding|changing|using|setting|removing))\b",
    re.I,
)
_FIX_VERBS = (
    "modify",
    "add",
    "change",
    "replace",
    "remove",
    "set",
    "update",
    "use",
    "move",
    "pass",
    "call",
    "rename",
    "wrap",
    "install",
    "create",
    "mark",
    "clean",
    "delete",
    "switch",
    "make",
    "mock",
    "patch",
    "skip",
    "stop",
    "import",
    "annotate",
    "cast",
    "revert",
    "pin",
    "upgrade",
    "downgrade",
    "configure",
)
_INTENT = re.compile(
    r"^(?:i should|i'll|i will|i need to|we need to|we should|let me|let's)\s+(?:now\s+|just\s+)?"
    rf"((?:{'|'.join(_FIX_VERBS)})\b.*)$",
    re.I,
)
_VERIFY = re.compile(
    r"\b(?:all (?:the )?(?:\d+ )?(?:[\w-]+ ){0,2}tests? (?:are |now )*(?:pass|passing)|"
    r"\d+ (?:[\w-]+ )?tests? pass(?:ed|es|ing)?|"
    r"(?:now|all) (?:pass(?:es|ing)?|works?|working|green)|works now|pass(?:es)? now|"
    r"(?:is|are) (?:now )?(?:passing|green)|(?:has|have) been (?:resolved|fixed)|\b0 errors|"
    r"no (?:more )?(?:errors|failures)|type checker is happy|succeed(?:s|ed)?)\b",
    re.I,
)
_NEGATED = re.compile(
    r"\b(?:but|except|still|yet)\b.{0,60}\b(?:errors?|fail\w*|issues?|broken)\b", re.I
)
_CAUSE = re.compile(
    r"\b(?:root cause|the (?:issue|problem|bug|cause|error) (?:is|was)|caused by|turns out|"
    r"(?:fail(?:ing|s|ed)?|broke(?:n)?|break(?:s|ing)?) (?:\w+ ){0,3}because|because of|due to|"
    r"because|it looks like|determines that)\b",
    re.I,
)
_SYMPTOM = re.compile(
    r"\b(?:fail(?:ing|s|ed|ure)?|errors?|broken|broke|unhappy|crash(?:es|ed)?|doesn't work|"
    r"not working|exception|traceback|timeout|timed out|hangs?|issues?|problems?|warnings?)\b",
    re.I,
)
_FIX_BY = re.compile(r"\b(?:fix(?:ed|es)? by|the fix|by (?:adding|changing|using|setting))\b", re.I)
_FIXED_LABEL = re.compile(r"^(?:fixed|resolved|solved|addressed)\s+([^:]{3,60}?):\s", re.I)


_INSIGHT = re.compile(
    r"\b(?:understand|found|see|spotted|identified) the (?:issue|problem|bug|cause)\b", re.I
)


def _after_insight(ev: Evidence, s: Sent) -> bool:
    """The sentence right after "Now I understand the issue." says what the issue is."""
    prev = ev.previous(s)
    return prev is not None and prev.line == s.line and bool(_INSIGHT.search(prev.text))


def _cause_text(text: str) -> str:
    """A cause sentence without its list label and preamble: "Added tracking: The issue is that X" -> "X"."""
    t = strip_interjections(text)
    m = re.match(r"^([^:`]{3,50}):\s+(.+)$", t)
    if m and len(m.group(1).split()) <= 5 and len(m.group(2).split()) >= 4:
        t = m.group(2)
    t = re.sub(
        r"^(?:found it[.!]\s*)?(?:the )?(?:root cause|issue|problem|bug|cause) (?:is|was) (?:that )?",
        "",
        t,
        flags=re.I,
    )
    return sentence_case(t)


def _informative_error(s: Sent) -> int:
    t = s.text
    if _ERROR_NAMED.search(t):
        return 3
    if _PYTEST_NODE.search(t) or _LINT.search(t):
        return 2
    words = re.findall(r"[A-Za-z]{3,}", t)
    if len(words) >= 3 and "test session starts" not in t:
        return 1
    return 0


def _symptom_phrase(err: Sent) -> str:
    t = err.text.strip()
    m = _PYTEST_NODE.search(t)
    if m:
        return f"failing {m.group(2).split('::')[-1]}"
    m = _ERROR_NAMED.search(t)
    if m:
        name = m.group(1).rsplit(".", 1)[-1]
        msg = drop_parens(m.group(2) or "").strip()
        return f"{name}: {msg}" if msg else name
    m = _LINT.search(t)
    if m:
        return f"{m.group(2).lower()} in {m.group(1).rsplit('/', 1)[-1]}: {drop_parens(m.group(3))}"
    return re.sub(r"^(?:E\s+|error:\s*)", "", t, flags=re.I)


def _steps_from(s: Sent, ev: Evidence) -> list[str]:
    t = strip_interjections(s.text)
    m = re.match(r"^(?:the |my )?(?:fix|solution|workaround) (?:is|was) (?:to )?(.+)$", t, re.I)
    if m:
        parts = re.split(r",? and (?:then )?to\s+", m.group(1))
        return [finish(p) for p in parts if p.strip()]
    m = _INTENT.match(t)
    if m:
        return [finish(m.group(1))]
    return [finish(t)]


def _is_step(s: Sent, ev: Evidence) -> bool:
    if s.kind == "error" or s.speaker != "assistant" or s.text.endswith("?") or is_codeish(s.text):
        return False
    t = strip_interjections(s.text)
    if _VERIFY.search(t) or is_fluff(s.text) or len(t.split()) < 3:
        return False
    if _CAUSE.search(t) and not _FIX_BY.search(t):
        return False
    m = _INTENT.match(t.rstrip(":"))
    if m and re.search(
        r"\b(?:a plan|look|understand|investigate|check|see|find out|debug)\b", m.group(1), re.I
    ):
        return False
    if m:
        # A plan counts as a step when it is concrete (names code) or answers "how to fix this".
        prev = ev.previous(s)
        prev2 = ev.previous(prev) if prev is not None else None
        return "`" in t or any(
            p is not None and re.search(r"\b(?:to fix|the fix|the issue|fix th)", p.text, re.I)
            for p in (prev, prev2)
        )
    if (
        is_lead_in(t)
        or NARRATION.match(t)
        or re.match(r"^(?:i need to|i should|i'll|let me|we need to)\b", t, re.I)
    ):
        return False
    return bool(_FIX.search(t))


def draft_runbook(ev: Evidence) -> Draft:
    errors = [s for s in ev.sents if s.kind == "error" and _informative_error(s)]
    if not errors and not any(s.kind != "error" and substantive(s.text) for s in ev.sents):
        raise NoEvidence()
    errors.sort(key=lambda s: (-_informative_error(s), -s.weight, s.order))
    text_keyed = [s for s in ev.sents if s.kind != "error" and s.weight > 0]
    top = max(text_keyed, key=lambda s: (s.weight, -s.order[0])) if text_keyed else None
    err = errors[0] if errors else None
    anchor_err = (
        err
        if err
        and _informative_error(err) >= 2
        and (top is None or err.turn == top.turn or err.weight >= top.weight)
        else None
    )
    used: list[Sent] = []
    causes = [
        s
        for s in ev.sents
        if s.kind != "error"
        and s.speaker == "assistant"
        and usable(s)
        and not _VERIFY.search(s.text)
        and (_CAUSE.search(s.text) or _after_insight(ev, s))
    ]
    causes = dedupe(sorted(causes, key=lambda s: (-s.weight, s.order)), [])[:2]
    causes.sort(key=lambda s: s.order)
    labels: list[str] = []
    for s in ev.sents:
        m = _FIXED_LABEL.match(s.text) if s.speaker == "assistant" else None
        if m and m.group(1).lower() not in (x.lower() for x in labels):
            labels.append(m.group(1))

    # Symptom: the person's report, the failing run's own words, else what the assistant said was wrong.
    symptom: list[str] = []
    turns = ([err.turn] if err else []) + ([top.turn] if top else [])
    report = None
    for t in turns:
        for s in ev.turn_prompt(t):
            st = strip_interjections(s.text)
            # "A couple of tests are unhappy now: ___ <pasted output>"
            if is_codeish(st) and ":" in st:
                st = st.split(":", 1)[0]
            if (
                _SYMPTOM.search(st)
                and not is_fluff(st)
                and not is_codeish(st)
                and len(st.split()) >= 4
                and len(st) < 300
            ):
                report = (s, st)
                break
        if report:
            break
    if report:
        s, st = report
        names = list(
            dict.fromkeys(
                n for p in ev.turn_prompt(s.turn) for n in re.findall(r"\btest_\w+", p.text)
            )
        )
        line = finish(st)
        if names and not any(n in line for n in names):
            line = line.rstrip(".") + f" ({', '.join(inline_code(n) for n in names[:3])})."
        symptom.append(f"{line} ({attribution(s)})")
        used.append(s)
    if err and (
        anchor_err is not None
        or not causes
        or (top is not None and err.turn == top.turn)
        or err.turn in {c.turn for c in causes}
    ):
        symptom.append(f"The failing run reported: {inline_code(bounded_line(err.text, 240))}")
        used.append(err)
    cause_used_as_symptom = None
    if not symptom and causes:
        sym = max(causes, key=lambda s: (s.weight, -s.order[0]))
        cl = split_reason(_cause_text(sym.text))
        if cl.reason and len(cl.core.split()) >= 3:
            symptom.append(finish(cl.core))
        else:
            symptom.append(finish(_cause_text(sym.text)))
        cause_used_as_symptom = sym
        used.append(sym)
    if not symptom:
        cand = [
            s
            for s in ev.sents
            if s.kind != "error"
            and usable(s)
            and _SYMPTOM.search(s.text)
            and not _VERIFY.search(s.text)
        ]
        cand.sort(key=lambda s: (-s.weight, s.order))
        if cand:
            symptom.append(body_text(cand[0]))
            used.append(cand[0])
    if labels and not err and not report:
        symptom.append("Reported problems: " + "; ".join(labels[:4]) + ".")
    if not symptom:
        first = next((s for s in ev.sents if usable(s)), None)
        symptom.append(body_text(first) if first else NOT_STATED)

    # Steps: what was changed, in transcript order.
    steps: list[str] = []
    for s in dedupe([s for s in ev.sents if _is_step(s, ev)], used):
        for st in _steps_from(s, ev):
            if len(steps) < MAX_ITEMS and norm(st) not in (norm(x) for x in steps):
                steps.append(st)
        used.append(s)
    if not steps:
        rest = [
            s
            for s in ev.sents
            if s.weight > 0
            and s.kind != "error"
            and usable(s)
            and s not in used
            and not _VERIFY.search(s.text)
        ]
        for s in dedupe(causes[-1:] + rest, used)[:3]:
            steps.append(body_text(s))
            used.append(s)
    weak: list[str] = []
    if not steps:
        if not causes:  # neither a fix nor a cause: the session states no runbook
            raise NotStated()
        steps.append(NOT_STATED)
        weak.append("Steps: no fix stated in the session, only its cause")

    # Verification: the line that says it passes now.
    verify = [
        s
        for s in ev.sents
        if s.kind != "error"
        and s.speaker == "assistant"
        and not is_fluff(s.text)
        and _VERIFY.search(s.text)
        and not _NEGATED.search(s.text)
        and not NARRATION.match(strip_interjections(s.text))
    ]
    rerun = ""
    if err is not None and err in used:
        m = _PYTEST_NODE.search(err.text)
        command = inline_code(f"pytest {m.group(1)}::{m.group(2)}") if m else ""
        rerun = (
            f"Re-run {command} and check it passes."
            if m
            else f"Re-run the command that failed with {inline_code(bounded_line(err.text, 160))} "
            "and check it passes."
        )
    checks: list[tuple[Sent, str]] = []
    for v in verify:
        line = finish(strip_interjections(v.text))
        # "The workflow now passes completely:" and its items
        if is_lead_in(strip_interjections(v.text)):
            items = [
                finish(strip_interjections(s.text)).rstrip(".")
                for s in ev.sents
                if s.order[0] == v.order[0]
                and s.order[1] > v.order[1]
                and len(s.text) < 80
                and re.search(r"\bpass|\bok\b|green|0 errors", s.text, re.I)
            ][:4]
            if items:
                line = line.rstrip(".") + ": " + "; ".join(items) + "."
            elif len(line.split()) < 4 or line.rstrip(".").split()[-1].lower() in WEAK_END:
                continue
        checks.append((v, line))
    checks.sort(key=lambda c: (-bool(re.search(r"\d", c[1])), -c[0].weight, -c[0].order[0]))
    if checks:
        v, line = checks[0]
        verification = line + (
            " " + rerun if rerun and err is not None and _PYTEST_NODE.search(err.text) else ""
        )
        used.append(v)
        if not form_flaws_free(verification):
            weak.append(
                "Verification: the session says the tests pass, not how the fix was checked"
            )
    elif rerun:
        verification = rerun
    else:
        verification = NOT_STATED
        weak.append("Verification: how the fix was checked is not stated in the session")
    sections = {
        "Symptom": "\n\n".join(symptom),
        "Steps": bullets(steps, numbered=True),
        "Verification": verification,
    }
    cause_text = [body_text(s) for s in causes if s is not cause_used_as_symptom]
    if cause_used_as_symptom is not None:
        reason = split_reason(_cause_text(cause_used_as_symptom.text)).reason
        if reason:
            cause_text.insert(0, reason_sentence(reason))
    if cause_text:
        sections["Root cause"] = " ".join(dict.fromkeys(cause_text))
        used += causes

    # Title: the symptom, as specific as the evidence allows.
    if anchor_err is not None:
        title = "Fix " + _symptom_phrase(anchor_err)
    elif causes:
        best = max(causes, key=lambda s: (s.weight, -s.order[0]))
        title = drop_parens(_cause_text(best.text)).rstrip(".:;, ")
    elif labels:
        title = "Fix " + ", ".join(labels[:2])
    elif err is not None:
        title = "Fix " + _symptom_phrase(err)
    elif top is not None:
        title = title_from(top.text, "runbook")
    else:
        title = title_from(steps[0], "runbook")
    title = sentence_case(shorten(title, TITLE_SOFT).rstrip(".:;, "))
    return Draft(
        title,
        describe(title, "" if weak and steps[0] == NOT_STATED else steps[0]),
        sections,
        used,
        other_notes(ev, used),
        weak,
    )


def form_flaws_free(verification: str) -> bool:
    """A Verification a reviewer keeps: it names how the fix was checked, not only that tests pass."""
    return not any(
        f.code == "verification-bare"
        for f in section_flaws("runbook", "Verification", verification)
    )
