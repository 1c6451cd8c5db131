"""Reviewable proposals: a change to existing memories (update, merge, archive, adopt, unlink) that a
check, tidy or the library found, waiting for a person. Nothing changes until one is approved.

    proposals/<id>.json  {"format": 1, "id", "kind", "state": pending | approved | rejected, "created",
                          "updated", "title" (one line), "reason" (the finding, a sentence or two),
                          "source": check | tidy | library, "finding": {code, refs} | null,
                          "ops": [change ops, curator/library/changes.py], "edit": null | ops the person
                          edited, "decision": null | {"at", ...}}

An id is `<UTC stamp>-<16 hex>` (`key`): 8 hex naming what the proposal is about (its kind, its
finding's code, the refs its ops touch and the hashes they were planned against: the same finding on
the same bytes), then 8 over the ops themselves, their texts included, so two different changes of one
memory (a stale command and a stale symbol) are two proposals. Staging is idempotent on the first half:
a proposal already pending, approved or rejected for the same finding on the same bytes is not staged
again (whatever its text: a merge or an adoption stamps the time it was drafted), nor the very same
ops (the second half), so a rejected one is never proposed twice. Staging a finding's proposal for
other bytes (the file was edited since) supersedes the pending one of the same kind, code and refs:
it is rejected with the reason "superseded by proposal/<id>", as its base is gone anyway. Every record
is written atomically; a state change runs under the record's own lock, staging under the folder's. A
record damaged by hand is reported (`scan`'s second list) with its file named, never acted on.
"""

from __future__ import annotations

import json
import os
import time

from memcurate.curator.errors import Refusal
from memcurate.curator.util.atomic import write_json
from memcurate.curator.util.locks import FileLock
from memcurate.curator.util.private import make_dirs
from memcurate.curator.util.record_folder import record_ids, resolve
from memcurate.curator.util.stamps import content_hash, now_iso
from memcurate.curator.util.textsafe import one_line

FOLDER = "proposals"
PREFIX = "proposal/"  # how a review id names a proposal
FORMAT = 1
KINDS = ("update", "merge", "archive", "adopt", "unlink")
STATES = ("pending", "approved", "rejected")
PENDING, APPROVED, REJECTED = STATES
SOURCES = ("check", "tidy", "library")
LOCK_WAIT = 10.0
TITLE_LIMIT = 200
REASON_LIMIT = 600


class ProposalError(Refusal):
    """An unknown, ambiguous, damaged or already decided proposal, or one that cannot be staged."""


def folder(data) -> str:
    return os.path.join(os.fspath(data), FOLDER)


def record_path(data, pid: str) -> str:
    return os.path.join(folder(data), f"{pid}.json")


def _lock(data, name: str) -> FileLock:
    return FileLock(os.path.join(os.fspath(data), "locks", f"{name}.lock"), wait=LOCK_WAIT)


def key(kind: str, ops: list[dict], code: str = "") -> str:
    """16 hex: 8 of sha256 over the kind, the finding's `code`, the refs the ops touch (sorted) and the
    hashes they were planned against (`same_key`: the same finding on the same bytes), then 8 over the
    kind and ops as they are, texts included (a different change of the same bytes has a different key;
    the very same change has the same second half, whatever finding it came from)."""
    return same_key(kind, ops, code) + content_hash(json.dumps([kind, ops], sort_keys=True))[:8]


def same_key(kind: str, ops: list[dict], code: str = "") -> str:
    """The first half of `key`: what staging is idempotent on."""
    pairs = sorted({(str(op.get("ref", "")), str(op.get("base_hash") or "")) for op in ops})
    return content_hash(
        json.dumps([kind, str(code or ""), [r for r, _ in pairs], [h for _, h in pairs]])
    )[:8]


def _key_of(pid: str) -> str:
    return pid.rpartition("-")[2]


def _code_of(finding: dict | None) -> str:
    return str((finding or {}).get("code") or "")


