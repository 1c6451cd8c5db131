"""Retries, backoff with jitter, the fallback chain and the deadline of one category's draft (issue 10 §5).

    chain = Chain.from_config(cfg, drafter)          # the category's model, then drafting.fallback
    outcome = chain.run(request, Deadline(600))      # never raises, never outlives the deadline
    outcome.result                                   # the draft (or the last failure, or the skip)
    outcome.attempts                                 # one record per step, for the state line and the TUI

A step is one model (the category's own, then each alias of `drafting.fallback` not tried yet) or the
offline drafter (`offline` in the list). A step's call that failed in a way worth retrying (a 429, a
5xx, overloaded, a timeout, a malformed answer) is asked again up to `drafting.retries` times, after
`backoff_seconds · 2^(n-1)` (capped) times a random factor in [0.5, 1) — the jitter, so categories that
failed together do not retry together — and never sooner than the server's `retry-after`. A failure
that is fatal for the backend (not logged in, a bad key) skips the other models and goes to offline.

The deadline bounds it all: no model call starts unless its whole timeout fits before the deadline,
and no wait runs past it; the offline drafter needs no network and always runs when it is in the
chain. Sleep and random are injected, so tests check the waits without waiting.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from memcurate.curator.drafting import Drafter, DraftRequest, DraftResult, ModelCall
from memcurate.curator.util.textsafe import one_line

OFFLINE = "offline"


class Deadline:
    """A point in time (monotonic) that no drafting of the triage may outlive."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock, self.seconds = clock, seconds
        self.at = clock() + seconds

    def left(self) -> float:
        return self.at - self.clock()


@dataclass
class Backoff:
    """How long to wait before a retry: exponential, capped, jittered, at least the server's retry-after."""

    base: float
    cap: float = 60.0
    sleep: Callable[[float], None] = time.sleep
    random: Callable[[], float] = random.random

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """The wait before retry number `retry` (1 for the first)."""
        exp = min(self.cap, self.base * 2 ** (retry - 1))
        return max(exp * (0.5 + self.random() / 2), retry_after or 0.0)


@dataclass
class ChainResult:
    """The chain's answer for one category: the result that counts, every step, the sums."""

    result: DraftResult
    attempts: list[dict] = field(default_factory=list)
    # the sums over every call made for the category
    usage: ModelCall = field(default_factory=ModelCall)
    elapsed: float = 0.0  # the time the drafter calls took, as each reported it (waits excluded)

    @property
    def retries(self) -> int:
        return sum(a.get("retries", 0) for a in self.attempts)

    @property
    def fallback(self) -> str | None:
        """When the draft came from a later step: "drafted by haiku after sonnet failed: …"."""
        failed = [a for a in self.attempts if a["outcome"] != "ok"]
        last = self.attempts[-1] if self.attempts else None
        if not failed or last is None or last["outcome"] != "ok":
            return None
        why = "; ".join(f"{a['model']} {a['outcome']}: {a.get('error', '')}" for a in failed)
        return one_line(f"drafted by {last['model']} after {why}", 400)

    @property
    def offline_fallback(self) -> bool:
        return self.fallback is not None and self.attempts[-1]["model"] == OFFLINE


@dataclass
class Step:
    label: str  # the model alias, or "offline"
    drafter: Drafter
    request: DraftRequest

    @property
    def offline(self) -> bool:
        return getattr(self.drafter, "name", "") == OFFLINE


