"""A failure and its fix read by two passes (curator/capture/triage.py, Triage.open_state): a Stop hook
reads each turn apart, so the commonest runbook (the tests fail; "fix it"; an edit, and they pass) has its
failure in one pass and its fix in the next. Claude Code may also not have flushed a call's result when the
Stop hook runs: the call is in one pass, its result in the next. Either way it is one runbook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic import Transcript, pytest_failure, text, tool

from memcurate.curator import config
from memcurate.curator.candidates import staging
from memcurate.curator.candidates.cards import evidence
from memcurate.curator.candidates.incremental import capture, offset_state_path

TEST = "pytest tests/test_store.py"
ERROR = "FileNotFoundError: [Errno 2] No such file or directory"


def fail_then_fix() -> Transcript:
    t = Transcript()
    t.user("run the tests please")
    t.assistant(text("Running the suite."), tool("t1", "Bash", command=TEST))
    t.result("t1", pytest_failure(1), is_error=True)
    t.assistant(text("The store's folder does not exist yet."))
    t.user("fix it")
    t.assistant(
        tool("t2", "Edit", file_path="/home/dev/app/app/store.py", old_string="a", new_string="b")
    )
    t.result("t2", "ok")
    t.assistant(tool("t3", "Bash", command=TEST))
    t.result("t3", "12 passed")
    t.assistant(text("`save` now creates the folder before writing; the test passes."))
    return t


@pytest.fixture
def setup(tmp_path: Path):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    data = tmp_path / "data"
    data.mkdir()
    return data, config.load(project, data), tmp_path / "t.jsonl"


def runbooks(data: Path) -> list[dict]:
    found = []
    for tid in staging.triage_ids(str(data)):
        doc = staging.load_triage(str(data), tid)
        entry = doc["categories"]["runbook"]
        if entry.get("triggered"):
            found.append(doc)
    return found


@pytest.mark.parametrize("cut", range(1, len(fail_then_fix().records)))
def test_a_failure_fixed_in_a_later_pass_is_one_runbook_with_its_pair(setup, cut):
    """Cut after every record: the first pass reads up to the cut, the second the rest. Whichever pass
    reads the fix stages one runbook, quoting the error, and its card pairs the failing command with
    the edit and the run that passed."""
    data, cfg, path = setup
    lines = fail_then_fix().lines()
    path.write_bytes(b"".join(lines[:cut]))
    capture(str(data), cfg, str(path), event="Stop")
    path.write_bytes(b"".join(lines))
    capture(str(data), cfg, str(path), event="Stop")

    found = runbooks(data)
    assert len(found) == 1, f"runbooks staged: {len(found)}"
    doc = found[0]
    entry = doc["categories"]["runbook"]
    assert any(ERROR in s["text"] for s in entry["snippets"]), entry["snippets"]
    card = evidence(entry, "runbook", doc["source"], cfg)
    assert [p["fix"] for p in card["pairs"]] == [f"by: Edit app/store.py; passed: {TEST}"], card


def test_what_a_pass_leaves_open_is_small(setup):
    """The offset state is written after every turn: what it carries is bounded, however many calls go
    unanswered and runs keep failing."""
    data, cfg, path = setup
    t = Transcript()
    t.user("run everything")
    for i in range(300):
        t.assistant(tool(f"c{i}", "Bash", command=f"make target{i}"))
        t.result(f"c{i}", f"make: *** [target{i}] Error {i}", is_error=True)
    for i in range(300):
        t.assistant(tool(f"u{i}", "Bash", command=f"make other{i}"))
    t.write(path)
    capture(str(data), cfg, str(path), event="Stop")
    state = json.loads(Path(offset_state_path(str(data), str(path))).read_text())
    carried = state["open"]
    assert len(carried["calls"]) <= 50 and len(carried["pending"]) <= 20
    assert len(json.dumps(carried)) < 20_000


FORGED = [
    "nonsense",
    {"edits": "many", "calls": {"x": 1}, "pending": "x", "failing": [[1, 2]], "fix_words": 5},
    {"calls": [["t3", "Bash", "sig", "cmd", -1]], "pending": [["Bash", "s", True, "x", 0, 0]]},
    {"pending": [["Bash", "pytest tests/test_store.py", 1, "x" * 10**6, 0, 0]]},
    {"fix_words": [[1, 0, "AKIA" + "Z" * 16 + " is the key that fixed it"]]},
]


@pytest.mark.parametrize("forged", FORGED, ids=range(len(FORGED)))
def test_a_forged_open_state_is_dropped_or_bounded(setup, forged):
    """The offset state is in the data dir, in Claude's reach: an open state of the wrong shape is
    dropped, one of the right shape has its text bounded and redacted again, and the pass goes on."""
    data, cfg, path = setup
    lines = fail_then_fix().lines()
    path.write_bytes(b"".join(lines[:4]))
    capture(str(data), cfg, str(path), event="Stop")
    state_path = Path(offset_state_path(str(data), str(path)))
    state = json.loads(state_path.read_text())
    state["open"] = forged
    state_path.write_text(json.dumps(state))
    path.write_bytes(b"".join(lines))
    report = capture(str(data), cfg, str(path), event="Stop")
    assert report["status"] in ("staged", "no-trigger")
    for doc in runbooks(data):
        for s in doc["categories"]["runbook"]["snippets"]:
            assert "AKIA" not in s["text"] and len(s["text"]) < 2000
    after = json.loads(state_path.read_text())["open"]
    assert len(json.dumps(after)) < 20_000
