"""Contract: Claude Code's own recall mode (CLAUDE_MEMORY_STORES, or a server switch) and memcurate beside it.

In that mode Claude Code does not load MEMORY.md; a selector model is shown the memory files (`Available
memories:` then `- [type] path (mtime): description`) and the files it picks are injected. memcurate models
what the selector is shown (claude_recall.offered: archived memories live in `.archive/`, where it does not
look) and leaves those memories to it, so none reaches Claude twice."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from contract.api import ToolUse, Turn, is_memory_selector, is_side_request
from contract.test_cc_recall import STEP, save_memory
from memcurate.curator import config
from memcurate.curator.categories import CATEGORIES
from memcurate.curator.library import edits
from memcurate.curator.memory.recall import claude_recall
from memcurate.curator.util.paths import data_dir, memory_root

RECALL_MODE = {"CLAUDE_MEMORY_STORES": "1"}  # any value but blanks turns the mode on (2.1.328)
LISTED = re.compile(
    r"^- (?:\[(?P<type>[a-z]+)\] )?(?P<path>.+?) \((?P<mtime>[0-9T:.Z-]+)\)(?:: (?P<desc>.*))?$"
)


def root_of(project: Path) -> Path:
    return Path(memory_root(project, config.load(project, data_dir(project)), data_dir(project)))


def selector(picks: list[str]) -> dict:
    """api_options: the selector's requests answered with `picks`, the rest of the API as usual."""
    return {
        "side": lambda body: is_side_request(body) or is_memory_selector(body),
        "answer_after": is_memory_selector,
        "side_answer": lambda body: (
            json.dumps({"selected_memories": picks}) if is_memory_selector(body) else "ok"
        ),
    }


def shown(run) -> list[dict]:
    """What the selector was shown: one dict (type, path, mtime, desc) per listed file."""
    asks = [r for r in run.api.side if is_memory_selector(r.body)]
    assert asks, f"Claude Code never asked its memory selector (recall mode off?)\n{run.explain()}"
    first = asks[0].body["messages"][0]["content"][0]["text"]
    assert first.startswith("Available memories:\n"), first[:200]
    rows = [LISTED.match(line) for line in first.splitlines()[1:]]
    assert all(rows), f"a listing line memcurate cannot read: {first!r}"
    return [m.groupdict() for m in rows if m]


def archived_memory(project: Path) -> str:
    """A memory saved, then archived, through memcurate's engine: its file's path under the memory root."""
    from memcurate.curator.engine import Engine
    from memcurate.curator.memory import memfile

    engine = Engine(project)
    try:
        doc = memfile.MemoryDoc(
            id="use-postgres",
            category="decision",
            title="Use Postgres",
            description="Postgres chosen for the jobs queue (outdated)",
            tags=["db"],
            created="2026-11-01T08:00:00Z",
            updated="2026-11-01T08:00:00Z",
            body="## Decision\nUse Postgres.\n\n## Rationale\nA server was planned.",
        )
        engine.store.create(doc)
        edits.archive(
            engine, "decision/use-postgres", engine.library_entry("decision/use-postgres").hash
        )
    finally:
        engine.close()
    found = [
        str(p.relative_to(root_of(project))) for p in root_of(project).rglob("use-postgres.md")
    ]
    assert found == [".archive/decision/use-postgres.md"], found
    return found[0]


def test_the_selector_is_shown_exactly_what_memcurate_models(installed, run_claude):
    save_memory(installed)  # memcurate's: front matter with its type and description
    archived_memory(installed)
    root = root_of(installed)
    names = (
        ".archive/decision/old-choice.md",
        "logs/today.md",
        "Logs./x.md",
        "notes/own.md",
        "MEMORY.md",
        "sub/MEMORY.md",
        "team/x.md",
        "deep/a/b/y.md",
        "notes/.hidden.md",
        "z.MD",
        "sessions/s.md",
    )
    for age, name in enumerate(names):  # distinct mtimes: the listing's order is newest first
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("- a line\n")
        os.utime(root / name, (1_900_000_000 - age, 1_900_000_000 - age))
    run = run_claude(
        "which queue do we use for the nightly jobs?",
        [Turn("Hello.")],
        cwd=installed,
        env=RECALL_MODE,
        api_options=selector([]),
    )
    assert run.returncode == 0, run.explain()
    listed = shown(run)
    assert [r["path"] for r in listed] == claude_recall.offered(str(root)), (
        "Claude Code's selector was shown other files than claude_recall.offered models (its scan rule "
        f"changed?): {listed}"
    )
    ours = next(r for r in listed if r["path"] == "runbook/zorblat-queue-stalls.md")
    assert (
        ours["type"] == CATEGORIES["runbook"].claude_type
        and ours["desc"] == "When the zorblat queue job fails with a timeout"
    ), f"Claude Code read memcurate's front matter differently: {ours}"
    assert not any(
        "use-postgres" in r["path"] or r["path"].startswith(".archive/") for r in listed
    ), f"Claude Code's selector was shown an archived memory: {listed}"


def test_in_recall_mode_memcurate_leaves_a_memory_to_claude_codes_selector(installed, run_claude):
    save_memory(installed)
    script = [
        Turn("Checking.", [ToolUse("Bash", {"command": "true", "description": "nothing"})]),
        Turn("Done."),
    ]
    run = run_claude(
        "the zorblat queue job fails with a timeout again",
        script,
        cwd=installed,
        env=RECALL_MODE,
        api_options=selector(["runbook/zorblat-queue-stalls.md"]),
    )
    assert run.returncode == 0, run.explain()
    hook = [h for h in run.hooks if h.event == "UserPromptSubmit"]
    assert hook and STEP not in hook[0].stdout, (
        "memcurate gave a memory Claude Code's selector is shown"
    )
    log = "\n".join(run.memcurate_log())
    assert "Claude Code recalls by itself (CLAUDE_MEMORY_STORES is set)" in log, log
    said = [r.text.count(STEP) for r in run.api.conversation]
    assert said and said[-1] == 1, (
        f"the memory Claude Code's selector picked should reach the model once "
        f"(per request: {said})\n{run.explain()}"
    )
    transcript = next(Path(os.environ["CLAUDE_CONFIG_DIR"]).glob("projects/*/*.jsonl")).read_text()
    assert '"relevant_memories"' in transcript, "Claude Code wrote no relevant_memories attachment"
