"""Concurrency (issue 9): the TUI's worker threads on one engine, other memcurate processes, and
Claude's own writes to MEMORY.md, all at once.

- A triage's claim and the memory root's lock are held by one thread at a time: another thread of
  the same process waits for them exactly like another process (two quick approvals in the TUI
  used to read-modify-write MEMORY.md together and lose a line).
- MEMORY.md is replaced only if it is still the file planned from, and what another program
  appends to it meanwhile, even into the file a rename just replaced, is kept.
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
from test_engine import stage

from memcurate.curator.candidates import staging
from memcurate.curator.categories import NAMES
from memcurate.curator.engine import Engine
from memcurate.curator.memory import memory_md
from memcurate.curator.memory.memory_md import writing as md_writing
from memcurate.curator.util import atomic
from memcurate.curator.util.locks import FileLock, LockBusy

# A process that approves what it reads on stdin ("<triage> <category>" a line) and says what it saved.
APPROVER = r"""
import json, sys
from memcurate.curator.engine import Engine

engine = Engine(sys.argv[1])
print("ready", flush=True)
for line in sys.stdin:
    tid, cat = line.split()
    try:
        out = {"path": engine.approve(tid, cat).saved[0].path}
    except Exception as e:  # said to the test, which fails on it
        out = {"error": f"{tid}/{cat}: {type(e).__name__}: {e}"}
    print(json.dumps(out), flush=True)
"""

# What Claude's auto memory does: append a line to MEMORY.md in place, again and again.
APPENDER = r"""
import os, sys, time
path, stop = sys.argv[1], sys.argv[2]
n = 0
while n == 0 or not os.path.exists(stop):
    with open(path, "a") as f:
        f.write(f"- a note of Claude's, number {n}\n")
    n += 1
    if n == 1:
        print("started", flush=True)
    time.sleep(0.003)
print(n, flush=True)
"""

NOTE = re.compile(r"^- a note of Claude's, number (\d+)$", re.M)


def roomy_engine(project: Path, tmp_path: Path) -> Engine:
    """An offline engine whose MEMORY.md has room for every memory the tests save (nothing archived)."""
    budgets = "".join(f"  {name}:\n    budget: 1000\n" for name in NAMES)
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {tmp_path / 'memory'}\ndrafting:\n  backoff_seconds: 0.0\n"
        f"memory_md:\n  max_lines: 100000\n  max_bytes: 10000000\ncategories:\n{budgets}"
    )
    return Engine(project)


class Template:
    """One demo triage drafted by the pipeline (six ready candidates), copied under new triage ids,
    each copy's candidates new memories of facts of their own: many triages to approve, without drafting each."""

    def __init__(self, engine: Engine) -> None:
        (self.tid,) = stage(engine)
        assert set(engine.process(self.tid).values()) == {"ready"}
        folder = Path(staging.triage_dir(engine.data, self.tid))
        self.files = {
            str(p.relative_to(folder)): p.read_bytes()
            for p in folder.rglob("*")
            if p.is_file() and p.name != ".claim"
        }
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
                data = re.sub(
                    rb"(?m)^id: .*$",
                    f"id: r{n:04d}-{cat.replace('_', '-')}".encode(),
                    data,
                    count=1,
                )
                data = _own_words(data, n)
            (folder / rel).write_bytes(data)
        return tid


def _own_words(text: bytes, n: int) -> bytes:
    """A copy's title and body in words of its own, from a session of its own: a new fact, not the
    template's said again (that would be one memory, its repeats noops, and a session has one summary)."""
    from memcurate.curator.memory import memfile

    doc = memfile.parse(text.decode("utf-8"))

    def own(t: str) -> str:
        return re.sub(r"\b([A-Za-z]{4,})\b", lambda m: f"{m.group(1)}x{n:04d}", t)

    doc.title = own(doc.title)[:120]
    doc.body = "\n".join(
        line if line.startswith("## ") else own(line) for line in doc.body.split("\n")
    )
    doc.sources = [{**s, "session": f"00000000-0000-4000-8000-{n:012d}"} for s in doc.sources]
    return memfile.render(doc).encode("utf-8")


