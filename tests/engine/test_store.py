"""The memory store: safe paths, atomic validated writes, optimistic concurrency, broken files reported."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from memcurate.curator.memory import memfile
from memcurate.curator.memory.store import (
    BrokenMemoryError,
    ConflictError,
    DeleteNotAllowedError,
    InvalidMemoryError,
    MemoryStore,
    MissingMemoryError,
    StoreError,
    UnsafePathError,
    content_hash,
)
from memcurate.curator.util.locks import FileLock, LockBusy

STAMP = "2026-11-22T10:04:00Z"
BODIES = {
    "decision": "## Decision\nUse JWT tokens for the public API.\n\n## Rationale\nThe API must stay stateless.",
    "constraint": "## Rule\nCI has no network access.\n\n## Impact\nTests must not call out.",
}


def doc(id="use-jwt-for-api-auth", category="decision", **kw) -> memfile.MemoryDoc:
    fields = dict(
        id=id,
        category=category,
        title="Use JWT for API authentication",
        description="Stateless JWT chosen over server sessions for the public API",
        tags=["auth", "api"],
        created=STAMP,
        updated=STAMP,
        sources=[{"session": "s1", "turns": [12, 15]}],
        body=BODIES.get(category, BODIES["decision"]),
    )
    fields.update(kw)
    return memfile.MemoryDoc(**fields)


@pytest.fixture
def store(tmp_path) -> MemoryStore:
    return MemoryStore(tmp_path / "memory")


def files_under(path) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs
    )


# -- paths -----------------------------------------------------------------------------


def test_path_for_is_category_and_id_inside_the_root(store):
    assert store.path_for("decision", "use-jwt") == os.path.join(
        store.root, "decision", "use-jwt.md"
    )
    assert store.path_for("tech_debt", "a" * 80).endswith("tech_debt/" + "a" * 80 + ".md")


@pytest.mark.parametrize(
    "bad_id",
    [
        "../x",
        "../../etc/passwd",
        "/etc/passwd",
        "a\x00b",
        "a\nb",
        "abc\n",
        "a/b",
        "a\\b",
        "a" * 81,
        "a" * 200,
        "",
        "A",
        "Use-JWT",
        "a--b",
        "-a",
        "a-",
        "a.md",
        ".hidden",
        "a b",
        "é",
        None,
        5,
        ["a"],
    ],
)
def test_hostile_ids_are_refused(store, bad_id):
    with pytest.raises(UnsafePathError):
        store.path_for("decision", bad_id)


@pytest.mark.parametrize(
    "bad_category",
    [
        "../decision",
        "decision/..",
        "/etc",
        "archive",
        "Decision",
        "",
        ".",
        "..",
        "decision\x00",
        "decision\n",
        None,
        "memory",
        "decision/../constraint",
    ],
)
def test_hostile_categories_are_refused(store, bad_category):
    with pytest.raises(UnsafePathError):
        store.path_for(bad_category, "use-jwt")


def test_a_category_folder_linked_outside_the_root_is_refused_and_nothing_is_written(
    store, tmp_path
):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.makedirs(store.root)
    os.symlink(outside, os.path.join(store.root, "decision"))
    with pytest.raises(UnsafePathError, match="outside the memory root"):
        store.path_for("decision", "use-jwt")
    with pytest.raises(UnsafePathError):
        store.create(doc())
    assert list(outside.iterdir()) == []
    (outside / "use-jwt-for-api-auth.md").write_text(memfile.render(doc()))
    with pytest.raises(UnsafePathError):
        store.read("decision", "use-jwt-for-api-auth")
    found = list(store.scan())
    assert [(c, i) for c, i, _, d in found] == [("decision", "")] and isinstance(
        found[0][3], BrokenMemoryError
    )


def test_a_file_linked_outside_the_root_is_refused(store, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text(memfile.render(doc()))
    os.makedirs(os.path.join(store.root, "decision"))
    os.symlink(secret, os.path.join(store.root, "decision", "use-jwt-for-api-auth.md"))
    with pytest.raises(UnsafePathError):
        store.read("decision", "use-jwt-for-api-auth")
    with pytest.raises(UnsafePathError):
        store.update(doc(title="Changed"), content_hash(secret.read_bytes()))
    assert memfile.parse(secret.read_text()).title == "Use JWT for API authentication"
    [(_, _, _, found)] = list(store.scan())
    assert isinstance(found, BrokenMemoryError) and "outside" in found.reason


def test_a_category_folder_linked_inside_the_root_is_fine(store):
    os.makedirs(os.path.join(store.root, "shared-decisions"))
    os.symlink(os.path.join(store.root, "shared-decisions"), os.path.join(store.root, "decision"))
    path = store.create(doc())
    assert os.path.isfile(os.path.join(store.root, "shared-decisions", "use-jwt-for-api-auth.md"))
    assert store.read("decision", "use-jwt-for-api-auth")[0] == doc() and path.startswith(
        store.root
    )


def test_a_root_that_is_itself_a_link_is_fine(tmp_path):
    real = tmp_path / "real-memory"
    real.mkdir()
    os.symlink(real, tmp_path / "memory")
    store = MemoryStore(tmp_path / "memory")
    store.create(doc())
    assert (real / "decision" / "use-jwt-for-api-auth.md").is_file()


# -- create / read -------------------------------------------------------------------------


def test_create_then_read_gives_the_same_document_and_the_hash_of_the_bytes(store):
    d = doc()
    path = store.create(d)
    assert path == store.path_for("decision", d.id)
    with open(path, "rb") as f:
        data = f.read()
    assert data == memfile.render(d).encode()
    back, h = store.read("decision", d.id)
    assert back == d and h == content_hash(data) == content_hash(memfile.render(d))
    assert files_under(store.root) == [
        "decision/use-jwt-for-api-auth.md"
    ]  # no temp file left behind


def test_create_refuses_an_existing_file(store):
    store.create(doc())
    with pytest.raises(ConflictError, match="already exists"):
        store.create(doc(title="Another"))
    assert (
        store.read("decision", "use-jwt-for-api-auth")[0].title == "Use JWT for API authentication"
    )


def test_create_refuses_over_a_broken_file(store):
    path = store.path_for("decision", "use-jwt-for-api-auth")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        f.write("no front matter, my notes\n")
    with pytest.raises(ConflictError):
        store.create(doc())
    assert Path(path).read_text() == "no front matter, my notes\n"


@pytest.mark.parametrize(
    "change, where",
    [
        (dict(body="## Decision\nOnly half of it."), "## Rationale"),
        (dict(title=""), "title"),
        (dict(title="Two\nlines"), "title"),
        (dict(title="x\n---\nid: evil"), "title"),
        (dict(tags=[]), "tags"),
        (dict(tags=["Bad Tag"]), "tags"),
        (dict(created="yesterday"), "created"),
        (dict(updated="2026-11-22T10:04:00Z\n"), "updated"),
        (dict(status="deleted"), "status"),
        (dict(type="memo"), "type"),
    ],
)
def test_invalid_documents_are_never_written(store, change, where):
    with pytest.raises(InvalidMemoryError) as e:
        store.create(doc(**change))
    assert any(w == where for w, _ in e.value.problems), e.value.problems
    assert where in str(e.value)
    assert not os.path.exists(store.root) or files_under(store.root) == []


def test_an_invalid_category_in_the_document_is_an_unsafe_path(store):
    with pytest.raises(UnsafePathError):
        store.create(doc(category="../../x"))
    with pytest.raises(UnsafePathError):
        store.create(doc(id="../../x"))


def test_read_reports_missing_and_broken_files(store):
    with pytest.raises(MissingMemoryError) as e:
        store.read("decision", "nothing-here")
    assert isinstance(e.value, FileNotFoundError) and "nothing-here.md" in str(e.value)
    folder = os.path.join(store.root, "decision")
    os.makedirs(folder)
    cases = {
        "no-front-matter": b"Just some notes\n",
        "unclosed": b"---\nid: unclosed\ntitle: x\n",
        "bad-yaml": b"---\nid: bad-yaml\ntitle: [unclosed\n---\nbody\n",
        "unknown-key": b"---\nid: unknown-key\nowner: me\n---\n",
        "not-utf8": b"---\nid: not-utf8\ntitle: \xff\xfe\n---\n",
        "other-id": memfile.render(doc(id="something-else")).encode(),
        "other-category": memfile.render(doc(id="other-category", category="constraint")).encode(),
    }
    for name, data in cases.items():
        with open(os.path.join(folder, f"{name}.md"), "wb") as f:
            f.write(data)
    for name, data in cases.items():
        with pytest.raises(BrokenMemoryError) as e:
            store.read("decision", name)
        assert e.value.path.endswith(f"decision/{name}.md") and e.value.reason
        assert e.value.hash == content_hash(data)
    assert "does not match the file name" in str(
        pytest.raises(BrokenMemoryError, store.read, "decision", "other-id").value
    )


# -- update / retire -----------------------------------------------------------------------


def test_update_with_the_hash_that_was_read(store):
    store.create(doc())
    current, h = store.read("decision", "use-jwt-for-api-auth")
    changed = replace(current, description="JWT, not sessions", updated="2026-11-23T08:00:00Z")
    path = store.update(changed, h)
    back, h2 = store.read("decision", "use-jwt-for-api-auth")
    assert back == changed and h2 == content_hash(memfile.render(changed)) != h
    assert files_under(store.root) == ["decision/use-jwt-for-api-auth.md"] and path.endswith(".md")


def test_update_after_a_hand_edit_is_a_conflict_and_keeps_the_hand_edit(store):
    path = store.create(doc())
    _, h = store.read("decision", "use-jwt-for-api-auth")
    with open(path, "a") as f:
        f.write("\nA line the person added by hand.\n")
    hand = Path(path).read_text()
    with pytest.raises(ConflictError, match="changed since it was read") as e:
        store.update(doc(description="merged"), h)
    assert e.value.current_hash == content_hash(hand) and e.value.path == path
    assert Path(path).read_text() == hand
    # redo: read again, update with the new hash
    again, h2 = store.read("decision", "use-jwt-for-api-auth")
    store.update(replace(again, description="merged"), h2)
    assert (
        "A line the person added by hand." in store.read("decision", "use-jwt-for-api-auth")[0].body
    )


def test_update_of_a_deleted_file_is_a_conflict_and_writes_nothing(store):
    path = store.create(doc())
    _, h = store.read("decision", "use-jwt-for-api-auth")
    os.unlink(path)
    with pytest.raises(ConflictError, match="deleted"):
        store.update(doc(description="merged"), h)
    assert not os.path.exists(path)


def test_update_of_a_broken_file_is_a_conflict_even_with_its_hash(store):
    path = store.create(doc())
    with open(path, "w") as f:
        f.write("---\nid: [oops\n---\n")
    broken = Path(path).read_bytes()
    with pytest.raises(ConflictError, match="broken"):
        store.update(doc(), content_hash(broken))
    assert Path(path).read_bytes() == broken


def test_update_refuses_an_invalid_document_before_looking_at_the_file(store):
    store.create(doc())
    _, h = store.read("decision", "use-jwt-for-api-auth")
    with pytest.raises(InvalidMemoryError):
        store.update(doc(body="## Decision\nno rationale"), h)
    assert store.read("decision", "use-jwt-for-api-auth") == (doc(), h)


def test_retire_archives_and_moves_the_file_to_the_archive_folder(store):
    c = doc(id="no-network", category="constraint", title="No network in CI")
    path = store.create(c)
    _, h = store.read("constraint", "no-network")
    # out of Claude Code's recall
    archived = os.path.join(store.root, ".archive", "constraint", "no-network.md")
    assert store.retire("constraint", "no-network", h) == archived and not os.path.exists(path)
    path = archived
    back, h2 = store.read("constraint", "no-network")
    assert back.status == "archived" and back.updated != STAMP and back.body == c.body and h2 != h
    assert store.retire("constraint", "no-network", h2) == path  # already archived: nothing to do
    assert store.read("constraint", "no-network")[1] == h2


def test_retire_checks_the_hash_and_the_category(store):
    store.create(doc(id="no-network", category="constraint", title="No network in CI"))
    with pytest.raises(ConflictError):
        store.retire("constraint", "no-network", "0" * 64)
    with pytest.raises(ConflictError):
        store.retire("constraint", "never-existed", "0" * 64)
    store.create(doc())
    _, h = store.read("decision", "use-jwt-for-api-auth")
    with pytest.raises(DeleteNotAllowedError, match="never deleted"):
        store.retire("decision", "use-jwt-for-api-auth", h)
    assert store.read("decision", "use-jwt-for-api-auth")[0].status == "active"
    assert issubclass(DeleteNotAllowedError, StoreError)


def test_the_lock_is_one_file_lock_for_the_root(store):
    lock = store.lock(wait=0)
    assert isinstance(lock, FileLock) and lock.path == os.path.join(store.root, ".memcurate.lock")
    with lock:
        with pytest.raises(LockBusy), store.lock(wait=0):
            pass
        # the store never takes the lock itself: no deadlock inside the caller's
        store.create(doc())
    with store.lock(wait=0):
        pass


# -- scan --------------------------------------------------------------------------------


def test_scan_lists_memories_and_broken_files_and_skips_the_rest(store):
    store.create(doc())
    store.create(doc(id="no-network", category="constraint", title="No network in CI"))
    root = store.root
    os.makedirs(os.path.join(root, "archive"))
    os.makedirs(os.path.join(root, "notes"))
    os.makedirs(os.path.join(root, "decision", "sub.md"))  # a folder named like a memory
    for rel, text in {
        "MEMORY.md": "# Memory\n",
        "archive/decision.md": "- old entry\n",
        "notes/idea.md": "claude's own\n",
        "decision/.draft.md": "hidden\n",
        "decision/.use-jwt-for-api-auth.md.123.1.tmp": "temp\n",
        "decision/readme.txt": "not markdown\n",
        "decision/Bad Name.md": memfile.render(doc()),
        "decision/broken.md": "---\ntitle: [x\n---\n",
    }.items():
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)
    found = [(c, i, os.path.relpath(p, root), type(d).__name__) for c, i, p, d in store.scan()]
    assert found == [
        ("decision", "Bad Name", "decision/Bad Name.md", "BrokenMemoryError"),
        ("decision", "broken", "decision/broken.md", "BrokenMemoryError"),
        ("decision", "use-jwt-for-api-auth", "decision/use-jwt-for-api-auth.md", "MemoryDoc"),
        ("constraint", "no-network", "constraint/no-network.md", "MemoryDoc"),
    ]
    assert list(store.scan(["constraint"]))[0][3].title == "No network in CI"


def test_scan_of_an_empty_or_missing_root(tmp_path):
    assert list(MemoryStore(tmp_path / "nothing").scan()) == []


def test_content_hash_of_text_and_bytes():
    assert content_hash("é") == content_hash("é".encode()) and len(content_hash(b"")) == 64
