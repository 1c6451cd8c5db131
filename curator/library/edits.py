"""The library's own changes, one memory at a time: a person's edit, archive, delete (through changes.py).

An edit of a memcurate memory is verified again like a draft (front matter, the id is the file name,
the category stays, the sections; a BLOCK refuses it with the issues) and stamped `updated`; its
MEMORY.md line follows a new title or description. An edit of one of Claude's topic files is the
person's own act on it: written as given once no secret is found, MEMORY.md untouched. Each is
applied only over the bytes the person opened (`base_hash`), else ChangeError saying it changed since.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from memcurate.curator.library.changes import ChangeError, apply
from memcurate.curator.library.entries import CLAUDE, MEMORY_MD, parse_ref
from memcurate.curator.util.stamps import content_hash

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context


def _ref(ref) -> tuple[str, str, str]:
    try:
        return parse_ref(ref)
    except ValueError as e:
        raise ChangeError(str(e)) from None


def edit(engine: Context, ref: str, text: str, base_hash: str) -> dict:
    """Write the person's `text` over the memory `ref` opened as `base_hash`: {ref, written, trash, hash
    (of the file now), issues (ADVISORY, as dicts)}. ChangeError with the BLOCK issues, or when the file
    changed since it was opened."""
    from memcurate.curator.memory import memfile
    from memcurate.curator.verify.checks import ADVISORY, BLOCK, verify

    owner, category, rest = _ref(ref)
    if owner == CLAUDE and rest.startswith(MEMORY_MD + "#"):
        raise ChangeError(
            f"{ref}: a line of Claude's is not edited here: adopt it, or edit MEMORY.md"
        )
    issues = []
    if owner != CLAUDE:
        # the plan checks the bytes it replaces
        issues = verify(text, category=category, cfg=engine.cfg)
        blocks = [i for i in issues if i.severity == BLOCK]
        if blocks:
            raise ChangeError([i.message for i in blocks])
        doc = memfile.parse(text)
        old, old_hash = _current(engine, category, rest)
        # nothing to write
        if old is not None and old_hash == base_hash and replace(old, updated=doc.updated) == doc:
            return {
                "ref": ref,
                "written": [],
                "trash": [],
                "hash": base_hash,
                "issues": [i.as_dict() for i in issues if i.severity == ADVISORY],
            }
        text = memfile.render(replace(doc, updated=engine.now()))
    done = apply(engine, [{"op": "write", "ref": ref, "base_hash": base_hash, "text": text}])
    return {
        "ref": ref,
        "written": done.written,
        "trash": done.trash,
        "hash": content_hash(text),
        "issues": [i.as_dict() for i in issues if i.severity == ADVISORY],
    }


def _current(engine: Context, category: str, id: str):
    """(the memory as it is on disk, its hash); (None, None) when it is missing or no memory (the change
    says why)."""
    from memcurate.curator.memory.store import StoreError

    try:
        return engine.store.read(category, id)
    except StoreError:
        return None, None


def archive(engine: Context, ref: str, base_hash: str):
    _ref(ref)
    return apply(engine, [{"op": "archive", "ref": ref, "base_hash": base_hash}])


def delete(engine: Context, ref: str, base_hash: str):
    _ref(ref)
    return apply(engine, [{"op": "delete", "ref": ref, "base_hash": base_hash}])
