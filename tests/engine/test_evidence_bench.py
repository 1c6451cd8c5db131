"""The evidence bench's core (bench/evidence_bench.py): what reaches a request, and whose draft it is.

A synthetic session goes through the real pipeline with the recording stand-in; the reach of labelled
quotes is then read off the requests recorded. No ../shared needed."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest
from synthetic import Transcript, text, tool

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import evidence_bench as eb  # noqa: E402

DECIDED = (
    "We decided to keep Postgres instead of SQLite because the importer needs concurrent writers."
)
FIXED = (
    "The flaky upload test passes once the socket timeout is raised to thirty seconds in conftest."
)
HIDDEN = "the vendored yaml parser in third_party is pinned to 5.1 on purpose"


def session(path: Path) -> Path:
    t = Transcript()
    t.user(f"Set up the storage layer. {DECIDED}")
    t.assistant(
        text("I'll read the settings first."),
        tool("t1", "Read", file_path="/home/dev/app/settings.py"),
    )
    t.result("t1", f"# settings\n# {HIDDEN}\nDATABASE = 'postgres'\n")
    t.assistant(text("The storage layer now uses Postgres with a connection pool of four."))
    t.user("Now make the upload test stop failing.")
    t.assistant(text(FIXED))
    t.user("Thanks, that is all for today.")
    t.assistant(text("Done: Postgres storage is in place and the upload test is fixed."))
    return t.write(path)


def fact(
    fid: str,
    category: str,
    quote: str,
    line: int,
    record: str = "user",
    tool_name: str | None = None,
):
    return eb.Fact(fid, category, "", line, record, tool_name, quote)


def line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_a_quote_sent_counts_and_one_sent_nowhere_does_not(tmp_path):
    path = session(tmp_path / "s.jsonl")
    facts = (
        fact(
            "s-1", "decision", "keep Postgres instead of  SQLite", line_of(path, "decided to keep")
        ),
        fact("s-2", "constraint", HIDDEN, line_of(path, "third_party"), "tool_result", "Read"),
    )
    # The oracle look confirms the decision (its quote is in the digest): a keyword category a look that read
    # the whole session did not confirm is not drafted (tests/engine/test_look_skip.py).
    run = eb.run_session(path, facts, tmp_path / "site", look="oracle")
    rows = {r["id"]: r for r in eb.reach(facts, run, eb.line_offsets(path))}

    assert [c.kind for c in run.calls].count("look") == 1  # the second look ran, and was recorded
    decision = [c for c in run.calls if c.kind == "draft" and c.category == "decision"]
    assert len(decision) == 1 and decision[0].prompt.startswith("Category: decision")
    assert decision[0].chars > len(decision[0].prompt)  # the system prompt and schema count as sent
    # white space and case do not matter: the label has two spaces where the transcript has one
    assert rows["s-1"]["some"] and rows["s-1"]["own"] and "draft:decision" in rows["s-1"]["via"]
    # a Read's output is sent to no request
    assert not rows["s-2"]["some"] and not rows["s-2"]["own"] and rows["s-2"]["tool_record"]
    fig = eb.figures(
        [{**r, "split": "tune"} for r in rows.values()],
        [
            {
                "bytes": run.size,
                "chars": {"all": sum(c.chars for c in run.calls)},
                "calls": {"look": 1, "draft": len(decision)},
                "digest_chars": None,
            }
        ],
    )
    assert fig["some"] == 0.5 and fig["tool_some"] == 0.0
    assert fig["tokens_per_mb"] == round(sum(c.chars for c in run.calls) / 4 / (run.size / 1e6))


def test_own_draft_is_the_facts_category_in_the_triage_holding_its_line():
    prompts = {
        "look": "[turn 1 · user] alpha beta\n[turn 2 · assistant] gamma delta",
        "decision": "Category: decision\nalpha beta",
        "runbook": "Category: runbook\nsomething else",
    }
    run = eb.Run(
        Path("x.jsonl"),
        2000,
        {"t1": [0, 1000], "t2": [1000, 2000]},
        [
            eb.Call("look", "t1", None, prompts["look"], 100),
            eb.Call("draft", "t1", "decision", prompts["decision"], 100),
            eb.Call("draft", "t1", "runbook", prompts["runbook"], 100),
            eb.Call("draft", "t2", "decision", "Category: decision\nnothing of it", 100),
        ],
        {},
        {},
        [],
    )
    offsets = [0, 500, 1500]  # line 3 is in the second triage
    facts = (
        fact("a", "decision", "alpha beta", 1),
        fact("b", "runbook", "alpha beta", 1),
        fact("c", "preference", "alpha beta", 2),
        fact("d", "decision", "alpha beta", 3),
        fact("e", "decision", "gamma delta", 2),
        fact("f", "decision", "not anywhere", 1),
    )
    rows = {r["id"]: r for r in eb.reach(facts, run, offsets)}
    assert rows["a"]["own"] and rows["a"]["via"] == ["draft:decision", "look"]
    # its category's draft lacks it
    assert rows["b"]["some"] and rows["b"]["own_sent"] and not rows["b"]["own"]
    # no preference draft
    assert rows["c"]["some"] and not rows["c"]["own_sent"] and not rows["c"]["own"]
    # t1's draft is not its own
    assert rows["d"]["triage"] == "t2" and rows["d"]["some"] and not rows["d"]["own"]
    assert rows["e"]["via"] == ["look"] and not rows["e"]["own"]  # the look alone is not a draft
    assert not rows["f"]["some"] and not rows["f"]["own"]


def test_the_oracle_look_hands_a_category_the_keywords_missed_to_a_draft(tmp_path):
    path = session(tmp_path / "s.jsonl")
    facts = (
        fact(
            "s-3",
            "tech_debt",
            "connection pool of four",
            line_of(path, "pool of four"),
            "assistant",
        ),
    )
    without = eb.run_session(path, facts, tmp_path / "none", look="none")
    assert not any(c.kind == "draft" and c.category == "tech_debt" for c in without.calls)
    run = eb.run_session(path, facts, tmp_path / "oracle", look="oracle")
    [row] = eb.reach(facts, run, eb.line_offsets(path))
    assert row["own_sent"] and row["own"]
    added = next(iter(run.look.values()))["added"]
    assert list(added) == ["tech_debt"] and added["tech_debt"]["signals"] == {"second_look": True}


def test_the_digest_is_measured_when_the_module_exists(tmp_path, monkeypatch):
    path = session(tmp_path / "s.jsonl")
    seen = {}

    def digest(p, cfg):
        seen["args"] = (p, cfg.get("backend"))
        return types.SimpleNamespace(text=f"[1 user] {DECIDED}", segments=[])

    module = types.ModuleType("memcurate.curator.capture.digest")
    module.digest = digest
    monkeypatch.setitem(sys.modules, "memcurate.curator.capture.digest", module)
    assert eb.digest_module() is module
    labels = tmp_path / "labels.json"
    labels.write_text(
        json.dumps(
            {
                "version": 1,
                "sessions": [
                    {
                        "transcript": path.name,
                        "split": "held_out",
                        "project": "synthetic",
                        "facts": [
                            {
                                "id": "s-1",
                                "category": "decision",
                                "statement": "",
                                "line": line_of(path, "decided to keep"),
                                "record": "user",
                                "tool": None,
                                "quote": "keep Postgres instead of SQLite",
                            },
                            {
                                "id": "s-2",
                                "category": "constraint",
                                "statement": "",
                                "line": line_of(path, "third_party"),
                                "record": "tool_result",
                                "tool": "Read",
                                "quote": HIDDEN,
                            },
                        ],
                    }
                ],
            }
        )
    )
    out = tmp_path / "evidence.json"
    assert (
        eb.main(
            [
                "--labels",
                str(labels),
                "--shared",
                str(tmp_path),
                "--json-out",
                str(out),
                "--workdir",
                str(tmp_path),
            ]
        )
        == 0
    )
    doc = json.loads(out.read_text())
    assert seen["args"] == (str(path), "claude-cli")
    assert {r["id"]: r["digest"] for r in doc["facts"]} == {"s-1": True, "s-2": False}
    assert doc["figures"]["held_out"]["digest"]["some"] == 0.5
    assert doc["figures"]["all"]["facts"] == 2


def test_labels_in_another_format_are_refused(tmp_path):
    bad = tmp_path / "labels.json"
    bad.write_text(
        json.dumps(
            {"version": 1, "sessions": [{"transcript": "a.jsonl", "split": "test", "facts": []}]}
        )
    )
    with pytest.raises(ValueError, match="split"):
        eb.load_labels(bad)


def test_with_verification_on_each_draft_is_checked_and_the_check_is_a_request(tmp_path):
    path = session(tmp_path / "s.jsonl")
    facts = (
        fact(
            "s-1", "decision", "keep Postgres instead of SQLite", line_of(path, "decided to keep")
        ),
    )
    run = eb.run_session(path, facts, tmp_path / "site", verify=True, look="oracle")
    drafts = sorted(c.category for c in run.calls if c.kind == "draft")
    assert sorted(c.category for c in run.calls if c.kind == "check") == drafts
    [row] = eb.reach(facts, run, eb.line_offsets(path))
    assert "check:decision" in row["via"] and row["own"]
    states = next(iter(run.states.values()))
    assert {states[c] for c in drafts} == {"ready"}  # the stand-in's answers are valid drafts
    assert set(states.values()) <= {
        "ready",
        "skipped",
    }  # the rest: not confirmed by the look, not drafted
