"""A session's condensed activity: what people and the assistant wrote in a byte range, for the second look.

The second look (curator/candidates/second_look.py) asks a model which categories a stretch of a
session holds. It is sent only this: the user prompts and the assistant's prose of the range, read
again with the one transcript parser, each message redacted and stripped of control characters,
code blocks folded to one line, a failed command summarised in one line; no tool output, thinking,
system reminders or meta records. Every message is labelled with its turn, so the answer can name
turns, and the whole is bounded: a longer session keeps its first and last messages and says how much
of the middle was left out (those turns cannot be named).
"""

from __future__ import annotations

from curator.capture.redact import redact_text
from curator.capture.transcript import TranscriptReader
from curator.capture.triage import Rules, command_signature, error_line, is_narration, is_noise_prompt
from curator.util.textsafe import clean, one_line

MESSAGE_CHARS = 3000  # one message's share at most: a pasted log must not crowd out the session


class Message:
    __slots__ = ("seq", "turn", "speaker", "text")

    def __init__(self, seq: int, turn: int, speaker: str, text: str) -> None:
        self.seq = seq  # its position in the range, to keep transcript order
        self.turn = turn
        self.speaker = speaker  # user | parent | assistant | failed
        self.text = text  # redacted, cleaned, bounded

    def block(self) -> str:
        return f"[turn {self.turn} · {self.speaker}] {self.text}"


class Activity:
    """The messages kept (in order), the text sent (numbered, bounded) and what was cut."""

    def __init__(self, messages: list[Message], text: str, left_out: int, bad_lines: int) -> None:
        self.messages = messages
        self.text = text
        self.left_out = left_out  # characters of messages not sent
        self.bad_lines = bad_lines

    @property
    def turns(self) -> set[int]:
        """The turns a model may name: those with a message in the text."""
        return {m.turn for m in self.messages}

    def of_turns(self, turns) -> list[Message]:
        wanted = set(turns)
        return [m for m in self.messages if m.turn in wanted]


def _prose(text: str) -> str:
    """A message as it is sent: code blocks folded to a line each, redacted, cleaned, bounded."""
    out: list[str] = []
    code = 0
    for line in text.splitlines():
        if line.strip().startswith(("```", "~~~")):
            if code:
                out.append(f"[code, {code - 1} lines]")
                code = 0
            else:
                code = 1
            continue
        if code:
            code += 1
        elif line.strip():
            out.append(line.rstrip())
    if code:
        out.append(f"[code, {code - 1} lines]")
    # Redact, then cut: a cut first could split a secret and keep half of it.
    text = clean(redact_text("\n".join(out))).strip()
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


def condense(path: str, byte_range: list[int], cfg: dict, *, turn_base: int = 0, subagent: bool = False,
             max_chars: int | None = None) -> Activity:
    """The condensed activity of `path` between the byte offsets of `byte_range`. OSError when the
    transcript cannot be read."""
    from curator.capture.incremental import rules_for

    rules: Rules = rules_for(cfg)
    limit = int(max_chars or cfg["second_look"]["max_chars"])
    start, end = byte_range
    reader = TranscriptReader(path, start, turn_base=turn_base, limit=end,
                              max_line_bytes=cfg["triage"]["max_line_bytes"], outputs_of=rules.error_tools,
                              max_message_chars=rules.max_message_chars)
    user = "parent" if subagent else "user"
    messages: list[Message] = []
    calls: dict[str, str] = {}  # tool_use id -> command signature, for a failed command's line
    for e in reader:
        if e.kind == "user" and not is_noise_prompt(e.text, rules.acks):
            text = _prose(e.text)
            if text:
                messages.append(Message(len(messages), e.turn, user, text))
        elif e.kind == "assistant":
            for tu in e.tool_uses:
                if tu.name in rules.error_tools:
                    calls[tu.id] = command_signature(tu.target) or tu.name
            lines = [ln for ln in e.text.splitlines() if not is_narration(ln.strip(), rules)]
            text = _prose("\n".join(lines))
            if text:
                messages.append(Message(len(messages), e.turn, "assistant", text))
        elif e.kind == "tool_result" and e.is_error and not e.rejected and e.tool_use_id in calls:
            said = one_line(redact_text(error_line(e.text)), 200)
            messages.append(Message(len(messages), e.turn, "failed", f"`{calls[e.tool_use_id]}`: {said}"))
    kept, head, left_out = _bounded(messages, limit)
    blocks = [m.block() for m in kept]
    if left_out:
        blocks.insert(head, f"[… {left_out:,} characters of the session left out here (second_look.max_chars) …]")
    return Activity(kept, "\n\n".join(blocks), left_out, reader.stats.bad)


def _bounded(messages: list[Message], limit: int) -> tuple[list[Message], int, int]:
    """The first and last messages within `limit` characters (the middle left out), how many of them
    come first, and how many characters were left out. The start says what the session set out to do, the end what came of it."""
    sizes = [len(m.block()) + 2 for m in messages]
    if sum(sizes) <= limit:
        return messages, len(messages), 0
    head: list[Message] = []
    used = 0
    for m, n in zip(messages, sizes):
        if used + n > limit // 2:
            break
        head.append(m)
        used += n
    tail: list[Message] = []
    for m, n in zip(reversed(messages[len(head):]), reversed(sizes[len(head):])):
        if used + n > limit:
            break
        tail.append(m)
        used += n
    kept = head + tail[::-1]
    return kept, len(head), sum(sizes) - used
