"""The `claude` CLI backend (docs/design.md §10): one `claude -p` child per category draft.

Most people who run Claude Code have `claude` on the PATH and a subscription, not an API key, so
this backend drafts through their own CLI login. The child is isolated:

- `--no-session-persistence`: the person's session history does not fill with memcurate's calls;
- `--tools ""`: no tools at all (it only answers), in a fresh temporary cwd removed afterwards;
- `--system-prompt`: memcurate's own prompt, the category's prompt on stdin;
- `MEMCURATE_CHILD=1` in its environment: memcurate's hooks, should the child fire them, ignore it;
- Claude Code's own retries off (`CLAUDE_CODE_MAX_RETRIES=0` in its environment and in `--settings`),
  whatever the parent's environment or the person's settings.json say: memcurate owns retries, backoff
  and the fallback (resilience.py). Left to itself the CLI retries a 401, a 429 and every 5xx ten times
  and answers after about three minutes (2.1.328: 11 requests, 179 s), so a bad key was killed as a
  timeout and retried; with them off each failure is the CLI's own answer within about a second,
  classified below. Its telemetry, error reports and auto-updater are off too: the child's calls are
  memcurate's, not the person's use of Claude Code, and a child killed at its timeout must not be the
  one updating it;
- its own process group, killed whole (grandchildren included) when it outlives the timeout.

`draft` never raises: a non-zero exit, `is_error`, output that is not the CLI's JSON and a timeout
are results whose `error` says what happened, in one line, and whether it is worth retrying. The CLI
reports an API failure as `is_error: true` (its `subtype` may still say "success"), the status in
`api_error_status` (newer versions) and the message in `result` ("API Error: 529 {...overloaded...}",
"API Error: Rate limit reached"): 429, 5xx, overloaded and a timeout are transient; not logged in,
a bad key, no credit or a flag this CLI does not know are fatal for the backend; a subscription's
usage limit (it resets in hours) is neither: the next model may still have room.

`check` is the optional verification pass, `second_look` the look at a session and `rule` a graduation
candidate's rule: the same isolated child with their own prompt and schema.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping

from memcurate.curator.drafting import (
    CheckResult,
    DraftRequest,
    DraftResult,
    LookRequest,
    LookResult,
    MergeRequest,
    ModelCall,
    RuleRequest,
    RuleResult,
)
from memcurate.curator.drafting import prompt as prompts
from memcurate.curator.util.child_env import CHILD_ENV
from memcurate.curator.util.textsafe import one_line

# process groups of the children running now (a group's id is its leader's pid)
_LIVE: set[int] = set()
_LIVE_LOCK = threading.Lock()

# What the CLI says (in `result`, or on stderr) about a failure, by what to do about it.
_FATAL = re.compile(
    r"/login|not logged in|invalid api key|credit balance|authenticat|oauth|"
    r"disabled .*access|unknown option|unknown argument|error: option",
    re.I,
)
# resets in hours: not worth waiting for
_LIMIT = re.compile(r"usage limit|hit your limit|limit reached\|", re.I)
_TRANSIENT = re.compile(
    r"overloaded|rate.?limit|timed? ?out|timeout|econnreset|socket hang up|connection|"
    r"network|internal server error|server error|service unavailable|bad gateway",
    re.I,
)
_STATUS = re.compile(r"API Error:?\s*\(?(\d{3})\b")

# Claude Code's environment variables (its reference; checked against 2.1.328) every child gets, in its
# environment and in `--settings` (the `env` of the person's settings.json wins over the environment, the
# flag's over both; only a managed policy's over the flag).
CLAUDE_OVERRIDES = {
    "CLAUDE_CODE_MAX_RETRIES": "0",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
}
# The person's settings.json `env` beats the process environment (checked: 2.1.328 retried a 401 seven times
# with only the environment's override), so the overrides go in `--settings` too. `disableAllHooks`: the
# person's hooks (memcurate's own among them, and any other) do not run in memcurate's children: they cost
# ~0.6 s a call and would see memcurate's prompts. MEMCURATE_CHILD stays, for hooks a managed policy forces.
_SETTINGS = json.dumps({"env": CLAUDE_OVERRIDES, "disableAllHooks": True}, separators=(",", ":"))


def timeout_for(cfg: Mapping) -> float:
    """How long one model call may run (both Claude backends): `drafting.timeout_seconds`, less a margin
    (at most 1 s, 20 % of a short budget) for killing a child and recording its result, so a call
    stays within the timeout the person configured. The fallback chain starts no call unless this
    fits before the triage's deadline."""
    total = float(((cfg.get("drafting") or {}).get("timeout_seconds")) or 120.0)
    return max(0.05, total - min(1.0, total * 0.2))


