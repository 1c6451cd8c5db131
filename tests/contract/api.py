"""A scripted Messages API on 127.0.0.1 for driving the real Claude Code in print mode.

No model is reachable in CI, so the contract tests play the model: a script is a list of turns, each the
assistant's text and/or tool calls, served in order to the client's conversation requests (the ones that
offer tools) as the streaming SSE events the real API sends. Every request is recorded with its body, so
a test asserts what reached the model (a hook's context, a tool_result's error, the system prompt). The
conversation is every Messages request (the main session's, a subagent's, a `claude -p --tools ""` child's)
but a side request (`side`, by default the quota probe), which gets a short text; count_tokens gets a
count; a script that runs out ends the turn. So the client never hangs waiting on us. `status` answers every
request with an API error instead (401 bad key, 402 no credit, 529 overloaded).
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "claude-sonnet-4-5"
SIDE_TEXT = "ok"  # what a request outside the script gets (a title, a topic, a probe)
END_TEXT = "Done."  # a conversation request after the script ran out

ERRORS = {
    401: (401, "authentication_error", "invalid x-api-key"),
    402: (
        400,
        "invalid_request_error",
        "Your credit balance is too low to access the Anthropic API. "
        "Please go to Plans & Billing to upgrade or purchase credits.",
    ),
    429: (
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit",
    ),
    529: (529, "overloaded_error", "Overloaded"),
}


@dataclass
class ToolUse:
    """A tool call the scripted model makes (its id is given when the turn is served)."""

    name: str
    input: dict[str, Any]


@dataclass
class Turn:
    """One assistant message: text first, then tool calls (stop_reason tool_use when there are any)."""

    text: str = ""
    tools: list[ToolUse] = field(default_factory=list)


@dataclass
class Request:
    """One request as it reached us."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: str
    scripted: bool  # a conversation request (served from the script unless in status mode), not a side request

    @property
    def text(self) -> str:
        """The whole body as text: what a test searches for a string that must have reached the model."""
        return self.raw


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def is_side_request(body: dict) -> bool:
    """A Messages request that is not the conversation: Claude Code's quota probe ("quota", max_tokens 1).
    With nonessential traffic off, 2.1.328 in print mode sent no other (no title, no topic request); a new
    release that does shows up as an extra conversation request in `ScriptedAPI.describe()`."""
    return (body.get("max_tokens") or 0) <= 1


def system_text(body: dict) -> str:
    """The request's system prompt as one string."""
    system = body.get("system")
    if isinstance(system, list):
        return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
    return system if isinstance(system, str) else ""


def is_memory_selector(body: dict) -> bool:
    """Claude Code's recall selector (its recall mode): "You are selecting memories that will be useful…",
    the memory files listed in its first message as `- [type] path (mtime): description`."""
    return "You are selecting memories" in system_text(body)


