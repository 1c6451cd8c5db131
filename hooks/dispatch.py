"""`memcurate hook`: read Claude Code's hook JSON on stdin and dispatch on hook_event_name.

It exits 0 in every case: an internal error is logged in the data dir and
summarised in one stderr line, and the Claude Code session goes on. The write guard
(PreToolUse) is the exception to "the session goes on" where it guards: an input it
cannot read whole, or a guard that fails before deciding, denies the write (see guard.py). Only a
deliberate answer prints on stdout, as Claude Code's hook JSON (the write guard's
deny, recall's additionalContext); the capture hooks print nothing, so they can
neither block a stop nor loop.
"""

from __future__ import annotations

import os
import sys

from memcurate.curator.util import fastjson, lazyre
from memcurate.curator.util.child_env import CHILD_ENV
from memcurate.curator.util.lazyre import LazyRegex
from memcurate.curator.util.log import log_line
from memcurate.curator.util.paths import data_dir, is_inside, project_root

# an event's input larger than this is ignored, except PreToolUse's (any size)
MAX_STDIN_BYTES = 1 << 20
GUARDED_EVENT = "PreToolUse"
# A JSON string, or one of the characters that shape a document: what tolerant() walks (compiled only then).
_TOKEN = LazyRegex(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]')
_TOP_KEYS = ("hook_event_name", "tool_name", "cwd", "session_id")
PATH_KEYS = ("transcript_path", "agent_transcript_path", "cwd")

# Installed with a Bash matcher, they fire on every Bash call: a call that shows no failure returns at
# once (no project lookup, no config, no log line). First a test of the payload that imports nothing
# (_may_show_failure), then the failure handler's own (failures.wanted: a checker command, a failure).
FILTERED_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure"})
# Words one of which every failing output shows (lowercased); a superset of what signature.looks_failed
# looks for, so this first test never turns away what the handler would count.
# "err!" for `npm ERR!`, "\ne   " for pytest's `E   assert 1 == 2` (the text is read with a "\n" in front);
# tests/engine/test_failure_hook.py checks the claim over looks_failed's fixtures.
FAILURE_WORDS = (
    "fail",
    "error",
    "problem",
    "✕",
    "✗",
    "✘",
    "×",
    "●",
    "***",
    "panic",
    "traceback",
    "exception",
    "err!",
    "\ne   ",
)

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
# `memcurate hook --review-auto-memory`: stage Claude's memory writes
REVIEW_FLAG = "--review-auto-memory"


