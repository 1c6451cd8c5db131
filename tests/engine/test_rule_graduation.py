"""Issue 13's must-show, end to end: the same failing pytest error in three sessions (different temp
paths, addresses, timestamps) through the real hook or the real triage gives ONE candidate; approving
it writes ONE rule file whose `paths:` cover the tests; a fourth occurrence adds evidence, not a copy;
a rejected signature does not come back; two approvals at once write once."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import claude_transcripts, memcurate_exe
from synthetic import Transcript, pytest_failure, text, tool
from test_review_cli import cli, cli_json

from memcurate.hooks.dispatch import run as hook

MARKER = re.compile(r"<!-- memcurate:rule/([0-9a-f]{12}) -->")
COMMAND = "uv run pytest -x tests/test_store.py"


def other_output(n: int) -> str:
    """Another test failing the same way in every session (its numbers differ)."""
    return f"""tests/engine/test_cli.py F                                                      [100%]

=================================== FAILURES ===================================
__________________________________ test_help ___________________________________

    def test_help():
>       assert run("--help").code == 0
E       AssertionError: assert {n + 1} == 0

tests/engine/test_cli.py:{7 + n}: AssertionError
=========================== short test summary info ============================
FAILED tests/engine/test_cli.py::test_help - AssertionError: assert {n + 1} == 0
============================== 1 failed in 0.{n}1s ===============================
"""


@pytest.fixture
def app(project) -> Path:
    for rel in ("tests/test_store.py", "tests/engine/test_cli.py", "app/store.py", "app/cli.py"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("# code\n")
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text("backend: offline\n")
    return project


def fail_in_session(project: Path, session: str, command: str, output: str) -> None:
    """A Bash call of Claude Code's that failed, through the real hook (PostToolUseFailure)."""
    payload = {
        "hook_event_name": "PostToolUseFailure",
        "session_id": session,
        "cwd": str(project),
        "transcript_path": str(claude_transcripts() / f"{session}.jsonl"),
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Run the tests"},
        "tool_use_id": f"toolu_{session[-6:]}",
        "error": f"Exit code 1\n{output}",
        "is_interrupt": False,
    }
    assert (
        hook(json.dumps(payload).encode(), {**os.environ, "CLAUDE_PROJECT_DIR": str(project)}) == 0
    )


def rules_of(doc: dict) -> list[dict]:
    return [i for i in doc["items"] if i["kind"] == "rule"]


def rule_files(project: Path) -> dict[str, str]:
    return {
        str(p.relative_to(project)): p.read_text()
        for p in (project / ".claude" / "rules").rglob("*.md")
    }


def covered(project: Path, globs: list[str]) -> set[str]:
    return {str(p.relative_to(project)) for g in globs for p in project.glob(g)}


def approve_and_check_one_file(capsys, project: Path, rid: str) -> tuple[str, str]:
    code, out, err = cli(capsys, "approve", rid, "--project", str(project))
    assert code == 0, err
    [(name, body)] = rule_files(project).items()
    assert name.startswith(".claude/rules/memcurate/") and name in out
    assert MARKER.findall(body) == [rid.removeprefix("rule/")]
    assert body.startswith("---\n")
    paths = yaml.safe_load(body.split("---\n")[1])["paths"]
    assert "tests/test_store.py" in covered(project, paths)
    return name, body


