"""The anthropic backend through the real SDK against a local Messages API server (issue 10, part 2).

The server (127.0.0.1, an ephemeral port; ANTHROPIC_BASE_URL points the SDK at it) records every
request, headers and JSON body, and answers from a script of replies: a message with a tool_use block
and usage, or an error (429, 500, 529 overloaded), or nothing for longer than the client's timeout.
Retry waits are the server's `retry-after-ms: 1`, so the SDK's retries take milliseconds.
"""

from __future__ import annotations

import json
import os
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import ANTHROPIC_SDK
from fakes import backend_engine, decision
from test_claude_cli import GOOD
from test_engine import stage

from memcurate.curator import config
from memcurate.curator.candidates import staging
from memcurate.curator.drafting import prompt as prompts
from memcurate.curator.engine import Engine
from memcurate.curator.memory import memfile
from memcurate.curator.util.assets import asset

pytestmark = ANTHROPIC_SDK

MODELS = config.build([asset("config.default.yaml")])["models"]
# what a decision is drafted with; the fallback and verifier model
MODEL, HAIKU = (
    MODELS["sonnet"],
    MODELS["haiku"],
)
USAGE = {
    "input_tokens": 1000,
    "cache_creation_input_tokens": 200,
    "cache_read_input_tokens": 300,
    "output_tokens": 150,
}


def message(answer, *, name: str = "record_memory") -> dict:
    """A Messages API response whose one content block calls the tool with `answer`."""
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_01A09q90qw90lq917835lq9",
                "name": name,
                "input": answer,
            }
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": USAGE,
    }


def error(status: int, kind: str, text: str) -> tuple[int, dict]:
    return status, {"type": "error", "error": {"type": kind, "message": text}}


RATE_LIMITED = error(
    429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"
)
SERVER_ERROR = error(500, "api_error", "Internal server error")
OVERLOADED = error(529, "overloaded_error", "Overloaded")
REFUSED_FORCED = error(
    400,
    "invalid_request_error",
    "tool_choice: forced tool use is not supported on this model; use tool_choice auto",
)
HANG = "hang"  # answer nothing for 5 s (the client's timeout is shorter)


class Server:
    """Replies in order (the last one repeats); every request is recorded. `by_model` answers a model
    the same way every time (a model that is always down); `checks` answer the verifier's calls."""

    def __init__(self) -> None:
        self.replies: list = [(200, message(GOOD))]
        self.choose = None  # body -> a reply, or None for the next one in order
        self.by_model: dict = {}
        self.checks: list = [(200, message({"concerns": []}, name="record_concerns"))]
        self.retry_after_ms = "1"  # the retry-after-ms of an error reply: retries take milliseconds
        self.refuse_forced = {
            "claude-sonnet-5-5",
            "claude-opus-5-5",
        }  # a forced tool_choice is a 400 there
        self.requests: list[dict] = []
        self.release = threading.Event()  # ends a hanging reply when the test is over
        lock = threading.Lock()  # the handler threads append concurrently
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(
                    self.rfile.read(int(self.headers.get("content-length") or 0)) or b"null"
                )
                with lock:
                    server.requests.append(
                        {
                            "path": self.path,
                            "headers": {k.lower(): v for k, v in self.headers.items()},
                            "body": body,
                        }
                    )
                    checks = [
                        r
                        for r in server.requests
                        if r["body"]["tools"][0]["name"] == "record_concerns"
                    ]
                    n = len(server.requests) - len(checks)
                if body["model"] in server.refuse_forced and body["tool_choice"]["type"] == "tool":
                    reply = REFUSED_FORCED  # as the API answers these models
                elif server.choose and server.choose(body):
                    reply = server.choose(body)
                elif body["tools"][0]["name"] == "record_concerns":
                    reply = server.checks[min(len(checks), len(server.checks)) - 1]
                elif body["model"] in server.by_model:
                    reply = server.by_model[body["model"]]
                else:
                    reply = server.replies[min(n, len(server.replies)) - 1]
                if reply == HANG:
                    server.release.wait(5)
                    return
                status, payload = reply
                if payload.get("type") == "message" and payload["model"] == MODEL:
                    payload = {
                        **payload,
                        "model": body["model"],
                    }  # the model that answered (unless a test says)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                if status != 200:
                    # honoured by memcurate's retries
                    self.send_header("retry-after-ms", server.retry_after_ms)
                    self.send_header("retry-after", "0")
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server(monkeypatch):
    s = Server()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", s.url)
    yield s
    s.close()


