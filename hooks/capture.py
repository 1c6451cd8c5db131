"""Stop, SubagentStop, PreCompact, SessionEnd: triage the new bytes of the transcript and stage them.

A plugin's SessionEnd hooks share a 1.5 s budget in Claude Code 2.1, whatever timeout they declare, and are
killed past it. Stop triages each turn, so SessionEnd normally finds a turn's bytes; when it finds more than
fits (a long session resumed, passes skipped), it hands the pass to a detached background process and returns.
"""

from __future__ import annotations

import os
import sys

from memcurate.curator.candidates.incremental import CaptureSkipped, capture, unread_bytes
from memcurate.curator.util.locks import LockBusy
from memcurate.curator.util.log import log_line
from memcurate.curator.util.paths import hook_may_read, record_config_dir

from . import hook_config

# Bytes a SessionEnd pass triages itself, well inside the 1.5 s budget on a slow machine: on 2 shared cores a
# whole pass took 0.23-0.35 s with a turn's bytes, 0.5-0.84 s with 1.2 MB, 1.5-2.0 s with 107 MB. More goes to a
# background pass (the hook then takes 0.34-0.54 s, whatever the size).
SESSION_END_INLINE_BYTES = 512 * 1024
DEFERRED_ENV = "MEMCURATE_DEFERRED_PASS"  # set on the background pass: it triages whatever the size


def handle(
    payload: dict, project: str, data: str, *, env=None, session_dirs=(), review_auto_memory=False
) -> int:
    event = payload["hook_event_name"]
    if payload.get("stop_hook_active") is True:
        # Claude is already continuing because a stop hook blocked; its bytes
        # wait for the next pass, and nothing here can add to a loop.
        log_line(data, event, "stop_hook_active: skipped; the bytes wait for the next pass")
        return 0
    key = (
        "agent_transcript_path"
        if event == "SubagentStop" and payload.get("agent_transcript_path")
        else "transcript_path"
    )
    transcript = payload.get(key)
    if not isinstance(transcript, str) or not transcript:
        log_line(data, event, f"no {key} in hook input: ignored")
        return 0
    # The path is checked here (cheap, before the config), and the file the capture opens is checked
    # again by its descriptor (may_read): a path swapped in between is never read.
    refused = hook_may_read(transcript, project, env)
    if refused:
        log_line(data, event, f"{key} {refused}: not read")
        return 0
    if key == "agent_transcript_path" and not os.path.lexists(transcript):
        # Compaction fires SubagentStop for an agent whose transcript is never written: nothing is lost.
        log_line(
            data, event, "no agent transcript written (as after a compaction): nothing to triage"
        )
        return 0
    # Nothing is lost on a config error: the offsets do not move, so these bytes are triaged once it is fixed.
    cfg = hook_config.load(project, data, event, "nothing triaged")
    if cfg is None:
        return 0
    deferred = bool((os.environ if env is None else env).get(DEFERRED_ENV))
    if event == "SessionEnd" and not deferred:
        _hygiene(project, data, cfg)
        pending = unread_bytes(data, transcript)
        if pending > SESSION_END_INLINE_BYTES:
            log_line(data, event, _defer(payload, pending, env))
            return 0
    session = payload.get("session_id") if isinstance(payload.get("session_id"), str) else ""
    try:
        report = capture(
            data,
            cfg,
            transcript,
            event=event,
            session_id=session,
            subagent=True if event == "SubagentStop" else None,
            may_read=lambda real: hook_may_read(real, project, env, resolved=True),
        )
    except CaptureSkipped as e:
        log_line(data, event, str(e))
        return 0
    except LockBusy:
        log_line(data, event, f"another pass holds {transcript}; its bytes wait for the next pass")
        return 0
    notes = _record_config_dir(
        payload.get("transcript_path"), transcript, project, data, env, session_dirs
    )
    start, end = report["byte_range"]
    triggered = [c["category"] for c in report["categories"] if c["triggered"]]
    message = f"{report['status']} bytes {start}..{end} of {report['transcript']}"
    if report["triage"]:
        message += f" as {report['triage']} ({', '.join(triggered)})"
    stats = report["stats"]
    if stats and stats["bad_lines"]:
        message += f"; skipped lines: {stats['bad_lines']}"
    for note in report["notes"] + notes:
        message += f"; {note}"
    log_line(data, event, message)
    return 0


def _defer(payload: dict, pending: int, env) -> str:
    """Start the pass as `memcurate hook` in its own session (it outlives this hook and Claude Code's exit),
    the payload on its stdin; the log line saying so. It logs its own line when done."""
    import json
    import subprocess

    from memcurate.curator.hook_entries import interpreter_entry

    child_env = {**(os.environ if env is None else env), DEFERRED_ENV: "1"}
    why = (
        f"{pending} bytes not triaged yet, more than a SessionEnd pass does within Claude Code's 1.5 s budget "
        f"({SESSION_END_INLINE_BYTES})"
    )
    try:
        # as install runs the hook: with -m, the cwd (the project, Claude's to write) would come first on sys.path
        child = subprocess.Popen(
            [*interpreter_entry(sys.executable), "hook"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            env=child_env,
        )
        with child.stdin:
            child.stdin.write(json.dumps(payload).encode())
    except OSError as e:
        return f"{why}; the background pass could not start ({e.strerror}): the bytes wait for the next pass"
    return f"{why}: handed to a background pass (pid {child.pid})"


def _hygiene(project: str, data: str, cfg: dict) -> None:
    """The background hygiene check (hooks/hygiene.py); a failure to start it is logged, never raised
    (a start is not: the pass's one log line is the capture's)."""
    from . import hygiene

    try:
        hygiene.start_check(project, data, cfg)
    except OSError as e:
        log_line(data, "SessionEnd", f"could not start the hygiene check: {e}")


def _record_config_dir(
    main: object, read: str, project: str, data: str, env, session_dirs
) -> list[str]:
    """Record the config dir this hook runs under when the session's own transcript (`main`; `read`
    is the one just read) proves it is this project's; returns the notes for the log line."""
    if (
        not isinstance(main, str)
        or not main
        or (main != read and hook_may_read(main, project, env))
    ):
        return []
    try:
        if record_config_dir(data, main, session_dirs, env):
            return []
    except OSError as e:
        return [f"could not record Claude Code's config dir: {e.strerror}"]
    return ["config dir not recorded: the transcript's folder is not this project's"]
