"""The staging directory: the single source of truth for work in progress, and its layout.

    <data dir>/staging/<triage id>/triage.json  what triage found (written once)
    <data dir>/staging/<triage id>/state.log    its categories' moves, one JSON line each, appended
    <data dir>/staging/<triage id>/second_look.json  the second look at the session, when one was asked
    <data dir>/staging/<triage id>/.claim       the lock of the process working on it (dies with it)
    <data dir>/staging/<triage id>/drafts/<category>.md        the file to be written: reviewed and edited
    <data dir>/staging/<triage id>/drafts/<category>.draft.md  the drafter's own document
    <data dir>/staging/<triage id>/review/<category>.json      decision and issues

A triggered category with no line in the log yet is `triaged`: the hook writes
one file per triage, not one per category (each durable write costs an fsync
on the hook's clock). A triage appears whole: it is written in
`staging/.incoming/` and renamed into place. A category's state is its last
line in the log: a move is one short append, not a new file (creating and
renaming a file costs a millisecond or more on a busy disk, and a save makes
two moves). Every other file is written atomically. Later stages add files
beside `triage.json`.

A triage may ask for a second look at the session (its `second_look`: the byte range, the categories
the keywords found); the look's outcome, with the categories it added and those it confirmed, is
`second_look.json`, and `load_triage` merges those into the document: every reader sees the added ones as
triggered categories, and a confirmed one with the look's evidence.
"""

from __future__ import annotations

import marshal
import os
import time

from memcurate.curator.categories import base
from memcurate.curator.errors import Refusal
from memcurate.curator.util import fastjson
from memcurate.curator.util.atomic import append_line, dump_json, read_json, sweep_temps, write_json
from memcurate.curator.util.fieldtuple import FieldTuple
from memcurate.curator.util.safe_open import read_path
from memcurate.curator.util.stamps import now_iso

FORMAT = 1
STAGING = "staging"
STATE_LOG = "state.log"
SECOND_LOOK = "second_look.json"
# what a look's confirmation gives a keyword category (its snippets stay)
CONFIRMED_KEYS = (
    "look",
    "excerpt",
    "entries",
)
LOOK_ATTEMPTS = 2  # a failed second look is tried again once, by the next run: never in a loop
INCOMING = ".incoming"

# A category's life: triage → draft → verify → review → save.
TRANSITIONS: dict[str, tuple[str, ...]] = {
    # skipped: a second look that read the whole session did not confirm the keywords' category
    "triaged": ("drafting", "rejected", "skipped"),
    # A claimant that finds a step left half-done by a killed process starts it again.
    "drafting": ("drafted", "failed", "skipped", "drafting", "rejected"),
    "drafted": ("verifying", "failed", "drafting"),
    "verifying": ("ready", "failed", "drafting"),
    # ready again: verified again after an edit; skipped: another category of the triage holds its fact
    "ready": ("approved", "rejected", "drafting", "ready", "skipped"),
    "approved": ("saved", "failed", "ready"),
    "failed": ("drafting", "rejected"),
    "rejected": (),
    "saved": (),
    # The model found nothing durable (the draft's answer, or a second look that read the whole session), or
    # another category of the triage holds the same fact (its `reason` is on the line). Final: drafting it
    # again would send the same transcript bytes for the same answer, and a skip is never saved.
    "skipped": (),
}
STATES: tuple[str, ...] = tuple(TRANSITIONS)
# What each state means to a person (`memcurate status`).
STATE_MEANING = {
    "triaged": "found by the hook, not drafted yet",
    "drafting": "being drafted (or left half-done)",
    "drafted": "drafted, not verified yet",
    "verifying": "being verified",
    "ready": "drafted and verified: waiting for your review",
    "approved": "approved, being saved",
    "failed": "drafting failed: retry with x in the TUI",
    "rejected": "rejected",
    "saved": "saved",
    "skipped": "nothing durable, or another category holds its fact",
}
FINAL: frozenset[str] = frozenset(s for s, moves in TRANSITIONS.items() if not moves)
PENDING: frozenset[str] = frozenset(s for s in STATES if s not in FINAL)
# a drafting step under way (or left half-done)
IN_FLIGHT: tuple[str, ...] = (
    "drafting",
    "drafted",
    "verifying",
)


class StagingError(Refusal):
    """A staged file is missing, unreadable or malformed, or a state change is not allowed."""


class NotACategory(StagingError):
    """The category is not one the triage triggered."""


