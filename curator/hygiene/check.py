"""`memcurate check`: run every detector, stage one proposal per finding, cache the findings.

Nothing under the memory root is written here: a finding's fix is staged as a
proposal (Engine.stage_proposal, in the data dir) and only an approval applies
it. Staging is idempotent on the proposal's side (the same kind, finding code,
refs and base hashes are never staged twice, a rejected one never again), so a
finding seen again carries the id of the proposal already there, whatever its
state; a finding whose memory changed since gets a new proposal, which
supersedes the old one (proposals/store.py).

The last run's findings are cached in `<data>/check.json` for the library's
flag column (Engine.flags), with when and how many memories were checked.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from memcurate.curator.hygiene import DETECTORS, SEVERITIES, Finding, duplicates, forked, secrets
from memcurate.curator.hygiene.texts import library_entries, reading
from memcurate.curator.memory.memory_md.format import MemoryMdError
from memcurate.curator.util.atomic import read_json, write_json
from memcurate.curator.util.stamps import now_iso

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

CACHE = "check.json"
FORMAT = 1


def cache_path(data: str) -> str:
    return os.path.join(data, CACHE)


def run(engine: Context, *, stage: bool = True, summary: dict | None = None) -> list[Finding]:
    """Every detector's findings, most severe first, each with its proposal's id when `stage`.
    `summary`, when given, gains "checked" (memories looked at) and "errors" (detectors that could not
    run, one line each: the others still ran)."""
    from memcurate.curator.library.carry_out import forget_trash

    # the trash forgets what is older than library.trash_days, deleted or not since
    forget_trash(engine)
    findings: list[Finding] = []
    errors: list[str] = []
    # the library listed and each memory read once, for every detector; what they read is freed before
    # the collector runs again (else its first pass walks every object of every memory: 0.2 s at 10,000)
    with _no_cycle_collection(), reading(engine):
        checked = len(library_entries(engine))
        for found, error in _detected(engine, checked):
            findings += found
            errors += error
    findings.sort(key=lambda f: (SEVERITIES.index(f.severity), f.code, f.refs))
    if stage:
        findings = _stage_all(engine, findings, errors)
    else:
        findings = [_without_fix(f) for f in findings]
    findings = [
        _redacted(f) for f in findings
    ]  # a message may quote a memory: cached and printed below
    errors = [_shown(e) for e in errors]
    write_json(
        cache_path(engine.data),
        {
            "format": FORMAT,
            "at": now_iso(),
            "checked": checked,
            "errors": errors,
            "findings": [f.to_dict() for f in findings],
        },
    )
    if summary is not None:
        summary.update(checked=checked, errors=errors)
    return findings


_Detected = list[tuple[list[Finding], list[str]]]


def _kept_words(engine: Context, detected: _Detected) -> _Detected:
    """`detected` as it is, once the words compared are kept for the next check (duplicates.keep_words):
    not those of a memory with a secret, so none when the secrets could not be looked for."""
    if any(e.startswith(f"{_name(secrets.detect)}:") for _, errors in detected for e in errors):
        return detected
    duplicates.keep_words(
        engine, {r for found, _ in detected for f in found if f.code == "secret" for r in f.refs}
    )
    return detected


def _detected(engine: Context, memories: int) -> _Detected:
    """Each detector's findings and error (none or one line), in DETECTORS' order. With two CPUs and a
    store large enough, the memories duplicates compares are found first (their words kept from the
    check before, or read and parsed, part of them by a forked child), then the last detector
    (duplicates: most of the time) runs here while a child forked now runs the others: it finds the
    memories parsed here read, reads the others itself, and works while duplicates finds its pairs."""
    *others, last = DETECTORS
    if not forked.worth_it(memories):
        return _kept_words(engine, _run_each(engine, DETECTORS))
    try:
        duplicates.memos(engine)
    except _FAILURES as e:
        # no memory compared: the others run here, and duplicates says why
        failed: tuple[list[Finding], list[str]] = ([], [f"{_name(duplicates.detect)}: {e}"])
        return [
            failed if detect is duplicates.detect else _run_each(engine, [detect])[0]
            for detect in DETECTORS
        ]

    def others_then_keep() -> _Detected:
        # the secrets looked for: the words kept from here (through a connection of the child's own),
        # while the parent finds the pairs
        detected = _run_each(engine, others)
        engine.index.forked()
        return _kept_words(engine, detected)

    with forked.Child(others_then_keep) as child:
        mine = _run_each(engine, [last])
        return child.result() + mine


# what a detector's error is (reported, the others still run); anything else is a bug, raised
_FAILURES = (MemoryMdError, OSError, ValueError, forked.WorkerError)


def _run_each(engine: Context, detectors) -> _Detected:
    out: _Detected = []
    for detect in detectors:
        try:
            out.append((detect(engine), []))
        except _FAILURES as e:
            out.append(([], [f"{_name(detect)}: {e}"]))
    return out


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """The cycle collector paused while the detectors run: they build the long-lived objects of every
    memory (its document, words, statements) and drop them together at the end, and the collector's
    passes over them as they grow found nothing to free at 10,000 memories, for a tenth of the
    check's time. (What cycles the detectors leave are collected after.)"""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _name(detect) -> str:
    return detect.__module__.rsplit(".", 1)[-1]


