"""The anthropic backend (docs/design.md §10): one Messages API call per category draft, through the SDK.

The only module that imports `anthropic` (lazily, in `AnthropicDrafter.__init__`: the import alone costs
seconds, and the hook never gets here). One sync client per drafter, shared by the pipeline's drafting
threads (the SDK's client is thread-safe). It honours ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL as the
SDK does (gateways, local Anthropic-compatible servers): nothing is passed explicitly.

- Structured output through a tool (`record_memory`) whose input schema is the draft's (prompt.schema);
  the prompt is prompt.py's, shared with the claude CLI backend. The tool is forced (`tool_choice`)
  except on models that refuse a forced tool with a 400 (Claude Sonnet 5.5 and Opus 5.5 do): there it is
  offered with `tool_choice: auto` and the system prompt asks for it, and an answer given as JSON text
  instead is read too. A model that refuses is learned on its first 400 and asked again at once.
- The system prompt, the same for every call, is marked for prompt caching; cache reads and writes
  are recorded on the result.
- The SDK does not retry (max_retries=0): the pipeline does (curator/drafting/resilience.py), with
  backoff and jitter, honouring the `retry-after` read here, so every attempt is recorded and one policy
  covers both Claude backends. A failure says whether it is worth retrying (429, 5xx, 529 overloaded,
  timeouts, dropped connections, a malformed answer) or fatal for the backend (401/403, no credit).
- `check` is the optional verification pass, `second_look` the look at a session
  (curator/candidates/second_look.py), `rule` a graduation candidate's rule (curator/drafting/rule_draft.py):
  the same call shape with their own prompt and tool.
- Each call's cost comes from the price table (curator/drafting/prices.py): the API does not say it.

`draft` never raises: an SDK error and an answer that is not a valid draft are results whose `error`
says what happened, in one line.
"""

from __future__ import annotations

import os
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
    prices,
)
from memcurate.curator.drafting import prompt as prompts
from memcurate.curator.drafting.claude_cli import timeout_for
from memcurate.curator.util.textsafe import one_line

TOOL = "record_memory"
CHECK_TOOL = "record_concerns"
LOOK_TOOL = "record_findings"
RULE_TOOL = "record_rule"
MERGE_TOOL = "record_merge"
MAX_TOKENS = 2048
TRANSIENT_STATUSES = (408, 409, 429)  # and every 5xx (529 overloaded): what is worth asking again
FATAL_STATUSES = (401, 403)  # the key or the account: no other model of this backend does better
# Models whose documentation says a forced tool_choice is a 400 (others are learned from that 400).
UNFORCED = frozenset({"claude-sonnet-5-5", "claude-opus-5-5"})


def max_tokens_for(cfg: Mapping) -> int:
    value = (cfg.get("drafting") or {}).get("max_tokens")
    return (
        value
        if isinstance(value, int) and not isinstance(value, bool) and value > 0
        else MAX_TOKENS
    )


