"""Review mode: Claude's own memory writes denied, staged as claude/<id>, verified, approved or rejected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli, run_hook
from test_guard import MEMORY_MD, call, decision, payload, setup  # noqa: F401 (setup is a fixture)

from memcurate.curator.candidates import claude_writes
from memcurate.curator.candidates.claude_writes import ClaudeWriteError, WriteConflict
from memcurate.curator.engine import Engine
from memcurate.curator.review import claude_write_actions

TOPIC = """---
name: build commands
description: how this project is built and tested
type: project
---
Build with `make all`; test with `make test`.
"""


def stage(project, tool: str, tool_input: dict) -> str:
    """Call the guard in review mode; the staged id (the reason names it)."""
    out, err = call(project, payload(tool, tool_input, project), review=True)
    reason = decision(out)
    assert err == "" and reason is not None
    assert "queued for the person's approval" in reason and "Do not retry" in reason
    return reason.split("approval as ", 1)[1].split(" ", 1)[0]


def only_record(project) -> dict:
    records = claude_writes.records(project / ".memcurate")
    assert len(records) == 1
    return records[0]


def pending_writes(engine) -> list[dict]:
    """The staged writes waiting for review, as `memcurate list --json` gives them."""
    return [i.as_dict() for i in engine.review_items() if i.kind == "claude-write"]


def test_review_mode_end_to_end_through_the_real_commands(setup):
    """Claude Code runs `memcurate hook --review-auto-memory`: its Write into the memory folder is denied,
    `memcurate list` shows it, `memcurate show` shows what approving writes, `memcurate approve ID` saves it."""
    project, root = setup
    target = root / "deploy.md"
    env = {"CLAUDE_PROJECT_DIR": str(project)}
    hook = run_hook(
        payload("Write", {"file_path": str(target), "content": TOPIC}, project),
        cwd=project,
        env=env,
        args=["--review-auto-memory"],
    )
    assert hook.returncode == 0 and hook.stderr == b""
    reason = decision(hook.stdout.decode())
    assert "queued for the person's approval" in reason and not target.exists()
    listed = run_cli("list", "--json", cwd=project)
    assert listed.returncode == 0, listed.stderr
    (item,) = [i for i in json.loads(listed.stdout)["items"] if i["kind"] == "claude-write"]
    assert (item["state"], item["title"], item["where"], item["action"]) == (
        "ready",
        "build commands",
        "deploy.md",
        "create",
    )
    assert item["id"] in reason  # the id Claude was told is the id the person approves
    text = run_cli("list", cwd=project)
    assert item["id"] in text.stdout and "claude-write" in text.stdout
    shown = run_cli("show", item["id"], cwd=project)
    assert shown.returncode == 0 and "+Build with `make all`" in shown.stdout
    approved = run_cli("approve", item["id"][:14], cwd=project)  # a unique prefix will do
    assert approved.returncode == 0, approved.stderr
    assert target.read_text() == TOPIC  # exactly what Claude meant to write
    # Claude's index and memcurate's sections untouched
    assert (root / "MEMORY.md").read_text() == MEMORY_MD
    after = json.loads(run_cli("list", "--json", cwd=project).stdout)["items"]
    assert [i for i in after if i["kind"] == "claude-write"] == []


def test_write_is_denied_staged_and_saved_on_approve(setup):
    project, root = setup
    wid = stage(project, "Write", {"file_path": str(root / "build.md"), "content": TOPIC})
    assert wid.startswith("claude/") and not (root / "build.md").exists()
    rec = only_record(project)
    assert (rec["tool"], rec["where"], rec["base_hash"], rec["text"], rec["state"]) == (
        "Write",
        "build.md",
        None,
        TOPIC,
        "pending",
    )
    assert rec["session_id"] == "s-1" and rec["path"] == str(root / "build.md")
    engine = Engine(project)
    items = pending_writes(engine)
    assert [(i["id"], i["kind"], i["title"], i["where"], i["blocked"]) for i in items] == [
        (wid, "claude-write", "build commands", "build.md", False)
    ]
    assert [i["code"] for i in items[0]["issues"]] == ["unlinked"]  # no MEMORY.md line links to it
    view = claude_write_actions.view(engine, wid)
    assert (
        view["diff"].startswith("--- /dev/null\n+++ b/build.md\n")
        and "+type: project\n" in view["diff"]
    )
    claude_write_actions.approve(engine, wid)
    assert (root / "build.md").read_text() == TOPIC
    assert only_record(project)["state"] == "saved" and pending_writes(engine) == []
    with pytest.raises(ClaudeWriteError, match="saved, not pending"):
        claude_write_actions.approve(engine, wid)


def test_edit_and_multiedit_stage_the_file_as_it_would_be(setup):
    project, root = setup
    wid = stage(
        project,
        "Edit",
        {"file_path": str(root / "notes.md"), "old_string": "old", "new_string": "new"},
    )
    rec = only_record(project)
    assert (rec["base_text"], rec["text"]) == ("old note\n", "new note\n")
    # a second call to the same target updates the one pending record, on top of its staged text
    again = stage(
        project,
        "MultiEdit",
        {
            "file_path": str(root / "notes.md"),
            "edits": [
                {"old_string": "new note", "new_string": "newer note"},
                {"old_string": "\n", "new_string": "!\n"},
            ],
        },
    )
    assert again == wid
    rec = only_record(project)
    assert (rec["base_text"], rec["text"], rec["tools"]) == (
        "old note\n",
        "newer note!\n",
        ["Edit", "MultiEdit"],
    )
    assert "-old note\n+newer note!\n" in claude_write_actions.view(Engine(project), wid)["diff"]
    assert (root / "notes.md").read_text() == "old note\n"


def test_an_edit_that_does_not_match_is_denied_and_not_staged(setup):
    project, root = setup
    out, _ = call(
        project,
        payload(
            "Edit",
            {"file_path": str(root / "notes.md"), "old_string": "absent", "new_string": "x"},
            project,
        ),
        review=True,
    )
    assert "old_string was not found" in decision(out) and "not queued" in decision(out)
    assert claude_writes.records(project / ".memcurate") == []


def test_a_huge_write_is_denied_not_staged(setup):
    project, root = setup
    out, _ = call(
        project,
        payload("Write", {"file_path": str(root / "big.md"), "content": "x" * 300_000}, project),
        review=True,
    )
    assert "hooks.review_max_bytes" in decision(out)
    assert claude_writes.records(project / ".memcurate") == []


def test_config_turns_review_mode_on(setup):
    project, root = setup
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text("hooks:\n  review_auto_memory: true\n")
    out, _ = call(
        project, payload("Write", {"file_path": str(root / "n.md"), "content": "x"}, project)
    )
    assert "queued" in decision(out)
    # and off, a write into the auto-memory folder that is not memcurate's passes
    (project / ".claude" / "memcurate.yaml").write_text("hook:\n  review_auto_memory: false\n")
    out, _ = call(
        project, payload("Write", {"file_path": str(root / "n.md"), "content": "x"}, project)
    )
    assert out == ""


def test_approve_is_a_conflict_when_the_file_changed(setup):
    project, root = setup
    wid = stage(
        project,
        "Edit",
        {"file_path": str(root / "notes.md"), "old_string": "old", "new_string": "new"},
    )
    (root / "notes.md").write_text("changed by hand\n")
    engine = Engine(project)
    with pytest.raises(WriteConflict, match="changed since"):
        claude_write_actions.approve(engine, wid)
    assert (root / "notes.md").read_text() == "changed by hand\n"
    assert only_record(project)["state"] == "pending"


def test_approve_of_a_new_file_is_a_conflict_when_one_appeared(setup):
    project, root = setup
    wid = stage(project, "Write", {"file_path": str(root / "fresh.md"), "content": "mine\n"})
    (root / "fresh.md").write_text("someone else's\n")
    with pytest.raises(WriteConflict, match="was created"):
        claude_write_actions.approve(Engine(project), wid)
    assert (root / "fresh.md").read_text() == "someone else's\n"


def test_memory_md_approve_keeps_memcurates_sections_as_they_are_now(setup):
    project, root = setup
    wid = stage(
        project,
        "Edit",
        {
            "file_path": str(root / "MEMORY.md"),
            "old_string": "- a last note of Claude's",
            "new_string": "- a last note of Claude's\n- [build](build.md) \u2014 how to build",
        },
    )
    # memcurate saves meanwhile: its section gains an entry and a new section appears
    now = MEMORY_MD.replace(
        "## Key Decisions\n", "## Key Decisions\n- [Use Postgres](decision/use-pg.md)\n"
    )
    now += (
        "\n<!-- memcurate:begin section=runbook budget=20 -->\n## Runbooks\n"
        "- [Fix flaky CI](runbook/fix-ci.md)\n<!-- memcurate:end section=runbook -->\n"
    )
    (root / "MEMORY.md").write_text(now)
    claude_write_actions.approve(Engine(project), wid)
    saved = (root / "MEMORY.md").read_text()
    assert saved == now.replace(
        "- a last note of Claude's\n",
        "- a last note of Claude's\n- [build](build.md) \u2014 how to build\n",
    )
    assert saved.count("memcurate:begin section=decision") == 1 and "decision/use-pg.md" in saved


def test_memory_md_approve_is_a_conflict_when_claudes_part_changed(setup):
    project, root = setup
    wid = stage(
        project,
        "Edit",
        {
            "file_path": str(root / "MEMORY.md"),
            "old_string": "make all",
            "new_string": "make build",
        },
    )
    (root / "MEMORY.md").write_text(MEMORY_MD.replace("# Claude's notes", "# Notes"))
    with pytest.raises(WriteConflict):
        claude_write_actions.approve(Engine(project), wid)


def test_a_secret_blocks_approval(setup):
    project, root = setup
    secret = "AKIA" + "ABCDEFGHIJKLMNOP"
    wid = stage(
        project, "Write", {"file_path": str(root / "aws.md"), "content": f"The key is {secret}\n"}
    )
    engine = Engine(project)
    (item,) = pending_writes(engine)
    assert item["blocked"] and [i["code"] for i in item["issues"] if i["severity"] == "BLOCK"] == [
        "secret"
    ]
    with pytest.raises(ClaudeWriteError, match="secret"):
        claude_write_actions.approve(engine, wid)
    assert not (root / "aws.md").exists()


@pytest.mark.parametrize(
    "text,codes",
    [
        ("---\nname: [unclosed\n---\nbody\n", [("BLOCK", "front-matter")]),
        ("---\nname: x\n", [("BLOCK", "front-matter")]),
        ("---\nname: x\ndescription: y\n---\nbody\n", [("ADVISORY", "front-matter")]),
        ("---\nname: x\ndescription: y\ntype: notes\n---\nbody\n", [("ADVISORY", "front-matter")]),
        (TOPIC, []),
        ("no front matter\n", []),
    ],
    ids=["unparsable", "unclosed", "incomplete", "bad-type", "complete", "none"],
)
def test_front_matter_checks(setup, text, codes):
    project, root = setup
    (root / "MEMORY.md").write_text(MEMORY_MD + "- [t](topic.md)\n")
    stage(project, "Write", {"file_path": str(root / "topic.md"), "content": text})
    issues = pending_writes(Engine(project))[0]["issues"]
    assert [(i["severity"], i["code"]) for i in issues] == codes


def test_a_topic_file_linked_from_a_pending_memory_md_write_is_not_unlinked(setup):
    project, root = setup
    stage(project, "Write", {"file_path": str(root / "topic.md"), "content": TOPIC})
    stage(
        project,
        "Edit",
        {
            "file_path": str(root / "MEMORY.md"),
            "old_string": "# Claude's notes\n",
            "new_string": "# Claude's notes\n- [topic](./topic.md)\n",
        },
    )
    items = {i["where"]: i for i in pending_writes(Engine(project))}
    assert items["topic.md"]["issues"] == []


def test_memory_md_over_the_load_limit_is_advised(setup):
    project, root = setup
    lines = "".join(f"- note {i}\n" for i in range(250))
    stage(project, "Write", {"file_path": str(root / "MEMORY.md"), "content": MEMORY_MD + lines})
    (issue,) = pending_writes(Engine(project))[0]["issues"]
    assert (issue["severity"], issue["code"]) == ("ADVISORY", "budget") and "not loaded" in issue[
        "message"
    ]


def test_reject_writes_nothing_and_keeps_the_reason(setup):
    project, root = setup
    wid = stage(project, "Write", {"file_path": str(root / "x.md"), "content": "x\n"})
    # a unique prefix
    claude_write_actions.reject(
        Engine(project), wid[len("claude/") : 12], reason="not worth keeping"
    )
    rec = only_record(project)
    assert rec["state"] == "rejected" and rec["history"][-1]["why"] == "not worth keeping"
    assert not (root / "x.md").exists()
    # a later write to the same target starts a new pending record
    assert stage(project, "Write", {"file_path": str(root / "x.md"), "content": "y\n"}) != wid


def test_unknown_and_ambiguous_ids(setup):
    project, root = setup
    engine = Engine(project)
    with pytest.raises(ClaudeWriteError, match="no staged write"):
        claude_write_actions.view(engine, "claude/nope")
    stage(project, "Write", {"file_path": str(root / "a.md"), "content": "a\n"})
    stage(project, "Write", {"file_path": str(root / "b.md"), "content": "b\n"})
    with pytest.raises(ClaudeWriteError, match="ambiguous"):
        claude_write_actions.view(engine, "claude/2")


def test_status_counts_claude_writes(setup):
    project, root = setup
    stage(project, "Write", {"file_path": str(root / "a.md"), "content": "a\n"})
    (project / ".memcurate" / "claude-writes" / "garbage.json").write_text("{not json")
    p = run_cli("status", "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["claude_writes"] == {
        "pending": 1,
        "saved": 0,
        "rejected": 0,
        "unreadable": 1,
    }
    assert Path(only_record(project)["path"]) == root / "a.md"
