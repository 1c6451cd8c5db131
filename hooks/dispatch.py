"""`memcurate hook`: read Claude Code's hook JSON on stdin and dispatch on hook_event_name.

It exits 0 in every case: an internal error is logged in the data dir and
summarised in one stderr line, and the Claude Code session goes on. Only a
deliberate answer prints on stdout, as Claude Code's hook JSON (the write guard's
deny, recall's additionalContext); the capture hooks print nothing, so they can
neither block a stop nor loop.
"""

from __future__ import annotations

import json
import os
import sys

from curator.util.child_env import CHILD_ENV
from curator.util.log import log_line
from curator.util.paths import data_dir, is_inside, project_root

MAX_STDIN_BYTES = 1 << 20
PATH_KEYS = ("transcript_path", "agent_transcript_path", "cwd")

# Installed with a Bash matcher, they fire on every Bash call: a call that shows no failure returns at
# once (no project lookup, no config, no log line). First a test of the payload that imports nothing
# (_may_show_failure), then the failure handler's own (failures.wanted: a checker command, a failure).
FILTERED_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure"})
# Words one of which every failing output shows (lowercased); a superset of what signature.looks_failed
# looks for, so this first test never turns away what the handler would count.
# "err!" for `npm ERR!`, "\ne   " for pytest's `E   assert 1 == 2` (the text is read with a "\n" in front);
# tests/test_failure_hook.py checks the claim over looks_failed's fixtures.
FAILURE_WORDS = ("fail", "error", "problem", "✕", "✗", "✘", "×", "●", "***", "panic", "traceback", "exception",
                 "err!", "\ne   ")

# event -> the hooks module whose `handle` takes it, imported only for its own events: a guarded Write
# does not pay for the capture's transcript reader, nor a Bash call for anything.
HANDLERS = {
    "Stop": "capture",
    "SubagentStop": "capture",
    "PreCompact": "capture",
    "SessionEnd": "capture",
    "PreToolUse": "guard",
    "UserPromptSubmit": "recall",
    "PostToolUse": "failures",
    "PostToolUseFailure": "failures",
}
REVIEW_FLAG = "--review-auto-memory"  # `memcurate hook --review-auto-memory`: stage Claude's memory writes


def _read_stdin(limit: int) -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return b""
    data = stream.read(limit + 1)
    return data


def run(stdin: bytes, env: dict | None = None, *, review_auto_memory: bool = False) -> int:
    env = os.environ if env is None else env
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
            elif payload.get("hook_event_name") in FILTERED_EVENTS and not _may_show_failure(payload, env):
                return 0
    start = session_dir(env)
    project = project_root(start)
    data = data_dir(project)  # only ever here: never in a folder the payload names
    event = payload.get("hook_event_name") if payload else None
    event = event if isinstance(event, str) else "?"
    if problem:
        log_line(data, "hook", problem)
        return 0
    if env.get(CHILD_ENV):
        log_line(data, event, "called from memcurate's own child process: ignored")
        return 0
    bad = _bad_path(payload)
    if bad:
        log_line(data, event, f"{bad}: skipped")
        return 0
    module = HANDLERS.get(event)
    if module is None:
        log_line(data, event, "event not handled: ignored")
        return 0
    dirs = [start, project] + _payload_cwd(payload, project)  # where this session may have started
    try:
        from importlib import import_module

        handler = import_module(f"{__package__}.{module}").handle
        return handler(payload, project, data, env=env, session_dirs=dirs, review_auto_memory=review_auto_memory)
    except Exception as e:  # the hook must never break the session: log it where the project's log is
        log_line(data, event, f"internal error: {e.__class__.__name__}: {e}")
        _tell(e)
        return 0


def _may_show_failure(payload: dict, env) -> bool:
    """Whether a Bash call's PostToolUse / PostToolUseFailure may hold a failure to count: the cheap
    tests first, then the failure handler's (see FILTERED_EVENTS). memcurate's own children never."""
    if payload.get("tool_name") != "Bash" or env.get(CHILD_ENV):
        return False
    if payload["hook_event_name"] == "PostToolUseFailure":
        if payload.get("is_interrupt") is True:
            return False
    else:
        response = payload.get("tool_response")
        if not isinstance(response, dict):
            return False
        text = "\n".join(v for v in (response.get("stdout"), response.get("stderr")) if isinstance(v, str))
        if not shows_failure_word(text):
            return False
    from .failures import wanted

    return wanted(payload)


def shows_failure_word(text: str) -> bool:
    """Whether `text` holds one of FAILURE_WORDS (a line start counts as "\n")."""
    low = "\n" + text.lower()
    return any(word in low for word in FAILURE_WORDS)


def session_dir(env) -> str:
    """The folder the session belongs to, from what Claude Code guarantees: $CLAUDE_PROJECT_DIR (the
    folder Claude Code started in), else the hook's own cwd. Never the payload's word."""
    d = env.get("CLAUDE_PROJECT_DIR")
    if d and os.path.isabs(d) and os.path.isdir(d):
        return d
    return os.getcwd()


def _bad_path(payload: dict) -> str | None:
    """Why a path in the payload cannot be a path (a NUL byte, a lone surrogate), None when all can."""
    for key in PATH_KEYS:
        value = payload.get(key)
        if not isinstance(value, str):
            continue
        if "\0" in value:
            return f"{key} holds a NUL byte"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return f"{key} holds a lone surrogate, not a file name"
    return None


def _payload_cwd(payload: dict, project: str) -> list[str]:
    """The payload's cwd when it lies inside the project (the session may have started there), else nothing."""
    cwd = payload.get("cwd")
    if not (isinstance(cwd, str) and os.path.isabs(cwd) and os.path.isdir(cwd)):
        return []
    return [cwd] if is_inside(os.path.realpath(cwd), os.path.realpath(project)) else []


def _tell(e: Exception) -> None:
    print(f"memcurate hook: internal error ({e.__class__.__name__}); see .memcurate/log/memcurate.log",
          file=sys.stderr)


def main(args: list[str] | None = None) -> int:
    """`memcurate hook [--review-auto-memory]`: `args` are the words after `hook`."""
    try:
        stdin = _read_stdin(MAX_STDIN_BYTES)
        return run(stdin, review_auto_memory=REVIEW_FLAG in (args or ()))
    except Exception as e:  # before the project was known (unreadable stdin, unwritable data dir…)
        try:
            log_line(data_dir(project_root(session_dir(os.environ))), "hook",
                     f"internal error: {e.__class__.__name__}: {e}")
        except Exception:
            pass
        _tell(e)
        return 0