def engine_for(project, tmp_path, *, retries: int = 2, timeout: float = 60.0) -> Engine:
    return backend_engine(project, tmp_path, "anthropic", retries=retries, timeout=timeout)


def draft_decision(engine: Engine) -> tuple[str, str]:
    (tid,) = stage(engine)
    return tid, engine.process(tid, only=["decision"])["decision"]


def test_a_tool_answer_becomes_a_verified_draft_with_tokens_and_cache_use(
    server, project, tmp_path
):
    engine = engine_for(project, tmp_path)
    assert engine.drafter.name == "anthropic"
    tid, state = draft_decision(engine)
    assert state == "ready"

    (req,) = server.requests
    assert req["path"] == "/v1/messages"
    # The key from ANTHROPIC_API_KEY, sent as the installed SDK sends it (x-api-key, or a Bearer header in 2.x).
    headers = req["headers"]
    assert (
        headers.get("x-api-key") == "sk-ant-test-key"
        or headers.get("authorization") == "Bearer sk-ant-test-key"
    )
    body = req["body"]
    # the category's model id, the default cap
    assert body["model"] == MODEL and body["max_tokens"] == 2048
    # Sonnet 5.5 refuses a forced tool (a 400): the tool is offered, and the system prompt asks for it.
    assert MODEL == "claude-sonnet-5-5" and body["tool_choice"] == {"type": "auto"}
    assert body["system"] == [
        {
            "type": "text",
            "cache_control": {"type": "ephemeral"},
            "text": prompts.SYSTEM_PROMPT + "\nAnswer by calling the record_memory tool once, "
            "with nothing else.",
        }
    ]
    (tool,) = body["tools"]
    assert tool["name"] == "record_memory" and tool["input_schema"] == prompts.schema("decision")
    (msg,) = body["messages"]
    assert msg["role"] == "user" and "Category: decision" in msg["content"]
    assert "<<<BEGIN EXCERPT-" in msg["content"] and "Let's go with JWT" in msg["content"]
    assert "s3cretpass" not in json.dumps(body)  # the excerpt is the triage's, redacted

    rec = decision(engine, tid)
    assert rec["model"] == MODEL and (rec["tokens_in"], rec["tokens_out"]) == (1500, 150)
    assert (rec["cache_read_tokens"], rec["cache_write_tokens"]) == (300, 200)
    # claude-sonnet-5-5: $2 in, $10 out, $2.50 5-minute cache write, $0.10 cache read per million tokens
    assert MODEL == "claude-sonnet-5-5"
    assert rec["cost_usd"] == pytest.approx((1000 * 2 + 150 * 10 + 200 * 2.50 + 300 * 0.10) / 1e6)
    assert rec["calls"] == 1
    doc = memfile.parse(engine.review(tid, "decision")["text"])
    assert doc.title == GOOD["title"] and list(doc.sections) == [
        "Decision",
        "Rationale",
        "Alternatives",
    ]
    assert memfile.problems(doc) == []


@pytest.mark.parametrize(
    "first", [RATE_LIMITED, SERVER_ERROR, OVERLOADED], ids=["429", "500", "529-overloaded"]
)
def test_a_transient_error_is_retried_honouring_retry_after(server, project, tmp_path, first):
    server.replies = [first, (200, message(GOOD))]
    server.retry_after_ms = "40"
    engine = engine_for(project, tmp_path)
    tid, state = draft_decision(engine)
    assert state == "ready" and len(server.requests) == 2
    # memcurate's retry, not the SDK's
    assert server.requests[1]["headers"]["x-stainless-retry-count"] == "0"
    rec = decision(engine, tid)
    # no backoff configured: the wait is the server's retry-after
    assert rec["attempts"] == [
        {
            "model": "sonnet",
            "outcome": "ok",
            "retries": 1,
            "waits": [0.04],
            "elapsed": rec["attempts"][0]["elapsed"],
        }
    ]
    assert (rec["retries"], rec["calls"], rec["tokens_in"]) == (1, 2, 1500)


