"""What an --auto-approve save costs in the calls that cost most (issue 25 §6), counted, not timed: fsyncs
(each a few milliseconds on a loaded disk) and files opened, per save, bounded and flat in the store's size.
And a run killed between its memory files and its one MEMORY.md write loses nothing."""

from __future__ import annotations

import builtins
import json
import os
import sqlite3
from pathlib import Path

import pytest
from test_headless_failures import setup, stage
from test_save_scaling import CATS, seed

from memcurate.curator.candidates import staging
from memcurate.curator.engine import Engine
from memcurate.curator.headless import auto_approve
from memcurate.curator.memory import memfile, memory_md

TRIAGES = 4  # six memories each


class Costs:
    """fsyncs, files opened, and replacements of MEMORY.md, counted while on."""

    def __init__(self, monkeypatch, memory: Path) -> None:
        self.fsyncs = self.opened = self.memory_md_writes = 0
        self.index: IndexWrites | None = None
        self.on = False
        target = str(memory / "MEMORY.md")
        fsync, os_open, open_, replace, link = os.fsync, os.open, builtins.open, os.replace, os.link

        def counted_fsync(fd):
            self.fsyncs += self.on
            return fsync(fd)

        def counted_os_open(*a, **kw):
            self.opened += self.on
            return os_open(*a, **kw)

        def counted_open(*a, **kw):
            self.opened += self.on
            return open_(*a, **kw)

        def counted_replace(src, dst, *a, **kw):
            self.memory_md_writes += self.on and os.fspath(dst) == target
            return replace(src, dst, *a, **kw)

        def counted_link(src, dst, *a, **kw):
            self.memory_md_writes += self.on and os.fspath(dst) == target
            return link(src, dst, *a, **kw)

        monkeypatch.setattr(os, "fsync", counted_fsync)
        monkeypatch.setattr(os, "open", counted_os_open)
        monkeypatch.setattr(builtins, "open", counted_open)
        monkeypatch.setattr(os, "replace", counted_replace)
        monkeypatch.setattr(os, "link", counted_link)


class IndexWrites:
    """The index's write transactions and the rows they write, counted on its connection."""

    def __init__(self, engine: Engine) -> None:
        self.transactions = self.rows = 0
        engine.index._db.conn().set_trace_callback(self.seen)

    def seen(self, sql: str) -> None:
        words = sql.split(None, 2)
        self.transactions += words[:2] == ["BEGIN", "IMMEDIATE"]
        self.rows += words[0] in ("INSERT", "UPDATE", "DELETE")


def distinct(n: int) -> tuple:
    """Words of the demo session changed for session `n`, beyond stage's own, so that no fact of one session
    is another's (an update of a memory saved earlier in the run finishes the run's saves so far first)."""
    words = (
        "failing",
        "setup",
        "auth",
        "change",
        "Leave",
        "mobile",
        "settled",
        "re-authenticate",
        "code",
    )
    return tuple((w, f"{w[:2]}z{n}z") for w in words) + (
        ("DATABASE_URL", f"DATABASE_URL_{n}"),
        ("conftest.py", f"conftest{n}.py"),
    )


