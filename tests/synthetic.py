"""Synthetic transcripts in Claude Code's real format, for tests that must not depend on ../shared."""

from __future__ import annotations

import json
from pathlib import Path

DEFAULT_SESSION = "0b5e6a34-1111-4222-8333-444455556666"


class Transcript:
    """Records the way Claude Code writes them: one JSON object a line; the
    blocks of one assistant reply are separate records sharing message.id."""

    def __init__(self, session: str = DEFAULT_SESSION, stamp: str = "2025-07-14T22:59") -> None:
        self.session = session
        self.stamp = stamp
        self.records: list[dict] = []
        self._n = 0

    def _base(self, rtype: str) -> dict:
        self._n += 1
        return {
            "parentUuid": f"uuid-{self._n - 1}" if self._n > 1 else None,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/dev/app",
            "sessionId": self.session,
            "version": "1.0.51",
            "type": rtype,
            "uuid": f"uuid-{self._n}",
            "timestamp": f"{self.stamp}:{self._n % 60:02d}.{self._n:03d}Z",
        }

    def user(self, text: str) -> Transcript:
        r = self._base("user")
        r["message"] = {"role": "user", "content": text}
        self.records.append(r)
        return self

    def assistant(self, *blocks: dict) -> Transcript:
        mid = f"msg_{self.session[:8]}_{self._n}"
        for b in blocks:
            r = self._base("assistant")
            r["message"] = {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-20250514",
                "content": [b],
                "stop_reason": None,
                "usage": {"input_tokens": 4, "output_tokens": 5},
            }
            r["requestId"] = f"req_{mid}"
            self.records.append(r)
        return self

    def result(self, tool_use_id: str, content: str, *, is_error: bool = False) -> Transcript:
        r = self._base("user")
        r["message"] = {
            "role": "user",
            "content": [
                {
                    "tool_use_id": tool_use_id,
                    "type": "tool_result",
                    "content": content,
                    "is_error": is_error,
                }
            ],
        }
        r["toolUseResult"] = {
            "stdout": "" if is_error else content,
            "stderr": content if is_error else "",
            "interrupted": False,
        }
        self.records.append(r)
        return self

    def lines(self) -> list[bytes]:
        return [json.dumps(r).encode() + b"\n" for r in self.records]

    def bytes(self) -> bytes:
        return b"".join(self.lines())

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.bytes())
        return path


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def tool(tid: str, name: str, **inp) -> dict:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def pytest_failure(n: int) -> str:
    """A real-shaped pytest failure, the same one in every run `n`: only what changes between sessions
    (the temp path, an object address, line numbers, a time stamp, the durations) differs with `n`."""
    tmp = f"/tmp/pytest-of-dev/pytest-{40 + n}/test_save0"
    return f"""============================= test session starts ==============================
platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0
rootdir: /home/dev/app
collected 12 items

tests/test_store.py F...........                                         [100%]

=================================== FAILURES ===================================
__________________________________ test_save ___________________________________

tmp_dir = '{tmp}'

    def test_save(tmp_dir):
        store = Store(tmp_dir)
>       store.save({{"id": {n}}})

tests/test_store.py:{14 + n}: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

self = <app.store.Store object at 0x7f3a{n:04x}b2c0>, doc = {{'id': {n}}}

    def save(self, doc):
>       with open(os.path.join(self.root, "data.json"), "w") as f:
E       FileNotFoundError: [Errno 2] No such file or directory: '{tmp}/data.json'

app/store.py:{30 + n}: FileNotFoundError
------------------------------ Captured log call -------------------------------
INFO     app.store:store.py:{28 + n} 2026-11-{10 + n}T09:{10 + n}:07.{n}12Z saving to {tmp}
=========================== short test summary info ============================
FAILED tests/test_store.py::test_save - FileNotFoundError: [Errno 2] No such file or directory: '{tmp}/data.json'
========================= 1 failed, 11 passed in {n}.{n}3s =========================
"""