def test_always_overloaded_fails_with_the_apis_message_after_the_configured_attempts(
    server, project, tmp_path
):
    server.replies = [OVERLOADED]
    engine = engine_for(project, tmp_path, retries=2)
    tid, state = draft_decision(engine)
    assert state == "failed"
    assert (
        decision(engine, tid)["error"]
        == "anthropic: 529 overloaded_error: Overloaded (after 3 attempts)"
    )
    assert len(server.requests) == 3  # memcurate's retries; the SDK does not multiply them


def test_a_bad_key_is_not_retried(server, project, tmp_path):
    server.replies = [error(401, "authentication_error", "invalid x-api-key")]
    engine = backend_engine(project, tmp_path, "anthropic", retries=2, fallback="[haiku]")
    tid, state = draft_decision(engine)
    # no retry, and no other model of the same key
    assert state == "failed" and len(server.requests) == 1
    assert (
        decision(engine, tid)["error"]
        == "sonnet: anthropic: 401 authentication_error: invalid x-api-key; "
        "haiku: the backend cannot draft now"
    )


def issue_codes(engine, tid) -> list[tuple[str, str]]:
    return [
        (i["code"], i["message"])
        for i in engine.review(tid, "decision")["issues"]
        if i["code"] in ("fallback", "offline-fallback", "verifier")
    ]


def test_an_overloaded_model_falls_back_to_the_next_one(server, project, tmp_path):
    server.by_model = {MODEL: OVERLOADED}
    engine = backend_engine(project, tmp_path, "anthropic", retries=1, fallback="[haiku, offline]")
    tid, state = draft_decision(engine)
    assert state == "ready"
    assert [r["body"]["model"] for r in server.requests] == [MODEL, MODEL, HAIKU]
    rec = decision(engine, tid)
    assert rec["model"] == HAIKU and (rec["calls"], rec["retries"], rec["tokens_in"]) == (
        3,
        1,
        1500,
    )
    assert [(a["model"], a["outcome"], a["retries"]) for a in rec["attempts"]] == [
        ("sonnet", "failed", 1),
        ("haiku", "ok", 0),
    ]
    assert issue_codes(engine, tid) == [
        (
            "fallback",
            "drafted by haiku after sonnet failed: anthropic: 529 "
            "overloaded_error: Overloaded (after 2 attempts)",
        )
    ]
    from memcurate.curator.headless import auto_approve

    summary = auto_approve(engine)  # a model fallback's draft is saved like any other
    assert "decision" in [c["category"] for c in summary["created"]]
    assert "decision" not in [h["category"] for h in summary["held"]]


@pytest.mark.parametrize(
    "reply",
    [OVERLOADED, (200, message({"skip": False, "title": "Only a title"}))],
    ids=["overloaded", "malformed"],
)
def test_when_every_model_fails_the_offline_draft_is_held_for_a_person(
    server, project, tmp_path, reply
):
    server.replies = [reply]
    engine = backend_engine(project, tmp_path, "anthropic", retries=1, fallback="[haiku, offline]")
    tid, state = draft_decision(engine)
    assert state == "ready" and len(server.requests) == 4  # two models, each asked twice
    rec = decision(engine, tid)
    assert rec["model"] == "offline" and rec["calls"] == 4
    assert [(a["model"], a["outcome"]) for a in rec["attempts"]] == [
        ("sonnet", "failed"),
        ("haiku", "failed"),
        ("offline", "ok"),
    ]
    ((code, why),) = issue_codes(engine, tid)
    assert code == "offline-fallback" and why.startswith(
        "drafted by offline after sonnet failed: anthropic"
    )
    from memcurate.curator.headless import auto_approve

    summary = auto_approve(engine)  # the other categories fail the same way: all offline, all held
    assert not summary["created"] and "decision" in [h["category"] for h in summary["held"]]
    assert not (tmp_path / "memory" / "decision").exists()


