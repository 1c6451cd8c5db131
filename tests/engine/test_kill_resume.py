"""A process that dies leaves work another can resume (DESIGN), to the same end as a run never killed
(issue 25: bench/crash_bench.py found a session summary ready after kills, skipped in the clean run)."""

from __future__ import annotations

import pytest
from test_engine import make_engine, stage

from memcurate.curator.candidates import pipeline, staging


class Killed(BaseException):
    """The process dying at that very line: nothing after it runs."""


def states(engine, tid: str) -> dict[str, tuple[str, str | None]]:
    return {
        c: (r["state"], r.get("same_as"))
        for c, r in staging.category_states(engine.data, tid).items()
    }


def test_a_holder_killed_after_its_last_draft_and_before_the_fold_ends_as_the_clean_run(
    project, tmp_path, monkeypatch
):
    # Every two drafts of the triage state one fact here (tests/engine/test_same_fact.py tests that judgement), so the
    # clean run keeps the decision and skips the others as the same fact.
    monkeypatch.setattr(pipeline.same_fact, "same_fact", lambda a, b, strong_at: True)
    clean = make_engine(project, tmp_path)
    (tid,) = stage(clean)
    clean.process(tid)
    want = states(clean, tid)
    assert want["decision"] == ("ready", None)
    assert want["session_summary"][0] == "skipped" and want["session_summary"][1].startswith(
        "decision/"
    ), want

    other = tmp_path / "b" / "project"
    (other / ".git").mkdir(parents=True)
    killed = make_engine(other, tmp_path / "b")
    (tid,) = stage(killed)

    def die(*a, **kw):
        raise Killed

    with monkeypatch.context() as m:  # every draft ready on disk, the fold not made yet
        m.setattr(pipeline.same_fact, "fold", die)
        with pytest.raises(Killed):
            killed.process(tid)
    assert {s for s, _ in states(killed, tid).values()} == {"ready"}

    # the next process, as `memcurate --auto-approve` starts one
    resumed = make_engine(other, tmp_path / "b")
    resumed.process(tid)
    assert states(resumed, tid) == want