def check_ops(ops) -> list[dict]:
    """`ops` as a list of change ops (curator/library/changes.py), each a known `op` on a ref the library
    could hold (a path inside the memory root: no `..`, not absolute), its hash and text strings;
    ProposalError naming the bad one. A record read back is untrusted: its ops are checked as staging's."""
    from memcurate.curator.library.changes import OPS
    from memcurate.curator.library.entries import parse_ref

    if not isinstance(ops, list) or not ops:
        raise ProposalError("a proposal's ops must be a non-empty list")
    for n, op in enumerate(ops):
        if not (
            isinstance(op, dict)
            and isinstance(op.get("op"), str)
            and isinstance(op.get("ref"), str)
        ):
            raise ProposalError(
                f"op {n + 1} is not a change op with `op` and `ref`: {one_line(repr(op), 120)}"
            )
        if op["op"] not in OPS:
            raise ProposalError(f"op {n + 1}: {op['op']!r:.40} is not one of {', '.join(OPS)}")
        try:
            parse_ref(op["ref"])
        except ValueError as e:
            raise ProposalError(f"op {n + 1}: {e}") from None
        for name in ("base_hash", "text"):
            if not isinstance(op.get(name), (str, type(None))):
                raise ProposalError(f"op {n + 1}: {name} is not a text")
    return ops


def stage(
    data,
    kind: str,
    title: str,
    reason: str,
    ops: list[dict],
    *,
    source: str,
    finding: dict | None = None,
) -> str | None:
    """Write a pending proposal; its id, or None when one of the same kind and finding code for the same
    refs and base hashes, or the very same ops, is already known in any state. A pending proposal of the
    same kind, finding code and refs planned against other bytes is superseded (rejected, naming the new
    one). ProposalError when the kind, source or ops are not valid."""
    if kind not in KINDS:
        raise ProposalError(f"unknown proposal kind {kind!r} (one of {', '.join(KINDS)})")
    if source not in SOURCES:
        raise ProposalError(f"unknown proposal source {source!r} (one of {', '.join(SOURCES)})")
    check_ops(ops)
    json.dumps(ops)  # JSON-storable, or the TypeError says which value is not
    found = _finding(finding)
    k = key(kind, ops, _code_of(found))
    with _lock(data, "proposals"):
        if _known(data, k) is not None:
            return None
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        pid = f"{stamp}-{k}"
        now = now_iso()
        doc = {
            "format": FORMAT,
            "id": pid,
            "kind": kind,
            "state": PENDING,
            "created": now,
            "updated": now,
            "title": _said(title, TITLE_LIMIT),
            "reason": _said(reason, REASON_LIMIT),
            "source": source,
            "finding": found,
            "ops": ops,
            "edit": None,
            "decision": None,
        }
        make_dirs(folder(data))
        write_json(record_path(data, pid), doc)
        if found is not None:
            _supersede(data, doc)
        return pid


def _supersede(data, new: dict) -> None:
    """Reject the pending proposals `new` replaces: the same kind, finding code and refs, planned against
    other bytes (their base is gone: approving one could only fail). One being approved right now, or
    unreadable, is left as it is."""
    from memcurate.curator.util.locks import LockBusy

    want = (new["kind"], new["finding"]["code"], sorted(new["finding"]["refs"]))
    for pid in record_ids(folder(data)):
        if pid == new["id"]:
            continue
        try:
            old = read(data, pid)
        except ProposalError:
            continue
        found = old.get("finding")
        if (
            old["state"] != PENDING
            or not isinstance(found, dict)
            or (old["kind"], found.get("code"), sorted(found.get("refs") or ())) != want
        ):
            continue
        try:
            mark_rejected(data, pid, f"superseded by {PREFIX}{new['id']}")
        except (ProposalError, LockBusy, OSError):
            continue


def _known(data, k: str) -> str | None:
    """The id of a proposal (any state) for the same finding on the same bytes as key `k` (its first
    half), else of the very same change (its second half); None when there is none."""
    names = record_ids(folder(data))
    for half in (slice(0, 8), slice(8, 16)):
        for pid in names:
            if _key_of(pid)[half] == k[half]:
                return pid
    return None


def known(data, kind: str, ops: list[dict], code: str = "") -> str | None:
    """The id of the proposal (any state) of the same kind and finding code for the same refs and base
    hashes as `ops` (see `same_key`), else of the very same ops; None when there is none."""
    return _known(data, key(kind, ops, code))


def by_key(data, kind: str, ops: list[dict], code: str = "") -> dict | None:
    """The proposal (any state) already made of the same kind, finding code, refs and base hashes, None
    when none is."""
    pid = known(data, kind, ops, code)
    if pid is None:
        return None
    try:
        return read(data, pid)
    except ProposalError:
        return None


def _finding(finding: dict | None) -> dict | None:
    if finding is None:
        return None
    if not isinstance(finding, dict):
        raise ProposalError("a proposal's finding must be a mapping {code, refs} or None")
    return {
        "code": str(finding.get("code", "")),
        "refs": [str(r) for r in finding.get("refs") or ()],
    }