def test_a_model_that_times_out_falls_back(server, project, tmp_path):
    server.by_model = {MODEL: HANG}
    engine = backend_engine(project, tmp_path, "anthropic", timeout=1.5, fallback="[haiku]")
    tid, state = draft_decision(engine)
    assert state == "ready"
    rec = decision(engine, tid)
    assert [(a["model"], a["outcome"], a.get("error")) for a in rec["attempts"]] == [
        ("sonnet", "failed", "anthropic: timed out after 1.2 s"),
        ("haiku", "ok", None),
    ]


def test_every_category_ends_drafted_within_the_deadline_when_the_api_hangs(
    server, project, tmp_path
):
    server.replies = [HANG]
    engine = backend_engine(
        project,
        tmp_path,
        "anthropic",
        retries=2,
        timeout=1.5,
        deadline=2.0,
        fallback="[haiku, offline]",
        concurrency=4,
    )
    (tid,) = stage(engine)
    states = engine.process(tid)
    assert len(states) > engine.cfg["drafting"]["concurrency"]  # some waited for a free slot
    assert set(states.values()) == {"ready"}
    for rec in staging.category_states(engine.data, tid).values():
        assert rec["attempts"][-1] == {
            "model": "offline",
            "outcome": "ok",
            "retries": 0,
            "elapsed": rec["attempts"][-1]["elapsed"],
        }
        # no model call was started that could not finish before the deadline
        assert all(
            a["outcome"] == "not tried" or a["error"].startswith("anthropic: timed out")
            for a in rec["attempts"][:-1]
        )


@pytest.mark.parametrize(
    "answer, why",
    [
        (
            {"skip": False, "title": "Only a title"},
            "anthropic answer rejected: the answer has no description",
        ),
        (
            {**GOOD, "sections": {"Decision": "JWT."}},
            "anthropic answer rejected: the answer has no 'Rationale' section, which a decision requires",
        ),
        (
            {**GOOD, "tags": "auth"},
            "anthropic answer rejected: the answer's tags are not a list of words",
        ),
    ],
)
def test_a_malformed_tool_input_fails_the_category_with_what_was_wrong(
    server, project, tmp_path, answer, why
):
    server.replies = [(200, message(answer))]
    engine = engine_for(project, tmp_path, retries=1)
    tid, state = draft_decision(engine)
    assert state == "failed" and decision(engine, tid)["error"] == f"{why} (after 2 attempts)"
    assert len(server.requests) == 2  # asked again once (drafting.retries), then failed


def test_a_malformed_answer_asked_again_can_succeed(server, project, tmp_path):
    server.replies = [(200, message({"skip": False})), (200, message(GOOD))]
    engine = engine_for(project, tmp_path, retries=1)
    tid, state = draft_decision(engine)
    assert state == "ready" and decision(engine, tid)["retries"] == 1


def test_an_answer_without_the_tool_call_fails_the_category(server, project, tmp_path):
    reply = message(GOOD)
    reply["content"], reply["stop_reason"] = (
        [{"type": "text", "text": "I cannot help with that."}],
        "end_turn",
    )
    server.replies = [(200, reply)]
    engine = engine_for(project, tmp_path, retries=0)
    tid, state = draft_decision(engine)
    assert state == "failed"
    assert (
        decision(engine, tid)["error"]
        == "anthropic answer rejected: no record_memory tool call in the answer "
        "(stop_reason end_turn)"
    )


def test_a_call_that_outlives_the_timeout_fails_timed_out(server, project, tmp_path):
    server.replies = [HANG]
    engine = engine_for(project, tmp_path, retries=0, timeout=1.5)
    tid, state = draft_decision(engine)
    assert state == "failed"
    assert decision(engine, tid)["error"] == "anthropic: timed out after 1.2 s"
    assert len(server.requests) == 1


def test_a_skip_never_saves_and_records_the_reason_and_tokens(server, project, tmp_path):
    server.replies = [
        (200, message({"skip": True, "reason": "only task chatter, nothing durable"}))
    ]
    engine = engine_for(project, tmp_path)
    tid, state = draft_decision(engine)
    assert state == "skipped"
    rec = decision(engine, tid)
    assert rec["reason"] == "only task chatter, nothing durable" and "error" not in rec
    assert (rec["tokens_out"], rec["calls"]) == (150, 1)
    assert not (tmp_path / "memory").exists()
    counts = staging.counts(engine.data)
    assert (
        counts["by_state"]["skipped"] == 1
        and counts["pending"] == sum(counts["by_state"].values()) - 1
    )


