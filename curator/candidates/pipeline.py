"""The pipeline: a staged triage's candidates → drafts (in parallel) → verified decisions for review.

One process works on a triage at a time: it holds the triage's claim, a lock
that dies with its holder, so work left by a killed process is simply taken
up by the next. Every step is written to staging as it happens (state,
timings, errors, the draft, its review record), so any process can show
progress and nothing lives only in memory.

Each category is drafted by a worker through the fallback chain (its model with retries, then
`drafting.fallback`, within the triage's deadline: curator/drafting/resilience.py) and, with
`verify.llm`, the model verifier; the worker only calls out, and the state moves are made as each
result comes back (`_finish`).

`settle` is the one way a candidate becomes (or stays) ready: verify the file
to be written, record the decision and its issues, move to `ready`. Drafting
ends with it, and so do an edit, a decision taken again and a conflict found
while saving (curator/review/actions.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memcurate.curator.candidates import cards, same_fact, second_look, staging, usage
from memcurate.curator.candidates.candidate import Candidate, StagedTriage, text_hash
from memcurate.curator.candidates.staging import now_iso
from memcurate.curator.categories import ONE_PER_SESSION
from memcurate.curator.memory import memfile
from memcurate.curator.util.atomic import read_json
from memcurate.curator.util.redact import find_secrets, marker, redact, redact_text
from memcurate.curator.util.safe_open import read_path
from memcurate.curator.verify import confidence
from memcurate.curator.verify.checks import VERIFIER, Issue, blocking, verify
from memcurate.curator.verify.decide import Decision, Existing, decide, sessions

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

if TYPE_CHECKING:  # the chain is imported where drafting starts: the hook path never builds one
    from memcurate.curator.drafting.resilience import ChainResult


@dataclass
class Event:
    """Progress, for whoever shows it (the TUI); the same facts are in staging."""

    triage: str
    category: str
    state: str
    detail: dict = field(default_factory=dict)


def existing_for(
    engine: Context, doc: memfile.MemoryDoc, near: Near | None = None
) -> list[Existing]:
    """Existing memories of the draft's category that are worth comparing with it, read now; `near`:
    what `near_ids` found for it, when the caller has looked already."""
    from memcurate.curator.memory.store import content_hash

    near = near_ids(engine, doc) if near is None else near
    out: list[Existing] = []
    for cid in near.ids:
        path = engine.store.locate(doc.category, cid)
        try:
            data = read_path(path)  # read once: the text, its hash and its parse are of one version
            text = data.decode("utf-8")
            found = memfile.parse(text)
        except (OSError, UnicodeDecodeError, memfile.MemoryFormatError):
            continue  # a broken or vanished file is reported by the index, not compared with
        out.append(Existing(cid, path, content_hash(data), found, text))
    return out + claude_existing(near.claude)


@dataclass
class Near:
    """The memories a draft is compared with, found but not read: the ids of its category's, and
    Claude's topic files (index candidates)."""

    ids: list[str]
    claude: list

    def refs(self) -> list[str]:
        """Every id as a decision's `compared` lists it."""
        from memcurate.curator.library.entries import file_ref

        return self.ids + [file_ref(c.id) for c in self.claude]

    def without(self, refs) -> Near:
        """Those not among `refs` (as a decision's `compared` lists them): the ones new to it."""
        from memcurate.curator.library.entries import file_ref

        seen = set(refs)
        return Near(
            [i for i in self.ids if i not in seen],
            [c for c in self.claude if file_ref(c.id) not in seen],
        )


CLAUDE_NEAR = 3  # Claude's topic files compared with a draft, the most alike


