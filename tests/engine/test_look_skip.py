"""A keyword category the second look did not confirm (issue 23): when the look read the triage's whole byte
range, the keywords' excerpt is junk to the model that read everything, so the category is not drafted from
it: it is `skipped`, with a reason saying so. When the look could not read it all (failed, off, a segment
left out), the category is drafted from its keyword excerpt as before.

The drafter is the fake Claude backend of test_look_handoff.py: its look cites the digest entries holding
given words, and its drafts keep the request each would send.
"""

from __future__ import annotations

from pathlib import Path

from synthetic import Transcript, text
from test_look_handoff import JWT, Citing, jwt_session
from test_second_look import NOW, Looking, end_session, engine_with, look_record

from memcurate.curator.candidates import staging
from memcurate.curator.engine import Engine
from memcurate.curator.headless import auto_approve

READ_ALL = "the second look read the whole session and found nothing durable"


def keyword_categories(engine: Engine, tid: str) -> set[str]:
    doc = staging.load_triage(engine.data, tid)
    return {
        n
        for n, c in doc["categories"].items()
        if isinstance(c, dict) and c.get("triggered") and not c.get("found_by")
    }


def skipped_by_look(engine: Engine, tid: str, category: str) -> bool:
    """Skipped because the look did not confirm it (the fake drafter's own skip, for a category it has no
    answer for, is the draft's: the category was drafted)."""
    rec = staging.category_states(engine.data, tid)[category]
    return rec["state"] == "skipped" and READ_ALL in rec.get("reason", "")


def test_an_unconfirmed_keyword_category_is_skipped_with_the_reason_when_the_look_read_everything(
    project, tmp_path
):
    fake = Citing({})
    engine = engine_with(project, tmp_path, fake)
    end_session(engine, jwt_session(tmp_path))
    (tid,) = engine.pending()
    keyword = keyword_categories(engine, tid)
    assert "decision" in keyword  # the keywords flagged it ("we decided", "let's go with")
    events = []
    states = engine.process(tid, on_event=events.append)

    look = look_record(engine, tid)
    assert look["state"] == "done" and look["segments_left_out"] == 0 and look["confirmed"] == {}
    assert fake.drafts == [] and states == {
        c: "skipped" for c in keyword
    }  # no draft call from junk
    rec = staging.category_states(engine.data, tid)["decision"]
    assert READ_ALL in rec["reason"]
    assert [h[0] for h in rec["history"]] == ["triaged", "skipped"]
    assert any(
        e.category == "decision" and e.state == "skipped" and READ_ALL in e.detail["reason"]
        for e in events
    )
    assert engine.pending() == []  # final: never drafted later either
    engine.process(tid)
    assert fake.drafts == [] and len(fake.looks) == 1


def test_headless_lists_the_skip_with_its_reason(project, tmp_path):
    fake = Citing({})
    engine = engine_with(project, tmp_path, fake)
    end_session(engine, jwt_session(tmp_path))
    summary = auto_approve(engine)
    assert any(s["category"] == "decision" and READ_ALL in s["reason"] for s in summary["skipped"])
    assert summary["created"] == [] and fake.drafts == []


def test_a_confirmed_category_is_drafted_from_the_looks_entries_and_the_unconfirmed_one_beside_it_skipped(
    project, tmp_path
):
    fake = Citing(
        {
            "decision": (
                "use JWT because",
                "API auth uses JWT: sessions would need a sessions table.",
            )
        }
    )
    engine = engine_with(project, tmp_path, fake)
    t = Transcript().user(JWT + " Leave the old session middleware as a TODO for now.")
    t.assistant(text("Switched to JWT. The old session middleware is left as a TODO for now."))
    end_session(engine, t.write(tmp_path / "s.jsonl"))
    (tid,) = engine.pending()
    others = keyword_categories(engine, tid) - {"decision"}
    # "as a TODO for now": the keywords flagged it, the look did not confirm it
    assert "tech_debt" in others
    engine.process(tid)
    assert fake.drafts == ["decision"] and fake.requests["decision"].excerpt.startswith(
        f"[1] user: {JWT}"
    )
    assert not skipped_by_look(engine, tid, "decision")
    assert others and all(skipped_by_look(engine, tid, c) for c in others)


def test_a_category_the_look_named_in_an_answer_it_dropped_is_drafted(project, tmp_path):
    fake = Looking({"findings": [{"category": "decision", "entries": [99], "statement": "JWT"}]})
    engine = engine_with(project, tmp_path, fake)
    end_session(engine, jwt_session(tmp_path))
    (tid,) = engine.pending()
    engine.process(tid)
    # an answer about it, not valid
    assert look_record(engine, tid)["dropped"] and "decision" in fake.drafts


def test_after_a_failed_look_the_keyword_category_is_drafted_from_its_excerpt(project, tmp_path):
    fake = Looking(error="claude CLI timed out after 119 s (killed)")
    engine = engine_with(project, tmp_path, fake)
    end_session(engine, jwt_session(tmp_path))
    (tid,) = engine.pending()
    keyword = staging.load_triage(engine.data, tid)["categories"]["decision"]
    engine.process(tid)
    assert look_record(engine, tid)["state"] == "failed"
    assert "decision" in fake.drafts and not skipped_by_look(engine, tid, "decision")
    assert engine.candidates(tid)["decision"].entry["excerpt"] == keyword["excerpt"]


