"""Offline drafts are evidence cards (issue 23 §5): a rule-based drafter cannot state facts.

An offline draft is a card until a person writes it: its review says `card: true` and carries an
ADVISORY saying so; --auto-approve holds every unedited card (with why) unless the person sets
`auto_approve.offline_cards: true`; a card comes with its evidence (the suggested category, the
session lines, a runbook's error → fix), redacted. The demo, which runs offline, says all this.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import run_cli
from test_engine import make_engine, stage

from memcurate.curator.candidates import cards, staging
from memcurate.curator.demo import OFFLINE_CARDS
from memcurate.curator.engine import Engine
from memcurate.curator.headless import auto_approve, exit_status

CATEGORIES = {"decision", "constraint", "runbook", "tech_debt", "preference", "session_summary"}
HELD = "offline card, write it in the TUI or set auto_approve.offline_cards: true"


@pytest.fixture
def default_user(isolated_home) -> Path:
    """The user's config without the suite's opt-in to saving cards: the default, as a person has it."""
    path = isolated_home / ".config" / "memcurate" / "config.yaml"
    path.write_text("hygiene:\n  interval_minutes: 0\n")
    return path


def drafted(project: Path, tmp_path: Path):
    engine = make_engine(project, tmp_path)
    (tid,) = stage(engine)
    assert set(engine.process(tid).values()) == {"ready"}
    return engine, tid


def memory_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.md") if p.name != "MEMORY.md"] if root.exists() else []


def rewritten(text: str) -> str:
    """A person's edit: the first body line said in other words."""
    head, sep, body = text.partition("\n---\n")
    lines = body.split("\n")
    first = next(i for i, line in enumerate(lines) if line and not line.startswith("#"))
    lines[first] = (
        "Access tokens are JWTs, HS256, valid 15 minutes; any API instance verifies them alone."
    )
    return head + sep + "\n".join(lines)


def test_an_offline_draft_is_a_card_marked_for_a_person_until_the_person_rewrites_it(
    project, tmp_path
):
    engine, tid = drafted(project, tmp_path)
    for cat in CATEGORIES:
        review = engine.review(tid, cat)
        assert review["card"] is True
        (issue,) = [i for i in review["issues"] if i["code"] == cards.CARD]
        assert issue["severity"] == "ADVISORY" and "your own words" in issue["message"]
        assert not review["blocked"]  # a valid memory file: a person can approve it as it is

    # saved unchanged: still the card
    same = engine.edit(tid, "decision", engine.review(tid, "decision")["text"])
    assert cards.is_card(same) and engine.review(tid, "decision")["card"]

    engine.edit(tid, "decision", rewritten(engine.review(tid, "decision")["text"]))
    review = engine.review(tid, "decision")
    assert review["card"] is False and cards.CARD not in [i["code"] for i in review["issues"]]
    # still known to come from the offline drafter: its evidence stays at hand
    assert cards.is_offline(review)
    engine.close()


def test_auto_approve_holds_every_unwritten_card_by_default_and_saves_the_one_a_person_wrote(
    project, tmp_path, default_user
):
    engine, tid = drafted(project, tmp_path)
    summary = auto_approve(engine, min_confidence=0.0)
    assert summary["created"] == [] and memory_files(tmp_path / "memory") == []
    held = {h["category"]: h for h in summary["held"]}
    assert set(held) == CATEGORIES
    for cat, h in held.items():
        assert (
            h["card"] is True
            and h["issues"] == [HELD]
            and h["title"] == engine.review(tid, cat)["title"]
        )
    assert not summary["unsure"] and exit_status(summary) == 0  # held for a person is no failure
    assert {r["state"] for r in staging.category_states(engine.data, tid).values()} == {"ready"}

    engine.edit(tid, "decision", rewritten(engine.review(tid, "decision")["text"]))
    again = auto_approve(engine, min_confidence=0.0)
    assert [c["category"] for c in again["created"]] == ["decision"]
    assert {h["category"] for h in again["held"]} == CATEGORIES - {"decision"}
    (path,) = memory_files(tmp_path / "memory")
    assert "any API instance verifies them alone" in path.read_text()
    engine.close()


