"""The library's search as you type: narrowing by prefix, odd input, both owners; and Claude's own topic
files considered by the real pipeline's decisions (a draft saying the same is a NOOP naming the file)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from library_helpers import MEMORY_MD, jwt, library_engine, no_network, save

from memcurate.curator.candidates import staging
from memcurate.curator.candidates.incremental import capture
from memcurate.curator.errors import MemcurateError
from memcurate.curator.library.entries import line_ref
from memcurate.curator.library.search import match_expression
from memcurate.curator.memory import memfile
from memcurate.curator.util.assets import asset


@pytest.fixture
def engine(project, tmp_path):
    e = library_engine(project, tmp_path / "memory")
    jwt(e)
    no_network(e, status="archived")
    save(
        e,
        "runbook",
        "api-timeouts",
        "API timeouts under load",
        "Raise the pool size when the API times out",
        {
            "Symptom": "The API times out under load.",
            "Steps": "Raise the connection pool size.",
            "Verification": "The load test passes.",
        },
    )
    root = e.store.root
    with open(os.path.join(root, "MEMORY.md"), "w") as f:
        f.write(MEMORY_MD)
    with open(os.path.join(root, "debugging.md"), "w") as f:
        f.write(
            "---\nname: Debugging notes\n---\nStart with pdb on the failing authentication test.\n"
        )
    yield e
    e.close()


def test_search_narrows_as_a_word_is_typed_and_each_word_narrows_more(engine):
    assert engine.library_search("a") != [] and len(engine.library_search("a")) <= len(
        engine.library()
    )
    assert set(engine.library_search("auth")) == {
        "decision/use-jwt-for-api-auth",
        "claude/debugging.md",
    }
    assert set(engine.library_search("authen")) == {
        "decision/use-jwt-for-api-auth",
        "claude/debugging.md",
    }
    assert engine.library_search("authentication pdb") == ["claude/debugging.md"]
    assert engine.library_search("authx") == []
    debugging_line = line_ref("- [Debugging notes](debugging.md) \u2014 how we debug the API")
    assert set(engine.library_search("api")) == {
        "decision/use-jwt-for-api-auth",
        "runbook/api-timeouts",
        "constraint/no-network-in-ci",
        debugging_line,
    }
    assert engine.library_search("api time") == ["runbook/api-timeouts"]


def test_a_one_or_two_letter_prefix_finds_the_same_memories_unranked(engine):
    # the first letters typed match nearly everything: found without ranking, the same set either way
    for query in ("a", "au", "ap"):
        expr = match_expression(query)
        ranked = {name for _, name, _ in engine.index.search(expr, 500, ranked=True)}
        quick = engine.index.search(expr, 500, ranked=False)
        assert {name for _, name, _ in quick} == ranked and ranked
        assert {score for *_, score in quick} == {0.0}
    assert set(engine.library_search("au")) >= {
        "decision/use-jwt-for-api-auth",
        "claude/debugging.md",
    }


def test_the_title_weighs_most_and_archived_memories_are_found(engine):
    assert engine.library_search("timeouts")[0] == "runbook/api-timeouts"
    assert engine.library_search("internet") == [
        "constraint/no-network-in-ci"
    ]  # archived, still in the library


def test_an_empty_query_lists_every_ref_and_claudes_lines_match_as_plain_text(engine):
    every = [e.ref for e in engine.library()]
    assert engine.library_search("") == every and engine.library_search("   ") == every
    (line,) = [e for e in engine.library() if e.line == 4]
    assert engine.library_search("suite with -x") == [line.ref]
    assert engine.library_search("SUITE") == [line.ref]


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '""',
        'a"b',
        "*",
        "auth*",
        "-x",
        "NOT",
        "api NOT",
        "NEAR(api auth)",
        "(",
        ")",
        "((api",
        "api)",
        "api OR",
        "AND",
        "^api",
        "title:api",
        "{api}",
        "api + -",
        "\x00",
        "\u202e",
        "'",
        "a'b",
        ":",
        "col:",
        "*" * 300,
        "x " * 400,
    ],
)
def test_odd_queries_never_raise_and_only_name_memories_of_the_library(engine, query):
    refs = engine.library_search(query)
    assert set(refs) <= {e.ref for e in engine.library()}


def test_a_limit_keeps_the_best(engine):
    assert engine.library_search("api", limit=1) == [engine.library_search("api")[0]]


# -- Claude's topic files in the pipeline's decisions -----------------------------------------------

DEMO = asset(os.path.join("demo", "session.jsonl"))


def decided(project: Path, root: Path, topic: str | None = None) -> tuple:
    engine = library_engine(project, root)
    if topic is not None:
        (root / "auth-notes.md").write_text(topic)
    capture(engine.data, engine.cfg, DEMO, event="backfill", summary=True)
    (tid,) = staging.triage_ids(engine.data)
    engine.process(tid)
    review = engine.review(tid, "decision")
    return engine, tid, review


def test_a_draft_saying_what_claudes_topic_file_says_is_a_noop_naming_it(tmp_path):
    first = tmp_path / "first"
    (first / ".git").mkdir(parents=True)
    engine, _tid, review = decided(first, tmp_path / "m1")
    engine.close()
    draft = memfile.parse(review["text"])
    assert review["decision"]["action"] == "create"

    second = tmp_path / "second"
    (second / ".git").mkdir(parents=True)
    topic = f"---\nname: {draft.title}\ndescription: Claude's own note\ntype: project\n---\n{draft.body}\n"
    engine, tid, review = decided(second, tmp_path / "m2", topic)
    try:
        d = review["decision"]
        assert d["action"] == "noop" and d["target"] == "claude/auth-notes.md"
        assert any("claude/auth-notes.md" in r for r in d["reasons"])
        assert not review["blocked"]
        engine.approve(tid, "decision")  # saves nothing: the fact is Claude's already
        assert (tmp_path / "m2" / "auth-notes.md").read_text() == topic
        assert not (tmp_path / "m2" / "decision").exists() or not os.listdir(
            tmp_path / "m2" / "decision"
        )
    finally:
        engine.close()


def test_a_draft_near_claudes_topic_file_is_created_with_the_advisory_naming_it(tmp_path):
    first = tmp_path / "first"
    (first / ".git").mkdir(parents=True)
    engine, _tid, review = decided(first, tmp_path / "m1")
    engine.close()
    draft = memfile.parse(review["text"])

    second = tmp_path / "second"
    (second / ".git").mkdir(parents=True)
    near = (
        f"# Notes of mine\n\n{draft.title}.\n{draft.body}\nAlso: keep the token lifetime short.\n"
    )
    engine, tid, review = decided(second, tmp_path / "m2", near)
    try:
        assert review["decision"]["action"] == "create"
        advice = [i for i in review["issues"] if i["code"] == "near-duplicate"]
        assert (
            advice
            and "claude/auth-notes.md" in advice[0]["message"]
            and advice[0]["severity"] == "ADVISORY"
        )
        with pytest.raises(MemcurateError):  # refused, as memcurate refuses
            # never Claude's file
            engine.change_action(tid, "decision", "update", "claude/auth-notes.md")
        assert (tmp_path / "m2" / "auth-notes.md").read_text() == near
    finally:
        engine.close()
