"""`memcurate hook`: read Claude Code's hook JSON on stdin and dispatch on hook_event_name.

It exits 0 in every case: an internal error is logged in the data dir and
summarised in one stderr line, and the Claude Code session goes on. It never
prints on stdout (it takes no decision), so it can neither block a stop nor loop.
"""

from __future__ import annotations

import json
import os
import sys

from curator.log import log_line
from curator.paths import data_dir, project_root

from . import capture

CHILD_ENV = "MEMCURATE_CHILD"  # set in the environment of every process memcurate starts
MAX_STDIN_BYTES = 1 << 20

HANDLERS = {
    "Stop": capture.handle,
    "SubagentStop": capture.handle,
    "PreCompact": capture.handle,
    "SessionEnd": capture.handle,
}


def _read_stdin(limit: int) -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return b""
    data = stream.read(limit + 1)
    return data


def run(stdin: bytes, env: dict | None = None) -> int:
    env = os.environ if env is None else env
    cwd = os.getcwd()
    payload = None
    problem = None
    if len(stdin) > MAX_STDIN_BYTES:
        problem = f"hook input larger than {MAX_STDIN_BYTES} bytes: ignored"
    elif not stdin.strip():
        problem = "empty hook input: ignored"
    else:
        try:
            payload = json.loads(stdin)
        except (ValueError, RecursionError) as e:
            problem = f"hook input is not JSON ({e.__class__.__name__}): ignored"
        else:
            if not isinstance(payload, dict):
                problem, payload = "hook input is not a JSON object: ignored", None
    if payload is not None and isinstance(payload.get("cwd"), str) and os.path.isdir(payload["cwd"]):
        cwd = payload["cwd"]
    project = project_root(cwd)
    data = data_dir(project)
    event = payload.get("hook_event_name") if payload else None
    event = event if isinstance(event, str) else "?"
    if problem:
        log_line(data, "hook", problem)
        return 0
    if env.get(CHILD_ENV):
        log_line(data, event, "called from memcurate's own child process: ignored")
        return 0
    handler = HANDLERS.get(event)
    if handler is None:
        log_line(data, event, "event not handled: ignored")
        return 0
    try:
        return handler(payload, project, data)
    except Exception as e:  # the hook must never break the session: log it where the project's log is
        log_line(data, event, f"internal error: {e.__class__.__name__}: {e}")
        _tell(e)
        return 0


def _tell(e: Exception) -> None:
    print(f"memcurate hook: internal error ({e.__class__.__name__}); see .memcurate/log/memcurate.log",
          file=sys.stderr)


def main() -> int:
    try:
        stdin = _read_stdin(MAX_STDIN_BYTES)
        return run(stdin)
    except Exception as e:  # before the project was known (unreadable stdin, unwritable data dir…)
        try:
            log_line(data_dir(project_root(os.getcwd())), "hook", f"internal error: {e.__class__.__name__}: {e}")
        except Exception:
            pass
        _tell(e)
        return 0
