"""The anthropic backend (DESIGN §10): one Messages API call per category draft, through the SDK.

The only module that imports `anthropic` (lazily, in `AnthropicDrafter.__init__`: the import alone costs
seconds, and the hook never gets here). One sync client per drafter, shared by the pipeline's drafting
threads (the SDK's client is thread-safe). It honours ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL as the
SDK does (gateways, local Anthropic-compatible servers): nothing is passed explicitly.

- Structured output through a forced tool (`record_memory`) whose input schema is the draft's
  (prompt.schema); the prompt is prompt.py's, shared with the claude CLI backend.
- The system prompt, the same for every call, is marked for prompt caching; cache reads and writes
  are recorded on the result.
- The SDK does not retry (max_retries=0): the pipeline does (curator/drafting/resilience.py), with
  backoff and jitter, honouring the `retry-after` read here, so every attempt is recorded and one policy
  covers both Claude backends. A failure says whether it is worth retrying (429, 5xx, 529 overloaded,
  timeouts, dropped connections, a malformed answer) or fatal for the backend (401/403, no credit).
- `check` is the optional verification pass: the same call shape with the verifier's prompt and tool.

`draft` never raises: an SDK error and an answer that is not a valid draft are results whose `error`
says what happened, in one line.
"""

from __future__ import annotations

import os
import time
from typing import Mapping

from curator.drafting import CheckResult, DraftRequest, DraftResult, ModelCall
from curator.drafting import prompt as prompts
from curator.drafting.claude_cli import timeout_for
from curator.util.textsafe import one_line

TOOL = "record_memory"
CHECK_TOOL = "record_concerns"
MAX_TOKENS = 2048
TRANSIENT_STATUSES = (408, 409, 429)  # and every 5xx (529 overloaded): what is worth asking again
FATAL_STATUSES = (401, 403)  # the key or the account: no other model of this backend does better


def max_tokens_for(cfg: Mapping) -> int:
    value = (cfg.get("drafting") or {}).get("max_tokens")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else MAX_TOKENS