def start_approver(project: Path) -> subprocess.Popen:
    p = subprocess.Popen(
        [sys.executable, "-c", APPROVER, str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
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


def test_a_claim_is_reentrant_in_its_thread_and_held_against_other_threads_and_processes(
    project, tmp_path
):
    engine = roomy_engine(project, tmp_path)
    tid = "20260101T000000Z-0000abcd"
    claim_file = os.path.join(staging.triage_dir(engine.data, tid), ".claim")

    def take(wait):
        with engine.claim(tid, wait=wait):
            return "got it"

    with engine.claim(tid):
        with engine.claim(tid):  # the same thread again: no deadlock
            value, seconds = other_thread(lambda: take(0.3))
            # another thread waited, then gave up
            assert isinstance(value, LockBusy) and seconds >= 0.3
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
            results.append({"path": engine.approve(tid, cat).saved[0].path})
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
    # every approved memory is listed in MEMORY.md, once
    assert sorted(listed(memory)) == sorted(saved)
    # and its file exists
    assert {(p.parent.name, p.stem) for p in memory.glob("*/*.md")} == set(saved)
    errors = [r["error"] for r in results if "error" in r]
    assert not errors, errors[:5]
    assert len(set(saved)) == 500
    for tid, cats in rounds:  # and each triage's moves were not mixed up
        states = staging.category_states(engine.data, tid)
        assert {c for c, r in states.items() if r["state"] == "saved"} == set(cats), tid


# -- Claude's own writes to MEMORY.md while memcurate saves ---------------------------------------


def test_lines_claude_appends_while_two_processes_save_are_all_kept_in_order(project, tmp_path):
    engine = roomy_engine(project, tmp_path)
    template = Template(engine)
    memory = Path(engine.root)
    memory.mkdir(parents=True, exist_ok=True)
    md = memory / "MEMORY.md"
    stop_file = tmp_path / "stop-appending"
    work = [template.copy(n) for n in range(24)]
    appender = subprocess.Popen(
        [sys.executable, "-c", APPENDER, str(md), str(stop_file)], stdout=subprocess.PIPE, text=True
    )
    procs = []
    try:
        assert appender.stdout.readline() == "started\n"
        procs = [start_approver(project) for _ in range(2)]
        # each process approves its triages' candidates one at a time
        for i, tid in enumerate(work):
            p = procs[i % 2]
            p.stdin.write("".join(f"{tid} {cat}\n" for cat in template.cats))
            p.stdin.flush()
        results = [
            json.loads(p.stdout.readline())
            for p in procs
            for _ in range(len(work) // 2 * len(template.cats))
        ]
    finally:
        stop(procs)
        stop_file.write_text("")
        appended = int(appender.communicate(timeout=60)[0])
    errors = [r["error"] for r in results if "error" in r]
    assert not errors, errors[:5]
    text = md.read_text()
    notes = [int(n) for n in NOTE.findall(text)]
    assert appended > 50
    assert sorted(notes) == list(range(appended)), [(i, n) for i, n in enumerate(notes) if n != i][
        :10
    ]
    assert notes == list(range(appended))  # every line Claude appended, once, in order
    saved = sorted(saved_memory(r["path"]) for r in results)
    assert len(saved) == len(work) * len(template.cats)
    assert sorted(listed(memory)) == saved  # and memcurate's sections hold every saved memory


# -- the compare-and-replace itself ---------------------------------------------------------------


def upper(data: bytes | None) -> bytes:
    return (data or b"").upper()


def test_a_file_another_writer_renames_into_place_meanwhile_is_rendered_again(tmp_path):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"one\n")
    seen = []

    def render(data):
        seen.append(data)
        if len(seen) == 1:  # another program replaces the file while this render runs
            (tmp_path / "theirs").write_bytes(b"one\ntheirs\n")
            os.replace(tmp_path / "theirs", path)
        return upper(data)

    assert atomic.replace_if_unchanged(path, render)
    assert seen == [b"one\n", b"one\ntheirs\n"]
    assert path.read_bytes() == b"ONE\nTHEIRS\n"


def test_a_missing_file_another_writer_creates_meanwhile_is_not_replaced_unseen(tmp_path):
    path = tmp_path / "MEMORY.md"
    seen = []

    def render(data):
        seen.append(data)
        if len(seen) == 1:
            path.write_bytes(b"theirs\n")
        return upper(data) + b"ours\n"

    assert atomic.replace_if_unchanged(path, render)
    assert seen == [None, b"theirs\n"] and path.read_bytes() == b"THEIRS\nours\n"


def test_lines_appended_while_ours_is_made_go_at_its_end(tmp_path):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"claude 1\n<ours>\n")
    seen = []

    def render(data):
        seen.append(data)
        if len(seen) == 1:
            with open(path, "ab") as f:  # Claude appends a line while memcurate makes its version
                f.write(b"claude 2\n")
        return data.replace(b"<ours>", b"<OURS>")

    assert atomic.replace_if_unchanged(path, render)
    assert path.read_bytes() == b"claude 1\n<OURS>\nclaude 2\n"
    assert seen == [
        b"claude 1\n<ours>\n",
        b"claude 1\n<OURS>\nclaude 2\n",
    ]  # then checked as it stands


def test_lines_appended_while_ours_is_made_that_change_it_are_rendered_again(tmp_path):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"<ours 0>\nclaude 1\n")
    calls = []

    def render(data):  # the section counts Claude's lines, so an appended line changes it
        calls.append(data)
        if len(calls) == 1:
            with open(path, "ab") as f:
                f.write(b"claude 2\n")
        return b"<ours %d>\n" % data.count(b"claude") + data.split(b"\n", 1)[1]

    assert atomic.replace_if_unchanged(path, render)
    assert path.read_bytes() == b"<ours 2>\nclaude 1\nclaude 2\n"


