"""Contract: what memcurate's recall hook answers on UserPromptSubmit reaches the model in the real Claude Code's
next request."""

from __future__ import annotations

from pathlib import Path

from contract.api import Turn
from memcurate.curator import config
from memcurate.curator.memory import memfile
from memcurate.curator.util.paths import data_dir, memory_root

STEP = "Restart the zorblat queue worker with the drain flag."


def save_memory(project: Path) -> Path:
    """A saved runbook in the project's memory root, not listed in MEMORY.md (so Claude Code has none of it)."""
    root = Path(memory_root(project, config.load(project, data_dir(project)), data_dir(project)))
    doc = memfile.MemoryDoc(
        id="zorblat-queue-stalls",
        category="runbook",
        title="Zorblat queue stalls",
        description="When the zorblat queue job fails with a timeout",
        tags=["zorblat"],
        created="2026-11-20T08:00:00Z",
        updated="2026-11-20T08:00:00Z",
        body=f"## Symptom\nThe zorblat queue job fails with a timeout.\n\n## Steps\n1. {STEP}\n"
        "2. Clear the stale lock file.\n\n## Verification\nThe zorblat queue job passes.",
    )
    path = root / "runbook" / "zorblat-queue-stalls.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(memfile.render(doc))
    return path


def test_a_recalled_memory_reaches_the_next_request(installed, run_claude):
    save_memory(installed)
    run = run_claude(
        "the zorblat queue job fails with a timeout again", [Turn("Looking.")], cwd=installed
    )
    assert run.returncode == 0, run.explain()
    hook = [h for h in run.hooks if h.event == "UserPromptSubmit"]
    assert hook and STEP in hook[0].stdout, (
        f"memcurate's recall answered nothing: {[h.stdout for h in hook]}"
    )
    first = run.api.conversation[0]
    assert STEP in first.text, (
        f"the recall hook's additionalContext did not reach the model's request; "
        f"the hook printed {hook[0].stdout[:300]!r}"
    )
    log = "\n".join(run.memcurate_log())
    assert "recall" in log, log
