"""The staging directory: the single source of truth for work in progress.

    <data dir>/staging/<triage id>/triage.json          what triage found (written once)
    <data dir>/staging/<triage id>/state/<category>.json a triggered category's state, from its first move on

A triggered category with no state file yet is `triaged`: the hook writes one
file per triage, not one per category (each durable write costs an fsync on
the hook's clock). A triage appears whole: it is written in
`staging/.incoming/` and renamed into place. Every file is written
atomically. Later stages add files beside `triage.json`.
"""

from __future__ import annotations

import os
import time
from collections import Counter

from .atomic import read_json, write_json

FORMAT = 1
STAGING = "staging"
INCOMING = ".incoming"

# A category's life: triage → draft → verify → review → save.
TRANSITIONS: dict[str, tuple[str, ...]] = {
    "triaged": ("drafting", "rejected"),
    # A claimant that finds a step left half-done by a killed process starts it again.
    "drafting": ("drafted", "failed", "drafting", "rejected"),
    "drafted": ("verifying", "failed", "drafting"),
    "verifying": ("ready", "failed", "drafting"),
    "ready": ("approved", "rejected", "drafting"),
    "approved": ("saved", "failed", "ready"),
    "failed": ("drafting", "rejected"),
    "rejected": (),
    "saved": (),
}
STATES: tuple[str, ...] = tuple(TRANSITIONS)
PENDING: frozenset[str] = frozenset(s for s in STATES if s not in ("rejected", "saved"))


class StagingError(Exception):
    """A staged file is missing, unreadable or malformed, or a state change is not allowed."""


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def staging_dir(data) -> str:
    return os.path.join(os.fspath(data), STAGING)


def triage_dir(data, triage_id: str) -> str:
    if not triage_id or "/" in triage_id or triage_id.startswith("."):
        raise StagingError(f"invalid triage id {triage_id!r}")
    return os.path.join(staging_dir(data), triage_id)


def stage(data, doc: dict) -> str | None:
    """Write a new triage; its triggered categories start `triaged`.

    Returns its folder, or None when a triage with this id is already staged
    (the same bytes of the same transcript: never stage them twice).
    """
    tid = doc["id"]
    final = triage_dir(data, tid)
    if os.path.exists(final):
        return None
    incoming = os.path.join(staging_dir(data), INCOMING, f"{tid}.{os.getpid()}")
    if os.path.exists(incoming):
        _rmtree(incoming)
    # The data is fsynced; the folder fsyncs are left out because the hook pays
    # for each on Claude Code's clock. A power cut can then lose at most the
    # rename, and the offset state (written after it, in journal order) with it,
    # so the same bytes are triaged again: nothing is lost.
    write_json(os.path.join(incoming, "triage.json"), doc, sync_dir=False)
    try:
        os.rename(incoming, final)  # a folder rename is atomic: the triage appears whole
    except OSError:
        _rmtree(incoming)
        if os.path.isdir(final):
            return None
        raise
    return final


def _rmtree(path: str) -> None:
    import shutil  # rarely needed, and not free to import on the hook path

    shutil.rmtree(path, ignore_errors=True)


def _state_record(category: str, state: str, stamp: str, history: list | None = None, **extra) -> dict:
    hist = list(history or [])
    hist.append([state, stamp])
    return {"category": category, "state": state, "updated": stamp, "history": hist[-50:], **extra}


def clean_incoming(data, older_than: float = 300.0) -> int:
    """Remove half-written triages that a killed process left in .incoming/."""
    folder = os.path.join(staging_dir(data), INCOMING)
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    cutoff = time.time() - older_than
    for name in names:
        path = os.path.join(folder, name)
        try:
            if os.stat(path).st_mtime < cutoff:
                _rmtree(path)
                removed += 1
        except OSError:
            pass
    return removed


def triage_ids(data) -> list[str]:
    """Staged triage ids, oldest first (ids start with the time of their first record)."""
    try:
        names = os.listdir(staging_dir(data))
    except OSError:
        return []
    return sorted(n for n in names if not n.startswith("."))


def load_triage(data, triage_id: str) -> dict:
    path = os.path.join(triage_dir(data, triage_id), "triage.json")
    try:
        doc = read_json(path)
    except FileNotFoundError:
        raise StagingError(f"{path}: missing") from None
    except (OSError, ValueError) as e:
        raise StagingError(f"{path}: unreadable ({e})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("categories"), dict) or doc.get("id") != triage_id:
        raise StagingError(f"{path}: not a memcurate triage")
    return doc


def _read_state(path: str, category: str, doc: dict) -> dict:
    try:
        rec = read_json(path)
    except FileNotFoundError:
        return _state_record(category, "triaged", doc.get("created", ""))
    except (OSError, ValueError) as e:
        raise StagingError(f"{path}: unreadable ({e})") from None
    if not isinstance(rec, dict) or rec.get("state") not in TRANSITIONS:
        raise StagingError(f"{path}: not a state record")
    return rec


def category_states(data, triage_id: str, doc: dict | None = None) -> dict[str, dict]:
    """The state record of each triggered category of a triage."""
    doc = doc or load_triage(data, triage_id)
    folder = os.path.join(triage_dir(data, triage_id), "state")
    return {name: _read_state(os.path.join(folder, f"{name}.json"), name, doc)
            for name, cat in doc["categories"].items() if isinstance(cat, dict) and cat.get("triggered")}


def set_state(data, triage_id: str, category: str, state: str, *, doc: dict | None = None, **extra) -> dict:
    """Move one category to `state`, keeping its history; refuse a move the life cycle does not allow.

    `doc` is the triage when the caller has it already (it is read otherwise)."""
    doc = doc or load_triage(data, triage_id)
    cat = doc["categories"].get(category)
    if not isinstance(cat, dict) or not cat.get("triggered"):
        raise StagingError(f"{triage_id}/{category}: not a triggered category of this triage")
    path = os.path.join(triage_dir(data, triage_id), "state", f"{category}.json")
    rec = _read_state(path, category, doc)
    current = rec.get("state")
    if state not in TRANSITIONS.get(current, ()):
        raise StagingError(f"{triage_id}/{category}: cannot go from {current} to {state}")
    kept = {k: v for k, v in rec.items() if k not in ("category", "state", "updated", "history")}
    kept.update(extra)
    new = _state_record(category, state, now_iso(), rec.get("history"), **kept)
    # Atomic but not fsynced: a state lost to a power cut only repeats a step, and every
    # step is redone safely (the save recognises a file already written).
    write_json(path, new, durable=False)
    return new


def counts(data) -> dict:
    """Categories by state over every staged triage; unreadable triages are counted, not fatal."""
    by_state: Counter = Counter()
    triages = errors = 0
    for tid in triage_ids(data):
        triages += 1
        try:
            for rec in category_states(data, tid).values():
                by_state[rec["state"]] += 1
        except StagingError:
            errors += 1
    return {"triages": triages, "unreadable": errors,
            "by_state": {s: by_state[s] for s in STATES if by_state[s]},
            "pending": sum(n for s, n in by_state.items() if s in PENDING)}