def drafted(
    tmp_path: Path, stored: int, *, indexed_first: bool = False
) -> tuple[Path, Path, list[str]]:
    """A project with `stored` memories (MEMORY.md listing the newest, the rest archived) and TRIAGES staged
    sessions, drafted: ready to be saved. `indexed_first`: the index built whole before the drafts are
    decided, so their marks are after every stored memory (built as each category is first looked up,
    the rest would be indexed after a mark)."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    memory = setup(project, tmp_path)
    seed(project, memory, stored)
    tids = [stage(project, tmp_path, n, replace=distinct(n)) for n in range(1, TRIAGES + 1)]
    engine = Engine(project)
    try:
        if indexed_first:
            engine.index.refresh()
        for tid in tids:
            assert list(engine.process(tid).values()).count("ready") == 6
    finally:
        engine.close()
    return project, memory, tids


def saved_files(memory: Path) -> int:
    return sum(len(list((memory / c).glob("*.md"))) for c in (*CATS, "session_summary"))


def run_counted(tmp_path: Path, monkeypatch, stored: int) -> tuple[dict, Costs]:
    """What one --auto-approve run over TRIAGES drafted sessions saved, and what it cost."""
    project, memory, _ = drafted(tmp_path, stored)
    engine = Engine(project)
    try:
        engine.index.refresh()  # its index built, its category folders watched from the second check on
        engine.index.refresh()
        costs = Costs(monkeypatch, memory)
        costs.index = IndexWrites(engine)
        costs.on = True
        summary = auto_approve(engine)
        costs.on = False
        monkeypatch.undo()
    finally:
        engine.close()
    assert len(summary["created"]) == 6 * TRIAGES
    assert not summary["failed"] and not summary["conflicts"] and not summary["updated"]
    assert saved_files(memory) == stored + 6 * TRIAGES
    return summary, costs


def test_a_run_writes_memory_md_once_and_each_save_costs_its_own_file(tmp_path, monkeypatch):
    """Before, each triage of a run wrote MEMORY.md and the archive file of every category it touched, each
    with two fsyncs (the file, its folder), and each memory file fsynced its folder: about 4.4 fsyncs a
    save. Now a run writes them once, each folder is fsynced once, and a save costs the fsync of its own
    memory file."""
    summary, costs = run_counted(tmp_path, monkeypatch, 1000)
    assert costs.memory_md_writes == 1
    # one a memory file (its bytes, before its rename); once for the run: the six category folders (the
    # renames), MEMORY.md and the archive files of the six categories (each the file and its folder)
    saves = 6 * TRIAGES
    bound = saves + 6 + 2 * (1 + 6)
    assert costs.fsyncs <= bound, f"{costs.fsyncs} fsyncs for {saves} saves"


def test_a_saves_fsyncs_and_files_opened_do_not_grow_with_the_store(tmp_path, monkeypatch):
    """50 or 1,000 memories stored (MEMORY.md full, the archives written): the same fsyncs and files opened,
    but for the archive files a full MEMORY.md writes once."""
    _, small = run_counted(tmp_path / "small", monkeypatch, 50)
    _, large = run_counted(tmp_path / "large", monkeypatch, 1000)
    assert large.fsyncs <= small.fsyncs + 2 * 6, (small.fsyncs, large.fsyncs)
    assert large.opened <= small.opened * 1.1 + 2 * 6, (small.opened, large.opened)
    assert large.opened <= 40 * 6 * TRIAGES, f"{large.opened} files opened"


class Killed(BaseException):
    """The process killed where it was (not an error anything catches)."""


def test_a_run_killed_before_its_memory_md_write_loses_nothing(tmp_path, monkeypatch):
    """The run's memory files are written, then it is killed before MEMORY.md: the next run finishes every
    save (MEMORY.md lists each memory once, each saved once), and Claude's own lines stay as they were."""
    project, memory, tids = drafted(tmp_path, 50)
    theirs = "- [Our deploy notes](deploy-notes.md) — written by Claude itself\n"
    (memory / "MEMORY.md").write_text((memory / "MEMORY.md").read_text() + theirs)
    apply = memory_md.apply

    def killed(*a, **kw):
        raise Killed

    monkeypatch.setattr(memory_md, "apply", killed)
    engine = Engine(project)
    with pytest.raises(Killed):
        auto_approve(engine)
    engine.close()  # (what a kill leaves: the locks die with the process)
    monkeypatch.setattr(memory_md, "apply", apply)
    written = saved_files(memory)  # the memory files: written before MEMORY.md
    assert written > 50
    states = [r["state"] for t in tids for r in staging.category_states(engine.data, t).values()]
    assert "saved" not in states and "approved" in states

    engine = Engine(project)
    try:
        summary = auto_approve(engine)
    finally:
        engine.close()
    assert not summary["failed"] and not summary["conflicts"]
    assert saved_files(memory) == written  # nothing written twice
    text = (memory / "MEMORY.md").read_text()
    assert theirs in text
    parsed = memory_md.parse(text)
    listed = [e.id for s in parsed.sections.values() for e in s.entries]
    archived = [e.id for c in parsed.sections for e in memory_md.read_archive(memory, c)]
    for t in tids:
        for rec in staging.category_states(engine.data, t).values():
            assert rec["state"] in ("saved", "skipped"), rec
    # (a session summary is saved, not listed)
    new = [
        p.stem for c in CATS for p in (memory / c).glob("*.md") if not p.stem.startswith("seed-")
    ]
    assert new
    for i in new:
        assert (listed + archived).count(i) == 1, i


def test_a_runs_index_upkeep_is_written_together_and_holds_every_save(tmp_path, monkeypatch):
    """Before, the lookup after each save wrote the file it found into the index in a transaction of its
    own: about one write transaction and 130 rows a save (the word counts of its terms), 63 pages. Now a
    run holds them and writes each category's together; and once it ends, the index on disk lists every
    memory saved (another process finds them without indexing them itself)."""
    project = tmp_path / "project"
    summary, costs = run_counted(tmp_path, monkeypatch, 1000)
    saves = 6 * TRIAGES
    assert costs.index is not None
    # one write transaction a category touched, written once the run's chunk is published
    assert costs.index.transactions <= 6 + 1, f"{costs.index.transactions} for {saves} saves"
    engine = Engine(project)
    try:
        with sqlite3.connect(engine.index.db_path) as db:
            indexed = {
                name[:-3] for (name,) in db.execute("SELECT name FROM files WHERE broken IS NULL")
            }
    finally:
        engine.close()
    saved = {Path(e["path"]).stem for e in summary["created"]}
    assert len(saved) == saves and saved <= indexed, sorted(saved - indexed)


def counted_lookups(monkeypatch, engine: Engine) -> dict[str, int]:
    """Calls of the index's whole lookups (any category, Claude's topic files apart), of its queries of
    Claude's files, and of same_fact's comparison, counted from now on."""
    from memcurate.curator.candidates import same_fact
    from memcurate.curator.memory.index.memory_index import MemoryIndex
    from memcurate.curator.memory.index.schema import CLAUDE

    n = {"whole": 0, "claude queries": 0, "compared": 0}
    whole, query, compare = MemoryIndex.candidates, MemoryIndex._query, same_fact.same_fact

    def candidates(self, category, *a, **kw):
        n["whole"] += category != CLAUDE
        return whole(self, category, *a, **kw)

    def _query(self, category, *a, **kw):
        n["claude queries"] += category == CLAUDE
        return query(self, category, *a, **kw)

    def same(*a, **kw):
        n["compared"] += 1
        return compare(*a, **kw)

    monkeypatch.setattr(MemoryIndex, "candidates", candidates)
    monkeypatch.setattr(MemoryIndex, "_query", _query)
    monkeypatch.setattr(same_fact, "same_fact", same)
    return n