def test_offline_cards_true_lets_auto_approve_save_cards_through_the_gate(
    project, tmp_path, default_user
):
    make_engine(project, tmp_path).close()  # its project config, to which the person adds the key
    cfg = project / ".claude" / "memcurate.yaml"
    cfg.write_text(cfg.read_text() + "auto_approve:\n  offline_cards: true\n")
    engine = Engine(project, clock=lambda: "2026-11-22T10:04:00Z")
    stage(engine)
    summary = auto_approve(engine, min_confidence=0.0)
    assert {c["category"] for c in summary["created"]} == CATEGORIES and not summary["held"]
    engine.close()


def test_the_text_and_json_summaries_say_why_cards_were_held(project, tmp_path, default_user):
    engine, _ = drafted(project, tmp_path)
    engine.close()
    p = run_cli("--auto-approve", cwd=project)
    assert p.returncode == 0, p.stderr
    assert f": {HELD}" in p.stdout
    assert "held      6  (a person must approve them)" in p.stdout
    assert "cards     6 offline cards held for you to write in the TUI" in p.stdout
    doc = json.loads(run_cli("--auto-approve", "--json", cwd=project).stdout)
    assert doc["created"] == [] and len(doc["held"]) == 6
    assert all(h["card"] and HELD in h["issues"] for h in doc["held"])


def test_a_cards_evidence_is_its_lines_its_category_and_for_a_runbook_the_error_and_its_fix(
    project, tmp_path
):
    engine, tid = drafted(project, tmp_path)
    ev = engine.card_evidence(tid, "runbook")
    assert ev["category"] == "runbook"
    assert any(
        "root cause" in line["text"] and line["turn"] == 4 and line["speaker"] == "assistant"
        for line in ev["lines"]
    )
    (pair,) = ev["pairs"]
    assert "pytest tests/test_auth.py" in pair["error"] and "OperationalError" in pair["error"]
    assert "tests/conftest.py" in pair["fix"] and "passed: python -m pytest" in pair["fix"]
    decision = engine.card_evidence(tid, "decision")
    assert decision["category"] == "decision" and decision["pairs"] == []
    assert any("Let's go with JWT" in line["text"] for line in decision["lines"])
    # what the demo user pasted by mistake is nowhere in any card's evidence
    everything = json.dumps([engine.card_evidence(tid, c) for c in CATEGORIES])
    assert "DEMOfakeKEY" not in everything and "s3cretpass" not in everything
    engine.close()


def test_a_runbook_card_whose_transcript_is_gone_says_so_and_keeps_its_lines(tmp_path):
    entry = {
        "snippets": [
            {
                "turn": 2,
                "speaker": "tool",
                "weight": 2.0,
                "keywords": ["error-fix"],
                "text": "error, then fixed: ModuleNotFoundError: No module named 'yaml'",
            }
        ],
        "excerpt": "[turn 2 · tool]\nerror: ModuleNotFoundError",
    }
    ev = cards.evidence(
        entry, "runbook", {"transcript": str(tmp_path / "gone.jsonl"), "byte_range": [0, 100]}, {}
    )
    assert ev["pairs"] == [] and "cannot be read" in ev["note"]
    assert ev["lines"][0]["text"].endswith("No module named 'yaml'")


def test_evidence_staged_with_a_secret_is_shown_redacted(tmp_path):
    """Staging is within reach of Claude's side: a secret written into a triage's snippets is not shown."""
    key = "sk-ant-api03-" + "Zq7" * 20
    entry = {
        "category": "constraint",
        "snippets": [
            {
                "turn": 1,
                "speaker": "user",
                "keywords": ["must"],
                "text": f"use the key {key} for every call",
            }
        ],
        "excerpt": f"export ANTHROPIC_API_KEY={key}",
        "look": {"statement": f"the key is {key}"},
    }
    ev = cards.evidence(entry, "constraint-2", {}, {})
    assert ev["category"] == "constraint"  # a slot's entry names its base category
    assert (
        key not in json.dumps(ev)
        and "[REDACTED:" in ev["lines"][0]["text"]
        and "[REDACTED:" in ev["excerpt"]
    )


def test_the_demo_says_its_drafts_are_cards_and_that_auto_approve_held_them(tmp_path, default_user):
    p = run_cli("demo", "--auto-approve", cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr
    for line in OFFLINE_CARDS:
        assert line in p.stdout
    assert "Write them in the TUI: memcurate --project " in p.stdout
    assert (
        "created   0" in p.stdout
        and "cards     9 offline cards held for you to write in the TUI" in p.stdout
    )
    root = next(
        line.split()[-1] for line in p.stdout.splitlines() if line.startswith("demo folder")
    )
    assert os.path.isdir(root)
    shutil.rmtree(root, ignore_errors=True)
