"""The curation engine end to end: pipeline, review actions, headless auto-approve, crash resume."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from fakes import Failing

from memcurate.curator.candidates import staging
from memcurate.curator.candidates.incremental import capture
from memcurate.curator.drafting import DraftResult
from memcurate.curator.drafting.offline import OfflineDrafter
from memcurate.curator.engine import Engine
from memcurate.curator.headless import auto_approve
from memcurate.curator.memory import memfile
from memcurate.curator.memory.store import content_hash
from memcurate.curator.review.actions import Blocked, Conflict, ReviewError
from memcurate.curator.util.assets import asset

DEMO = asset(os.path.join("demo", "session.jsonl"))


def make_engine(project: Path, tmp_path: Path, **kw) -> Engine:
    root = tmp_path / "memory"
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {root}\ndrafting:\n  backoff_seconds: 0.0\n"
    )
    return Engine(project, clock=lambda: "2026-11-22T10:04:00Z", **kw)


def stage(engine: Engine, transcript: str = DEMO) -> list[str]:
    report = capture(engine.data, engine.cfg, transcript, event="backfill", summary=True)
    assert report["status"] == "staged"
    return staging.triage_ids(engine.data)


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.startswith(".memcurate")
    }


def test_auto_approve_saves_every_clean_draft_and_a_second_run_changes_nothing(project, tmp_path):
    engine = make_engine(project, tmp_path)
    (tid,) = stage(engine)
    # every clean draft: the gate is tests/engine/test_confidence_gate.py's
    summary = auto_approve(engine, min_confidence=0.0)
    created = summary["created"]
    assert {c["category"] for c in created} == {
        "decision",
        "constraint",
        "runbook",
        "tech_debt",
        "preference",
        "session_summary",
    }
    assert not summary["failed"] and not summary["blocked"]
    root = tmp_path / "memory"
    for c in created:
        doc = memfile.parse(Path(c["path"]).read_text())
        assert memfile.problems(doc, file_name=Path(c["path"]).name) == []
        assert Path(c["path"]).parent.name == doc.category
    memory_md = (root / "MEMORY.md").read_text()
    assert memory_md.count("<!-- memcurate:begin") == 6
    before = tree(root)
    again = auto_approve(engine)
    assert all(not again[k] for k in ("created", "updated", "noop", "failed", "blocked"))
    assert tree(root) == before
    assert {r["state"] for r in staging.category_states(engine.data, tid).values()} == {"saved"}


def test_a_failing_category_is_marked_failed_while_the_others_go_on_and_retry_works(
    project, tmp_path
):
    engine = make_engine(project, tmp_path, drafter=Failing({"runbook"}))
    (tid,) = stage(engine)
    states = engine.process(tid)
    assert states["runbook"] == "failed" and states["decision"] == "ready"
    rec = staging.category_states(engine.data, tid)["runbook"]
    assert (
        rec["error"] == "the model said no (after 3 attempts)"
        and rec["retries"] == engine.cfg["drafting"]["retries"]
    )
    engine._drafter = OfflineDrafter()
    assert engine.retry(tid, "runbook")["runbook"] == "ready"


class Hanging:
    name = "hanging"
    reason = "test"

    def __init__(self) -> None:
        self.release = threading.Event()

    def draft(self, request):
        self.release.wait(30)  # never set by the test: the pipeline's timeout must give up on it
        return DraftResult(doc=None, text="", model="fake", error="released")


def test_a_draft_that_hangs_times_out_and_nothing_hangs(project, tmp_path):
    drafter = Hanging()
    engine = make_engine(project, tmp_path, drafter=drafter)
    engine.cfg["drafting"]["timeout_seconds"] = 0.3
    # a drafter that ignores its timeout: the deadline ends it
    engine.cfg["drafting"]["deadline_seconds"] = 0.3
    (tid,) = stage(engine)
    try:
        states = engine.process(tid)
    finally:
        drafter.release.set()
    assert set(states.values()) == {"failed"}
    assert all(
        "timed out" in r["error"] for r in staging.category_states(engine.data, tid).values()
    )


def ready(engine, tid, cat):
    engine.process(tid)
    return engine.review(tid, cat)


def test_a_block_prevents_approval_until_an_edit_fixes_it(project, tmp_path):
    engine = make_engine(project, tmp_path)
    (tid,) = stage(engine)
    review = ready(engine, tid, "decision")
    broken = review["text"].replace("## Rationale", "## Thoughts")
    with pytest.raises(Blocked, match="Rationale"):
        engine.approve(tid, "decision", broken)
    assert staging.category_states(engine.data, tid)["decision"]["state"] == "ready"
    assert not (tmp_path / "memory" / "decision").exists()
    record = engine.edit(
        tid, "decision", review["text"].replace("## Decision\n", "## Decision\nEdited. ")
    )
    assert not record["blocked"]
    (saved,) = engine.approve(tid, "decision").saved
    assert "Edited. " in Path(saved.path).read_text()


def test_rejected_is_not_proposed_again_from_the_same_evidence(project, tmp_path):
    engine = make_engine(project, tmp_path)
    (tid,) = stage(engine)
    engine.process(tid)
    engine.reject(tid, "tech_debt", "not worth keeping")
    assert staging.category_states(engine.data, tid)["tech_debt"]["reason"] == "not worth keeping"
    # The same session triaged again from scratch (offsets and staging lost): tech_debt is not proposed.
    other = project.parent / "other"
    (other / ".git").mkdir(parents=True)
    engine2 = make_engine(other, tmp_path / "o")
    os.replace(Path(engine.data) / "rejected.json", Path(engine2.data) / "rejected.json")
    (tid2,) = stage(engine2)
    states = engine2.process(tid2)
    assert states["tech_debt"] == "rejected" and states["decision"] == "ready"


def test_update_racing_a_hand_edit_is_a_reported_conflict(project, tmp_path):
    engine = make_engine(project, tmp_path)
    (tid,) = stage(engine)
    auto_approve(engine)
    path = next((tmp_path / "memory" / "decision").glob("*.md"))
    # The same decision again, from a second session: an UPDATE of the saved memory.
    second = tmp_path / "second.jsonl"
    second.write_bytes(
        Path(DEMO)
        .read_bytes()
        .replace(b"5e55a1d0-de70-4c1a-9a5e-000000000001", b"5e55a1d0-de70-4c1a-9a5e-000000000002")
        .replace(b"on its own", b"on its own, and tokens rotate weekly")
    )
    report = capture(engine.data, engine.cfg, str(second), event="backfill", summary=True)
    tid2 = report["triage"]
    review = ready(engine, tid2, "decision")
    assert review["decision"]["action"] == "update"
    hand = path.read_text().replace("## Rationale\n", "## Rationale\nHand edit. ")
    path.write_text(hand)
    with pytest.raises(Conflict):
        engine.approve(tid2, "decision")
    assert path.read_text() == hand  # never overwritten
    review = engine.review(tid2, "decision")
    assert any(i["code"] == "conflict" for i in review["issues"])


def test_change_action_follows_the_rules(project, tmp_path):
    engine = make_engine(project, tmp_path)
    (tid,) = stage(engine)
    engine.process(tid)
    with pytest.raises(ReviewError, match="no existing memory"):
        engine.change_action(tid, "decision", "update")
    record = engine.change_action(tid, "decision", "noop")
    assert record["decision"]["action"] == "noop"
    (saved,) = engine.approve(tid, "decision").saved
    assert saved.action == "noop" and not (tmp_path / "memory" / "decision").exists()


def test_a_save_killed_after_the_file_is_finished_by_the_next_run(project, tmp_path, monkeypatch):
    engine = make_engine(project, tmp_path)
    (tid,) = stage(engine)
    engine.process(tid)
    import memcurate.curator.memory.memory_md as memory_md

    def killed(*a, **kw):
        raise KeyboardInterrupt("killed between the memory file and MEMORY.md")

    monkeypatch.setattr(memory_md, "apply", killed)
    with pytest.raises(KeyboardInterrupt):
        engine.approve(tid, "decision")
    monkeypatch.undo()
    assert staging.category_states(engine.data, tid)["decision"]["state"] == "approved"
    written = next((tmp_path / "memory" / "decision").glob("*.md"))
    (saved,) = engine.resume(tid).saved
    assert saved.path == str(written) and saved.action == "create"
    assert written.stem in (tmp_path / "memory" / "MEMORY.md").read_text()
    assert staging.category_states(engine.data, tid)["decision"]["state"] == "saved"


def test_memory_files_never_leave_the_memory_root(project, tmp_path):
    engine = make_engine(project, tmp_path)
    (tid,) = stage(engine)
    review = ready(engine, tid, "decision")
    hostile = review["text"].replace(
        f"id: {memfile.parse(review['text']).id}", "id: ../../../etc/evil"
    )
    with pytest.raises(Blocked):
        engine.approve(tid, "decision", hostile)
    assert not any("evil" in str(p) for p in tmp_path.rglob("*"))
    assert content_hash(b"x") == content_hash("x")


def test_a_resumed_save_of_hand_edited_text_recognises_the_written_file(
    project, tmp_path, monkeypatch
):
    """The store writes the canonical form of an edit; resuming must recognise it, not call it a conflict."""
    engine = make_engine(project, tmp_path)
    (tid,) = stage(engine)
    review = ready(engine, tid, "decision")
    edited = review["text"].replace("## Decision\n", "## Decision\n\n\nEdited by hand.   \n")
    import memcurate.curator.memory.memory_md as memory_md

    def killed(*a, **kw):
        raise KeyboardInterrupt("killed between the memory file and MEMORY.md")

    monkeypatch.setattr(memory_md, "apply", killed)
    with pytest.raises(KeyboardInterrupt):
        engine.approve(tid, "decision", edited)
    monkeypatch.undo()
    (saved,) = engine.resume(tid).saved
    assert saved.action == "create" and "Edited by hand." in Path(saved.path).read_text()
    assert staging.category_states(engine.data, tid)["decision"]["state"] == "saved"


def test_approving_a_triage_at_once_saves_the_clean_ones_and_refuses_the_blocked_one(
    project, tmp_path
):
    engine = make_engine(project, tmp_path)
    (tid,) = stage(engine)
    review = ready(engine, tid, "decision")
    engine.edit(tid, "decision", review["text"].replace("## Rationale", "## Thoughts"))
    cats = sorted(staging.category_states(engine.data, tid))
    result = engine.approve_all(tid, cats)
    assert set(result.refused) == {"decision"} and isinstance(result.refused["decision"], Blocked)
    assert sorted(s.category for s in result.saved) == [c for c in cats if c != "decision"]
    text = (tmp_path / "memory" / "MEMORY.md").read_text()
    for saved in result.saved:  # one MEMORY.md write holds every save of the approval
        assert f"{saved.category}/{Path(saved.path).name}" in text
    states = staging.category_states(engine.data, tid)
    assert states["decision"]["state"] == "ready"
    assert all(states[s.category]["state"] == "saved" for s in result.saved)


def test_a_blocked_drafts_text_is_never_written_even_as_a_temp_file(project, tmp_path, monkeypatch):
    """A triage's files are written early, while their duplicate lookups run (atomic.ahead): only those of
    the candidates that may be saved. A blocked one (here a secret) never reaches the memory folder, not
    even as a temp file a killed run would leave behind."""
    engine = make_engine(project, tmp_path)
    (tid,) = stage(engine)
    review = ready(engine, tid, "decision")
    secret = "AKIA" + "ABCDEFGHIJKLMNOP"
    engine.edit(
        tid, "decision", review["text"].replace("## Rationale\n", f"## Rationale\nKey {secret}.\n")
    )
    assert ready(engine, tid, "decision")["blocked"]
    folder = str(tmp_path / "memory" / "decision") + os.sep
    written: list[str] = []
    os_open = os.open

    def opened(path, flags, *a, **kw):
        if os.fspath(path).startswith(folder) and flags & os.O_CREAT:
            written.append(os.fspath(path))
        return os_open(path, flags, *a, **kw)

    monkeypatch.setattr(os, "open", opened)
    result = engine.approve_all(tid, sorted(staging.category_states(engine.data, tid)))
    monkeypatch.undo()
    assert set(result.refused) == {"decision"} and isinstance(result.refused["decision"], Blocked)
    assert len(result.saved) >= 4
    assert written == []


def test_auto_approve_sweeps_temp_files_that_killed_writers_left(project, tmp_path):
    import subprocess
    import sys

    engine = make_engine(project, tmp_path)
    stage(engine)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid with no process behind it
    root = tmp_path / "memory"
    (root / "decision").mkdir(parents=True)
    left = [
        root / f".MEMORY.md.{gone.pid}.3.tmp",
        root / "decision" / f".x.md.{gone.pid}.1.tmp",
        Path(engine.data) / f".rejected.json.{gone.pid}.2.tmp",
    ]
    kept = [
        root / f".MEMORY.md.{os.getppid()}.4.tmp",  # a live writer's
        root / "notes.tmp",
        root / ".hand-made.tmp",
    ]  # not names memcurate makes
    for p in left + kept:
        p.write_text("half")
        os.utime(p, (time.time() - 60, time.time() - 60))
    fresh = root / f".MEMORY.md.{gone.pid}.5.tmp"  # too young to be sure its writer is gone
    fresh.write_text("half")
    auto_approve(engine)
    assert not any(p.exists() for p in left)
    assert all(p.exists() for p in kept + [fresh])


def test_an_edit_is_checked_against_the_memories_as_they_are_now_in_any_process(project, tmp_path):
    from dataclasses import replace

    drafting = make_engine(project, tmp_path)
    (tid,) = stage(drafting)
    review = ready(drafting, tid, "decision")
    assert review["decision"]["action"] == "create"
    assert "near-duplicate" not in {i["code"] for i in review["issues"]}
    doc = memfile.parse(review["text"])
    # saved meanwhile
    drafting.store.create(replace(doc, id="an-earlier-twin", title=doc.title + " (earlier)"))
    for engine in (drafting, Engine(project, clock=lambda: "2026-11-22T10:04:00Z")):
        record = engine.edit(tid, "decision", review["text"])
        assert "near-duplicate" in {i["code"] for i in record["issues"]}


def test_a_text_the_store_refuses_goes_back_to_review_and_the_others_are_saved(
    project, tmp_path, monkeypatch
):
    from memcurate.curator.memory.store import InvalidMemoryError, MemoryStore

    engine = make_engine(project, tmp_path)
    (tid,) = stage(engine)
    engine.process(tid)
    real = MemoryStore.create

    def refuse_decisions(self, doc, **kw):
        if doc.category == "decision":
            raise InvalidMemoryError(
                os.path.join(self.root, "decision", f"{doc.id}.md"), [("title", "refused")]
            )
        return real(self, doc, **kw)

    monkeypatch.setattr(MemoryStore, "create", refuse_decisions)
    summary = auto_approve(engine, min_confidence=0.0)
    assert [b["category"] for b in summary["blocked"]] == ["decision"]
    assert len(summary["created"]) == 5
    rec = staging.category_states(engine.data, tid)["decision"]
    # not stuck `approved`
    assert rec["state"] == "ready" and rec["blocked"] and "refused" in rec["error"]
    monkeypatch.undo()
    assert [c["category"] for c in auto_approve(engine)["created"]] == [
        "decision"
    ]  # nothing wedged