def test_a_saves_duplicate_check_looks_only_at_what_was_indexed_since_its_decision(
    tmp_path, monkeypatch
):
    """Before, each save looked its draft up again in its whole category, and in Claude's topic files, a
    bm25 query over every memory stored (its cost grew with the store), and folded its triage's drafts
    again. Now a decision keeps the index's mark, a save looks only among what was indexed since (the run's
    own saves, a hand edit, Claude's writes), Claude's files are not queried when there are none, and a
    triage whose drafts were folded is not folded again."""
    project, memory, _ = drafted(tmp_path, 1000)
    engine = Engine(project)
    try:
        n = counted_lookups(monkeypatch, engine)
        summary = auto_approve(engine)
    finally:
        engine.close()
    assert len(summary["created"]) == 6 * TRIAGES and not summary["failed"], summary
    assert n == {"whole": 0, "claude queries": 0, "compared": 0}, n


def test_a_claude_topic_file_written_after_a_decision_is_still_seen_by_its_save(
    tmp_path, monkeypatch
):
    """What the mark leaves out is only what the decision saw: a topic file Claude writes after the drafts
    were decided, saying what one of them says, makes that save a noop (Claude's says it), looked up
    whole again only for it."""
    project, memory, tids = drafted(tmp_path, 1000)
    engine = Engine(project)
    try:
        review = engine.review(tids[0], "decision")
        draft = memfile.parse(review["text"])
        (memory / "notes").mkdir()
        (memory / "notes" / "decided.md").write_text(
            f"---\nname: {draft.title}\ndescription: {draft.description}\n---\n\n{draft.body}\n"
        )
        n = counted_lookups(monkeypatch, engine)
        summary = auto_approve(engine)
    finally:
        engine.close()
    assert {(e["triage"], e["category"]) for e in summary["noop"]} == {(tids[0], "decision")}, (
        summary["noop"]
    )
    assert not (memory / "decision" / f"{draft.id}.md").exists()
    assert len(summary["created"]) == 6 * TRIAGES - 1
    # the one decision taken again looks its category up whole: no other save does
    assert n["whole"] == 1, n


def approve_patched(engine: Engine, monkeypatch, *patches: tuple) -> dict:
    """auto_approve(engine) with each (target, name, value) of `patches` in place once its index is
    built, taken out after; the engine closed."""
    try:
        engine.index.refresh()
        for target, name, value in patches:
            monkeypatch.setattr(target, name, value)
        summary = auto_approve(engine)
        monkeypatch.undo()
    finally:
        engine.close()
    return summary


def test_a_saves_path_checks_walk_each_path_once(tmp_path, monkeypatch):
    """Every path a save writes or reads is checked to lie inside the memory root, a link among its parts
    resolved. Before, a memory file's check walked its category folder twice (the folder, then the folder
    and the file): 38 lstats a save here. Now one walk checks both: 27."""
    project, memory, _ = drafted(tmp_path, 50)
    engine = Engine(project)
    lstat, seen = os.lstat, [0]

    def counted(*a, **kw):
        seen[0] += 1
        return lstat(*a, **kw)

    summary = approve_patched(engine, monkeypatch, (os, "lstat", counted))
    saves = len(summary["created"])
    assert saves == 6 * TRIAGES
    assert seen[0] <= 30 * saves, f"{seen[0] / saves:.1f} lstats a save"


def test_a_forged_index_mark_cannot_hide_the_store_from_a_saves_duplicate_check(tmp_path):
    """The mark a decision keeps is in its review record, which Claude can write: a mark ahead of the
    index (it would make every stored memory "seen" by the decision) is not trusted, and the save looks
    its category up whole."""
    project, memory, tids = drafted(tmp_path, 100)
    engine = Engine(project)
    try:
        review = engine.review(tids[0], "decision")
        epoch, _, at = engine.index.mark().partition(":")
        assert epoch and at.isdigit()
        ahead = f"{epoch}:{int(at) + 10_000}"
        assert engine.index.candidates_since("decision", review["text"], ahead) is None
        assert engine.index.candidates_since("decision", review["text"], f"{epoch}:{at}") == []
    finally:
        engine.close()


class SqlSteps:
    """The steps SQLite's virtual machine takes on the index's connection (its progress handler), counted:
    the rows a statement walks, whatever the statement."""

    EVERY = 10  # steps a call of the handler stands for

    def __init__(self, engine: Engine) -> None:
        self.steps = 0
        engine.index._db.conn().set_progress_handler(self.seen, self.EVERY)

    def seen(self) -> int:
        self.steps += self.EVERY
        return 0  # go on


def steps_a_save(tmp_path: Path, stored: int) -> float:
    """SQLite steps on the index's connection an --auto-approve save costs, TRIAGES drafted sessions into
    a store of `stored` memories, by a long-lived engine."""
    project, memory, _ = drafted(tmp_path, stored)
    return approved_counting(project, SqlSteps).steps / (6 * TRIAGES)


