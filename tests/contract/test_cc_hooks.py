"""Contract: the hooks memcurate installs fire in the real Claude Code with the payloads it reads, and exit 0."""

from __future__ import annotations

from api import ToolUse, Turn

# What each handler reads of its payload (hooks/dispatch.py and the handlers it names).
COMMON = ("hook_event_name", "session_id", "transcript_path", "cwd")
READS = {
    "UserPromptSubmit": ("prompt",),
    "PreToolUse": ("tool_name", "tool_input"),
    "PostToolUse": ("tool_name", "tool_input", "tool_response"),
    "PostToolUseFailure": ("tool_name", "tool_input", "error"),
    "Stop": (),
    "SessionEnd": ("reason",),
}


def test_hooks_fire_with_the_payloads_memcurate_reads_and_exit_0(installed, run_claude):
    script = [
        Turn("Writing it.", [ToolUse("Write", {"file_path": str(installed / "notes.txt"), "content": "hello\n"})]),
        Turn("Checking.", [ToolUse("Bash", {"command": "true", "description": "succeed"})]),
        Turn("Failing.", [ToolUse("Bash", {"command": "echo boom >&2; exit 3", "description": "fail"})]),
        Turn("All done."),
    ]
    run = run_claude("Write notes.txt, then run two commands.", script, cwd=installed)
    assert run.returncode == 0, run.explain()
    fired = run.hook_events()
    for event, keys in READS.items():
        calls = [h for h in run.hooks if h.event == event]
        assert calls, f"Claude Code did not run the {event} hook (it ran: {fired})\n{run.explain()}"
        for call in calls:
            missing = [k for k in COMMON + keys if k not in call.payload]
            assert not missing, f"{event}'s payload lacks {missing}; it has {sorted(call.payload)}"
            assert call.rc == 0, f"memcurate hook exited {call.rc} on {event}: {call.stderr}"
    pre = next(h for h in run.hooks if h.event == "PreToolUse")
    assert pre.payload["tool_name"] == "Write" and pre.payload["tool_input"]["file_path"].endswith("notes.txt")
    assert (installed / "notes.txt").read_text() == "hello\n", "the Write outside the memory root did not happen"
    log = "\n".join(run.memcurate_log())
    for event in ("UserPromptSubmit", "Stop", "SessionEnd"):
        assert f" {event}: " in log, f"memcurate's log has no {event} line; it has:\n{log}"
    transcript = next(h for h in run.hooks if h.event == "Stop").payload["transcript_path"]
    assert f"of {transcript}" in log, f"the Stop hook did not read the transcript Claude Code named ({transcript}):\n{log}"
