#!/usr/bin/env python3
"""What of a session's evidence reaches the model: labelled facts against the requests memcurate sends.

    python bench/evidence_bench.py                      # every session of bench/evidence_labels.json
    python bench/evidence_bench.py --quick              # two sessions (one per split when both exist), for CI
    python bench/evidence_bench.py --labels FILE --json-out FILE [--verify] [--look oracle|none] [-v]

For each labelled session, a throwaway project (`backend: claude-cli`, HOME and Claude's folders pointed
at a temporary folder) runs memcurate's real pipeline on the transcript as `memcurate triage PATH` then
drafting would: `capture(..., event="backfill", summary=True)` stages the triage, with the second look a
Claude backend asks for at a backfill, and `Engine.process` makes the look and drafts every category
(with `--verify`, `verify.llm: true`: each draft is also checked). The drafter is the real
`ClaudeCliDrafter` with the `claude` child replaced: it builds every request as it would be sent
(system prompt, schema, prompt), RECORDS it, and answers valid JSON, so nothing leaves the machine.

The stand-in's answers: a draft with every required section for a draft request, no concerns for a
check, and for the second look, with `--look oracle` (the default), every category (those the keywords
flagged too) whose labelled quote is in an entry of the digest segment the look was sent, citing that
entry [n], with the fact's labelled statement: the best a reader of that very request could answer, so
the figures measure what the pipeline
carries to the model, not a model's judgement. `--look none`: the look finds nothing (having read the whole
session, it leaves no keyword category to draft: see second_look.unconfirmed).

A fact "reaches" a request when its quote, lowercased, every run of white space made one space, is a
substring of the request's prompt normalised the same way. Figures, per split (tune, held_out) and over
all: the share of facts reaching SOME request (look, draft or check); the share reaching the DRAFT
request of the fact's own category for the triage holding its line; both per category, and for facts
whose record is a tool record (record not user/assistant); the characters every call sent (system
prompt, schema, prompt) and tokens estimated at 4 characters a token, per MB (10^6 bytes) of transcript.
When `curator.capture.digest` exists (`digest(path, cfg)` returning a Digest with `.text` and
`.segments`), the share of facts whose quote is in the digest text and its tokens per MB are measured
too. Targets: >= 0.90 some, >= 0.75 of tool-record facts some, >= 0.85 own draft, <= 10,000 tokens per
MB. The bench exits 0 whatever the verdict (`--strict`: 1 on FAIL); figures in bench/results/evidence.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import zlib
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
if str(ROOT) not in sys.path:
    # the checkout's engine, as draft_bench and gate_bench run it
    sys.path.insert(0, str(ROOT / "dev"))

from memcurate.curator.drafting.claude_cli import ClaudeCliDrafter  # noqa: E402
from memcurate.curator.drafting.input_cap import CHARS_PER_TOKEN, TOOL_CHARS  # noqa: E402

PROG = "evidence_bench"
SHARED = ROOT.parent / "shared"
LABELS = BENCH / "evidence_labels.json"
RESULTS = BENCH / "results" / "evidence.json"
CATEGORIES = ("decision", "constraint", "runbook", "tech_debt", "preference")
RECORDS = ("user", "assistant", "tool_result", "tool_use", "queue")
SPLITS = ("tune", "held_out")
# the estimate of the figures (English prose on Claude's tokenizers); the cap's is 3
CHARS_A_TOKEN = 4
MB = 1_000_000
TARGETS = {"some": 0.90, "tool_some": 0.75, "own": 0.85, "tokens_per_mb": 10_000}
_SPACE = re.compile(r"\s+")
_WORDS = {
    "decision": "gateway tokens chosen over sessions",
    "constraint": "quota limits of hosted runners",
    "runbook": "flaky socket timeouts fixed by retrying",
    "tech_debt": "legacy importer left unported",
    "preference": "terse commit messages wanted",
    "session_summary": "migration finished, docs next",
}
# an entry of the look's digest segment (curator/capture/digest.py)
_ENTRY = re.compile(r"^\[(\d+)\] ", re.M)


def normalise(text: str) -> str:
    """Lowercased, every run of white space one space: how a quote and a request are compared."""
    return _SPACE.sub(" ", text.lower()).strip()


# -- the labels --------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Fact:
    id: str
    category: str
    statement: str
    line: int
    record: str
    tool: str | None
    quote: str

    @property
    def said(self) -> str:
        """What the oracle's look states of it: its labelled statement (its quote when it has none)."""
        return (self.statement or self.quote)[:200]

    @property
    def in_tool_record(self) -> bool:
        return self.record not in ("user", "assistant")


