"""The staging directory: whole triages, state records and their life cycle, atomic files."""

from __future__ import annotations

import os

import pytest

from memcurate.curator.candidates import staging
from memcurate.curator.util.atomic import write_bytes


def doc(tid: str, triggered=("decision", "runbook")) -> dict:
    cats = {
        n: {"score": 0.9 if n in triggered else 0.1, "threshold": 0.5, "triggered": n in triggered}
        for n in dict.fromkeys(("decision", "constraint", "runbook", *triggered))
    }
    return {
        "format": staging.FORMAT,
        "id": tid,
        "created": "2026-11-22T10:00:00Z",
        "event": "Stop",
        "source": {
            "session": "s",
            "transcript": "/t.jsonl",
            "subagent": False,
            "byte_range": [0, 10],
            "turns": [1, 2],
        },
        "stats": {},
        "categories": cats,
    }


def test_a_triage_appears_whole_and_its_triggered_categories_start_triaged(tmp_path):
    folder = staging.stage(tmp_path, doc("20261122T100000Z-aaaa0001"))
    assert folder and os.path.isdir(folder)
    assert staging.triage_ids(tmp_path) == ["20261122T100000Z-aaaa0001"]
    assert staging.load_triage(tmp_path, "20261122T100000Z-aaaa0001")["source"]["byte_range"] == [
        0,
        10,
    ]
    states = staging.category_states(tmp_path, "20261122T100000Z-aaaa0001")
    assert sorted(states) == ["decision", "runbook"]
    assert all(r["state"] == "triaged" and r["history"][0][0] == "triaged" for r in states.values())
    # one file per triage: states are written from a category's first move on
    assert sorted(os.listdir(folder)) == ["triage.json"]
    # nothing is left in the assembly folder
    assert os.listdir(os.path.join(tmp_path, "staging", ".incoming")) == []


def test_the_same_triage_is_never_staged_twice(tmp_path):
    assert staging.stage(tmp_path, doc("20261122T100000Z-aaaa0001"))
    assert (
        staging.stage(tmp_path, doc("20261122T100000Z-aaaa0001", triggered=("constraint",))) is None
    )
    assert sorted(staging.category_states(tmp_path, "20261122T100000Z-aaaa0001")) == [
        "decision",
        "runbook",
    ]


def test_ids_sort_by_time(tmp_path):
    for tid in (
        "20261122T120000Z-bbbb0002",
        "20261121T090000Z-cccc0003",
        "20261122T100000Z-aaaa0001",
    ):
        staging.stage(tmp_path, doc(tid))
    assert staging.triage_ids(tmp_path) == [
        "20261121T090000Z-cccc0003",
        "20261122T100000Z-aaaa0001",
        "20261122T120000Z-bbbb0002",
    ]


def test_the_life_cycle(tmp_path):
    tid = "20261122T100000Z-aaaa0001"
    staging.stage(tmp_path, doc(tid))
    for state in ("drafting", "drafted", "verifying", "ready", "approved", "saved"):
        rec = staging.set_state(tmp_path, tid, "decision", state)
    assert [h[0] for h in rec["history"]] == [
        "triaged",
        "drafting",
        "drafted",
        "verifying",
        "ready",
        "approved",
        "saved",
    ]
    with pytest.raises(staging.StagingError, match="cannot go from saved to drafting"):
        staging.set_state(tmp_path, tid, "decision", "drafting")
    with pytest.raises(staging.StagingError, match="cannot go from triaged to saved"):
        staging.set_state(tmp_path, tid, "runbook", "saved")
    with pytest.raises(staging.StagingError, match="not a triggered category"):
        staging.set_state(tmp_path, tid, "constraint", "drafting")
    # extra fields (timings, errors) are kept across moves
    staging.set_state(tmp_path, tid, "runbook", "drafting", model="haiku")
    rec = staging.set_state(tmp_path, tid, "runbook", "failed", error="timeout after 60 s")
    assert rec["model"] == "haiku" and rec["error"] == "timeout after 60 s"
    assert staging.set_state(tmp_path, tid, "runbook", "drafting")["state"] == "drafting"  # retry


