"""`--auto-approve` saves only what it is sure of: drafts at or above auto_approve.min_confidence are saved,
the rest stay `ready` for review, listed under "unsure" with their confidence and what pulled it down.
`--min-confidence` overrides the gate for one run; a bad value is refused; a second run saves nothing new.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import needs_shared, run_cli, shared_config_env, shared_transcripts
from test_engine import make_engine, stage, tree

from memcurate.curator import config
from memcurate.curator.candidates import staging
from memcurate.curator.drafting.offline import OfflineDrafter
from memcurate.curator.headless import auto_approve

WEAK = [
    "Rationale: no reason stated in the session",
    "title: no statement of the fact, made from the topic",
]


class Weakened:
    """The offline drafter, whose drafts of the categories in `weak` say what makes them weak (as a drafter
    that lists weaknesses instead of writing filler does)."""

    name = "weakened"
    reason = "test"

    def __init__(self, weak: set[str]) -> None:
        self.weak, self.inner = weak, OfflineDrafter()

    def draft(self, request):
        result = self.inner.draft(request)
        if request.category in self.weak:
            result.weak = list(WEAK)
        return result


def states(engine, tid: str) -> dict[str, str]:
    return {c: r["state"] for c, r in staging.category_states(engine.data, tid).items()}


def test_drafts_below_the_gate_stay_ready_and_are_listed_with_why_and_a_second_run_saves_nothing_new(
    project, tmp_path
):
    engine = make_engine(project, tmp_path, drafter=Weakened({"decision", "tech_debt"}))
    (tid,) = stage(engine)
    summary = auto_approve(engine)
    gate = engine.cfg["auto_approve"]["min_confidence"]
    assert summary["min_confidence"] == gate
    saved = {c["category"] for c in summary["created"]}
    assert saved == {"constraint", "preference", "session_summary"}
    assert all(c["confidence"] >= gate for c in summary["created"])
    unsure = {u["category"]: u for u in summary["unsure"]}
    # the demo's runbook verifies with "All 10 tests pass now" and no command: held for that, by itself
    assert set(unsure) == {"decision", "tech_debt", "runbook"}
    for cat, u in unsure.items():
        review = engine.review(tid, cat)
        assert u["triage"] == tid and u["title"] == review["title"] and u["title"]
        assert u["confidence"] == review["confidence"]["value"] < gate
        assert all(f["effect"] < 0 for f in u["why"])
        if cat != "runbook":
            assert [
                f["why"] for f in u["why"] if f["name"] == "weak"
            ] == WEAK  # what pulled it down, and why
    assert any("verification-bare" in f["why"] for f in unsure["runbook"]["why"])
    assert states(engine, tid) == {
        "decision": "ready",
        "tech_debt": "ready",
        "runbook": "ready",
        **{c: "saved" for c in saved},
    }
    assert not summary["failed"] and not summary["blocked"] and not summary["held"]

    before = tree(tmp_path / "memory")
    again = auto_approve(engine)
    assert all(not again[k] for k in ("created", "updated", "noop", "deleted", "failed"))
    assert {u["category"] for u in again["unsure"]} == {
        "decision",
        "tech_debt",
        "runbook",
    }  # still held, still said
    assert tree(tmp_path / "memory") == before
    assert states(engine, tid)["decision"] == "ready"


def test_min_confidence_overrides_the_gate_for_one_run(project, tmp_path):
    engine = make_engine(project, tmp_path, drafter=Weakened({"decision"}))
    (tid,) = stage(engine)
    everything_held = auto_approve(engine, min_confidence=1.0)
    assert not everything_held["created"] and len(everything_held["unsure"]) == 6
    assert auto_approve(engine)["created"]  # the config's gate again: the sure ones are saved
    assert states(engine, tid)["decision"] == "ready"
    last = auto_approve(engine, min_confidence=0.0)
    assert (
        sorted(c["category"] for c in last["created"]) == ["decision", "runbook"]
        and not last["unsure"]
    )


def test_a_persons_edit_is_no_longer_marked_down_for_what_the_drafter_said_of_its_own_text(
    project, tmp_path
):
    engine = make_engine(project, tmp_path, drafter=Weakened({"decision"}))
    (tid,) = stage(engine)
    engine.process(tid)
    drafted = engine.review(tid, "decision")
    assert [f for f in drafted["confidence"]["factors"] if f["name"] == "weak"]
    record = engine.edit(
        tid,
        "decision",
        drafted["text"].replace("## Rationale\n", "## Rationale\nSessions need a table. "),
    )
    assert not [f for f in record["confidence"]["factors"] if f["name"] == "weak"]
    assert record["confidence"]["value"] > drafted["confidence"]["value"]
    # deciding again from the drafter's text counts them again
    assert [
        f for f in engine.redecide(tid, "decision")["confidence"]["factors"] if f["name"] == "weak"
    ]


@pytest.mark.parametrize("value", ["1.5", "-0.1", ".nan", "'high'"])
def test_a_gate_outside_0_to_1_in_the_config_is_an_error_naming_the_key(project, value):
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text(
        f"auto_approve:\n  min_confidence: {value}\n"
    )
    with pytest.raises(config.ConfigError, match="auto_approve.min_confidence"):
        config.load(project)


@pytest.mark.parametrize(
    "args, said",
    [
        (["--auto-approve", "--min-confidence", "2"], "expected a number from 0 to 1"),
        (["--auto-approve", "--min-confidence", "sure"], "expected a number from 0 to 1"),
        (["--auto-approve", "--min-confidence", "nan"], "expected a number from 0 to 1"),
        (["--min-confidence", "0.5"], "--min-confidence goes with --auto-approve"),
        (["status", "--min-confidence", "0.5"], "unrecognized arguments"),
    ],
)
def test_an_invalid_min_confidence_is_a_usage_error(project, args, said):
    p = run_cli(*args, cwd=project)
    assert p.returncode == 2 and said in p.stderr and "Traceback" not in p.stderr
    assert not (project / ".memcurate" / "staging").exists() or not staging.triage_ids(
        str(project / ".memcurate")
    )


def test_the_text_summary_lists_each_unsure_draft_with_its_confidence_and_why(project, tmp_path):
    engine = make_engine(project, tmp_path)
    engine.close()
    stage(make_engine(project, tmp_path))
    p = run_cli("--auto-approve", "--min-confidence", "1", cwd=project)
    assert p.returncode == 0, p.stderr
    assert "gate      saves drafts with confidence ≥ 1.00" in p.stdout
    assert "unsure    6  (below the confidence gate: review them in the TUI)" in p.stdout
    doc = json.loads(
        run_cli("--auto-approve", "--json", "--min-confidence", "1", cwd=project).stdout
    )
    for u in doc["unsure"]:
        assert f"/{u['category']}  {u['confidence']:.2f}  " in p.stdout
    status = json.loads(run_cli("status", "--json", cwd=project).stdout)
    assert {(d["category"], d["confidence"]) for d in status["drafts"]} == {
        (u["category"], u["confidence"]) for u in doc["unsure"]
    }


@needs_shared
def test_on_the_real_transcripts_the_gate_saves_some_holds_some_and_a_second_run_saves_nothing_new(
    project, tmp_path
):
    memory = tmp_path / "memory"
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {memory}\n"
    )
    env = shared_config_env(tmp_path)
    paths = [str(p) for p in shared_transcripts()]
    assert run_cli("triage", *paths, cwd=project, env=env).returncode == 0
    p = run_cli("--auto-approve", "--json", cwd=project, env=env)
    assert p.returncode == 0, p.stderr
    first = json.loads(p.stdout)
    saved = first["created"] + first["updated"] + first["noop"]
    gate = first["min_confidence"]
    assert saved and first["unsure"], (len(saved), len(first["unsure"]))
    assert all(s["confidence"] >= gate for s in saved)
    for u in first["unsure"]:
        assert u["confidence"] < gate and u["title"] and u["why"]
    files = sorted(memory.rglob("*.md"))
    before = {f: f.read_bytes() for f in files}
    again = json.loads(run_cli("--auto-approve", "--json", cwd=project, env=env).stdout)
    assert not again["created"] and not again["updated"]
    assert {(u["triage"], u["category"]) for u in again["unsure"]} == {
        (u["triage"], u["category"]) for u in first["unsure"]
    }
    assert {f: f.read_bytes() for f in sorted(memory.rglob("*.md"))} == before
    held = Path(project / ".memcurate")
    assert all(
        staging.category_states(str(held), u["triage"])[u["category"]]["state"] == "ready"
        for u in first["unsure"]
    )
