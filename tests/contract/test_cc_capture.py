"""Contract: the transcript the real Claude Code writes is read and triaged by memcurate's hooks, and a real
pytest failure in a Bash call is counted by the PostToolUse failure path (issue 24: "a real session captured
nothing but its summary")."""

from __future__ import annotations

from pathlib import Path

from contract.api import ToolUse, Turn
from memcurate.curator.candidates import staging
from memcurate.curator.rules import ledger
from memcurate.curator.util.paths import data_dir

PROMPT = (
    "We use SQLite not Postgres because it's a single-machine tool; never add a server dependency. "
    "Please fix the failing test."
)
TEST = "python -m pytest -q -p no:cacheprovider tests/test_store.py"
BROKEN = "import sqlite3\n\n\ndef open_db(path):\n    return sqlite3.connect(path)\n"
FIXED_LINE = "    path.parent.mkdir(parents=True, exist_ok=True)\n    return sqlite3.connect(path)"
TESTS = """from app.store import open_db


def test_open_db(tmp_path):
    db = open_db(tmp_path / "data" / "notes.db")
    db.execute("create table notes (body text)")


def test_two():
    assert True
"""


def notes_app(project: Path) -> Path:
    """A project whose test fails: the database's folder does not exist when it connects."""
    (project / "app").mkdir()
    (project / "app" / "__init__.py").write_text("")
    (project / "app" / "store.py").write_text(BROKEN)
    (project / "tests").mkdir()
    (project / "tests" / "test_store.py").write_text(TESTS)
    (project / "conftest.py").write_text("")  # the project root on sys.path for `app`
    return project


def test_a_plain_session_is_read_and_triaged_into_decision_constraint_and_runbook(
    installed, run_claude
):
    project = notes_app(installed)
    store = str(project / "app" / "store.py")
    script = [
        Turn(
            "I'll run the failing test first.",
            [ToolUse("Bash", {"command": TEST, "description": "Run the test"})],
        ),
        Turn(
            "The database's folder does not exist yet when it connects.",
            [
                ToolUse(
                    "Edit",
                    {
                        "file_path": store,
                        "old_string": "    return sqlite3.connect(path)",
                        "new_string": FIXED_LINE,
                    },
                )
            ],
        ),
        Turn("", [ToolUse("Bash", {"command": TEST, "description": "Rerun the test"})]),
        Turn("`open_db` now creates the database's folder before connecting; the test passes."),
    ]
    run = run_claude(PROMPT, script, cwd=project)
    assert run.returncode == 0, run.explain()
    results = [
        b
        for r in run.api.conversation[-1:]
        for m in r.body["messages"]
        for b in (m["content"] if isinstance(m["content"], list) else [])
        if b.get("type") == "tool_result"
    ]
    assert len(results) == 3 and results[0].get("is_error") and not results[2].get("is_error"), (
        f"the scripted session did not fail, fix and pass: {results}"
    )

    data = data_dir(project, create=False)
    log = "\n".join(run.memcurate_log())
    triages = staging.triage_ids(data)
    assert triages, (
        f"nothing was staged from the transcript Claude Code wrote; memcurate's log:\n{log}"
    )
    # The Stop hooks may split the session's turns over several triages (how far each got depends on the
    # machine's load): a category's evidence is what every triage staged of it.
    staged: dict[str, list[dict]] = {}
    for tid in triages:
        for cat, entry in staging.load_triage(data, tid)["categories"].items():
            if isinstance(entry, dict) and entry.get("snippets"):
                staged.setdefault(cat, []).append(entry)
    missing = {"decision", "constraint", "runbook"} - set(staged)
    assert not missing, (
        f"not staged: {sorted(missing)}; staged {sorted(staged)}; memcurate's log:\n{log}"
    )

    def said(cat: str) -> str:
        return " ".join(s["text"] for e in staged[cat] for s in e["snippets"])

    assert "We use SQLite not Postgres" in said("decision"), staged["decision"]
    assert "never add a server dependency" in said("constraint"), staged["constraint"]
    assert "unable to open database file" in said("runbook"), staged["runbook"]


def test_a_real_pytest_failure_is_counted_by_the_failure_hook(installed, run_claude):
    project = notes_app(installed)
    script = [
        Turn(
            "Running the tests.",
            [ToolUse("Bash", {"command": TEST, "description": "Run the tests"})],
        ),
        Turn("One test fails."),
    ]
    run = run_claude("Run the tests.", script, cwd=project)
    assert run.returncode == 0, run.explain()
    failed = [h for h in run.hooks if h.event == "PostToolUseFailure"]
    assert failed, f"a failing Bash call fired no PostToolUseFailure (hooks: {run.hook_events()})"
    assert "unable to open database file" in failed[0].payload.get("error", ""), failed[0].payload
    counted = [line for line in run.memcurate_log() if " PostToolUseFailure: failure " in line]
    assert counted, (
        "the PostToolUseFailure hook counted nothing (the Stop's transcript pass may have, but not "
        "the hook); memcurate's log:\n" + "\n".join(run.memcurate_log())
    )
    data = data_dir(project, create=False)
    keys = ledger.keys(data)
    assert len(keys) == 1 and ledger.sessions(data, keys[0]) == 1, (
        f"one failing pytest run in one session was counted as {[(k, ledger.sessions(data, k)) for k in keys]}"
    )
    assert "test_open_db" in str(ledger.failure(data, keys[0])), ledger.failure(data, keys[0])