def approved_counting(project: Path, counter):
    """Every drafted save made by one long-lived engine's --auto-approve (its index built, and watched
    from the second check on), `counter(engine)` attached to it first; the counter, once all were made."""
    engine = Engine(project)
    try:
        engine.index.refresh()
        engine.index.refresh()
        counted = counter(engine)
        summary = auto_approve(engine)
    finally:
        engine.close()
    assert len(summary["created"]) == 6 * TRIAGES and not summary["failed"], summary
    return counted


def test_a_saves_index_work_does_not_grow_with_the_store(tmp_path):
    """Before, each save's duplicate lookup counted the rows of its category (a walk of every one, to
    weigh its words): a save at 1,000 stored memories took a fifth more SQLite steps than at 50 (2,740
    against 2,265), more the larger the store. Now the count is kept until the database changes (another
    process's commit, or this one's): 2,360 against 2,240. Since the word counts are written once a
    transaction (stop 41) a save takes ~1,010-1,090 steps at 50 and ~1,130-1,210 at 1,000 (from run to
    run: the watch's timing): the growth is bounded in steps, well under the walk's ~475."""
    small = steps_a_save(tmp_path / "small", 50)
    large = steps_a_save(tmp_path / "large", 1000)
    assert large <= small + 300, (
        f"{large:.0f} SQLite steps a save at 1,000 stored, {small:.0f} at 50"
    )


def test_a_runs_held_copy_stays_in_a_segment_or_two_however_many_saves_it_holds(tmp_path):
    """A save run holds its saves of a category in a private copy (freshness.py), one insert a lookup.
    Before, each insert was a text segment of its own, up to 15 kept before FTS5 merged them, and every
    word of every lookup walked each: about 1 ms a save's search of it, at 40 held. Now one or two."""

    def segments(held) -> int:
        return held.execute("SELECT count(DISTINCT segid) FROM fts_decision_idx").fetchone()[0]

    counts = held_lookups(tmp_path, 40, segments)
    assert max(counts) <= 2, counts


def held_lookups(tmp_path, saves: int, probe) -> list:
    """`saves` memories created while the index holds a save run's changes, each looked up (and found)
    as a save's duplicate check does; what `probe(held copy)` says after each lookup. The index is
    closed at the end, and what the run held written."""
    from test_index import make

    from memcurate.curator.memory.index import MemoryIndex
    from memcurate.curator.memory.store import MemoryStore

    store = MemoryStore(tmp_path / "memory")
    store.create(
        make("decision", "use-postgres", "Use Postgres", "For the ledger", "Use it.", "ACID.")
    )
    index = MemoryIndex(tmp_path / "data" / "index.sqlite", store)
    try:
        index.refresh()
        index.refresh()
        seen = []
        with index.holding():
            for i in range(saves):
                store.create(
                    make(
                        "decision",
                        f"retry-webhooks-{i}",
                        f"Retry webhooks of shard kv{i}kv with backoff",
                        f"Webhook deliveries of shard kv{i}kv retried with backoff",
                        f"Retry failed webhook deliveries of shard kv{i}kv up to six times.",
                        "Receivers go down for minutes.",
                    )
                )
                found = index.candidates("decision", f"webhook deliveries shard kv{i}kv")
                assert f"retry-webhooks-{i}" in [c.id for c in found]
                seen.append(probe(index._freshness._held_dbs["decision"]))
        return seen
    finally:
        index.close()


def chosen_words(rows: int) -> list[str]:
    """The words a lookup searches in a category of `rows` memories, of a draft holding words that many of
    them hold: 1, 12, 40, 150 and 900, and one the index has never seen."""
    from memcurate.curator.memory.index.schema import memory_db
    from memcurate.curator.memory.index.search import _choose_terms

    counts = {"kvzq": 1, "ledger": 12, "postgres": 40, "balance": 150, "service": 900}
    db = memory_db()
    try:
        db.executemany(
            "INSERT INTO terms(category, term, df) VALUES ('decision', ?, ?)", counts.items()
        )
        return _choose_terms(db, "decision", [*reversed(counts), "unseen"], rows)
    finally:
        db.close()


def test_a_lookups_words_are_as_rare_in_a_large_store_as_in_a_middling_one():
    """A lookup searches the draft's rarest words, and bm25 walks every memory holding one. Before, a word
    counted as rare up to 10 % of the category: in 500 memories a word 50 hold, in 2,000 one 150 hold, so
    the memories a save found, read and compared again grew with the store (3 a create at 1,000 stored,
    6.5 at 5,000: engine_bench). Now no word more than 50 memories hold is searched, however many."""
    middling = chosen_words(500)
    assert middling == ["unseen", "kvzq", "ledger", "postgres"]
    assert chosen_words(2000) == middling
    assert chosen_words(20000) == middling
    # a small category keeps its 25
    assert chosen_words(100) == ["unseen", "kvzq", "ledger"]