def near_ids(engine: Context, doc: memfile.MemoryDoc, since: str = "") -> Near:
    """What `existing_for` reads: the index's candidates for the draft, the memory its own id names and,
    for a category of one per session, the one citing the same session. No memory is read: a save
    checks with these alone whether anything new is there to compare with. `since`: a decision's
    index mark: the index's candidates among what was indexed after it (what the decision has not seen),
    where the index can tell."""
    from memcurate.curator.library.entries import CLAUDE
    from memcurate.curator.memory.store import UnsafePathError

    def lookup(category: str, text, limit: int) -> list:
        found = engine.index.candidates_since(category, text, since, limit) if since else None
        return engine.index.candidates(category, text, limit=limit) if found is None else found

    ids = [c.id for c in lookup(doc.category, f"{doc.title}\n{doc.description}\n{doc.body}", 5)]
    try:
        store = engine.store
        if (
            doc.id not in ids
            and store.may_exist(doc.category, doc.id)
            and os.path.exists(store.locate(doc.category, doc.id))
        ):
            ids.append(doc.id)  # the memory the draft's own id names is always compared with
        # and the summary of the same session, whatever its words
        if doc.category in ONE_PER_SESSION:
            ids += [
                i
                for s in sessions(doc)
                for i in engine.store.citing(doc.category, s)
                if i not in ids
            ]
    except UnsafePathError:
        pass  # verification blocks such an id
    return Near(ids, lookup(CLAUDE, doc, CLAUDE_NEAR))


def decided(
    engine: Context, doc: memfile.MemoryDoc, choice: Callable | None = None
) -> tuple[Decision, list[Existing]]:
    """`doc` decided (by `choice(doc, existing)`, else `decide`) against the memories near it now, and
    those memories. The decision keeps the index's mark from before the lookup, so that its save looks
    only among what was indexed since (`near_ids`)."""
    mark = engine.index.mark()
    existing = existing_for(engine, doc)
    if choice is None:
        decision = decide(doc, existing, now=engine.now(), cfg=engine.cfg)
    else:
        decision = choice(doc, existing)
    decision.index_mark = mark
    return decision, existing


def claude_existing(found: list) -> list[Existing]:
    """Claude's own topic files most like the draft (index candidates, whatever its category), read now:
    compared with, never changed (decide.py)."""
    from memcurate.curator.library.entries import CLAUDE, file_ref
    from memcurate.curator.memory import claude_topics
    from memcurate.curator.memory.store import content_hash

    out = []
    for c in found:
        try:
            data = claude_topics.read_bytes(c.path)
            text = claude_topics.decode(c.path, data)
            found_doc = claude_topics.document(c.id, text, os.stat(c.path).st_mtime_ns)
        except (OSError, claude_topics.TopicError):
            continue  # gone or unreadable since it was indexed
        out.append(
            Existing(file_ref(c.id), c.path, content_hash(data), found_doc, text, owner=CLAUDE)
        )
    return out


