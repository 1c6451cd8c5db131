"""The failure ledger and the rule candidate records: one count per session across sessions, a
candidate staged once at the threshold and never again once decided, races between processes,
damaged files, redaction, forgetting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memcurate.curator.review.rule_actions import text
from memcurate.curator.rules import candidates, ledger
from memcurate.curator.rules.signature import Failure

ROOT = Path(__file__).resolve().parents[2]
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def a_failure(message: str = "No such file or directory: <tmp>/cache.json") -> Failure:
    return Failure(
        kind="test",
        tool="pytest",
        signature=f"pytest tests/test_store.py::test_save FileNotFoundError {message}",
        test="tests/test_store.py::test_save",
        error_type="FileNotFoundError",
        message=message,
        files=("tests/test_store.py", "curator/store.py"),
        excerpt="E   FileNotFoundError: [Errno 2] No such file or directory: '/tmp/pytest-7/cache.json'",
    )


def rec(data, f, session, **kw):
    kw.setdefault("at", "2026-01-01T10:00:00Z")
    kw.setdefault("command", "uv run pytest -x")
    kw.setdefault("error", f.excerpt)
    kw.setdefault("source", "hook")
    kw.setdefault("threshold", 3)
    return ledger.record(data, f, session=session, **kw)


def seen(data) -> Path:
    """The folder of the ledger's files, one per record call."""
    return Path(data) / ledger.FAILURES_DIR


def names(data) -> list[str]:
    """The names of the ledger's files, one per record call."""
    return [os.path.basename(p) for p in ledger.files(data)]


def files_of(data, key: str) -> list[Path]:
    """The ledger's files that hold signature `key`."""
    return [Path(p) for p in ledger.files(data) if key in json.loads(Path(p).read_text())["seen"]]


@pytest.fixture
def data(tmp_path) -> str:
    d = tmp_path / ".memcurate"
    d.mkdir()
    return str(d)


def test_three_sessions_stage_one_candidate_and_retries_do_not_count(data):
    f = a_failure()
    first = rec(data, f, "s1", at="2026-01-09T10:00:00Z")
    assert (first.new, first.sessions, first.staged) == (True, 1, False)
    retry = rec(data, f, "s1")
    assert (retry.new, retry.sessions, retry.staged) == (False, 1, False)
    assert rec(data, f, "s2", at="2026-01-08T10:00:00Z").sessions == 2
    third = rec(data, f, "s3", at="2026-01-07T10:00:00Z")
    assert (third.new, third.sessions, third.staged) == (True, 3, True)
    assert first.key == f.key and ledger.is_key(f.key)
    fourth = rec(data, f, "s4")
    assert (fourth.sessions, fourth.staged) == (4, False)  # evidence, not a second candidate
    assert [c.id for c in candidates.all(data)] == [f.key]
    c = candidates.load(data, f.key)
    assert c.state == "pending" and c.sessions == 4
    assert [o["session"] for o in c.occurrences] == ["s4", "s3", "s2", "s1"]  # oldest first
    assert c.failure["key"] == f.key and c.failure["test"] == "tests/test_store.py::test_save"
    assert c.draft is None and c.edit is None


def test_a_retry_makes_no_temp_file(data, monkeypatch):
    f = a_failure()
    rec(data, f, "s1")
    written = []
    real = ledger.write_new

    def counting(path, *a, **kw):
        written.append(os.path.basename(path))
        return real(path, *a, **kw)

    monkeypatch.setattr(ledger, "write_new", counting)
    assert rec(data, f, "s1").new is False  # counted once, as before, with only a stat
    assert written == []
    assert rec(data, f, "s2").new is True and written == ["s2.0.json"]


def test_the_threshold_is_the_configured_one(data):
    f = a_failure()
    assert rec(data, f, "a", threshold=2).sessions == 1
    assert rec(data, f, "b", threshold=2).staged


