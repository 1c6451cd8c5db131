"""The failures a transcript shows, counted in the ledger by the triage (the Stop hook's pass and
`memcurate triage PATH`), with what fixed them when the transcript shows it: the same command, or
program, passing later, the files edited in between, and what the assistant said it changed.

Runs after the triage is staged; a failure here never fails the capture: it becomes a note.
"""

from __future__ import annotations

import os

from memcurate.curator.util.lazyre import LazyRegex
from memcurate.curator.util.stamps import now_iso

# A colon ends a sentence too: "Let me look at the store:" announces the tool call that follows it.
_SENTENCE_END = LazyRegex(r"(?<=[.!?:])\s+")
_NARRATION = (
    "let me",
    "let's",
    "now let",
    "now i'll",
    "now i will",
    "i'll run",
    "i will run",
    "next,",
    "i see",
    "it looks like",
    "it seems",
    "looking at",
    "great",
    "perfect",
    "excellent",
)
_STAMP = LazyRegex(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")


def record_runs(
    data: str, cfg: dict, runs: list[dict], *, session: str, transcript: str
) -> list[str]:
    """Count the failures of `runs` (Triage.failed_runs) for `session`; returns the notes for the log."""
    rc = cfg["rules"]
    if not runs or not rc["enabled"]:
        return []
    try:
        return _record(data, rc, runs, session, transcript)
    except Exception as e:  # rule graduation must never cost a capture
        return [f"failures not counted toward rules: {e.__class__.__name__}: {e}"]


def _record(data: str, rc: dict, runs: list[dict], session: str, transcript: str) -> list[str]:
    from memcurate.curator.rules import ledger
    from memcurate.curator.rules.signature import failures

    project = os.path.dirname(os.path.abspath(data))
    session = ledger.session_for(session, transcript)
    fixed = 0
    parsed: dict[tuple[str, str], list] = {}  # a retried command often prints the same output again
    # One sighting per failure, in the order first seen: its first run (when, the command, the error) and
    # the last fix the pass shows, as recording each run in turn would leave it; all in one file.
    plan: dict[str, list] = {}
    for run in runs:
        fix = fix_of(run, project)
        found = parsed.get((run["command"], run["output"]))
        if found is None:
            found = parsed[(run["command"], run["output"])] = failures(
                run["command"], run["output"], project=project, limit=rc["per_output"]
            )
        for f in found:
            fixed += bool(fix)
            if f.key not in plan:
                plan[f.key] = [f, run, fix]
            elif fix:
                plan[f.key][2] = fix
    recorded = ledger.record_all(
        data,
        [
            ledger.Sighting(f, stamp(run["at"]), run["command"], f.excerpt or run["output"], fix)
            for f, run, fix in plan.values()
        ],
        session=session,
        source="transcript",
        transcript=transcript,
        threshold=rc["threshold"],
        max_entries=rc["ledger_max_entries"],
        max_bytes=rc["ledger_max_bytes"],
    )
    counted = sum(r.new for r in recorded)
    staged = [ledger.PREFIX + r.key for r in recorded if r.staged]
    if not counted and not staged:
        return []
    note = f"failures counted toward rules: {counted}" + (
        f", {fixed} with their fix" if fixed else ""
    )
    return [note + (f"; staged {', '.join(staged)}" if staged else "")]


def fix_of(run: dict, project: str) -> dict | None:
    """What fixed a failing run: the command that then passed, the files edited, and the first
    sentence or two the assistant wrote in between (the ledger redacts and caps it)."""
    fix = run.get("fix")
    if not fix:
        return None
    return {
        "text": first_sentences(_messages(fix.get("said") or ())),
        "files": _relative(fix.get("files") or [], project),
        "command": fix.get("command") or "",
    }


def _messages(said) -> str:
    """The assistant's messages as one text, each ending a sentence: a message that stops at ":" (it
    announces a tool call) glued to the next one read as one sentence of narration."""
    out = []
    for text in said:
        text = " ".join(str(text).split()).rstrip(" :")
        if text:
            out.append(text if text[-1] in ".!?" else text + ".")
    return " ".join(out)


def first_sentences(text: str, count: int = 2) -> str:
    """The first `count` sentences that say something: "Let me check the tests" only announces a step."""
    sentences = _SENTENCE_END.rx.split(" ".join(text.split()))
    telling = [s for s in sentences if s and not s.lower().startswith(_NARRATION)]
    return " ".join(telling[:count])


def _relative(files: list[str], project: str) -> list[str]:
    """Edited files relative to the project when inside it (as a rule's paths are)."""
    root = project.rstrip(os.sep) + os.sep
    return [f[len(root) :] if f.startswith(root) else f for f in files]


def stamp(timestamp: str) -> str:
    """A transcript's timestamp (2025-07-14T22:59:01.123Z) as memcurate writes them; now when it has none."""
    m = _STAMP.match(timestamp or "")
    return m.group(0) + "Z" if m else now_iso()