def settle(
    engine: Context,
    cand: Candidate,
    decision: Decision,
    draft_text: str,
    *,
    file_text: str | None = None,
    near: list[Existing] | None = None,
    drafting_issues: list[Issue] | None = None,
    drafter: dict | None = None,
    **extra,
) -> dict:
    """Verify the file to be written, record the decision, its issues and its confidence, and move the
    candidate to `ready` (with `extra` on its state line). `near` holds the memories the decision was just
    made against; without it they are found again, so an edit verified later, or in another process, is
    compared with the memories as they are now. `drafting_issues` are the advisories drafting found
    (a fallback, the model verifier's concerns) and `drafter` what the drafter said of its draft
    ({confidence, weak}); without them the last review's are carried over (see `_carried`). Returns the
    review record. A secret in the text (a person's edit) is never staged: see `_withheld`."""
    given = file_text if file_text is not None else (decision.text or draft_text)
    text, withheld = _withheld(cand, given, file_text)
    try:
        doc = memfile.parse(text)
    except memfile.MemoryFormatError:
        doc = None
    target = None
    if decision.target and (decision.action in ("update", "delete") or decision.source_only):
        target = engine.target_state(cand.category, decision.target, decision.base_hash)
    elif decision.action == "create" and doc is not None:
        target = _occupant(engine, doc)
    if near is None:
        try:
            near = existing_for(engine, memfile.parse(draft_text))
        except memfile.MemoryFormatError:
            near = []
    entry = cand.entry
    issues = verify(
        given,
        category=cand.category,
        evidence=cand.evidence(),
        action=decision.action,
        target=target,
        near=[
            {"id": e.id, "title": e.doc.title, "text": f"{e.doc.title}\n{e.doc.body}"} for e in near
        ],
        score=entry.get("score"),
        threshold=entry.get("threshold"),
        cfg=engine.cfg,
        entry=entry,
    )
    # verified again after the secret went: it stays blocked until edited
    if withheld and given == text:
        issues += [
            Issue(
                "BLOCK",
                "secret",
                "text",
                f"a secret was in this text ({kind}): it was not kept, "
                f"{marker(kind)} shows where; write what is meant there before saving",
            )
            for kind in withheld
        ]
    kept, shown, concerns_apply, said = _carried(cand, drafting_issues, drafter, text, file_text)
    issues += shown
    record = {
        "decision": {k: v for k, v in decision.as_dict().items() if k != "text"},
        "issues": [{**i.as_dict(), "message": redact_text(i.message)} for i in issues],
        "blocked": bool(blocking(issues)),
        "title": doc.title if doc is not None else "",
        "text_hash": text_hash(text),
        "verified": now_iso(),
        "drafting_issues": [i.as_dict() for i in kept],
        "concerns_apply": concerns_apply,
        "drafter": said,
        # what the drafter said is about its own text, as the verifier's concerns: not a person's edit
        "confidence": _confidence(
            engine, cand, decision.action, doc, issues, said if concerns_apply else {}
        ),
    }
    if withheld:
        record["withheld"] = withheld
    # an offline card says so, and carries its advisory (counted on the state line)
    record = cards.marked(record)
    cand.write_review(text, record)
    cand.move("ready", **summary(record), **extra)
    return record


def _withheld(cand: Candidate, text: str, file_text: str | None) -> tuple[str, list[str]]:
    """(the text to stage, the kinds of secret kept out of it). A secret in the text under review (a person's
    edit: the drafter's are redacted already) is redacted before it is staged, where it would sit in clear
    until the triage is cleaned; the text as given is verified (BLOCK: a secret). The staged text verified
    again later (a target moved, a conflict) holds no secret any more: what was withheld from it is carried
    from the last record while the text is the one it was taken from, so it stays blocked until edited."""
    staged, found = redact(text)
    if found:
        return staged, sorted(found)
    if file_text is None:
        return text, []
    try:
        prev = read_json(cand.files.review)
    except (OSError, ValueError):
        return text, []
    kinds = (
        prev.get("withheld")
        if isinstance(prev, dict) and prev.get("text_hash") == text_hash(text)
        else None
    )
    return text, [k for k in kinds if isinstance(k, str)] if isinstance(kinds, list) else []


def _carried(
    cand: Candidate,
    given: list[Issue] | None,
    drafter: dict | None,
    text: str,
    file_text: str | None,
):
    """(the drafting issues kept, those shown now, whether the verifier's concerns apply, what the drafter
    said of its draft: {confidence, weak}).

    Where a draft came from (a fallback) always shows. The model verifier's concerns, and what the drafter
    said of its draft, were about the drafter's text: they count while the text under review is that text
    (whatever the action, a decision taken again included), and no longer once a person edited it: the
    person has read them, and the verifier is not asked about a person's text (BLOCK checks are). They
    stay in the record, so deciding again from the draft counts them again."""
    if given is not None:
        return list(given), list(given), True, drafter or {}
    try:
        prev = read_json(cand.files.review)
        kept = [Issue(**i) for i in prev.get("drafting_issues") or []]
        said = prev.get("drafter") if isinstance(prev.get("drafter"), dict) else {}
    except (OSError, ValueError, TypeError, AttributeError):
        return [], [], False, {}
    applies = file_text is None or (
        prev.get("concerns_apply") is True and prev.get("text_hash") == text_hash(text)
    )
    return kept, [i for i in kept if applies or i.code != VERIFIER], applies, said


