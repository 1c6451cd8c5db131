"""The `claude` CLI backend (DESIGN §10): one `claude -p` child per category draft.

Most people who run Claude Code have `claude` on the PATH and a subscription, not an API key, so
this backend drafts through their own CLI login. The child is isolated:

- `--no-session-persistence`: the person's session history does not fill with memcurate's calls;
- `--tools ""`: no tools at all (it only answers), in a fresh temporary cwd removed afterwards;
- `--system-prompt`: memcurate's own prompt, the category's prompt on stdin;
- `MEMCURATE_CHILD=1` in its environment: memcurate's hooks, should the child fire them, ignore it;
- its own process group, killed whole (grandchildren included) when it outlives the timeout.

`draft` never raises: a non-zero exit, `is_error`, output that is not the CLI's JSON and a timeout
are results whose `error` says what happened, in one line.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from typing import Mapping

from curator.drafting import DraftRequest, DraftResult, LookRequest, LookResult
from curator.drafting import prompt as prompts
from curator.util.textsafe import one_line

CHILD_ENV = "MEMCURATE_CHILD"  # the name hooks/dispatch.py honours (not imported: the hook package stays apart)


def timeout_for(cfg: Mapping) -> float:
    """How long one child may run: `drafting.timeout_seconds`, less a margin (at most 1 s, 20 % of a
    short budget) so the child is killed, and its own result recorded, before the pipeline's budget for
    the whole triage, which starts no later than the child, runs out."""
    total = float(((cfg.get("drafting") or {}).get("timeout_seconds")) or 120.0)
    return max(0.05, total - min(1.0, total * 0.2))


class ClaudeCliDrafter:
    """Drafts with `claude -p`. Stateless: each draft is its own child process, so thread-safe."""

    name = "claude-cli"

    def __init__(self, executable: str, cfg: Mapping, reason: str = "backend: claude-cli") -> None:
        self.executable = executable
        self.timeout = timeout_for(cfg)
        self.reason = reason

    def argv(self, request: DraftRequest) -> list[str]:
        return self._argv(prompts.schema(request.category), request.model_alias, prompts.SYSTEM_PROMPT)

    def _argv(self, schema: dict, alias: str, system: str) -> list[str]:
        return [self.executable, "-p",
                "--output-format", "json",
                "--json-schema", json.dumps(schema, separators=(",", ":")),
                "--model", alias or "sonnet",  # the alias: the CLI maps it to the current model
                "--no-session-persistence",
                "--tools", "",  # "" disables every tool
                "--system-prompt", system]

    def draft(self, request: DraftRequest) -> DraftResult:
        t0 = time.perf_counter()
        model = request.model_alias or "claude-cli"
        result = DraftResult(doc=None, text="", model=model)
        try:
            read_answer = self._ask(self.argv(request), prompts.user_prompt(request), result)
            if read_answer is not None:
                prompts.fill(result, request, "claude CLI", read_answer)
        except Exception as e:  # a drafter never raises: the pipeline marks the category failed
            result = DraftResult(doc=None, text="", model=model,
                                 error=one_line(f"claude CLI drafter failed: {e.__class__.__name__}: {e}"))
        result.elapsed = time.perf_counter() - t0
        result.calls = 1  # one `claude -p` child
        return result

    def second_look(self, request: LookRequest) -> LookResult:
        """One `claude -p` child on a stretch of the session: which categories hold something durable."""
        t0 = time.perf_counter()
        result = LookResult(model=request.model_alias or "claude-cli")
        try:
            argv = self._argv(prompts.look_schema(), request.model_alias, prompts.LOOK_SYSTEM_PROMPT)
            read_answer = self._ask(argv, prompts.look_prompt(request.activity, request.already), result)
            if read_answer is not None:
                prompts.fill_findings(result, request, "claude CLI", read_answer)
        except Exception as e:  # never raises: the second look records the failure
            result.error = one_line(f"claude CLI second look failed: {e.__class__.__name__}: {e}")
        result.elapsed = time.perf_counter() - t0
        return result

    def _ask(self, argv: list[str], stdin: str, result):
        """Run one child; record its usage on `result`. Returns how to read its answer, or None with
        `result.error` set (a timeout, a CLI error, output that is not its JSON)."""
        out, err, code = self._run(argv, stdin)
        if code is None:
            result.error = f"claude CLI timed out after {self.timeout:g} s (killed)"
            return None
        envelope = _envelope(out)
        if envelope is not None:
            _usage(envelope, result)
        if envelope is None or code != 0 or envelope.get("is_error") is True:
            result.error = _failure(envelope, out, err, code)
            return None

        def read_answer():
            answer = envelope.get("structured_output")
            return answer if isinstance(answer, dict) else prompts.parse_json_text(str(envelope.get("result") or ""))

        return read_answer

    def _run(self, argv: list[str], stdin: str) -> tuple[str, str, int | None]:
        """(stdout, stderr, exit code) of the child; exit code None when it timed out and was killed."""
        env = {**os.environ, CHILD_ENV: "1"}
        env.pop("CLAUDECODE", None)  # set inside a Claude Code session; the CLI refuses to nest under it
        cwd = tempfile.mkdtemp(prefix="memcurate-claude-")
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    cwd=cwd, env=env, start_new_session=True)
            try:
                out, err = proc.communicate(stdin.encode("utf-8", "replace"), timeout=self.timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                return "", "", None
            return out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), proc.returncode
        finally:
            shutil.rmtree(cwd, ignore_errors=True)


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
        if isinstance(value, dict) and ("result" in value or "structured_output" in value or "is_error" in value):
            return value
    return None


def _usage(envelope: dict, result) -> None:
    """The call's tokens and cost onto `result` (a DraftResult or a LookResult)."""
    usage = envelope.get("usage") if isinstance(envelope.get("usage"), dict) else {}

    def n(key: str) -> int:
        v = usage.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0

    result.tokens_in = n("input_tokens") + n("cache_creation_input_tokens") + n("cache_read_input_tokens")
    result.tokens_out = n("output_tokens")
    result.cache_read_tokens, result.cache_write_tokens = n("cache_read_input_tokens"), n("cache_creation_input_tokens")
    cost = envelope.get("total_cost_usd")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0:
        result.cost_usd = float(cost)


def _failure(envelope: dict | None, out: str, err: str, code: int) -> str:
    """One line saying why the child failed: the CLI's own message when it gave one."""
    if envelope is not None and (envelope.get("is_error") is True or code != 0):
        said = envelope.get("result") if isinstance(envelope.get("result"), str) else ""
        said = said or str(envelope.get("subtype") or "")
        return one_line(f"claude CLI error: {said or 'no message'}" + (f" (exit {code})" if code else ""))
    if code != 0:
        last = next((line for line in reversed(err.strip().splitlines()) if line.strip()), "")
        return one_line(f"claude CLI exited with status {code}" + (f": {last}" if last else ""))
    shown = one_line(out, 80)
    return f"claude CLI printed no JSON result{': ' + repr(shown) if shown else ' (empty output)'}"