class ScriptedAPI:
    """The server: start(), `.url` for ANTHROPIC_BASE_URL, `.requests` after the run, stop()."""

    def __init__(
        self,
        script: list[Turn] | None = None,
        status: int | None = None,
        side=is_side_request,
        side_answer=None,
        answer_after=None,
        answer_after_timeout: float = 30.0,
    ):
        self.script = list(script or [])
        self.status = status
        # body -> bool: answered with side_answer(body) (SIDE_TEXT), not from the script
        self.side_request = side
        self.side_answer = side_answer or (lambda body: SIDE_TEXT)
        # answer_after: body -> bool. The conversation is answered only once a side request it matches came
        # (or answer_after_timeout passed): Claude Code's recall selector runs beside the turn, and a
        # scripted turn answered at once can end the run before it asks.
        self.answer_after = answer_after
        self.answer_after_timeout = answer_after_timeout
        self.awaited = threading.Event()
        self.requests: list[Request] = []
        self._served = 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle
    def start(self) -> ScriptedAPI:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                api._handle(self)

            def do_GET(self) -> None:  # noqa: N802
                api._handle(self)

            def do_HEAD(self) -> None:  # noqa: N802
                api._handle(self)

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="scripted-api", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the API first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- what the tests read
    @property
    def conversation(self) -> list[Request]:
        """The conversation requests, in order (the model's view of the session)."""
        return [r for r in self.requests if r.scripted]

    @property
    def side(self) -> list[Request]:
        """The side requests (a quota probe, a connectivity HEAD, count_tokens): logged, answered, not scripted."""
        return [r for r in self.requests if not r.scripted]

    @property
    def unserved(self) -> int:
        """Turns of the script the client never asked for (it stopped early)."""
        return max(0, len(self.script) - self._served)

    def describe(self) -> str:
        """One line per request, for a failure message that says what the client did."""
        lines = []
        for r in self.requests:
            kind = "conversation" if r.scripted else "side"
            lines.append(
                f"{r.method} {r.path} [{kind}] model={r.body.get('model')} "
                f"messages={len(r.body.get('messages') or [])} tools={len(r.body.get('tools') or [])}"
            )
        return "\n".join(lines) or "(no request reached the API)"

    # -- serving
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        n = int(h.headers.get("content-length") or 0)
        raw = h.rfile.read(n).decode("utf-8", "replace") if n else ""
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {}
        path = h.path
        scripted = (
            h.command == "POST"
            and path.split("?")[0].endswith("/v1/messages")
            and not self.side_request(body)
        )
        if (
            self.answer_after is not None
            and not scripted
            and h.command == "POST"
            and self.answer_after(body)
        ):
            self.awaited.set()
        if self.answer_after is not None and scripted:
            self.awaited.wait(self.answer_after_timeout)
        with self._lock:
            turn = None
            if scripted and self.status is None:
                turn = (
                    self.script[self._served] if self._served < len(self.script) else Turn(END_TEXT)
                )
                self._served += 1
            self.requests.append(
                Request(h.command, path, dict(h.headers.items()), body, raw, scripted)
            )
            ids = [next(self._ids) for _ in range(1 + len(turn.tools if turn else []))]
        if self.status is not None:
            status, kind, message = ERRORS.get(
                self.status, (self.status, "api_error", "scripted error")
            )
            return self._json(
                h, status, {"type": "error", "error": {"type": kind, "message": message}}
            )
        if h.command == "HEAD":  # a connectivity probe (/api/hello): headers only
            h.send_response(200)
            h.send_header("content-length", "0")
            return h.end_headers()
        if h.command != "POST":
            return self._json(h, 200, {})
        if path.split("?")[0].endswith("/count_tokens"):
            return self._json(h, 200, {"input_tokens": max(1, len(raw) // 4)})
        if not path.split("?")[0].endswith("/v1/messages"):
            return self._json(
                h, 404, {"type": "error", "error": {"type": "not_found_error", "message": path}}
            )
        turn = turn or Turn(self.side_answer(body))
        message = self._message(turn, ids, body.get("model") or MODEL)
        if body.get("stream"):
            self._stream(h, message)
        else:
            self._json(h, 200, message)

    @staticmethod
    def _message(turn: Turn, ids: list[int], model: str) -> dict:
        content: list[dict] = []
        if turn.text:
            content.append({"type": "text", "text": turn.text})
        for n, tool in zip(ids[1:], turn.tools):
            content.append(
                {"type": "tool_use", "id": f"toolu_{n:04d}", "name": tool.name, "input": tool.input}
            )
        return {
            "id": f"msg_{ids[0]:04d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use" if turn.tools else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }

    @staticmethod
    def _json(h: BaseHTTPRequestHandler, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        h.send_response(status)
        h.send_header("content-type", "application/json")
        h.send_header("request-id", "req_contract")
        h.send_header("content-length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    @staticmethod
    def _stream(h: BaseHTTPRequestHandler, message: dict) -> None:
        """The Messages API's streaming events for `message` (text_delta and input_json_delta)."""
        start = dict(
            message, content=[], stop_reason=None, usage={"input_tokens": 10, "output_tokens": 1}
        )
        events = [_sse("message_start", {"type": "message_start", "message": start})]
        for i, block in enumerate(message["content"]):
            if block["type"] == "text":
                events.append(
                    _sse(
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": i,
                            "content_block": {"type": "text", "text": ""},
                        },
                    )
                )
                events.append(
                    _sse(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "text_delta", "text": block["text"]},
                        },
                    )
                )
            else:
                head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                events.append(
                    _sse(
                        "content_block_start",
                        {"type": "content_block_start", "index": i, "content_block": head},
                    )
                )
                events.append(
                    _sse(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {
                                "type": "input_json_delta",
                                "partial_json": json.dumps(block["input"]),
                            },
                        },
                    )
                )
            events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
        events.append(
            _sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                    "usage": {"output_tokens": 10},
                },
            )
        )
        events.append(_sse("message_stop", {"type": "message_stop"}))
        data = b"".join(events)
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("cache-control", "no-cache")
        h.send_header("request-id", "req_contract")
        h.send_header("content-length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
