"""PostToolUse and PostToolUseFailure (Bash): count the failures a command shows, once per session,
toward rule graduation (curator/rules/ledger.py).

PostToolUseFailure is a Bash call that failed: its `error` is the output, behind Claude Code's own
wrapper. PostToolUse is a call that exited 0, which counts only for a checker (a test, lint,
type-check or build command) whose output still shows a failure: `pytest … | tail -20` exits with
tail's status. Every other Bash call is turned away by the dispatcher before anything is loaded
(`wanted`, behind its own cheaper filter), since these events fire on every Bash call.
"""

from __future__ import annotations

from memcurate.curator.util.lazyre import LazyRegex
from memcurate.curator.util.log import log_line

# Claude Code's wrapper around a failed Bash call's output: "Error: …", an "Exit code N" line,
# a <tool_use_error> tag.
_WRAPPER = LazyRegex(
    r"\A\s*(?:Error: )?(?:<tool_use_error>)?(?:Exit code -?\d+[ \t]*(?:\r?\n|\Z))?"
)
_TAG_END = "</tool_use_error>"


def _command(payload: dict) -> str:
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    return command if isinstance(command, str) else ""


def output_of(payload: dict) -> str | None:
    """What the call printed, None when the event is no failure to look at (not Bash, interrupted)."""
    if payload.get("tool_name") != "Bash":
        return None
    if payload["hook_event_name"] == "PostToolUseFailure":
        error = payload.get("error")
        if payload.get("is_interrupt") is True or not isinstance(error, str):
            return None
        return strip_wrapper(error)
    response = payload.get("tool_response")
    if not isinstance(response, dict) or response.get("interrupted") is True:
        return None
    parts = [response.get(k) for k in ("stdout", "stderr")]
    return "\n".join(p for p in parts if isinstance(p, str) and p)


def strip_wrapper(error: str) -> str:
    text = _WRAPPER.sub("", error, count=1)
    return text.replace(_TAG_END, "", 1) if _TAG_END in text else text


def wanted(payload: dict) -> bool:
    """Whether this call may show a failure worth counting (cheap: the dispatcher asks before the
    project is looked up). A failed call always; one that exited 0 only for a checker command
    whose output still shows a failure."""
    output = output_of(payload)
    if not output or not output.strip():
        return False
    if payload["hook_event_name"] == "PostToolUseFailure":
        return True
    from memcurate.curator.rules.signature import classify, looks_failed

    return classify(_command(payload)) is not None and looks_failed(output)


def handle(
    payload: dict, project: str, data: str, *, env=None, session_dirs=(), review_auto_memory=False
) -> int:
    event = payload["hook_event_name"]
    output = output_of(payload)
    if not output:
        return 0
    from . import hook_config  # here: `wanted` runs on every Bash call that printed a failure word

    cfg = hook_config.load(project, data, event, "failure not counted")
    if cfg is None or not cfg["rules"]["enabled"]:
        return 0
    from memcurate.curator.rules import ledger
    from memcurate.curator.rules.signature import failures
    from memcurate.curator.util.stamps import now_iso

    command = _command(payload)
    found = failures(command, output, project=project, limit=cfg["rules"]["per_output"])
    transcript = (
        payload.get("transcript_path") if isinstance(payload.get("transcript_path"), str) else ""
    )
    session, at = ledger.session_for(payload.get("session_id"), transcript), now_iso()
    try:
        recorded = ledger.record_all(
            data,
            [ledger.Sighting(f, at, command, f.excerpt or output) for f in found],
            session=session,
            source="hook",
            transcript=transcript,
            threshold=cfg["rules"]["threshold"],
            max_entries=cfg["rules"]["ledger_max_entries"],
            max_bytes=cfg["rules"]["ledger_max_bytes"],
        )
    except OSError as e:
        keys = ", ".join(ledger.PREFIX + f.key for f in found)
        log_line(data, event, f"failure {keys} not counted: {e.strerror or e}")
        return 0
    for r in recorded:
        message = f"failure {ledger.PREFIX}{r.key} seen in {r.sessions} session{'s' if r.sessions != 1 else ''}"
        if not r.new:
            message += " (again in this session: not counted twice)"
        if r.staged:
            message += f"; staged {ledger.PREFIX}{r.key}"
        log_line(data, event, message)
    return 0
