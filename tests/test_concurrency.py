"""Concurrency (issue 9): the TUI's worker threads on one engine and other memcurate processes at once.

A triage's claim and the memory root's lock are held by one thread at a time: another thread of
the same process waits for them exactly like another process (two quick approvals in the TUI used
to read-modify-write MEMORY.md together and lose a line).
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from curator import memory_md, staging
from curator.categories import NAMES
from curator.engine import Engine
from curator.locks import FileLock, LockBusy
from curator.pipeline import Claim, process
from curator.review import approve

from test_engine import stage

# A process that approves what it reads on stdin ("<triage> <category>" a line) and says what it saved.
APPROVER = r"""
import json, sys
from curator.engine import Engine
from curator.review import approve

engine = Engine(sys.argv[1])
print("ready", flush=True)
for line in sys.stdin:
    tid, cat = line.split()
    try:
        out = {"path": approve(engine, tid, cat).saved[0].path}
    except Exception as e:  # said to the test, which fails on it
        out = {"error": f"{tid}/{cat}: {type(e).__name__}: {e}"}
    print(json.dumps(out), flush=True)
"""

def roomy_engine(project: Path, tmp_path: Path) -> Engine:
    """An offline engine whose MEMORY.md has room for every memory the tests save (nothing archived)."""
    budgets = "".join(f"  {name}:\n    budget: 1000\n" for name in NAMES)
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {tmp_path / 'memory'}\ndrafting:\n  backoff_seconds: 0.0\n"
        f"memory_md:\n  max_lines: 100000\n  max_bytes: 10000000\ncategories:\n{budgets}")
    return Engine(project)


class Template:
    """One demo triage drafted by the pipeline (six ready candidates), copied under new triage ids,
    each copy's candidates naming new memories: many triages to approve, without drafting each."""

    def __init__(self, engine: Engine) -> None:
        (self.tid,) = stage(engine)
        assert set(process(engine, self.tid).values()) == {"ready"}
        folder = Path(staging.triage_dir(engine.data, self.tid))
        self.files = {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*")
                      if p.is_file() and p.name != ".claim"}
        self.engine = engine
        self.cats = sorted(staging.category_states(engine.data, self.tid))

    def copy(self, n: int, cats=None) -> str:
        """The template as triage `<template id>-<n>`, with the files of `cats` (default: all)."""
        tid = f"{self.tid}-{n:04d}"
        folder = Path(staging.triage_dir(self.engine.data, tid))
        for sub in ("drafts", "review"):
            (folder / sub).mkdir(parents=True)
        for rel, data in self.files.items():
            cat = Path(rel).name.split(".")[0]
            if "/" in rel and cats is not None and cat not in cats:
                continue
            if rel == "triage.json":
                data = data.replace(self.tid.encode(), tid.encode())
            elif rel == f"drafts/{cat}.md":
                data = re.sub(rb"(?m)^id: .*$", f"id: r{n:04d}-{cat.replace('_', '-')}".encode(), data, count=1)
            (folder / rel).write_bytes(data)
        return tid


def start_approver(project: Path) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", APPROVER, str(project)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "ready\n"
    return p


def stop(procs) -> None:
    for p in procs:
        if p.stdin:
            p.stdin.close()
        p.wait(timeout=60)


def listed(memory: Path) -> list[tuple[str, str]]:
    parsed = memory_md.parse((memory / "MEMORY.md").read_text())
    return [(e.category, e.id) for s in parsed.sections.values() for e in s.entries]


def saved_memory(path: str) -> tuple[str, str]:
    return Path(path).parent.name, Path(path).stem


# -- the claim and the root lock: per thread ------------------------------------------------------

def other_thread(fn):
    """Run `fn` in another thread; returns (what it returned or raised, seconds it took)."""
    out = {}

    def run():
        t0 = time.monotonic()
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            out["value"] = e
        out["seconds"] = time.monotonic() - t0

    t = threading.Thread(target=run)
    t.start()
    t.join(30)
    return out["value"], out["seconds"]