class AnthropicDrafter:
    """Drafts with the Messages API. One client, created here, shared by every thread."""

    name = "anthropic"

    def __init__(
        self, cfg: Mapping, reason: str = "backend: anthropic", env: Mapping[str, str] | None = None
    ) -> None:
        import anthropic  # lazily: only this backend pays for the SDK

        self.reason = reason
        self.timeout = timeout_for(cfg)
        self.max_tokens = max_tokens_for(cfg)
        # Only what `env` sets (get_drafter's environment, the process's by default); unset, the SDK's own
        # defaults apply (its api.anthropic.com).
        env = os.environ if env is None else env
        given = {
            arg: env[name].strip()
            for arg, name in (("api_key", "ANTHROPIC_API_KEY"), ("base_url", "ANTHROPIC_BASE_URL"))
            if env.get(name, "").strip()
        }
        # No retries in the SDK: the pipeline's policy retries (with jitter, within the triage's deadline).
        self.client = anthropic.Anthropic(
            timeout=self.timeout,
            max_retries=0,
            api_key=given.get("api_key"),
            base_url=given.get("base_url"),
        )
        self._lock = threading.Lock()  # the drafting threads share what is learned below
        self._unpriced: set[str] = set()  # models already said to have no known price
        self._unforced: set[str] = set(UNFORCED)  # model families that refuse a forced tool

    def request_args(self, request: DraftRequest) -> dict:
        return self._args(
            request,
            prompts.SYSTEM_PROMPT,
            TOOL,
            "Record the drafted memory, or skip with a reason.",
            prompts.schema(request.category),
            prompts.user_prompt(request),
        )

    def check_args(self, request: DraftRequest, text: str) -> dict:
        return self._args(
            request,
            prompts.CHECK_SYSTEM_PROMPT,
            CHECK_TOOL,
            "Record your concerns about the drafted memory.",
            prompts.check_schema(),
            prompts.check_prompt(request, text),
        )

    def look_args(self, request: LookRequest) -> dict:
        return self._args(
            request,
            prompts.LOOK_SYSTEM_PROMPT,
            LOOK_TOOL,
            "Record which categories the session holds, with the digest entries that show each.",
            prompts.look_schema(),
            prompts.look_prompt(request.activity, request.already),
        )

    def rule_args(self, request: RuleRequest) -> dict:
        return self._args(
            request,
            prompts.RULE_SYSTEM_PROMPT,
            RULE_TOOL,
            "Record the rule, or skip with a reason.",
            prompts.rule_schema(),
            prompts.rule_prompt(request.evidence),
        )

    def merge_args(self, request: MergeRequest) -> dict:
        return self._args(
            request,
            prompts.MERGE_SYSTEM_PROMPT,
            MERGE_TOOL,
            "Record the merged memory, or skip with a reason.",
            prompts.schema(request.category),
            prompts.merge_prompt(request),
        )

    def _args(
        self,
        request: DraftRequest | LookRequest | RuleRequest | MergeRequest,
        system: str,
        tool: str,
        description: str,
        schema: dict,
        content: str,
    ) -> dict:
        model = request.model_id or request.model_alias
        forced = prices.family(model) not in self._unforced
        if not forced:
            system += f"\nAnswer by calling the {tool} tool once, with nothing else."
        return {
            "model": model,
            "max_tokens": self.max_tokens,
            # The shared part of every call: cached, so each later call reads it at a tenth of the price.
            "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": tool, "description": description, "input_schema": schema}],
            "tool_choice": {"type": "tool", "name": tool} if forced else {"type": "auto"},
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

    def second_look(self, request: LookRequest) -> LookResult:
        """One Messages API call on a stretch of the session: which categories hold something durable."""
        result = LookResult(model=request.model_id or request.model_alias or "anthropic")

        def answer(message):
            prompts.fill_findings(
                result, request, "anthropic", lambda: _tool_input(message, LOOK_TOOL)
            )

        return self._call(lambda: self.look_args(request), result, answer)

    def rule(self, request: RuleRequest) -> RuleResult:
        """One Messages API call on a graduation candidate's evidence: the rule that would prevent it."""
        result = RuleResult(model=request.model_id or request.model_alias or "anthropic")

        def answer(message):
            prompts.fill_rule(result, "anthropic", lambda: _tool_input(message, RULE_TOOL))

        return self._call(lambda: self.rule_args(request), result, answer)

    def merge(self, request: MergeRequest) -> DraftResult:
        """One Messages API call on memories that say the same thing: the one memory they make."""
        result = DraftResult(
            doc=None, text="", model=request.model_id or request.model_alias or "anthropic"
        )

        def answer(message):
            prompts.fill(result, request, "anthropic", lambda: _tool_input(message, MERGE_TOOL))

        return self._call(lambda: self.merge_args(request), result, answer)

    def _call(self, args, result: DraftResult | LookResult | RuleResult | CheckResult, answer):
        """One Messages API call: usage and cost onto `result`, then `answer(message)` completes it.
        A model that refuses a forced tool is asked again at once without forcing it. Never raises."""
        t0 = time.perf_counter()
        try:
            request = args()  # an unknown category raises here, before any call
            message = self._create(request, args)
            result.model = str(getattr(message, "model", "") or result.model)
            _usage(message, result)
            self._price(result)
            answer(message)
        except Exception as e:  # a backend never raises: the pipeline records the failure
            result.error = self._error(e)
            _classify(e, result)
        result.elapsed = time.perf_counter() - t0
        return result

    def _create(self, request: dict, args):
        try:
            return self.client.messages.create(**request)
        except Exception as e:
            if request["tool_choice"]["type"] != "tool" or not _refuses_forced_tool(e):
                raise
        with self._lock:
            self._unforced.add(prices.family(request["model"]))
        return self.client.messages.create(**args())

    def _price(self, result: DraftResult | LookResult | RuleResult | CheckResult) -> None:
        """The call's cost from the price table; a model with no known price records none, and says so
        once per drafter (on the first such result: it goes on the category's state line)."""
        cost = prices.cost_usd(
            result.model,
            uncached_in=result.tokens_in - result.cache_read_tokens - result.cache_write_tokens,
            out=result.tokens_out,
            cache_write=result.cache_write_tokens,
            cache_read=result.cache_read_tokens,
        )
        if cost is not None:
            result.cost_usd = cost
            return
        with self._lock:
            first = result.model not in self._unpriced
            self._unpriced.add(result.model)
        if first and hasattr(result, "notes"):
            result.notes.append(
                f"no price known for model {result.model}: its calls record no cost "
                "(curator/drafting/prices.py)"
            )

    def _error(self, e: Exception) -> str:
        """One line: what the API (or the network) said."""
        import anthropic

        if isinstance(e, anthropic.APITimeoutError):
            return f"anthropic: timed out after {self.timeout:g} s"
        if isinstance(e, anthropic.APIStatusError):
            body = e.body.get("error") if isinstance(e.body, dict) else None
            kind = body.get("type", "") if isinstance(body, dict) else ""
            said = body.get("message", "") if isinstance(body, dict) else ""
            return one_line(
                f"anthropic: {e.status_code} {kind + ': ' if kind else ''}{said or e.message}"
            )
        if isinstance(e, anthropic.APIConnectionError):
            return one_line(f"anthropic: cannot reach the API ({e.__cause__ or e})")
        return one_line(f"anthropic drafter failed: {e.__class__.__name__}: {e}")