@dataclasses.dataclass(frozen=True)
class Session:
    transcript: str  # relative to the shared folder
    split: str
    project: str
    facts: tuple[Fact, ...]

    @property
    def short(self) -> str:
        return Path(self.transcript).stem[:8]


def load_labels(path: Path) -> list[Session]:
    """The labelled sessions of `path` (format: version 1, see bench/README.md). ValueError saying what
    is wrong with a file that is not in that format."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    if (
        not isinstance(doc, dict)
        or doc.get("version") != 1
        or not isinstance(doc.get("sessions"), list)
    ):
        raise ValueError(f"{path}: not an evidence labels file (version 1 with a sessions list)")
    out = []
    for s in doc["sessions"]:
        if s.get("split") not in SPLITS:
            raise ValueError(f"{path}: {s.get('transcript')}: split must be one of {SPLITS}")
        facts = []
        for f in s.get("facts") or []:
            if f.get("category") not in CATEGORIES or f.get("record") not in RECORDS:
                raise ValueError(f"{path}: fact {f.get('id')}: unknown category or record")
            if (
                not isinstance(f.get("line"), int)
                or f["line"] < 1
                or not str(f.get("quote") or "").strip()
            ):
                raise ValueError(f"{path}: fact {f.get('id')}: needs a line (1-based) and a quote")
            facts.append(
                Fact(
                    str(f["id"]),
                    f["category"],
                    str(f.get("statement", "")),
                    f["line"],
                    f["record"],
                    f.get("tool"),
                    str(f["quote"]),
                )
            )
        out.append(
            Session(str(s["transcript"]), s["split"], str(s.get("project", "")), tuple(facts))
        )
    return out


def line_offsets(path: Path) -> list[int]:
    """The byte offset where each line of the transcript starts (line n at index n - 1)."""
    offsets, at = [], 0
    with open(path, "rb") as f:
        for line in f:
            offsets.append(at)
            at += len(line)
    return offsets


# -- the stand-in drafter -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Call:
    """One request as it would be sent: `kind` look | draft | check, the triage, the category (None for
    the look), the prompt (the evidence is in it) and the characters of the whole call."""

    kind: str
    triage: str
    category: str | None
    prompt: str
    chars: int


class RecordingDrafter(ClaudeCliDrafter):
    """The claude CLI backend with its child replaced: every request is built by the real code, recorded,
    and answered with valid JSON (see the module's docstring). Thread-safe, as the pipeline needs."""

    def __init__(
        self, cfg: dict | None = None, *, look: str = "oracle", facts: tuple[Fact, ...] = ()
    ) -> None:
        super().__init__("claude", cfg or {}, reason="evidence bench stand-in")
        self.look, self.facts = look, facts
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self._asked = threading.local()  # what the current thread's call is about, for `_run`

    def draft(self, request):
        self._asked.what = ("draft", request.triage_id, request.category, request)
        return super().draft(request)

    def check(self, request, text):
        self._asked.what = ("check", request.triage_id, request.category, request)
        return super().check(request, text)

    def second_look(self, request):
        self._asked.what = ("look", request.triage_id, None, request)
        return super().second_look(request)

    def _run(self, argv: list[str], stdin: str) -> tuple[str, str, int | None]:
        kind, tid, category, request = self._asked.what
        system = argv[argv.index("--system-prompt") + 1]
        schema = argv[argv.index("--json-schema") + 1]
        call = Call(kind, tid, category, stdin, len(system) + len(schema) + len(stdin) + TOOL_CHARS)
        with self._lock:
            self.calls.append(call)
        answer = self.answer(kind, category, request)
        envelope = {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "num_turns": 1,
            "result": "",
            "structured_output": answer,
            "session_id": "00000000-0000-4000-8000-000000000000",
            "usage": {
                "input_tokens": call.chars // CHARS_A_TOKEN,
                "output_tokens": len(json.dumps(answer)) // CHARS_A_TOKEN,
            },
        }
        return json.dumps(envelope), "", 0

    def answer(self, kind: str, category: str | None, request) -> dict:
        if kind == "check":
            return {"concerns": []}
        if kind == "look":
            return {"facts": self.findings(request) if self.look == "oracle" else []}
        from memcurate.curator.categories import CATEGORIES as CATS
        from memcurate.curator.drafting.prompt import FACT_CATEGORIES

        # Words of its own per fact: drafts that share their words are one fact to the pipeline's fold
        # (same_fact.py), which would skip all but one.
        look = request.entry.get("look") if isinstance(request.entry.get("look"), dict) else {}
        words = _WORDS.get(category, category)
        if look.get("statement"):
            words = f"{words} {zlib.crc32(look['statement'].encode()):08x}"
        out = {
            "skip": False,
            "title": f"{words.capitalize()} ({category.replace('_', ' ')})",
            "description": f"Read when {words} matter",
            "tags": ["bench", category.replace("_", "-")],
            "confidence": 0.8,
        }
        if category in FACT_CATEGORIES:
            return {
                **out,
                "fact": f"Fact: {words}.",
                "why": f"Why: {words}.",
                "how_to_apply": "When it matters.",
            }
        return {
            **out,
            "sections": {
                s: f"{s}: {words}, {n + 1}." for n, s in enumerate(CATS[category].required)
            },
        }

    def findings(self, request) -> list[dict]:
        """The oracle's look: one fact per label whose quote is in an entry of the digest segment sent, citing
        that entry, with the fact's labelled statement (every category: those the keywords flagged too)."""
        entries = _entries(request.activity, request.entries)
        found = []
        for fact in self.facts:
            quote = normalise(fact.quote)
            for n, text in entries:
                if quote in normalise(text):
                    found.append(
                        {
                            "category": fact.category,
                            "entries": [n],
                            "statement": fact.said,
                            "why": "",
                            "how_to_apply": "",
                            "confidence": 0.8,
                        }
                    )
                    break
        return found


def _entries(activity: str, numbers) -> list[tuple[int, str]]:
    """(n, text) of each entry of a second look's digest segment (the numbers the request holds)."""
    heads = [m for m in _ENTRY.finditer(activity) if int(m.group(1)) in numbers]
    return [
        (
            int(m.group(1)),
            activity[m.start() : heads[i + 1].start() if i + 1 < len(heads) else len(activity)],
        )
        for i, m in enumerate(heads)
    ]


# -- one session through the pipeline -------------------------------------------------------------


@dataclasses.dataclass
class Run:
    """What the pipeline did with one transcript: its triages ({id: [start, end)}), the calls, the states."""

    transcript: Path
    size: int
    triages: dict[str, list[int]]
    calls: list[Call]
    states: dict[str, dict[str, str]]
    look: dict[str, dict]
    notes: list[str]
    # the project's config, as the engine read it
    cfg: dict = dataclasses.field(default_factory=dict)


def project_config(memory: Path, *, verify: bool) -> str:
    return (
        f"backend: claude-cli\nmemory:\n  root: {json.dumps(str(memory))}\n"
        "drafting:\n  retries: 0\n  backoff_seconds: 0.0\n  fallback: []\n"
        f"verify:\n  llm: {'true' if verify else 'false'}\n"
    )


def run_session(
    transcript: Path,
    facts: tuple[Fact, ...],
    site: Path,
    *,
    verify: bool = False,
    look: str = "oracle",
) -> Run:
    """Backfill `transcript` in a new project under `site` and process every triage it stages, as a user's
    `memcurate triage PATH` and a Claude backend would, with the recording stand-in."""
    from memcurate.curator.candidates import staging
    from memcurate.curator.candidates.incremental import capture
    from memcurate.curator.engine import Engine

    project, memory = site / "project", site / "memory"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(project_config(memory, verify=verify))
    drafter = RecordingDrafter(look=look, facts=facts)
    engine = Engine(str(project), drafter=drafter)
    try:
        report = capture(
            engine.data,
            engine.cfg,
            str(transcript),
            event="backfill",
            summary=True,
            subagent=transcript.name.startswith("agent-"),
        )
        notes = list(report.get("notes") or [])
        triages, states, looks = {}, {}, {}
        for tid in staging.triage_ids(engine.data):
            triages[tid] = list(staging.load_triage(engine.data, tid)["source"]["byte_range"])
            states[tid] = engine.process(tid)
            looks[tid] = staging.read_second_look(engine.data, tid) or {}
    finally:
        engine.close()
    return Run(
        transcript,
        transcript.stat().st_size,
        triages,
        list(drafter.calls),
        states,
        looks,
        notes,
        engine.cfg,
    )


# -- reach ------------------------------------------------------------------------------------------


def triage_of(run: Run, offset: int) -> str | None:
    """The triage whose byte range holds the line starting at `offset`."""
    for tid, (start, end) in run.triages.items():
        if start <= offset < end:
            return tid
    return None


def reach(facts: tuple[Fact, ...], run: Run, offsets: list[int]) -> list[dict]:
    """Per fact: which requests its quote reached (`via`: look, draft:<category>, check:<category>),
    whether SOME request holds it, whether the draft request of its own category for the triage holding
    its line does (`own`), and whether that request was sent at all (`own_sent`)."""
    prompts_n = [(c, normalise(c.prompt)) for c in run.calls]
    rows = []
    for f in facts:
        quote = normalise(f.quote)
        tid = triage_of(run, offsets[f.line - 1]) if 0 < f.line <= len(offsets) else None
        via = sorted(
            {
                c.kind if c.category is None else f"{c.kind}:{c.category}"
                for c, p in prompts_n
                if quote in p
            }
        )
        own = [
            p
            for c, p in prompts_n
            if c.kind == "draft" and c.triage == tid and c.category == f.category
        ]
        # The fact's own draft: the one the look handed this very fact (its statement); else (no look) the
        # category's drafts from the keywords.
        own = [p for p in own if normalise(f.said) in p] or own
        rows.append(
            {
                "id": f.id,
                "category": f.category,
                "record": f.record,
                "tool": f.tool,
                "tool_record": f.in_tool_record,
                "line": f.line,
                "triage": tid,
                "some": bool(via),
                "own": any(quote in p for p in own),
                "own_sent": bool(own),
                "via": via,
            }
        )
    return rows


# -- the digest (curator.capture.digest, when it exists) ------------------------------------------------


def digest_module():
    import importlib

    try:  # by its module name (sys.modules first): the package's attribute may be another import's
        module = importlib.import_module("memcurate.curator.capture.digest")
    except ImportError:
        return None
    return module if hasattr(module, "digest") else None


def digest_text(module, transcript: Path, cfg: dict) -> str:
    """The digest's whole text: `.text`, else its segments' texts joined. `digest(path, cfg)` is the call
    assumed; a `digest` that takes only one argument gets the path."""
    import inspect

    params = [
        p
        for p in inspect.signature(module.digest).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
    ]
    takes_cfg = len(params) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)
    d = module.digest(str(transcript), cfg) if takes_cfg else module.digest(str(transcript))
    text = getattr(d, "text", None)
    if isinstance(text, str):
        return text
    return "\n".join(str(getattr(s, "text", s)) for s in getattr(d, "segments", None) or ())