def test_a_create_renders_its_memory_once_and_walks_its_paths_once(tmp_path, monkeypatch):
    """A save compares the memory file with the text it writes, then the store checks that text and writes
    it. Before, the store made the text and its path again (a render, a walk of the category folder and the
    file), and looked for the id in either folder by walking the category folder a third time; and the
    duplicate check walked both paths of the draft's own id to find it new: 2.8 renders (0.8 of them
    deciding again against the run's earlier saves) and 28.8 lstats a save here. Now the text made for
    the comparison is the one checked and written, and a path with nothing at it is not walked: 1.8
    renders and 18.1 lstats."""
    from memcurate.curator.memory import memfile as mf

    project, memory, _ = drafted(tmp_path, 50)
    engine = Engine(project)
    lstat, render, seen = os.lstat, mf.render, {"lstat": 0, "render": 0}

    def counted_lstat(*a, **kw):
        seen["lstat"] += 1
        return lstat(*a, **kw)

    def counted_render(*a, **kw):
        seen["render"] += 1
        return render(*a, **kw)

    summary = approve_patched(
        engine, monkeypatch, (os, "lstat", counted_lstat), (mf, "render", counted_render)
    )
    saves = len(summary["created"])
    assert saves == 6 * TRIAGES and not summary["failed"], summary
    assert seen["render"] <= 2 * saves, f"{seen['render'] / saves:.1f} renders a save"
    assert seen["lstat"] <= 19 * saves, f"{seen['lstat'] / saves:.1f} lstats a save"


class StagingParses:
    """JSON parses of triage documents and of state-log lines, counted (whoever parses them)."""

    def __init__(self, monkeypatch) -> None:
        from memcurate.curator.util import fastjson

        self.docs = self.lines = 0
        loads = fastjson.loads

        def counted(s):
            out = loads(s)
            if isinstance(out, dict) and "categories" in out and "id" in out:
                self.docs += 1
            elif isinstance(out, dict) and "category" in out and "state" in out:
                self.lines += 1
            return out

        monkeypatch.setattr(fastjson, "loads", counted)
        monkeypatch.setattr(staging, "_PARSED", {}, raising=False)  # (what earlier tests parsed)


def test_a_run_parses_each_triage_and_each_state_line_once(tmp_path, monkeypatch):
    """A run reads a triage five times or more (pending, resume, process, candidates, approve; MEMORY.md's
    write looks at every triage). Before, each read parsed its document and every line of its state log
    again: 20 documents for 4 triages, 480 state lines for the 144 the logs hold. Now each read reads the
    files and parses only bytes it has not parsed: each document once, each state line once."""
    project, memory, tids = drafted(tmp_path, 50)
    engine = Engine(project)
    try:
        parses = StagingParses(monkeypatch)
        summary = auto_approve(engine)
        monkeypatch.undo()
    finally:
        engine.close()
    assert len(summary["created"]) == 6 * TRIAGES and not summary["failed"], summary
    lines = sum(
        len((Path(engine.data) / "staging" / t / "state.log").read_bytes().splitlines())
        for t in tids
    )
    assert parses.docs <= TRIAGES, f"{parses.docs} documents parsed for {TRIAGES} triages"
    assert parses.lines <= lines, f"{parses.lines} state lines parsed, {lines} in the logs"


def test_a_run_over_drafted_triages_builds_no_drafter_and_reads_each_review_once(
    tmp_path, monkeypatch
):
    """Everything drafted, a run only saves: it built the drafter for every triage anyway (its imports,
    ~0.1 ms a save), and read each candidate's review files three times (the early write, the shown-text
    check, the approval). Now no drafter, and one reading of a review's files a save (the gate's look at
    the record alone aside)."""
    from memcurate.curator.candidates import candidate

    project, memory, tids = drafted(tmp_path, 50)
    engine = Engine(project)
    built, reads = [], []
    real_read, real_new = candidate.read_review, Engine._new_drafter
    try:
        monkeypatch.setattr(Engine, "_new_drafter", lambda self: built.append(1) or real_new(self))
        monkeypatch.setattr(candidate, "read_review", lambda *a: reads.append(a) or real_read(*a))
        summary = auto_approve(engine)
        monkeypatch.undo()
    finally:
        engine.close()
    saves = len(summary["created"])
    assert saves == 6 * TRIAGES and not summary["failed"], summary
    assert built == []
    assert len(reads) == saves, f"{len(reads)} review readings for {saves} saves"


def test_a_triage_changed_between_two_reads_is_read_as_it_is_now(tmp_path, monkeypatch):
    """What a read parsed is kept by the bytes it read, not by a stat signature: a state log or a triage
    rewritten between two reads, in place, with the same size and its times set back, as Claude could write
    them, is read as it is now; so is a line appended by hand."""
    project, memory, tids = drafted(tmp_path, 50)
    tid = tids[0]
    data = Path(Engine(project).data)
    log = data / "staging" / tid / "state.log"
    doc = data / "staging" / tid / "triage.json"
    before = staging.category_states(data, tid)
    assert before["decision"]["state"] == "ready"
    assert staging.load_triage(data, tid)["categories"]["decision"]["triggered"]

    def rewrite(path: Path, old: bytes, new: bytes) -> None:
        assert len(old) == len(new)
        st = path.stat()
        raw = path.read_bytes()
        at = raw.rindex(old)
        with open(path, "r+b") as f:  # in place: same inode, same size
            f.seek(at)
            f.write(new)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert path.stat().st_size == st.st_size

    # the last line of `decision` names it ready: the same line now says `saved` (as many bytes)
    raw = log.read_bytes()
    last = [ln for ln in raw.splitlines() if b'"category":"decision"' in ln][-1]
    assert b'"state":"ready"' in last
    rewrite(log, last, last.replace(b'"state":"ready"', b'"state":"saved"'))
    assert staging.category_states(data, tid)["decision"]["state"] == "saved"
    # a line appended by hand
    with open(log, "ab") as f:
        f.write(last.replace(b'"state":"ready"', b'"state":"rejected"') + b"\n")
    assert staging.category_states(data, tid)["decision"]["state"] == "rejected"
    # the triage itself: a category no longer triggered
    triggered = staging.load_triage(data, tid)["categories"]
    rewrite(doc, b'"triggered": true', b'"triggered": null')
    now = staging.load_triage(data, tid)
    assert now == json.loads(doc.read_bytes()) and now["categories"] != triggered