def _tool_input(message, tool: str):
    """The tool's input; with an unforced tool, a JSON answer given as text instead. ValueError for neither."""
    answer = next(
        (
            b.input
            for b in message.content
            if getattr(b, "type", "") == "tool_use" and getattr(b, "name", "") == tool
        ),
        None,
    )
    if answer is not None:
        return answer
    text = "\n".join(
        getattr(b, "text", "") for b in message.content if getattr(b, "type", "") == "text"
    )
    try:
        if text.strip():
            return prompts.parse_json_text(text)
    except ValueError:
        pass
    raise ValueError(f"no {tool} tool call in the answer (stop_reason {message.stop_reason})")


def _refuses_forced_tool(e: Exception) -> bool:
    """A 400 that says the model does not take a forced tool_choice."""
    import anthropic

    return (
        isinstance(e, anthropic.BadRequestError)
        and "tool_choice" in str(e.message)
        and any(w in str(e.message).lower() for w in ("forc", "not supported", "unsupported"))
    )


def _classify(e: Exception, result: ModelCall) -> None:
    """Whether asking again may help (and after how long the server asked), or nothing of this backend can."""
    import anthropic

    if isinstance(e, anthropic.APIConnectionError):  # timeouts included
        result.retryable = True
        return
    if not isinstance(e, anthropic.APIStatusError):
        # a bug or a request the SDK refused to build: the same again fails the same
        result.retryable = False
        return
    said = e.response.headers.get("x-should-retry")
    status = e.status_code
    result.retryable = (
        said == "true"
        if said in ("true", "false")
        else (status in TRANSIENT_STATUSES or status >= 500)
    )
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