# -- figures ---------------------------------------------------------------------------------------


def share(rows: list[dict], key: str) -> float | None:
    return sum(bool(r[key]) for r in rows) / len(rows) if rows else None


def figures(rows: list[dict], runs: list[dict]) -> dict:
    """The figures of one scope: shares over its facts, characters and tokens over its transcripts."""
    size = sum(r["bytes"] for r in runs)
    chars = sum(r["chars"]["all"] for r in runs)
    tools = [r for r in rows if r["tool_record"]]
    out = {
        "sessions": len(runs),
        "facts": len(rows),
        "tool_facts": len(tools),
        "mb": round(size / MB, 3),
        "some": share(rows, "some"),
        "own": share(rows, "own"),
        "tool_some": share(tools, "some"),
        "tool_own": share(tools, "own"),
        "own_sent": share(rows, "own_sent"),
        "look_only": share([{"x": r["via"] == ["look"]} for r in rows], "x"),
        "chars": chars,
        "tokens": chars // CHARS_A_TOKEN,
        "tokens_per_mb": round(chars / CHARS_A_TOKEN / (size / MB)) if size else None,
        "cap_tokens_per_mb": round(chars / CHARS_PER_TOKEN / (size / MB)) if size else None,
        "calls": {k: sum(r["calls"].get(k, 0) for r in runs) for k in ("look", "draft", "check")},
        "tokens_per_mb_by_kind": {
            k: round(sum(r["chars"].get(k, 0) for r in runs) / CHARS_A_TOKEN / (size / MB))
            for k in ("look", "draft", "check")
        }
        if size
        else {},
        "per_category": {},
    }
    for cat in CATEGORIES:
        mine = [r for r in rows if r["category"] == cat]
        if mine:
            out["per_category"][cat] = {
                "facts": len(mine),
                "some": share(mine, "some"),
                "own": share(mine, "own"),
            }
    digested = [r for r in rows if r.get("digest") is not None]
    if digested and all(r.get("digest_chars") is not None for r in runs):
        dchars = sum(r["digest_chars"] for r in runs)
        out["digest"] = {
            "some": share(digested, "digest"),
            "tool_some": share([r for r in digested if r["tool_record"]], "digest"),
            "chars": dchars,
            "tokens_per_mb": round(dchars / CHARS_A_TOKEN / (size / MB)) if size else None,
        }
    return out