def test_a_drafts_own_id_is_still_found_at_either_path_and_through_a_link(tmp_path):
    """The walks spared are those of a path with nothing at it: a memory at the draft's id, in its category
    folder or its archive folder, is still compared with, and one reached through a link leading out of
    the root is still refused by the checked walk."""
    from memcurate.curator.candidates.pipeline import near_ids
    from memcurate.curator.memory.store import UnsafePathError
    from memcurate.curator.util.paths import ARCHIVE_DIR

    project, memory, tids = drafted(tmp_path, 50)
    engine = Engine(project)
    try:
        draft = memfile.parse(engine.review(tids[0], "decision")["text"])
        assert draft.id not in near_ids(engine, draft).ids
        assert not engine.store.may_exist("decision", draft.id)
        archived = memory / ARCHIVE_DIR / "decision" / f"{draft.id}.md"
        archived.parent.mkdir(parents=True, exist_ok=True)
        archived.write_text(memfile.render(draft))
        assert draft.id in near_ids(engine, draft).ids
        archived.unlink()
        outside = tmp_path / "outside.md"
        outside.write_text(memfile.render(draft))
        (memory / "decision" / f"{draft.id}.md").symlink_to(outside)
        assert engine.store.may_exist("decision", draft.id)
        with pytest.raises(UnsafePathError):
            engine.store.locate("decision", draft.id)
        assert draft.id not in near_ids(engine, draft).ids  # refused, as before: not read
        # an invalid id: for path_for to judge
        assert engine.store.may_exist("decision", "x" * 500)
    finally:
        engine.close()


class TempWrites:
    """A run's temp files in the memory root, as they happen: (what, temp file, by the main thread), what
    being "create", "fsync" or "rename"; `patches` for approve_patched."""

    def __init__(self, memory: Path) -> None:
        import threading

        self.root = str(memory) + os.sep
        self.events: list[tuple[str, str, bool]] = []
        self.names: dict[int, str | None] = {}
        os_open, fsync, replace = os.open, os.fsync, os.replace

        def main() -> bool:
            return threading.current_thread() is threading.main_thread()

        def opened(path, flags, *a, **kw):
            fd = os_open(path, flags, *a, **kw)
            path = os.fspath(path)
            temp = path.startswith(self.root) and path.endswith(".tmp") and flags & os.O_CREAT
            self.names[fd] = path if temp else None  # (a number closed is given again)
            if temp:
                self.events.append(("create", path, main()))
            return fd

        def synced(fd):
            path = self.names.get(fd)
            if path is not None:
                self.events.append(("fsync", path, main()))
            return fsync(fd)

        def renamed(src, dst, *a, **kw):
            if os.fspath(src).startswith(self.root):
                self.events.append(("rename", os.fspath(src), main()))
            return replace(src, dst, *a, **kw)

        self.patches = ((os, "open", opened), (os, "fsync", synced), (os, "replace", renamed))

    def memory_files(self) -> set[str]:
        """The memory files' temp files (MEMORY.md and the archive files are in the root and .archive/)."""
        return {
            p
            for what, p, _ in self.events
            if what == "create"
            and os.path.basename(os.path.dirname(p)) in (*CATS, "session_summary")
        }

    def renamed_after_fsync(self, files: set[str]) -> None:
        """Each of `files` fsynced before its rename."""
        order = [(what, p) for what, p, _ in self.events]
        for i, (what, path) in enumerate(order):
            if what == "rename" and path in files:
                assert ("fsync", path) in order[:i], path


def test_a_triages_memory_files_are_all_created_before_the_first_is_fsynced(tmp_path, monkeypatch):
    """Creating a file in a folder just after an fsync waits for that fsync's journal commit (1.19 against
    0.90 ms a memory file, measured). Before, each memory file's temp file was created right after the
    previous one was fsynced: 23 of a run's 24 here. Now a triage's are all created first: only the first
    of each triage follows an fsync (the previous triage's). Each is still fsynced before its rename."""
    project, memory, _ = drafted(tmp_path, 50)
    engine = Engine(project)
    writes = TempWrites(memory)
    summary = approve_patched(engine, monkeypatch, *writes.patches)
    assert len(summary["created"]) == 6 * TRIAGES and not summary["failed"], summary
    memory_files = writes.memory_files()
    assert len(memory_files) == 6 * TRIAGES
    after_fsync, synced = 0, False
    for what, path, _ in writes.events:
        if what == "fsync" and path in memory_files:
            synced = True
        elif what == "create" and path in memory_files:
            after_fsync += synced
            synced = False
    assert after_fsync <= TRIAGES, f"{after_fsync} memory files created after an fsync"
    writes.renamed_after_fsync(memory_files)
    assert not list(memory.rglob(".*.tmp"))


