"""A save's cost does not grow with the store (issue 25 §6): the files it stats and opens are counted, not
timed. And the index's knowledge of the files never outlives the files: an edited memory is read again."""

from __future__ import annotations

import builtins
import os
from dataclasses import replace
from pathlib import Path

import pytest
from test_headless_failures import setup, stage

from memcurate.curator.engine import Engine
from memcurate.curator.memory import memfile, memory_md
from memcurate.curator.memory.index import MemoryIndex
from memcurate.curator.memory.index.watcher import inotify_available
from memcurate.curator.memory.store import MemoryStore, content_hash

needs_inotify = pytest.mark.skipif(
    not inotify_available(),
    reason="a save costs O(1) where a watch says what "
    "changed (Linux inotify); elsewhere a stat a file",
)
STORED = 5000
CATS = ("decision", "constraint", "runbook", "tech_debt", "preference")


def doc(cat: str, i: int, title: str = "") -> memfile.MemoryDoc:
    words = f"seeded{i} topic{i % 97} word{i % 89}"
    required = {
        "decision": ("Decision", "Rationale"),
        "constraint": ("Rule", "Impact"),
        "runbook": ("Symptom", "Steps", "Verification"),
        "tech_debt": ("Description", "Why deferred"),
        "preference": ("Preference", "Reason"),
    }[cat]
    return memfile.MemoryDoc(
        id=f"seed-{i:05d}",
        category=cat,
        title=title or f"Seeded memory {i} about {words}",
        description=f"What seeded memory {i} says about {words}.",
        tags=["seeded"],
        created="2026-01-02T03:04:05Z",
        updated="2026-01-02T03:04:05Z",
        sources=[{"session": f"seed-{i}", "turns": [1]}],
        body=memfile.join_sections({name: f"It says {words} plainly." for name in required}),
    )


def seed(project: Path, memory: Path, n: int) -> None:
    """`n` saved memories over the categories, MEMORY.md listing them (the newest within the budgets, the
    rest in the archives), as a store grows to."""
    lines = []
    for i in range(n):
        d = doc(CATS[i % len(CATS)], i)
        folder = memory / d.category
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{d.id}.md").write_text(memfile.render(d))
        lines.append(("upsert", memory_md.IndexLine(d.id, d.category, d.title, d.description)))
    engine = Engine(project)
    try:
        memory_md.apply(memory, engine.cfg, lines)
        # as after any earlier save: an older archive layout looked for, once
        with engine.root_lock():
            pass
    finally:
        engine.close()


class Counted:
    """os.stat, os.lstat, os.open, open and os.scandir counted while it is on (os.listdir by its entries)."""

    def __init__(self, monkeypatch) -> None:
        self.n = 0
        self.on = False
        for mod, name in (
            (os, "stat"),
            (os, "lstat"),
            (os, "open"),
            (builtins, "open"),
            (os, "scandir"),
            (os, "listdir"),
        ):
            monkeypatch.setattr(mod, name, self.wrap(getattr(mod, name), name == "listdir"))

    def wrap(self, fn, by_entries: bool):
        def counted(*args, **kw):
            out = fn(*args, **kw)
            if self.on:
                self.n += len(out) if by_entries else 1
            return out

        return counted


def files_looked_at(tmp_path: Path, monkeypatch, stored: int) -> int:
    """Files stat'ed and opened while six new memories of one triage are saved (one MEMORY.md write, full
    sections moving entries to the archives) into a store of `stored` memories, by a long-lived engine."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    memory = setup(project, tmp_path)
    seed(project, memory, stored)
    tid = stage(project, tmp_path, 1)
    engine = Engine(project)
    try:
        engine.index.refresh()  # its index built, its category folders watched from the second check on
        engine.index.refresh()
        ready = [c for c, s in engine.process(tid).items() if s == "ready"]
        assert len(ready) == 6
        counted = Counted(monkeypatch)
        counted.on = True
        result = engine.approve_all(tid, ready)
        counted.on = False
        monkeypatch.undo()
    finally:
        engine.close()
    assert len(result.saved) == 6 and not result.refused
    assert (
        sum(len(list((memory / c).glob("*.md"))) for c in (*CATS, "session_summary")) == stored + 6
    )
    return counted.n


@needs_inotify
def test_a_save_at_5000_stored_memories_looks_at_as_many_files_as_at_50(tmp_path, monkeypatch):
    """Before, every save stat'ed its whole category folder (~1,000 files here) and parsed each line of its
    archive: the cost grew with the store. Now a save looks at its own files and a few around them."""
    small = files_looked_at(tmp_path / "small", monkeypatch, 50)
    large = files_looked_at(tmp_path / "large", monkeypatch, STORED)
    assert large <= small * 1.1 + 20, (
        f"{large} files looked at with {STORED} stored, {small} with 50"
    )


def write_in_place(path: Path, text: str) -> None:
    """An edit as an editor that writes in place makes it: same inode, the folder's mtime unchanged."""
    with open(path, "r+", encoding="utf-8") as f:
        f.seek(0)
        f.write(text)
        f.truncate()


@pytest.mark.parametrize(
    "watch", [False, pytest.param(True, marks=needs_inotify)], ids=["stat", "watch"]
)
def test_a_memory_edited_by_hand_after_it_was_indexed_is_read_again(tmp_path, watch):
    """The index's cache of a file (its signature, its parse) is dropped the moment the file changes: an edit
    in place of the same size, right after a save's refresh, is what the next refresh and lookup see."""
    store = MemoryStore(tmp_path / "memory")
    for i in range(50):
        store.create(doc("decision", i))
    path = tmp_path / "memory" / "decision" / "seed-00007.md"
    with MemoryIndex(tmp_path / "index.sqlite", store, watch=watch) as ix:
        ix.refresh()
        ix.refresh("decision")  # the second check: watched from now on where it can be
        assert ix.get("decision", "seed-00007").title.startswith("Seeded memory 7 ")
        # an archived memory (a delete's: in .archive/decision/, where no watch is) edited in place too
        retired = store.update(
            replace(doc("decision", 9), status="archived"),
            content_hash((path.parent / "seed-00009.md").read_bytes()),
        )
        ix.refresh("decision")
        before = Path(retired).read_text()
        write_in_place(
            Path(retired), before.replace("Seeded memory 9 about", "Edited memory 9 about")
        )
        ix.refresh("decision")
        assert ix.get("decision", "seed-00009").title.startswith("Edited memory 9 ")
        before = path.read_text()
        after = before.replace("Seeded memory 7 about", "Edited memory 7 about")
        assert len(after) == len(before)
        write_in_place(path, after)
        ix.refresh("decision")  # what a save does after writing its own files
        assert ix.get("decision", "seed-00007").title.startswith("Edited memory 7 ")
        write_in_place(path, before)
        hits = ix.candidates("decision", "Seeded memory 7 about seeded7", limit=3)
        assert [h.id for h in hits][:1] == ["seed-00007"]
        assert ix.get("decision", "seed-00007").title.startswith("Seeded memory 7 ")