def verdict(fig: dict) -> dict[str, str]:
    def at_least(v, t):
        return "n/a" if v is None else "PASS" if v >= t else "FAIL"

    tpm = fig["tokens_per_mb"]
    return {
        "some": at_least(fig["some"], TARGETS["some"]),
        "tool_some": at_least(fig["tool_some"], TARGETS["tool_some"]),
        "own": at_least(fig["own"], TARGETS["own"]),
        "tokens_per_mb": "n/a"
        if tpm is None
        else "PASS"
        if tpm <= TARGETS["tokens_per_mb"]
        else "FAIL",
    }


def _pct(v) -> str:
    return "   -  " if v is None else f"{v:6.2f}"


def report(scopes: dict[str, dict], digest_note: str | None) -> None:
    names = list(scopes)
    say = print
    say("")
    say(f"{'':34}" + "".join(f"{n:>16}" for n in names) + "   target")
    rows = [
        ("sessions", "sessions", "{:>16}"),
        ("facts (in tool records)", None, None),
        ("transcript MB", "mb", "{:>16.2f}"),
    ]
    for label, key, fmt in rows:
        if key is None:
            say(
                f"{label:34}"
                + "".join(
                    "{:>16}".format(f"{s['facts']} ({s['tool_facts']})") for s in scopes.values()
                )
            )
        else:
            say(f"{label:34}" + "".join(fmt.format(s[key]) for s in scopes.values()))
    lines = [
        ("reach some request", "some", f">= {TARGETS['some']:.2f}"),
        ("  tool-record facts", "tool_some", f">= {TARGETS['tool_some']:.2f}"),
        ("  through the second look only", "look_only", ""),
        ("reach their own draft", "own", f">= {TARGETS['own']:.2f}"),
        ("  tool-record facts", "tool_own", ""),
        ("  own draft sent at all", "own_sent", ""),
    ]
    for label, key, target in lines:
        cells = []
        for s in scopes.values():
            mark = verdict(s).get(key, "")
            cells.append(f"{_pct(s[key])} {mark if mark != 'n/a' else '':4}".rjust(16))
        say(f"{label:34}" + "".join(cells) + f"   {target}")
    say(
        f"{'input tokens per MB (chars/4)':34}"
        + "".join(
            f"{'-' if s['tokens_per_mb'] is None else format(s['tokens_per_mb'], ','):>11} "
            f"{verdict(s)['tokens_per_mb'] if verdict(s)['tokens_per_mb'] != 'n/a' else '':4}"
            for s in scopes.values()
        )
        + f"   <= {TARGETS['tokens_per_mb']:,}"
    )
    for kind in ("look", "draft", "check"):
        if any(s["calls"][kind] for s in scopes.values()):
            say(
                f"{'  of which ' + kind:34}"
                + "".join(
                    f"{format(s['tokens_per_mb_by_kind'].get(kind, 0), ','):>16}"
                    for s in scopes.values()
                )
            )
    say(
        f"{'  (chars/3, the input cap estimate)':34}"
        + "".join(
            f"{'-' if s['cap_tokens_per_mb'] is None else format(s['cap_tokens_per_mb'], ','):>16}"
            for s in scopes.values()
        )
    )
    say(
        f"{'calls: look / draft / check':34}"
        + "".join(
            f"{'{look} / {draft} / {check}'.format(**s['calls']):>16}" for s in scopes.values()
        )
    )
    if digest_note:
        say(f"{'digest':34}{digest_note}")
    else:
        say(
            f"{'quote in the digest':34}"
            + "".join(f"{_pct((s.get('digest') or {}).get('some')):>16}" for s in scopes.values())
        )
        say(
            f"{'  tool-record facts':34}"
            + "".join(
                f"{_pct((s.get('digest') or {}).get('tool_some')):>16}" for s in scopes.values()
            )
        )
        say(
            f"{'digest tokens per MB':34}"
            + "".join(
                f"{format((s.get('digest') or {}).get('tokens_per_mb') or 0, ','):>16}"
                for s in scopes.values()
            )
        )
    say("")
    say(f"{'per category: some / own (facts)':34}" + "".join(f"{n:>20}" for n in names))
    for cat in CATEGORIES:
        cells = []
        for s in scopes.values():
            c = s["per_category"].get(cat)
            cells.append(f"{c['some']:.2f} / {c['own']:.2f} ({c['facts']})" if c else "-")
        say(f"  {cat:32}" + "".join(f"{c:>20}" for c in cells))