def staging_dir(data) -> str:
    return os.path.join(os.fspath(data), STAGING)


def triage_dir(data, triage_id: str) -> str:
    if not triage_id or "/" in triage_id or triage_id.startswith("."):
        raise StagingError(f"invalid triage id {triage_id!r}")
    return os.path.join(staging_dir(data), triage_id)


class CandidateFiles(FieldTuple):
    """A candidate's files: `file`, the file to be written (what the person reviews and edits); `draft`, the
    drafter's own document, kept for deciding again; `review`, the decision and the issues found. A named
    tuple (util/fieldtuple.py): `typing` costs the Stop hook ~5 ms to import when it stages a triage."""

    __slots__ = ()
    file: str
    draft: str
    review: str

    def __new__(cls, file: str, draft: str, review: str) -> CandidateFiles:
        return super().__new__(cls, (file, draft, review))


def candidate_files(data, triage_id: str, category: str) -> CandidateFiles:
    folder = triage_dir(data, triage_id)
    return CandidateFiles(
        os.path.join(folder, "drafts", f"{category}.md"),
        os.path.join(folder, "drafts", f"{category}.draft.md"),
        os.path.join(folder, "review", f"{category}.json"),
    )


def claim_path(data, triage_id: str) -> str:
    return os.path.join(triage_dir(data, triage_id), ".claim")


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


def _state_record(
    category: str, state: str, stamp: str, history: list | None = None, **extra
) -> dict:
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


def sweep_triage_temps(data, triage_id: str) -> int:
    """Remove the temp files killed writers left in a triage's folders (call it under the claim)."""
    folder = triage_dir(data, triage_id)
    return sum(sweep_temps(os.path.join(folder, sub)) for sub in ("", "drafts", "review"))


def triage_ids(data) -> list[str]:
    """Staged triage ids, oldest first (ids start with the time of their first record)."""
    try:
        names = os.listdir(staging_dir(data))
    except OSError:
        return []
    return sorted(n for n in names if not n.startswith("."))


# What the last reads of a few triages parsed, by path: (the bytes read, what they gave, marshalled: a copy of
# its own for each reader, made in a fifth of a parse). A save run reads each triage five times (pending,
# resume, process, candidates, approve): every read reads the file again, and parses only what differs from
# the bytes kept (of the state log, the lines appended since). Bytes, not a stat signature: a file
# rewritten in the same tick with the same size is still read as it is.
_PARSED: dict[str, tuple[bytes, bytes]] = {}
_PARSED_MAX = 128  # files: a run's chunk of 64 triages, their documents and logs


def _keep(path: str, data: bytes, parsed) -> None:
    try:
        copy = marshal.dumps(parsed)
    except ValueError:  # (JSON gives nothing marshal refuses; not kept if it ever does)
        return
    _PARSED.pop(path, None)  # the newest last: the oldest goes first
    while len(_PARSED) >= _PARSED_MAX:
        try:
            del _PARSED[next(iter(_PARSED))]
        except (KeyError, RuntimeError, StopIteration):  # another thread made room first
            break
    _PARSED[path] = (data, copy)


def _read_doc(path: str):
    """read_json(path), parsed only when its bytes are not those last parsed."""
    data = read_path(path)
    kept = _PARSED.get(path)
    if kept is not None and kept[0] == data:
        return marshal.loads(kept[1])
    doc = fastjson.loads(data)
    _keep(path, data, doc)
    return doc


def load_triage(data, triage_id: str) -> dict:
    path = os.path.join(triage_dir(data, triage_id), "triage.json")
    try:
        doc = _read_doc(path)
    except FileNotFoundError:
        raise StagingError(f"{path}: missing") from None
    except (OSError, ValueError) as e:
        raise StagingError(f"{path}: unreadable ({e})") from None
    if (
        not isinstance(doc, dict)
        or not isinstance(doc.get("categories"), dict)
        or doc.get("id") != triage_id
    ):
        raise StagingError(f"{path}: not a memcurate triage")
    if isinstance(doc.get("second_look"), dict):
        _merge_second_look(doc, read_second_look(data, triage_id))
    return doc


def second_look_path(data, triage_id: str) -> str:
    return os.path.join(triage_dir(data, triage_id), SECOND_LOOK)