def test_every_category_of_a_triage_settles_when_the_api_keeps_failing(server, project, tmp_path):
    server.replies = [OVERLOADED]
    engine = engine_for(project, tmp_path, retries=1)
    (tid,) = stage(engine)
    states = engine.process(tid)
    assert states and set(states.values()) <= {"failed", "ready"}
    assert all(s == "failed" for s in states.values())


def test_a_missing_key_is_one_line_to_act_on(project, tmp_path, monkeypatch):
    from memcurate.curator.drafting import DrafterUnavailable, get_drafter

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(
        DrafterUnavailable, match="backend: anthropic, but ANTHROPIC_API_KEY is not set"
    ):
        get_drafter({"backend": "anthropic"})


def test_a_dated_model_id_is_priced_as_its_family_and_an_unknown_one_records_no_cost(
    server, project, tmp_path
):
    dated, unknown = message(GOOD), message(GOOD)
    dated["model"], unknown["model"] = "claude-haiku-4-5-20251001", "claude-nova-9"
    server.replies = [(200, dated), (200, unknown), (200, unknown)]
    # a decision's answer fails other categories: not asked again
    engine = engine_for(project, tmp_path, retries=0)
    (tid,) = stage(engine)
    engine.process(tid, only=["decision"])
    rec = decision(engine, tid)
    # haiku 4.5
    assert rec["cost_usd"] == pytest.approx((1000 * 1 + 150 * 5 + 200 * 1.25 + 300 * 0.10) / 1e6)

    cats = [c for c in staging.category_states(engine.data, tid) if c != "decision"][:2]
    engine.process(tid, only=cats)
    recs = [staging.category_states(engine.data, tid)[c] for c in cats]
    # no wrong cost
    assert all("cost_usd" not in r and r["calls"] == 1 and r["tokens_in"] == 1500 for r in recs)
    said = [
        n for r in recs for n in r.get("notes", []) if "no price known for model claude-nova-9" in n
    ]
    assert len(said) == 1  # said once, not on every call


def sent_chars(req: dict) -> int:
    """What one request sent to the model, in characters: system prompt, tool schema, user prompt."""
    body = req["body"]
    return (
        sum(len(b["text"]) for b in body["system"])
        + sum(len(json.dumps(t["input_schema"])) for t in body["tools"])
        + sum(len(m["content"]) for m in body["messages"])
    )