def _read_stdin() -> bytes:
    """All of stdin: a PreToolUse input is read whatever its size (a Write's content may be megabytes),
    so that no size lets a guarded write through; run() ignores other events' oversized inputs."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return b""
    return stream.read()


def run(stdin: bytes, env: dict | None = None, *, review_auto_memory: bool = False) -> int:
    env = os.environ if env is None else env
    payload = None
    problem = None
    if not stdin.strip():
        problem = "empty hook input: ignored"
    else:
        try:
            payload = fastjson.loads(stdin)
        except UnicodeDecodeError:
            problem = "hook input is not UTF-8: ignored"
        except (ValueError, RecursionError) as e:
            problem = f"hook input is not JSON ({e.__class__.__name__}): ignored"
        else:
            if not isinstance(payload, dict):
                problem, payload = "hook input is not a JSON object: ignored", None
            elif len(stdin) > MAX_STDIN_BYTES and payload.get("hook_event_name") != GUARDED_EVENT:
                problem, payload = f"hook input larger than {MAX_STDIN_BYTES} bytes: ignored", None
            elif payload.get("hook_event_name") in FILTERED_EVENTS and not _may_show_failure(
                payload, env
            ):
                return 0
    start = session_dir(env)
    project = project_root(start)
    try:
        data = data_dir(project)  # only ever here: never in a folder the payload names
    # the handlers still run (the guard must): their logs and caches are lost, not their checks
    except OSError:
        data = data_dir(project, create=False)
    event = payload.get("hook_event_name") if payload else None
    event = event if isinstance(event, str) else "?"
    if problem:
        found = (
            tolerant(stdin) if payload is None and problem.startswith("hook input is not") else None
        )
        if found and found.get("hook_event_name") == GUARDED_EVENT and not env.get(CHILD_ENV):
            return _guard_unreadable(
                found,
                problem.removesuffix(": ignored"),
                project,
                data,
                env,
                [start, project],
                review_auto_memory,
            )
        log_line(data, "hook", problem)
        return 0
    if env.get(CHILD_ENV):
        log_line(data, event, "called from memcurate's own child process: ignored")
        return 0
    bad = _bad_path(payload)
    if bad and event != GUARDED_EVENT:  # the guard resolves the target without a cwd it cannot use
        log_line(data, event, f"{bad}: skipped")
        return 0
    module = HANDLERS.get(event)
    if module is None:
        log_line(data, event, "event not handled: ignored")
        return 0
    dirs = [start, project] + _payload_cwd(payload, project)  # where this session may have started
    try:
        # __import__, not importlib.import_module: importing importlib (and warnings) costs every call ~0.5 ms
        handler = __import__(f"{__package__}.{module}", fromlist=("handle",)).handle
        return handler(
            payload,
            project,
            data,
            env=env,
            session_dirs=dirs,
            review_auto_memory=review_auto_memory,
        )
    # the hook must never break the session: log it where the project's log is
    except Exception as e:
        log_line(data, event, f"internal error: {e.__class__.__name__}: {e}")
        tell_internal_error(e)
        if event == GUARDED_EVENT:  # the guard did not even start
            from memcurate.curator.candidates.tool_edits import (
                TOOLS,  # here: the other events never need it
            )

            if payload.get("tool_name") in TOOLS:
                _deny_unchecked(e)
        return 0


def _guard_unreadable(
    found: dict,
    problem: str,
    project: str,
    data: str,
    env,
    dirs: list[str],
    review_auto_memory: bool,
) -> int:
    try:
        from .guard import check_unreadable

        return check_unreadable(
            found.get("tool_name"),
            found["file_paths"],
            found.get("cwd"),
            problem,
            project,
            data,
            env=env,
            session_dirs=dirs,
            review_auto_memory=review_auto_memory,
        )
    except Exception as e:
        log_line(data, GUARDED_EVENT, f"internal error: {e.__class__.__name__}: {e}")
        tell_internal_error(e)
        _deny_unchecked(e)
        return 0


def _deny_unchecked(e: Exception) -> None:
    """The write guard could not run at all: every write is refused (it cannot tell which are memcurate's)."""
    import json  # here, and in tolerant(): a hook input that parses needs only fastjson

    reason = (
        f"memcurate's write guard failed before it could check this write ({e.__class__.__name__}), so the "
        "write is refused. Tell the person: the error is in .memcurate/log/memcurate.log."
    )
    print(
        json.dumps(
            {
                "hookSpecificOutput": {
                    "hookEventName": GUARDED_EVENT,
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            }
        )
    )


def tolerant(stdin: bytes) -> dict | None:
    """What a hook input that json.loads refused still says: its top-level hook_event_name, tool_name, cwd
    and session_id, and every tool_input.file_path (a list). Bytes that are not UTF-8 are kept as
    surrogate escapes (os functions take them back as those bytes); JSON that does not parse is walked
    string by string, keeping track of nesting, so that a key inside a string or deeper down never counts.
    None when nothing is found."""
    import json

    text = stdin.decode("utf-8", "surrogateescape")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        doc = None
    if isinstance(doc, dict):
        found = {k: doc[k] for k in _TOP_KEYS if isinstance(doc.get(k), str)}
        tool_input = doc.get("tool_input")
        path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
        found["file_paths"] = [path] if isinstance(path, str) and path else []
        return found
    found: dict = {"file_paths": []}
    stack: list = []  # the key each open container sits under
    last = key = None  # the last string seen; the key whose value comes next
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok in "{[":
            stack.append(key)
            key = None
        elif tok in "}]":
            if stack:
                stack.pop()
            key = None
        elif tok == ":":
            key = _json_string(last)
        elif tok == ",":
            key = None
        else:
            if key is not None:
                value = _json_string(tok)
                if isinstance(value, str):
                    if len(stack) == 1 and key in _TOP_KEYS:
                        found.setdefault(key, value)
                    elif (
                        len(stack) == 2
                        and stack[-1] == "tool_input"
                        and key == "file_path"
                        and value
                    ):
                        found["file_paths"].append(value)
                key = None
            last = tok
    return found if len(found) > 1 or found["file_paths"] else None


def _json_string(token: str | None) -> str | None:
    if token is None:
        return None
    import json

    try:
        value = json.loads(token)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, str) else None


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
        text = "\n".join(
            v for v in (response.get("stdout"), response.get("stderr")) if isinstance(v, str)
        )
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


def tell_internal_error(e: Exception) -> None:
    """The one stderr line of an internal error (its log line says more)."""
    print(
        f"memcurate hook: internal error ({e.__class__.__name__}); see .memcurate/log/memcurate.log",
        file=sys.stderr,
    )


def _keep_patterns() -> None:
    """Store the patterns this call compiled for the next calls (util/lazyre.py); a store that cannot be
    written costs those calls their compiles, never this one its answer."""
    try:
        lazyre.keep()
    except Exception:
        pass


def main(args: list[str] | None = None) -> int:
    """`memcurate hook [--review-auto-memory]`: `args` are the words after `hook`."""
    try:
        stdin = _read_stdin()
        code = run(stdin, review_auto_memory=REVIEW_FLAG in (args or ()))
        _keep_patterns()
        return code
    except Exception as e:  # before the project was known (unreadable stdin, unwritable data dir…)
        try:
            log_line(
                data_dir(project_root(session_dir(os.environ))),
                "hook",
                f"internal error: {e.__class__.__name__}: {e}",
            )
        except Exception:
            pass
        tell_internal_error(e)
        return 0
