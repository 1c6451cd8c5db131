"""The triage counts the failures a transcript shows (source `transcript`), with what fixed them: the
same command passing later, the files edited in between, what the assistant said; the hook's count
of the same session is completed, never doubled; and recording never fails a capture."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import needs_shared, shared_transcripts
from synthetic import Transcript, text, tool
from test_failure_hook import RUNS, SESSIONS, failed, run

from memcurate.curator import config
from memcurate.curator.candidates.incremental import capture
from memcurate.curator.rules import candidates, ledger

SAID = (
    "The test fails because the cache folder does not exist. I'll create it in Store.save before "
    "writing. Then the save works."
)


def session(project: Path, sid: str, output: str, *, fixed: bool = True) -> Path:
    t = Transcript(session=sid)
    t.user("Please run the tests and fix what fails in the store")
    t.assistant(tool("t1", "Bash", command="uv run pytest -x"))
    t.result("t1", "Exit code 1\n" + output, is_error=True)
    if fixed:
        t.assistant(
            text("Let me look at the store. " + SAID),
            tool(
                "t2",
                "Edit",
                file_path=str(project / "app" / "store.py"),
                old_string="a",
                new_string="b",
            ),
        )
        t.result("t2", "The file has been updated.")
        t.assistant(tool("t3", "Bash", command="uv run pytest -x"))
        t.result("t3", "12 passed in 0.31s")
    return t.write(project / "transcripts" / f"{sid}.jsonl")


def triage(project: Path, path: Path, sid: str = "") -> dict:
    data = project / ".memcurate"
    data.mkdir(exist_ok=True)
    return capture(
        str(data), config.load(project, str(data)), str(path), event="Stop", session_id=sid
    )


def data(project: Path) -> str:
    return str(project / ".memcurate")


def test_a_failure_and_its_fix_are_counted_from_the_transcript(project):
    path = session(project, SESSIONS[0], RUNS[0])
    report = triage(project, path)
    keys = ledger.keys(data(project))
    assert len(keys) == 1
    (occ,) = ledger.occurrences(data(project), keys[0])
    assert (
        occ["source"] == "transcript"
        and occ["session"] == SESSIONS[0]
        and occ["transcript"] == str(path)
    )
    assert (
        occ["at"].startswith("2025-07-14T22:59:")
        and occ["at"].endswith("Z")
        and len(occ["at"]) == 20
    )
    assert occ["command"] == "uv run pytest -x" and "FileNotFoundError" in occ["error"]
    assert occ["fix"] == {
        "text": "The test fails because the cache folder does not exist. I'll create it in "
        "Store.save before writing.",
        "files": ["app/store.py"],
        "command": "uv run pytest -x",
    }
    assert any("failures counted toward rules: 1, 1 with their fix" in n for n in report["notes"])
    triage(project, path)  # nothing new: nothing counted again
    assert ledger.sessions(data(project), keys[0]) == 1


def test_three_transcripts_give_one_candidate_with_its_evidence(project):
    for sid, output in zip(SESSIONS, RUNS):
        report = triage(project, session(project, sid, output, fixed=sid != SESSIONS[1]))
    assert any("staged rule/" in n for n in report["notes"])
    (c,) = candidates.all(data(project))
    assert c.sessions == 3 and [bool(o["fix"]) for o in c.occurrences] == [True, False, True]


def test_an_unfixed_failure_has_no_fix(project):
    triage(project, session(project, SESSIONS[0], RUNS[0], fixed=False))
    (occ,) = ledger.occurrences(data(project), ledger.keys(data(project))[0])
    assert occ["fix"] is None


def test_the_hooks_count_of_the_session_gains_the_fix_and_is_not_doubled(project):
    run(project, failed(SESSIONS[0], RUNS[0]))
    key = ledger.keys(data(project))[0]
    assert ledger.occurrences(data(project), key)[0]["fix"] is None
    triage(project, session(project, SESSIONS[0], RUNS[0]))
    (occ,) = ledger.occurrences(data(project), key)
    assert occ["source"] == "hook" and occ["fix"]["files"] == ["app/store.py"]


def test_recording_never_fails_a_capture(project):
    (project / ".memcurate").mkdir()
    (project / ".memcurate" / "failures").write_text("not a folder")
    report = triage(project, session(project, SESSIONS[0], RUNS[0]))
    assert report["status"] in ("staged", "no-trigger")
    assert any(n.startswith("failures not counted toward rules") for n in report["notes"])


def test_rules_disabled_counts_nothing_from_transcripts(project):
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text("rules:\n  enabled: false\n")
    triage(project, session(project, SESSIONS[0], RUNS[0]))
    assert ledger.keys(data(project)) == []


REAL = "transcripts/-Users-dain-workspace-claude-code-log-sample/37f83ec9-f2ea-42a9-925e-0d5c105cb6e8.jsonl"


@needs_shared
def test_a_real_transcript_gives_a_pytest_failure_and_what_fixed_it(project):
    path = next((p for p in shared_transcripts() if p.name == Path(REAL).name), None)
    if path is None:
        pytest.skip(f"{REAL} not among the shared transcripts")
    triage(project, path)
    found = []
    for key in ledger.keys(data(project)):
        f = ledger.failure(data(project), key)
        for occ in ledger.occurrences(data(project), key):
            found.append((f, occ))
    pytest_fixed = [(f, o) for f, o in found if f["tool"] == "pytest" and o["fix"]]
    assert pytest_fixed, [f["signature"] for f, _ in found]
    f, occ = pytest_fixed[0]
    assert f["kind"] == "test" and "::" in f["test"]
    assert occ["fix"]["text"] and occ["fix"]["command"]
    for _f, o in found:  # capped
        assert len(o["command"]) <= 300 and len(o["error"]) <= 600


def test_each_message_of_the_assistant_ends_a_sentence_and_narration_is_left_out():
    """Joined with a space, "…imports:" and "Now let me build again:" read as one sentence, and the
    rule quoted the narration after the fix."""
    from memcurate.curator.rules.transcript_failures import fix_of

    said = [
        "I see the issue. I need to remove the duplicated function in plugins.go:",
        "Now let me build again:",
        "It looks like there are some interface mismatches:",
        "Perfect! The build passes.",
    ]
    fix = fix_of({"fix": {"said": said, "files": [], "command": "go build ./..."}}, "/p")
    assert (
        fix["text"] == "I need to remove the duplicated function in plugins.go. The build passes."
    )


def test_replies_once_every_run_is_fixed_do_not_walk_the_runs(project):
    """A long pass whose failures were all fixed early (the 100 MB first call): each later reply and
    edit has no failing run to note, and pays nothing per run kept."""
    from memcurate.curator.capture.transcript import Entry, ToolUse, TranscriptReader
    from memcurate.curator.capture.triage import Rules, Triage

    path = session(project, SESSIONS[0], RUNS[0])
    t = Triage(Rules(config.load(project, data(project))), path=str(path))
    for e in TranscriptReader(path):
        t.add(e)
    assert t.failed_runs and all(run["fix"] for run in t.failed_runs)

    class Unwalked(list):
        def __iter__(self):
            raise AssertionError("the failed runs were walked")

    t.failed_runs = Unwalked(t.failed_runs)
    reply = Entry("assistant", 2, 0, 1, text="All green now, the store saves again.")
    edit = Entry("assistant", 2, 1, 2)
    edit.tool_uses = [ToolUse("t9", "Edit", str(project / "app" / "store.py"))]
    for e in (reply, edit) * 3:
        t.add(e)