class AnthropicDrafter:
    """Drafts with the Messages API. One client, created here, shared by every thread."""

    name = "anthropic"

    def __init__(self, cfg: Mapping, reason: str = "backend: anthropic", env: Mapping[str, str] | None = None) -> None:
        import anthropic  # lazily: only this backend pays for the SDK

        self.reason = reason
        self.timeout = timeout_for(cfg)
        self.max_tokens = max_tokens_for(cfg)
        # Only what `env` sets (get_drafter's environment, the process's by default); unset, the SDK's own
        # defaults apply (its api.anthropic.com).
        env = os.environ if env is None else env
        given = {arg: env[name].strip() for arg, name in (("api_key", "ANTHROPIC_API_KEY"),
                                                          ("base_url", "ANTHROPIC_BASE_URL"))
                 if env.get(name, "").strip()}
        # No retries in the SDK: the pipeline's policy retries (with jitter, within the triage's deadline).
        self.client = anthropic.Anthropic(timeout=self.timeout, max_retries=0, **given)

    def request_args(self, request: DraftRequest) -> dict:
        return self._args(request, prompts.SYSTEM_PROMPT, TOOL, "Record the drafted memory, or skip with a reason.",
                          prompts.schema(request.category), prompts.user_prompt(request))

    def check_args(self, request: DraftRequest, text: str) -> dict:
        return self._args(request, prompts.CHECK_SYSTEM_PROMPT, CHECK_TOOL, "Record your concerns about the drafted "
                          "memory.", prompts.check_schema(), prompts.check_prompt(request, text))

    def _args(self, request: DraftRequest, system: str, tool: str, description: str, schema: dict,
              content: str) -> dict:
        return {
            "model": request.model_id or request.model_alias,
            "max_tokens": self.max_tokens,
            # The shared part of every call: cached, so each later call reads it at a tenth of the price.
            "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": tool, "description": description, "input_schema": schema}],
            "tool_choice": {"type": "tool", "name": tool},
            "messages": [{"role": "user", "content": content}],
        }

    def draft(self, request: DraftRequest) -> DraftResult:
        model = request.model_id or request.model_alias or "anthropic"
        result = DraftResult(doc=None, text="", model=model)

        def answer(message):
            prompts.fill(result, request, "anthropic", lambda: _tool_input(message, TOOL))

        return self._call(lambda: self.request_args(request), result, answer)

    def check(self, request: DraftRequest, text: str) -> CheckResult:
        result = CheckResult(model=request.model_id or request.model_alias or "anthropic")

        def answer(message):
            try:
                result.concerns = prompts.read_concerns(_tool_input(message, CHECK_TOOL))
            except ValueError as e:
                result.error = one_line(f"anthropic verifier answer rejected: {e}")

        return self._call(lambda: self.check_args(request, text), result, answer)

    def _call(self, args, result: ModelCall, answer):
        """One Messages API call: usage onto `result`, then `answer(message)` completes it. Never raises."""
        t0 = time.perf_counter()
        try:
            message = self.client.messages.create(**args())
            result.model = str(getattr(message, "model", "") or result.model)
            _usage(message, result)
            answer(message)
        except Exception as e:  # a backend never raises: the pipeline records the failure
            result.error = self._error(e)
            _classify(e, result)
        result.elapsed = time.perf_counter() - t0
        return result

    def _error(self, e: Exception) -> str:
        """One line: what the API (or the network) said."""
        import anthropic

        if isinstance(e, anthropic.APITimeoutError):
            return f"anthropic: timed out after {self.timeout:g} s"
        if isinstance(e, anthropic.APIStatusError):
            body = e.body.get("error") if isinstance(e.body, dict) else None
            kind = body.get("type", "") if isinstance(body, dict) else ""
            said = body.get("message", "") if isinstance(body, dict) else ""
            return one_line(f"anthropic: {e.status_code} {kind + ': ' if kind else ''}{said or e.message}")
        if isinstance(e, anthropic.APIConnectionError):
            return one_line(f"anthropic: cannot reach the API ({e.__cause__ or e})")
        return one_line(f"anthropic drafter failed: {e.__class__.__name__}: {e}")


def _tool_input(message, tool: str):
    answer = next((b.input for b in message.content if getattr(b, "type", "") == "tool_use"
                   and getattr(b, "name", "") == tool), None)
    if answer is None:
        raise ValueError(f"no {tool} tool call in the answer (stop_reason {message.stop_reason})")
    return answer


def _classify(e: Exception, result: ModelCall) -> None:
    """Whether asking again may help (and after how long the server asked), or nothing of this backend can."""
    import anthropic

    if isinstance(e, anthropic.APIConnectionError):  # timeouts included
        result.retryable = True
        return
    if not isinstance(e, anthropic.APIStatusError):
        result.retryable = False  # a bug or a request the SDK refused to build: the same again fails the same
        return
    said = e.response.headers.get("x-should-retry")
    status = e.status_code
    result.retryable = said == "true" if said in ("true", "false") else (status in TRANSIENT_STATUSES or status >= 500)
    result.retry_after = retry_after(e.response.headers)
    result.fatal = status in FATAL_STATUSES or "credit balance" in str(e.message).lower()


def retry_after(headers) -> float | None:
    """Seconds the server asked to wait (`retry-after-ms`, else `retry-after` in seconds or as a date)."""
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            from email.utils import parsedate_to_datetime

            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def _usage(message, result: ModelCall) -> None:
    usage = getattr(message, "usage", None)

    def n(key: str) -> int:
        v = getattr(usage, key, None)
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0

    result.cache_read_tokens = n("cache_read_input_tokens")
    result.cache_write_tokens = n("cache_creation_input_tokens")
    result.tokens_in = n("input_tokens") + result.cache_read_tokens + result.cache_write_tokens
    result.tokens_out = n("output_tokens")
