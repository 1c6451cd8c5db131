"""Nothing said twice (issue 11, item 5): the same fact from two sessions, from two triages of one session,
in two categories of one triage, or in two drafts pending at once, becomes one memory with several sources."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import needs_shared, shared
from test_engine import DEMO, make_engine, stage
from test_verify_decide import NOW, doc, existing

from memcurate.curator.candidates import staging
from memcurate.curator.candidates.incremental import capture
from memcurate.curator.headless import auto_approve as gated_auto_approve
from memcurate.curator.memory import memfile
from memcurate.curator.review.actions import Redecided
from memcurate.curator.verify.decide import decide, merge_sources, similarity

OTHER = "11111111-2222-4333-8444-555555555555"
RUN_ON_ALL_PUSH = (
    "-Users-dain-workspace-claude-code-log-sample/fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl"
)
# two runbooks of one project, each a different failing test: they share "fix failing test" and nothing else
CACHE_TEST = (
    "-Users-dain-workspace-claude-code-log-sample/aa5c5ada-4f1e-4b7f-9d1f-c496b3badde5.jsonl"
)
TIMELINE_TEST = (
    "-Users-dain-workspace-claude-code-log-sample/12a546d1-83a7-49a6-abba-5400db340b43.jsonl"
)


def auto_approve(engine):
    """--auto-approve with the confidence gate open: these tests are about what is saved twice, not the gate."""
    return gated_auto_approve(engine, min_confidence=0.0)


def other_session(tmp_path: Path, src: str | Path = DEMO, session: str = OTHER) -> Path:
    """The same transcript as another session said it: the same words, another session id."""
    raw = Path(src).read_text(encoding="utf-8")
    old = re.search(r'"sessionId":"([0-9a-f-]{36})"', raw).group(1)
    out = tmp_path / f"{session}.jsonl"
    out.write_text(raw.replace(old, session), encoding="utf-8")
    return out


def paraphrase(engine, tid: str, category: str = "decision") -> str:
    """The pending draft said in other words, under another id (as another session's drafter may put it):
    only the fact, not the file name, says it is the one already saved."""
    d = memfile.parse(engine.review(tid, category)["text"])
    d.id, d.title = "paraphrased-" + d.id[:60], "Paraphrased: " + d.title
    engine.edit(tid, category, memfile.render(d))
    return d.id


def saved_docs(root: Path) -> list[memfile.MemoryDoc]:
    return [memfile.parse(p.read_text()) for p in sorted(root.glob("*/*.md"))]


def test_sources_stay_one_entry_per_session_with_one_range_of_turns():
    merged = merge_sources(
        [{"session": "a", "turns": [2, 4]}, {"session": "b", "turns": [1, 1]}],
        [
            {"session": "a", "turns": [7, 9]},
            {"session": "a", "turns": [3, 3]},
            {"session": "c"},
            {"session": "b", "turns": [1, 1]},
        ],
    )
    assert merged == [
        {"session": "a", "turns": [2, 9]},
        {"session": "b", "turns": [1, 1]},
        {"session": "c"},
    ]


def test_the_same_fact_from_another_session_is_one_memory_with_both_sources(project, tmp_path):
    engine = make_engine(project, tmp_path)
    stage(engine)
    first = auto_approve(engine)
    assert len(first["created"]) == 6
    capture(engine.data, engine.cfg, str(other_session(tmp_path)), event="backfill", summary=True)
    second = auto_approve(engine)
    assert not second["created"] and not second["failed"], second
    root = tmp_path / "memory"
    docs = saved_docs(root)
    assert len(docs) == 6  # one memory per fact, however many sessions said it
    # the repeat is recorded: each memory names both sessions, once each
    for d in docs:
        assert len(d.sources) == 2 and OTHER in {s["session"] for s in d.sources}, (d.id, d.sources)
    # and recording a source changes neither the memory's text nor MEMORY.md's line
    assert {e["category"] for e in second["noop"] + second["updated"]} == {d.category for d in docs}


def test_a_second_triage_of_one_session_updates_its_summary(project, tmp_path):
    """The Stop hook triages as the session goes: the summary of the later pass goes onto the earlier one."""
    engine = make_engine(project, tmp_path)
    lines = Path(DEMO).read_text(encoding="utf-8").splitlines(keepends=True)
    copy = tmp_path / "session.jsonl"
    copy.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    stage(engine, str(copy))
    auto_approve(engine)
    copy.write_text("".join(lines), encoding="utf-8")
    capture(engine.data, engine.cfg, str(copy), event="backfill", summary=True)
    second = auto_approve(engine)
    summaries = [d for d in saved_docs(tmp_path / "memory") if d.category == "session_summary"]
    assert len(summaries) == 1, [d.id for d in summaries]
    assert [s["session"] for s in summaries[0].sources] == [summaries[0].sources[0]["session"]]
    assert any(e["category"] == "session_summary" for e in second["updated"] + second["noop"]), (
        second
    )


def test_two_drafts_pending_at_once_save_the_fact_once_in_the_tui_path(project, tmp_path):
    """Both sessions drafted before either is saved (the TUI drafts as triages arrive): approving the
    second decides it again against what the first saved."""
    engine = make_engine(project, tmp_path)
    stage(engine)
    capture(engine.data, engine.cfg, str(other_session(tmp_path)), event="backfill", summary=True)
    first, second = staging.triage_ids(engine.data)
    engine.process(first)
    engine.process(second)
    # nothing was saved yet
    assert engine.review(second, "decision")["decision"]["action"] == "create"
    paraphrase(engine, second)
    engine.approve(first, "decision")
    with pytest.raises(Redecided, match="was saved since"):
        engine.approve(second, "decision")
    again = engine.review(second, "decision")["decision"]
    assert again["action"] in ("noop", "update") and again["target"]
    engine.approve(second, "decision")
    (saved,) = [d for d in saved_docs(tmp_path / "memory") if d.category == "decision"]
    assert {s["session"] for s in saved.sources} >= {OTHER}


def test_two_drafts_pending_at_once_save_the_fact_once_in_auto_approve(project, tmp_path):
    engine = make_engine(project, tmp_path)
    stage(engine)
    capture(engine.data, engine.cfg, str(other_session(tmp_path)), event="backfill", summary=True)
    for tid in staging.triage_ids(engine.data):
        engine.process(tid)  # drafted and decided, nothing saved: every one a create
    paraphrase(engine, staging.triage_ids(engine.data)[1])
    summary = auto_approve(engine)
    assert len(summary["created"]) == 6 and not summary["conflicts"] and not summary["failed"], (
        summary
    )
    assert len(saved_docs(tmp_path / "memory")) == 6


@needs_shared
def test_a_fact_drafted_in_two_categories_of_one_triage_is_kept_in_one(project, tmp_path):
    """ "I think we should run it on all push?" is drafted as a decision and as a preference: the decision
    keeps it, and the preference is skipped with a reason naming it."""
    engine = make_engine(project, tmp_path)
    stage(engine, str(shared(RUN_ON_ALL_PUSH)))
    summary = auto_approve(engine)
    saved = {(e["category"], Path(e["path"]).stem) for e in summary["created"]}
    (decision,) = [stem for c, stem in saved if c == "decision"]
    assert not any(c == "preference" for c, _ in saved)
    (skip,) = [s for s in summary["skipped"] if s["category"] == "preference"]
    assert f"decision/{decision}" in skip["reason"]
    assert auto_approve(engine)["created"] == []  # final: not drafted again


@needs_shared
def test_different_facts_that_share_words_are_not_merged(project, tmp_path):
    """Two runbooks of one project, "fix failing test <this test>" and "<that test>": both saved."""
    engine = make_engine(project, tmp_path)
    for rel in (CACHE_TEST, TIMELINE_TEST):
        capture(engine.data, engine.cfg, str(shared(rel)), event="backfill", summary=True)
    summary = auto_approve(engine)
    runbooks = [d for d in saved_docs(tmp_path / "memory") if d.category == "runbook"]
    assert len(runbooks) == 2, summary
    assert similarity(*runbooks) < 0.6


def test_a_paraphrase_naming_the_same_things_is_the_same_fact_and_other_names_are_not():
    """Real titles and statements (10-box-os, claude-code-log): one fact said with and without "let's"
    and a quote, one fact naming the same test, and two tests that only share "fix failing test"."""
    a = doc(
        title="Use this one instead and modify the rest accordingly",
        body="## Decision\nLet's use this one instead and modify the rest accordingly.\n\nConfirmed by the "
        "assistant, turn 4: “That orange-red (#D96E4B) is much better - it's warm, professional.”\n\n"
        "## Rationale\nIt is warm.",
    )
    b = doc(
        title="Let's use this one instead and modify the rest accordingly",
        body="## Decision\n> Let's use this one instead and modify the rest accordingly.\n\n## Rationale\nWarm.",
    )
    assert similarity(a, b) >= 0.6
    cache = doc(
        title="Fix failing test cache invalidation version mismatch",
        category="runbook",
        body="## Symptom\nThe failing run reported: `test/test_cache.py::TestCacheManager::"
        "test_cache_invalidation_version_mismatch FAILED`\n\n## Steps\n1. x\n\n## Verification\ny",
    )
    cache2 = doc(
        title="Cache version mismatch test fails",
        category="runbook",
        body="## Symptom\n`test/test_cache.py::TestCacheManager::test_cache_invalidation_version_mismatch`"
        " fails after the version bump\n\n## Steps\n1. x\n\n## Verification\ny",
    )
    timeline = doc(
        title="Fix failing test timeline system messages chromium",
        category="runbook",
        body="## Symptom\nThe failing run reported: `test/test_timeline_browser.py::TestTimelineBrowser::"
        "test_timeline_system_messages[chromium] FAILED`\n\n## Steps\n1. x\n\n## Verification\ny",
    )
    assert similarity(cache, cache2) >= 0.6
    assert similarity(cache, timeline) < 0.6
    d = decide(cache2, [existing(cache, "/m/runbook/fix-failing-test.md")], now=NOW)
    assert d.action == "update"


def test_an_identical_draft_from_a_new_session_records_its_source_without_changing_the_text():
    old = doc(id="jwt-auth", sources=[{"session": "s1", "turns": [2, 3]}])
    d = decide(doc(sources=[{"session": "s2", "turns": [5, 6]}]), [existing(old)], now=NOW)
    assert (d.action, d.target, d.source_only) == ("noop", "jwt-auth", True)
    written = memfile.parse(d.text)
    assert written.body == old.body and written.title == old.title
    assert written.sources == [
        {"session": "s1", "turns": [2, 3]},
        {"session": "s2", "turns": [5, 6]},
    ]
    again = decide(doc(sources=[{"session": "s1", "turns": [2, 3]}]), [existing(old)], now=NOW)
    assert again.action == "noop" and not again.source_only  # nothing new at all: nothing to write


def test_the_summary_json_lists_a_fold_as_a_skip_with_its_reason(project, tmp_path):
    """The skip's reason is in --auto-approve --json (the same summary dict)."""
    engine = make_engine(project, tmp_path)
    stage(engine)
    summary = auto_approve(engine)
    json.dumps(summary)  # stays one JSON document
    assert all(s["reason"] for s in summary["skipped"])
