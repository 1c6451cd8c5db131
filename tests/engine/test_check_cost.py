"""What `memcurate check` costs, by structure rather than by the clock: the library is listed once and
each memory read and parsed once for every detector, and the duplicate decision derives a memory's
words once, however many others it is compared with. (bench/check_bench.py measures the time at 10,000
memories; these keep what it measured from coming back.)"""

from __future__ import annotations

import builtins
import gc
import sys
from pathlib import Path

import pytest

from memcurate.curator.engine import Engine
from memcurate.curator.hygiene import check, duplicates, texts
from memcurate.curator.hygiene import statements as said
from memcurate.curator.library import catalog
from memcurate.curator.memory import memfile
from memcurate.curator.verify import decide

N = 40
# every memory says the same things in the same words, and names two words of its own: each one is a
# candidate of many others (they share rare words), and each pair is alike enough to be scored
WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november".split()
)


def own(i: int) -> str:
    return f"{WORDS[i % len(WORDS)]}{i}x {WORDS[(3 * i + 5) % len(WORDS)]}{i}y"


def write(root: Path, mid: str, words: str) -> None:
    doc = memfile.MemoryDoc(
        id=mid,
        category="decision",
        title=f"Queue workers retry failed jobs with backoff {words}",
        description=f"Retries of failed jobs back off exponentially {words}",
        tags=["queue"],
        created="2026-10-01T10:00:00Z",
        updated="2026-10-01T10:00:00Z",
        sources=[{"session": f"s-{mid}", "turns": [2, 5]}],
        body=(
            f"## Decision\nQueue workers retry failed jobs with exponential backoff {words}.\n\n"
            "## Rationale\nImmediate retries hammered the payments gateway during outages."
        ),
    )
    (root / "decision" / f"{mid}.md").write_text(memfile.render(doc))


@pytest.fixture
def store(project: Path, tmp_path: Path) -> tuple[Engine, Path]:
    """A project whose memory root holds N alike decisions, two of them the very same fact."""
    root = tmp_path / "memory"
    (root / "decision").mkdir(parents=True)
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {root}\n"
    )
    for i in range(N):
        write(root, f"m{i}", own(i))
    write(root, "m0-again", own(0))
    engine = Engine(str(project))
    # the index built, as a check finds it after the first
    check.run(engine, stage=False)
    return engine, root


def counted(monkeypatch, owner, name: str, record=lambda *a, **k: a[0] if a else None) -> list:
    """The calls of `owner.name` from now on, each recorded as `record` of its arguments (the first)."""
    calls: list = []
    real = getattr(owner, name)

    def wrapper(*a, **k):
        calls.append(record(*a, **k))
        return real(*a, **k)

    monkeypatch.setattr(owner, name, wrapper)
    return calls


def test_a_check_lists_the_library_once_and_reads_and_parses_each_memory_once(store, monkeypatch):
    engine, root = store
    opened = []
    open_ = builtins.open

    def counted_open(file, *a, **k):
        # the check's own reads (the index reads a file written less than two seconds ago again)
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.startswith("memcurate.curator.hygiene") and str(file).startswith(str(root)):
            opened.append(str(file))
        return open_(file, *a, **k)

    listings = counted(monkeypatch, catalog, "entries")
    parsed = counted(monkeypatch, memfile, "parse")
    monkeypatch.setattr(builtins, "open", counted_open)
    # the check reads a memory file with open, read and close (no file object)
    read = counted(monkeypatch, texts, "read_path")
    findings = check.run(engine, stage=False)
    opened += [path for path in read if path.startswith(str(root))]

    assert any(f.code == "duplicate" and "decision/m0-again" in f.refs for f in findings)
    assert len(listings) == 1
    assert len(opened) == len(set(opened)) == N + 1
    assert len(parsed) == len(set(parsed)) == N + 1


