"""What a triage quotes: a triggered category's excerpt, and the session summary (the prompts and the last
reply read back from the transcript, the files changed, the activity), with the folder the session started
in that the files are relative to.

A pass with nothing triggered and no summary due never loads it.
"""

from __future__ import annotations

import os

from memcurate.curator.util import fastjson
from memcurate.curator.util.redact import redact_text
from memcurate.curator.util.textsafe import one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# The Triage (and its Snippets) these read are not named by type: triage.py imports this module.

MAX_CWD_RECORD = 4 << 20  # the session's folder is looked for in records up to this long ...
HEAD_RECORDS = 50  # ... among the first few (Claude Code writes it on its first prompt)


def _read_span(triage, span: list[int], limit: int) -> str:
    """The redacted text of the message at a [turn, start, end] span of the transcript."""
    if not triage.path or len(span) != 3:
        return ""
    from memcurate.curator.capture.transcript import TranscriptReader

    try:
        for e in TranscriptReader(
            triage.path, span[1], limit=span[2], max_message_chars=triage.r.max_message_chars
        ):
            if e.kind in ("user", "assistant") and e.text:
                # Redact, then cut (see Triage._prompt); one_line keeps the head.
                return one_line(redact_text(e.text), limit)
    except OSError:
        pass
    return ""


def session_summary(triage, score: float, values: dict) -> dict:
    """The session_summary category's entry: when it triggers, its snippets and excerpt, read back."""
    d = triage.digest
    entry = triage.category("session_summary", score, values)
    if not entry["triggered"]:
        return entry
    spans = list(d.prompts)
    if d.last_prompt and d.last_prompt not in spans:
        spans.append(d.last_prompt)
    prompts = [(s[0], _read_span(triage, s, 600)) for s in spans]
    prompts = [(t, p) for t, p in prompts if p]
    outcome = (d.outcome[0], _read_span(triage, d.outcome, 1200)) if d.outcome else None
    snippets = [
        {"turn": t, "speaker": "user", "text": one_line(p, triage.r.snippet_chars)}
        for t, p in prompts
    ]
    if outcome and outcome[1]:
        snippets.append(
            {
                "turn": outcome[0],
                "speaker": "assistant",
                "text": one_line(outcome[1], triage.r.snippet_chars),
            }
        )
    entry["snippets"] = snippets
    lines = [f"[turn {t} · user] {p}" for t, p in prompts]
    files = triage.files_changed()
    if files:
        lines.append("[files changed] " + ", ".join(one_line(f, 200) for f in files))
    lines.append(
        f"[activity] {d.tool_uses} tool uses ({', '.join(d.tools)}), {d.user_turns} user turns"
    )
    if outcome and outcome[1]:
        lines.append(f"[turn {outcome[0]} · assistant, last reply] {outcome[1]}")
    entry["excerpt"] = _bounded("\n\n".join(lines), triage.r.excerpt_chars)
    return entry


def session_cwd(source) -> str:
    """The folder the session started in: the top-level `cwd` of the transcript's first record that has one
    (a `cd` in Claude Code's shell moves the `cwd` of the records after it). `source` is a path or a file open
    in binary (read with pread: its position is left alone); "" when the head of the file does not say."""
    try:
        if hasattr(source, "fileno"):
            return _first_cwd(source.fileno())
        with open(source, "rb") as f:
            return _first_cwd(f.fileno())
    except (OSError, TypeError):
        return ""


def _first_cwd(fd: int) -> str:
    pos = 0
    for _ in range(HEAD_RECORDS):
        line = bytearray()
        while True:  # the record at pos, whole, up to its newline (or the end of the file)
            chunk = os.pread(fd, 1 << 16, pos + len(line))
            cut = chunk.find(b"\n")
            line += chunk if cut < 0 else chunk[:cut]
            if cut >= 0 or not chunk:
                break
            if len(line) > MAX_CWD_RECORD:
                return ""  # a record too long to look at before the first cwd
        if not line and not chunk:
            return ""
        pos += len(line) + 1
        if b'"cwd"' in line:
            try:
                rec = fastjson.loads(line)
            except ValueError:
                continue
            cwd = rec.get("cwd") if isinstance(rec, dict) else None
            if isinstance(cwd, str) and os.path.isabs(cwd) and "\0" not in cwd:
                return cwd
    return ""


def excerpt(snippets: Iterable, limit: int) -> str:
    """The snippets' context in transcript order (by `seq`): one block per message, each turn's prompt once.
    Triage and the second look (curator/candidates/second_look.py) both quote evidence this way."""
    parts: list[str] = []
    last_prompt_turn = None
    by_message: dict[int, dict[int, str]] = {}
    first: dict = {}
    for s in sorted(snippets, key=lambda s: s.seq):
        lines = by_message.setdefault(s.seq, {})
        first.setdefault(s.seq, s)
        for k, line in enumerate(s.context):
            lines[s.lo + k] = line
    for seq, lines in by_message.items():
        s = first[seq]
        turn, prompt = s.prompt
        if s.speaker in ("user", "parent"):
            last_prompt_turn = s.turn  # the prompt is this block itself
        elif prompt and turn != last_prompt_turn:
            parts.append(f"[turn {turn} · user] {prompt}")
            last_prompt_turn = turn
        parts.append(
            f"[turn {s.turn} · {s.speaker}]\n" + "\n".join(lines[k] for k in sorted(lines))
        )
    return _bounded("\n\n".join(parts), limit)


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