def late_writes(monkeypatch, path: Path, data: bytes, mode: str = "ab", then: bytes = b""):
    """A writer that opened `path` before memcurate's rename and writes `data` just after it, into
    the file the rename replaced (where a real writer's write can land), then appends `then` to
    the path (memcurate's new file). Returns `opener`, for the render to call: the writer opens the
    file as it is then."""
    held = []
    real = atomic.fsync_dir

    def opener():
        if not held:
            held.append(open(path, mode, buffering=0))  # noqa: SIM115 - closed after its one write

    def fsync_dir(folder):  # runs right after the rename
        if held and not held[0].closed:
            held[0].write(data)
            held[0].close()
            with open(path, "ab") as f:
                f.write(then)
        real(folder)

    monkeypatch.setattr(atomic, "fsync_dir", fsync_dir)
    return opener


def test_lines_written_into_the_replaced_file_after_the_rename_are_kept_in_order(
    tmp_path, monkeypatch
):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"claude 1\n<ours>\n")
    opener = late_writes(monkeypatch, path, b"claude 2\n", then=b"claude 3\n")

    def render(data):
        opener()
        return data.replace(b"<ours>", b"<OURS>")

    assert atomic.replace_if_unchanged(path, render)
    assert path.read_bytes() == b"claude 1\n<OURS>\nclaude 2\nclaude 3\n"


def test_lines_written_into_the_replaced_file_that_change_it_are_rendered_again(
    tmp_path, monkeypatch
):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"<ours 0>\nclaude 1\n")
    opener = late_writes(monkeypatch, path, b"claude 2\n")

    def render(data):
        opener()
        return b"<ours %d>\n" % data.count(b"claude") + data.split(b"\n", 1)[1]

    assert atomic.replace_if_unchanged(path, render)
    assert path.read_bytes() == b"<ours 2>\nclaude 1\nclaude 2\n"


def test_a_rewrite_of_the_replaced_file_after_the_rename_is_rendered_again(tmp_path, monkeypatch):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"claude: draft\n<ours>\n")
    # same size, in place
    opener = late_writes(monkeypatch, path, b"claude: final\n<ours>\n", mode="r+b")

    def render(data):
        opener()
        return data.replace(b"<ours>", b"<OURS>")

    assert atomic.replace_if_unchanged(path, render)
    assert path.read_bytes() == b"claude: final\n<OURS>\n"