def test_a_saved_memory_is_hashed_again_by_one_process_not_by_every_one(tmp_path, monkeypatch):
    """A save indexes its file at once: within the two seconds a signature is "racy" (a same-size rewrite in
    the same tick keeps it), so the next check hashes the file again. Before, that check trusted the file in
    its own memory only: every later process hashed every file memcurate ever saved again, on its first
    look at the category (a cost growing with the store). Now the check that finds the bytes unchanged,
    the signature older than the window, says so in the index: the next process reads none of them."""
    from memcurate.curator.memory.index import freshness
    from memcurate.curator.memory.store import MemoryStore

    project, memory, _ = drafted(tmp_path, 50)
    engine = Engine(project)
    try:
        summary = auto_approve(engine)
    finally:
        engine.close()
    saves = len(summary["created"])
    assert saves == 6 * TRIAGES
    real_ns, read_bytes, reads = freshness.time.time_ns, MemoryStore.read_bytes, [0]

    def counted(self, path):
        reads[0] += 1
        return read_bytes(self, path)

    # later processes, three seconds on: every signature is older than the window
    monkeypatch.setattr(freshness.time, "time_ns", lambda: real_ns() + 3_000_000_000)
    monkeypatch.setattr(MemoryStore, "read_bytes", counted)
    first = []
    for _ in range(2):
        reads[0] = 0
        engine = Engine(project)
        try:
            engine.index.refresh()
        finally:
            engine.close()
        first.append(reads[0])
    monkeypatch.undo()
    assert first[0] >= saves, first  # the run's saves, hashed again once
    assert first[1] == 0, first


def test_a_saves_memory_file_reads_make_no_buffered_file_object(tmp_path, monkeypatch):
    """A save reads memory files (its duplicate check's matches, its own path before writing, its file once
    written to index it, the summaries citing its session), each again every time whatever its size and
    times say. Each was read through a buffered file object (5.8 a save here), which costs five system
    calls beyond open, read and close (two fstats, a terminal check, two lseeks): about 29 a save. Now
    each is read by its descriptor (open, reads, close), and still read every time."""
    project, memory, _ = drafted(tmp_path, 50)
    engine = Engine(project)
    open_, os_open, seen = builtins.open, os.open, {"buffered": 0, "read": 0}

    def memory_file(
        path,
    ) -> bool:  # a file in a category's folder (MEMORY.md, read once a run, is not)
        where = os.path.relpath(os.fspath(path), memory) if isinstance(path, str | Path) else ".."
        return where.split(os.sep)[0] in (*CATS, "session_summary") and where.endswith(".md")

    def counted_open(file, *a, **kw):
        seen["buffered"] += memory_file(file)
        return open_(file, *a, **kw)

    def counted_os_open(path, flags, *a, **kw):
        seen["read"] += memory_file(path) and not flags & (os.O_WRONLY | os.O_RDWR)
        return os_open(path, flags, *a, **kw)

    summary = approve_patched(
        engine, monkeypatch, (builtins, "open", counted_open), (os, "open", counted_os_open)
    )
    saves = len(summary["created"])
    assert saves == 6 * TRIAGES and not summary["failed"], summary
    assert seen["buffered"] == 0, f"{seen['buffered'] / saves:.1f} buffered reads a save"
    assert seen["read"] >= 2 * saves, f"{seen['read'] / saves:.1f} memory files read a save"


def test_a_memory_files_path_is_looked_at_once_to_be_checked_and_found(tmp_path, monkeypatch):
    """`locate` walks a memory's path (each part lstat'ed, a link resolved and checked to stay inside the
    root), then asked whether anything was there: an lstat of the very file the walk had just looked at,
    for every existing memory a save's duplicate check reads (1.5 a save here). Now the walk's last
    lstat answers it (what is left: the same memory located twice running). A file there, a file gone, a link: tests/engine/test_store.py."""
    project, memory, _ = drafted(tmp_path, 50)
    engine = Engine(project)
    lstat, seen = os.lstat, {"last": None, "again": 0}

    def counted_lstat(path, *a, **kw):
        path = os.fspath(path)
        if path.endswith(".md"):  # (a folder's own checks ask for it again: not counted here)
            seen["again"] += path == seen["last"]
        seen["last"] = path
        return lstat(path, *a, **kw)

    summary = approve_patched(engine, monkeypatch, (os, "lstat", counted_lstat))
    saves = len(summary["created"])
    assert saves == 6 * TRIAGES and not summary["failed"], summary
    assert seen["again"] <= saves // 4, (
        f"{seen['again'] / saves:.1f} lstats a save of a path just lstat'ed"
    )