class ClaudeCliDrafter:
    """Drafts with `claude -p`. Stateless: each draft is its own child process, so thread-safe."""

    name = "claude-cli"

    def __init__(self, executable: str, cfg: Mapping, reason: str = "backend: claude-cli") -> None:
        self.executable = executable
        self.timeout = timeout_for(cfg)
        self.reason = reason

    def argv(
        self, model_alias: str, schema: dict, system: str = prompts.SYSTEM_PROMPT
    ) -> list[str]:
        return [
            self.executable,
            "-p",
            "--output-format",
            "json",
            "--json-schema",
            json.dumps(schema, separators=(",", ":")),
            "--model",
            model_alias or "sonnet",  # the alias: the CLI maps it to the current model
            "--no-session-persistence",
            "--tools",
            "",  # "" disables every tool
            "--settings",
            _SETTINGS,  # over the person's settings, under a managed policy
            "--system-prompt",
            system,
        ]

    def draft(self, request: DraftRequest) -> DraftResult:
        result = DraftResult(doc=None, text="", model=request.model_alias or "claude-cli")

        def answer(envelope):
            prompts.fill(result, request, "claude CLI", lambda: _answer(envelope))

        # argv first: an unknown category raises there, before any child is started
        return self._call(
            lambda: (
                self.argv(request.model_alias, prompts.schema(request.category)),
                prompts.user_prompt(request),
            ),
            result,
            answer,
        )

    def check(self, request: DraftRequest, text: str) -> CheckResult:
        result = CheckResult(model=request.model_alias or "claude-cli")

        def answer(envelope):
            try:
                result.concerns = prompts.read_concerns(_answer(envelope))
            except ValueError as e:
                result.error = one_line(f"claude CLI verifier answer rejected: {e}")

        return self._call(
            lambda: (
                self.argv(
                    request.model_alias, prompts.check_schema(), system=prompts.CHECK_SYSTEM_PROMPT
                ),
                prompts.check_prompt(request, text),
            ),
            result,
            answer,
        )

    def second_look(self, request: LookRequest) -> LookResult:
        """One `claude -p` child on a stretch of the session: which categories hold something durable."""
        result = LookResult(model=request.model_alias or "claude-cli")

        def answer(envelope):
            prompts.fill_findings(result, request, "claude CLI", lambda: _answer(envelope))

        return self._call(
            lambda: (
                self.argv(
                    request.model_alias, prompts.look_schema(), system=prompts.LOOK_SYSTEM_PROMPT
                ),
                prompts.look_prompt(request.activity, request.already),
            ),
            result,
            answer,
        )

    def rule(self, request: RuleRequest) -> RuleResult:
        """One `claude -p` child on a graduation candidate's evidence: the rule that would prevent it."""
        result = RuleResult(model=request.model_alias or "claude-cli")

        def answer(envelope):
            prompts.fill_rule(result, "claude CLI", lambda: _answer(envelope))

        return self._call(
            lambda: (
                self.argv(
                    request.model_alias, prompts.rule_schema(), system=prompts.RULE_SYSTEM_PROMPT
                ),
                prompts.rule_prompt(request.evidence),
            ),
            result,
            answer,
        )

    def merge(self, request: MergeRequest) -> DraftResult:
        """One `claude -p` child on memories that say the same thing: the one memory they make."""
        result = DraftResult(doc=None, text="", model=request.model_alias or "claude-cli")

        def answer(envelope):
            prompts.fill(result, request, "claude CLI", lambda: _answer(envelope))

        return self._call(
            lambda: (
                self.argv(
                    request.model_alias,
                    prompts.schema(request.category),
                    system=prompts.MERGE_SYSTEM_PROMPT,
                ),
                prompts.merge_prompt(request),
            ),
            result,
            answer,
        )

    def _call(self, build, result: ModelCall, answer):
        """One child: usage onto `result`, then `answer(envelope)` completes it. Never raises."""
        t0 = time.perf_counter()
        try:
            argv, stdin = build()
            out, err, code = self._run(argv, stdin)
            if code is None:
                result.error = f"claude CLI timed out after {self.timeout:g} s (killed)"  # retryable: a slow moment
            else:
                envelope = _envelope(out)
                if envelope is not None:
                    _usage(envelope, result)
                if envelope is None or code != 0 or envelope.get("is_error") is True:
                    result.error = _failure(envelope, out, err, code)
                    _classify(envelope, err, code, result)
                else:
                    answer(envelope)
        except Exception as e:  # a backend never raises: the pipeline records the failure
            result.error = one_line(f"claude CLI drafter failed: {e.__class__.__name__}: {e}")
            result.retryable = False
        result.elapsed = time.perf_counter() - t0
        return result

    def _run(self, argv: list[str], stdin: str) -> tuple[str, str, int | None]:
        """(stdout, stderr, exit code) of the child; exit code None when it timed out and was killed."""
        env = child_env(os.environ)
        cwd = tempfile.mkdtemp(prefix="memcurate-claude-")
        try:
            with _LIVE_LOCK:
                proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    cwd=cwd,
                    env=env,
                    start_new_session=True,
                )
                _LIVE.add(proc.pid)
            try:
                out, err = proc.communicate(stdin.encode("utf-8", "replace"), timeout=self.timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                return "", "", None
            finally:
                with _LIVE_LOCK:
                    _LIVE.discard(proc.pid)
            return out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), proc.returncode
        finally:
            shutil.rmtree(cwd, ignore_errors=True)


