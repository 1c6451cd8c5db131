"""Reviewable proposals: staged once per change of the same bytes, listed, shown with the diff of every
file, approved through the change sets (curator/library/changes.py) with what the person saw, rejected
for good; through the Engine and `memcurate list / show / approve / reject / status`."""

from __future__ import annotations

import json
import os

import pytest

from curator.engine import Engine
from curator.proposals import store
from curator.proposals.store import ProposalError


@pytest.fixture
def proj(project) -> dict:
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text("backend: offline\n")
    engine = Engine(project)
    os.makedirs(engine.root, exist_ok=True)
    yield {"project": str(project), "engine": engine, "data": engine.data, "root": engine.root}
    engine.close()


def archive_op(ref="claude/debugging.md", base="a" * 64) -> list[dict]:
    return [{"op": "archive", "ref": ref, "base_hash": base}]


def test_staging_is_idempotent_by_kind_refs_and_base_hashes(proj):
    e = proj["engine"]
    pid = e.stage_proposal("archive", "Archive debugging notes", "No line links it", archive_op(), source="check",
                           finding={"code": "unlinked", "refs": ["claude/debugging.md"]})
    assert pid and pid.endswith(store.key("archive", archive_op()))
    assert e.stage_proposal("archive", "Another title", "other words", archive_op(), source="tidy") is None
    # another base (the file changed) or another kind is another proposal
    assert e.stage_proposal("archive", "Archive debugging notes", "", archive_op(base="b" * 64), source="check")
    assert e.stage_proposal("unlink", "Unlink", "", archive_op(), source="check")
    assert [r["id"] for r in e.proposals()][0] == pid
    record = e.proposals()[0]
    assert record == {**record, "format": 1, "kind": "archive", "state": "pending", "source": "check",
                      "title": "Archive debugging notes", "reason": "No line links it", "edit": None,
                      "decision": None, "finding": {"code": "unlinked", "refs": ["claude/debugging.md"]}}
    assert e.proposal_counts() == {"pending": 3, "approved": 0, "rejected": 0, "damaged": 0}


def test_a_rejected_proposal_is_never_staged_again_for_the_same_bytes(proj):
    e = proj["engine"]
    pid = e.stage_proposal("archive", "Archive it", "why", archive_op(), source="check")
    e.reject_proposal("proposal/" + pid, "I still use it")
    assert e.stage_proposal("archive", "Archive it", "why", archive_op(), source="check") is None
    assert e.proposals() == []
    [done] = e.proposals(every=True)
    assert done["state"] == "rejected" and done["decision"]["reason"] == "I still use it"
    with pytest.raises(ProposalError, match="already rejected"):
        e.reject_proposal(pid)


def test_bad_proposals_are_refused_before_anything_is_written(proj):
    e = proj["engine"]
    with pytest.raises(ProposalError, match="kind"):
        e.stage_proposal("rewrite", "t", "r", archive_op(), source="check")
    with pytest.raises(ProposalError, match="source"):
        e.stage_proposal("archive", "t", "r", archive_op(), source="cron")
    with pytest.raises(ProposalError, match="op 1"):
        e.stage_proposal("archive", "t", "r", [{"ref": "x"}], source="check")
    assert not os.path.exists(e.proposals_dir) or os.listdir(e.proposals_dir) == []


def test_a_secret_in_a_finding_is_not_stored_in_the_record(proj):
    e = proj["engine"]
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    pid = e.stage_proposal("update", f"Remove the token {key}", f"claude/x.md holds {key}", archive_op(),
                           source="check")
    text = open(store.record_path(proj["data"], pid), encoding="utf-8").read()
    assert key not in text and "REDACTED" in text


def test_a_hand_damaged_record_is_named_never_a_crash(proj):
    e = proj["engine"]
    pid = e.stage_proposal("archive", "Archive it", "why", archive_op(), source="check")
    path = store.record_path(proj["data"], pid)
    with open(path, "w") as f:
        f.write('{"format": 1, "id": "%s", "kind": "archive", "state": "maybe"}' % pid)
    assert e.proposals(every=True) == []
    [(bad, why)] = store.scan(proj["data"])[1]
    assert bad == pid and path in why and "state" in why
    with pytest.raises(ProposalError, match="fix or delete"):
        e.reject_proposal(pid)
    assert e.proposal_counts()["damaged"] == 1
    with open(path, "w") as f:
        f.write("{not json")
    assert path in store.scan(proj["data"])[1][0][1]


def test_an_id_prefix_finds_one_proposal_and_an_ambiguous_one_says_so(proj):
    e = proj["engine"]
    a = e.stage_proposal("archive", "A", "", archive_op("claude/a.md"), source="check")
    e.stage_proposal("archive", "B", "", archive_op("claude/b.md"), source="check")
    assert store.find(proj["data"], "proposal/" + a)["id"] == a
    assert store.find(proj["data"], a[:-2])["id"] == a
    with pytest.raises(ProposalError, match="ambiguous"):
        store.find(proj["data"], a[:8])
    with pytest.raises(ProposalError, match="no proposal"):
        store.find(proj["data"], "../x")


def test_an_edit_replaces_the_text_of_the_one_memory_file_written(proj):
    e = proj["engine"]
    ops = [{"op": "write", "ref": "decision/x", "base_hash": None, "text": "old\n"}, {"op": "add_line", "ref": "decision/x"}]
    pid = e.stage_proposal("adopt", "Adopt", "", ops, source="library")
    store.set_edit(proj["data"], pid, [{**ops[0], "text": "new\n"}, ops[1]])
    record = store.find(proj["data"], pid)
    assert store.ops_of(record)[0]["text"] == "new\n" and record["ops"][0]["text"] == "old\n"
    json.dumps(record)
