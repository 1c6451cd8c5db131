"""A check keeps the words it compared of each memory for the next one (memory/index/compared.py, in
the index's database): the next check finds the same things without parsing the memories it does not
compare. The rows live in the data dir, which Claude can write: nothing they say puts a finding before
the person that the files do not support, and no row holds a secret's words."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from scenarios import decision_text, decisions_project

from memcurate.curator.engine import Engine
from memcurate.curator.hygiene import duplicates
from memcurate.curator.memory import memfile
from memcurate.curator.memory.index.schema import INDEX_FILE
from memcurate.curator.util.stamps import content_hash

KEY = "AKIAIOSFODNN7EXAMPLE"
N = 30  # memories about other things


@pytest.fixture
def project(tmp_path) -> Path:
    """Near-duplicates, a contradiction, a secret, and N memories about other things."""
    project, _root = decisions_project(tmp_path)
    same = "Use SQLite in memory for the tests, never a real database server."
    put(project, "sqlite-a", "Use SQLite in memory for tests", same)
    put(project, "sqlite-b", "Tests use SQLite in memory", same)
    put(project, "logs-a", "Keep billing logs for seven days", "Keep billing logs for seven days.")
    put(project, "logs-bb", "Keep billing logs for 14 days", "Keep billing logs for 14 days.")
    put(project, "key", "The staging key", f"The staging AWS key is {KEY} for now.")
    for i in range(N):
        # words of its own: alike to no other memory
        own = [f"{w}{i}q" for w in ("zor", "vek", "mil", "tas", "dun", "pox")]
        put(project, f"m{i}", " ".join(own[:3]).capitalize(), " ".join(own[3:]).capitalize() + ".")
    return project


def put(project: Path, id_: str, title: str, body: str) -> None:
    (file_of(project, id_)).write_text(decision_text(id_, title, body))


def file_of(project: Path, id_: str) -> Path:
    return project.parent / "memory" / "decision" / f"{id_}.md"


def check(project: Path) -> list[dict]:
    engine = Engine(project)
    try:
        return [f.to_dict() for f in engine.check(stage=False)]
    finally:
        engine.close()


def kept(project: Path) -> dict[str, tuple]:
    """hash -> its row, as the index's database holds them."""
    engine = Engine(project)
    db = Path(engine.data) / INDEX_FILE
    engine.close()
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT hash, words, subject, fact_key, fact_title, names FROM compared"
        ).fetchall()
    return {r[0]: tuple(r[1:]) for r in rows}


def write_db(project: Path, sql: str, params: tuple = ()) -> None:
    engine = Engine(project)
    db = Path(engine.data) / INDEX_FILE
    engine.close()
    with sqlite3.connect(db) as conn:
        conn.execute(sql, params)


def hash_of(project: Path, id_: str) -> str:
    return content_hash(file_of(project, id_).read_bytes())


def parses(monkeypatch) -> list[str]:
    """The memory texts parsed from now on (by this process)."""
    seen: list[str] = []
    real = memfile.parse

    def counted(text):
        seen.append(text)
        return real(text)

    monkeypatch.setattr(memfile, "parse", counted)
    return seen


def test_the_next_check_finds_the_same_without_parsing_what_it_does_not_compare(
    project, monkeypatch
):
    cold = check(project)
    assert {"duplicate", "contradiction", "secret"} <= {f["code"] for f in cold}
    # every memory compared is kept, but the one holding a secret
    ids = ["sqlite-a", "sqlite-b", "logs-a", "logs-bb", *(f"m{i}" for i in range(N))]
    assert set(kept(project)) == {hash_of(project, i) for i in ids}

    parsed = parses(monkeypatch)
    assert check(project) == cold
    # only the memories of the pairs compared closely were parsed (not the N others), each once
    assert 4 <= len(parsed) == len(set(parsed)) < N // 2


def test_no_row_holds_a_secrets_words(project):
    check(project)
    assert hash_of(project, "key") not in kept(project)
    assert not [row for row in kept(project).values() if KEY.lower() in "\0".join(row)]


def test_rows_follow_the_files(project):
    check(project)
    before = kept(project)
    old_a, old_m0 = hash_of(project, "sqlite-a"), hash_of(project, "m0")
    file_of(project, "m0").unlink()
    put(project, "sqlite-a", "Deploys go out on Fridays", "Deploys go out on Fridays only.")
    found = check(project)

    after = kept(project)
    assert old_a not in after and old_m0 not in after
    assert hash_of(project, "sqlite-a") in after
    assert len(after) == len(before) - 1
    # the edited memory says something else now: no longer a duplicate
    assert "duplicate" not in {f["code"] for f in found}


def test_a_forged_row_puts_no_finding_before_the_person(project):
    cold = check(project)
    # m1 made to look like m2, word for word: alike enough to be one memory
    m1, m2 = hash_of(project, "m1"), hash_of(project, "m2")
    forged = kept(project)[m2]
    write_db(
        project,
        "UPDATE compared SET words = ?, subject = ?, fact_key = ?, fact_title = ?, names = ? "
        "WHERE hash = ?",
        (*forged, m1),
    )
    assert check(project) == cold
    # the forged row is gone: the rows were found again from the files
    assert kept(project)[m1] != forged


def test_a_forged_index_hash_puts_no_finding_before_the_person(project):
    cold = check(project)
    # the index says m1's file holds m2's bytes: m1 would be read back with m2's words
    write_db(
        project,
        # (and that it looked at the file long after it last changed: no second look)
        "UPDATE files SET hash = ?, checked_ns = checked_ns + 60000000000 WHERE name = 'm1.md'",
        (hash_of(project, "m2"),),
    )
    assert check(project) == cold


def test_rows_of_another_build_are_not_read(project, monkeypatch):
    cold = check(project)
    monkeypatch.setattr(duplicates, "KEPT", "another build")
    parsed = parses(monkeypatch)
    assert check(project) == cold
    assert len(parsed) >= N  # every memory's words found again


def test_two_checks_at_once_leave_one_row_a_memory(project):
    check(project)
    # both wrote every row (each found none kept when it started)
    write_db(project, "INSERT INTO compared SELECT * FROM compared")
    check(project)
    engine = Engine(project)
    db = Path(engine.data) / INDEX_FILE
    engine.close()
    with sqlite3.connect(db) as conn:
        counts = conn.execute("SELECT count(*) FROM compared GROUP BY hash").fetchall()
    assert counts and {n for (n,) in counts} == {1}