class Chain:
    """The steps one category goes through, and the retry policy of each."""

    def __init__(
        self,
        drafter,
        fallback: list[str],
        models: Mapping[str, str],
        *,
        retries: int,
        backoff: Backoff,
        call_timeout: float,
    ) -> None:
        self.drafter, self.fallback, self.models = drafter, list(fallback), dict(models)
        self.retries, self.backoff, self.call_timeout = max(0, retries), backoff, call_timeout

    @classmethod
    def from_config(cls, cfg: Mapping, drafter, *, sleep=time.sleep, rand=random.random) -> Chain:
        from memcurate.curator.drafting.claude_cli import timeout_for

        d = cfg["drafting"]
        # `backend: offline` has no model to fall back from (and its drafter does not fail for want of one).
        chained = getattr(drafter, "name", "") != OFFLINE and cfg.get("backend") != OFFLINE
        return cls(
            drafter,
            d.get("fallback", []) if chained else [],
            cfg.get("models") or {},
            retries=int(d["retries"]),
            backoff=Backoff(float(d["backoff_seconds"]), sleep=sleep, random=rand),
            call_timeout=timeout_for(cfg),
        )

    def steps(self, request: DraftRequest) -> list[Step]:
        name = getattr(self.drafter, "name", "")
        own = OFFLINE if name == OFFLINE else request.model_alias or name
        steps = [Step(own, self.drafter, request)]
        tried = {request.model_id or own}
        for alias in self.fallback:
            if alias == OFFLINE:
                from memcurate.curator.drafting.offline.drafter import OfflineDrafter

                steps.append(Step(OFFLINE, OfflineDrafter(reason="the fallback chain"), request))
                break  # nothing comes after the drafter that cannot fail for want of a model
            model = self.models.get(alias, alias)
            if model in tried:  # the same model again: its own retries were its chance
                continue
            tried.add(model)
            steps.append(
                Step(alias, self.drafter, replace(request, model_alias=alias, model_id=model))
            )
        return steps

    def run(self, request: DraftRequest, deadline: Deadline) -> ChainResult:
        outcome = ChainResult(
            result=DraftResult(
                doc=None, text="", model=request.model_alias, error="nothing was tried"
            )
        )
        fatal = False
        for step in self.steps(request):
            if not step.offline and (fatal or deadline.left() < self.call_timeout):
                why = (
                    "the backend cannot draft now"
                    if fatal
                    else "no time left before the triage's deadline"
                )
                outcome.attempts.append({"model": step.label, "outcome": "not tried", "error": why})
                continue
            t0 = deadline.clock()
            result, record, busy = self.attempt(step, deadline, outcome.usage)
            outcome.elapsed += busy
            attempt = {
                "model": step.label,
                "outcome": "ok" if result.error is None else "failed",
                **record,
                "elapsed": round(deadline.clock() - t0, 3),
            }
            if result.skipped and result.error is None:
                attempt["outcome"] = "skipped"
            if result.error:
                attempt["error"] = result.error
            outcome.attempts.append(attempt)
            outcome.result = result
            if result.error is None:
                break  # a draft, or the model's skip: the model decided
            fatal = fatal or result.fatal
        if outcome.result.error is not None and len(outcome.attempts) > 1:
            outcome.result.error = one_line(
                "; ".join(f"{a['model']}: {a['error']}" for a in outcome.attempts), 600
            )
        return outcome

    def attempt(
        self, step: Step, deadline: Deadline, usage: ModelCall
    ) -> tuple[DraftResult, dict, float]:
        """One step: its calls, retried while worth it and while the deadline allows.
        (result, its record, the time its calls took)."""
        if step.offline:  # no network, nothing transient: one call
            result = safe_call(step.drafter.draft, step.request, step.label)
            usage.add_usage(result, calls=0)
            return result, {"retries": 0}, result.elapsed
        result, results, waits = self.retrying(
            lambda: safe_call(step.drafter.draft, step.request, step.label), deadline
        )
        for r in results:
            usage.add_usage(r)
        if result.error is not None:
            if self.worth_retrying(result) and len(results) <= self.retries:
                result.error += " (no time left to retry before the triage's deadline)"
            if len(results) > 1:
                result.error += f" (after {len(results)} attempts)"
        record = {"retries": len(results) - 1}
        if waits:
            record["waits"] = waits
        return result, record, sum(r.elapsed for r in results)

    def worth_retrying(self, result: ModelCall) -> bool:
        return result.error is not None and result.retryable and not result.fatal

    def retrying(self, call, deadline: Deadline):
        """`call()` (a ModelCall), asked again while its failure is worth it, up to `retries` times, and
        only while the wait and another whole call fit before the deadline.
        (the last result, every result, the waits in seconds)."""
        results, waits = [call()], []
        while self.worth_retrying(results[-1]) and len(results) <= self.retries:
            wait = self.backoff.delay(len(results), results[-1].retry_after)
            if deadline.left() < wait + self.call_timeout:
                break
            self.backoff.sleep(wait)
            waits.append(round(wait, 3))
            results.append(call())
        return results[-1], results, waits


def safe_call(call, request: DraftRequest, label: str, *args):
    """`call(request, *args)`; a backend that raised anyway is a failed attempt, not a crash."""
    try:
        return call(request, *args)
    except Exception as e:
        return DraftResult(
            doc=None,
            text="",
            model=label,
            error=one_line(f"{e.__class__.__name__}: {e}"),
            retryable=False,
        )
