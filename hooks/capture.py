"""Stop, SubagentStop, PreCompact, SessionEnd: triage the new bytes of the transcript and stage them."""

from __future__ import annotations

from curator.capture.incremental import CaptureSkipped, capture
from curator.util.locks import LockBusy
from curator.util.log import log_line
from curator.util.paths import hook_may_read, record_config_dir

from . import hook_config


def handle(payload: dict, project: str, data: str, *, env=None, session_dirs=(), review_auto_memory=False) -> int:
    event = payload["hook_event_name"]
    if payload.get("stop_hook_active") is True:
        # Claude is already continuing because a stop hook blocked; its bytes
        # wait for the next pass, and nothing here can add to a loop.
        log_line(data, event, "stop_hook_active: skipped; the bytes wait for the next pass")
        return 0
    key = "agent_transcript_path" if event == "SubagentStop" and payload.get("agent_transcript_path") else "transcript_path"
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
    # Nothing is lost on a config error: the offsets do not move, so these bytes are triaged once it is fixed.
    cfg = hook_config.load(project, data, event, "nothing triaged")
    if cfg is None:
        return 0
    if event == "SessionEnd":
        _hygiene(project, data, cfg)
    session = payload.get("session_id") if isinstance(payload.get("session_id"), str) else ""
    try:
        report = capture(data, cfg, transcript, event=event, session_id=session,
                         subagent=True if event == "SubagentStop" else None,
                         may_read=lambda real: hook_may_read(real, project, env, resolved=True))
    except CaptureSkipped as e:
        log_line(data, event, str(e))
        return 0
    except LockBusy:
        log_line(data, event, f"another pass holds {transcript}; its bytes wait for the next pass")
        return 0
    notes = _record_config_dir(payload.get("transcript_path"), transcript, project, data, env, session_dirs)
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


def _hygiene(project: str, data: str, cfg: dict) -> None:
    """The background hygiene check (hooks/hygiene.py); a failure to start it is logged, never raised
    (a start is not: the pass's one log line is the capture's)."""
    from . import hygiene

    try:
        hygiene.start_check(project, data, cfg)
    except OSError as e:
        log_line(data, "SessionEnd", f"could not start the hygiene check: {e}")


def _record_config_dir(main: object, read: str, project: str, data: str, env, session_dirs) -> list[str]:
    """Record the config dir this hook runs under when the session's own transcript (`main`; `read`
    is the one just read) proves it is this project's; returns the notes for the log line."""
    if not isinstance(main, str) or not main or (main != read and hook_may_read(main, project, env)):
        return []
    try:
        if record_config_dir(data, main, session_dirs, env):
            return []
    except OSError as e:
        return [f"could not record Claude Code's config dir: {e.strerror}"]
    return ["config dir not recorded: the transcript's folder is not this project's"]
