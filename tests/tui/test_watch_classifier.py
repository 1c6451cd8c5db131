"""The watcher's classification, without an App: which changed path asks which rows to read again.

A person relies on it for the queue to follow the disk: a triage staged by a hook shows, a write of Claude's
or a rule candidate staged elsewhere shows, a memory saved from another terminal refreshes the budgets and
the library, and a temp file or staging's own bookkeeping asks for nothing."""

from __future__ import annotations

import os
import threading

from memcurate.widgets import watch
from memcurate.widgets.watch import Changed, Folders, classify, to_read

DATA = os.path.join(os.sep, "p", ".memcurate")
STAGING = os.path.join(DATA, "staging")
WRITES = os.path.join(DATA, "claude-writes")
RULES = os.path.join(DATA, "rules")
PROPOSALS = os.path.join(DATA, "proposals")
ROOT = os.path.join(os.sep, "home", "u", ".claude", "projects", "p", "memory")
FOLDERS = Folders(STAGING, ROOT, {WRITES: "claude/", RULES: "rule/", PROPOSALS: "proposal/"})


def test_a_path_under_staging_names_its_triage():
    tid = "20261122T100400Z-0f3a"
    changed = classify(
        [
            os.path.join(STAGING, tid, "state.log"),
            os.path.join(STAGING, tid, "drafts", "decision.md"),
            os.path.join(STAGING, "20261122T100500Z-77aa"),
        ],
        FOLDERS,
    )
    assert changed == Changed({tid, "20261122T100500Z-77aa"}, memory=False)


def test_staging_bookkeeping_and_temp_files_ask_for_nothing():
    changed = classify(
        [
            os.path.join(STAGING, ".incoming", "x", "triage.json"),
            os.path.join(STAGING, ".claim"),
            os.path.join(WRITES, ".tmp-abc.json"),
            os.path.join(PROPOSALS, ".p1.json.tmp"),
        ],
        FOLDERS,
    )
    assert changed == Changed(set(), memory=False)


def test_each_other_kind_folder_is_its_rows_key():
    changed = classify(
        [
            os.path.join(WRITES, "a1.json"),
            os.path.join(RULES, "pytest-x.json"),
            os.path.join(PROPOSALS, "p1.json"),
        ],
        FOLDERS,
    )
    assert changed == Changed({"claude/", "rule/", "proposal/"}, memory=False)


def test_a_folder_that_shares_a_prefix_is_not_that_kind():
    # .../rules-old is not under .../rules: the separator decides
    changed = classify([os.path.join(DATA + os.sep + "rules-old", "x.json")], FOLDERS)
    assert changed == Changed(set(), memory=True)


def test_anything_else_is_the_memory_root():
    changed = classify(
        [os.path.join(ROOT, "decision", "use-uv.md"), os.path.join(ROOT, "MEMORY.md")], FOLDERS
    )
    assert changed == Changed(set(), memory=True)


def test_a_mixed_batch_gives_both():
    changed = classify(
        [os.path.join(ROOT, "MEMORY.md"), os.path.join(STAGING, "t1", "state.log")], FOLDERS
    )
    assert changed == Changed({"t1"}, memory=True)


def test_claude_writes_follow_the_memory_files_only_when_shown():
    memory = Changed({"t1"}, memory=True)
    kinds = {"claude/", "rule/"}
    assert to_read(memory, {"t1": [], "claude/": [], "rule/": []}, kinds) == {
        "t1",
        "claude/",
        "rule/",
    }
    assert to_read(memory, {"t1": []}, kinds) == {"t1"}
    assert to_read(Changed({"t1"}, memory=False), {"claude/": []}, kinds) == {"t1"}


def test_run_makes_the_folders_and_stops_on_its_event(tmp_path):
    # the watch loop itself: folders that do not exist yet are made, a set stop event ends it
    folders = Folders(str(tmp_path / "s"), str(tmp_path / "m"), {str(tmp_path / "w"): "claude/"})
    stop = threading.Event()
    stop.set()
    batches: list[Changed] = []
    watch.run(folders, stop, batches.append)
    assert all(os.path.isdir(f) for f in folders.every())
    assert batches == []


def test_the_classifier_imports_no_textual():
    import ast
    from pathlib import Path

    tree = ast.parse(Path(watch.__file__).read_text(encoding="utf-8"))
    names = {
        (n.module or "") if isinstance(n, ast.ImportFrom) else a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    }
    assert not {n for n in names if n.split(".")[0] in ("textual", "rich")}