def _confidence(
    engine: Context,
    cand: Candidate,
    action: str,
    doc: memfile.MemoryDoc | None,
    issues: list[Issue],
    said: dict,
) -> dict:
    """The draft's confidence (curator/verify/confidence.py) from what verification gathered. The offline
    drafter's own text (quoted from the session) is checked against the category's cues."""
    offline = said.get("model") == "offline"
    cues = engine.cfg["categories"].get(cand.category, {}).get("keywords") or () if offline else ()
    return confidence.assess(
        category=cand.category,
        entry=cand.entry,
        body=doc.body if doc is not None else "",
        action=action,
        sources=len(doc.sources) if doc is not None else 0,
        issues=issues,
        weak=said.get("weak") or [],
        model_confidence=said.get("confidence"),
        cues=cues,
        title=doc.title if doc is not None else "",
        description=doc.description if doc is not None else "",
    )


def _occupant(engine: Context, doc: memfile.MemoryDoc) -> dict | None:
    """The state of a file already at a create's path (None when there is none): one that is no memory,
    such as a hand edit that left a byte that is not UTF-8, is never compared with, so it must block."""
    from memcurate.curator.memory.store import UnsafePathError

    try:
        path = engine.store.locate(doc.category, doc.id)
    except UnsafePathError:
        return None  # verification blocks such an id
    return engine.target_state(doc.category, doc.id, None) if os.path.lexists(path) else None


def summary(record: dict) -> dict:
    """What a queue row shows of a review record; it goes on the category's `ready` state line,
    so a list of candidates reads one file per triage."""
    sev = [i["severity"] for i in record["issues"]]
    return {
        "action": record["decision"]["action"],
        "blocked": record["blocked"],
        "title": record.get("title", ""),
        "blocks": sev.count("BLOCK"),
        "advisories": sev.count("ADVISORY"),
        "verified": record["verified"],
        "confidence": record["confidence"]["value"],
        "card": bool(record.get("card")),
    }


def process(
    engine: Context, tid: str, *, only: list[str] | None = None, on_event=None
) -> dict[str, str]:
    """Draft, verify and decide every category of a triage that needs it. Returns category → state.

    Raises LockBusy when another process (or another thread) holds the triage.
    """
    emit = on_event or (lambda e: None)
    triage = StagedTriage(engine.data, tid)
    with triage.claim(engine):
        if only is None:  # a retry of chosen categories makes no call beyond theirs
            look = second_look.run(engine, triage)  # may add categories the keywords missed
            if look is not None and look["state"] == "failed":  # said; the next run tries it again
                emit(Event(tid, "", "look-failed", {"error": look.get("error", "")}))
        cands = triage.candidates()
        todo: list[Candidate] = []
        if any(
            c.state in ("triaged", "drafting", *staging.IN_FLIGHT)
            for cat, c in cands.items()
            if only is None or cat in only
        ):
            # what decides a draft, worked out only when one is to be made (the drafter is built for it)
            todo = _to_draft(engine, triage, cands, only, emit)
        if todo:
            _draft_all(engine, todo, emit)
        # One fact, one category. Also with nothing left to draft: a holder killed between its last draft and
        # this fold leaves every draft ready, and the fold is then this run's to make.
        for cat, reason in same_fact.fold(engine, cands):
            emit(Event(tid, cat, "skipped", {"reason": reason}))
        return {cat: cand.state for cat, cand in cands.items()}