def test_session_ids_become_safe_file_names_one_per_id(data):
    f = a_failure()
    ids = [
        "../../etc/passwd",
        "failure",
        "x" * 200,
        "x" * 80 + "y",
        "a.b",
        "a_b",
        "0f4c2a9e-7b1d-4c3e-9a55-2d8e6f1b3c47",
    ]
    for s in ids:
        assert rec(data, f, s).new, s  # each id its own session: none taken for another's
    made = sorted(names(data))
    assert len(made) == len(ids) and all(n.endswith(".0.json") for n in made)
    # safe ids are used as they are
    assert {"a_b.0.json", "0f4c2a9e-7b1d-4c3e-9a55-2d8e6f1b3c47.0.json"} <= set(made)
    for name in made:
        stem = name.removesuffix(".0.json")
        assert (
            len(stem) <= 80 and stem.replace(".", "").replace("_", "").replace("-", "").isalnum()
        ), name
    assert (
        ledger.session_name("a.b").startswith("a_b.")
        and ledger.session_name("failure") != "failure"
    )
    assert ledger.sessions(data, f.key) == len(ids)
    assert not rec(data, f, "a.b").new  # and the same id again is the same session


def test_a_rejected_or_approved_signature_is_never_staged_again(data):
    for message, decide in (
        ("one", lambda k: candidates.mark_rejected(data, k, "noise")),
        ("two", lambda k: candidates.mark_approved(data, k, ".claude/rules/memcurate/t.md", 3)),
    ):
        f = a_failure(message)
        for s in ("a", "b", "c"):
            rec(data, f, s)
        decide(f.key)
        later = rec(data, f, "d")
        assert later.sessions == 4 and not later.staged
        assert ledger.stage(data, f.key) is False
        c = candidates.load(data, f.key)
        assert c.state in ("rejected", "approved") and c.sessions == 4
    assert candidates.all(data) == []
    assert {c.state for c in candidates.all(data, every=True)} == {"rejected", "approved"}


def test_redacted_and_capped_before_touching_the_disk(data, tmp_path):
    f = Failure(
        kind="runtime",
        tool="python",
        signature=f"python RuntimeError token {SECRET}",
        error_type="RuntimeError",
        message=f"token {SECRET}",
        excerpt=f"RuntimeError: token {SECRET}\n" * 40,
    )
    rec(
        data,
        f,
        "s1",
        command=f"curl -H 'Authorization: token {SECRET}' " + "x" * 500,
        error=f"Error: bad token {SECRET}\n" + "line\n" * 400,
    )
    ledger.add_fix(
        data,
        f.key,
        "s1",
        {
            "text": f"I rotated {SECRET} and it passed " + "y" * 900,
            "files": ["app.py"],
            "command": "python app.py",
        },
    )
    rec(data, f, "s2", threshold=2)
    for path in Path(data).rglob("*"):
        if path.is_file():
            assert "ghp_" not in path.read_text(), path
    occ = ledger.occurrences(data, f.key)[0]
    assert "[REDACTED:" in occ["command"] and len(occ["command"]) <= 300
    assert len(occ["error"]) <= 600 and "\n" in occ["error"]
    assert len(occ["fix"]["text"]) <= 400 and occ["fix"]["files"] == ["app.py"]


def test_add_fix_changes_only_an_existing_occurrence(data):
    f = a_failure()
    fix = {
        "text": "Created the cache folder first.",
        "files": ["curator/store.py"],
        "command": "uv run pytest",
    }
    assert not ledger.add_fix(data, f.key, "s1", fix)  # nothing recorded yet
    rec(data, f, "s1")
    assert ledger.add_fix(data, f.key, "s1", fix)
    assert not ledger.add_fix(data, f.key, "s1", fix)  # already there
    assert ledger.occurrences(data, f.key)[0]["fix"] == fix
    # A second record of the session with a fix (the triage after the hook) adds it the same way.
    g = a_failure("other")
    rec(data, g, "s1")
    assert not rec(data, g, "s1", fix=fix, source="transcript").new
    assert ledger.occurrences(data, g.key)[0]["fix"] == fix


def test_a_writer_killed_half_way_leaves_nothing_counted(data):
    f = a_failure()
    rec(data, f, "s1")
    # killed before its link
    (seen(data) / ".s2.0.json.999999.1.tmp").write_text('{"session": "s2", "seen": {"')
    assert ledger.sessions(data, f.key) == 1
    assert [o["session"] for o in ledger.occurrences(data, f.key)] == ["s1"]
    assert rec(data, f, "s2").new  # the session counts once it really is written


