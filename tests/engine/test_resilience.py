"""The retry policy and the fallback chain (curator/drafting/resilience.py), with injected sleep and random:
waits are checked, never waited for. The backends' own failures are tested through the real SDK
(test_anthropic_backend.py) and a fake `claude` (test_claude_cli.py)."""

from __future__ import annotations

import pytest

from memcurate.curator.drafting import DraftRequest, DraftResult
from memcurate.curator.drafting.resilience import Backoff, Chain, Deadline

NOW = "2026-11-22T10:04:00Z"
MODELS = {"haiku": "claude-haiku-4-5", "sonnet": "claude-sonnet-4-5", "opus": "claude-opus-4-1"}


class Clock:
    """A monotonic clock that only the injected sleep moves."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class Scripted:
    """A model drafter whose calls go as scripted per model id (None: a draft, through the offline drafter)."""

    name = "scripted"
    reason = "test"

    def __init__(
        self, script: dict[str, list[DraftResult]], clock: Clock | None = None, cost: float = 0.0
    ) -> None:
        from memcurate.curator.drafting.offline import OfflineDrafter

        self.script, self.calls, self.clock, self.cost = script, [], clock, cost
        self.offline = OfflineDrafter()

    def draft(self, request):
        self.calls.append(request.model_id)
        if self.clock is not None:
            self.clock.now += self.cost  # each call takes this long
        queue = self.script.get(request.model_id) or [None]
        scripted = queue.pop(0) if len(queue) > 1 else queue[0]  # the last one repeats
        if scripted is not None:
            return scripted
        result = self.offline.draft(request)
        result.model, result.tokens_in, result.tokens_out = request.model_id, 100, 10
        return result


def fail(
    error="529 overloaded", *, retryable=True, retry_after=None, fatal=False, tokens_in=0
) -> DraftResult:
    return DraftResult(
        doc=None,
        text="",
        model="m",
        error=error,
        retryable=retryable,
        retry_after=retry_after,
        fatal=fatal,
        tokens_in=tokens_in,
    )


def request(alias="sonnet") -> DraftRequest:
    entry = {
        "score": 0.9,
        "threshold": 0.5,
        "excerpt": "We decided to use JWT because sessions need a table.",
        "snippets": [
            {
                "turn": 1,
                "speaker": "user",
                "text": "We decided to use JWT because sessions need a table.",
            }
        ],
    }
    return DraftRequest(
        triage_id="t",
        category="decision",
        entry=entry,
        source={"session": "s"},
        model_alias=alias,
        model_id=MODELS[alias],
        now=NOW,
    )


def chain(
    drafter,
    clock: Clock,
    *,
    fallback=("haiku", "offline"),
    retries=2,
    base=1.0,
    rand=lambda: 0.5,
    call_timeout=10.0,
) -> Chain:
    return Chain(
        drafter,
        list(fallback),
        MODELS,
        retries=retries,
        call_timeout=call_timeout,
        backoff=Backoff(base, cap=8.0, sleep=clock.sleep, random=rand),
    )


def test_backoff_doubles_is_capped_and_jittered_and_never_shorter_than_retry_after():
    b = Backoff(2.0, cap=8.0, random=lambda: 0.0)
    assert [b.delay(n) for n in (1, 2, 3, 4, 5)] == [
        1.0,
        2.0,
        4.0,
        4.0,
        4.0,
    ]  # half of 2, 4, 8, 8, 8
    b.random = lambda: 0.999999
    assert b.delay(1) == pytest.approx(2.0) and b.delay(4) == pytest.approx(8.0)
    assert b.delay(1, retry_after=30.0) == 30.0  # the server's word wins over a shorter backoff
    draws = iter([0.1, 0.9])
    b.random = lambda: next(draws)
    assert b.delay(2) != b.delay(2)  # two categories failing together do not retry together


def test_a_transient_failure_is_retried_after_the_jittered_backoff_then_drafts():
    clock = Clock()
    drafter = Scripted({MODELS["sonnet"]: [fail(tokens_in=5), fail(retry_after=7.0), None]})
    out = chain(drafter, clock, rand=lambda: 0.5).run(request(), Deadline(600, clock))
    assert out.result.ok and drafter.calls == [MODELS["sonnet"]] * 3
    assert clock.slept == [0.75, 7.0]  # 1 s × 0.75 jitter; then the server's retry-after over 1.5 s
    assert out.attempts == [
        {"model": "sonnet", "outcome": "ok", "retries": 2, "waits": [0.75, 7.0], "elapsed": 7.75}
    ]
    assert (out.usage.calls, out.usage.tokens_in, out.retries, out.fallback) == (3, 105, 2, None)


def test_a_permanent_failure_is_not_retried_and_falls_back_to_the_next_model():
    clock = Clock()
    drafter = Scripted({MODELS["sonnet"]: [fail("404 not_found_error: model", retryable=False)]})
    out = chain(drafter, clock).run(request(), Deadline(600, clock))
    assert drafter.calls == [MODELS["sonnet"], MODELS["haiku"]] and clock.slept == []
    assert out.result.ok and out.result.model == MODELS["haiku"]
    assert out.fallback == "drafted by haiku after sonnet failed: 404 not_found_error: model"
    assert not out.offline_fallback


def test_a_fatal_failure_skips_the_other_models_and_goes_offline():
    clock = Clock()
    drafter = Scripted(
        {MODELS["sonnet"]: [fail("401 invalid x-api-key", retryable=False, fatal=True)]}
    )
    out = chain(drafter, clock).run(request(), Deadline(600, clock))
    assert drafter.calls == [MODELS["sonnet"]]
    assert [(a["model"], a["outcome"]) for a in out.attempts] == [
        ("sonnet", "failed"),
        ("haiku", "not tried"),
        ("offline", "ok"),
    ]
    assert out.result.ok and out.offline_fallback and out.usage.calls == 1


def test_the_same_model_is_not_tried_twice_and_an_empty_chain_fails_with_the_models_error():
    clock = Clock()
    drafter = Scripted({MODELS["haiku"]: [fail()]})
    out = chain(drafter, clock, fallback=["haiku"], retries=0).run(
        request("haiku"), Deadline(600, clock)
    )
    assert drafter.calls == [MODELS["haiku"]] and out.result.error == "529 overloaded"
    out = chain(drafter, clock, fallback=[], retries=1).run(request("haiku"), Deadline(600, clock))
    assert out.result.error == "529 overloaded (after 2 attempts)" and len(out.attempts) == 1


def test_everything_failing_gives_the_offline_draft_with_every_step_recorded():
    clock = Clock()
    drafter = Scripted({MODELS["sonnet"]: [fail()], MODELS["haiku"]: [fail("500 api_error")]})
    out = chain(drafter, clock, retries=1).run(request(), Deadline(600, clock))
    assert out.result.ok and out.result.model == "offline" and out.offline_fallback
    assert [(a["model"], a["outcome"], a["retries"]) for a in out.attempts] == [
        ("sonnet", "failed", 1),
        ("haiku", "failed", 1),
        ("offline", "ok", 0),
    ]
    assert out.usage.calls == 4  # the offline drafter is no model call
    assert out.fallback == (
        "drafted by offline after sonnet failed: 529 overloaded (after 2 attempts); "
        "haiku failed: 500 api_error (after 2 attempts)"
    )


def test_no_call_or_wait_outlives_the_deadline():
    clock = Clock()
    # each call takes 4 s of a 10 s deadline; calls may take up to 5 s
    drafter = Scripted(
        {MODELS["sonnet"]: [fail(retry_after=1.0)], MODELS["haiku"]: [fail()]}, clock, cost=4.0
    )
    out = chain(drafter, clock, call_timeout=5.0, retries=5).run(request(), Deadline(10, clock))
    # t=4 first failure; 1 s wait + 5 s call fits (t=10 at most): retry; t=9: no room for more
    assert drafter.calls == [MODELS["sonnet"]] * 2 and clock.slept == [1.0]
    assert [(a["model"], a["outcome"]) for a in out.attempts] == [
        ("sonnet", "failed"),
        ("haiku", "not tried"),
        ("offline", "ok"),
    ]
    assert out.attempts[0]["error"].endswith(
        "(no time left to retry before the triage's deadline) (after 2 attempts)"
    )
    assert out.attempts[1]["error"] == "no time left before the triage's deadline"
    assert out.result.ok and clock.now <= 10


def test_a_skip_ends_the_chain():
    clock = Clock()
    skip = DraftResult(doc=None, text="", model="m", skipped="only chatter")
    drafter = Scripted({MODELS["sonnet"]: [skip]})
    out = chain(drafter, clock).run(request(), Deadline(600, clock))
    assert out.result.skipped == "only chatter" and drafter.calls == [MODELS["sonnet"]]
    assert out.attempts[0]["outcome"] == "skipped" and out.fallback is None


def test_a_backend_that_raises_is_a_failed_step_not_a_crash():
    clock = Clock()

    class Raising(Scripted):
        def draft(self, request):
            raise RuntimeError("boom")

    out = chain(Raising({}), clock).run(request(), Deadline(600, clock))
    assert out.result.ok and out.result.model == "offline"
    assert out.attempts[0] == {
        "model": "sonnet",
        "outcome": "failed",
        "retries": 0,
        "error": "RuntimeError: boom",
        "elapsed": 0.0,
    }


def test_the_config_sets_the_chain_and_backend_offline_has_none():
    from memcurate.curator.drafting.offline import OfflineDrafter

    cfg = {
        "backend": "anthropic",
        "models": MODELS,
        "drafting": {
            "retries": 2,
            "backoff_seconds": 2.0,
            "timeout_seconds": 120.0,
            "fallback": ["opus", "offline"],
        },
    }
    c = Chain.from_config(cfg, Scripted({}))
    assert [s.label for s in c.steps(request())] == ["sonnet", "opus", "offline"]
    assert [
        s.label
        for s in Chain.from_config({**cfg, "backend": "offline"}, Scripted({})).steps(request())
    ] == ["sonnet"]
    assert [s.label for s in Chain.from_config(cfg, OfflineDrafter()).steps(request())] == [
        "offline"
    ]
