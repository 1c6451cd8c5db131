"""Synthetic transcripts in Claude Code's real format, for tests that must not depend on ../shared."""

from __future__ import annotations

import json
from pathlib import Path

DEFAULT_SESSION = "0b5e6a34-1111-4222-8333-444455556666"


class Transcript:
    """Records the way Claude Code writes them: one JSON object a line; the
    blocks of one assistant reply are separate records sharing message.id."""

    def __init__(self, session: str = DEFAULT_SESSION,
                 stamp: str = "2025-07-14T22:59") -> None:
        self.session = session
        self.stamp = stamp
        self.records: list[dict] = []
        self._n = 0

    def _base(self, rtype: str) -> dict:
        self._n += 1
        return {"parentUuid": f"uuid-{self._n - 1}" if self._n > 1 else None, "isSidechain": False,
                "userType": "external", "cwd": "/home/dev/app", "sessionId": self.session, "version": "1.0.51",
                "type": rtype, "uuid": f"uuid-{self._n}",
                "timestamp": f"{self.stamp}:{self._n % 60:02d}.{self._n:03d}Z"}

    def user(self, text: str) -> "Transcript":
        r = self._base("user")
        r["message"] = {"role": "user", "content": text}
        self.records.append(r)
        return self

    def assistant(self, *blocks: dict) -> "Transcript":
        mid = f"msg_{self.session[:8]}_{self._n}"
        for b in blocks:
            r = self._base("assistant")
            r["message"] = {"id": mid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
                            "content": [b], "stop_reason": None, "usage": {"input_tokens": 4, "output_tokens": 5}}
            r["requestId"] = f"req_{mid}"
            self.records.append(r)
        return self

    def result(self, tool_use_id: str, content: str, *, is_error: bool = False) -> "Transcript":
        r = self._base("user")
        r["message"] = {"role": "user", "content": [
            {"tool_use_id": tool_use_id, "type": "tool_result", "content": content, "is_error": is_error}]}
        r["toolUseResult"] = {"stdout": "" if is_error else content, "stderr": content if is_error else "",
                              "interrupted": False}
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