def _to_draft(
    engine: Context,
    triage: StagedTriage,
    cands: dict[str, Candidate],
    only: list[str] | None,
    emit,
) -> list[Candidate]:
    """The candidates of `cands` (of `only`) to draft now; the others not to draft are moved on (rejected
    before from the same evidence, skipped) or said to wait."""
    tid = triage.tid
    rejected = engine.rejected_fingerprints()
    # A keyword category a look that read everything did not confirm: not drafted from its excerpt.
    # Decided before any draft of the triage, from the look's record (a look made by an earlier run too).
    unread = second_look.unconfirmed(triage.doc) if only is None else {}
    # A Stop's keyword categories, when a look will read their bytes: they wait for it, then go (its facts
    # are drafted in its own triage); the session summary never waits.
    fate, why = second_look.keyword_fate(engine, triage) if only is None else ("draft", "")
    todo: list[Candidate] = []
    for cat, cand in cands.items():
        if only is not None and cat not in only:
            continue
        if cand.state in staging.IN_FLIGHT:  # left half-done by a killed holder: redo
            cand.move("drafting", resumed=now_iso())
        if cand.state in ("triaged", "drafting"):
            if cand.fingerprint() in rejected:
                cand.move("rejected", reason="rejected before from the same evidence")
                emit(Event(tid, cat, "rejected"))
                continue
            if cat in unread:
                cand.move("skipped", reason=unread[cat])
                emit(Event(tid, cat, "skipped", {"reason": unread[cat]}))
                continue
            if fate != "draft" and cand.state == "triaged" and cand.category not in ONE_PER_SESSION:
                if fate == "skip":
                    cand.move("skipped", reason=why)
                    emit(Event(tid, cat, "skipped", {"reason": why}))
                else:
                    emit(Event(tid, cat, "waiting", {"reason": why}))
                continue
            todo.append(cand)
    return todo


NEAR_DRAFT = 3  # existing memories of its category a draft request carries, the most alike


def near_memories(engine: Context, cand: Candidate) -> tuple[dict, ...]:
    """The saved memories of the candidate's category most like its fact (the look's statement and why, else
    the keyword excerpt), for the drafter: whether the fact is new, an update or already held is the model's
    call to see, and decide.py's to make. None offline (the offline drafter never reads them); none when the
    index cannot answer (a draft goes on without them)."""
    import sqlite3

    from memcurate.curator.memory.store import StoreError

    if engine.drafter.name == "offline":
        return ()
    entry = cand.entry
    look = entry.get("look") if isinstance(entry.get("look"), dict) else {}
    text = (
        f"{look.get('statement', '')}\n{look.get('why', '')}"
        if look
        else str(entry.get("excerpt") or "")[:2000]
    )
    try:
        # (a save run's lookups list the memories it just saved beside the indexed best: these few suffice)
        found = engine.index.candidates(cand.category, text, limit=NEAR_DRAFT)[:NEAR_DRAFT]
    except (sqlite3.Error, OSError, StoreError):
        return ()
    out = []
    for c in found:
        try:
            with open(c.path, encoding="utf-8") as f:
                doc = memfile.parse(f.read())
        except (OSError, UnicodeDecodeError, memfile.MemoryFormatError):
            continue
        out.append(
            {"id": c.id, "title": doc.title, "description": doc.description, "body": doc.body}
        )
    return tuple(out)


