"""Triage (docs/design.md §5): raw filter, category scoring, snippets and excerpts, redaction.

Streams over the reader's entries and keeps only bounded state: per category
the top few snippets with their context window, never the whole transcript.
Scoring reads only what people and the assistant wrote: never tool output,
thinking, system reminders, meta records or code blocks.

Speed matters because the Stop hook runs this on every turn: see keywords.py
for how keyword patterns avoid being compiled when they cannot match.
"""

from __future__ import annotations

import zlib

from memcurate.curator.capture.keywords import KeywordSet, message_words
from memcurate.curator.categories import NAMES, TEXT_SCORED
from memcurate.curator.util.lazyre import LazyRegex
from memcurate.curator.util.paths import project_relative
from memcurate.curator.util.textsafe import one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import BinaryIO

    from memcurate.curator.capture.transcript import Entry

_ERROR_LINE = LazyRegex(
    r"(?i)(?:(?:error|exception)\b|\b(?:failed|failure|traceback|fatal|cannot|not found|no such)\b)"
)
_PUNCT = ".,;:!?'\"()[]{}-–—…*_`~"
MAX_FAILED_RUNS = 50  # of one pass, kept for rule graduation
MAX_FIX_NOTES = 5  # files, and assistant texts, noted per failing run
# The assistant's words around a fix, as runbook snippets: below a keyword line, so they fill only the slots
# keyword lines leave (a session that says how it fixed something in plain words has none).
FIX_WORDS_WEIGHT = 0.5
# MultiEdit: older transcripts
WRITE_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})


def _redacted(text: str) -> str:
    """The text redacted (util/redact.py, loaded with the first text a pass quotes: a turn that scores
    nothing never loads it)."""
    from memcurate.curator.util.redact import redact_text

    return redact_text(text)


# -- rules -------------------------------------------------------------------


class Rules:
    """The triage settings of a config, ready to use."""

    def __init__(self, cfg: dict) -> None:
        t = cfg["triage"]
        cats = cfg["categories"]
        self._cfg = cfg
        self._sets: tuple[KeywordSet, KeywordSet] | None = None
        self.weak_weight = float(t["weak_weight"])
        self.threshold = {n: float(cats[n]["threshold"]) for n in NAMES}
        self.saturation = {n: float(cats[n]["saturation"]) for n in NAMES}
        self.speakers = {n: cats[n]["speakers"] for n in NAMES}
        self.reason_weight = float(t["reason_weight"])
        self.line_cap = float(t["line_cap"])
        self.acks = {a.lower() for a in t["acknowledgements"]}
        self.narration = tuple(p.lower() for p in t["narration"])
        self.fillers = {w.lower() for w in t["narration_fillers"]}
        self.narration_max_words = int(t["narration_max_words"])
        self.snippets = int(t["snippets_per_category"])
        self.snippet_chars = int(t["snippet_chars"])
        self.excerpt_chars = int(t["excerpt_chars"])
        self.context_lines = int(t["context_lines"])
        self.max_message_chars = int(t["max_message_chars"])
        cr = t["correction"]
        self.correction_openers = tuple(o.lower() for o in cr["openers"])
        self.concessions = tuple(c.lower() for c in cr["concessions"])
        self.correction_weights = {n: float(w) for n, w in cr["weights"].items()}
        self.correction_confirmed = float(cr["confirmed"])
        rb = cats["runbook"]
        self.error_fix_weight = float(rb["error_fix_weight"])
        self.error_tools = set(rb["error_tools"])
        ss = cats["session_summary"]
        self.activity = ss["activity"]
        self.summary_subagents = bool(ss["subagents"])
        self.ignored_tools = set(ss["ignored_tools"])

    @property
    def keywords(self) -> KeywordSet:
        return (self._sets or self._keyword_sets())[0]

    @property
    def reasons(self) -> KeywordSet:
        return (self._sets or self._keyword_sets())[1]

    def _keyword_sets(self) -> tuple[KeywordSet, KeywordSet]:
        """The keyword index, on the first message scored: a pass with no text to score never reads it. The
        config carries it ready-made, worked out when the YAML was parsed (a cached config: parsed now from the
        cache, see config.CachedIndex); a config changed since, or a cache of an older format, has it built."""
        cfg = self._cfg
        ready = cfg.get("_derived", {}).get("triage")
        if ready and ready.get("check") == keyword_check(cfg):
            load = getattr(ready, "load", None)  # a dict's own has no `load`
            index = load() if load else ready
            if index:
                keywords = KeywordSet.from_index(index["keywords"])
                self._sets = keywords, KeywordSet.from_index(index["reasons"])
                return self._sets
        self._sets = keyword_sets(cfg)
        return self._sets


_INDEX_FORMAT = "1"  # of the ready-made keyword index (KeywordSet.index_data): bump when it changes


