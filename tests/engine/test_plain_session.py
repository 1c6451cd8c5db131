"""A plain real session is captured (issue 24, "a real session captured nothing but its summary").

The user said "We use SQLite not Postgres because it's a single-machine tool; never add a server
dependency. Please fix the failing test."; the assistant ran the failing test, fixed it and reran it. The
Stop hook logged "no-trigger" for all of it. Built here in the shapes Claude Code 2.1.328 writes
(tests/data/claude_2_1_328_writes.jsonl: a prompt as a plain string, a failed Bash call as an `is_error`
result whose `toolUseResult` is the "Error: Exit code 1 …" string), and captured through the hook's own
`capture(...)` at the Stop: the decision and the constraint trigger from keyword triage, the fail → fix →
rerun is a runbook, and the offline backend drafts an evidence card for each.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from synthetic import Transcript, text, tool
from test_drafting import default_cfg
from test_engine import make_engine

from memcurate.curator.candidates import staging
from memcurate.curator.candidates.incremental import capture

SESSION = "8be629f7-48a5-4c3b-9180-d13012619beb"
CWD = "/home/dev/notes-app"
PROMPT = (
    "We use SQLite not Postgres because it's a single-machine tool; never add a server dependency. "
    "Please fix the failing test."
)
TEST = "python -m pytest -q tests/test_store.py"
FAILED = """Exit code 1
F..                                                                      [100%]
=================================== FAILURES ===================================
_________________________________ test_open_db _________________________________

    def test_open_db(tmp_path):
>       db = open_db(tmp_path / "data" / "notes.db")
E       sqlite3.OperationalError: unable to open database file

tests/test_store.py:8: OperationalError
=========================== short test summary info ============================
FAILED tests/test_store.py::test_open_db - sqlite3.OperationalError: unable to open database file
1 failed, 2 passed in 0.05s"""
PASSED = "...                                                                      [100%]\n3 passed in 0.04s"


class Claude2128(Transcript):
    """Records as Claude Code 2.1.328 writes them: its version, prompt ids, and a failed tool's result."""

    def _base(self, rtype: str) -> dict:
        r = super()._base(rtype)
        r.update(version="2.1.328", cwd=CWD, entrypoint="cli", gitBranch="main")
        if rtype == "user":
            r["promptId"] = "9856cd3a-4ed7-4a95-ad53-5e68b7c67e33"
        return r

    def failed(self, tool_use_id: str, content: str) -> Claude2128:
        r = self._base("user")
        r["message"] = {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "content": content,
                    "is_error": True,
                    "tool_use_id": tool_use_id,
                }
            ],
        }
        r["toolUseResult"] = f"Error: {content}"
        self.records.append(r)
        return self


def plain_session() -> Claude2128:
    t = Claude2128(session=SESSION, stamp="2026-11-27T13:25")
    t.user(PROMPT)
    t.assistant(
        text("I'll run the failing test first."),
        tool("toolu_01", "Bash", command=TEST, description="Run the failing test"),
    )
    t.failed("toolu_01", FAILED)
    t.assistant(tool("toolu_02", "Read", file_path=f"{CWD}/app/store.py"))
    t.result(
        "toolu_02",
        "1\timport sqlite3\n2\n3\tdef open_db(path):\n4\t    return sqlite3.connect(path)\n",
    )
    t.assistant(
        text("The database's folder does not exist yet when it connects."),
        tool(
            "toolu_03",
            "Edit",
            file_path=f"{CWD}/app/store.py",
            replace_all=False,
            old_string="    return sqlite3.connect(path)",
            new_string="    path.parent.mkdir(parents=True, exist_ok=True)\n    return sqlite3.connect(path)",
        ),
    )
    t.result("toolu_03", f"The file {CWD}/app/store.py has been updated successfully.")
    t.assistant(tool("toolu_04", "Bash", command=TEST, description="Rerun the test"))
    t.result("toolu_04", PASSED)
    t.assistant(
        text("`open_db` now creates the database's folder before connecting; the test passes.")
    )
    return t


@pytest.fixture
def staged(project: Path, tmp_path: Path):
    """The session captured at its Stop, as the Stop hook does, by an engine drafting offline."""
    engine = make_engine(project, tmp_path)
    path = plain_session().write(tmp_path / "claude" / f"{SESSION}.jsonl")
    report = capture(engine.data, engine.cfg, str(path), event="Stop")
    yield engine, report
    engine.close()


def test_the_stop_stages_the_decision_the_constraint_and_the_runbook(staged):
    engine, report = staged
    assert report["status"] == "staged", report
    triggered = {c["category"] for c in report["categories"] if c["triggered"]}
    assert {"decision", "constraint", "runbook"} <= triggered, report["categories"]

    entries = staging.load_triage(engine.data, report["triage"])["categories"]
    said = " ".join(s["text"] for s in entries["decision"]["snippets"])
    assert "We use SQLite not Postgres because" in said
    said = " ".join(s["text"] for s in entries["constraint"]["snippets"])
    assert "never add a server dependency" in said
    (fix,) = [s for s in entries["runbook"]["snippets"] if s["speaker"] == "tool"]
    assert "unable to open database file" in fix["text"] and fix["keywords"] == ["error-fix"]


def test_offline_drafting_makes_an_evidence_card_of_each(staged):
    engine, report = staged
    tid = report["triage"]
    states = engine.process(tid)
    assert states["decision"] == states["runbook"] == "ready", states
    # The offline drafter quotes the user's whole sentence for both, so the constraint may be folded into the
    # decision as the same fact (curator/candidates/same_fact.py): its card is drafted all the same.
    assert states["constraint"] in ("ready", "skipped"), states
    for cat in ("decision", "constraint", "runbook"):
        assert engine.review(tid, cat)["card"] is True, cat
    assert "We use SQLite not Postgres" in engine.review(tid, "decision")["text"]
    assert "never add a server dependency" in engine.review(tid, "constraint")["text"]
    runbook = engine.review(tid, "runbook")["text"]
    assert "unable to open database file" in runbook  # the symptom, from the failing run
    # the fix, from the assistant's words
    assert "creates the database's folder before connecting" in runbook


def runbook_score(tmp_path: Path, name: str, *, edit: bool) -> dict:
    t = Claude2128(session=SESSION, stamp="2026-11-27T13:25")
    t.user("Run the tests.")
    t.assistant(tool("toolu_01", "Bash", command=TEST))
    t.failed("toolu_01", FAILED)
    if edit:
        t.assistant(
            tool(
                "toolu_02", "Edit", file_path=f"{CWD}/app/store.py", old_string="a", new_string="b"
            )
        )
        t.result("toolu_02", f"The file {CWD}/app/store.py has been updated successfully.")
    t.assistant(tool("toolu_03", "Bash", command=TEST))
    t.result("toolu_03", PASSED)
    path = t.write(tmp_path / name / f"{SESSION}.jsonl")
    report = capture(str(tmp_path / name / "data"), default_cfg(), str(path), event="Stop")
    return next(c for c in report["categories"] if c["category"] == "runbook")


def test_a_failing_run_fixed_by_an_edit_is_a_runbook_and_a_plain_retry_is_not(tmp_path):
    """Fail → edit → rerun passes triggers alone; the same rerun with nothing edited (a flake) weighs half."""
    fixed = runbook_score(tmp_path, "fixed", edit=True)
    retried = runbook_score(tmp_path, "retried", edit=False)
    assert fixed["triggered"], fixed
    assert 0 < retried["score"] < fixed["score"] and not retried["triggered"], retried