def test_counts_by_state_and_unreadable_triages(tmp_path):
    staging.stage(tmp_path, doc("20261122T100000Z-aaaa0001"))
    staging.stage(tmp_path, doc("20261122T110000Z-aaaa0002", triggered=("constraint",)))
    staging.set_state(tmp_path, "20261122T100000Z-aaaa0001", "decision", "rejected")
    os.makedirs(os.path.join(tmp_path, "staging", "20261122T120000Z-dead0003"))  # no triage.json
    staging.stage(tmp_path, doc("20261122T130000Z-dead0004"))
    # not a file
    os.makedirs(os.path.join(tmp_path, "staging", "20261122T130000Z-dead0004", "state.log"))
    c = staging.counts(tmp_path)
    assert c == {
        "triages": 4,
        "unreadable": 2,
        "by_state": {"triaged": 2, "rejected": 1},
        "pending": 2,
    }
    with pytest.raises(staging.StagingError, match="missing"):
        staging.category_states(tmp_path, "20261122T120000Z-dead0003")
    with pytest.raises(staging.StagingError, match="unreadable"):
        staging.category_states(tmp_path, "20261122T130000Z-dead0004")


def test_a_move_cut_short_by_a_kill_is_skipped_and_the_next_one_counts(tmp_path):
    tid = "20261122T100000Z-aaaa0001"
    staging.stage(tmp_path, doc(tid))
    staging.set_state(tmp_path, tid, "decision", "drafting")
    log = os.path.join(tmp_path, "staging", tid, "state.log")
    with open(log, "ab") as f:
        f.write(b'{"category": "decision", "state": "dra')  # a writer killed mid-line
    assert staging.category_state(tmp_path, tid, "decision")["state"] == "drafting"
    rec = staging.set_state(tmp_path, tid, "decision", "drafted")
    assert staging.category_state(tmp_path, tid, "decision") == rec
    assert [h[0] for h in rec["history"]] == ["triaged", "drafting", "drafted"]
    with open(log, "ab") as f:  # lines that are not state records, however they got there
        f.write(
            b'\x00garbage\n[1, 2]\n{"category": "decision", "state": "exploded", "updated": "x"}\n'
        )
    assert staging.category_state(tmp_path, tid, "decision")["state"] == "drafted"
    assert staging.set_state(tmp_path, tid, "decision", "verifying")["state"] == "verifying"


def test_threads_moving_categories_of_one_triage_lose_no_move(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    tid = "20261122T100000Z-aaaa0001"
    cats = ("decision", "runbook", "constraint", "tech_debt", "preference", "session_summary")
    staging.stage(tmp_path, doc(tid, triggered=cats))
    path = ("drafting", "drafted", "verifying", "ready")

    def walk(cat):
        for state in path:
            staging.set_state(tmp_path, tid, cat, state, note="x" * 3000)

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(walk, cats))
    states = staging.category_states(tmp_path, tid)
    assert {c: r["state"] for c, r in states.items()} == {c: "ready" for c in cats}
    assert all([h[0] for h in r["history"]] == ["triaged", *path] for r in states.values())


def test_triage_ids_cannot_escape_staging(tmp_path):
    for bad in ("../etc", "a/b", ".incoming", ""):
        with pytest.raises(staging.StagingError):
            staging.triage_dir(tmp_path, bad)


def test_stale_incoming_folders_are_cleaned(tmp_path):
    stale = os.path.join(tmp_path, "staging", ".incoming", "x.123")
    os.makedirs(stale)
    os.utime(stale, (1, 1))
    fresh = os.path.join(tmp_path, "staging", ".incoming", "y.456")
    os.makedirs(fresh)
    assert staging.clean_incoming(tmp_path) == 1
    assert os.listdir(os.path.join(tmp_path, "staging", ".incoming")) == ["y.456"]


def test_atomic_write_leaves_old_or_new_never_a_mix(tmp_path, monkeypatch):
    path = tmp_path / "f.json"
    write_bytes(path, b"old")

    def boom(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError, match="No space left"):
        write_bytes(path, b"new content")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]  # no temp file left behind
