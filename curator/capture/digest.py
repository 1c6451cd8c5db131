"""The session digest (issue 23): one numbered, redacted, bounded account of a session a reader can draft from.

Drafting used to see keyword excerpts: path lists, task notifications quoted as the user's words,
narration, and the error without its fix; half of what a person decides goes through tool records
it never sent. The digest keeps, in transcript order, one numbered entry each for:

- every user message (a subagent's "user" is its parent) and a slash command given with arguments;
- what the user decided through tools: AskUserQuestion answers (with the chosen option's
  description), ExitPlanMode plans approved (or rejected, with what the user said), a tool call
  rejected (with the person's reason when Claude Code recorded one), prompts queued while Claude
  worked (`queue-operation` / `queued_command`, once, however they were then delivered);
- the assistant's prose without narration ("Now let me…", "Perfect!", "All 84 tests pass"), and the
  last reply of each turn, its report, with more room;
- each failing command of an error tool (the config's runbook.error_tools) and, when the same
  command (or program) later passes, one entry pairing it with what changed in between.

Left out: task notifications, system reminders, isMeta expansions, local command output, interrupt
markers, compact summaries, tool output, path lists, repeats. Every entry is redacted before it is
cut, and cleaned of control characters.

The digest covers a byte range and says where it ended (the next range starts there); it is split in
segments of at most `max_chars` characters at turn boundaries, which partition the range: each
transcript byte is digested once. Entries are numbered across segments and carry the line (1-based)
and byte offsets of the records they come from, so a model's citations and a bench's labels map to
them. `files_changed` lists the writes that succeeded inside the project, relative to it.

An engine module (dataclasses are fine here): the hooks never import it.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field

from memcurate.curator.capture.summary import session_cwd
from memcurate.curator.capture.transcript import TranscriptReader, head, tail
from memcurate.curator.capture.triage import WRITE_TOOLS, command_signature, error_line
from memcurate.curator.util.paths import project_relative
from memcurate.curator.util.redact import redact_text
from memcurate.curator.util.safe_open import open_regular
from memcurate.curator.util.textsafe import clean, one_line

DEFAULT_MAX_CHARS = 60000  # per segment, as the second look's second_look.max_chars
# a smaller bound is taken as this: an entry must fit in a segment with its label
MIN_MAX_CHARS = 500
ASK, PLAN = "AskUserQuestion", "ExitPlanMode"
# Characters an entry keeps at most, by kind (after redaction; a longer text keeps its head and tail).
LIMITS = {
    "user": 6000,
    "command": 600,
    "queued": 2000,
    "answer": 2000,
    "plan": 12000,
    "plan_rejected": 4000,
    "rejection": 1500,
    "assistant": 2500,
    "report": 8000,
    "failed": 500,
    "fixed": 900,
}
CODE_LINES = 6  # a code block in the assistant's prose longer than this is folded to one line
# a tool record read again whole (an answer, a plan, a queued prompt) is at most this long
RECORD_BYTES = 4 << 20
FILES_SHOWN = 15  # files named per segment; the rest counted
MAX_FIX_FILES = 6
MAX_FIX_COMMANDS = 3
FIX_TURNS = 1  # a failure pairs with a run that passes in its turn or the next one

_REJECTED = (
    "The user doesn't want to proceed with this tool use",
    "The user doesn't want to take this action",
)
_USER_SAID = "the user said:"
_NOTE = "\n\nNote: The user's next message"
_ANSWERED = re.compile(
    r"^Your questions have been answered:\s*(.*?)\s*(?:\.\s*You can now continue.*)?$", re.S
)
_COMMAND = re.compile(
    r"<command-name>\s*(.*?)\s*</command-name>.*?<command-args>(.*?)</command-args>", re.S
)
_NOT_USER_WORDS = ("<task-notification>", "<bash-notification>")
_IMAGE_ONLY = re.compile(r"^(?:\s*\[Image #\d+\]\s*)+$")
_SENTENCE = re.compile(r"(?<=[.!?:])\s+(?=\S)")
_NARRATION = (
    "let me",
    "let's",
    "now let",
    "now i",
    "i'll",
    "i will",
    "i'm going to",
    "i am going to",
    "i need to",
    "i can see",
    "i see",
    "looking at",
    "next,",
    "next i",
    "first,",
    "first i",
    "then i",
    "now,",
    "time to",
    "moving on",
)
_FILLERS = frozenset(
    {
        "now",
        "first",
        "next",
        "then",
        "great",
        "perfect",
        "good",
        "ok",
        "okay",
        "alright",
        "excellent",
        "awesome",
        "nice",
        "so",
        "right",
        "sure",
    }
)
# The assistant asking for a secret ("Can you paste the password here?"): the short reply that follows is
# the secret itself, bare, which no pattern can tell from a word (curator/util/redact.py needs a cue).
_ASKS_SECRET = re.compile(
    r"(?i)\b(?:password|passphrase|passcode|pin|token|api[ -]?key|credentials?|secret)\b"
    r"[^\n]{0,160}(?:\?|\b(?:paste|send|share|give|enter|type)\b)"
    r"|\b(?:paste|send|share|give|enter|type)\b[^\n]{0,80}\b(?:password|passphrase|passcode|"
    r"pin|token|api[ -]?key|credentials?|secret)\b"
)
# A word of the reply that may be the secret: six characters or more, letters with a digit or a sign beside
# them ("Buksemand-IoT", a network's name, has neither).
_SECRET_WORD = re.compile(r"(?=\S*[A-Za-z])(?=\S*[0-9!@#$%^&*+=~])\S{6,}")
SECRET_REPLY_CHARS = 120  # a reply longer than this is a message, not a pasted secret


def masked_reply(text: str, asked: str) -> str:
    """`text` with the words that may be a secret masked, when it is a short reply to `asked`, a message
    of the assistant's asking for one; else `text` as it is."""
    if len(text) > SECRET_REPLY_CHARS or not _ASKS_SECRET.search(asked[-600:]):
        return text
    return _SECRET_WORD.sub("[REDACTED:password]", text)


