"""Contract: each of the eight events memcurate installs (hooks/hooks.json) fires in the real Claude Code with
the payload keys memcurate reads, `memcurate hook` exits 0 on each, and memcurate's log shows it."""

from __future__ import annotations

import json
from pathlib import Path

from contract.api import ToolUse, Turn

ROOT = Path(__file__).resolve().parents[2]
COMMON = ("hook_event_name", "session_id", "transcript_path", "cwd")
READS = {  # what each handler reads of its payload beyond COMMON (hooks/dispatch.py and the handlers it names)
    "UserPromptSubmit": ("prompt",),
    "PreToolUse": ("tool_name", "tool_input"),
    "PostToolUse": ("tool_name", "tool_input", "tool_response"),
    "PostToolUseFailure": ("tool_name", "tool_input", "error"),
    "Stop": (),
    "SubagentStop": ("agent_transcript_path",),
    "PreCompact": ("trigger",),
    "SessionEnd": ("reason",),
}


def test_every_installed_event_fires_with_the_payload_memcurate_reads_and_exits_0(
    installed, run_claude
):
    assert set(READS) == set(json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]), (
        "hooks/hooks.json changed: say here what each new event's handler reads"
    )
    script = [
        Turn(
            "Writing it.",
            [ToolUse("Write", {"file_path": str(installed / "notes.txt"), "content": "hello\n"})],
        ),
        Turn("Checking.", [ToolUse("Bash", {"command": "true", "description": "succeed"})]),
        Turn(
            "Failing.",
            [ToolUse("Bash", {"command": "echo boom >&2; exit 3", "description": "fail"})],
        ),
        Turn(
            "Delegating.",
            [
                ToolUse(
                    "Task",
                    {
                        "description": "look around",
                        "prompt": "Say hello.",
                        "subagent_type": "general-purpose",
                    },
                )
            ],
        ),
    ]
    run = run_claude(
        "Write notes.txt, run two commands, then ask a subagent.", script, cwd=installed
    )
    assert run.returncode == 0, run.explain()
    session = run.result.get("session_id")
    assert session, f"no result event with a session id\n{run.explain()}"
    # Compaction (PreCompact) in print mode: the same session resumed with /compact.
    compacted = run_claude(
        "/compact",
        [Turn("Summary: wrote notes.txt and ran two commands.")],
        cwd=installed,
        args=("--resume", session),
    )
    assert compacted.returncode == 0, compacted.explain()

    hooks = run.hooks + compacted.hooks
    fired = [h.event for h in hooks]
    for event, keys in READS.items():
        calls = [h for h in hooks if h.event == event]
        assert calls, f"Claude Code did not run the {event} hook (it ran: {fired})\n{run.explain()}"
        for call in calls:
            missing = [k for k in COMMON + keys if k not in call.payload]
            assert not missing, f"{event}'s payload lacks {missing}; it has {sorted(call.payload)}"
            assert call.rc == 0, f"memcurate hook exited {call.rc} on {event}: {call.stderr}"
    pre = next(h for h in hooks if h.event == "PreToolUse")
    assert pre.payload["tool_name"] == "Write" and pre.payload["tool_input"]["file_path"].endswith(
        "notes.txt"
    )
    assert (installed / "notes.txt").read_text() == "hello\n", (
        "the Write outside the memory root did not happen"
    )
    post = next(
        h
        for h in hooks
        if h.event == "PostToolUse" and h.payload["tool_input"]["command"] == "true"
    )
    assert {"stdout", "stderr", "interrupted"} <= set(post.payload["tool_response"]), post.payload[
        "tool_response"
    ]
    failure = next(h for h in hooks if h.event == "PostToolUseFailure")
    assert "boom" in failure.payload["error"], failure.payload
    agent = next(h for h in run.hooks if h.event == "SubagentStop")
    assert Path(agent.payload["agent_transcript_path"]).is_file(), (
        "the subagent's transcript was not written"
    )
    assert next(h for h in hooks if h.event == "PreCompact").payload["trigger"] == "manual"

    log = "\n".join(compacted.memcurate_log())  # the project's log: both runs
    errors = [line for line in log.splitlines() if "error" in line.lower()]
    assert not errors, (
        f"memcurate logged errors on hooks Claude Code ran (a compaction's SubagentStop?): {errors}"
    )
    for event in ("UserPromptSubmit", "Stop", "SessionEnd"):
        assert f" {event}: " in log, f"memcurate's log has no {event} line; it has:\n{log}"
    transcript = next(h for h in run.hooks if h.event == "Stop").payload["transcript_path"]
    assert f"of {transcript}" in log, (
        f"the Stop hook did not read the transcript Claude Code named ({transcript}):\n{log}"
    )