def _draft_all(engine: Context, todo: list[Candidate], emit) -> None:
    from memcurate.curator.drafting import DraftRequest, input_cap
    from memcurate.curator.drafting.resilience import Chain, Deadline

    cfg = engine.cfg
    d = cfg["drafting"]
    requests = {}
    for cand in todo:
        alias = cfg["categories"][cand.category]["model"]
        requests[cand.name] = DraftRequest(
            triage_id=cand.tid,
            category=cand.category,
            entry=cand.entry,
            source=cand.triage.doc["source"],
            model_alias=alias,
            model_id=cfg["models"][alias],
            now=engine.now(),
            candidates=near_memories(engine, cand),
        )
        if cand.state == "triaged":
            cand.move(
                "drafting",
                started=now_iso(),
                model="offline" if engine.drafter.name == "offline" else alias,
            )
        emit(Event(cand.tid, cand.name, "drafting", {"model": alias}))
    # each draft within its share of drafting.max_input_tokens
    input_cap.apply(engine, todo, requests)

    # One deadline for the triage's whole drafting: each call has its own timeout, and the chain starts
    # no call that would outlive the deadline, so retries and fallbacks happen inside it.
    deadline = Deadline(float(d["deadline_seconds"]))
    chain = Chain.from_config(cfg, engine.drafter)
    pool = ThreadPoolExecutor(
        max_workers=max(1, min(int(d["concurrency"]), len(todo))),
        thread_name_prefix="memcurate-draft",
    )
    futures = {pool.submit(_draft_one, engine, chain, requests[c.name], deadline): c for c in todo}
    # A backend that overruns its own timeout is not waited for past this.
    grace = min(DEADLINE_GRACE, deadline.seconds * 0.25)
    try:
        pending = set(futures)
        while pending:
            left = deadline.left() + grace
            done, pending = wait(pending, timeout=max(0.0, left), return_when=FIRST_COMPLETED)
            for fut in done:
                # Each draft is verified as soon as it exists, not after all of them.
                _finish(engine, futures[fut], fut.result(), emit)
            if not done and left <= 0:
                for fut in pending:
                    cand = futures[fut]
                    cand.move(
                        "failed",
                        error=f"timed out: the triage's drafting deadline ({deadline.seconds:g} s) "
                        "passed before this draft finished",
                    )
                    emit(Event(cand.tid, cand.name, "failed", {"error": "timeout"}))
                break
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


# seconds past the deadline for a call that overran its own timeout (then it fails)
DEADLINE_GRACE = 5.0


@dataclass
class Drafted:
    """What a drafting worker hands back: the chain's outcome, and the advisories of how it was made."""

    outcome: ChainResult
    # verify.Issue: fallback provenance, the verifier's concerns
    issues: list = field(default_factory=list)
    # the verification call's model, time, retries, error (for the state line)
    verifier: dict | None = None


def _draft_one(engine: Context, chain, request, deadline) -> Drafted:
    """A drafting worker: the fallback chain, then (verify.llm) the model verifier on a Claude draft.
    Network and child processes only; the state moves are `_finish`'s."""
    from memcurate.curator.drafting.resilience import OFFLINE
    from memcurate.curator.verify.checks import drafting_issues

    outcome = chain.run(request, deadline)
    result = outcome.result
    drafted = Drafted(outcome)
    if result.ok:
        _redact_draft(result)  # before anything is written, or sent to the verifier
        concerns = verifier_error = None
        if (
            engine.settings.verify.llm
            and outcome.attempts[-1]["model"] != OFFLINE
            and hasattr(engine.drafter, "check")
        ):
            concerns, verifier_error, drafted.verifier = _model_check(
                engine, chain, request, result.text, deadline, outcome.usage
            )
        drafted.issues = drafting_issues(
            outcome.fallback, outcome.offline_fallback, concerns, verifier_error
        )
    return drafted


def _model_check(engine: Context, chain, request, text: str, deadline, usage):
    """The verification pass on one draft: (concerns, why it failed, what goes on the state line).
    Its calls count in the category's usage; its failure never fails the draft."""
    from dataclasses import replace

    from memcurate.curator.drafting.resilience import safe_call

    alias = engine.settings.verify.model
    req = replace(request, model_alias=alias, model_id=engine.settings.model_id(alias))
    info: dict = {"model": alias}
    if deadline.left() < chain.call_timeout:
        info["error"] = "no time left before the triage's deadline"
        return None, info["error"], info
    t0 = time.monotonic()
    result, results, _ = chain.retrying(
        lambda: safe_call(engine.drafter.check, req, alias, text), deadline
    )
    for r in results:
        usage.add_usage(r)
    info.update(elapsed=round(time.monotonic() - t0, 3), retries=len(results) - 1)
    if result.error is not None:
        info["error"] = result.error
        return None, result.error, info
    info["concerns"] = len(result.concerns)
    return result.concerns, None, info