def test_a_claim_is_reentrant_in_its_thread_and_held_against_other_threads_and_processes(project, tmp_path):
    engine = roomy_engine(project, tmp_path)
    tid = "20260101T000000Z-0000abcd"
    claim_file = os.path.join(staging.triage_dir(engine.data, tid), ".claim")

    def take(wait):
        with Claim(engine, tid, wait=wait):
            return "got it"

    with Claim(engine, tid):
        with Claim(engine, tid):  # the same thread again: no deadlock
            value, seconds = other_thread(lambda: take(0.3))
            assert isinstance(value, LockBusy) and seconds >= 0.3  # another thread waited, then gave up
        # one level left: still held, against this engine's other threads and against other processes
        assert isinstance(other_thread(lambda: take(0))[0], LockBusy)
        with pytest.raises(LockBusy):
            with FileLock(claim_file):
                pass
        value, _ = other_thread(lambda: engine.claims[tid].release())
        assert isinstance(value, RuntimeError)  # only its holder releases it
    assert other_thread(lambda: take(0))[0] == "got it"
    with FileLock(claim_file):  # released for other processes too
        pass


def test_another_thread_waiting_for_the_root_lock_gets_it_when_released(project, tmp_path):
    engine = roomy_engine(project, tmp_path)
    order = []
    holding = engine.root_lock(wait=0)
    holding.__enter__()
    with engine.root_lock(wait=0):  # re-entrant in this thread
        pass

    def waiter():
        with engine.root_lock(wait=30):
            order.append("other thread in")

    t = threading.Thread(target=waiter)
    t.start()
    t.join(0.2)  # give it time to start waiting (it must not get in: the lock is held)
    assert t.is_alive() and order == []
    order.append("released")
    holding.__exit__(None, None, None)
    t.join(30)
    assert order == ["released", "other thread in"]


# -- two threads and two processes approving one triage -------------------------------------------

def test_two_threads_and_two_processes_approving_one_triage_lose_nothing(project, tmp_path):
    """500 approvals: each round, two threads on one engine (as the TUI's workers are) and two
    processes each approve a different candidate of one triage at the same moment."""
    engine = roomy_engine(project, tmp_path)
    template = Template(engine)
    rng = random.Random(9)
    procs = [start_approver(project) for _ in range(2)]
    results: list[dict] = []

    def approve_one(tid, cat):
        try:
            results.append({"path": approve(engine, tid, cat).saved[0].path})
        except Exception as e:  # noqa: BLE001 - reported by the assertion below
            results.append({"error": f"{tid}/{cat}: {type(e).__name__}: {e}"})

    rounds = []
    try:
        for n in range(125):
            cats = rng.sample(template.cats, 4)
            tid = template.copy(n, cats)
            rounds.append((tid, cats))
            for p, cat in zip(procs, cats[2:]):
                p.stdin.write(f"{tid} {cat}\n")
                p.stdin.flush()
            threads = [threading.Thread(target=approve_one, args=(tid, cat)) for cat in cats[:2]]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            results.extend(json.loads(p.stdout.readline()) for p in procs)
    finally:
        stop(procs)
    saved = [saved_memory(r["path"]) for r in results if "path" in r]
    memory = Path(engine.root)
    assert sorted(listed(memory)) == sorted(saved)  # every approved memory is listed in MEMORY.md, once
    assert {(p.parent.name, p.stem) for p in memory.glob("*/*.md")} == set(saved)  # and its file exists
    errors = [r["error"] for r in results if "error" in r]
    assert not errors, errors[:5]
    assert len(set(saved)) == 500
    for tid, cats in rounds:  # and each triage's moves were not mixed up
        states = staging.category_states(engine.data, tid)
        assert {c for c, r in states.items() if r["state"] == "saved"} == set(cats), tid
