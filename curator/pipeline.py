"""The pipeline: staged triage → drafts (in parallel) → verified decisions waiting for review.

One process works on a triage at a time: it holds the triage's claim, a lock
that dies with its holder, so work left by a killed process is simply taken
up by the next. Every step is written to staging as it happens (state,
timings, errors, the draft, its review record), so any process can show
progress and nothing lives only in memory.

Staging files a category gains here (beside triage.json):
    drafts/<category>.md         the file to be written: what the person reviews and edits
    drafts/<category>.draft.md   the drafter's own document, kept for re-deciding
    review/<category>.json       decision (action, target, base hash, diff, reasons) and issues
"""

from __future__ import annotations

import hashlib
import os
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from . import memfile, staging
from .atomic import read_json, write_json, write_text
from .decide import Decision, Existing, decide
from .staging import now_iso
from .verify import blocking, verify



def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fingerprint(category: str, entry: dict) -> str:
    """What a triage category was drafted from: a rejected candidate is not proposed again from it."""
    parts = [category] + [s.get("text", "") for s in entry.get("snippets", [])] + [entry.get("excerpt", "")]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


@dataclass
class Event:
    """Progress, for whoever shows it (the TUI); the same facts are in staging."""

    triage: str
    category: str
    state: str
    detail: dict = field(default_factory=dict)


class Claim:
    """Exclusive work on one triage: re-entrant in the thread holding it; another thread of the same
    engine waits for it (then LockBusy) exactly like another process."""

    def __init__(self, engine, triage_id: str, wait: float = 0.0) -> None:
        self.engine, self.tid, self.wait = engine, triage_id, wait
        self.lock = None

    def __enter__(self) -> "Claim":
        path = os.path.join(staging.triage_dir(self.engine.data, self.tid), ".claim")
        self.lock = self.engine.claim_lock(self.tid, path)
        self.lock.acquire(self.wait)
        return self

    def __exit__(self, *exc) -> None:
        self.lock.release()


def paths(data: str, tid: str, category: str) -> dict[str, str]:
    folder = staging.triage_dir(data, tid)
    return {"file": os.path.join(folder, "drafts", f"{category}.md"),
            "draft": os.path.join(folder, "drafts", f"{category}.draft.md"),
            "review": os.path.join(folder, "review", f"{category}.json")}


def read_review(data: str, tid: str, category: str) -> dict:
    p = paths(data, tid, category)
    try:
        review = read_json(p["review"])
        with open(p["file"], encoding="utf-8") as f:
            review["text"] = f.read()
        with open(p["draft"], encoding="utf-8") as f:
            review["draft"] = f.read()
    except (OSError, ValueError) as e:
        raise staging.StagingError(f"{tid}/{category}: review files unreadable ({e})") from None
    return review


def existing_for(engine, doc: memfile.MemoryDoc) -> list[Existing]:
    """Existing memories of the draft's category that are worth comparing with it."""
    out: list[Existing] = []
    from .store import UnsafePathError, content_hash

    ids = [c.id for c in engine.index.candidates(doc.category, f"{doc.title}\n{doc.description}\n{doc.body}", limit=5)]
    try:
        if doc.id not in ids and os.path.exists(engine.store.path_for(doc.category, doc.id)):
            ids.append(doc.id)  # the memory the draft's own id names is always compared with
    except UnsafePathError:
        pass  # verification blocks such an id
    for cid in ids:
        path = engine.store.path_for(doc.category, cid)
        try:
            with open(path, "rb") as f:
                data = f.read()  # read once: the text, its hash and its parse are of one version
            found = memfile.parse(data.decode("utf-8"))
        except (OSError, UnicodeDecodeError, memfile.MemoryFormatError):
            continue  # a broken or vanished file is reported by the index, not compared with
        out.append(Existing(cid, path, content_hash(data), found, data.decode("utf-8")))
    return out


