"""The anthropic backend (DESIGN §10): one Messages API call per category draft, through the SDK.

The only module that imports `anthropic` (lazily, in `AnthropicDrafter.__init__`: the import alone costs
seconds, and the hook never gets here). One sync client per drafter, shared by the pipeline's drafting
threads (the SDK's client is thread-safe). It honours ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL as the
SDK does (gateways, local Anthropic-compatible servers): nothing is passed explicitly.

- Structured output through a forced tool (`record_memory`) whose input schema is the draft's
  (prompt.schema); the prompt is prompt.py's, shared with the claude CLI backend.
- The system prompt, the same for every call, is marked for prompt caching; cache reads and writes
  are recorded on the result.
- The SDK retries 429, 5xx, overloaded (529), timeouts and dropped connections `drafting.retries`
  times with backoff, honouring retry-after; a failure it already retried is marked not retryable so
  the pipeline does not multiply the attempts.

`draft` never raises: an SDK error and an answer that is not a valid draft are results whose `error`
says what happened, in one line.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Mapping

from curator.drafting import DraftRequest, DraftResult, LookRequest, LookResult, prices
from curator.drafting import prompt as prompts
from curator.drafting.claude_cli import timeout_for
from curator.util.textsafe import one_line

TOOL = "record_memory"
LOOK_TOOL = "record_findings"
MAX_TOKENS = 2048
RETRIED_STATUSES = (408, 409, 429)  # and every 5xx: what the SDK retries (unless x-should-retry says no)


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
        self.max_retries = max(0, int(((cfg.get("drafting") or {}).get("retries")) or 0))
        self.max_tokens = max_tokens_for(cfg)
        # Only what `env` sets (get_drafter's environment, the process's by default); unset, the SDK's own
        # defaults apply (its api.anthropic.com).
        env = os.environ if env is None else env
        given = {arg: env[name].strip() for arg, name in (("api_key", "ANTHROPIC_API_KEY"),
                                                          ("base_url", "ANTHROPIC_BASE_URL"))
                 if env.get(name, "").strip()}
        self.client = anthropic.Anthropic(timeout=self.timeout, max_retries=self.max_retries, **given)
        self._unpriced: set[str] = set()  # models already said to have no known price
        self._lock = threading.Lock()  # draft runs in several threads at once

    def request_args(self, request: DraftRequest) -> dict:
        return self._args(request.model_id or request.model_alias, prompts.SYSTEM_PROMPT, TOOL,
                          "Record the drafted memory, or skip with a reason.", prompts.schema(request.category),
                          prompts.user_prompt(request))

    def look_args(self, request: LookRequest) -> dict:
        return self._args(request.model_id or request.model_alias, prompts.LOOK_SYSTEM_PROMPT, LOOK_TOOL,
                          "Record which categories the session holds, with their turns.", prompts.look_schema(),
                          prompts.look_prompt(request.activity, request.already))

    def _args(self, model: str, system: str, tool: str, what: str, schema: dict, content: str) -> dict:
        return {
            "model": model,
            "max_tokens": self.max_tokens,
            # The shared part of every call: cached, so each later call reads it at a tenth of the price.
            "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": tool, "description": what, "input_schema": schema}],
            "tool_choice": {"type": "tool", "name": tool},
            "messages": [{"role": "user", "content": content}],
        }

    def draft(self, request: DraftRequest) -> DraftResult:
        t0 = time.perf_counter()
        model = request.model_id or request.model_alias or "anthropic"
        try:
            result = self._draft(request, model)
        except Exception as e:  # a drafter never raises: the pipeline marks the category failed
            result = DraftResult(doc=None, text="", model=model, error=self._error(e))
            result.retryable = not _sdk_retried(e)
        result.elapsed = time.perf_counter() - t0
        result.calls = 1  # one call to the model (the SDK's own retries are inside it)
        return result

    def _draft(self, request: DraftRequest, model: str) -> DraftResult:
        raw = self.client.messages.with_raw_response.create(**self.request_args(request))
        message = raw.parse()
        result = DraftResult(doc=None, text="", model=str(getattr(message, "model", "") or model))
        _usage(message, result)
        self._price(result)
        if raw.retries_taken:
            result.notes.append(f"the SDK retried {raw.retries_taken} time(s) (429/5xx/overloaded/timeout)")
        prompts.fill(result, request, "anthropic", _tool_input(message, TOOL))
        return result

    def second_look(self, request: LookRequest) -> LookResult:
        """One Messages API call on a stretch of the session: which categories hold something durable."""
        t0 = time.perf_counter()
        result = LookResult(model=request.model_id or request.model_alias or "anthropic")
        try:
            message = self.client.messages.create(**self.look_args(request))
            result.model = str(getattr(message, "model", "") or result.model)
            _usage(message, result)
            self._price(result)
            prompts.fill_findings(result, request, "anthropic", _tool_input(message, LOOK_TOOL))
        except Exception as e:  # never raises: the second look records the failure
            result.error = self._error(e)
        result.elapsed = time.perf_counter() - t0
        return result

    def _price(self, result: DraftResult | LookResult) -> None:
        """The call's cost from the price table; a model with no known price records none, and says so
        once per drafter (on the first such result: it goes on the category's state line)."""
        cost = prices.cost_usd(result.model, uncached_in=result.tokens_in - result.cache_read_tokens
                               - result.cache_write_tokens, out=result.tokens_out,
                               cache_write=result.cache_write_tokens, cache_read=result.cache_read_tokens)
        if cost is not None:
            result.cost_usd = cost
            return
        with self._lock:
            first = result.model not in self._unpriced
            self._unpriced.add(result.model)
        if first:
            result.notes.append(f"no price known for model {result.model}: its calls record no cost "
                                "(curator/drafting/prices.py)")

    def _error(self, e: Exception) -> str:
        """One line: what the API (or the network) said, and how many attempts it took."""
        import anthropic

        attempts = f" (after {self.max_retries + 1} attempts)" if _sdk_retried(e) and self.max_retries else ""
        if isinstance(e, anthropic.APITimeoutError):
            return f"anthropic: timed out after {self.timeout:g} s{attempts}"
        if isinstance(e, anthropic.APIStatusError):
            body = e.body.get("error") if isinstance(e.body, dict) else None
            kind = body.get("type", "") if isinstance(body, dict) else ""
            said = body.get("message", "") if isinstance(body, dict) else ""
            return one_line(f"anthropic: {e.status_code} {kind + ': ' if kind else ''}{said or e.message}{attempts}")
        if isinstance(e, anthropic.APIConnectionError):
            return one_line(f"anthropic: cannot reach the API ({e.__cause__ or e}){attempts}")
        return one_line(f"anthropic drafter failed: {e.__class__.__name__}: {e}")


def _sdk_retried(e: Exception) -> bool:
    """Whether the SDK already retried this failure (so the pipeline should not retry it again)."""
    import anthropic

    if isinstance(e, anthropic.APIConnectionError):  # timeouts included
        return True
    if isinstance(e, anthropic.APIStatusError):
        said = e.response.headers.get("x-should-retry")
        if said in ("true", "false"):
            return said == "true"
        return e.status_code in RETRIED_STATUSES or e.status_code >= 500
    return False


def _tool_input(message, tool: str):
    """How to read the forced tool's input from a message: ValueError when the model did not call it."""
    answer = next((b.input for b in message.content if getattr(b, "type", "") == "tool_use"
                   and getattr(b, "name", "") == tool), None)

    def read_answer():
        if answer is None:
            raise ValueError(f"no {tool} tool call in the answer (stop_reason {message.stop_reason})")
        return answer

    return read_answer


def _usage(message, result) -> None:
    """The call's tokens onto `result` (a DraftResult or a LookResult)."""
    usage = getattr(message, "usage", None)

    def n(key: str) -> int:
        v = getattr(usage, key, None)
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0

    result.cache_read_tokens = n("cache_read_input_tokens")
    result.cache_write_tokens = n("cache_creation_input_tokens")
    result.tokens_in = n("input_tokens") + result.cache_read_tokens + result.cache_write_tokens
    result.tokens_out = n("output_tokens")