def child_env(parent: Mapping[str, str]) -> dict[str, str]:
    """The environment of a `claude` child: the parent's (its login, PATH, proxy), memcurate's recursion
    guard and CLAUDE_OVERRIDES."""
    env = {**parent, **CLAUDE_OVERRIDES, CHILD_ENV: "1"}
    # set inside a Claude Code session; the CLI refuses to nest under it
    env.pop("CLAUDECODE", None)
    return env


def kill_children() -> int:
    """Kill every `claude` child running now, with what it started (a process that leaves without
    waiting for its drafts: their own sessions would not get its Ctrl+C); how many groups."""
    with _LIVE_LOCK:
        groups = list(_LIVE)
        _LIVE.clear()
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return len(groups)


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the child and everything it started (its own process group), and reap the child."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # start_new_session: the group's id is the child's pid
    except (ProcessLookupError, PermissionError):
        proc.kill()
    try:
        proc.wait(timeout=5)
    finally:
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if pipe:
                    pipe.close()
            except OSError:
                pass


def _envelope(out: str) -> dict | None:
    """The CLI's result object (`type: result`) in its stdout, None when stdout holds none."""
    text = out.strip()
    candidates = [text] + [line for line in reversed(text.splitlines()) if line.startswith("{")]
    for c in candidates:
        try:
            value = json.loads(c)
        except ValueError:
            continue
        if isinstance(value, dict) and (
            "result" in value or "structured_output" in value or "is_error" in value
        ):
            return value
    return None


def _answer(envelope: dict):
    """The model's JSON answer: the structured output, else the JSON in the result text."""
    answer = envelope.get("structured_output")
    return (
        answer
        if isinstance(answer, dict)
        else prompts.parse_json_text(str(envelope.get("result") or ""))
    )


def _classify(envelope: dict | None, err: str, code: int, result: ModelCall) -> None:
    """Whether a failed child is worth retrying, or fatal for the backend (see the module's docstring)."""
    said = (
        " ".join(str(envelope.get(k) or "") for k in ("result", "subtype", "error"))
        if envelope
        else err
    )
    status = envelope.get("api_error_status") if envelope else None
    if not isinstance(status, int) or isinstance(status, bool):
        m = _STATUS.search(said)
        status = int(m.group(1)) if m else None
    result.fatal = status in (401, 403) or bool(_FATAL.search(said))
    if result.fatal or _LIMIT.search(said):
        result.retryable = False
    elif status is not None:
        result.retryable = status in (408, 409, 429) or status >= 500
    else:
        # No JSON at all and a non-zero exit: the CLI itself broke, and would again.
        result.retryable = bool(_TRANSIENT.search(said)) or (envelope is None and code == 0)


def _usage(envelope: dict, result: ModelCall) -> None:
    usage = raw if isinstance(raw := envelope.get("usage"), dict) else {}

    def n(key: str) -> int:
        v = usage.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0

    result.tokens_in = (
        n("input_tokens") + n("cache_creation_input_tokens") + n("cache_read_input_tokens")
    )
    result.tokens_out = n("output_tokens")
    result.cache_read_tokens, result.cache_write_tokens = (
        n("cache_read_input_tokens"),
        n("cache_creation_input_tokens"),
    )
    cost = envelope.get("total_cost_usd")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0:
        result.cost_usd = float(cost)


def _failure(envelope: dict | None, out: str, err: str, code: int) -> str:
    """One line saying why the child failed: the CLI's own message when it gave one."""
    if envelope is not None and (envelope.get("is_error") is True or code != 0):
        said = envelope.get("result") if isinstance(envelope.get("result"), str) else ""
        said = said or str(envelope.get("subtype") or "")
        return one_line(
            f"claude CLI error: {said or 'no message'}" + (f" (exit {code})" if code else "")
        )
    if code != 0:
        last = next((line for line in reversed(err.strip().splitlines()) if line.strip()), "")
        return one_line(f"claude CLI exited with status {code}" + (f": {last}" if last else ""))
    shown = one_line(out, 80)
    return f"claude CLI printed no JSON result{': ' + repr(shown) if shown else ' (empty output)'}"
