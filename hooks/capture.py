"""Stop, SubagentStop, PreCompact, SessionEnd: triage the new bytes of the transcript and stage them."""

from __future__ import annotations

import sys

from curator import config
from curator.capture import CaptureSkipped, capture
from curator.locks import LockBusy
from curator.log import log_line
from curator.paths import record_memory_root


def handle(payload: dict, project: str, data: str) -> int:
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
    try:
        cfg = config.load(project, data)
    except config.ConfigError as e:
        # Nothing is lost: the offsets do not move, so these bytes are triaged once the config is fixed.
        log_line(data, event, f"config error, nothing triaged: {e}")
        print(f"memcurate: config error: {e}", file=sys.stderr)
        return 0
    main_transcript = payload.get("transcript_path")
    if isinstance(main_transcript, str) and main_transcript:
        try:
            record_memory_root(data, main_transcript)
        except OSError as e:
            log_line(data, event, f"could not record the memory root: {e.strerror}")
    session = payload.get("session_id") if isinstance(payload.get("session_id"), str) else ""
    try:
        report = capture(data, cfg, transcript, event=event, session_id=session,
                         subagent=True if event == "SubagentStop" else None)
    except CaptureSkipped as e:
        log_line(data, event, str(e))
        return 0
    except LockBusy:
        log_line(data, event, f"another pass holds {transcript}; its bytes wait for the next pass")
        return 0
    start, end = report["byte_range"]
    triggered = [c["category"] for c in report["categories"] if c["triggered"]]
    message = f"{report['status']} bytes {start}..{end} of {report['transcript']}"
    if report["triage"]:
        message += f" as {report['triage']} ({', '.join(triggered)})"
    stats = report["stats"]
    if stats and stats["bad_lines"]:
        message += f"; skipped lines: {stats['bad_lines']}"
    for note in report["notes"]:
        message += f"; {note}"
    log_line(data, event, message)
    return 0