def _near(engine, tid: str, category: str, draft_text: str) -> list[Existing]:
    """The existing memories to check the draft against: those it was just decided against (handed
    over through `engine.near` by the step that decided), else found again, so an edit verified
    later, or in another process, sees the memories as they are now."""
    found = engine.near.pop((tid, category), None)
    if found is None:
        try:
            found = existing_for(engine, memfile.parse(draft_text))
        except memfile.MemoryFormatError:
            found = []
    return found


def evidence_of(entry: dict) -> str:
    return "\n".join([entry.get("excerpt", "")] + [s.get("text", "") for s in entry.get("snippets", [])])


def review_decision(engine, tid: str, category: str, entry: dict, decision: Decision, draft_text: str,
                    file_text: str | None = None) -> dict:
    """Verify the file to be written and record the decision and issues in staging."""
    text = file_text if file_text is not None else (decision.text or draft_text)
    target = None
    if decision.action in ("update", "delete") and decision.target:
        target = engine.target_state(category, decision.target, decision.base_hash)
    near = [{"id": e.id, "title": e.doc.title, "text": f"{e.doc.title}\n{e.doc.body}"}
            for e in _near(engine, tid, category, draft_text)]
    issues = verify(text, category=category, evidence=evidence_of(entry), action=decision.action, target=target,
                    near=near, score=entry.get("score"), threshold=entry.get("threshold"), cfg=engine.cfg)
    p = paths(engine.data, tid, category)
    write_text(p["file"], text)
    try:
        title = memfile.parse(text).title
    except memfile.MemoryFormatError:
        title = ""
    record = {"decision": {k: v for k, v in decision.as_dict().items() if k != "text"},
              "issues": [i.as_dict() for i in issues], "blocked": bool(blocking(issues)),
              "title": title, "text_hash": text_hash(text), "verified": now_iso()}
    write_json(p["review"], record)
    return record


def summary(record: dict) -> dict:
    """What a queue row shows of a review record; it goes on the category's `ready` state line,
    so a list of candidates reads one file per triage."""
    sev = [i["severity"] for i in record["issues"]]
    return {"action": record["decision"]["action"], "blocked": record["blocked"], "title": record.get("title", ""),
            "blocks": sev.count("BLOCK"), "advisories": sev.count("ADVISORY"), "verified": record["verified"]}


def process(engine, tid: str, *, only: list[str] | None = None, on_event=None) -> dict[str, str]:
    """Draft, verify and decide every category of a triage that needs it. Returns category → state.

    Raises LockBusy when another process holds the triage.
    """
    emit = on_event or (lambda e: None)
    with Claim(engine, tid):
        doc = staging.load_triage(engine.data, tid)
        states = staging.category_states(engine.data, tid, doc)
        rejected = engine.rejected_fingerprints()
        todo: list[str] = []
        for cat, rec in states.items():
            if only is not None and cat not in only:
                continue
            state = rec["state"]
            if state in staging.IN_FLIGHT:  # left half-done by a killed holder: redo
                states[cat] = staging.set_state(engine.data, tid, cat, "drafting", doc=doc, current=rec,
                                                resumed=now_iso())
                state = "drafting"
            if state in ("triaged", "drafting"):
                if fingerprint(cat, doc["categories"][cat]) in rejected:
                    states[cat] = staging.set_state(engine.data, tid, cat, "rejected", doc=doc, current=states[cat],
                                                    reason="rejected before from the same evidence")
                    emit(Event(tid, cat, "rejected"))
                    continue
                todo.append(cat)
        if not todo:
            return {c: r["state"] for c, r in states.items()}
        _draft_all(engine, tid, doc, todo, emit)
        return {c: r["state"] for c, r in staging.category_states(engine.data, tid, doc).items()}


