"""The calibration bench (bench/calibration_bench.py): labelled drafts through the real confidence path.

Its figures (keep rate at the gate, AUC of keep vs delete) are what a person reads to trust `--auto-approve`;
they must come from the reviewer's labels, and labels that do not check out against their transcripts (a
cited line that holds nothing, a label that is not keep / edit / delete) must be refused, not measured.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import needs_shared

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import calibration_bench as cb  # noqa: E402

SHARED = cb.SHARED


def labels_copy(tmp_path: Path, change=None) -> Path:
    doc = json.loads(cb.LABELS.read_text(encoding="utf-8"))
    if change:
        change(doc)
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@needs_shared
def test_every_labelled_draft_cites_lines_that_hold_digest_entries():
    sessions = cb.load_labels(cb.LABELS)
    assert cb.problems(sessions) == []
    drafts = [d for s in sessions for d in s["drafts"]]
    assert len(drafts) >= 80 and {s["split"] for s in sessions} == set(cb.SPLITS)
    assert {d["label"] for d in drafts} == set(cb.LABEL_VALUES)


@needs_shared
def test_quick_mode_runs_and_its_figures_are_computed_from_the_labels(tmp_path, capsys):
    out = tmp_path / "calibration.json"
    assert cb.main(["--quick", "--json-out", str(out)]) == 0
    result = json.loads(out.read_text())
    printed = capsys.readouterr().out
    assert "keep rate at the gate" in printed and "AUC keep vs delete" in printed
    assert set(result["splits"]) == set(cb.SPLITS) and result["gate"] == 0.8
    for split, figures in result["splits"].items():
        rows = [r for r in result["drafts"] if r["split"] == split]
        after = figures["after"]
        assert after["drafts"] == len(rows) and after["keep"] == sum(
            r["label"] == "keep" for r in rows
        )
        through = [r for r in rows if r["after"] >= result["gate"]]
        assert after["through_gate"] == len(through)
        assert after["keep_rate"] == (
            round(sum(r["label"] == "keep" for r in through) / len(through), 3) if through else None
        )
        assert after["auc_keep_delete"] == cb.auc(
            [r["after"] for r in rows if r["label"] == "keep"],
            [r["after"] for r in rows if r["label"] == "delete"],
        )

    # the same drafts labelled otherwise give other figures: every draft kept, nothing to rank against
    def keep_all(doc):
        for s in doc["sessions"]:
            for d in s["drafts"]:
                d["label"] = "keep"

    other = tmp_path / "other.json"
    assert (
        cb.main(
            ["--quick", "--labels", str(labels_copy(tmp_path, keep_all)), "--json-out", str(other)]
        )
        == 0
    )
    for figures in json.loads(other.read_text())["splits"].values():
        assert (
            figures["after"]["keep_rate"] in (1.0, None)
            and figures["after"]["auc_keep_delete"] is None
        )


def test_auc_counts_ties_half_and_needs_both_sides():
    assert (
        cb.auc([0.9, 0.8], [0.1]) == 1.0
        and cb.auc([0.5], [0.5]) == 0.5
        and cb.auc([0.2], [0.9, 0.1]) == 0.5
    )
    assert cb.auc([], [0.3]) is None


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda doc: doc["sessions"][0]["drafts"][0].update(label="maybe"), "needs a label of"),
        (lambda doc: doc["sessions"][0]["drafts"][0].update(cites=[]), "cites must be"),
        (
            lambda doc: doc["sessions"][0]["drafts"][0]["answer"].update(confidence=1.5),
            "confidence must be",
        ),
        (
            lambda doc: doc["sessions"][0]["drafts"][1].update(
                id=doc["sessions"][0]["drafts"][0]["id"]
            ),
            "an id of its own",
        ),
        (lambda doc: doc.update(version=2), "not a calibration labels file"),
    ],
)
def test_a_label_file_not_in_the_format_is_refused(tmp_path, capsys, change, says):
    assert (
        cb.main(
            ["--labels", str(labels_copy(tmp_path, change)), "--json-out", str(tmp_path / "r.json")]
        )
        == 2
    )
    assert says in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


@needs_shared
@pytest.mark.parametrize(
    "line, says", [(10**6, "past the transcript's"), (2, "holds no digest entry")]
)
def test_a_label_citing_a_line_that_holds_nothing_is_refused(tmp_path, capsys, line, says):
    def cite(doc):
        doc["sessions"][0]["drafts"][0]["cites"] = [line]

    first = json.loads(cb.LABELS.read_text())["sessions"][0]
    # the session's line 2 is no entry
    assert not cb._digest(SHARED / first["transcript"]).at_line(2)
    assert cb.main(["--check", "--labels", str(labels_copy(tmp_path, cite))]) == 2
    err = capsys.readouterr().err
    assert first["drafts"][0]["id"] in err and says in err