def keyword_sets(cfg: dict) -> tuple[KeywordSet, KeywordSet]:
    """The category keywords and the reason words of a config, each pattern analysed now (see keywords.py):
    when the config is built, and for a config whose cached index does not check out."""
    from memcurate.curator.capture.keyword_analysis import keyword

    cats = cfg["categories"]
    keywords = KeywordSet(
        [
            keyword(n, p, weak)
            for n in TEXT_SCORED
            for weak, key in ((False, "keywords"), (True, "weak_keywords"))
            for p in cats[n][key]
        ]
    )
    return keywords, KeywordSet(
        [keyword("reason", p, False) for p in cfg["triage"]["reason_words"]]
    )


def _keyword_text(cfg: dict) -> str:
    """The keyword lists an index is built from, as one text: a few joins, whatever their length."""
    cats = cfg["categories"]
    parts = [
        _INDEX_FORMAT,
        *("\x1e".join(cats[n][key]) for n in TEXT_SCORED for key in ("keywords", "weak_keywords")),
        "\x1e".join(cfg["triage"]["reason_words"]),
    ]
    return "\x1f".join(parts)


def keyword_check(cfg: dict) -> int:
    """A checksum of the keyword lists an index was built from."""
    return zlib.crc32(_keyword_text(cfg).encode("utf-8", "surrogatepass"))


_indexes: dict[
    str, dict
] = {}  # derive's answers in this process, by _keyword_text (exact, unlike the checksum)


def derive(cfg: dict) -> dict:
    """What the config cache keeps for the triage: the keyword index ready-made (see Rules). Analysing every
    pattern costs ~50 ms; a process builds its config many times over the same keywords, so it is done once
    per keyword lists. The answer is shared: a caller copies it before changing it (config.build does)."""
    text = _keyword_text(cfg)
    if text not in _indexes:
        keywords, reasons = keyword_sets(cfg)
        if len(_indexes) >= 4:  # a config edited while the TUI runs: keep a few, not every edit's
            _indexes.clear()
        _indexes[text] = {
            "check": zlib.crc32(text.encode("utf-8", "surrogatepass")),
            "keywords": keywords.index_data(),
            "reasons": reasons.index_data(),
        }
    return _indexes[text]


# -- the raw filter ----------------------------------------------------------


def scoring_lines(text: str) -> list[str]:
    """The lines of a message that may score: code blocks out, blank lines out."""
    out: list[str] = []
    in_code = False
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(("```", "~~~")):
            in_code = not in_code
            continue
        if line and not in_code:
            out.append(line)
    return out


def mask_inline_code(line: str) -> str:
    """Each `code span` becomes the word CODE (an unpaired backtick stays as it is)."""
    parts = line.split("`")
    out = [parts[0]]
    pairs = (len(parts) - 1) // 2
    for k in range(pairs):
        out.append("CODE")
        out.append(parts[2 * k + 2])
    if len(parts) % 2 == 0:  # an odd number of backticks: the last one is unpaired
        out.append("`" + parts[-1])
    return "".join(out)


def command_signature(command: str) -> str:
    """What makes two runs "the same command": its leading words, without flags, paths or values.

    `uv run pytest -x tests/a.py` and `uv run pytest tests/b.py` are both `uv run pytest`.
    """
    for sep in ("&&", "||", ";"):  # in `cd x && make`, the work is the last command
        command = command.rsplit(sep, 1)[-1]
    command = command.split("|", 1)[0]  # in `pytest | tail`, the first
    words: list[str] = []
    for w in command.split():
        if w.startswith("-") or "=" in w:
            continue
        if any(c in w for c in "/.$\"'"):
            if words:
                break
            continue
        words.append(w)
        if len(words) == 3:
            break
    return " ".join(words)


_NAMED_ERROR = LazyRegex(r"\w+(?:Error|Exception|Exit)\b:")