def _finish(engine: Context, cand: Candidate, drafted: Drafted, emit) -> None:
    tid, cat = cand.key
    outcome = drafted.outcome
    result = outcome.result
    # The usage of every call made for the category this time (retries, fallbacks, the verifier) is added
    # to the sums its line carries from earlier runs (a retry from the TUI); and each step.
    timing = {
        "model": result.model,
        "elapsed": round(outcome.elapsed, 3),
        **usage.add_call(cand.record, outcome.usage),
        "retries": outcome.retries,
        "attempts": outcome.attempts,
    }
    if drafted.verifier is not None:
        timing["verifier"] = drafted.verifier
    if result.notes:  # what the drafter wants said (a redaction, a model with no known price)
        timing["notes"] = result.notes
    if getattr(result, "skipped", None) and not result.error:
        # Nothing durable here, says the model: final, never saved.
        cand.move("skipped", reason=result.skipped, **timing)
        emit(Event(tid, cat, "skipped", {"reason": result.skipped, **timing}))
        return
    if result.error or result.doc is None:
        cand.move("failed", error=result.error or "the drafter returned nothing", **timing)
        emit(Event(tid, cat, "failed", {"error": result.error, **timing}))
        return
    cand.write_draft(result.text)
    cand.move("drafted", **timing)
    emit(Event(tid, cat, "drafted", timing))
    cand.move("verifying")
    try:
        decision, existing = decided(engine, result.doc)
        record = settle(
            engine,
            cand,
            decision,
            result.text,
            near=existing,
            drafting_issues=drafted.issues,
            drafter={
                "confidence": result.confidence,
                "weak": list(result.weak),
                "model": result.model,
            },
        )
    except OSError:
        raise  # a write failed (a full disk): the category stays `verifying`, redone by the next run
    except Exception as e:
        cand.move("failed", error=f"verification failed: {e.__class__.__name__}: {e}")
        emit(Event(tid, cat, "failed", {"error": str(e)}))
        return
    emit(
        Event(
            tid,
            cat,
            "ready",
            {"action": record["decision"]["action"], "blocked": record["blocked"]},
        )
    )


def _redact_draft(result) -> None:
    """Redact the drafter's whole document, front matter included, before anything is written:
    whatever the backend, a secret it echoed from the evidence (into a title, a tag, a YAML
    comment) never reaches staging. What survives this is a BLOCK at verification."""
    doc, found = memfile.redact_document(result.doc)
    if not found and not find_secrets(result.text):
        return
    # rendered anew: no text outside the fields is kept
    result.doc, result.text = (
        doc,
        memfile.render(doc),
    )
    kinds = ", ".join(sorted(found)) or "outside the document's fields"
    result.notes.append(f"redacted what the drafter left of a secret ({kinds})")


def pending_triages(data: str, unreadable: list | None = None) -> list[str]:
    """Triages with a category that is not saved or rejected yet, or a second look to make: those whose look
    is due first (earlier passes' keyword categories wait for it: second_look.keyword_fate), each part oldest
    first. Those that cannot
    be read are skipped; `unreadable`, when given, gains (triage id, why) for each."""
    out = []
    due: set[str] = set()
    for tid in staging.triage_ids(data):
        try:
            doc = staging.load_triage(data, tid)
            states = staging.category_states(data, tid, doc)
        except staging.StagingError as e:
            if unreadable is not None:
                unreadable.append((tid, str(e)))
            continue
        if staging.look_due(doc) or any(r["state"] in staging.PENDING for r in states.values()):
            out.append(tid)
            if staging.look_due(doc):
                due.add(tid)
    # A triage whose look is due goes first: the keyword categories of earlier passes wait for it.
    return [t for t in out if t in due] + [t for t in out if t not in due]
