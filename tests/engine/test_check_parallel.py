"""`memcurate check` with its work shared with forked children (curator/hygiene/forked.py): the same
findings, in the same order, as the check run in one process; a child that fails is an error the person
sees, never findings silently missing."""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
from pathlib import Path

import pytest
from scenarios import decision_text, decisions_project, git

from memcurate.curator.engine import Engine
from memcurate.curator.hygiene import duplicates, forked
from memcurate.curator.memory import memfile
from memcurate.curator.memory.index.schema import INDEX_FILE
from memcurate.curator.util import cores

KEY = "AKIAIOSFODNN7EXAMPLE"
TOPICS = "queue cache billing search upload export import render deploy backup".split()


@pytest.fixture
def project(tmp_path) -> Path:
    """A project with a file a memory names since deleted, a secret, near-duplicates, a contradiction
    and memories about other things."""
    project, root = decisions_project(tmp_path)
    (project / "src").mkdir()
    (project / "src" / "auth.py").write_text("def login():\n    return 1\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "first")
    (project / "src" / "auth.py").unlink()
    git(project, "commit", "-qam", "drop auth")

    def put(id_: str, title: str, body: str) -> None:
        (root / "decision" / f"{id_}.md").write_text(decision_text(id_, title, body))

    put("login", "Login lives in the auth module", "Login is handled in `src/auth.py`. Keep it.")
    put("key", "The staging key", f"The staging AWS key is {KEY} for now.")
    same = "Use SQLite in memory for the tests, never a real database server."
    put("sqlite-a", "Use SQLite in memory for tests", same)
    put("sqlite-b", "Tests use SQLite in memory", same)
    put("retry-a", "The lilo worker indexes vulo melu", "The lilo worker indexes vulo melu.")
    put(
        "retry-bb", "The lilo worker does not index vulo melu", "The lilo worker does not index it."
    )
    for i, topic in enumerate(TOPICS * 3):
        put(
            f"m{i}",
            f"The {topic} service keeps {topic} logs {i}",
            f"Keep {topic} logs for {i} days.",
        )
    return project


def run_check(
    project: Path, monkeypatch, parallel: bool, kept: bool = False
) -> tuple[list[dict], list[str], int]:
    """The check's findings and errors, and how many children it forked; without the words a check
    before kept (test_check_kept.py) unless `kept`."""
    forks = []
    real = forked.Child

    def counted(fn):
        forks.append(fn)
        return real(fn)

    monkeypatch.setattr(forked, "worth_it", lambda n: parallel)
    monkeypatch.setattr(forked, "Child", counted)
    summary: dict = {}
    engine = Engine(project)
    if not kept:
        engine.index.forget_kept_words()
    try:
        found = engine.check(stage=True, summary=summary)
    finally:
        engine.close()
    return [f.to_dict() for f in found], summary["errors"], len(forks)


def test_a_check_shared_with_forked_children_finds_what_one_process_finds(project, monkeypatch):
    serial, serial_errors, serial_forks = run_check(project, monkeypatch, parallel=False)
    parallel, parallel_errors, parallel_forks = run_check(project, monkeypatch, parallel=True)
    codes = {f["code"] for f in serial}
    assert {"stale-file", "secret", "duplicate", "contradiction"} <= codes
    # the memories, the other detectors, the pairs gated, the close pairs judged
    assert serial_forks == 0 and parallel_forks == 4
    # the same findings in the same order, with the same proposals (staged once, by the first run)
    assert parallel == serial and parallel_errors == serial_errors == []
    # the child that looked for the secrets kept every other memory's words, through a connection of
    # its own; the next check reads them back and finds the same
    assert kept_rows(project) == len(TOPICS) * 3 + 5
    assert run_check(project, monkeypatch, parallel=True, kept=True)[:2] == (serial, [])


def kept_rows(project: Path) -> int:
    engine = Engine(project)
    db = Path(engine.data) / INDEX_FILE
    engine.close()
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM compared").fetchone()[0]


def test_what_a_child_raises_is_raised_by_the_check(project, monkeypatch):
    def broken(engine, entry):
        raise RuntimeError("a bug in the child")

    monkeypatch.setattr(duplicates, "_packed", broken)
    with pytest.raises(RuntimeError, match="a bug in the child"):
        run_check(project, monkeypatch, parallel=True)


def test_a_child_that_dies_is_an_error_and_the_other_findings_stay(project, monkeypatch):
    serial, _, _ = run_check(project, monkeypatch, parallel=False)

    def dies(engine, entry):
        os._exit(3)

    monkeypatch.setattr(duplicates, "_packed", dies)
    found, errors, _ = run_check(project, monkeypatch, parallel=True)
    assert errors == [
        "duplicates: a check's worker process ended without its result (exit status 3)"
    ]
    # the other detectors' findings are all there; no pair is reported from half the memories
    assert found == [f for f in serial if f["code"] not in ("duplicate", "contradiction")]


def test_a_small_store_a_busy_machine_or_a_threaded_caller_runs_in_one_process(monkeypatch):
    monkeypatch.setattr(cores, "cpus", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.4, 0.4, 0.4))
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert forked.worth_it(forked.MIN_ITEMS) and not forked.worth_it(forked.MIN_ITEMS - 1)
    monkeypatch.setattr(cores, "cpus", lambda: 1)
    assert not forked.worth_it(10_000)
    monkeypatch.setattr(cores, "cpus", lambda: 2)
    # both cores busy already: a child would only compete for them
    monkeypatch.setattr(os, "getloadavg", lambda: (2.1, 1.0, 1.0))
    assert not forked.worth_it(10_000)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.4, 0.4, 0.4))
    # the TUI calls the engine from a worker thread: a fork would copy the locks other threads hold
    monkeypatch.setattr(threading, "active_count", lambda: 2)
    assert not forked.worth_it(10_000)


