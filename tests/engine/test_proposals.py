"""Reviewable proposals: staged once per change of the same bytes, listed, shown with the diff of every
file, approved through the change sets (curator/library/changes.py) with what the person saw, rejected
for good; through the Engine and `memcurate list / show / approve / reject / status`."""

from __future__ import annotations

import json
import os

import pytest

from memcurate.curator.engine import Engine
from memcurate.curator.proposals import actions as proposal_actions
from memcurate.curator.proposals import store
from memcurate.curator.proposals import store as proposal_store
from memcurate.curator.proposals.store import ProposalError


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
    pid = e.stage_proposal(
        "archive",
        "Archive debugging notes",
        "No line links it",
        archive_op(),
        source="check",
        finding={"code": "unlinked", "refs": ["claude/debugging.md"]},
    )
    assert pid and pid.endswith(store.key("archive", archive_op(), "unlinked"))
    assert (
        e.stage_proposal("archive", "Another title", "other words", archive_op(), source="tidy")
        is None
    )
    # another base (the file changed) or another kind is another proposal
    assert e.stage_proposal(
        "archive", "Archive debugging notes", "", archive_op(base="b" * 64), source="check"
    )
    assert e.stage_proposal("unlink", "Unlink", "", archive_op(), source="check")
    [record] = [r for r in e.proposals() if r["id"] == pid]  # one second: ids sort by their key
    assert record == {
        **record,
        "format": 1,
        "kind": "archive",
        "state": "pending",
        "source": "check",
        "title": "Archive debugging notes",
        "reason": "No line links it",
        "edit": None,
        "decision": None,
        "finding": {"code": "unlinked", "refs": ["claude/debugging.md"]},
    }
    assert proposal_store.counts(e.data) == {
        "pending": 3,
        "approved": 0,
        "rejected": 0,
        "damaged": 0,
    }


def test_a_rejected_proposal_is_never_staged_again_for_the_same_bytes(proj):
    e = proj["engine"]
    pid = e.stage_proposal("archive", "Archive it", "why", archive_op(), source="check")
    proposal_actions.reject(e, "proposal/" + pid, "I still use it")
    assert e.stage_proposal("archive", "Archive it", "why", archive_op(), source="check") is None
    assert e.proposals() == []
    [done] = e.proposals(every=True)
    assert done["state"] == "rejected" and done["decision"]["reason"] == "I still use it"
    with pytest.raises(ProposalError, match="already rejected"):
        proposal_actions.reject(e, pid)


def test_bad_proposals_are_refused_before_anything_is_written(proj):
    e = proj["engine"]
    with pytest.raises(ProposalError, match="kind"):
        e.stage_proposal("rewrite", "t", "r", archive_op(), source="check")
    with pytest.raises(ProposalError, match="source"):
        e.stage_proposal("archive", "t", "r", archive_op(), source="cron")
    with pytest.raises(ProposalError, match="op 1"):
        e.stage_proposal("archive", "t", "r", [{"ref": "x"}], source="check")
    assert not os.path.exists(store.folder(e.data)) or os.listdir(store.folder(e.data)) == []


def test_a_secret_in_a_finding_is_not_stored_in_the_record(proj):
    e = proj["engine"]
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    pid = e.stage_proposal(
        "update",
        f"Remove the token {key}",
        f"claude/x.md holds {key}",
        archive_op(),
        source="check",
    )
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
        proposal_actions.reject(e, pid)
    assert proposal_store.counts(e.data)["damaged"] == 1
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
    ops = [
        {"op": "write", "ref": "decision/x", "base_hash": None, "text": "old\n"},
        {"op": "add_line", "ref": "decision/x"},
    ]
    pid = e.stage_proposal("adopt", "Adopt", "", ops, source="library")
    store.set_edit(proj["data"], pid, [{**ops[0], "text": "new\n"}, ops[1]])
    record = store.find(proj["data"], pid)
    assert store.ops_of(record)[0]["text"] == "new\n" and record["ops"][0]["text"] == "old\n"
    json.dumps(record)


# -- through the CLI, on a real change: archiving a topic file of Claude's --------------------------------

TOPIC = (
    "---\nname: Debugging notes\ndescription: How the flaky test was found\ntype: project\n---\n"
    "The flaky test needs TMPDIR=/var/tmp [bold]on CI[/bold] \x1b[31mred\x1b[0m.\n"
)
MEMORY_MD = "# Memory\n\n- [Debugging notes](debugging.md) — how the flaky test was found\n- Use uv, not pip\n"


@pytest.fixture
def claude(proj) -> dict:
    """Claude's topic file and MEMORY.md in the memory root, and a proposal to archive the file."""
    root = proj["root"]
    with open(os.path.join(root, "debugging.md"), "w") as f:
        f.write(TOPIC)
    with open(os.path.join(root, "MEMORY.md"), "w") as f:
        f.write(MEMORY_MD)
    e = proj["engine"]
    base = e.library_entry("claude/debugging.md").hash
    proj["pid"] = e.stage_proposal(
        "archive",
        "Archive Claude's debugging notes",
        "Nothing refers to it any more",
        archive_op(base=base),
        source="check",
        finding={"code": "stale-file", "refs": ["claude/debugging.md"]},
    )
    return proj


def cli(capsys, *args: str) -> tuple[int, str, str]:
    from memcurate.curator.cli import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys, *args: str) -> tuple[int, dict]:
    code, out, _ = cli(capsys, *args, "--json")
    return code, json.loads(out)