def read_second_look(data, triage_id: str) -> dict | None:
    """The second look's record (None before it was made)."""
    path = second_look_path(data, triage_id)
    try:
        look = read_json(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise StagingError(f"{path}: unreadable ({e})") from None
    if not isinstance(look, dict) or not isinstance(look.get("added", {}), dict):
        raise StagingError(f"{path}: not a second look")
    return look


def write_second_look(data, triage_id: str, look: dict) -> None:
    write_json(second_look_path(data, triage_id), look)


def _merge_second_look(doc: dict, look: dict | None) -> None:
    """The one place the categories a second look added join the triage: as triggered categories,
    marked `found_by: second_look` (a category the keywords triggered is never replaced). The look's
    record itself goes with the request (`second_look.record`, {} before it was made), so no reader
    opens the file again."""
    doc["second_look"] = {**doc["second_look"], "record": look or {}}
    for name, entry in ((look or {}).get("added") or {}).items():
        cat = doc["categories"].get(name)
        # a further fact: its slot, "decision-2"
        if cat is None and isinstance(name, str) and base(name) != name:
            cat = {"triggered": False}
        if isinstance(entry, dict) and isinstance(cat, dict) and not cat.get("triggered"):
            doc["categories"][name] = {
                **cat,
                **entry,
                "category": base(name),
                "triggered": True,
                "found_by": "second_look",
            }
    # A category the keywords triggered and the look confirmed is drafted from the look's statement and
    # the digest entries it cited (its excerpt in triage.json stays as triage wrote it); one the look did
    # not confirm keeps its keyword excerpt.
    confirmed = (look or {}).get("confirmed")
    for name, entry in confirmed.items() if isinstance(confirmed, dict) else ():
        cat = doc["categories"].get(name)
        if (
            isinstance(entry, dict)
            and isinstance(cat, dict)
            and cat.get("triggered")
            and not cat.get("found_by")
        ):
            doc["categories"][name] = {
                **cat,
                **{k: entry[k] for k in CONFIRMED_KEYS if k in entry},
                "confirmed_by": "second_look",
            }


def look_due(doc: dict) -> bool:
    """Whether a triage's second look is still to be made: asked for, and not made, or failed with an
    attempt left (taken by the next run)."""
    request = doc.get("second_look")
    if not isinstance(request, dict):
        return False
    record = request.get("record") or {}
    state = record.get("state")
    return state is None or (state == "failed" and record.get("attempts", 0) < LOOK_ATTEMPTS)


def _state_log(data, triage_id: str) -> str:
    return os.path.join(triage_dir(data, triage_id), STATE_LOG)


def _log_bytes(path: str) -> bytes:
    """The log's complete lines: what follows the last line break is unfinished (a killed writer)."""
    try:
        data = read_path(path)
    except FileNotFoundError:
        return b""
    except OSError as e:
        raise StagingError(f"{path}: unreadable ({e.strerror or e})") from None
    return data[: data.rfind(b"\n") + 1]


def _log_lines(path: str) -> list[bytes]:
    return _log_bytes(path).split(b"\n")[:-1]


def _record(line: bytes) -> dict | None:
    """A log line as a state record, or None: a line that does not read as one is skipped (a killed
    writer leaves at most its last line unfinished, and that move is simply done again)."""
    try:
        rec = fastjson.loads(line)
    except ValueError:
        return None
    if (
        not isinstance(rec, dict)
        or rec.get("state") not in TRANSITIONS
        or not isinstance(rec.get("category"), str)
        or not isinstance(rec.get("updated"), str)
    ):
        return None
    return rec


def _read_log(path: str) -> dict[str, dict]:
    """Category -> its latest record, with the history of its moves, from the log's complete lines. Lines
    parsed by an earlier read of these bytes are not parsed again: a fold over the lines in order, taken up
    where it stood after them (_PARSED)."""
    done = _log_bytes(path)
    kept = _PARSED.get(path)
    if kept is not None and done.startswith(kept[0]):
        latest: dict[str, dict] = marshal.loads(kept[1])
        if len(done) == len(kept[0]):
            return latest
        new = done[len(kept[0]) :]
    else:
        latest, new = {}, done
    for line in new.split(b"\n")[:-1]:
        rec = _record(line)
        if rec is None:
            continue
        before = latest.get(rec["category"])
        history = before["history"] if before else []
        history.append([rec["state"], rec["updated"]])
        rec["history"] = history
        latest[rec["category"]] = rec
    _keep(path, done, latest)
    return latest


def _read_last(path: str) -> dict[str, dict]:
    """Category -> its latest record without its history: _read_log's records, read from the log's end.

    A line is parsed only when it may be the last record of a category not seen yet (a queue of
    thousands of rows needs one line a category, not the five or more moves before it). A line is
    passed over unparsed only when its bytes say which category it is, as set_state writes it: it
    starts with that category's key, names the key once, and holds no \\u escape (which could spell the
    key again). Anything else, forged or torn, is parsed and judged as _read_log judges it."""
    latest: dict[str, dict] = {}
    seen: tuple[bytes, ...] = ()  # the line starts of the categories found
    for line in reversed(_log_lines(path)):
        if seen and line.startswith(seen) and line.count(b'"category"') == 1 and b"\\u" not in line:
            continue
        rec = _record(line)
        if rec is None or rec["category"] in latest:
            continue
        rec.pop("history", None)
        latest[rec["category"]] = rec
        seen += (b'{"category":' + fastjson.dumps_compact(rec["category"]).encode() + b",",)
    return latest


def _triggered(doc: dict, triage_id: str, category: str) -> None:
    cat = doc["categories"].get(category)
    if not isinstance(cat, dict) or not cat.get("triggered"):
        raise NotACategory(f"{triage_id}/{category}: not a triggered category of this triage")


def category_states(
    data, triage_id: str, doc: dict | None = None, *, history: bool = True
) -> dict[str, dict]:
    """The state record of each triggered category of a triage. With `history` False, each is its last
    state line alone, without its moves (what a queue row needs): the log is read from its end."""
    doc = doc or load_triage(data, triage_id)
    path = _state_log(data, triage_id)
    latest = _read_log(path) if history else _read_last(path)
    created = doc.get("created", "")
    out = {}
    for name, cat in doc["categories"].items():
        if isinstance(cat, dict) and cat.get("triggered"):
            if name in latest:
                rec = out[name] = latest[name]
                if history:
                    rec["history"] = ([["triaged", created]] + rec["history"])[-50:]
                continue
            # A category the second look found says so on its every state line (the moves keep it).
            found = {"found_by": cat["found_by"]} if cat.get("found_by") else {}
            rec = out[name] = _state_record(name, "triaged", created, **found)
            if not history:
                del rec["history"]
    return out


def category_state(data, triage_id: str, category: str, doc: dict | None = None) -> dict:
    """The state record of one triggered category; NotACategory for any other name."""
    doc = doc or load_triage(data, triage_id)
    _triggered(doc, triage_id, category)
    return category_states(data, triage_id, doc)[category]


def set_state(
    data,
    triage_id: str,
    category: str,
    state: str,
    *,
    doc: dict | None = None,
    current: dict | None = None,
    **extra,
) -> dict:
    """Move one category to `state`, keeping its fields; refuse a move the life cycle does not allow.

    `doc` is the triage and `current` the category's record when the caller has them already
    (under the triage's claim nothing else changes them); they are read otherwise."""
    doc = doc or load_triage(data, triage_id)
    _triggered(doc, triage_id, category)
    rec = current or category_state(data, triage_id, category, doc)
    now = rec.get("state")
    if state not in TRANSITIONS.get(str(now), ()):
        raise StagingError(f"{triage_id}/{category}: cannot go from {now} to {state}")
    kept = {k: v for k, v in rec.items() if k not in ("category", "state", "updated", "history")}
    kept.update(extra)
    stamp = now_iso()
    line = {"category": category, "state": state, "updated": stamp, **kept}
    # Appended, not fsynced: a move lost to a power cut (or a kill mid-line) is done again,
    # and every step is redone safely (the save recognises a file already written).
    append_line(_state_log(data, triage_id), dump_json(line, compact=True))
    return _state_record(category, state, stamp, rec.get("history"), **kept)


def counts(data) -> dict:
    """Categories by state over every staged triage; unreadable triages are counted, not fatal."""
    from collections import Counter  # here: the hook that stages a triage never counts them

    by_state: Counter = Counter()
    triages = errors = 0
    for tid in triage_ids(data):
        triages += 1
        try:
            for rec in category_states(data, tid).values():
                by_state[rec["state"]] += 1
        except StagingError:
            errors += 1
    return {
        "triages": triages,
        "unreadable": errors,
        "by_state": {s: by_state[s] for s in STATES if by_state[s]},
        "pending": sum(n for s, n in by_state.items() if s in PENDING),
    }