def error_line(output: str) -> str:
    """The line of a failed command's output that says what went wrong."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for ln in lines:  # a named error ("OperationalError: …") says most
        if _NAMED_ERROR.search(ln):
            return ln
    for ln in lines:
        if not ln.lower().startswith("exit code") and _ERROR_LINE.search(ln):
            return ln
    return next(
        (ln for ln in lines if not ln.lower().startswith("exit code")), lines[0] if lines else ""
    )


def is_narration(line: str, rules: Rules) -> bool:
    """An assistant line that only announces its next step: "Now let me check the tests"."""
    # Split no further than the limit: one piece more than it already says "too long" (a pasted log line
    # is not split whole); up to it, the pieces are the line's words.
    most = rules.narration_max_words
    words = line.lower().split(None, most)  # (a negative limit splits it all, as before)
    if len(words) > most:
        return False
    i = 0
    while i < len(words) and words[i].strip(_PUNCT) in rules.fillers:
        i += 1
    return " ".join(words[i:]).startswith(rules.narration)


def opens_with(line: str, phrases: tuple[str, ...]) -> str:
    """The phrase `line` (lowercase) opens with, at a word boundary; "" when none."""
    for p in phrases:
        if line.startswith(p) and not (len(line) > len(p) and _is_word_char(line[len(p)])):
            return p
    return ""


def _is_word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def is_noise_prompt(text: str, acks: set[str]) -> bool:
    """One-word user turns and short acknowledgements carry nothing."""
    words = [w.strip(_PUNCT) for w in text.lower().split()]
    words = [w for w in words if w]
    return len(words) <= 1 or " ".join(words) in acks


# -- snippets and the digest ---------------------------------------------------


class Snippet:
    __slots__ = (
        "category",
        "weight",
        "turn",
        "speaker",
        "text",
        "keywords",
        "context",
        "prompt",
        "seq",
        "lo",
    )

    def __init__(
        self, category, weight, turn, speaker, text, keywords, context, prompt, seq, lo=0
    ) -> None:
        self.category = category
        self.weight = weight
        self.turn = turn
        self.speaker = speaker
        self.text = text
        self.keywords = keywords
        self.context = context  # lines around the snippet, for the excerpt
        self.prompt = prompt  # (turn, text) of the turn's user prompt, for the excerpt
        self.seq = seq  # position in the transcript, to order the excerpt
        self.lo = lo  # index of the message line that context starts at

    def __lt__(self, other: Snippet) -> bool:
        return (self.weight, -self.seq) < (other.weight, -other.seq)

    def as_dict(self) -> dict:
        return {
            "turn": self.turn,
            "speaker": self.speaker,
            "weight": round(self.weight, 3),
            "keywords": self.keywords,
            "text": self.text,
        }


class Digest:
    """What a session summary needs, carried across incremental passes.

    It holds counts and byte ranges, never text: it is saved in the offset
    state on every pass, and the text is read back (and redacted) only when a
    summary is made.
    """

    MAX_PROMPTS = 4
    MAX_FILES = 20

    def __init__(self, data: dict | None = None) -> None:
        d = data or {}
        self.tool_uses: int = int(d.get("tool_uses", 0))
        self.tools: list[str] = list(d.get("tools", []))
        self.user_turns: int = int(d.get("user_turns", 0))
        self.prompts: list[list[int]] = [
            list(p) for p in d.get("prompts", [])
        ]  # [turn, start, end]: the first few
        self.last_prompt: list[int] = list(d.get("last_prompt", []))
        # [turn, start, end] of the last reply with text
        self.outcome: list[int] = list(d.get("outcome", []))
        # Files written (the tool said so) inside the project, relative to it: what a summary's reader and
        # `memcurate check` (hygiene/references.py) can find. Entries of an older state may be absolute.
        self.files: list[str] = list(d.get("files", []))
        # The folder the session started in (its first record's `cwd`, Claude Code's project folder): what
        # files are relative to; "" when the transcript does not say, None until a record was read.
        project = d.get("project")
        self.project: str | None = project if isinstance(project, str) else None
        # The user rejected a tool use and has not written since: a Stop hook's pass ends at the
        # rejection, and the message that overrides it comes in the next pass.
        self.rejected: bool = bool(d.get("rejected", False))

    def as_dict(self) -> dict:
        return {
            "tool_uses": self.tool_uses,
            "tools": self.tools,
            "user_turns": self.user_turns,
            "prompts": self.prompts,
            "last_prompt": self.last_prompt,
            "outcome": self.outcome,
            "files": self.files,
            "project": self.project,
            "rejected": self.rejected,
        }


# -- triage ------------------------------------------------------------------

MAX_OPEN_CALLS = 50  # error-tool calls and writes a pass leaves unanswered, carried to the next
MAX_OPEN_RUNS = 20  # failing runs carried to the next pass


def _count(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 1 << 53


def _rows(value: object, size: int, most: int) -> list[list]:
    """The last `most` rows of `value` that are lists of `size` items; none when it is not a list."""
    if not isinstance(value, list):
        return []
    return [r for r in value[-most:] if isinstance(r, list) and len(r) == size]


class Triage:
    """Score a stream of entries. Feed entries with `add`, then call `result`.

    `path` is the transcript, read again for the few messages a session
    summary quotes.
    """

    def __init__(
        self,
        rules: Rules,
        digest: Digest | None = None,
        *,
        subagent: bool = False,
        path: str | BinaryIO | None = None,
        open_runs: object = None,
    ) -> None:
        self.r = rules
        self.path = path
        # In a subagent transcript the "user" is the parent agent: its brief states
        # constraints, but it is no person's preference.
        self.user_speaker = "parent" if subagent else "user"
        self.totals = {n: 0.0 for n in TEXT_SCORED}
        self.hits = {n: 0 for n in TEXT_SCORED}
        self.strong = {
            n: 0 for n in TEXT_SCORED
        }  # lines with a strong keyword: weak ones never trigger alone
        self.top: dict[str, list[Snippet]] = {n: [] for n in NAMES}
        self.digest = digest or Digest()
        self.seq = 0
        # the current turn's prompt, redacted only if a snippet needs it
        self.prompt_entry: Entry | None = None
        self.prompt_cache: tuple[int, str] | None = None
        # tool_use id -> (name, command signature, command, byte offset of the call)
        self.tool_calls: dict[str, tuple[str, str, str, int]] = {}
        self.writes: dict[
            str, str
        ] = {}  # tool_use id -> the file a write tool was asked to change, until it answers
        # (name, signature) -> [turn, error line, edits seen at its last failure, its byte offset]
        self.pending_errors: dict[tuple[str, str], list] = {}
        # (name, program) -> [turn, error line, edits at its last failure, failures, offset]: an error that recurs
        self.failing: dict[tuple[str, str], list] = {}
        self.edits = 0  # file edits seen so far
        # (file written, project) -> the file relative to the project, redacted; None outside it (see _written)
        self.relative: dict[tuple[str, str], str | None] = {}
        # Failing runs of the error tools and what fixed them, for rule graduation (curator/rules/transcript_failures.py)
        self.failed_runs: list[dict] = []
        self.unfixed: list[
            dict
        ] = []  # those with no fix yet, in order: what _while_failing adds to
        # The assistant's words while a run fails, (seq, turn, line index, line), and the weight of the words
        # after a fix still to come: what fixed it (see _error_fixed)
        self.fix_words: list[tuple[int, int, int, str]] = []
        # the words said since, not read yet: (seq, turn, text)
        self.said: list[tuple[int, int, str]] = []
        self.after_fix: float | None = None
        # (turn, already a correction) of the last user message
        self.last_user: tuple[int, bool] | None = None
        self.errors = 0
        self.fixes = 0
        self.turns: list[int] = []  # first and last turn seen
        # the byte offset of the earliest failure a fix in these bytes got past: where its evidence starts
        self.fixed_from: int | None = None
        self._resume(open_runs)

    # -- what a pass leaves open for the next ------------------------------
    def open_state(self) -> dict:
        """The runs still failing and the error-tool calls not answered yet, for the offset state: a Stop
        hook's pass ends with the turn, and the fix of a failure (or the result of a call Claude Code had
        not flushed yet) often comes in the next. Bounded; its only text is the redacted error lines and
        the fix's words."""
        unanswered = list(self.tool_calls.items())[-MAX_OPEN_CALLS:]
        return {
            "edits": self.edits,
            "calls": [[i, *v] for i, v in unanswered],
            "writes": [[i, v] for i, v in list(self.writes.items())[-MAX_OPEN_CALLS:]],
            "pending": [[*k, *v] for k, v in list(self.pending_errors.items())[-MAX_OPEN_RUNS:]],
            "failing": [[*k, *v] for k, v in list(self.failing.items())[-MAX_OPEN_RUNS:]],
            "fix_words": [[turn, lo, line] for _, turn, lo, line in self._fix_words()],
        }

    def _resume(self, state: object) -> None:
        """Take up what the last pass left open. The state is in the data dir, in Claude's reach: what is
        not the shape open_state writes is dropped, and the text is bounded and redacted again."""
        if not isinstance(state, dict):
            return
        edits = state.get("edits")
        if isinstance(edits, int) and not isinstance(edits, bool) and edits >= 0:
            self.edits = edits
        for row in _rows(state.get("calls"), 5, MAX_OPEN_CALLS):
            i, name, sig, command, at = row
            if (
                all(isinstance(x, str) for x in row[:4])
                and name in self.r.error_tools
                and _count(at)
            ):
                self.tool_calls[i] = (name, sig[:2000], command[:4000], at)
        for row in _rows(state.get("writes"), 2, MAX_OPEN_CALLS):
            if all(isinstance(x, str) for x in row):
                self.writes[row[0]] = row[1][:4000]
        for key, target, size in (
            ("pending", self.pending_errors, 6),
            ("failing", self.failing, 7),
        ):
            for row in _rows(state.get(key), size, MAX_OPEN_RUNS):
                name, sig, turn, line, *counts = row
                if (
                    isinstance(name, str)
                    and isinstance(sig, str)
                    and isinstance(line, str)
                    and all(_count(x) for x in (turn, *counts))
                ):
                    line = one_line(_redacted(line[:400]), 200)
                    target[(name, sig[:2000])] = [turn, line, *counts]
        for row in _rows(state.get("fix_words"), 3, MAX_FIX_NOTES):
            turn, lo, line = row
            if _count(turn) and _count(lo) and isinstance(line, str):
                line = one_line(_redacted(line[:1000]), self.r.snippet_chars)
                self.fix_words.append((0, turn, lo, line))

    # -- feeding ---------------------------------------------------------
    def add(self, e: Entry) -> None:
        self.seq += 1
        if e.turn and (not self.turns or e.turn != self.turns[-1]):
            self.turns = [self.turns[0] if self.turns else e.turn, e.turn]
        kind = e.kind
        if kind == "user":
            self._user(e)
        elif kind == "assistant":
            self._assistant(e)
        elif kind == "tool_result":
            self._tool_result(e)

    def _user(self, e: Entry) -> None:
        d = self.digest
        d.user_turns += 1
        rejected, d.rejected = d.rejected, False
        if is_noise_prompt(e.text, self.r.acks):
            self.last_user = None
            return
        self.prompt_entry, self.prompt_cache = e, None
        self.last_user = (e.turn, False)
        if d.user_turns > 1:  # the first prompt corrects nothing
            first = next(iter(scoring_lines(e.text[:400])), "").lower().replace("\u2019", "'")
            opener = opens_with(first, self.r.correction_openers)
            if opener or rejected:
                self._correction(
                    1.0, ["rejected tool use"] if rejected and not opener else [opener]
                )
        span = [e.turn, e.start, e.end]
        if len(d.prompts) < Digest.MAX_PROMPTS:
            d.prompts.append(span)
        d.last_prompt = span
        self._score_text(e.text, self.user_speaker, e.turn)

    def _prompt(self) -> tuple[int, str]:
        if self.prompt_cache is None:
            e = self.prompt_entry
            # Redact, then cut: a cut first could split a secret and keep half of it.
            self.prompt_cache = (e.turn, one_line(_redacted(e.text), 400)) if e else (0, "")
        return self.prompt_cache

    def _assistant(self, e: Entry) -> None:
        d = self.digest
        for tu in e.tool_uses:
            if tu.name in self.r.error_tools:
                self.tool_calls[tu.id] = (
                    tu.name,
                    command_signature(tu.target),
                    tu.target,
                    e.start,
                )
            if tu.name in self.r.ignored_tools:
                continue
            d.tool_uses += 1
            if tu.name not in d.tools:
                d.tools.append(tu.name)
            if tu.name in WRITE_TOOLS:
                self.edits += 1
                self._while_failing("files", tu.target)
                if tu.target:
                    # a change once its result says so (see _tool_result)
                    self.writes[tu.id] = tu.target
        if len(self.tool_calls) > 2000:  # results follow their calls closely; forget old ids
            self.tool_calls = dict(list(self.tool_calls.items())[-500:])
        if len(self.writes) > 2000:
            self.writes = dict(list(self.writes.items())[-500:])
        if e.text:
            if self.unfixed:  # (most replies: no run is failing)
                self._while_failing("said", e.text[:1000])
            d.outcome = [e.turn, e.start, e.end]
            if self.last_user is not None:  # the first reply to a user message: does it concede?
                turn, counted = self.last_user
                self.last_user = None
                first = next(iter(scoring_lines(e.text[:200])), "").lower().replace("\u2019", "'")
                concession = opens_with(first.lstrip("*_ "), self.r.concessions)
                if concession and turn == e.turn:
                    self._correction(
                        self.r.correction_confirmed, [f"conceded: {concession}"], counted
                    )
            self._score_text(e.text, "assistant", e.turn)
            # after the keywords: a line they quote stays quoted with its keywords
            self._note_fix_words(e)

    def _tool_result(self, e: Entry) -> None:
        written = self.writes.pop(e.tool_use_id, None)
        if e.rejected:  # of any tool: the user overrode what the assistant proposed
            self.digest.rejected = True
            return
        if written is not None:
            # An error result (a hook's or the permission check's deny, a failed edit) changed nothing.
            if not e.is_error:
                self._written(written, e)
            return
        name, signature, command, called = self.tool_calls.pop(e.tool_use_id, ("", "", "", 0))
        call = (name, signature)
        if name not in self.r.error_tools:
            return
        program = (call[0], " ".join(call[1].split()[:2]))  # `go test`, `npm run`, `pytest`
        if e.is_error:
            self.errors += 1
            if len(self.failed_runs) < MAX_FAILED_RUNS:
                output = f"{e.text}\n…\n{e.tail}" if e.tail else e.text
                run: dict = {
                    "command": command,
                    "output": output,
                    "at": e.timestamp,
                    "call": call,
                    "program": program,
                    "files": [],
                    "said": [],
                    "fix": None,
                }
                self.failed_runs.append(run)
                self.unfixed.append(run)
            line = ""
            if call not in self.pending_errors:
                # a new failure: words said before it are not about its fix
                self.fix_words, self.said = [], []
                line = one_line(_redacted(error_line(e.text)), 200)
                self.pending_errors[call] = [e.turn, line, self.edits, called]
            else:
                self.pending_errors[call][2] = self.edits
            seen = self.failing.get(program)
            if seen:
                seen[2], seen[3] = self.edits, seen[3] + 1
            else:
                self.failing[program] = [
                    e.turn,
                    line or self.pending_errors[call][1],
                    self.edits,
                    1,
                    called,
                ]
            return
        # the same command, or program, now passes: what came between fixed it
        fixed = False
        for run in self.unfixed:
            if run["call"] == call or run["program"] == program:
                run["fix"] = {"said": run.pop("said"), "files": run["files"], "command": command}
                fixed = True
        if fixed:
            self.unfixed = [run for run in self.unfixed if run["fix"] is None]
        if call in self.pending_errors:
            # The same command got past an earlier error: an error and the turns that fixed it.
            turn, first, edits, at = self.pending_errors.pop(call)
            self.failing.pop(program, None)
            self._fixed_at(at)
            # Edited, then rerun: the failing run fixed (a test made to pass). Rerun alone: a retry got past it.
            edited = self.edits > edits
            self._error_fixed(turn, first, "error-fix" if edited else "error-retried", edited)
            return
        seen = self.failing.get(program)
        if seen and seen[3] >= 2 and self.edits > seen[2]:
            # An error that kept coming back is gone after a file was edited: the edit fixed it.
            del self.failing[program]
            self._fixed_at(seen[4])
            self._error_fixed(seen[0], seen[1], "error-stopped-after-edit")

    def _fixed_at(self, offset: int) -> None:
        if self.fixed_from is None or offset < self.fixed_from:
            self.fixed_from = offset

    def _written(self, target: str, e: Entry) -> None:
        """Note a file a write tool changed, relative to the project; one outside it is left out."""
        d = self.digest
        if d.project is None:
            self._learn_project()
        if len(d.files) >= Digest.MAX_FILES:  # (before the path's work: it may resolve links)
            return
        # A session writes the same few files again and again: each resolved (it may read links on the
        # disk) and redacted once a pass
        key = (target, d.project or "")
        path = self.relative.get(key, "")
        if path == "":
            if len(self.relative) > 4096:
                self.relative.clear()
            path = project_relative(*key)
            # after the cut to the project: a redaction cannot move a path out of it
            path = self.relative[key] = None if path is None else _redacted(path)
        if path is None:
            return
        if path not in d.files:
            d.files.append(path)

    def _learn_project(self) -> None:
        """The project, once per transcript (the digest keeps it): the folder the session started in."""
        from memcurate.curator.capture.summary import session_cwd

        self.digest.project = session_cwd(self.path) if self.path is not None else ""

    def _while_failing(self, what: str, value: str) -> None:
        """Note an edited file or the assistant's words for each failing run not fixed yet (a few each)."""
        for run in self.unfixed:
            if value and value not in run[what] and len(run[what]) < MAX_FIX_NOTES:
                run[what].append(value)

    def _error_fixed(self, turn: int, first: str, why: str, edited: bool = True) -> None:
        """An error and what got past it. A fix by an edit is a runbook on its own (the default weight is the
        threshold times the saturation); a plain retry that passed (a flake, a changed environment) half that.
        After a fix by an edit, the assistant's words while it failed and its next words are snippets too: a
        drafter, offline as well, has what fixed it, not only the error."""
        weight = self.r.error_fix_weight / (1 if edited else 2)
        self.fixes += 1
        self.totals["runbook"] += weight
        self.hits["runbook"] += 1
        self.strong["runbook"] += 1
        self._offer(
            Snippet(
                "runbook",
                weight,
                turn,
                "tool",
                f"error, then fixed: {first}",
                [why],
                [f"error: {first}"],
                self._prompt(),
                self.seq,
            )
        )
        if edited:
            for seq, at, lo, line in self._fix_words():
                self._offer_fix_words(
                    Snippet(
                        "runbook",
                        FIX_WORDS_WEIGHT,
                        at,
                        "assistant",
                        line,
                        ["fix"],
                        [line],
                        self._prompt(),
                        seq,
                        lo,
                    )
                )
            self.after_fix = FIX_WORDS_WEIGHT
        self.fix_words, self.said = [], []

    def _offer_fix_words(self, s: Snippet) -> None:
        """A line of the fix's words, unless a keyword already quotes it."""
        if all(other.text != s.text for other in self.top["runbook"]):
            self._offer(s)

    def _note_fix_words(self, e: Entry) -> None:
        """While a run fails, the assistant's words (their first line that is not narration) may say the fix.
        Only the last few are ever used, and most failures are never fixed in a pass: the words are kept as
        said and read (redacted, their line found) only when they are used (see _fix_words)."""
        fixing = self.after_fix is not None
        if not (self.pending_errors or self.failing or fixing):
            return
        if not fixing:  # the last few
            self.said.append((self.seq, e.turn, e.text[:2000]))
            if len(self.said) > 4 * MAX_FIX_NOTES:
                self._fix_words()
            return
        found = self._fix_line(e.text[:2000])
        if found is None:
            return
        lo, line = found
        # the words right after a fix: what it was, that it passes
        self._offer_fix_words(
            Snippet(
                "runbook",
                self.after_fix,
                e.turn,
                "assistant",
                line,
                ["fix"],
                [line],
                self._prompt(),
                self.seq,
                lo,
            )
        )
        self.after_fix = None

    def _fix_line(self, text: str) -> tuple[int, str] | None:
        """The first line of the assistant's words that is not narration, and its index; None when none is.
        Redacted as _score_text quotes a message."""
        lines = scoring_lines(_redacted(text))
        lo = next((i for i, ln in enumerate(lines) if not is_narration(ln, self.r)), None)
        return None if lo is None else (lo, one_line(lines[lo], self.r.snippet_chars))

    def _fix_words(self) -> list[tuple[int, int, int, str]]:
        """The last MAX_FIX_NOTES of the words said while runs fail that have a line to quote, as (seq,
        turn, line index, line): those said since last asked read newest first, until enough are found."""
        if self.said:
            found = []
            for seq, turn, text in reversed(self.said):
                line = self._fix_line(text)
                if line is not None:
                    found.append((seq, turn, *line))
                    if len(found) == MAX_FIX_NOTES:
                        break
            self.fix_words = [*self.fix_words, *reversed(found)][-MAX_FIX_NOTES:]
            self.said = []
        return self.fix_words

    def _correction(self, weight: float, words: list[str], counted: bool = False) -> None:
        """The user's message of this turn corrected the assistant: a preference, and weight toward a decision.

        `counted`: the message already counted as a correction (by its opener); a concession then adds
        weight but no second hit.
        """
        turn, text = self._prompt()
        if not text or self.user_speaker != "user":  # a parent agent's brief corrects nothing
            return
        for name, w in self.r.correction_weights.items():
            w *= weight * float(self.r.speakers[name].get(self.user_speaker, 1.0))
            if w <= 0:
                continue
            self.totals[name] += w
            if not counted:
                self.hits[name] += 1
            if name == "preference" and not counted:
                self.strong[name] += 1
            line = one_line(text, self.r.snippet_chars)
            same = next((s for s in self.top[name] if s.text == line), None)
            # a concession confirms the snippet the opener made: one snippet, both reasons
            if same is not None:
                same.weight += w
                same.keywords = [*same.keywords, *words]
                import heapq  # (here and below: a pass with nothing to quote never loads it)

                heapq.heapify(self.top[name])
            else:
                self._offer(
                    Snippet(
                        name,
                        w,
                        turn,
                        self.user_speaker,
                        line,
                        ["correction", *words],
                        [line],
                        (turn, ""),
                        self.seq,
                    )
                )
        if self.last_user is not None:
            self.last_user = (self.last_user[0], True)

    # -- scoring ---------------------------------------------------------
    def _matches(self, text: str, speaker: str) -> tuple[list[str], list[str], dict]:
        """The message's scoring lines, those lines as matched, and the keywords found per (category, line)."""
        r = self.r
        lines = scoring_lines(text)
        if not lines:
            return lines, lines, {}
        # Inline code does not score, but keeps its place: "is `master`, not `main`".
        masked = [mask_inline_code(ln) if "`" in ln else ln for ln in lines]
        if speaker == "assistant":
            for i, ln in enumerate(masked):
                if is_narration(ln, r):
                    masked[i] = ""
        joined = "\n".join(masked)
        if "\u2019" in joined:  # a typographic apostrophe ("don’t") matches the keywords' plain one
            joined = joined.replace("\u2019", "'")
        lowered = joined.lower()
        starts = [0]
        for ln in masked[:-1]:
            starts.append(starts[-1] + len(ln) + 1)
        # (category, line) -> ({strong keyword: matched text}, {weak keyword: matched text});
        # a keyword counts once per line, however often it matches there.
        found: dict[tuple[str, int], tuple[dict, dict]] = {}
        candidates = r.keywords.candidates(lowered, spelled=len(lowered) == len(joined))
        if candidates:
            from bisect import bisect_right  # (only for a message that may score)

            present = message_words(lowered)
        for kw in candidates:
            if float(r.speakers[kw.category].get(speaker, 1.0)) <= 0:
                continue
            for pos, matched in kw.find(joined, lowered, present):
                i = bisect_right(starts, pos) - 1
                pair = found.setdefault((kw.category, i), ({}, {}))
                pair[1 if kw.weak else 0].setdefault(kw.index, matched)
        return lines, masked, found

    def _score_text(self, text: str, speaker: str, turn: int) -> None:
        r = self.r
        lines, masked, found = self._matches(text, speaker)
        if not found:
            return
        # A message that scores is redacted whole and scored as redacted, so
        # snippets are cut from redacted lines: a secret is never split by a
        # cut (or spread over lines, like a key block) and half of it kept.
        redacted = _redacted(text)
        if redacted != text:
            lines, masked, found = self._matches(redacted, speaker)
            if not found:
                return

        lowered = "\n".join(masked).lower()
        reasons = r.reasons.candidates(lowered)
        flags = [
            bool(ln) and any(next(kw.find(ln, ln.lower()), None) for kw in reasons) for ln in masked
        ]
        n = len(flags)
        scored: list[tuple[str, int, float, list[str]]] = []
        for (name, i), (strong, weak) in sorted(found.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            w = min(len(strong) + r.weak_weight * len(weak), r.line_cap)
            if flags[i] or (i > 0 and flags[i - 1]) or (i + 1 < n and flags[i + 1]):
                w *= r.reason_weight
            w *= float(r.speakers[name].get(speaker, 1.0))
            self.totals[name] += w
            self.hits[name] += 1
            self.strong[name] += bool(strong)
            scored.append((name, i, w, sorted({*strong.values(), *weak.values()})))

        clean_lines = lines
        k = r.context_lines
        for name, i, w, words in scored:
            heap = self.top[name]
            if len(heap) >= r.snippets and w <= heap[0].weight:
                continue
            lo, hi = max(0, i - k), min(len(clean_lines), i + k + 1)
            context = [one_line(x, r.snippet_chars) for x in clean_lines[lo:hi]]
            prompt = self._prompt() if speaker == "assistant" else (turn, "")
            self._offer(
                Snippet(
                    name,
                    w,
                    turn,
                    speaker,
                    one_line(clean_lines[i], r.snippet_chars),
                    words,
                    context,
                    prompt,
                    self.seq,
                    lo,
                )
            )

    def _offer(self, s: Snippet) -> None:
        import heapq

        heap = self.top[s.category]
        for i, other in enumerate(heap):  # a repeated line is one snippet, at its best weight
            if other.text == s.text:
                if other < s:
                    heap[i] = s
                    heapq.heapify(heap)
                return
        if len(heap) < self.r.snippets:
            heapq.heappush(heap, s)
        elif heap[0] < s:
            heapq.heapreplace(heap, s)

    # -- results ---------------------------------------------------------
    def files_changed(self) -> list[str]:
        """The files the session wrote inside the project, relative to it (older states' absolute paths too)."""
        d = self.digest
        if d.project is None:
            self._learn_project()
        files = (project_relative(f, d.project or "") for f in d.files)
        return list(dict.fromkeys(f for f in files if f))

    def summary_score(self) -> tuple[float, dict]:
        d = self.digest
        values = {
            "tool_uses": d.tool_uses,
            "distinct_tools": len(d.tools),
            "user_turns": d.user_turns,
        }
        score = 0.0
        for key, spec in self.r.activity.items():
            score += float(spec["weight"]) * min(1.0, values[key] / float(spec["full"]))
        return min(1.0, score), values

    def result(self, *, summary: bool, subagent: bool) -> dict:
        """Per category: score, threshold, triggered, signals; snippets and excerpt when triggered."""
        r = self.r
        out: dict[str, dict] = {}
        for name in TEXT_SCORED:
            score = min(1.0, self.totals[name] / r.saturation[name])
            signals = {"hits": self.hits[name], "strong_hits": self.strong[name]}
            if name == "runbook":
                signals["errors"], signals["fixed"] = self.errors, self.fixes
            out[name] = self.category(name, score, signals, eligible=self.strong[name] > 0)
        if summary and (r.summary_subagents or not subagent):
            score, values = self.summary_score()
            from memcurate.curator.capture.summary import session_summary

            out["session_summary"] = session_summary(self, score, values)
        else:
            why = (
                "subagent transcripts are not summarised"
                if summary
                else "summaries are made at the end of a session"
            )
            out["session_summary"] = {
                "score": 0.0,
                "threshold": r.threshold["session_summary"],
                "triggered": False,
                "skipped": why,
            }
        return out

    def category(self, name: str, score: float, signals: dict, *, eligible: bool = True) -> dict:
        """A category's entry of the result: snippets and excerpt when it triggered."""
        threshold = self.r.threshold[name]
        entry = {
            "score": round(score, 3),
            "threshold": threshold,
            "triggered": eligible and score > 0 and score >= threshold,
            "signals": signals,
        }
        if entry["triggered"] and name != "session_summary":
            snippets = sorted(self.top[name], key=lambda s: -s.weight)
            entry["snippets"] = [s.as_dict() for s in snippets]
            from memcurate.curator.capture.summary import excerpt

            entry["excerpt"] = excerpt(snippets, self.r.excerpt_chars)
        return entry


def triage_entries(
    entries: Iterable[Entry],
    rules: Rules,
    *,
    summary: bool = True,
    subagent: bool = False,
    digest: Digest | None = None,
    path: str | None = None,
) -> tuple[dict, Triage]:
    """Score all `entries`; return the per-category result and the Triage (for its digest and turns)."""
    t = Triage(rules, digest, subagent=subagent, path=path or getattr(entries, "path", None))
    for e in entries:
        t.add(e)
    return t.result(summary=summary, subagent=subagent), t
