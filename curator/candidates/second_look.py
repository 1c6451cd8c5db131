"""A second look at the session (issue 10 §4): categories the keywords missed, found by one model call.

Keyword triage finds fewer than half of the categories a careful reader finds in a session (tech debt
and preferences least). When a Claude backend drafts, a triage staged at the end of a session (or of
a context, or by a backfill) carries a second-look request: the byte range of the session not looked
at yet, and the categories the keywords already found there. `run`, called once per `pipeline.process`
under the triage's claim, makes it:

- the range is condensed (curator/capture/condense.py: what people and the assistant wrote, redacted,
  turns numbered, bounded) and sent in ONE call through the engine's drafter (`second_look`);
- each valid finding of a category not already found becomes that category's entry (snippets and an
  excerpt from the turns it names, quoted as triage quotes them), so the normal pipeline drafts it;
- the outcome, the entries added and the call's usage are `second_look.json` beside the triage, which
  `staging.load_triage` merges: the added categories are candidates marked `found_by: second_look`.

With the offline drafter, or `second_look.enabled: false`, nothing is sent: the look is recorded `off`.
A failed look is recorded with its error, never stops the triage's other categories, and is tried
again once, by the next run (another process), never in a loop.
"""

from __future__ import annotations

import os

from curator.candidates import staging, usage
from curator.candidates.candidate import StagedTriage
from curator.candidates.staging import now_iso
from curator.drafting import USAGE
from curator.util.textsafe import one_line

CLAUDE_BACKENDS = ("anthropic", "claude-cli")
MIN_ROOM = 1000  # characters of activity below which a look is not worth a call


def run(engine, triage: StagedTriage) -> dict | None:
    """Make the triage's second look if it is due, and return its record (None when none was due);
    afterwards `triage.doc` holds any categories added. Call it under the triage's claim. A failure is
    recorded, never raised (but a failed write is)."""
    if not staging.look_due(triage.doc):
        return None
    request = triage.doc["second_look"]
    if request["record"].get("state") == "failed" and request["record"].get("pid") == os.getpid():
        return None  # it failed in this run: the next one tries again
    look = _look(engine, triage, request)
    look.update({"format": 1, "byte_range": request.get("byte_range"), "updated": now_iso(), "pid": os.getpid()})
    staging.write_second_look(engine.data, triage.tid, look)
    triage.doc = staging.load_triage(engine.data, triage.tid)
    return look


def _look(engine, triage: StagedTriage, request: dict) -> dict:
    """The record of one attempt: state (done | failed | off), what was found and added, usage so far."""
    cfg = engine.cfg
    if not cfg["second_look"]["enabled"]:
        return {"state": "off", "reason": "second_look.enabled is false: nothing sent", "added": {}, "calls": 0}
    drafter = engine.drafter
    if drafter.name not in CLAUDE_BACKENDS or not hasattr(drafter, "second_look"):
        return {"state": "off", "reason": f"backend {drafter.name}: only a Claude backend takes a second look",
                "added": {}, "calls": 0}
    before = request["record"]  # an earlier attempt's, read with the triage
    record = usage.add(usage.empty(), before)  # a retry adds its call to the first one's
    record["attempts"] = int(before.get("attempts", 0)) + 1
    doc = triage.doc
    already = sorted(set(request.get("already") or ()) | {
        n for n, c in doc["categories"].items() if isinstance(c, dict) and c.get("triggered")})
    source = doc.get("source") or {}
    from curator.drafting import input_cap

    overhead = input_cap.look_overhead(tuple(already))
    room = input_cap.look_room(cfg, overhead, int(before.get("sent_chars") or 0))
    if room < MIN_ROOM:
        return {**record, "state": "off", "added": {}, "reason": "drafting.max_input_tokens leaves the second "
                f"look no room ({room:,} characters): nothing sent"}
    try:
        from curator.capture.condense import condense

        activity = condense(source.get("transcript", ""), request["byte_range"], cfg, max_chars=room,
                            turn_base=int(request.get("turn_base") or 0), subagent=bool(source.get("subagent")))
    except (OSError, KeyError, TypeError, ValueError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else f"{e.__class__.__name__}: {e}"
        return {**record, "state": "failed", "error": one_line(f"transcript unreadable: {why}"), "added": {}}
    record.update(chars=len(activity.text), left_out=activity.left_out, already=already)
    if not activity.messages:
        return {**record, "state": "done", "findings": [], "added": {}, "note": "nothing written in this stretch"}

    from curator.drafting import LookRequest, LookResult

    alias = cfg["second_look"]["model"]
    ask = LookRequest(triage_id=triage.tid, activity=activity.text, turns=frozenset(activity.turns),
                      already=tuple(already), model_alias=alias, model_id=str(cfg["models"].get(alias, alias)))
    try:
        result = drafter.second_look(ask)
    except Exception as e:  # a drafter must not raise; if one does, the look failed
        result = LookResult(model=ask.model_id, error=one_line(f"{e.__class__.__name__}: {e}"))
    usage.add(record, {**{k: getattr(result, k, 0) for k in USAGE}, "calls": 1})
    # What was sent, estimated as the input cap counts it: the drafts share what the look left of the cap.
    record["sent_chars"] = int(before.get("sent_chars") or 0) + overhead + len(activity.text)
    record.update(model=result.model, elapsed=round(result.elapsed, 3))
    if result.error:
        return {**record, "state": "failed", "error": result.error, "added": {}}
    added = {f["category"]: _entry(f, activity, cfg) for f in result.findings if f["category"] not in already}
    return {**record, "state": "done", "findings": result.findings, "dropped": result.dropped, "added": added}


def _entry(finding: dict, activity, cfg: dict) -> dict:
    """A found category's triage entry: snippets and an excerpt from the turns it names, quoted as
    triage quotes its own (one block per message, in transcript order, bounded)."""
    from curator.capture.triage import Snippet, excerpt

    t = cfg["triage"]
    chars = int(t["snippet_chars"])
    turns = finding["turns"][: int(cfg["second_look"]["turns_per_category"])]
    snippets = [Snippet(finding["category"], 1.0, m.turn, m.speaker, one_line(m.text, chars), [],
                        [one_line(line, chars) for line in m.text.splitlines() if line.strip()], (m.turn, ""), m.seq)
                for m in activity.of_turns(turns)]
    return {"score": None,  # no keyword score: verification's weak-evidence advisory does not apply
            "signals": {"second_look": True},
            "why": finding["why"], "turns": turns,
            "snippets": [s.as_dict() for s in snippets[: int(t["snippets_per_category"])]],
            "excerpt": excerpt(snippets, int(t["excerpt_chars"]))}