def test_damaged_files_are_skipped_with_a_note_and_nothing_else_is_lost(data):
    f = a_failure()
    for s in ("s1", "s2", "s3"):
        rec(data, f, s)
    (seen(data) / "s2.0.json").write_text("{not json")
    # a folder of the layout before stop 38, damaged: skipped, the failure read from the others
    folder = Path(ledger.failure_dir(data, f.key))
    folder.mkdir()
    (folder / "failure.json").write_text("[1, 2]")
    notes: list[str] = []
    c = candidates.load(data, f.key, notes=notes)
    assert [o["session"] for o in c.occurrences] == ["s1", "s3"] and c.failure["key"] == f.key
    assert any("s2.0.json" in n and "unreadable" in n for n in notes)
    assert any("failure.json" in n for n in notes)
    record = Path(ledger.candidate_path(data, f.key))
    record.write_text('{"state": "maybe"}')
    notes = []
    assert (
        candidates.load(data, f.key, notes=notes) is None
        and "not a rule candidate record" in notes[0]
    )
    assert candidates.all(data, every=True, notes=notes) == []
    later = rec(data, f, "s4")  # a damaged record is never replaced by a fresh one
    assert (
        later.sessions == 3 and not later.staged
    )  # s1, s3, s4: a damaged file counts nothing and record.read_text() == '{"state": "maybe"}'
    with pytest.raises(ValueError, match="not a rule candidate record"):
        candidates.mark_rejected(data, f.key)


def test_candidate_changes(data):
    f = a_failure()
    for s in ("s1", "s2", "s3"):
        rec(data, f, s)
    draft = {
        "rule": "Create the cache folder before saving.",
        "topic": "testing",
        "paths": ["tests/**"],
        "by": "claude-cli",
        "model": "haiku",
        "at": "2026-01-05T00:00:00Z",
        "error": "",
    }
    candidates.set_draft(data, f.key, draft)
    c = candidates.load(data, f.key)
    assert text(c) == {"rule": draft["rule"], "topic": "testing", "paths": ["tests/**"]}
    candidates.set_edit(
        data, f.key, {"rule": "Call ensure_cache() first.", "topic": "store", "paths": []}
    )
    c = candidates.load(data, f.key)
    assert text(c) == {"rule": "Call ensure_cache() first.", "topic": "store", "paths": []}
    assert c.draft["rule"] == draft["rule"]
    candidates.set_edit(data, f.key, None)
    assert text(candidates.load(data, f.key))["rule"] == draft["rule"]
    # never made-up globs from a string's letters or a dict's keys
    for paths in (
        "tests/**",
        {"tests/**": 1},
        [1],
    ):
        with pytest.raises(ValueError, match="paths must be a list of globs"):
            candidates.set_edit(
                data,
                f.key,
                {"rule": "Call ensure_cache() first.", "topic": "store", "paths": paths},
            )
    doc = candidates.mark_approved(data, f.key, ".claude/rules/memcurate/store.md", 3)
    assert (
        doc["state"] == "approved" and doc["decision"]["file"] == ".claude/rules/memcurate/store.md"
    )
    with pytest.raises(ValueError, match="already approved"):
        candidates.mark_rejected(data, f.key, "changed my mind")
    with pytest.raises(ValueError, match="no rule candidate"):
        candidates.set_draft(data, "0123456789ab", draft)
    assert candidates.load(data, "../../etc") is None


RACER = """
import os, sys, json
sys.path.insert(0, sys.argv[1])
from test_rules_ledger import a_failure
from memcurate.curator.rules import ledger
go = sys.argv[4]
while not os.path.exists(go):
    pass
r = ledger.record(sys.argv[2], a_failure(), session=sys.argv[3], at="2026-01-01T00:00:00Z",
                  command="pytest", error="E", source="hook", threshold=3)
print(json.dumps([r.new, r.staged]))
"""


