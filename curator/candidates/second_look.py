"""A second look at the session (issues 10 §4, 23): what the session holds, read by a model, handed to the drafts.

Keyword triage finds fewer than half of the categories a careful reader finds in a session (tech debt
and preferences least), and its excerpts are often junk. When a Claude backend drafts, a triage staged
at the end of a session (or of a context, by a backfill, or at a Stop once a long session has a segment's
worth of bytes unlooked: incremental.segment_due) carries a second-look request: the byte
range of the session not looked at yet, and the categories the keywords flagged there. `run`, called
once per `pipeline.process` under the triage's claim, makes it:

- the range is digested (curator/capture/digest.py: numbered entries, tool records such as question
  answers and approved plans included, redacted) in segments of at most the look's room; ONE call per
  segment goes through the engine's drafter (`second_look`), in order, as long as the calls fit in the
  two thirds of `drafting.max_input_tokens` the look may take (input_cap.LOOK_SHARE; the segments past it
  are left out and counted);
- the model lists the FACTS worth keeping (keyword triage's categories are hints, never taken as found),
  each with its category, statement, why, how to apply, the digest entries `[n]` it rests on and its
  confidence; the facts of the segments are joined (a fact stated twice is kept once);
- each fact gets a slot: a category's first fact the category's own ("decision": for a category the keywords
  triggered, its confirmation), each further one "decision-2" and on (curator/categories.py, at most
  FACTS_MAX a category); its entry carries the fact (`look`) and, as its excerpt, the cited entries verbatim
  and whole (within `evidence_chars`), so each fact's draft sees the evidence the look saw, and no other;
- the outcome, those entries and the calls' usage are `second_look.json` beside the triage, which
  `staging.load_triage` merges: the added slots are candidates marked `found_by: second_look`, a confirmed
  category keeps its keyword trigger with the look's fact and evidence in place of the keyword excerpt;
- a keyword category the look did not confirm, when it read the triage's whole byte range, is not drafted
  (`unconfirmed`: the pipeline moves it to `skipped` with its reason); one it could not read all of is.

With the offline drafter, or `second_look.enabled: false`, nothing is sent: the look is recorded `off`.
A failed look is recorded with its error, never stops the triage's other categories, and is tried
again once, by the next run (another process), never in a loop.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from memcurate.curator.backends import CLAUDE_BACKENDS
from memcurate.curator.candidates import staging, usage
from memcurate.curator.candidates.candidate import StagedTriage
from memcurate.curator.candidates.staging import now_iso
from memcurate.curator.categories import FACTS_MAX, ONE_PER_SESSION, slot
from memcurate.curator.drafting import USAGE
from memcurate.curator.util.textsafe import one_line

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

MIN_ROOM = 1000  # characters of digest below which a look is not worth a call
# a fact's evidence: at most this many keyword excerpts' worth of cited entries
EVIDENCE_EXCERPTS = 2


def run(engine: Context, triage: StagedTriage) -> dict | None:
    """Make the triage's second look if it is due, and return its record (None when none was due);
    afterwards `triage.doc` holds any categories added. Call it under the triage's claim. A failure is
    recorded, never raised (but a failed write is)."""
    if not staging.look_due(triage.doc):
        return None
    request = triage.doc["second_look"]
    if request["record"].get("state") == "failed" and request["record"].get("pid") == os.getpid():
        return None  # it failed in this run: the next one tries again
    look = _look(engine, triage, request)
    look.update(
        {
            "format": 1,
            "byte_range": request.get("byte_range"),
            "updated": now_iso(),
            "pid": os.getpid(),
        }
    )
    staging.write_second_look(engine.data, triage.tid, look)
    triage.doc = staging.load_triage(engine.data, triage.tid)
    return look


def _look(engine: Context, triage: StagedTriage, request: dict) -> dict:
    """The record of one attempt: state (done | failed | off), what was found, added and confirmed, usage so far."""
    cfg = engine.cfg
    if not cfg["second_look"]["enabled"]:
        return {
            "state": "off",
            "reason": "second_look.enabled is false: nothing sent",
            "added": {},
            "calls": 0,
        }
    drafter = engine.drafter
    if drafter.name not in CLAUDE_BACKENDS or not hasattr(drafter, "second_look"):
        return {
            "state": "off",
            "reason": f"backend {drafter.name}: only a Claude backend takes a second look",
            "added": {},
            "calls": 0,
        }
    before = request["record"]  # an earlier attempt's, read with the triage
    record = usage.add(usage.empty(), before)  # a retry adds its call to the first one's
    record["attempts"] = int(before.get("attempts", 0)) + 1
    doc = triage.doc
    already = sorted(
        set(request.get("already") or ())
        | {n for n, c in doc["categories"].items() if isinstance(c, dict) and c.get("triggered")}
    )
    source = doc.get("source") or {}
    from memcurate.curator.drafting import input_cap

    spent = int(before.get("sent_chars") or 0)
    overhead = input_cap.look_overhead(tuple(already))
    room = input_cap.look_room(cfg, overhead, spent)
    if room < MIN_ROOM:
        return {
            **record,
            "state": "off",
            "added": {},
            "reason": "drafting.max_input_tokens leaves the second "
            f"look no room ({room:,} characters): nothing sent",
        }
    try:
        from memcurate.curator.capture.digest import digest

        start, end = request["byte_range"]
        d = digest(
            source.get("transcript", ""),
            cfg,
            (start, end),
            max_chars=room,
            turn_base=int(request.get("turn_base") or 0),
            subagent=bool(source.get("subagent")),
        )
    except (OSError, KeyError, TypeError, ValueError) as e:
        why = (
            e.strerror if isinstance(e, OSError) and e.strerror else f"{e.__class__.__name__}: {e}"
        )
        return {
            **record,
            "state": "failed",
            "error": one_line(f"transcript unreadable: {why}"),
            "added": {},
        }
    # One call per segment, in order, while the look's share of the cap (two thirds of it) holds the call.
    budget = input_cap.look_budget(cfg, spent)
    sent = [s for s in d.segments if s.entries]
    segments, used = [], 0
    for s in sent:
        if budget is not None and used + overhead + len(s.text) > budget:
            break
        segments.append(s)
        used += overhead + len(s.text)
    left = sent[len(segments) :]
    record.update(
        chars=sum(len(s.text) for s in segments),
        left_out=sum(len(s.text) for s in left),
        segments=len(segments),
        segments_left_out=len(left),
        already=already,
    )
    if not segments:
        return {
            **record,
            "state": "done",
            "findings": [],
            "added": {},
            "note": "nothing written in this stretch",
        }

    from memcurate.curator.drafting import LookRequest, LookResult

    alias = cfg["second_look"]["model"]
    facts: list[dict] = []
    dropped: list[str] = []
    models = []
    for s in segments:
        ask = LookRequest(
            triage_id=triage.tid,
            activity=s.text,
            turns=frozenset(e.turn for e in s.entries),
            entries=frozenset(e.n for e in s.entries),
            already=tuple(already),
            model_alias=alias,
            model_id=str(cfg["models"].get(alias, alias)),
        )
        try:
            result = drafter.second_look(ask)
        except Exception as e:  # a drafter must not raise; if one does, the look failed
            result = LookResult(model=ask.model_id, error=one_line(f"{e.__class__.__name__}: {e}"))
        usage.add(record, {**{k: getattr(result, k, 0) for k in USAGE}, "calls": 1})
        # What was sent, estimated as the input cap counts it: the drafts share what the look left of the cap.
        record["sent_chars"] = int(record.get("sent_chars") or spent) + overhead + len(s.text)
        record["elapsed"] = round(float(record.get("elapsed") or 0) + result.elapsed, 3)
        models.append(result.model)
        # the whole look is tried again by the next run: findings of one segment are not kept
        if result.error:
            return {
                **record,
                "model": result.model,
                "state": "failed",
                "error": result.error,
                "added": {},
            }
        dropped += result.dropped
        for f in result.findings:
            if not any(
                x["category"] == f["category"] and x["statement"] == f["statement"] for x in facts
            ):
                facts.append(f)
    by_n = {e.n: e for e in d.entries}
    slots, over = _slots(facts)
    dropped += over
    entries = {name: _entry(f, by_n, cfg) for name, f in slots.items()}
    # A fact of a category this triage's keywords triggered confirms it; any other is added (a category only an
    # earlier pass flagged, a hint, is not this triage's: its fact is drafted here, as an added slot).
    mine = {
        n for n, c in triage.doc["categories"].items() if isinstance(c, dict) and c.get("triggered")
    }
    added = {c: e for c, e in entries.items() if c not in mine}
    confirmed = {c: e for c, e in entries.items() if c in mine}
    return {
        **record,
        "model": models[-1],
        "state": "done",
        "findings": facts,
        "dropped": dropped,
        "added": added,
        "confirmed": confirmed,
    }


WAIT_HOURS = 12.0  # how long a Stop's keyword categories wait for a look over their bytes before being drafted


def keyword_fate(
    engine: Context, triage: StagedTriage, now: float | None = None
) -> tuple[str, str]:
    """What becomes of the keyword categories of a triage that asked for no look of its own (a Stop's pass),
    when a Claude backend drafts and the look is on: the look at the session's end, or at its next segment,
    reads these bytes, and a keyword excerpt is no evidence to draft from (issue 23). ("wait", why) while a
    later triage's look over them is due, or none is staged yet and the triage is younger than WAIT_HOURS;
    ("skip", reason) once such a look read them whole (its facts are drafted in its own triage); ("draft", "")
    otherwise: offline, look off, a subagent's, the triage's own look decides (`unconfirmed`), the look over
    them failed for good or read only part of them, or a later pass at a look's event asked for none."""
    import calendar
    import time

    doc = triage.doc
    source = doc.get("source") or {}
    look = engine.settings.second_look
    if (
        isinstance(doc.get("second_look"), dict)
        or not look.enabled
        or source.get("subagent")
        or engine.drafter.name not in CLAUDE_BACKENDS
        or not hasattr(engine.drafter, "second_look")
    ):
        return "draft", ""
    try:
        start, end = int(source["byte_range"][0]), int(source["byte_range"][1])
    except (KeyError, TypeError, ValueError, IndexError):
        return "draft", ""
    for tid in staging.triage_ids(engine.data):
        if tid <= triage.tid:
            continue  # a look over these bytes is asked by a later pass
        try:
            other = staging.load_triage(engine.data, tid)
        except staging.StagingError:
            continue
        if (other.get("source") or {}).get("transcript") != source.get("transcript"):
            continue
        request = other.get("second_look")
        if not isinstance(request, dict):
            if other.get("event") in look.events:
                # a session's end passed with no look over these bytes (offline then): none comes
                return (
                    "draft",
                    "",
                )
            continue
        try:
            lo, hi = request["byte_range"]
            if not (int(lo) <= start and end <= int(hi)):
                continue
        except (KeyError, TypeError, ValueError):
            continue
        if staging.look_due(other):
            return (
                "wait",
                f"the second look over bytes {lo}..{hi} (triage {tid}) reads these bytes first",
            )
        if read_it_all(request.get("record")):
            return "skip", (
                f"the second look over bytes {lo}..{hi} read this stretch: the facts it found are "
                f"drafted in triage {tid} (a keyword excerpt is not drafted from)"
            )
        return "draft", ""
    try:
        age = (time.time() if now is None else now) - calendar.timegm(
            time.strptime(doc["created"], "%Y-%m-%dT%H:%M:%SZ")
        )
    except (KeyError, TypeError, ValueError):
        return "draft", ""
    if age < WAIT_HOURS * 3600:
        return (
            "wait",
            "the second look at the session's end (or at its next segment) reads these bytes first",
        )
    return "draft", ""


def _slots(facts: list[dict]) -> tuple[dict[str, dict], list[str]]:
    """Each fact its slot, in the order found: a category's first fact is the category's ("decision": it confirms
    the keywords' when they flagged it), each further one "decision-2" and on, up to FACTS_MAX; and one line per
    fact past that."""
    slots: dict[str, dict] = {}
    count: dict[str, int] = {}
    over = []
    for f in facts:
        n = count[f["category"]] = count.get(f["category"], 0) + 1
        if n > FACTS_MAX:
            over.append(
                f"{f['category']}: past the {FACTS_MAX} facts of a category a look keeps: "
                f"{one_line(f['statement'], 80)}"
            )
            continue
        slots[slot(f["category"], n)] = f
    return slots, over


def read_it_all(record) -> bool:
    """Whether a look's record says the model read its whole byte range: done, at least one segment sent, none
    left out for lack of room. The record is the data dir's (Claude can write it): one that does not check out
    is a look that did not read it all, so nothing is skipped on its word."""
    if not isinstance(record, dict) or record.get("state") != "done":
        return False
    try:
        return (
            int(record.get("segments") or 0) >= 1
            and not int(record.get("segments_left_out") or 0)
            and not record.get("left_out")
        )
    except (TypeError, ValueError):
        return False


def unconfirmed(doc: dict) -> dict[str, str]:
    """Keyword categories of a triage not to draft, each with the reason its `skipped` line carries: those a
    look that read the triage's whole byte range (done, at least one segment sent, none left out for lack of
    room) did not confirm, nor name in an answer it dropped. Their keyword excerpt is junk to the model that
    read everything ('I'll use that alias'). Empty when the look failed, is off, left a segment out, or was
    never asked: the keyword categories are drafted from their excerpts then. session_summary is never skipped."""
    request = doc.get("second_look")
    if not isinstance(request, dict):
        return {}
    record = request.get("record")
    if not isinstance(record, dict) or record.get("state") != "done":
        return {}
    # checked below, as it is read
    looked: Any = record.get("byte_range") or request.get("byte_range")
    ours: Any = (doc.get("source") or {}).get("byte_range")
    try:  # the record is the data dir's, which Claude can write: one that does not check out skips nothing
        if not read_it_all(record):
            return {}  # nothing sent (the model read nothing), or a stretch unread: the keywords may be right there
        if not (
            int(looked[0]) <= int(ours[0]) and (looked[1] is None or int(looked[1]) >= int(ours[1]))
        ):
            return {}
    except (TypeError, ValueError, IndexError, KeyError):
        return {}
    confirmed = c if isinstance(c := record.get("confirmed"), dict) else {}
    named = {
        str(line).split(":", 1)[0] for line in record.get("dropped") or ()
    }  # an answer about it, not valid
    reason = (
        "the second look read the whole session and found nothing durable for this category "
        "(the keywords' excerpt was not confirmed)"
    )
    return {
        name: reason
        for name, cat in doc["categories"].items()
        if isinstance(cat, dict)
        and cat.get("triggered")
        and not cat.get("found_by")
        and not cat.get("confirmed_by")
        and name not in confirmed
        and name not in named
        and name not in ONE_PER_SESSION
    }


def _entry(finding: dict, by_n: dict, cfg: dict) -> dict:
    """A fact's triage entry: the look's fact (statement, why, how to apply, its confidence), and as its excerpt
    the digest entries it cited, verbatim and whole, in session order, within `evidence_chars` (cited first, kept
    first; a cited entry that does not fit is left out and counted, but the first is always kept, its middle cut)."""
    from memcurate.curator.capture.digest import bound

    limit = evidence_chars(cfg)
    kept: list[tuple[int, str]] = []
    used = left = 0
    for n in finding["entries"]:
        e = by_n.get(n)
        if e is None:
            continue
        text = e.render(context=True)
        if used + len(text) + 1 > limit:
            if kept:
                left += 1
                continue
            text = bound(text, limit)  # as the digest cuts its entries
        kept.append((e.n, text))
        used += len(text) + 1
    cited = [
        n for n, _ in kept
    ]  # in the order cited: the most telling first (an input cap drops from the end)
    blocks = [text for _, text in sorted(kept)]
    if left:
        blocks.append(
            f"[… {left} more cited entr{'y' if left == 1 else 'ies'} left out: the evidence bound …]"
        )
    turns = sorted({by_n[n].turn for n in cited})
    look = {
        "statement": finding["statement"],
        "why": finding.get("why") or "",
        "how_to_apply": finding.get("how_to_apply") or "",
        "entries": cited,
        "confidence": finding.get("confidence"),
    }
    return {
        "score": None,  # no keyword score: verification's weak-evidence advisory does not apply
        "category": finding["category"],
        "signals": {"second_look": True},
        "why": finding["statement"],
        "turns": turns,
        "entries": cited,
        "look": look,
        # One line per cited entry, for what confidence counts (who said it, what kind of entry: a typed
        # prompt, an answer, a plan...); the draft's prompt shows the entries themselves, not these lines again.
        "snippets": [
            {
                "turn": by_n[n].turn,
                "speaker": by_n[n].who,
                "kind": by_n[n].kind,
                "weight": 1.0,
                "keywords": [],
                "text": one_line(by_n[n].text, int(cfg["triage"]["snippet_chars"])),
            }
            for n in cited
        ],
        "excerpt": "\n".join(blocks),
    }


def evidence_chars(cfg: dict) -> int:
    """Characters of cited digest entries one category's draft carries at most: twice a keyword excerpt's."""
    return EVIDENCE_EXCERPTS * int(cfg["triage"]["excerpt_chars"])
