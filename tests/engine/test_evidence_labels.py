"""bench/check_evidence_labels.py: the evidence bench's ground truth is only as good as this check of it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from conftest import ROOT
from synthetic import Transcript, text, tool

SHARED = ROOT.parent / "shared"
_spec = importlib.util.spec_from_file_location(
    "check_evidence_labels", ROOT / "bench" / "check_evidence_labels.py"
)
check_labels = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_labels)


def _session(tmp_path: Path) -> tuple[Path, list[dict]]:
    """A shared folder with one transcript holding each kind of record, and a correct fact for each."""
    t = Transcript()
    t.user("Use Postgres for the job queue, not Redis: we already back it up nightly.")  # line 1
    # line 2
    t.assistant(
        tool(
            "toolu_q",
            "AskUserQuestion",
            questions=[
                {"question": "Which port?", "options": [{"label": "8080"}, {"label": "9090"}]}
            ],
        )
    )
    t.result("toolu_q", 'Your questions have been answered: "Which port?"="9090".')  # line 3
    t.assistant(tool("toolu_e", "Edit", file_path="app.py"))  # line 4
    # line 5
    t.result(
        "toolu_e",
        "The user doesn't want to proceed with this tool use. The tool use was rejected. "
        "To tell you how to proceed, the user said:\nkeep the config in settings.toml",
        is_error=True,
    )
    # line 6
    t.assistant(text("The flaky test was a   race on the temp dir;\nfixed with a per-test folder."))
    # line 7
    t.records.append(
        {
            "type": "queue-operation",
            "operation": "enqueue",
            "sessionId": t.session,
            "content": "also never push to main directly",
        }
    )
    t.write(tmp_path / "transcripts" / "s.jsonl")
    facts = [
        {
            "id": "s-1",
            "category": "decision",
            "line": 1,
            "record": "user",
            "tool": None,
            "quote": "Use Postgres for the job queue, not Redis",
        },
        {
            "id": "s-2",
            "category": "decision",
            "line": 3,
            "record": "tool_result",
            "tool": "AskUserQuestion",
            "quote": '"Which port?"="9090"',
        },
        {
            "id": "s-3",
            "category": "preference",
            "line": 5,
            "record": "tool_result",
            "tool": "rejection",
            "quote": "keep the config in settings.toml",
        },
        {
            "id": "s-4",
            "category": "runbook",
            "line": 6,
            "record": "assistant",
            "tool": None,
            "quote": "race on the temp dir; fixed with a per-test folder",
        },  # white space runs compare as one space
        {
            "id": "s-5",
            "category": "preference",
            "line": 7,
            "record": "queue",
            "tool": None,
            "quote": "Also never push to main directly",
        },  # case does not matter
    ]
    for f in facts:
        f["statement"] = "a fact"
    return tmp_path, facts


def _labels(facts: list[dict], **session) -> dict:
    return {
        "version": 1,
        "sessions": [
            {
                "transcript": "transcripts/s.jsonl",
                "split": "tune",
                "project": "an app",
                "facts": facts,
                **session,
            }
        ],
    }


def test_correct_labels_of_every_record_kind_pass(tmp_path):
    shared, facts = _session(tmp_path)
    failures, counts = check_labels.check(_labels(facts), str(shared))
    assert failures == []
    assert counts["facts"] == 5


@pytest.mark.parametrize(
    "change, complaint",
    [
        ({"line": 2}, "holds no user text"),  # off by one: the next record
        ({"quote": "Use MySQL for the job queue"}, "quote not in the user text of line 1"),
        ({"record": "assistant"}, "holds no assistant text"),
        ({"category": "idea"}, "category 'idea'"),
        ({"quote": "Use Postgres"}, "not 20 to 120"),  # in the text, but too short to be unique
        ({"line": 99}, "not a JSON record"),
    ],
)
def test_a_wrong_label_is_reported(tmp_path, change, complaint):
    shared, facts = _session(tmp_path)
    facts[0].update(change)
    failures, _ = check_labels.check(_labels(facts), str(shared))
    assert len(failures) == 1 and complaint in failures[0] and "s-1" in failures[0]


def test_the_tool_of_a_tool_record_is_checked(tmp_path):
    shared, facts = _session(tmp_path)
    facts[1]["tool"] = "ExitPlanMode"  # the answer came from AskUserQuestion
    facts[2]["tool"] = "Edit"  # a rejection is labelled as such, not by the rejected tool
    facts[4]["tool"] = "rejection"  # a queued prompt names no tool
    failures, _ = check_labels.check(_labels(facts), str(shared))
    assert [f.split(": ")[1] for f in failures] == ["s-2", "s-3", "s-5"]


def test_duplicate_ids_bad_split_and_secrets_are_reported(tmp_path):
    shared, facts = _session(tmp_path)
    facts[1]["id"] = "s-1"
    facts[3]["quote"] = "token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    failures, _ = check_labels.check(_labels(facts, split="train"), str(shared), _secret_finder())
    joined = "\n".join(failures)
    assert "'s-1' missing or not unique" in joined
    assert "split 'train'" in joined
    assert "s-4: quote holds a secret" in joined


def test_main_exits_1_on_a_failure(tmp_path, capsys):
    shared, facts = _session(tmp_path)
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(_labels(facts)))
    assert check_labels.main([str(path), "--shared", str(shared)]) == 0
    facts[0]["line"] = 2
    path.write_text(json.dumps(_labels(facts)))
    assert check_labels.main([str(path), "--shared", str(shared)]) == 1
    assert "s-1" in capsys.readouterr().out


def _secret_finder():
    from memcurate.curator.util.redact import find_secrets

    return find_secrets


@pytest.mark.skipif(
    not (SHARED / "transcripts").is_dir() or not (SHARED / "transcripts-more").is_dir(),
    reason=f"real transcripts not found under {SHARED} (they sit beside the checkout in CI)",
)
def test_the_committed_labels_match_their_transcripts(capsys):
    assert check_labels.main(["--shared", str(SHARED)]) == 0, capsys.readouterr().out