def long_decided_session(tmp_path: Path) -> Path:
    t = Transcript().user(JWT)
    t.assistant(text("Decision recorded: we'll go with JWT for the API."))
    for i in range(40):
        t.user(
            f"Step {i}: please rename the field number {i} in the orders model to something clearer"
        )
        t.assistant(text(f"Renamed field {i} in the orders model and updated its callers."))
    return t.write(tmp_path / "s.jsonl")


def test_when_the_look_left_a_segment_out_the_keyword_category_is_drafted(project, tmp_path):
    fake = Looking()
    engine_with(project, tmp_path, fake, "second_look:\n  max_chars: 1000\n")
    cfg = project / ".claude" / "memcurate.yaml"
    cfg.write_text(
        cfg.read_text().replace("  retries: 0\n", "  retries: 0\n  max_input_tokens: 2800\n")
    )
    engine = Engine(project, drafter=fake, clock=lambda: NOW)
    end_session(engine, long_decided_session(tmp_path))
    (tid,) = engine.pending()
    assert "decision" in keyword_categories(engine, tid)
    engine.process(tid)
    look = look_record(engine, tid)
    # the model did not read it all
    assert look["state"] == "done" and look["segments_left_out"] > 0
    assert "decision" in fake.drafts and not skipped_by_look(engine, tid, "decision")


def test_the_same_long_session_read_whole_skips_it(project, tmp_path):
    fake = Looking()
    engine = engine_with(project, tmp_path, fake, "second_look:\n  max_chars: 1000\n")
    end_session(engine, long_decided_session(tmp_path))
    (tid,) = engine.pending()
    engine.process(tid)
    look = look_record(engine, tid)
    assert look["segments"] > 1 and look["segments_left_out"] == 0
    assert fake.drafts == [] and skipped_by_look(engine, tid, "decision")


def test_with_the_offline_backend_the_keyword_category_is_drafted(project, tmp_path):
    from memcurate.curator.drafting.offline import OfflineDrafter

    engine = engine_with(project, tmp_path, Looking())
    end_session(engine, jwt_session(tmp_path))  # staged with a look to make
    (tid,) = engine.pending()
    offline = Engine(project, drafter=OfflineDrafter(), clock=lambda: NOW)
    states = offline.process(tid)
    assert look_record(offline, tid)["state"] == "off" and states["decision"] not in (
        "skipped",
        "triaged",
    )


def test_with_second_look_disabled_at_drafting_the_keyword_category_is_drafted(project, tmp_path):
    fake = Looking()
    engine = engine_with(project, tmp_path, fake, "second_look:\n  enabled: true\n")
    end_session(engine, jwt_session(tmp_path))  # staged with a look to make
    (tid,) = engine.pending()
    cfg = project / ".claude" / "memcurate.yaml"
    cfg.write_text(cfg.read_text().replace("  enabled: true\n", "  enabled: false\n"))
    engine = Engine(project, drafter=fake, clock=lambda: NOW)
    engine.process(tid)
    assert look_record(engine, tid)["state"] == "off" and fake.looks == []
    assert "decision" in fake.drafts and not skipped_by_look(engine, tid, "decision")


def test_session_summary_is_never_skipped_by_the_look(project, tmp_path):
    fake = Looking()
    engine = engine_with(project, tmp_path, fake)
    cfg = project / ".claude" / "memcurate.yaml"
    cfg.write_text(cfg.read_text().replace("    threshold: 0.99\n", "    threshold: 0.0\n"))
    engine = Engine(project, drafter=fake, clock=lambda: NOW)
    end_session(engine, jwt_session(tmp_path))
    (tid,) = engine.pending()
    assert "session_summary" in keyword_categories(engine, tid)
    engine.process(tid)
    assert "session_summary" in fake.drafts and not skipped_by_look(engine, tid, "session_summary")
    assert skipped_by_look(engine, tid, "decision")


def test_a_look_record_that_does_not_check_out_skips_nothing():
    """second_look.json sits in the data dir, which Claude can write: a forged or damaged record is no look
    (its keyword categories are drafted), never a crash of the triage's drafting."""
    from memcurate.curator.candidates.second_look import unconfirmed

    cats = {"decision": {"triggered": True}, "session_summary": {"triggered": True}}
    good = {"state": "done", "segments": 1, "byte_range": [0, 100]}
    doc = {"second_look": {"record": good}, "source": {"byte_range": [0, 100]}, "categories": cats}
    assert list(unconfirmed(doc)) == ["decision"]  # the record as a look writes it
    for bad in (
        {"segments": "x"},
        {"segments_left_out": "x"},
        {"byte_range": "0-100"},
        {"byte_range": [0]},
    ):
        assert unconfirmed({**doc, "second_look": {"record": {**good, **bad}}}) == {}, bad