_REASON = re.compile(
    r"(?i)\b(?:because|since|so that|due to|to avoid|otherwise|in order to|the reason|which means)\b"
)
_RULE_WORDS = re.compile(
    r"(?i)\b(?:instead|rather than|must|never|always|don't|do not|can't|cannot|won't|should)\b"
)
_MARKER = re.compile(r"^\s*(?:[-*•>]+|\d+[.)]|#+)\s+")
_STATUS = re.compile(
    r"(?i)^[\W_]*(?:(?:all|the)\s+)?(?:\d+\s+)?(?:(?:unit|integration|e2e)\s+)?(?:tests?|specs?|checks?"
    r"|builds?|lint(?:ing|er|ers)?|type ?checks?|compilation)\b[^.!?]{0,60}\b(?:pass(?:es|ed|ing)?"
    r"|succeed(?:s|ed)?|green|clean|compiles?|works?|working|ok)\b"
)
# "Perfect!", "Much cleaner!", "✅ Done!"
_EXCLAMATION = re.compile(r"^[\W_]*(?:\w+[\W_]+){0,2}\w*!+[\W_]*$")
_ERROR_WORDS = re.compile(
    r"(?i)error|exception|fail|fatal|cannot|can't|not found|no such|denied|refused|invalid"
    r"|missing|unknown|undefined|timed out|blocked"
)
_READ_ONLY = frozenset(
    {
        "jobs",
        "ps",
        "ls",
        "cat",
        "head",
        "tail",
        "grep",
        "rg",
        "find",
        "pwd",
        "echo",
        "which",
        "wc",
        "tree",
        "less",
        "file",
        "stat",
        "sed",
        "awk",
        "du",
        "df",
        "env",
        "printenv",
        "type",
        "whoami",
        "date",
        "git status",
        "git diff",
        "git log",
        "git show",
        "git branch",
        "git remote",
    }
)