def test_a_runs_staged_files_are_read_by_descriptor(tmp_path, monkeypatch):
    """A run reads each triage's document and state log several times, and each category's review: their
    bytes every time (a write by Claude between two reads is seen), about 2.2 reads a save here. Each
    went through a buffered file object (two fstats, a terminal check, two lseeks beyond open, read and
    close); now each is read by its descriptor."""
    project, _, _ = drafted(tmp_path, 50)
    engine = Engine(project)
    staged, open_, seen = os.path.join(engine.data, "staging") + os.sep, builtins.open, {"n": 0}

    def counted_open(file, *a, **kw):
        seen["n"] += isinstance(file, str | Path) and os.fspath(file).startswith(staged)
        return open_(file, *a, **kw)

    summary = approve_patched(engine, monkeypatch, (builtins, "open", counted_open))
    saves = len(summary["created"])
    assert saves == 6 * TRIAGES and not summary["failed"], summary
    assert seen["n"] == 0, f"{seen['n'] / saves:.1f} buffered reads a save of staged files"


class Searches:
    """The bm25 searches run on the index's connection (not a save run's private copy of what it holds)."""

    def __init__(self, engine: Engine) -> None:
        self.bm25 = 0
        engine.index._db.conn().set_trace_callback(self.seen)

    def seen(self, sql: str) -> None:
        self.bm25 += " MATCH " in sql


def test_a_saves_duplicate_check_skips_the_index_search_when_nothing_was_indexed_since(tmp_path):
    """Before, every save's lookup since its decision's mark ran a bm25 query over the category's text
    even when no memory had been indexed since (its words looked up in every segment of the index, which
    grows with the store): 23 for 24 saves here. Now the file rows written since the mark are looked at
    first (a range of row numbers), and when there are none, nothing is searched. A memory written by
    hand after the decisions is among them: searched, and found."""
    project, memory, tids = drafted(tmp_path, 1000, indexed_first=True)
    searches = approved_counting(project, Searches)
    assert searches.bm25 == 0, f"{searches.bm25} bm25 searches of the index for {6 * TRIAGES} saves"

    project, memory, tids = drafted(tmp_path / "edited", 1000, indexed_first=True)
    engine = Engine(project)
    try:
        draft = memfile.parse(engine.review(tids[0], "decision")["text"])
        by_hand = memfile.MemoryDoc(**{**draft.__dict__, "id": "written-by-hand"})
        (memory / "decision" / "written-by-hand.md").write_text(memfile.render(by_hand))
        searches = Searches(engine)
        summary = auto_approve(engine)
    finally:
        engine.close()
    assert searches.bm25 >= 1
    assert (tids[0], "decision") not in {(e["triage"], e["category"]) for e in summary["created"]}
    assert not (memory / "decision" / f"{draft.id}.md").exists()


def test_a_runs_held_copy_writes_no_segment_and_merges_none(tmp_path):
    """Before, each lookup of a save run committed the change it held into the run's private copy: FTS5
    wrote it as a segment and merged it with the one before (crisismerge 2), and the search read it back:
    a segment written and one merged at each of the 20 saves here. Now the copy's one transaction stays
    open until the run writes what it holds: FTS5 keeps the rows in memory and searches them there, no
    segment there at any lookup."""

    def segments_written(held) -> int:
        # a segment's rows in %_data are numbered from its id: a new id for every one written
        sql = "SELECT count(DISTINCT id >> 37) FROM fts_decision_data WHERE id >= 1 << 37"
        return held.execute(sql).fetchone()[0]

    written = held_lookups(tmp_path, 20, segments_written)
    assert written == [0] * 20, written
    from memcurate.curator.memory.index import MemoryIndex
    from memcurate.curator.memory.store import MemoryStore

    store = MemoryStore(tmp_path / "memory")
    index = MemoryIndex(tmp_path / "data" / "index.sqlite", store)
    try:
        assert len(index.refresh("decision").broken) == 0
        assert index.get("decision", "retry-webhooks-19") is not None  # written when the run ended
    finally:
        index.close()


def test_a_triages_memory_files_are_fsynced_while_its_duplicate_lookups_run(tmp_path, monkeypatch):
    """A memory file's fsync waits for the disk (about 0.7 ms a save here, several on a loaded disk).
    Before, the run's one thread made each file durable when it wrote it, after the triage's duplicate
    lookups, and waited. Now the triage's files are written before its lookups and fsynced by another
    thread while they run: the thread that looks up and renames never waits for a memory file's fsync.
    Each file is still durable before its rename, and the bytes renamed are the bytes saved."""
    project, memory, _ = drafted(tmp_path, 50)
    (memory / "session_summary").mkdir()  # (a folder not there yet is made by its file's own write)
    engine = Engine(project)
    writes = TempWrites(memory)
    summary = approve_patched(engine, monkeypatch, *writes.patches)
    assert len(summary["created"]) == 6 * TRIAGES and not summary["failed"], summary
    memory_files = writes.memory_files()
    # temp file -> fsynced by the main thread
    files = {p: main for what, p, main in writes.events if what == "fsync" and p in memory_files}
    assert len(files) == 6 * TRIAGES
    assert not any(files.values()), f"{sum(files.values())} memory files fsynced by the main thread"
    writes.renamed_after_fsync(set(files))
    assert saved_files(memory) == 50 + 6 * TRIAGES
    for cat in (*CATS, "session_summary"):
        for f in (memory / cat).glob("*.md"):
            memfile.parse(f.read_text())  # whole, valid memories
    assert not list(memory.rglob(".*.tmp"))