def test_the_duplicate_decision_derives_each_memorys_words_once(store, monkeypatch):
    engine, _root = store
    keyed = counted(monkeypatch, decide, "key_text", lambda doc: doc.id)
    scored = counted(monkeypatch, duplicates, "score", lambda x, y: (x.ref, y.ref))
    findings = check.run(engine, stage=False)

    assert any(f.code == "duplicate" and "decision/m0-again" in f.refs for f in findings)
    # many pairs were scored: each memory met several others...
    assert len(scored) >= 4 * (N + 1)
    # ...and its key text (title and first section) was found once, not once per pair
    assert len(keyed) == len(set(keyed)) <= N + 1


def test_a_check_reads_each_memory_without_rendering_it_again(store, monkeypatch):
    """memfile.parse reads what memcurate writes without YAML, and proves it line by line: rendering
    every memory again to compare its bytes doubled the cost of reading it. What a check renders is
    its proposals' text."""
    engine, _root = store
    parsed = counted(monkeypatch, memfile, "parse")
    rendered = counted(monkeypatch, memfile, "render", lambda doc, *a, **k: doc.id)
    scored = counted(monkeypatch, duplicates, "score", lambda x, y: (x.ref, y.ref))
    yaml_read = counted(monkeypatch, memfile, "_parse_yaml")
    findings = check.run(engine)

    merges = [f for f in findings if f.code == "duplicate" and f.proposal]
    assert any("decision/m0-again" in f.refs for f in merges)
    assert len(parsed) == N + 1
    assert not yaml_read
    # the merge proposed, not the memories read
    assert 1 <= len(rendered) <= len(merges)
    # the pairs scored grow with the memories, not with their pairs
    assert len(scored) <= (N + 1) * duplicates.MAX_CANDIDATES


def test_the_duplicate_decision_cuts_each_line_into_sentences_once(store, monkeypatch):
    """A contradiction is looked for in a memory's statements and in its main ones (title,
    description, lead): the lines they share are cut into sentences once, not once for each."""
    engine, root = store
    # two memories of one subject that may disagree: their statements are looked at
    for mid, verb in (("m-keep", "Keep"), ("m-drop", "Do not keep")):
        doc = memfile.MemoryDoc(
            id=mid,
            category="decision",
            title=f"{verb} the nightly payments export archive for audits",
            description=f"{verb} the nightly payments export archive for the auditors",
            tags=["audit"],
            created="2026-10-02T10:00:00Z",
            updated=f"2026-10-0{3 if mid == 'm-drop' else 2}T10:00:00Z",
            body=f"## Decision\n{verb} the nightly payments export archive for audits.\n\n"
            "## Rationale\nAuditors ask for the exports of the last quarter.",
        )
        (root / "decision" / f"{mid}.md").write_text(memfile.render(doc))
    cut = counted(monkeypatch, said, "sentences")
    findings = check.run(engine, stage=False)

    assert any(f.code == "contradiction" and "decision/m-drop" in f.refs for f in findings)
    assert "Keep the nightly payments export archive for audits" in cut
    assert len(cut) == len(set(cut))


def test_the_cycle_collector_makes_no_pass_while_the_detectors_run(store, monkeypatch):
    """The detectors build every memory's long-lived objects and drop them together at the end: the
    cycle collector's passes over them as they grew found nothing to free, for a tenth of the check
    at 10,000 memories. It is paused while they run, and running again after."""
    engine, _root = store
    passes, inside = [], []
    detect = duplicates.detect

    def counted(phase, info):
        if phase == "start" and inside:
            passes.append(info["generation"])

    def watched_detect(*a, **k):
        inside.append(1)
        try:
            return detect(*a, **k)
        finally:
            inside.clear()

    assert detect in check.DETECTORS
    monkeypatch.setattr(
        check, "DETECTORS", tuple(watched_detect if d is detect else d for d in check.DETECTORS)
    )
    # a collection every few allocations, as a large store makes them
    threshold = gc.get_threshold()
    gc.set_threshold(10, 1, 1)
    gc.callbacks.append(counted)
    try:
        findings = check.run(engine, stage=False)
    finally:
        gc.callbacks.remove(counted)
        gc.set_threshold(*threshold)

    assert any(f.code == "duplicate" and "decision/m0-again" in f.refs for f in findings)
    assert passes == []
    assert gc.isenabled()