def test_a_file_that_never_holds_still_is_an_error_and_nothing_is_lost(tmp_path):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"0\n")
    versions = []

    def render(data):  # every time, another program replaces the file before ours lands
        versions.append(data)
        (tmp_path / "theirs").write_bytes(data + b"%d\n" % len(versions))
        os.replace(tmp_path / "theirs", path)
        return b"ours\n"

    with pytest.raises(atomic.Unsettled, match="kept changing"):
        atomic.replace_if_unchanged(path, render, tries=5)
    # each of its versions was seen; none overwritten
    assert path.read_bytes() == b"0\n1\n2\n3\n4\n5\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_lines_of_a_replaced_file_are_kept_even_when_the_file_never_holds_still(
    tmp_path, monkeypatch
):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"claude 1\n<ours>\n")
    opener = late_writes(monkeypatch, path, b"claude 2\n")
    calls = []

    def render(data):
        calls.append(data)
        opener()
        if len(calls) == 2:  # from now on another program replaces the file before ours lands
            (tmp_path / "theirs").write_bytes(b"theirs\n")
            os.replace(tmp_path / "theirs", path)
        return data.replace(b"<ours>", b"<OURS>")

    with pytest.raises(atomic.Unsettled):
        atomic.replace_if_unchanged(path, render, tries=2)
    # the line written into the replaced file is kept
    assert path.read_bytes() == b"theirs\nclaude 2\n"


def test_memory_md_apply_keeps_a_line_appended_after_its_rename(tmp_path, monkeypatch):
    path = tmp_path / "MEMORY.md"
    path.write_text("# Claude's notes\n- one\n")
    opener = late_writes(monkeypatch, path, b"- two\n")
    real_plan = memory_md.plan

    def plan(*a, **kw):  # Claude's auto memory opens MEMORY.md to append while memcurate plans
        opener()
        return real_plan(*a, **kw)

    monkeypatch.setattr(md_writing, "plan", plan)  # the plan apply calls
    result = memory_md.apply(
        tmp_path,
        {"categories": {"decision": {"budget": 40}}},
        [("upsert", memory_md.IndexLine("a", "decision", "A", "why"))],
    )
    text = path.read_text()
    assert memory_md.parse(text).outside().startswith("# Claude's notes\n- one\n- two\n")
    assert [e.id for e in memory_md.parse(text).sections["decision"].entries] == ["a"]
    assert result.text == text


def test_an_entry_a_first_plan_archived_leaves_the_archive_when_the_plan_written_keeps_it(
    tmp_path, monkeypatch
):
    """Claude trims its notes while memcurate plans: the first plan (many notes, over the line limit)
    moves the oldest entry to the archive, the plan made again keeps it listed: it is in one place."""
    cfg = {
        "categories": {"decision": {"budget": 40}},
        "memory_md": {"max_lines": 17, "max_bytes": 25000},
    }  # 18 loaded
    section = memory_md.plan(
        "",
        [("upsert", memory_md.IndexLine(f"e{i}", "decision", f"E{i}", "why")) for i in range(1, 6)],
        {"decision": 40},
    ).text
    notes = "".join(f"- note {i}\n" for i in range(10))
    path = tmp_path / "MEMORY.md"
    path.write_text(notes + "\n" + section)
    real_plan = memory_md.plan
    calls = []

    def plan(text, *a, **kw):
        calls.append(text)
        if len(calls) == 1:  # Claude rewrites MEMORY.md (by rename) with fewer notes meanwhile
            (tmp_path / "theirs").write_text("- note 0\n\n" + section)
            os.replace(tmp_path / "theirs", path)
        return real_plan(text, *a, **kw)

    monkeypatch.setattr(md_writing, "plan", plan)  # the plan apply calls
    result = memory_md.apply(
        tmp_path, cfg, [("upsert", memory_md.IndexLine("e6", "decision", "E6", "why"))]
    )
    assert len(calls) >= 2 and not result.archived
    assert [e.id for e in memory_md.parse(path.read_text()).sections["decision"].entries] == [
        "e6",
        "e5",
        "e4",
        "e3",
        "e2",
        "e1",
    ]
    assert path.read_text().startswith("- note 0\n\n")
    assert [e.id for e in memory_md.read_archive(tmp_path, "decision")] == []