def files_of(root: str) -> dict[str, bytes]:
    out = {}
    for folder, _dirs, names in os.walk(root):
        for n in names:
            if not n.startswith("."):
                path = os.path.join(folder, n)
                with open(path, "rb") as f:
                    out[os.path.relpath(path, root)] = f.read()
    return out


def test_list_show_and_approve_a_proposal_through_the_cli(claude, capsys):
    p, pid = claude["project"], "proposal/" + claude["pid"]
    code, doc = cli_json(capsys, "list", "--project", p)
    [item] = [i for i in doc["items"] if i["kind"] == "proposal"]
    assert (
        code == 0 and item["id"] == pid and item["state"] == "ready" and item["action"] == "archive"
    )
    assert item["title"] == "Archive Claude's debugging notes" and not item["blocked"]
    code, out, _ = cli(capsys, "list", "--project", p)
    assert pid in out and "proposal archive" in out

    code, out, _ = cli(capsys, "show", pid, "--project", p)
    assert code == 0 and "Nothing refers to it any more" in out and "stale-file" in out
    # the file leaves its place
    assert "-The flaky test needs TMPDIR=/var/tmp [bold]on CI[/bold] red." in out
    assert "\x1b" not in out  # terminal output is data: the escape in Claude's file is not sent
    code, shown = cli_json(capsys, "show", pid, "--project", p)
    assert {f["where"] for f in shown["files"]} >= {"debugging.md"} and shown["fingerprint"]

    before = files_of(claude["root"])
    code, doc = cli_json(capsys, "approve", pid, "--project", p)
    assert code == 0 and [s["id"] for s in doc["saved"]] == [pid]
    after = files_of(claude["root"])
    assert "debugging.md" not in after
    # bytes kept
    assert after[os.path.join(".archive", "claude", "debugging.md")] == before["debugging.md"]
    code, doc = cli_json(capsys, "status", "--project", p)
    assert doc["proposals"] == {"pending": 0, "approved": 1, "rejected": 0, "damaged": 0}
    code, doc = cli_json(capsys, "list", "--all", "--project", p)
    assert [i["state"] for i in doc["items"] if i["id"] == pid] == ["saved"]


def test_approving_in_text_names_the_files_it_changed(claude, capsys):
    code, out, _ = cli(
        capsys, "approve", "proposal/" + claude["pid"], "--project", claude["project"]
    )
    assert code == 0 and "(nothing written)" not in out
    assert ".archive/claude/debugging.md" in out and "debugging.md" in out


def test_reject_through_the_cli_records_the_reason_and_writes_nothing(claude, capsys):
    p, pid = claude["project"], "proposal/" + claude["pid"]
    before = files_of(claude["root"])
    code, doc = cli_json(capsys, "reject", pid, "--reason", "I still read it", "--project", p)
    assert code == 0 and doc["rejected"] == [pid]
    assert files_of(claude["root"]) == before
    assert store.find(claude["data"], pid)["decision"]["reason"] == "I still read it"
    e = claude["engine"]
    assert (
        e.stage_proposal(
            "archive", "Archive it", "", store.find(claude["data"], pid)["ops"], source="check"
        )
        is None
    )
    code, doc = cli_json(capsys, "approve", pid, "--project", p)
    assert code == 1 and "already rejected" in doc["errors"][0]["error"]


def test_an_approval_after_a_hand_edit_is_refused_and_writes_nothing(claude, capsys):
    p, pid = claude["project"], "proposal/" + claude["pid"]
    seen = proposal_actions.view(claude["engine"], pid)
    with open(os.path.join(claude["root"], "debugging.md"), "a") as f:
        f.write("One more line, by hand.\n")
    before = files_of(claude["root"])
    with pytest.raises(ProposalError, match="nothing was written"):
        proposal_actions.approve(claude["engine"], pid, seen)
    code, doc = cli_json(capsys, "approve", pid, "--project", p)
    assert code == 1 and "BLOCK" in doc["errors"][0]["error"]
    assert files_of(claude["root"]) == before
    view = proposal_actions.view(
        claude["engine"], pid
    )  # shows the new state: stale, its base is gone
    assert view["record"]["state"] == "pending" and view["issues"][0]["code"] == "stale"
    code, doc = cli_json(capsys, "list", "--project", p)
    assert [i["blocked"] for i in doc["items"] if i["id"] == pid] == [True]


def test_an_approval_refuses_what_the_person_did_not_see(claude):
    """Approving passes the fingerprint of the plan shown: another plan (here, one never shown) is refused."""
    e, pid = claude["engine"], claude["pid"]
    before = files_of(claude["root"])
    with pytest.raises(ProposalError, match="nothing was written"):
        proposal_actions.approve(e, pid, "0" * 64)
    assert files_of(claude["root"]) == before and e.proposals()[0]["state"] == "pending"
    proposal_actions.approve(e, pid, proposal_actions.view(e, pid))
    assert e.proposals(every=True)[0]["state"] == "approved"


def test_a_proposal_whose_ops_cannot_be_planned_is_an_error_item_not_a_crash(
    claude, capsys, monkeypatch
):
    from memcurate.curator.library.entries import LibraryError

    def broken(context, ops):
        raise LibraryError("claude/debugging.md cannot be read: Permission denied")

    monkeypatch.setattr("memcurate.curator.library.changes.plan", broken)
    [item] = [i for i in claude["engine"].review_items(kind="proposal")]
    assert item.state == "error" and "Permission denied" in item.error