def test_three_sessions_of_one_pytest_failure_graduate_to_one_rule(app, capsys):
    for n in range(3):
        fail_in_session(app, f"sess-{n}", COMMAND, pytest_failure(n))
        # a retry in the session: not counted
        fail_in_session(app, f"sess-{n}", COMMAND, pytest_failure(n + 10))
    code, doc, _ = cli_json(capsys, "list", "--project", str(app))
    [item] = rules_of(doc)
    assert (
        item["state"] == "ready" and item["rule"]["count"] == 3 and item["rule"]["kind"] == "test"
    )
    name, body = approve_and_check_one_file(capsys, app, item["id"])

    fail_in_session(app, "sess-3", COMMAND, pytest_failure(3))  # after graduation
    assert rule_files(app) == {name: body}  # still one file, one bullet
    code, doc, _ = cli_json(capsys, "show", item["id"], "--project", str(app))
    assert code == 0 and len(doc["evidence"]) == 4 and doc["item"]["state"] == "saved"
    assert "seen in 1 session since it was written" in doc["decision"]["reasons"]
    code, doc, _ = cli_json(capsys, "status", "--project", str(app))
    assert doc["rules"]["recurring"][0]["sessions"] == 4 and doc["rules"]["pending"] == 0

    # Another signature, rejected: two more sessions do not bring it back.
    for n in range(3):
        fail_in_session(app, f"other-{n}", "pytest tests/engine/test_cli.py", other_output(n))
    code, doc, _ = cli_json(capsys, "list", "--project", str(app))
    [other] = rules_of(doc)
    assert (
        other["id"] != item["id"]
        and "test_help" in other["rule"]["signature"]
        and other["rule"]["count"] == 3
    )
    code, out, err = cli(capsys, "reject", other["id"], "--project", str(app))
    assert code == 0, err
    for n in range(3, 5):
        fail_in_session(app, f"other-{n}", "pytest tests/engine/test_cli.py", other_output(n))
    code, doc, _ = cli_json(capsys, "list", "--project", str(app))
    assert rules_of(doc) == []
    code, doc, _ = cli_json(capsys, "status", "--project", str(app))
    assert (doc["rules"]["pending"], doc["rules"]["approved"], doc["rules"]["rejected"]) == (
        0,
        1,
        1,
    )
    assert rule_files(app) == {name: body}


def session_transcript(n: int) -> Transcript:
    """A session where the tests fail, Claude fixes the store, and they pass."""
    t = Transcript(session=f"0b5e6a34-1111-4222-8333-44445555000{n}", stamp=f"2026-11-1{n}T10:00")
    t.user("Run the tests and fix what fails.")
    t.assistant(tool(f"t{n}a", "Bash", command=COMMAND))
    t.result(f"t{n}a", f"Exit code 1\n{pytest_failure(n)}", is_error=True)
    t.assistant(
        text("The store writes into a folder that does not exist yet: I create it before saving."),
        tool(
            f"t{n}b",
            "Edit",
            file_path="/home/dev/app/app/store.py",
            old_string="with open(",
            new_string="os.makedirs(self.root, exist_ok=True)\n        with open(",
        ),
    )
    t.result(f"t{n}b", "The file /home/dev/app/app/store.py has been updated.")
    t.assistant(tool(f"t{n}c", "Bash", command=COMMAND))
    t.result(f"t{n}c", "12 passed in 0.4s")
    t.assistant(text("Fixed: the store now creates its folder before writing; all 12 tests pass."))
    return t


def test_three_triaged_transcripts_graduate_the_same_way(app, capsys, tmp_path):
    paths = [str(session_transcript(n).write(tmp_path / "t" / f"s{n}.jsonl")) for n in range(3)]
    code, out, err = cli(capsys, "triage", *paths, "--project", str(app))
    assert code == 0, err
    code, doc, _ = cli_json(capsys, "show", "rule/", "--project", str(app))
    assert code == 0 and len(doc["evidence"]) == 3
    assert all(e["source"] == "transcript" for e in doc["evidence"])
    assert any(e["fix"] for e in doc["evidence"])
    approve_and_check_one_file(capsys, app, doc["item"]["id"])


def test_two_approvals_at_once_write_once(app, capsys):
    for n in range(3):
        fail_in_session(app, f"sess-{n}", COMMAND, pytest_failure(n))
    code, doc, _ = cli_json(capsys, "list", "--project", str(app))
    [item] = rules_of(doc)
    procs = [
        subprocess.Popen(
            memcurate_exe() + ["approve", item["id"], "--project", str(app)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert sorted(code for code, _ in results) == [0, 1], results
    [body] = rule_files(app).values()
    assert MARKER.findall(body) == [item["id"].removeprefix("rule/")]