def _without_fix(f: Finding) -> Finding:
    if "fix" not in f.detail:
        return f
    return Finding(
        f.code,
        f.severity,
        f.refs,
        f.message,
        {k: v for k, v in f.detail.items() if k != "fix"},
        f.proposal,
    )


def _shown(value):
    """`value` (a finding's message or detail: text, lists, mappings) with every secret redacted."""
    from memcurate.curator.util.redact import redact_all

    return redact_all(value)


def _redacted(f: Finding) -> Finding:
    """`f` as it is shown and cached: its message and detail redacted (its fix, staged, is gone)."""
    return Finding(f.code, f.severity, f.refs, _shown(f.message), _shown(f.detail), f.proposal)


def _stage_all(engine: Context, findings: list[Finding], errors: list[str]) -> list[Finding]:
    """Each finding with its proposal's id. Findings whose fixes make the very same change (a memory both
    stale-symbol and stale-file: archive it) share the first one's proposal: two proposals for one change
    would have the person approve one and see the other refused."""
    import json

    same: dict[str, str | None] = {}
    out = []
    for f in findings:
        spec = f.detail.get("fix")
        key = json.dumps([spec["kind"], spec["ops"]], sort_keys=True, default=str) if spec else None
        if key is not None and same.get(key):
            bare = _without_fix(f)
            out.append(
                Finding(bare.code, bare.severity, bare.refs, bare.message, bare.detail, same[key])
            )
            continue
        staged = _staged(engine, f, errors)
        if key is not None:
            same[key] = staged.proposal
        out.append(staged)
    return out


def _staged(engine: Context, f: Finding, errors: list[str]) -> Finding:
    """`f` with the id of its proposal: staged now, or the one already staged for the same change
    (`errors` gains a line when it cannot be staged)."""
    from memcurate.curator.proposals import store as proposal_store
    from memcurate.curator.proposals.store import ProposalError

    spec = f.detail.get("fix")
    bare = _without_fix(f)
    if not spec:
        return bare
    finding = {"code": f.code, "refs": list(f.refs)}
    try:
        pid = proposal_store.stage(
            engine.data,
            spec["kind"],
            spec["title"],
            spec["reason"],
            spec["ops"],
            source="check",
            finding=finding,
        )
    except (ProposalError, OSError) as e:
        errors.append(f"{f.code} {', '.join(f.refs[:3])}: its proposal could not be staged: {e}")
        return bare
    if pid is None:
        pid = known_proposal(engine, spec, f.code)
    return Finding(bare.code, bare.severity, bare.refs, bare.message, bare.detail, pid)


def known_proposal(engine: Context, spec: dict, code: str | None = None) -> str | None:
    """The id of the proposal (any state) staged for the same kind, finding code (`code`, else the
    spec's own), refs and base hashes as `spec`: the same finding on the same bytes, whatever its text."""
    from memcurate.curator.proposals.store import known

    return known(
        engine.data, spec["kind"], spec["ops"], spec.get("code", "") if code is None else code
    )


def flags(data: str) -> dict[str, list[Finding]]:
    """ref -> the last check's findings about it (empty before any check, or when the cache is unreadable)."""
    try:
        doc = read_json(cache_path(data))
        rows = doc["findings"] if doc.get("format") == FORMAT else []
        found = [Finding.from_dict(r) for r in rows]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}
    out: dict[str, list[Finding]] = {}
    for f in found:
        for ref in f.refs:
            out.setdefault(ref, []).append(f)
    return out