@dataclass
class DigestEntry:
    """One numbered line or block of the digest."""

    n: int
    turn: int  # the reader's user turn (continuing `turn_base`)
    kind: str  # user | command | queued | answer | plan | plan_rejected | rejection | assistant | report | failed | fixed
    who: str  # user | parent | assistant | tool
    text: str  # redacted, cleaned, bounded; the rendering adds the label
    line: int  # 1-based line in the JSONL of the record it comes from (the first, for a reply of several)
    end_line: int  # the last line of its records (a reply's blocks, a failure through its fix)
    offset: int  # byte offset of that record; orders the entries and places them in segments
    end: int  # byte offset just past its last record
    also: tuple[
        int, ...
    ] = ()  # lines of records that said the same again (a queued prompt then delivered)
    ref: int = 0  # for `fixed`: the n of the failure it fixes
    # for `fixed`: where its evidence starts (the failure); else its own offset
    span_start: int = -1
    # for `fixed`: the failure's error, said again when that failure is in another segment
    context: str = ""

    def label(self) -> str:
        return {
            "user": f"{self.who}:",
            "command": f"{self.who} command:",
            "queued": f"{self.who} (queued):",
            "answer": "user answered:",
            "plan": "plan approved:",
            "plan_rejected": "plan rejected:",
            "rejection": "user rejected",
            "assistant": "assistant:",
            "report": "assistant (end of turn):",
            "failed": "failed:",
            "fixed": f"fixed [{self.ref}]" if self.ref else "fixed",
        }[self.kind]

    def render(self, context: bool = False) -> str:
        text = self.text
        if context and self.context:
            text = f"(it failed with: {self.context}) {text}"
        return f"[{self.n}] {self.label()} {text}"


@dataclass
class Segment:
    """A stretch of the digest within the bound: the bytes [start, end) and the entries placed there."""

    start: int
    end: int
    entries: list[DigestEntry]
    files: list[str]  # files written in these bytes (relative to the project)
    text: str


@dataclass
class Digest:
    path: str
    start: int
    end: int  # where the reader stopped: the next digest of this transcript starts here
    max_chars: int
    entries: list[DigestEntry] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    files_changed: list[str] = field(default_factory=list)
    bad_lines: int = 0

    @property
    def text(self) -> str:
        """Every segment's text; a model reads one segment at a time when there are several."""
        return "\n\n".join(s.text for s in self.segments)

    def kinds(self) -> Counter:
        return Counter(e.kind for e in self.entries)

    def at_line(self, line: int) -> list[DigestEntry]:
        """The entries made from the record at `line` (1-based) of the JSONL: for a bench's labels, a citation."""
        return [e for e in self.entries if e.line <= line <= e.end_line or line in e.also]

    def holding(self, quote: str) -> list[DigestEntry]:
        """The entries whose rendering holds `quote`, both lowercased with white space folded (how the evidence
        bench says a quote reaches a request)."""
        q = _norm(quote)
        return [e for e in self.entries if q and q in _norm(e.render(context=True))]


# -- text ----------------------------------------------------------------------


