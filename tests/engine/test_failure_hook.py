"""Failure capture in the hook (PostToolUse / PostToolUseFailure on Bash) through hooks.dispatch.run,
with Claude Code's payload shapes: one count per session, one candidate at the threshold, quiet and
import-free for every call that shows no failure; and the `rules:` config section."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from synthetic import pytest_failure

from memcurate.curator import config
from memcurate.curator.rules import candidates, ledger
from memcurate.hooks import dispatch
from memcurate.hooks.failures import strip_wrapper

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = (
    "0b5e6a34-1111-4222-8333-444455556666",
    "7c1d2e3f-2222-4333-8444-555566667777",
    "9e8d7c6b-3333-4444-8555-666677778888",
)


RUNS = [pytest_failure(3), pytest_failure(17), pytest_failure(250)]


def failed(session: str, output: str, command: str = "uv run pytest -x", **extra) -> dict:
    """A PostToolUseFailure payload as Claude Code sends it for a Bash call that exited non-zero."""
    return {
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/-home-dev-app/{session}.jsonl",
        "cwd": "/home/dev/app",
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Run the tests"},
        "tool_use_id": "toolu_01",
        "error": f"Exit code 1\n{output}",
        "is_interrupt": False,
        **extra,
    }


def passed(session: str, command: str, stdout: str, stderr: str = "") -> dict:
    """A PostToolUse payload for a Bash call that exited 0."""
    return {
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/-home-dev-app/{session}.jsonl",
        "cwd": "/home/dev/app",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "toolu_02",
        "tool_response": {
            "stdout": stdout,
            "stderr": stderr,
            "interrupted": False,
            "isImage": False,
        },
    }


def run(project: Path, doc: dict) -> int:
    return dispatch.run(json.dumps(doc).encode(), {"CLAUDE_PROJECT_DIR": str(project)})


def data(project: Path) -> str:
    return str(project / ".memcurate")


def log(project: Path) -> list[str]:
    p = project / ".memcurate" / "log" / "memcurate.log"
    return p.read_text().splitlines() if p.exists() else []


def test_three_sessions_of_the_same_pytest_failure_stage_one_candidate(project):
    key = None
    for i, (session, output) in enumerate(zip(SESSIONS, RUNS), start=1):
        assert run(project, failed(session, output)) == 0
        assert run(project, failed(session, output)) == 0  # a retry in the session
        keys = ledger.keys(data(project))
        assert len(keys) == 1, keys  # temp paths, addresses, line numbers, durations collapse
        key = keys[0]
        assert ledger.sessions(data(project), key) == i
        assert f"failure rule/{key} seen in {i} session" in log(project)[-2]
        assert "not counted twice" in log(project)[-1]
    assert "staged rule/" + key in log(project)[-2]
    c = candidates.load(data(project), key)
    assert c.state == "pending" and c.sessions == 3
    assert c.failure["test"] == "tests/test_store.py::test_save" and c.failure["kind"] == "test"
    assert "tests/test_store.py" in c.failure["files"]
    first = c.occurrences[0]
    assert first["source"] == "hook" and first["command"] == "uv run pytest -x"
    assert first["session"] in SESSIONS and "FileNotFoundError" in first["error"]
    assert not first["error"].startswith("Exit code")
    assert [x.id for x in candidates.all(data(project))] == [key]


def test_an_interrupted_call_is_no_failure(project):
    assert run(project, failed(SESSIONS[0], RUNS[0], is_interrupt=True)) == 0
    assert not (project / ".memcurate").exists()  # not even the project's data dir was looked up


def test_a_piped_checker_that_exited_0_still_counts_its_failures(project):
    tail = "\n".join(RUNS[0].splitlines()[-3:])
    assert run(project, passed(SESSIONS[0], "uv run pytest -q 2>&1 | tail -3", tail)) == 0
    keys = ledger.keys(data(project))
    assert len(keys) == 1 and ledger.sessions(data(project), keys[0]) == 1


@pytest.mark.parametrize(
    "command, stdout",
    [
        ("ls -la", "total 8\ndrwxr-xr-x 2 dev dev 4096 app\n"),
        ("uv run pytest -q", "........ [100%]\n8 passed in 0.12s\n"),  # a checker that passed
        (
            "cat notes.md",
            "## Error handling\nEvery failure is logged.\n",
        ),  # failure words, no checker
        ("grep -rn FAILED .", "tests/x.py:3: FAILED = 1\n"),
    ],
)
def test_other_bash_calls_leave_no_trace(project, command, stdout):
    assert run(project, passed(SESSIONS[0], command, stdout)) == 0
    assert not (project / ".memcurate").exists()


PROBE = """
import json, sys
from memcurate.hooks.dispatch import run
rc = run(sys.stdin.buffer.read())
print(json.dumps({"rc": rc, "modules": sorted(sys.modules)}))
"""


def probe(project: Path, doc: dict) -> set[str]:
    p = subprocess.run(
        [sys.executable, "-c", PROBE],
        input=json.dumps(doc).encode(),
        capture_output=True,
        cwd=project,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT / "dev"), "CLAUDE_PROJECT_DIR": str(project)},
    )
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["rc"] == 0
    return set(report["modules"])


def test_plain_bash_calls_import_nothing_beyond_the_dispatcher(project):
    plain = probe(project, passed(SESSIONS[0], "ls", "a\nb\n"))
    assert (
        not {
            "memcurate.hooks.failures",
            "memcurate.curator.rules",
            "memcurate.curator.config",
            "memcurate.hooks.hook_config",
        }
        & plain
    )
    wordy = probe(project, passed(SESSIONS[0], "cat notes.md", "## Error handling\n"))
    assert "memcurate.curator.rules.signature" in wordy  # asked whether it is a checker: it is not
    assert (
        not {
            "memcurate.curator.rules.ledger",
            "memcurate.curator.config",
            "memcurate.curator.util.redact",
            "yaml",
        }
        & wordy
    )
    run(project, failed(SESSIONS[1], RUNS[1]))  # the config cache is made once (with yaml)
    counted = probe(project, failed(SESSIONS[0], RUNS[0]))
    assert "memcurate.curator.rules.ledger" in counted and len(ledger.keys(data(project))) == 1
    assert not {"yaml", "textual", "rich", "anthropic"} & {m.split(".")[0] for m in counted}


def test_session_stand_in_from_the_transcript_when_the_payload_has_no_id(project):
    sid = "0f4c2a9e-7b1d-4c3e-9a55-2d8e6f1b3c47"
    doc = failed(sid, RUNS[0])
    del doc["session_id"]
    run(project, doc)
    run(project, {**doc, "error": "Exit code 1\n" + RUNS[1]})
    key = ledger.keys(data(project))[0]
    occurrences = ledger.occurrences(data(project), key)
    # Claude Code names the transcript after the session: the triage, which reads the id inside it,
    # counts the same session, not a second one.
    assert len(occurrences) == 1 and occurrences[0]["session"] == sid
    from memcurate.curator.rules.signature import failures

    [f] = failures("uv run pytest -x", RUNS[0])
    assert f.key == key
    again = ledger.record(
        data(project),
        f,
        session=ledger.session_for(sid, doc["transcript_path"]),
        at="",
        command="uv run pytest -x",
        error="E",
        source="transcript",
        threshold=3,
    )
    assert not again.new and again.sessions == 1


def test_rules_disabled_counts_nothing(project):
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text("rules:\n  enabled: false\n")
    assert run(project, failed(SESSIONS[0], RUNS[0])) == 0
    assert ledger.keys(data(project)) == []


def test_the_threshold_comes_from_the_config(project):
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text("rules:\n  threshold: 2\n  per_output: 1\n")
    run(project, failed(SESSIONS[0], RUNS[0]))
    run(project, failed(SESSIONS[1], RUNS[1]))
    assert len(candidates.all(data(project))) == 1
    assert "staged rule/" in log(project)[-1]


def test_a_failed_command_no_parser_knows_counts_as_one_failure(project):
    err = "error: Your local changes to the following files would be overwritten by checkout:\n\tlogs/chat.json\nAborting"
    run(project, failed(SESSIONS[0], err, command="git checkout main"))
    keys = ledger.keys(data(project))
    assert len(keys) == 1 and ledger.failure(data(project), keys[0])["kind"] == "command"


@pytest.mark.parametrize(
    "doc",
    [
        {
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": "rm -rf /",
            "error": "Exit code 1\nx",
        },
        {
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": "x"},
            "error": 42,
        },
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "pytest"},
            "tool_response": "FAILED",
        },
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Read",
            "tool_response": {"stdout": "FAILED"},
        },
    ],
)
def test_odd_payloads_are_ignored_without_an_error(project, doc, capsys):
    assert run(project, doc) == 0
    assert "internal error" not in capsys.readouterr().err
    assert not any("internal error" in line for line in log(project))


def test_a_data_dir_that_cannot_be_written_is_one_log_line_and_the_session_goes_on(project):
    (project / ".memcurate").mkdir()
    (project / ".memcurate" / "failures").write_text("not a folder")
    assert run(project, failed(SESSIONS[0], RUNS[0])) == 0
    assert "not counted" in log(project)[-1]


@pytest.mark.parametrize(
    "error, output",
    [
        ("Exit code 1\nFAILED x", "FAILED x"),
        ("Error: Exit code 2\nboom", "boom"),
        ("Error: File does not exist.", "File does not exist."),
        ("<tool_use_error>Bash operation blocked</tool_use_error>", "Bash operation blocked"),
        ("plain output", "plain output"),
    ],
)
def test_claude_codes_wrapper_is_stripped(error, output):
    assert strip_wrapper(error) == output


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "rules:\n  threshold: 1\n",
            "rules.threshold: expected a whole number of at least 2, found 1",
        ),
        (
            "rules:\n  per_output: 11\n",
            "rules.per_output: expected a whole number from 1 to 10, found 11",
        ),
        (
            "rules:\n  per_output: 0\n",
            "rules.per_output: expected a whole number from 1 to 10, found 0",
        ),
        ("rules:\n  enabled: sometimes\n", "rules.enabled: expected true or false"),
        (
            "rules:\n  forget_after_days: 0\n",
            "rules.forget_after_days: expected a whole number of at least 1",
        ),
    ],
)
def test_rules_config_errors_name_the_key(project, text, expected):
    (project / ".claude").mkdir()
    path = project / ".claude" / "memcurate.yaml"
    path.write_text(text)
    with pytest.raises(config.ConfigError) as err:
        config.load(project)
    assert str(err.value).startswith(str(path)) and expected in str(err.value)


def test_rules_defaults():
    cfg = config.load(ROOT)
    assert cfg["rules"] == {
        "enabled": True,
        "threshold": 3,
        "per_output": 3,
        "auto_approve": False,
        "forget_after_days": 180,
        "ledger_max_entries": 2000,
        "ledger_max_bytes": 1 << 20,
    }


def test_the_dispatchers_word_filter_passes_every_output_looks_failed_accepts():
    """FAILURE_WORDS claims a superset of what signature.looks_failed finds: checked line by line over its
    fixtures (a line alone is what `| tail -1` leaves), and on the two outputs it once turned away."""
    from test_signatures import DATA

    from memcurate.curator.rules.signature import looks_failed

    samples = ["npm ERR! code ELIFECYCLE", "E   assert 1 == 2", "E   AssertionError: x"]
    for path in DATA.glob("*.txt"):
        output = path.read_text(encoding="utf-8").split("\n", 2)[2]
        samples += [output, *output.splitlines()]
    accepted = [s for s in samples if looks_failed(s)]
    assert len(accepted) > 50
    assert [s for s in accepted if not dispatch.shows_failure_word(s)] == []
    for out in ("npm ERR! code ELIFECYCLE\nnpm ERR! errno 1", "E   assert 1 == 2\n1 passed"):
        payload = {
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "npm test 2>&1 | tail -3"},
            "tool_response": {"stdout": out, "stderr": ""},
        }
        assert dispatch._may_show_failure(payload, {}), out