def _damage(doc) -> str:
    """Why `doc` is no proposal record ("" when it is one)."""
    if not isinstance(doc, dict):
        return "not a JSON object"
    if doc.get("format") != FORMAT:
        return f"format {doc.get('format')!r}, not {FORMAT}"
    if doc.get("kind") not in KINDS:
        return f"kind {doc.get('kind')!r} is not one of {', '.join(KINDS)}"
    if doc.get("state") not in STATES:
        return f"state {doc.get('state')!r} is not one of {', '.join(STATES)}"
    for name in ("title", "reason", "created", "updated"):
        if not isinstance(doc.get(name), str):
            return f"{name} is not a string"
    for name in ("ops", "edit"):
        value = doc.get(name)
        if value is None and name == "edit":
            continue
        try:
            check_ops(value)
        except ProposalError as e:
            return f"{name}: {e}"
    if not isinstance(doc.get("decision"), (dict, type(None))):
        return "decision is not a mapping"
    return ""


def read(data, pid: str) -> dict:
    """The record `pid`; ProposalError naming the file when it is missing or damaged."""
    path = record_path(data, pid)
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read())
    except FileNotFoundError:
        raise ProposalError(f"no proposal {PREFIX}{pid}") from None
    except (OSError, ValueError) as e:
        raise ProposalError(
            f"{path}: unreadable ({e.__class__.__name__}); fix or delete it"
        ) from None
    why = _damage(doc) or ("" if doc.get("id") == pid else f"holds id {doc.get('id')!r}")
    if why:
        raise ProposalError(f"{path}: {why} (hand-edited?); fix or delete it")
    return doc


def scan(data) -> tuple[list[dict], list[tuple[str, str]]]:
    """(every readable record, oldest first; (id, why) for each damaged one), one read each."""
    good, bad = [], []
    for pid in record_ids(folder(data)):
        try:
            good.append(read(data, pid))
        except ProposalError as e:
            bad.append((pid, str(e)))
    return good, bad


def find(data, pid: str) -> dict:
    """The record whose id is `pid` (with or without `proposal/`) or begins with it; ProposalError when
    none or several do, or it is damaged."""
    return read(data, resolve(pid, record_ids(folder(data)), PREFIX, "proposal", ProposalError))


def counts(data) -> dict[str, int]:
    """How many proposals are in each state, and how many cannot be read (`damaged`)."""
    good, bad = scan(data)
    out = {s: 0 for s in STATES}
    for doc in good:
        out[doc["state"]] += 1
    out["damaged"] = len(bad)
    return out


def ops_of(record: dict) -> list[dict]:
    """What approving writes: the person's edited ops when there are some, else the proposal's."""
    return record["edit"] if record.get("edit") is not None else record["ops"]


def locked(data, pid: str) -> FileLock:
    """The record's lock (not re-entrant): a caller holding it across steps (approve) passes `held=True`."""
    return _lock(data, f"proposal-{pid}")


def change(data, pid: str, fn, *, held: bool = False) -> dict:
    """Apply `fn(doc)` to the pending record `pid` under its lock (`held`: the caller holds it) and write
    it; the new record. ProposalError when it is unknown, damaged or already decided."""
    pid = find(data, pid)["id"]
    if not held:
        with locked(data, pid):
            return change(data, pid, fn, held=True)
    doc = read(data, pid)
    if doc["state"] != PENDING:
        raise ProposalError(f"{PREFIX}{pid} is already {doc['state']}")
    fn(doc)
    doc["updated"] = now_iso()
    write_json(record_path(data, pid), doc)
    return doc


def set_edit(data, pid: str, ops: list[dict] | None) -> dict:
    """Store the ops the person edited (None: back to the proposal's own)."""
    if ops is not None:
        check_ops(ops)
    return change(data, pid, lambda doc: doc.__setitem__("edit", ops))


def mark_approved(data, pid: str, *, held: bool = False, **decision) -> dict:
    def fn(doc):
        doc["state"] = APPROVED
        doc["decision"] = {"at": now_iso(), **decision}

    return change(data, pid, fn, held=held)


def mark_rejected(data, pid: str, reason: str = "") -> dict:
    def fn(doc):
        doc["state"] = REJECTED
        doc["decision"] = {"at": now_iso(), "reason": _said(reason, REASON_LIMIT)}

    return change(data, pid, fn)


def _said(text: str, limit: int) -> str:
    """A person's or a finding's words as stored: secrets redacted (a finding may quote one), one line."""
    from memcurate.curator.util.redact import redact_text

    return one_line(redact_text(str(text or "")), limit)
