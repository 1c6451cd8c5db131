"""One draft per fact (issue 23): the second look lists facts, several of one category if the session holds
them; each fact is a candidate of its own (a slot: "decision", "decision-2"), drafted from its own statement
and cited entries with the saved memories near it, reviewed and saved on its own, and written as Claude
Code writes its memories: the fact, then a **Why:** and a **How to apply:** line.

The drafter is a fake Claude backend (tests/engine/test_second_look.py) whose look answers what a model reading the
digest would, and whose drafts answer in the fact format, completed by the real code (prompt.fill)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from synthetic import Transcript, text
from test_second_look import Looking, end_session, engine_with

from memcurate.curator.candidates import staging
from memcurate.curator.categories import base, slot
from memcurate.curator.drafting import DraftResult
from memcurate.curator.drafting import prompt as prompts
from memcurate.curator.memory import memfile

SESSION = [
    (
        "We will keep Postgres, not SQLite: the reports need window functions.",
        "Keeping Postgres for the reports.",
    ),
    (
        "And the job queue goes on Redis, since it already runs in production.",
        "The queue now runs on Redis.",
    ),
    (
        "Always run the migrations with --dry-run first on staging.",
        "Understood: --dry-run first on staging.",
    ),
]
FACTS = [
    {
        "category": "decision",
        "statement": "The project keeps Postgres rather than SQLite.",
        "why": "The reports need window functions.",
        "how_to_apply": "Write report queries for Postgres.",
        "words": "window functions",
        "confidence": 0.9,
    },
    {
        "category": "decision",
        "statement": "The job queue runs on Redis.",
        "why": "Redis already runs in production.",
        "how_to_apply": "Add new jobs to the Redis queue.",
        "words": "Redis, since",
        "confidence": 0.85,
    },
    {
        "category": "preference",
        "statement": "Migrations run with --dry-run first on staging.",
        "why": "The user asked for it.",
        "how_to_apply": "Before migrating staging, run with --dry-run.",
        "words": "--dry-run first",
        "confidence": 0.8,
    },
]


class FactLook(Looking):
    """A look that states FACTS, citing the entries holding each one's words; drafts answer in the fact format
    from the fact the request carries, and keep each prompt by slot statement."""

    def __init__(self, facts: list[dict]) -> None:
        super().__init__()
        self.facts = facts
        self.prompts: list[str] = []

    def second_look(self, request):
        lines = [ln for ln in request.activity.splitlines() if ln.startswith("[") and "]" in ln]
        self.answer = {
            "facts": [
                {
                    **{k: v for k, v in f.items() if k != "words"},
                    "entries": [int(ln[1 : ln.index("]")]) for ln in lines if f["words"] in ln],
                }
                for f in self.facts
            ]
        }
        return super().second_look(request)

    def draft(self, request):
        self.drafts.append(request.category)
        self.prompts.append(prompts.user_prompt(request))
        look = request.entry["look"]
        answer = {
            "skip": False,
            "title": look["statement"].rstrip("."),
            "description": f"About {look['statement']}",
            "tags": ["facts"],
            "fact": look["statement"],
            "why": look["why"],
            "how_to_apply": look["how_to_apply"],
            "confidence": 0.9,
        }
        result = DraftResult(doc=None, text="", model="fake", tokens_in=10, tokens_out=5)
        prompts.fill(result, request, "fake", lambda: answer)
        return result


def session(tmp_path: Path) -> Path:
    t = Transcript()
    for said, reply in SESSION:
        t.user(said).assistant(text(reply))
    return t.write(tmp_path / "s.jsonl")


def test_two_decisions_and_a_preference_are_three_candidates_each_drafted_from_its_own_fact(
    project, tmp_path
):
    fake = FactLook(FACTS)
    engine = engine_with(project, tmp_path, fake)
    end_session(engine, session(tmp_path))
    (tid,) = engine.pending()
    states = engine.process(tid)
    assert {k: v for k, v in states.items() if k != "session_summary"} == {
        "decision": "ready",
        "decision-2": "ready",
        "preference": "ready",
    }
    assert sorted(fake.drafts) == ["decision", "decision", "preference"]  # one draft call per fact
    cands = engine.candidates(tid)
    assert cands["decision-2"].category == "decision" and cands["decision-2"].name == "decision-2"
    # Each draft carries its own fact and the entry that holds it, not the other fact's.
    by_fact = {
        p.split("<<<BEGIN FACT-", 1)[1].split("\n", 1)[1].split("\n", 1)[0]: p for p in fake.prompts
    }
    redis = by_fact["The job queue runs on Redis."]
    assert (
        "Why: Redis already runs in production." in redis
        and "Redis, since it already runs" in redis
    )
    assert "window functions" not in redis
    # The file a person reviews reads as Claude Code's own memories do: the fact, then Why and How to apply.
    doc = memfile.parse(engine.review(tid, "decision-2")["text"])
    assert doc.category == "decision" and doc.sections["Decision"] == "The job queue runs on Redis."
    assert doc.sections["Rationale"] == (
        "**Why:** Redis already runs in production.\n"
        "**How to apply:** Add new jobs to the Redis queue."
    )


def test_a_further_fact_is_saved_as_a_memory_of_its_category(project, tmp_path):
    fake = FactLook(FACTS)
    engine = engine_with(project, tmp_path, fake)
    end_session(engine, session(tmp_path))
    (tid,) = engine.pending()
    engine.process(tid)
    result = engine.approve_all(tid, ["decision-2", "decision"])
    assert not result.refused and {s.name for s in result.saved} == {"decision", "decision-2"}
    saved = sorted(Path(s.path).relative_to(tmp_path / "memory").as_posix() for s in result.saved)
    assert saved == [
        "decision/the-job-queue-runs-on-redis.md",
        "decision/the-project-keeps-postgres-rather-than-sqlite.md",
    ]
    assert staging.category_states(engine.data, tid)["decision-2"]["state"] == "saved"
    index = (tmp_path / "memory" / "MEMORY.md").read_text()
    assert (
        "(decision/the-job-queue-runs-on-redis.md)" in index
        and "(decision/the-project-keeps" in index
    )


def test_a_draft_request_carries_the_saved_memories_near_its_fact(project, tmp_path):
    fake = FactLook(FACTS[1:2])
    engine = engine_with(project, tmp_path, fake)
    end_session(engine, session(tmp_path))
    (tid,) = engine.pending()
    engine.process(tid)
    engine.approve_all(tid, ["decision"])
    # A later session states the Redis fact again: its draft sees the memory already saved.
    later = (
        Transcript()
        .user("We decided: the job queue goes on Redis, since it already runs in production.")
        .assistant(text("Yes, Redis."))
        .write(tmp_path / "later.jsonl")
    )
    end_session(engine, later)
    (tid2,) = [t for t in engine.pending() if t != tid]
    engine.process(tid2)
    prompt = fake.prompts[-1]
    assert "Existing memories near it" in prompt and "title: The job queue runs on Redis" in prompt


def test_facts_past_the_number_a_category_keeps_are_dropped_and_counted(project, tmp_path):
    many = [
        {
            **FACTS[0],
            "statement": f"Fact number {i} about window functions.",
            "words": "window functions",
        }
        for i in range(9)
    ]
    fake = FactLook(many)
    engine = engine_with(project, tmp_path, fake)
    end_session(engine, session(tmp_path))
    (tid,) = engine.pending()
    engine.process(tid)
    look = json.loads(Path(staging.second_look_path(engine.data, tid)).read_text())
    assert sorted(look["added"]) == [
        "decision",
        "decision-2",
        "decision-3",
        "decision-4",
        "decision-5",
        "decision-6",
    ]
    assert sum("past the 6 facts" in d for d in look["dropped"]) == 3


def test_a_forged_look_record_cannot_add_a_slot_that_is_no_fact_of_a_category(project, tmp_path):
    fake = FactLook(FACTS[:1])
    engine = engine_with(project, tmp_path, fake)
    end_session(engine, session(tmp_path))
    (tid,) = engine.pending()
    engine.process(tid)
    path = Path(staging.second_look_path(engine.data, tid))
    look = json.loads(path.read_text())
    entry = look["added"]["decision"]
    for name in (
        "decision-7",
        "decision-02",
        "../escape",
        "session_summary-2",
        "nonsense-2",
        "decision-1",
    ):
        look["added"][name] = entry
    path.write_text(json.dumps(look))
    doc = staging.load_triage(engine.data, tid)
    assert not {
        "decision-7",
        "decision-02",
        "../escape",
        "session_summary-2",
        "nonsense-2",
        "decision-1",
    } & set(doc["categories"])


def test_slot_names_map_to_their_category_and_nothing_else_does():
    assert [slot("decision", n) for n in (1, 2, 6)] == ["decision", "decision-2", "decision-6"]
    assert (
        base("decision-2") == "decision"
        and base("tech_debt-6") == "tech_debt"
        and base("runbook") == "runbook"
    )
    for name in (
        "decision-7",
        "decision-1",
        "decision-02",
        "decision-",
        "session_summary-2",
        "x-2",
        "-2",
    ):
        assert base(name) == name  # not a slot: a lookup by it fails as for any unknown name


def test_an_answer_in_the_older_sections_shape_still_makes_a_document():
    from memcurate.curator.drafting import DraftRequest

    req = DraftRequest(triage_id="t", category="decision", entry={}, source={})
    doc = prompts.to_document(
        {
            "title": "Use JWT",
            "description": "Auth tokens",
            "tags": ["auth"],
            "sections": {"Decision": "Use JWT.", "Rationale": "Stateless."},
        },
        req,
    )
    assert doc.sections == {"Decision": "Use JWT.", "Rationale": "Stateless."}
    try:
        prompts.to_document(
            {"title": "Use JWT", "description": "d", "tags": ["a"], "fact": "Use JWT."}, req
        )
    except ValueError as e:
        assert "no why" in str(e)
    else:
        raise AssertionError("a fact with no why was taken")


def test_a_stretch_the_keywords_find_nothing_in_is_not_worth_a_look_and_waits_for_the_next(
    project, tmp_path
):
    from test_second_look import end_session as end

    fake = FactLook(FACTS[:1])
    engine = engine_with(project, tmp_path, fake)
    t = Transcript().user("hello there").assistant(text("Hello! How can I help?"))
    path = t.write(tmp_path / "s.jsonl")
    report = end(engine, path)
    assert report["status"] == "no-trigger" and any("no second look" in n for n in report["notes"])
    # still nothing worth a call: the words add up
    t.user("thanks").assistant(text("You're welcome!"))
    report = end(engine, t.write(path))
    assert report["status"] == "no-trigger" and any(
        "no second look: nothing worth a call in bytes 0.." in n for n in report["notes"]
    )
    assert staging.triage_ids(engine.data) == [] and fake.looks == []
    size = path.stat().st_size
    t.user(SESSION[0][0]).assistant(text(SESSION[0][1]))
    t.write(path)
    end(engine, path)
    (tid,) = staging.triage_ids(engine.data)
    doc = staging.load_triage(engine.data, tid)
    assert doc["second_look"]["byte_range"][0] == 0 < size < doc["second_look"]["byte_range"][1]
    engine.process(tid)
    assert "hello there" in fake.looks[0].activity  # the waiting bytes are read with what followed


def stop_then_end(engine, tmp_path: Path) -> tuple[str, str, Path]:
    """A Stop pass over the first turn (its keyword decision staged with no look), then the session grows and
    ends: the SessionEnd triage asks for a look over the whole session. Returns (stop tid, end tid, path)."""
    t = Transcript().user(
        "We decided to keep Postgres, not SQLite, because the reports need window functions."
    )
    t.assistant(text("Keeping Postgres for the reports."))
    path = t.write(tmp_path / "s.jsonl")
    end_session(engine, path, event="Stop")
    (stop,) = staging.triage_ids(engine.data)
    assert "second_look" not in staging.load_triage(engine.data, stop)
    assert staging.load_triage(engine.data, stop)["categories"]["decision"]["triggered"]
    t.user(SESSION[1][0]).assistant(text(SESSION[1][1]))
    end_session(engine, t.write(path))
    (end,) = [x for x in staging.triage_ids(engine.data) if x != stop]
    return stop, end, path


def test_a_stops_keyword_category_waits_for_the_look_and_is_not_drafted_from_its_excerpt(
    project, tmp_path
):
    fake = FactLook(FACTS[:2])
    engine = engine_with(project, tmp_path, fake)
    t = Transcript().user(
        "We decided to keep Postgres, not SQLite, because the reports need window functions."
    )
    path = t.assistant(text("Keeping Postgres for the reports.")).write(tmp_path / "s.jsonl")
    end_session(engine, path, event="Stop")
    (stop,) = staging.triage_ids(engine.data)
    events = []
    # waiting: no call made
    assert engine.process(stop, on_event=events.append)["decision"] == "triaged"
    assert fake.drafts == [] and [e.state for e in events] == ["waiting"]
    assert "second look at the session's end" in events[0].detail["reason"]


def test_once_the_look_read_the_stretch_the_stops_category_is_skipped_and_the_facts_drafted_once(
    project, tmp_path
):
    fake = FactLook(FACTS[:2])
    engine = engine_with(project, tmp_path, fake)
    stop, end, _ = stop_then_end(engine, tmp_path)
    assert engine.pending()[0] == end  # the look goes first
    for tid in engine.pending():
        engine.process(tid)
    rec = staging.category_states(engine.data, stop)["decision"]
    assert rec["state"] == "skipped" and f"drafted in triage {end}" in rec["reason"]
    states = staging.category_states(engine.data, end)
    assert states["decision"]["state"] == "ready" and states["decision-2"]["state"] == "ready"
    assert sorted(fake.drafts) == [
        "decision",
        "decision",
    ]  # the two facts, and no draft from the excerpt
    assert len(fake.looks) == 1 and "window functions" in fake.looks[0].activity


def test_offline_a_stops_keyword_category_is_drafted_at_once(project, tmp_path):
    from test_second_look import ANSWERS  # noqa: F401 (the fake's drafts)

    engine = engine_with(project, tmp_path, FactLook(FACTS[:1]), "second_look:\n  enabled: false\n")
    t = Transcript().user(
        "We decided to keep Postgres, not SQLite, because the reports need window functions."
    )
    path = t.assistant(text("Keeping Postgres for the reports.")).write(tmp_path / "s.jsonl")
    end_session(engine, path, event="Stop")
    (stop,) = staging.triage_ids(engine.data)
    # no look will come: drafted from its excerpt
    assert engine.process(stop)["decision"] != "triaged"


def test_when_the_look_fails_for_good_the_stops_category_is_drafted_from_its_excerpt(
    project, tmp_path
):
    fake = FactLook(FACTS[:1])
    fake.error = "overloaded"
    engine = engine_with(project, tmp_path, fake)
    stop, end, _ = stop_then_end(engine, tmp_path)
    for _ in range(2):  # a failed look is tried once more, by the next run (another process)
        engine.process(end)
        record = json.loads(Path(staging.second_look_path(engine.data, end)).read_text())
        record["pid"] = -1
        Path(staging.second_look_path(engine.data, end)).write_text(json.dumps(record))
    assert record["state"] == "failed" and record["attempts"] == 2
    assert engine.process(stop)["decision"] != "triaged" and "decision" in fake.drafts


def test_a_stops_category_no_look_ever_covers_is_drafted_after_the_wait(project, tmp_path):
    from memcurate.curator.candidates import second_look
    from memcurate.curator.candidates.candidate import StagedTriage

    engine = engine_with(project, tmp_path, FactLook(FACTS[:1]))
    t = Transcript().user(
        "We decided to keep Postgres, not SQLite, because the reports need window functions."
    )
    path = t.assistant(text("Keeping Postgres for the reports.")).write(tmp_path / "s.jsonl")
    end_session(engine, path, event="Stop")
    (stop,) = staging.triage_ids(engine.data)
    triage = StagedTriage(engine.data, stop)
    assert second_look.keyword_fate(engine, triage)[0] == "wait"
    later = time.time() + second_look.WAIT_HOURS * 3600 + 60
    assert second_look.keyword_fate(engine, triage, now=later) == ("draft", "")