def bound(text: str, limit: int) -> str:
    """`text` within `limit` characters: its head and its tail around a mark, cut at white space."""
    if len(text) <= limit:
        return text
    first = head(text, limit * 2 // 3) or text[: limit * 2 // 3]
    last = tail(text, limit - len(first) - 8)
    return f"{first} […] {last}" if last else first + " […]"


def _prepared(text: str, limit: int) -> str:
    """Redacted, then cleaned and cut (a cut first could split a secret and keep half of it)."""
    text = clean(redact_text(text.replace("\r\n", "\n").replace("\r", "\n"))).strip()
    return bound(text, limit)


def _is_narration(sentence: str) -> bool:
    """A sentence that only announces the next step, cheers, or reports a passing status."""
    low = sentence.lower().strip()
    if not low:
        return True
    if _REASON.search(low):
        return False  # "I'll use SQLite because…" is a decision, however it opens
    if _RULE_WORDS.search(low) and not low.endswith(":"):
        return False  # "I'll never touch the lock file" (but "Let me use the test data instead:" announces)
    words = low.split()
    i = 0
    while i < len(words) and words[i].strip(".,;:!?—-") in _FILLERS:
        i += 1
    rest = " ".join(words[i:])
    if not rest:
        return True  # "Perfect!", "Great."
    if rest.startswith(_NARRATION) and (len(words) <= 25 or low.endswith(":")):
        return True
    if len(words) <= 12 and _STATUS.search(low):
        return True
    return len(words) <= 3 and bool(_EXCLAMATION.match(sentence.strip()))


def prose(text: str) -> str:
    """The assistant's words as the digest keeps them: narration sentences out, long code blocks folded."""
    out: list[str] = []
    code: list[str] | None = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(("```", "~~~")):
            if code is None:
                code = [line.rstrip()]
                continue
            code.append(line.rstrip())
            out.extend(code if len(code) - 2 <= CODE_LINES else [f"[code, {len(code) - 2} lines]"])
            code = None
            continue
        if code is not None:
            code.append(line.rstrip())
            continue
        if not any(c.isalnum() for c in s):
            continue  # blank lines, rules, a lone emoji
        marker = _MARKER.match(line)
        lead = marker.group(0) if marker else line[: len(line) - len(line.lstrip())]
        kept = [p for p in _SENTENCE.split(line[len(lead) :].strip()) if not _is_narration(p)]
        if kept:
            out.append(lead + " ".join(kept))
    if code is not None:
        out.extend(code if len(code) - 1 <= CODE_LINES else [f"[code, {len(code) - 1} lines]"])
    return "\n".join(out).strip()


def _failure_line(output: str) -> str:
    """What went wrong, in a line: the error line, with the next one when it only announces it ("…:"). When no
    line says "error" or the like, the last one (a banner, `ssh` prints one, comes first; the verdict last)."""
    lines = [ln.strip() for ln in output.splitlines() if _telling(ln.strip())]
    line = error_line("\n".join(lines))
    if not _ERROR_WORDS.search(line):
        last = [ln for ln in lines if not ln.lower().startswith("exit code")]
        line = last[-1] if last else line
    if line.endswith(":") and line in lines:
        i = lines.index(line)
        if i + 1 < len(lines):
            line = f"{line} {lines[i + 1]}"
    return line


def _telling(line: str) -> bool:
    """A line of output that may say what failed: not a passing test's (✓ …), not a progress bar."""
    if not line or line.startswith(("✓", "✔", "√", "PASS ", "ok ")):
        return False
    return sum(c.isalnum() for c in line) >= len(line) * 0.4


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


_PARTS = re.compile(r"&&|\|\||;|\n|\|")
_SETUP = frozenset(
    {"cd", "echo", "export", "set", "source", ".", "sleep", "true", "printf", "pushd", "popd", "["}
)


def _read_only(sig: str) -> bool:
    return (
        not sig
        or sig in _READ_ONLY
        or " ".join(sig.split()[:2]) in _READ_ONLY
        or sig.split()[0] in _READ_ONLY
    )


def _alike(a: str, b: str) -> bool:
    """Two commands that share at least half their words: the same command, changed."""
    x, y = set(a.split()), set(b.split())
    return len(x & y) * 2 >= len(x | y)


def signature(command: str) -> str:
    """What makes two runs the same command: the signature (triage.command_signature) of the first part of a
    compound command that does work, past `cd`, `export`, `echo` and looking around; "" when none does."""
    for part in _PARTS.split(command):
        sig = command_signature(part)
        if sig and sig.split()[0] not in _SETUP and not _read_only(sig):
            return sig
    return ""


def shown_command(command: str, limit: int = 160) -> str:
    """A command as an entry shows it: one line, without a leading `cd <dir> &&`."""
    text = " ".join(command.split())
    while text.startswith("cd ") and "&&" in text:
        text = text.split("&&", 1)[1].strip()
    return one_line(text, limit)


# -- reading -------------------------------------------------------------------


class _Lines:
    """Line numbers of byte offsets, counted once over the file (offsets asked for in any order)."""

    def __init__(self, f) -> None:
        self.f = f
        self.starts: list[int] | None = None

    def line(self, offset: int) -> int:
        from bisect import bisect_right

        if self.starts is None:
            self.starts = [0]
            pos = 0
            while chunk := os.pread(self.f.fileno(), 1 << 20, pos):
                i = chunk.find(b"\n")
                while i >= 0:
                    self.starts.append(pos + i + 1)
                    i = chunk.find(b"\n", i + 1)
                pos += len(chunk)
        return bisect_right(self.starts, offset)


def _record(f, start: int, end: int) -> dict | None:
    """The record at [start, end) read again (a rare tool record: the reader keeps only a head of it)."""
    if end - start > RECORD_BYTES:
        return None
    try:
        rec = json.loads(os.pread(f.fileno(), end - start, start).split(b"\n", 1)[0])
    except (OSError, ValueError, RecursionError, UnicodeDecodeError):
        return None
    return rec if isinstance(rec, dict) else None


def _tool_input(f, start: int, end: int, tool_id: str) -> dict:
    """The input of tool call `tool_id`, from the records of the reply at [start, end)."""
    if end - start > RECORD_BYTES or not tool_id:
        return {}
    try:
        raw = os.pread(f.fileno(), end - start, start)
    except OSError:
        return {}
    needle = tool_id.encode()
    for line in raw.split(b"\n"):
        if needle not in line:
            continue
        try:
            rec = json.loads(line)
            for b in rec["message"]["content"]:
                if (
                    isinstance(b, dict)
                    and b.get("id") == tool_id
                    and isinstance(b.get("input"), dict)
                ):
                    return b["input"]
        except (ValueError, RecursionError, UnicodeDecodeError, KeyError, TypeError):
            continue
    return {}


def _result_text(rec: dict, tool_id: str) -> str:
    """The text of tool result `tool_id` in a user record, whole."""
    content = (rec.get("message") or {}).get("content")
    for b in content if isinstance(content, list) else ():
        if isinstance(b, dict) and b.get("tool_use_id") == tool_id:
            c = b.get("content")
            if isinstance(c, str):
                return c
            if isinstance(c, list):
                return "\n".join(
                    x["text"] for x in c if isinstance(x, dict) and isinstance(x.get("text"), str)
                )
    return ""


def _reason(text: str) -> str:
    """What the person said when rejecting a tool call ("…the user said:\\n<reason>"), "" when nothing."""
    i = text.find(_USER_SAID)
    if i < 0:
        return ""
    said = text[i + len(_USER_SAID) :]
    j = said.find(_NOTE)
    return (said[:j] if j >= 0 else said).strip()


def _answers(rec: dict | None, text: str) -> str:
    """An AskUserQuestion's answers, as Claude Code words them ("Q"="A", …), then the chosen options' descriptions."""
    m = _ANSWERED.match(text.strip())
    said = m.group(1) if m else text.strip()
    result = rec.get("toolUseResult") if rec else None
    if not isinstance(result, dict) or not isinstance(result.get("answers"), dict):
        return said
    chosen = []
    for q in result.get("questions") or ():
        if not isinstance(q, dict):
            continue
        answer = result["answers"].get(q.get("question"))
        for o in q.get("options") or ():
            if (
                isinstance(o, dict)
                and isinstance(answer, str)
                and o.get("label") in answer.split(", ")
                and isinstance(o.get("description"), str)
            ):
                chosen.append(f"{o['label']}: {o['description']}")
    return f"{said} (chosen: {'; '.join(chosen)})" if chosen else said


# -- the digest ----------------------------------------------------------------


class _Builder:
    def __init__(self, f, cfg: dict, *, subagent: bool, project: str | None) -> None:
        self.f = f
        self.who = "parent" if subagent else "user"
        self.error_tools = set(cfg["categories"]["runbook"]["error_tools"])
        # The folder the session started in, not the range's first record's `cwd`: a `cd` in Claude Code's
        # shell moves that, and a look's range starts anywhere in the session.
        self.project = os.fspath(project) if project is not None else session_cwd(f)
        self.entries: list[DigestEntry] = []
        self.seen: dict[
            str, int
        ] = {}  # normalised text -> index in entries: a repeat is not a new entry
        self.calls: dict[
            str, tuple[str, str, int, int]
        ] = {}  # tool id -> (name, target, reply start, end)
        self.pending: dict[str, dict] = {}  # command signature -> the failure not fixed yet
        self.writes: list[tuple[int, str]] = []  # (offset, path) of each write that succeeded
        self.turn_report: int | None = None  # index of the turn's last assistant entry: its report

    def add(
        self,
        kind: str,
        who: str,
        text: str,
        turn: int,
        start: int,
        end: int,
        *,
        dedupe: bool = True,
        limit: int = 0,
        **extra,
    ) -> DigestEntry | None:
        if kind in ("user", "queued"):
            text = masked_reply(text, self.asked())
        text = _prepared(text, limit or LIMITS[kind])
        if not text:
            return None
        key = _norm(text)
        if dedupe and key in self.seen:
            first = self.entries[self.seen[key]]
            first.also = (*first.also, start)  # an offset until the lines are counted
            return None
        e = DigestEntry(0, turn, kind, who, text, 0, 0, start, end, **extra)
        self.seen.setdefault(key, len(self.entries))
        self.entries.append(e)
        return e

    def asked(self) -> str:
        """The assistant's message the next reply answers: the last entry of the assistant's, past the replies
        already given to it (a queued prompt and its delivery are one reply); "" when there is none."""
        for e in reversed(self.entries[-3:]):
            if e.who == "assistant":
                return e.text
            if e.kind not in ("user", "queued"):
                return ""
        return ""

    def relative(self, path: str) -> str | None:
        """`path` relative to the project; None outside it."""
        return project_relative(path, self.project)

    def feed(self, e) -> None:
        kind = e.kind
        if kind == "user":
            self.end_turn()
            text = e.text.lstrip()
            if text.startswith(_NOT_USER_WORDS) or _IMAGE_ONLY.match(text):
                return
            self.add("user", self.who, e.text, e.turn, e.start, e.end)
        elif kind == "command":
            m = _COMMAND.search(e.text)
            if m and m.group(2).strip():
                self.add(
                    "command",
                    self.who,
                    f"{m.group(1)} {m.group(2).strip()}",
                    e.turn,
                    e.start,
                    e.end,
                )
        elif kind == "assistant":
            self.assistant(e)
        elif kind == "tool_result":
            self.tool_result(e)
        elif kind == "bookkeeping" and e.subtype in ("queue-operation", "attachment"):
            self.queued(e)

    def end_turn(self) -> None:
        if self.turn_report is not None:
            e = self.entries[self.turn_report]
            e.kind = "report"
            self.turn_report = None

    def assistant(self, e) -> None:
        for tu in e.tool_uses:
            self.calls[tu.id] = (tu.name, tu.target, e.start, e.end)
        text = prose(e.text)
        if text:
            # Kept at a report's length until a later reply of the turn shows it was not the last.
            added = self.add(
                "assistant", "assistant", text, e.turn, e.start, e.end, limit=LIMITS["report"]
            )
            if added is not None:
                if self.turn_report is not None:
                    earlier = self.entries[self.turn_report]
                    earlier.text = bound(earlier.text, LIMITS["assistant"])
                self.turn_report = len(self.entries) - 1

    def tool_result(self, e) -> None:
        name, target, rstart, rend = self.calls.get(e.tool_use_id, ("", "", 0, 0))
        if name in (ASK, PLAN) or e.rejected:
            rec = _record(self.f, e.start, e.end)
            text = _result_text(rec, e.tool_use_id) if rec else e.text
            if text.startswith(_REJECTED):
                self.rejection(e, name, target, text, rstart, rend)
            elif name == ASK and not e.is_error and text:
                self.add("answer", "user", _answers(rec, text), e.turn, e.start, e.end)
            elif name == PLAN and not e.is_error:
                result = rec.get("toolUseResult") if rec else None
                plan = result.get("plan") if isinstance(result, dict) else None
                if not isinstance(plan, str) or not plan.strip():
                    plan = _tool_input(self.f, rstart, rend, e.tool_use_id).get("plan")
                if isinstance(plan, str) and plan.strip():
                    self.add("plan", "user", plan, e.turn, e.start, e.end)
            return
        if name in WRITE_TOOLS:
            # A failed write answers in a line; a result too long to decode (the tools echo the file) succeeded.
            if not e.is_error and target:
                path = self.relative(target)
                if path:
                    self.writes.append((e.start, path))
                    for run in self.pending.values():
                        if path not in run["files"] and len(run["files"]) < MAX_FIX_FILES:
                            run["files"][path] = f"{name} {path}"
            return
        if name in self.error_tools:
            self.command(e, target)

    def rejection(self, e, name: str, target: str, text: str, rstart: int, rend: int) -> None:
        reason = _reason(text)
        if name == PLAN:
            plan = _tool_input(self.f, rstart, rend, e.tool_use_id).get("plan")
            plan = plan if isinstance(plan, str) else ""
            said = f'user said: "{reason}"' if reason else "no reason given"
            self.add(
                "plan_rejected",
                "user",
                f"({said})\n{bound(plan.strip(), LIMITS['plan_rejected'] // 2)}",
                e.turn,
                e.start,
                e.end,
            )
            return
        what = name or "a tool call"
        if target:
            path = self.relative(target) if name in WRITE_TOOLS else None
            what = f"{what} of {path}" if path else f"{what}: {one_line(target, 200)}"
        self.add(
            "rejection",
            "user",
            f'{what}: "{reason}"' if reason else what,
            e.turn,
            e.start,
            e.end,
            dedupe=False,
        )

    def command(self, e, command: str) -> None:
        sig = signature(command)
        if not sig:
            return  # looking around (ls, grep, cat…): its failures are exploration, not a runbook
        if e.is_error:
            said = one_line(_failure_line(f"{e.text}\n{e.tail}" if e.tail else e.text), 240)
            run = self.pending.get(sig)
            if run is not None and (said == run["said"] or run["count"] >= 3):
                return  # the same failure again: one entry says it
            added = self.add(
                "failed",
                "tool",
                f"{shown_command(command)} -> {said}",
                e.turn,
                e.start,
                e.end,
                dedupe=False,
            )
            if added is None:
                return
            if run is None:
                self.pending[sig] = {
                    "index": len(self.entries) - 1,
                    "said": said,
                    "files": {},
                    "ran": [],
                    "count": 1,
                    "command": command,
                }
            else:
                run.update(said=said, count=run["count"] + 1)
            return
        run = self.pending.get(sig)
        if run is not None and e.turn - self.entries[run["index"]].turn > FIX_TURNS:
            del self.pending[
                sig
            ]  # passing turns later, after other work: nothing says what fixed it
            run = None
        elif run is not None and not run["files"] and not _alike(run["command"], command):
            run = None  # only the program is the same (`ssh host "…"`, `gh issue close 54`): another command
        if run is not None:
            del self.pending[sig]
        else:
            for r in self.pending.values():
                if len(r["ran"]) < MAX_FIX_COMMANDS:
                    r["ran"].append(shown_command(command, 120))
            return
        parts = []
        if run["files"]:
            parts.append(", ".join(run["files"].values()))
        if run["ran"]:
            parts.append("ran " + "; ".join(f"`{c}`" for c in run["ran"]))
        how = f"by: {'; '.join(parts)};" if parts else "with nothing else changed;"
        failed = self.entries[run["index"]]
        self.add(
            "fixed",
            "tool",
            f"{how} passed: {shown_command(command)}",
            e.turn,
            e.start,
            e.end,
            dedupe=False,
            ref=run["index"] + 1,
            context=one_line(run["said"], 160),
            span_start=failed.offset,
        )

    def queued(self, e) -> None:
        rec = _record(self.f, e.start, e.end)
        if rec is None:
            return
        text = None
        if e.subtype == "queue-operation" and rec.get("operation") == "enqueue":
            text = rec.get("content")
        elif e.subtype == "attachment":
            att = rec.get("attachment")
            if isinstance(att, dict) and att.get("type") == "queued_command":
                text = att.get("prompt")
        if (
            not isinstance(text, str)
            or text.lstrip().startswith(("/", *_NOT_USER_WORDS))
            or _IMAGE_ONLY.match(text)
        ):
            return
        self.add("queued", self.who, text, e.turn, e.start, e.end)


def digest(
    path,
    cfg: dict,
    byte_range: tuple[int, int | None] | None = None,
    *,
    max_chars: int | None = None,
    turn_base: int = 0,
    subagent: bool | None = None,
    project: str | None = None,
) -> Digest:
    """The digest of `path` (a path, or a transcript file already open) between the offsets of `byte_range`
    (the whole file by default; an end of None is the file's end), in segments of at most `max_chars`.

    `project`: the folder written paths are made relative to (writes outside it are not listed); by
    default the folder the session started in (the transcript's first `cwd`). `subagent`: the "user" is a parent agent (by default,
    from an `agent-*.jsonl` name). OSError when the transcript cannot be read."""
    limit = max(
        int(max_chars or (cfg.get("digest") or {}).get("max_chars") or DEFAULT_MAX_CHARS),
        MIN_MAX_CHARS,
    )
    start, end = byte_range or (0, None)
    name = path if isinstance(path, str) else getattr(path, "name", "")
    if subagent is None:
        subagent = isinstance(name, str) and os.path.basename(name).startswith("agent-")
    if hasattr(path, "read"):
        return _digest(path, name, cfg, start, end, limit, turn_base, subagent, project)
    with open_regular(path) as f:
        return _digest(f, name, cfg, start, end, limit, turn_base, subagent, project)


def _digest(
    f,
    name,
    cfg: dict,
    start: int,
    end: int | None,
    limit: int,
    turn_base: int,
    subagent: bool,
    project: str | None,
) -> Digest:
    t = cfg["triage"]
    b = _Builder(f, cfg, subagent=subagent, project=project)
    reader = TranscriptReader(
        f,
        start,
        turn_base=turn_base,
        limit=end,
        max_line_bytes=t["max_line_bytes"],
        outputs_of=b.error_tools,
        max_message_chars=t["max_message_chars"],
    )
    for read in reader:
        b.feed(read)
    b.end_turn()
    lines = _Lines(f)
    entries = b.entries
    for i, e in enumerate(entries, 1):
        e.n = i
        e.line = lines.line(e.span_start if e.span_start >= 0 else e.offset)
        e.end_line = max(e.line, lines.line(max(e.end - 1, e.offset)))
        e.also = tuple(lines.line(o) for o in e.also)
    d = Digest(str(name), start, reader.stats.end, limit, entries, bad_lines=reader.stats.bad)
    d.segments = _segments(entries, b.writes, start, reader.stats.end, limit)
    d.files_changed = list(dict.fromkeys(p for _, p in b.writes))
    return d


# -- segments --------------------------------------------------------------------


def _files_line(files: list[str], room: int) -> str:
    """The files a segment wrote, in one line of at most `room` characters (the rest counted)."""
    line = "files changed here:"
    for i, p in enumerate(files[:FILES_SHOWN]):
        more = f" (and {len(files) - i} more)" if i else ""
        name = f"{',' if i else ''} {one_line(p, 120)}"
        if len(line) + len(name) + len(f" (and {len(files) - i - 1} more)") > room:
            return line + more if i else ""
        line += name
    return line + (f" (and {len(files) - FILES_SHOWN} more)" if len(files) > FILES_SHOWN else "")


def _size(e: DigestEntry) -> int:
    """Room an entry takes in a segment, at most (a fix says its failure again when that is elsewhere)."""
    return len(e.render(context=True)) + 1


def _segments(
    entries: list[DigestEntry], writes: list[tuple[int, str]], start: int, end: int, limit: int
) -> list[Segment]:
    """Entries grouped in segments of at most `limit` characters, cut where a user turn starts (inside a
    turn only when one turn is longer than that), the byte range partitioned between them."""
    files_room = min(FILES_SHOWN * 60, limit // 8)
    room = max(limit - files_room - 1, 1)
    for e in entries:  # an entry longer than a whole segment (a tiny bound) keeps what fits
        over = _size(e) - room
        if over > 0:
            e.text = bound(e.text, max(len(e.text) - over - 8, 40))
    groups: list[list[DigestEntry]] = []
    used = 0
    for e in entries:
        size = _size(e)
        turn_starts = e.kind in ("user", "command") and e.who != "parent"
        if groups and used + size > room:
            # Back to where this turn started in the current group, when that leaves the group something.
            g = groups[-1]
            cut = len(g)
            if not turn_starts:
                while (
                    cut > 0
                    and g[cut - 1].turn == e.turn
                    and g[cut - 1].kind not in ("user", "command")
                ):
                    cut -= 1
                if cut > 0 and g[cut - 1].turn == e.turn:
                    cut -= 1  # the turn's own prompt goes with it
            carried = (
                g[cut:] if 0 < cut < len(g) and sum(map(_size, g[cut:])) + size <= room else []
            )
            if carried:
                del g[cut:]
            groups.append(carried)
            used = sum(map(_size, carried))
        if not groups:
            groups.append([])
        groups[-1].append(e)
        used += size
    if not groups:
        groups = [[]]
    bounds = [start] + [g[0].offset for g in groups[1:]] + [end]
    segments = []
    for i, g in enumerate(groups):
        lo, hi = bounds[i], bounds[i + 1]
        files = list(dict.fromkeys(p for o, p in writes if lo <= o < hi))
        numbers = {e.n for e in g}
        blocks = [e.render(context=bool(e.ref) and e.ref not in numbers) for e in g]
        line = _files_line(files, files_room) if files else ""
        if line:
            blocks.append(line)
        segments.append(Segment(lo, hi, g, files, "\n".join(blocks)))
    return segments