def swell(engine: Engine, tid: str, chars: int) -> int:
    """Make every triggered category's excerpt and snippets of the staged triage huge, as a session of
    pasted logs would if triage let them through; returns how many categories are triggered."""
    path = os.path.join(staging.triage_dir(engine.data, tid), "triage.json")
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    triggered = [c for c in doc["categories"].values() if c.get("triggered")]
    for n, cat in enumerate(triggered):
        cat["excerpt"] = (
            f"BEGIN-{n} "
            + "the deploy log says the cache was cold again; " * (chars // 46)
            + f" END-{n}"
        )
        cat["snippets"] = [{**s, "text": "x" * chars} for s in cat["snippets"]]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return len(triggered)


def test_a_huge_triage_sends_at_most_the_input_cap_and_says_what_was_cut(server, project, tmp_path):
    from memcurate.curator.drafting.input_cap import CHARS_PER_TOKEN

    cap = 12_000
    engine = backend_engine(project, tmp_path, "anthropic", max_input_tokens=cap)
    (tid,) = stage(engine)
    n = swell(engine, tid, 200_000)
    engine.process(tid)
    look, *drafts = server.requests  # a backfill asks for a second look at the session, made first
    assert look["body"]["tools"][0]["name"] == "record_findings" and len(drafts) == n > 1
    # the whole triage, every call
    assert sum(sent_chars(r) for r in server.requests) <= cap * CHARS_PER_TOKEN
    # the look takes at most 2/3; the drafts share the rest
    assert sent_chars(look) <= cap * CHARS_PER_TOKEN * 2 // 3
    for req in drafts:
        prompt = req["body"]["messages"][0]["content"]
        assert "characters cut: per-triage input cap …]" in prompt
        # the excerpt keeps its beginning and its end
        assert "BEGIN-" in prompt and "END-" in prompt
    spent = -(-staging.read_second_look(engine.data, tid)["sent_chars"] // CHARS_PER_TOKEN)
    for rec in staging.category_states(engine.data, tid).values():
        assert (
            rec["input_cut"]["chars"] > 200_000
            and rec["input_cut"]["share_tokens"] == (cap - spent) // n
        )


def test_an_ordinary_triage_is_not_cut_by_the_default_cap(server, project, tmp_path):
    engine = engine_for(project, tmp_path)
    (tid,) = stage(engine)
    engine.process(tid)
    assert server.requests and not any(
        "characters cut" in r["body"]["messages"][0]["content"] for r in server.requests
    )
    assert not any("input_cut" in rec for rec in staging.category_states(engine.data, tid).values())


def test_a_cap_too_small_for_any_prompt_fails_each_category_without_a_call(
    server, project, tmp_path
):
    engine = backend_engine(project, tmp_path, "anthropic", max_input_tokens=100)
    (tid,) = stage(engine)
    states = engine.process(tid)
    assert set(states.values()) == {"failed"} and server.requests == []
    assert "drafting.max_input_tokens is too small" in decision(engine, tid)["error"]


def test_an_unchanged_transcript_costs_nothing_the_second_time(server, project, tmp_path, capsys):
    """End to end: `memcurate triage` stages the session, --auto-approve drafts it through the API (the
    decision saved, every other category skipped by the model); a second pass over the same transcript
    stages nothing, the next run makes no call, and the totals do not move."""
    from conftest import run_cli
    from test_engine import DEMO

    from memcurate.curator.candidates import usage
    from memcurate.curator.commands import run_headless

    skip = (200, message({"skip": True, "reason": "only task chatter, nothing durable"}))

    # the second look confirms what the keywords flagged (so it is drafted) and adds nothing
    def confirmed(
        body,
    ):
        said = body["messages"][0]["content"]
        flagged = (
            said.split("Keyword hints for this stretch (unconfirmed): ", 1)[1]
            .split(".\n", 1)[0]
            .split(", ")
        )
        cited = sorted({int(n) for n in re.findall(r"^\[(\d+)\] ", said, re.M)})[
            :12
        ]  # the decision's evidence
        return 200, message(
            {
                "facts": [
                    {"category": c, "entries": cited, "statement": f"{c} seen"}
                    for c in flagged
                    if c != "none"
                ]
            },
            name="record_findings",
        )

    server.choose = lambda body: (
        confirmed(body)
        if body["tools"][0]["name"] == "record_findings"
        else None
        if "Category: decision" in body["messages"][0]["content"]
        else skip
    )
    engine_for(project, tmp_path, retries=0).close()  # writes the project's config
    assert run_cli("triage", DEMO, "--json", cwd=project).returncode == 0
    assert run_headless(str(project), True) == 0  # skips are not failures
    first = json.loads(capsys.readouterr().out)
    calls = len(server.requests)
    assert [r["body"]["tools"][0]["name"] for r in server.requests].count("record_findings") == 1
    skips = calls - 2  # every draft but the decision's; and one second look at the session
    data = str(project / ".memcurate")
    assert skips > 1 and len(first["created"]) == 1 and first["failed"] == []
    assert staging.counts(data)["by_state"] == {"saved": 1, "skipped": skips}
    assert len(first["skipped"]) == skips and "decision" not in {
        s["category"] for s in first["skipped"]
    }
    assert all(s["reason"] == "only task chatter, nothing durable" for s in first["skipped"])
    totals = usage.totals(data)
    assert totals["overall"]["calls"] == calls and totals["overall"]["tokens_in"] == 1500 * calls

    again = json.loads(run_cli("triage", DEMO, "--json", cwd=project).stdout)
    assert again["triages"][0]["status"] == "nothing-new"
    assert run_headless(str(project), False) == 0
    text = capsys.readouterr().out
    # nothing skipped in this run: the earlier skips are not reported again
    assert "skipped" not in text
    assert len(server.requests) == calls and usage.totals(data) == totals


def test_the_text_summary_lists_each_skip_with_its_reason(capsys):
    from memcurate.curator.commands import print_summary

    print_summary(
        {
            "memory_root": "/m",
            "created": [],
            "updated": [],
            "deleted": [],
            "noop": [],
            "blocked": [],
            "held": [],
            "conflicts": [],
            "failed": [],
            "busy": [],
            "skipped": [{"triage": "T1", "category": "runbook", "reason": "only task chatter"}],
        }
    )
    out = capsys.readouterr().out
    assert (
        "skipped   1  (nothing durable, or said by another memory)\n  T1/runbook: only task chatter\n"
        in out
    )


CONCERNS = {
    "concerns": [
        {
            "kind": "stale",
            "where": "## Decision",
            "message": "the session later moved to 30-minute tokens",
        },
        {"kind": "chatter", "message": "the Alternatives line is task talk"},
    ]
}


def test_the_verifier_adds_its_concerns_as_advisories_and_its_usage_to_the_sums(
    server, project, tmp_path
):
    server.checks = [(200, message(CONCERNS, name="record_concerns"))]
    engine = backend_engine(project, tmp_path, "anthropic", verify=True)
    tid, state = draft_decision(engine)
    assert state == "ready"
    draft_call, check_call = server.requests
    body = check_call["body"]
    # verify.model: haiku, which takes
    assert body["model"] == engine.cfg["models"]["haiku"] == "claude-haiku-5-5"
    assert body["tool_choice"] == {"type": "tool", "name": "record_concerns"}  # a forced tool
    assert body["system"][0]["text"] == prompts.CHECK_SYSTEM_PROMPT
    assert body["tools"][0]["input_schema"] == prompts.check_schema()
    content = body["messages"][0]["content"]
    review = engine.review(tid, "decision")
    assert (
        review["draft"].strip() in content
        and "<<<BEGIN MEMORY-" in content
        and "<<<BEGIN EXCERPT-" in content
    )
    assert "s3cretpass" not in json.dumps(body)
    assert issue_codes(engine, tid) == [
        ("verifier", "stale: the session later moved to 30-minute tokens"),
        ("verifier", "chatter: the Alternatives line is task talk"),
    ]
    assert [i["where"] for i in review["issues"] if i["code"] == "verifier"] == [
        "verifier: ## Decision",
        "verifier",
    ]
    assert not review["blocked"]  # never a BLOCK
    rec = decision(engine, tid)
    # the draft's and the check's
    assert (rec["calls"], rec["tokens_in"], rec["tokens_out"]) == (
        2,
        3000,
        300,
    )
    assert rec["verifier"]["model"] == "haiku" and rec["verifier"]["concerns"] == 2


@pytest.mark.parametrize(
    "reply",
    [OVERLOADED, (200, message({"concerns": "none"}, name="record_concerns"))],
    ids=["overloaded", "malformed"],
)
def test_a_failing_verifier_never_fails_the_draft(server, project, tmp_path, reply):
    server.checks = [reply]
    engine = backend_engine(project, tmp_path, "anthropic", retries=1, verify=True)
    tid, state = draft_decision(engine)
    assert state == "ready"
    ((code, why),) = issue_codes(engine, tid)
    assert code == "verifier" and why.startswith("verifier unavailable: anthropic")
    assert decision(engine, tid)["calls"] == 3  # the draft, and the check asked twice


def test_the_verifiers_concerns_go_with_an_edit_and_come_back_with_the_draft(
    server, project, tmp_path
):
    server.checks = [(200, message(CONCERNS, name="record_concerns"))]
    engine = backend_engine(project, tmp_path, "anthropic", verify=True)
    tid, _ = draft_decision(engine)
    text = engine.review(tid, "decision")["text"]
    engine.change_action(tid, "decision", "create")  # the text is still the drafter's: they stay
    assert len(issue_codes(engine, tid)) == 2
    engine.edit(tid, "decision", text)  # an edit that changes nothing keeps them too
    assert len(issue_codes(engine, tid)) == 2
    engine.edit(
        tid,
        "decision",
        text.replace("## Decision\n", "## Decision\nAccess tokens last 30 minutes. "),
    )
    assert issue_codes(engine, tid) == []  # about the old text: the person has read them
    assert len(server.requests) == 2  # a person's edit is not sent to the verifier
    engine.redecide(tid, "decision")  # decided again from the draft: its concerns are back
    assert len(issue_codes(engine, tid)) == 2


def test_a_model_that_refuses_a_forced_tool_is_asked_again_at_once_and_remembered(
    server, project, tmp_path
):
    """A model the drafter does not know to refuse a forced tool_choice answers 400: the same draft is
    asked again unforced, and the drafter's later calls to that model are never forced."""
    import dataclasses

    from memcurate.curator.drafting import DraftRequest

    server.refuse_forced = {"claude-fable-5-1"}
    engine = engine_for(project, tmp_path, retries=0)
    (tid,) = stage(engine)
    request = dataclasses.replace(
        DraftRequest.from_triage(staging.load_triage(engine.data, tid), "decision", engine.cfg),
        model_id="claude-fable-5-1",
    )
    first, second = engine.drafter.draft(request), engine.drafter.draft(request)
    assert first.ok and second.ok and first.error is None
    assert [r["body"]["tool_choice"]["type"] for r in server.requests] == ["tool", "auto", "auto"]
    assert "record_memory tool" in server.requests[1]["body"]["system"][0]["text"]


def test_an_unforced_model_that_answers_in_json_text_is_read(server, project, tmp_path):
    text = {
        **message(GOOD),
        "content": [{"type": "text", "text": "```json\n" + json.dumps(GOOD) + "\n```"}],
        "stop_reason": "end_turn",
    }
    server.replies = [(200, text)]
    engine = engine_for(project, tmp_path, retries=0)
    tid, state = draft_decision(engine)  # with sonnet 5.5, which is never forced
    assert state == "ready" and server.requests[0]["body"]["tool_choice"] == {"type": "auto"}
    assert memfile.parse(engine.review(tid, "decision")["text"]).title == GOOD["title"]


def test_with_the_verification_pass_on_the_cap_still_bounds_the_triage(server, project, tmp_path):
    """Each draft is sent twice (drafted, then checked with the draft itself): the shares are halved, so
    the whole triage (its look, its drafts, their checks) stays within the cap, but for the drafts the
    checks carry (which drafting.max_tokens bounds)."""
    from memcurate.curator.drafting.input_cap import CHARS_PER_TOKEN

    cap = 24_000
    engine = backend_engine(project, tmp_path, "anthropic", verify=True, max_input_tokens=cap)
    (tid,) = stage(engine)
    n = swell(engine, tid, 200_000)
    # the server answers every category with the decision: only it is drafted
    states = engine.process(tid)
    assert states["decision"] == "ready"
    checks = [r for r in server.requests if r["body"]["tools"][0]["name"] == "record_concerns"]
    assert (
        len(checks) == 1
        and "characters cut: per-triage input cap …]" in checks[0]["body"]["messages"][0]["content"]
    )
    drafts = len(engine.review(tid, "decision")["draft"])
    assert sum(sent_chars(r) for r in server.requests) <= cap * CHARS_PER_TOKEN + drafts
    spent = -(-staging.read_second_look(engine.data, tid)["sent_chars"] // CHARS_PER_TOKEN)
    for rec in staging.category_states(engine.data, tid).values():
        assert rec["input_cut"]["share_tokens"] == (cap - spent) // (2 * n)


@pytest.mark.parametrize("given, read", [(0.3, 0.3), (None, None), (-1, None), (True, None)])
def test_the_models_own_confidence_goes_through_the_same_gate(
    server, project, tmp_path, given, read
):
    answer = dict(GOOD) if given is None else {**GOOD, "confidence": given}
    server.replies = [(200, message(answer))]
    engine = engine_for(project, tmp_path)
    tid, state = draft_decision(engine)
    assert state == "ready"  # a bad confidence is never an error
    review = engine.review(tid, "decision")
    assert review["drafter"]["confidence"] == read
    assert [f["effect"] for f in review["confidence"]["factors"] if f["name"] == "model"] == (
        [pytest.approx(0.2 * (2 * read - 1))] if read is not None else []
    )
    assert (
        server.requests[0]["body"]["tools"][0]["input_schema"]["properties"]["confidence"][
            "maximum"
        ]
        == 1
    )