# -- the bench --------------------------------------------------------------------------------------


def pick_quick(sessions: list[Session], shared: Path) -> list[Session]:
    """Two sessions for CI: the smallest of each split when both exist, else the two smallest."""
    present = sorted(
        (s for s in sessions if (shared / s.transcript).is_file()),
        key=lambda s: (shared / s.transcript).stat().st_size,
    )
    picked = [
        next(s for s in present if s.split == sp)
        for sp in SPLITS
        if any(s.split == sp for s in present)
    ]
    return (picked + [s for s in present if s not in picked])[:2]


def measure(
    session: Session, shared: Path, work: Path, *, verify: bool, look: str, digest
) -> tuple[list[dict], dict]:
    """One session: its facts' rows and its run's figures."""
    path = shared / session.transcript
    run = run_session(path, session.facts, work / session.short, verify=verify, look=look)
    rows = reach(session.facts, run, line_offsets(path))
    chars = {"all": sum(c.chars for c in run.calls)}
    for kind in ("look", "draft", "check"):
        chars[kind] = sum(c.chars for c in run.calls if c.kind == kind)
    info = {
        "transcript": session.transcript,
        "split": session.split,
        "bytes": run.size,
        "chars": chars,
        "calls": {k: sum(1 for c in run.calls if c.kind == k) for k in ("look", "draft", "check")},
        "triages": run.triages,
        "states": run.states,
        "notes": run.notes,
        "look": {
            t: {
                k: v
                for k, v in r.items()
                if k in ("state", "chars", "left_out", "already", "added", "error")
            }
            for t, r in run.look.items()
        },
        "digest_chars": None,
    }
    for r in rows:
        r.update(session=session.short, split=session.split)
    if digest is not None:
        try:
            raw = digest_text(digest, path, run.cfg)
        # the digest is another change's work in progress: say it, measure the rest
        except Exception as e:
            info["notes"].append(f"digest failed: {e.__class__.__name__}: {e}")
            print(f"{PROG}: {session.short}: digest failed: {e.__class__.__name__}: {e}")
            return rows, info
        text = normalise(raw)
        info["digest_chars"] = len(raw)
        for r, f in zip(rows, session.facts):
            r["digest"] = normalise(f.quote) in text
    return rows, info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--labels", type=Path, default=LABELS, help=f"default: {LABELS.relative_to(ROOT)}"
    )
    ap.add_argument(
        "--shared", type=Path, default=SHARED, help="the folder the labels' transcripts are under"
    )
    ap.add_argument(
        "--quick", action="store_true", help="two sessions (one per split when both exist)"
    )
    ap.add_argument(
        "--verify",
        action="store_true",
        help="verify.llm on: each draft is also checked (one more call)",
    )
    ap.add_argument(
        "--look",
        choices=("oracle", "none"),
        default="oracle",
        help="what the stand-in's second look answers (default: oracle, see the docstring)",
    )
    ap.add_argument(
        "--json-out", type=Path, default=RESULTS, help=f"default: {RESULTS.relative_to(ROOT)}"
    )
    ap.add_argument(
        "--workdir", help="parent of the throwaway work folder (default: the system temp dir)"
    )
    ap.add_argument(
        "--keep", action="store_true", help="keep the work folder (staged triages, drafts)"
    )
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    ap.add_argument("-v", action="store_true", help="a row per fact: where its quote reached")
    a = ap.parse_args(argv)
    if not a.labels.is_file():
        print(f"SKIPPED: no labels at {a.labels} (--labels FILE)")
        return 0
    sessions = load_labels(a.labels)
    missing = [s for s in sessions if not (a.shared / s.transcript).is_file()]
    for s in missing:
        print(f"{PROG}: {s.transcript} not under {a.shared}: left out")
    sessions = (
        pick_quick(sessions, a.shared) if a.quick else [s for s in sessions if s not in missing]
    )
    if not sessions:
        print(f"SKIPPED: none of the labelled transcripts is under {a.shared}")
        return 0
    digest = digest_module()
    digest_note = None if digest is not None else "not measured: curator.capture.digest is absent"

    work = Path(tempfile.mkdtemp(prefix="memcurate-evidence-bench-", dir=a.workdir))
    saved_env = dict(os.environ)
    home = work / "home"
    os.environ.update(
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        XDG_CONFIG_HOME=str(home / ".config"),
    )
    for k in ("MEMCURATE_CHILD", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_PROJECT_DIR"):
        os.environ.pop(k, None)
    rows, runs = [], []
    print(
        f"{PROG}: {len(sessions)} sessions, {sum(len(s.facts) for s in sessions)} facts ({a.labels}); "
        f"second look: {a.look}; verification pass: {'on' if a.verify else 'off'}"
    )
    try:
        for s in sessions:
            mine, info = measure(s, a.shared, work, verify=a.verify, look=a.look, digest=digest)
            rows += mine
            runs.append(info)
            print(
                f"  {s.split:8} {s.short} {info['bytes'] / MB:5.2f} MB  {len(info['triages'])} triage(s), "
                f"calls {info['calls']['look']}/{info['calls']['draft']}/{info['calls']['check']}  "
                f"~{info['chars']['all'] // CHARS_A_TOKEN:,} tokens in  "
                f"facts {len(mine)}: some {sum(r['some'] for r in mine)}, own {sum(r['own'] for r in mine)}"
            )
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)

    scopes = {
        sp: figures([r for r in rows if r["split"] == sp], [r for r in runs if r["split"] == sp])
        for sp in SPLITS
        if any(r["split"] == sp for r in runs)
    }
    scopes["all"] = figures(rows, runs)
    if a.v:
        print("")
        for r in rows:
            print(
                f"  {r['split']:8} {r['id']:14} {r['category']:10} {r['record']:11} {str(r['tool'] or ''):14} "
                f"some={'Y' if r['some'] else '-'} own={'Y' if r['own'] else '-' if r['own_sent'] else 'x'}"
                + (f" digest={'Y' if r['digest'] else '-'}" if "digest" in r else "")
                + f"  {', '.join(r['via'])}"
            )
    report(scopes, digest_note)
    failed = [
        f"{sp} {k}" for sp, fig in scopes.items() for k, v in verdict(fig).items() if v == "FAIL"
    ]
    doc = {
        "bench": PROG,
        "when": _now(),
        "commit": _commit(),
        "labels": str(a.labels),
        "quick": a.quick,
        "look": a.look,
        "verify": a.verify,
        "chars_a_token": CHARS_A_TOKEN,
        "targets": TARGETS,
        "digest": digest_note or "measured",
        "figures": scopes,
        "verdicts": {sp: verdict(f) for sp, f in scopes.items()},
        "sessions": runs,
        "facts": rows,
    }
    a.json_out.parent.mkdir(parents=True, exist_ok=True)
    a.json_out.write_text(json.dumps(doc, indent=1) + "\n")
    print("")
    print(("FAIL: " + "; ".join(failed)) if failed else "PASS: every target met")
    shown = (
        os.path.relpath(a.json_out)
        if a.json_out.resolve().is_relative_to(Path.cwd())
        else a.json_out
    )
    print(f"figures: {shown}" + (f"; kept {work}" if a.keep else ""))
    return 1 if failed and a.strict else 0


def _now() -> str:
    import datetime as dt

    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _commit() -> str:
    import subprocess

    try:
        return subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


if __name__ == "__main__":
    sys.exit(main())
