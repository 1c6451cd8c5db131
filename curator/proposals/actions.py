"""Acting on a proposal: show it (part B's plan of its ops: every file's diff, and why it cannot be
applied), approve it (applied through library.changes.apply with the fingerprint the person was shown),
edit the one memory file it writes, reject it.

Approving holds the record's lock, so two approvals of one proposal cannot both apply it. The plan
re-checks every base hash under the memory root's lock: when a file changed since the proposal was
made (or since the person looked), nothing is written and the refusal says so; showing it again shows
the new state, or that it is stale (its base is gone: reject it, the next check proposes afresh).

A record read back is untrusted (Claude can write it with Bash): every path its ops touch must resolve
inside the memory root (`damage`), else it is damaged: never shown as a change nor applied. The text
it would write is read by the instruction detector: a finding is an ADVISORY `instruction` issue.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memcurate.curator.proposals import store
from memcurate.curator.proposals.store import PENDING, PREFIX, ProposalError

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context


def issues_of(planned: dict | None) -> list[dict]:
    """The plan's errors as review issues (each a BLOCK: the proposal cannot be applied as it is); "stale"
    when a file moved under it (what ChangeError.changed says of the same errors), else "change"."""
    from memcurate.curator.library.changes import ChangeError

    out = []
    for error in (planned or {}).get("errors") or ():
        text = str(error)
        stale = ChangeError(text).changed
        out.append(
            {
                "severity": "BLOCK",
                "code": "stale" if stale else "change",
                "where": "",
                "message": text
                + (
                    " (the proposal is stale: reject it; the next check proposes afresh)"
                    if stale
                    else ""
                ),
            }
        )
    return out


def damage(engine: Context, record: dict) -> str:
    """Why the ops of `record` (the person's edit, else the proposal's) reach outside the memory root ("" when
    every path they touch resolves inside it, links followed)."""
    from memcurate.curator.library.entries import CLAUDE, MEMORY_MD, parse_ref
    from memcurate.curator.util.paths import is_inside

    root = os.path.realpath(engine.root)
    for n, op in enumerate(store.ops_of(record), 1):
        try:
            owner, category, rest = parse_ref(op["ref"])
            if owner != CLAUDE:
                # UnsafePathError (a ValueError): a link leading out
                path = engine.store.locate(category, rest)
            else:
                path = os.path.join(root, *(MEMORY_MD if "#" in rest else rest).split("/"))
        except ValueError as e:
            return f"op {n}: {e}"
        real = os.path.realpath(path)
        if not is_inside(real, root) or real == root:
            return f"op {n}: {op['ref']} leads outside the memory root {root} (to {real})"
    return ""


def _damaged(engine: Context, record: dict) -> None:
    why = damage(engine, record)
    if why:
        raise ProposalError(
            f"{PREFIX}{record['id']} does not check out, never acted on: {why} "
            f"(delete {store.record_path(engine.data, record['id'])})"
        )


def instruction_issues(record: dict) -> list[dict]:
    """An ADVISORY `instruction` issue for each harm the texts the proposal would write tell the agent to do
    (curator/util/instructions.py): MEMORY.md and Claude's files are loaded into every session."""
    from memcurate.curator.verify.checks import instruction_issues as found

    parts = [
        (op["ref"], op["text"]) for op in store.ops_of(record) if isinstance(op.get("text"), str)
    ]
    return [i.as_dict() for i in found(parts)]


def view(engine: Context, pid: str) -> dict:
    """{record, planned (Planned.as_dict; None once decided: the files have moved on), issues}. ProposalError
    when it is damaged (`damage`)."""
    record = store.find(engine.data, pid)
    if record["state"] != PENDING:
        return {"record": record, "planned": None, "issues": []}
    _damaged(engine, record)
    from memcurate.curator.library import changes

    planned = changes.plan(engine, store.ops_of(record)).as_dict()
    return {
        "record": record,
        "planned": planned,
        "issues": issues_of(planned) + instruction_issues(record),
    }


def _fingerprint(seen: dict | str | None) -> str | None:
    """The fingerprint of what the person was shown: `view`'s dict, or the fingerprint itself."""
    if isinstance(seen, dict):
        return (seen.get("planned") or {}).get("fingerprint")
    return seen


def approve(engine: Context, pid: str, seen: dict | str | None = None) -> dict:
    """Apply the proposal's ops and mark it approved; the record. `seen`: what the person was shown
    (the dict `view` returned, or its plan's fingerprint); None applies what the plan says now.
    ProposalError (nothing written) when it is not pending or its files changed since."""
    from memcurate.curator.library import changes
    from memcurate.curator.library.changes import ChangeError

    pid = store.find(engine.data, pid)["id"]
    with store.locked(engine.data, pid):
        record = store.read(engine.data, pid)
        if record["state"] != PENDING:
            raise ProposalError(f"{PREFIX}{pid} is already {record['state']}")
        _damaged(engine, record)
        ops = store.ops_of(record)
        fingerprint = _fingerprint(seen)
        try:
            applied = changes.apply(engine, ops, fingerprint)
        except ChangeError as e:
            raise ProposalError(
                f"{PREFIX}{pid}: {e}; nothing was written (show it again to see the files now)"
            ) from None
        return store.mark_approved(
            engine.data,
            pid,
            held=True,
            written=list(applied.written),
            trash=list(applied.trash),
            edited=record.get("edit") is not None,
        )


def the_write(ops: list[dict]) -> dict:
    """The one op writing a memory file, for an edit; ProposalError when there is not exactly one."""
    writes = [op for op in ops if op.get("op") == "write"]
    if len(writes) != 1:
        raise ProposalError(
            "only a proposal that writes one memory file can be edited"
            + (f" (this one writes {len(writes)})" if writes else " (this one writes none)")
        )
    return writes[0]


def edit(engine: Context, pid: str, text: str) -> dict:
    """Store the person's text for the memory file the proposal writes; shown again (`view`), its plan
    re-verifying the text (a BLOCK keeps it from being approved until edited again). A text holding a
    secret is refused and nothing stored: the record would keep it in clear in the data dir."""
    from memcurate.curator.util.redact import find_secrets

    if not isinstance(text, str) or not text.strip():
        raise ProposalError("the edited text is empty")
    secrets = find_secrets(text)
    if secrets:
        raise ProposalError(
            f"a secret is present ({', '.join(secrets)}): remove it before saving; nothing was stored"
        )
    record = store.find(engine.data, pid)
    ops = [dict(op) for op in store.ops_of(record)]
    the_write(ops)["text"] = text if text.endswith("\n") else text + "\n"
    store.set_edit(engine.data, record["id"], ops)
    return view(engine, record["id"])


def reject(engine: Context, pid: str, reason: str = "") -> dict:
    """Never apply it, nor propose it again for the same bytes; the reason is kept."""
    return store.mark_rejected(engine.data, store.find(engine.data, pid)["id"], reason)
