"""Offline evidence cards (issue 23 §5): a rule-based drafter cannot state facts, so what it drafts is a card.

A card is a draft of the offline drafter (its review record says `drafter: {model: "offline"}`, as the
pipeline records it) whose text is still the drafter's own: `concerns_apply`, which the pipeline turns off
once a person's edit replaced the text. It is a valid memory file, pre-filled for a person to rewrite, and
it comes with its evidence: the category the keywords suggest, the session lines it was made from, and for a
runbook each failing command with what fixed it (the digest pairs them, curator/capture/digest.py).

This module is the one home of the concept: whether a record is a card (`is_card`), the ADVISORY that marks
it (`CARD`: a record read through `marked` carries it, and `card: true`), what --auto-approve says when it
holds one (`HELD`; curator/headless.py, unless `auto_approve.offline_cards`), and the evidence (`evidence`).
Once a person edited the text it is a normal draft: no mark, no hold.
"""

from __future__ import annotations

from collections.abc import Mapping

from memcurate.curator.util.redact import redact_text
from memcurate.curator.util.textsafe import clean, one_line

OFFLINE = "offline"  # the drafter model the pipeline records for the offline drafter's drafts
CARD = "offline-card"  # the ADVISORY issue's code
CARD_MESSAGE = (
    "an offline evidence card, not a memory yet: the text is quoted from the session by rules; "
    "write the fact in your own words (e edits it, with the evidence beside it); "
    "--auto-approve holds it unless auto_approve.offline_cards is true"
)
HELD = "offline card, write it in the TUI or set auto_approve.offline_cards: true"

MAX_LINES = 12  # evidence lines a card shows
MAX_PAIRS = 5  # error → fix pairs a runbook card shows
MAX_CONTEXT_BYTES = 8 << 20  # how far back of its bytes a card reads for a failure fixed in them
LINE_CHARS = 600
EXCERPT_CHARS = 4000


def is_offline(record: Mapping | None) -> bool:
    """Whether the draft under review was made by the offline drafter (edited since or not)."""
    said = (record or {}).get("drafter")
    return isinstance(said, Mapping) and said.get("model") == OFFLINE


def is_card(record: Mapping | None) -> bool:
    """Whether the text under review is an offline card as the drafter made it (no person rewrote it)."""
    return is_offline(record) and (record or {}).get("concerns_apply") is True


def card_issue():
    """The ADVISORY that marks a card (verify is imported here: the TUI's start path never needs it)."""
    from memcurate.curator.verify.checks import ADVISORY, Issue

    return Issue(ADVISORY, CARD, "drafting", CARD_MESSAGE)


def marked(record: dict) -> dict:
    """The review record as the front ends read it: `card` says whether it is an unedited card, and a card's
    issues carry the CARD advisory (once)."""
    card = is_card(record)
    out = {**record, "card": card}
    issues = [
        i
        for i in record.get("issues") or []
        if not (isinstance(i, Mapping) and i.get("code") == CARD)
    ]
    out["issues"] = issues + ([card_issue().as_dict()] if card else [])
    return out


def _text(value: object, limit: int) -> str:
    """Evidence as shown: redacted (again: it comes from staging, which Claude's side can write), cleaned, bounded."""
    return one_line(redact_text(clean(value if isinstance(value, str) else "")), limit)


def evidence(entry: Mapping, category: str, source: Mapping, cfg: dict | None = None) -> dict:
    """What a card was made from, for a person writing it: {category, statement, lines, pairs, excerpt, note}.

    `category` the candidate's (the entry's own `category` wins: a slot such as decision-2 names its base);
    `lines` the scored snippets (turn, speaker, keywords, text); `statement` what a second look said, when one
    did; `pairs` for a runbook, each failing command and what fixed it, from the digest of the triage's bytes
    (`note` says why there are none when the transcript cannot be read). Everything is redacted."""
    entry = entry if isinstance(entry, Mapping) else {}
    cat = entry.get("category") if isinstance(entry.get("category"), str) else category
    lines = []
    for s in entry.get("snippets") or []:
        if not isinstance(s, Mapping) or not isinstance(s.get("text"), str):
            continue
        turn = (
            s.get("turn")
            if isinstance(s.get("turn"), int) and not isinstance(s.get("turn"), bool)
            else None
        )
        keywords = [_text(k, 60) for k in s.get("keywords") or [] if isinstance(k, str)][:6]
        lines.append(
            {
                "turn": turn,
                "speaker": _text(s.get("speaker"), 20),
                "keywords": keywords,
                "text": _text(s["text"], LINE_CHARS),
            }
        )
        if len(lines) >= MAX_LINES:
            break
    look = raw_look if isinstance(raw_look := entry.get("look"), Mapping) else {}
    excerpt = raw if isinstance(raw := entry.get("excerpt"), str) else ""
    out = {
        "category": _text(cat, 40),
        "statement": _text(look.get("statement"), LINE_CHARS),
        "lines": lines,
        "pairs": [],
        "excerpt": redact_text(clean(excerpt))[:EXCERPT_CHARS],
        "note": "",
    }
    if cat == "runbook":
        out["pairs"], out["note"] = _pairs(source, cfg)
    return out


def _pairs(source: Mapping, cfg: dict | None) -> tuple[list[dict], str]:
    """Each failing command of the triage's bytes with what fixed it, as the digest pairs them; (pairs, why
    there are none when the transcript cannot be read)."""
    from memcurate.curator.capture.digest import digest

    path, span = source.get("transcript"), source.get("byte_range")
    if not isinstance(path, str) or not (
        isinstance(span, list) and len(span) == 2 and all(isinstance(x, int) for x in span)
    ):
        return [], "the triage names no transcript range: the error → fix pair is not known"
    start = source.get("context_from")
    if not (isinstance(start, int) and 0 <= span[0] - start <= MAX_CONTEXT_BYTES):
        start = span[0]  # a failure fixed here, read by an earlier pass: its pair starts there
    try:
        d = digest(path, cfg or {}, (start, span[1]), subagent=source.get("subagent") is True)
    except (OSError, KeyError, ValueError) as e:
        return (
            [],
            f"the transcript cannot be read ({one_line(str(e), 160)}): the error → fix pair is not known",
        )
    failed = {e.n: e for e in d.entries if e.kind == "failed"}
    pairs = [
        {"error": _text(failed[e.ref].text, LINE_CHARS), "fix": _text(e.text, LINE_CHARS)}
        for e in d.entries
        if e.kind == "fixed" and e.ref in failed
    ]
    return pairs[:MAX_PAIRS], (
        "" if pairs else "the session shows no failing command that later passed"
    )