def race(data, sessions: list[str], tmp_path) -> list[list[bool]]:
    go = tmp_path / f"go-{len(os.listdir(tmp_path))}"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(Path(__file__).parent), data, s, str(go)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for s in sessions
    ]
    go.touch()
    results = [json.loads(p.communicate(timeout=60)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    return results


def test_processes_racing_count_a_session_once_and_stage_once(data, tmp_path):
    same = race(data, ["s1"] * 6, tmp_path)
    assert sum(new for new, _ in same) == 1
    key = a_failure().key
    assert ledger.sessions(data, key) == 1
    many = race(data, ["s2", "s3", "s4", "s5", "s6"], tmp_path)
    assert all(new for new, _ in many)
    assert sum(staged for _, staged in many) == 1  # whoever reached the threshold first
    assert ledger.sessions(data, key) == 6 and len(candidates.all(data)) == 1
    assert not [n for n in os.listdir(seen(data)) if n.endswith(".tmp")]


def test_prune_forgets_old_signatures_that_never_became_candidates(data):
    old, recent, graduated = a_failure("old"), a_failure("recent"), a_failure("graduated")
    for f in (old, recent):
        rec(data, f, "s1")
    for s in ("s1", "s2", "s3"):
        rec(data, graduated, s)
    for f in (old, graduated):
        age(data, f)
    assert ledger.prune(data, 180) == [old.key]
    assert sorted(ledger.keys(data)) == sorted([recent.key, graduated.key])
    assert ledger.prune(data, 180) == []
    assert rec(data, old, "s9").sessions == 1  # seen again: counted from scratch


def age(data, f, days: float = 200) -> None:
    long_ago = time.time() - days * 86400
    for path in files_of(data, f.key):
        os.utime(path, (long_ago, long_ago))


def test_prune_never_loses_an_occurrence_recorded_while_it_decides(data, monkeypatch):
    f = a_failure("old")
    rec(data, f, "s1")
    age(data, f)
    other = a_failure("other")
    rec(data, other, "s1")
    merged = seen(data) / "s1.9.json"  # s1's two failures in one file: forgetting one rewrites it
    docs = [json.loads(Path(p).read_text()) for p in ledger.files(data)]
    for p in ledger.files(data):
        os.unlink(p)
    merged.write_text(json.dumps({**docs[0], "seen": {**docs[0]["seen"], **docs[1]["seen"]}}))
    age(data, f)
    again = ledger._seen_again

    # a hook links another session's sighting while prune decides
    def hook_records_first(*a):
        rec(data, f, "s2")
        return again(*a)

    monkeypatch.setattr(ledger, "_seen_again", hook_records_first)
    assert ledger.prune(data, 180) == [other.key]  # the other old one, seen by no one meanwhile
    monkeypatch.setattr(ledger, "_seen_again", again)
    assert ledger.keys(data) == [f.key]
    assert sorted(o["session"] for o in ledger.occurrences(data, f.key)) == ["s1", "s2"]
    assert ledger.sessions(data, f.key) == 2 and ledger.failure(data, f.key)["key"] == f.key
    assert not [n for n in os.listdir(seen(data)) if n.startswith(".") and n != ledger.INDEX_FILE]


def test_prune_reads_no_file_when_nothing_is_old(data, monkeypatch):
    recent = a_failure("recent")
    for s in ("s1", "s2"):
        rec(data, recent, s)
    assert ledger.prune(data, 180) == []  # reads the two files once, and writes the index
    looked = []
    read = ledger._read_seen
    monkeypatch.setattr(ledger, "_read_seen", lambda p, n: looked.append(p) or read(p, n))
    assert ledger.prune(data, 180) == []
    assert looked == []  # a stat a file, none read


# -- the layout: one file a call, an index, the folders of before ---------------------------------


def test_a_ledger_of_the_layout_before_is_read_counted_and_never_written(data):
    """failures/<key>/failure.json and a file per session, as memcurate wrote them before stop 38."""
    f = a_failure()
    folder = Path(ledger.failure_dir(data, f.key))
    folder.mkdir(parents=True)
    (folder / "failure.json").write_text(json.dumps({**f.as_dict(), "key": f.key}))
    for s in ("s1", "s2"):
        occurrence = {"session": s, "at": "2026-01-01T10:00:00Z", "command": "pytest", "error": "E"}
        (folder / f"{s}.json").write_text(json.dumps({**occurrence, "fix": None}))
    assert ledger.keys(data) == [f.key] and ledger.sessions(data, f.key) == 2
    assert not rec(data, f, "s2").new  # counted there already
    third = rec(data, f, "s3")
    assert (third.new, third.sessions, third.staged) == (True, 3, True)
    assert sorted(os.listdir(folder)) == ["failure.json", "s1.json", "s2.json"]  # not written
    fix = {"text": "Made the folder first.", "files": [], "command": "pytest"}
    assert ledger.add_fix(data, f.key, "s1", fix)  # into a new file: the old one stays as it was
    c = candidates.load(data, f.key, threshold=3)
    assert [o["session"] for o in c.occurrences] == ["s1", "s2", "s3"]
    assert c.occurrences[0]["fix"] == fix and c.failure["key"] == f.key
    # forgetting takes the folder too
    other = a_failure("other")
    rec(data, other, "s9")
    assert ledger.enforce_caps(data, 100, 1 << 20, keep={other.key}) == []  # within the caps
    age(data, f)
    os.unlink(ledger.candidate_path(data, f.key))
    for p in [folder, *folder.iterdir()]:
        os.utime(p, (0, 0))
    assert ledger.prune(data, 180) == [f.key]
    assert not folder.exists() and ledger.keys(data) == [other.key]


def test_a_record_reads_only_what_the_index_does_not_name(data, monkeypatch):
    index = Path(data) / ledger.FAILURES_DIR / ledger.INDEX_FILE
    for i in range(ledger.INDEX_EVERY):
        rec(data, a_failure(f"m{i}"), f"s{i}")
    assert not index.exists()  # each call read fewer files than are worth an index
    looked: list[str] = []
    read = ledger._read_seen
    monkeypatch.setattr(ledger, "_read_seen", lambda p, n: looked.append(p) or read(p, n))
    rec(data, a_failure("late"), "s-late")  # reads every file, and writes the index
    assert len(looked) == ledger.INDEX_EVERY and index.exists()
    looked.clear()
    assert rec(data, a_failure("m1"), "s-late").sessions == 2
    assert looked == []  # every file named by the index


def test_a_forged_index_can_stage_but_the_engine_counts_the_files(data):
    """The index is the data dir's, so Claude's to write: it can only make a hook stage a record, which
    the engine then reads from the files themselves and does not propose."""
    f = a_failure()
    rec(data, f, "s1")
    index = Path(data) / ledger.FAILURES_DIR / ledger.INDEX_FILE
    forged = {"s1.0.json": [[f.key], 10]}
    forged |= {f"s{i}.0.json": [[f.key], 10] for i in range(2, 6)}  # files that do not exist
    forged["s1.7.json"] = [[f.key], 10]
    (seen(data) / "s1.7.json").write_text(json.dumps({"session": "s1", "seen": {}}))
    index.write_text(json.dumps({"format": ledger.FORMAT, "files": forged, "legacy": [0, 0]}))
    r = rec(data, f, "s2")
    assert r.sessions == 2  # names the listing lacks count nothing; s1's two files are one session
    assert ledger.sessions(data, f.key) == 2
    forged = {f"s1.{i}.json": [[f.key], 10] for i in range(3)}
    for i in range(3):  # s1's files, each claimed for another session's name
        (seen(data) / f"x{i}.0.json").write_text(json.dumps({"session": "x", "seen": {}}))
    forged |= {f"x{i}.0.json": [[f.key], 10] for i in range(3)}
    index.write_text(json.dumps({"format": ledger.FORMAT, "files": forged, "legacy": [0, 0]}))
    r = rec(data, f, "s3", threshold=5)
    assert r.staged and r.sessions == 6  # the hook takes the index's word: s1, x0-x2, s2, s3
    notes: list[str] = []
    assert candidates.load(data, f.key, notes=notes, threshold=5) is None
    assert "fewer than the threshold 5" in notes[0]
    assert ledger.sessions(data, f.key) == 3