def _draft_all(engine, tid: str, doc: dict, todo: list[str], emit) -> None:
    from .drafting import DraftRequest

    cfg = engine.cfg
    d = cfg["drafting"]
    states = staging.category_states(engine.data, tid, doc)
    requests = {}
    for cat in todo:
        alias = cfg["categories"][cat]["model"]
        requests[cat] = DraftRequest(triage_id=tid, category=cat, entry=doc["categories"][cat],
                                     source=doc["source"], model_alias=alias, model_id=cfg["models"][alias],
                                     now=engine.now())
        if states[cat]["state"] == "triaged":
            staging.set_state(engine.data, tid, cat, "drafting", started=now_iso(),
                              model="offline" if engine.drafter.name == "offline" else alias)
        emit(Event(tid, cat, "drafting", {"model": alias}))

    timeout = float(d["timeout_seconds"])
    pool = ThreadPoolExecutor(max_workers=max(1, min(int(d["concurrency"]), len(todo))),
                              thread_name_prefix="memcurate-draft")
    started = time.monotonic()
    futures = {pool.submit(_draft_with_retries, engine.drafter, requests[c], d): c for c in todo}
    try:
        pending = set(futures)
        while pending:
            left = timeout - (time.monotonic() - started)
            done, pending = wait(pending, timeout=max(0.0, left), return_when=FIRST_COMPLETED)
            for fut in done:
                # Each draft is verified as soon as it exists, not after all of them.
                _finish(engine, tid, doc, futures[fut], fut.result(), emit)
            if not done and left <= 0:
                for fut in pending:
                    cat = futures[fut]
                    staging.set_state(engine.data, tid, cat, "failed", error=f"timed out after {timeout:g} s")
                    emit(Event(tid, cat, "failed", {"error": "timeout"}))
                break
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _draft_with_retries(drafter, request, d: dict):
    retries, backoff = int(d["retries"]), float(d["backoff_seconds"])
    attempt = 0
    while True:
        try:
            result = drafter.draft(request)
        except Exception as e:  # a drafter must not raise; if one does, it is a failed attempt
            from .drafting import DraftResult

            result = DraftResult(doc=None, text="", model=request.model_id, error=f"{e.__class__.__name__}: {e}")
        result.notes = list(getattr(result, "notes", []) or [])
        if result.error is None or attempt >= retries:
            result.retries = attempt
            return result
        attempt += 1
        time.sleep(backoff * 2 ** (attempt - 1))  # backoff between attempts of a real backend


def _finish(engine, tid: str, doc: dict, cat: str, result, emit) -> None:
    entry = doc["categories"][cat]
    timing = {"model": result.model, "elapsed": round(result.elapsed, 3), "tokens_in": result.tokens_in,
              "tokens_out": result.tokens_out, "retries": getattr(result, "retries", 0)}
    if result.error or result.doc is None:
        staging.set_state(engine.data, tid, cat, "failed", error=result.error or "the drafter returned nothing",
                          **timing)
        emit(Event(tid, cat, "failed", {"error": result.error, **timing}))
        return
    p = paths(engine.data, tid, cat)
    write_text(p["draft"], result.text)
    staging.set_state(engine.data, tid, cat, "drafted", **timing)
    emit(Event(tid, cat, "drafted", timing))
    staging.set_state(engine.data, tid, cat, "verifying")
    try:
        existing = existing_for(engine, result.doc)
        engine.near[(tid, cat)] = existing
        decision = decide(result.doc, existing, now=engine.now(), cfg=engine.cfg)
        record = review_decision(engine, tid, cat, entry, decision, result.text)
    except Exception as e:
        staging.set_state(engine.data, tid, cat, "failed", error=f"verification failed: {e.__class__.__name__}: {e}")
        emit(Event(tid, cat, "failed", {"error": str(e)}))
        return
    staging.set_state(engine.data, tid, cat, "ready", **summary(record))
    emit(Event(tid, cat, "ready", {"action": record["decision"]["action"], "blocked": record["blocked"]}))


def pending_triages(data: str) -> list[str]:
    """Triages with a category that is not saved or rejected yet, oldest first."""
    out = []
    for tid in staging.triage_ids(data):
        try:
            states = staging.category_states(data, tid)
        except staging.StagingError:
            continue
        if any(r["state"] in staging.PENDING for r in states.values()):
            out.append(tid)
    return out