@pytest.mark.parametrize("slow", ["neither", "here", "there"])
def test_shared_items_are_each_worked_once_in_order_whoever_is_faster(slow):
    """forked.share: the parent from the front, a forked child from the back, until they meet. Whichever
    side is slower, every item's result comes back once, in the items' order, and the child has one."""
    items = list(range(3000))

    def work(side):
        def fn(x):
            if slow == side:
                sum(range(2000))  # a side that takes longer: the other takes more of the items
            return side, x

        return fn

    mine, theirs = forked.share(items, work("here"), work("there"))
    assert [x for _, x in mine + theirs] == items
    assert {s for s, _ in mine} <= {"here"} and {s for s, _ in theirs} == {"there"}
    assert forked.share([], work("here"), work("there")) == ([], [])


def test_each_memory_is_parsed_once_whichever_process_parses_it(project, monkeypatch, tmp_path):
    """Cold (every memory parsed, part of them by a child) and with the words the run before kept (only
    the memories of close pairs parsed, part of them by the child that judges them, which hands the
    documents of its pairs back): no text is parsed twice, in one process or across them."""
    log = tmp_path / "parsed.log"
    real = memfile.parse

    def logged(text):
        # the check's own parsing (the index parses a file written less than two seconds ago again)
        if sys._getframe(1).f_globals.get("__name__", "").startswith("memcurate.curator.hygiene"):
            with open(log, "a") as f:  # appended by every process, the forked children too
                f.write(f"{os.getpid()} {hash(text)}\n")
        return real(text)

    monkeypatch.setattr(memfile, "parse", logged)
    for kept in (False, True):
        log.write_text("")
        run_check(project, monkeypatch, parallel=True, kept=kept)
        texts = [line.split()[1] for line in log.read_text().splitlines()]
        assert texts and len(texts) == len(set(texts)), (kept, len(texts), len(set(texts)))
