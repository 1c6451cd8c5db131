"""Rule graduation candidates: a failure signature that reached the threshold, waiting for a person.

    rules/<key>.json  {"format": 1, "id", "state": pending | approved | rejected, "created", "updated",
                       "draft": null | {"rule", "topic", "paths", "by", "model", "at", "error"},
                       "edit": null | {"rule", "topic", "paths"},
                       "decision": null | {"at", "reason"} | {"at", "file", "sessions", "rule", "topic", "paths"}}

The record is created by the ledger (ledger.stage) when the threshold is first reached; this module
reads and changes it. The evidence is not copied into it: it is read from the ledger each time, so
an occurrence after graduation simply adds evidence. A rejected record stays, so its signature is
never proposed again. Every change is made under a lock per key and written atomically.

A record is memcurate's, but a person can edit it by hand: a draft, edit or decision whose fields are
not of their types makes the whole record damaged (named in `notes`, listed as an error, left as it
is), rather than a rule made of whatever the field held.

A record read back is untrusted (Claude can write it with Bash): it carries no count, and whether the
failure recurred is read from the ledger. Given the threshold (`rules.threshold`), a pending record the
ledger does not back (no failure of its key, a failure of another signature, fewer sessions than the
threshold) is damaged the same way: named, never proposed nor written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from memcurate.curator.rules import ledger
from memcurate.curator.util.atomic import write_json
from memcurate.curator.util.locks import FileLock
from memcurate.curator.util.stamps import now_iso

STATES = ("pending", "approved", "rejected")
LOCK_WAIT = 5.0
DRAFT_KEYS = ("rule", "topic", "paths", "by", "model", "at", "error")
EDIT_KEYS = ("rule", "topic", "paths")


@dataclass
class RuleCandidate:
    id: str
    state: str
    failure: dict
    occurrences: list[dict]
    draft: dict | None
    edit: dict | None
    decision: dict | None
    created: str
    updated: str
    notes: list[str] = field(default_factory=list)  # damaged evidence files skipped while loading

    sessions: int = 0  # how many sessions saw it: as the ledger counts toward the threshold


def _read(path: str, notes: list | None) -> dict | None:
    """The record at `path`, None when missing or damaged (named in `notes`)."""
    doc = ledger.read_object(path, notes)
    if doc is None:
        return None
    if not (doc.get("state") in STATES and ledger.is_key(doc.get("id"))):
        _note(notes, f"{path}: not a rule candidate record (hand-edited?), skipped")
        return None
    return doc


def _note(notes: list | None, text: str) -> None:
    if notes is not None:
        notes.append(text)


# The fields of a record's parts a reader relies on, and their types (a part may lack one).
_PART_TYPES = {
    "rule": str,
    "topic": str,
    "paths": list,
    "by": str,
    "model": str,
    "at": str,
    "error": str,
    "file": str,
    "sessions": int,
    "reason": str,
}


def _part(doc: dict, name: str) -> tuple[dict | None, str]:
    """The draft, edit or decision of `doc` (None when it has none) and, when it is damaged, why."""
    value = doc.get(name)
    if value is None:
        return None, ""
    if not isinstance(value, dict):
        return None, f"{name} is a {type(value).__name__}, not a mapping"
    for field_name, kind in _PART_TYPES.items():
        got = value.get(field_name)
        if got is None:
            continue
        # `all` is this module's
        if (
            not isinstance(got, kind)
            or isinstance(got, bool)
            or (kind is list and isinstance(got, list) and any(not isinstance(p, str) for p in got))
        ):
            want = "a list of strings" if kind is list else f"a {kind.__name__}"
            return None, f"{name}.{field_name} is not {want}"
    return value, ""


def unbacked(key: str, failure: dict | None, sessions: int, threshold: int) -> str:
    """Why the ledger does not back a candidate of `key` ("" when it does): its failure (as the ledger
    holds it, None when none) is recorded under that key, is the signature the key hashes, and was seen
    in `sessions` >= `threshold` sessions."""
    from memcurate.curator.rules.signature import Failure

    if failure is None:
        return f"the failure ledger ({ledger.FAILURES_DIR}/) holds no failure of this key"
    if (
        failure["key"] != key
        or Failure(kind=failure["kind"], tool=failure["tool"], signature=failure["signature"]).key
        != key
    ):
        return f"the failure the ledger ({ledger.FAILURES_DIR}/) holds for this key is of another signature"
    if sessions < threshold:
        return (
            f"the failure ledger saw it in {sessions} session{'' if sessions == 1 else 's'}, fewer than the "
            f"threshold {threshold} (rules.threshold)"
        )
    return ""


def load(
    data, key: str, *, notes: list | None = None, threshold: int | None = None
) -> RuleCandidate | None:
    """The candidate `key` with its evidence from the ledger; None when there is none (or its record
    is damaged: named in `notes`). Given `threshold`, a pending record the ledger does not back is damaged."""
    if not ledger.is_key(key):
        return None
    doc = _read(ledger.candidate_path(data, key), notes)
    if doc is None or doc["id"] != key:
        if doc is not None:
            _note(notes, f"{ledger.candidate_path(data, key)}: holds id {doc['id']}, skipped")
        return None
    parts = {}
    for name in ("draft", "edit", "decision"):
        parts[name], why = _part(doc, name)
        if why:  # the rule would be made of whatever the field holds: the person fixes or deletes the file
            _note(notes, f"{ledger.candidate_path(data, key)}: {why} (hand-edited?), skipped")
            return None
    found: list[str] = []
    # read once: the backing check and the evidence
    evidence = ledger.evidence(data, key, notes=found)
    failure, count = evidence.failure, evidence.sessions
    if threshold is not None and doc["state"] == "pending":
        why = unbacked(key, failure, count, threshold)
        if why:
            _note(
                notes,
                f"{ledger.candidate_path(data, key)}: {why}: not a recurring failure, never proposed "
                "(delete the file)",
            )
            return None
    occurrences = evidence.occurrences
    if notes is not None:
        notes.extend(found)
    return RuleCandidate(
        id=key,
        state=doc["state"],
        failure=failure or {},
        occurrences=occurrences,
        **parts,
        created=str(doc.get("created", "")),
        updated=str(doc.get("updated", "")),
        notes=found,
        sessions=count,
    )


def all(
    data,
    *,
    every: bool = False,
    notes: list | None = None,  # noqa: A001 (the design's name)
    threshold: int | None = None,
) -> list[RuleCandidate]:
    """The pending candidates (every state with `every`), oldest first. Damaged records (with `threshold`,
    pending ones the ledger does not back too) are skipped and named in `notes`."""
    folder = os.path.join(os.fspath(data), ledger.CANDIDATES_DIR)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out = []
    for name in names:
        key = name[:-5] if name.endswith(".json") else ""
        if not ledger.is_key(key):
            continue
        c = load(data, key, notes=notes, threshold=threshold)
        if c is not None and (every or c.state == "pending"):
            out.append(c)
    return sorted(out, key=lambda c: (c.created, c.id))


def _change(data, key: str, change, *, pending: bool = True) -> dict:
    """Apply `change(doc)` to the record of `key` under its lock and write it; returns the new record.
    ValueError when there is no such record, it is damaged, or (with `pending`) it is decided."""
    path = ledger.candidate_path(data, key)
    with FileLock(os.path.join(os.fspath(data), "locks", f"rule-{key}.lock"), wait=LOCK_WAIT):
        notes: list[str] = []
        doc = _read(path, notes)
        if doc is None:
            raise ValueError(notes[0] if notes else f"no rule candidate {ledger.PREFIX}{key}")
        if pending and doc["state"] != "pending":
            raise ValueError(f"{ledger.PREFIX}{key} is already {doc['state']}")
        change(doc)
        doc["updated"] = now_iso()
        write_json(path, doc)
        return doc


def _shape(value: dict | None, names: tuple[str, ...], what: str) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError(f"a rule {what} must be a mapping, not {type(value).__name__}")
    out = {k: value.get(k) for k in names}
    if out["paths"] is None:
        out["paths"] = []
    if not isinstance(out["paths"], list) or any(not isinstance(p, str) for p in out["paths"]):
        raise ValueError(f"a rule {what}'s paths must be a list of globs, not {out['paths']!r}")
    return out


def set_draft(data, key: str, draft: dict | None) -> dict:
    """Store the rule text a drafter made ({rule, topic, paths, by, model, at, error})."""
    shaped = _shape(draft, DRAFT_KEYS, "draft")
    return _change(data, key, lambda doc: doc.__setitem__("draft", shaped))


def set_edit(data, key: str, edit: dict | None) -> dict:
    """Store the person's own rule text ({rule, topic, paths}); None goes back to the draft."""
    shaped = _shape(edit, EDIT_KEYS, "edit")
    return _change(data, key, lambda doc: doc.__setitem__("edit", shaped))


def mark_approved(data, key: str, file: str, sessions: int, text: dict | None = None) -> dict:
    """The rule was written into `file` (relative to the project) from `sessions` sessions of evidence;
    `text` ({rule, topic, paths}) is what was written, kept so the candidate shows it, not a text worked
    out again later (the offline one changes with the evidence)."""
    written = {k: (text or {}).get(k) for k in EDIT_KEYS} if text else {}

    def change(doc):
        doc["state"] = "approved"
        doc["decision"] = {"at": now_iso(), "file": file, "sessions": int(sessions), **written}

    return _change(data, key, change)


def mark_rejected(data, key: str, reason: str = "") -> dict:
    """Never propose this signature again; the reason is kept."""

    def change(doc):
        doc["state"] = "rejected"
        doc["decision"] = {"at": now_iso(), "reason": ledger.cap(reason, 400)}

    return _change(data, key, change)
