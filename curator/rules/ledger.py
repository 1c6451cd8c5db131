"""The failure ledger: how many sessions saw each failure signature, in the data dir, without locks.

    failures/<session>.<n>.json        what one record call saw (a hook call, a transcript pass): the
                                       session, and for each signature it saw, the failure, when, the
                                       command, the error and what fixed it. Written once, never changed
                                       (forgetting writes the rest under a new name and removes the old).
    failures/.index.json               a cache of which signatures each of those files holds
    failures/<key>/failure.json        the layout before stop 38 (a folder per signature, a file per
    failures/<key>/<session>.json      session that saw it): still read, forgotten and pruned, never written

A call makes one file, whatever it saw (a transcript pass with 20 failures made 20 folders and 40
files before: the inodes were most of the Stop hook's first call). Every file is made whole in a
temp file and linked into place, which never replaces a file: a writer killed half-way leaves no half
file to count. Two calls of one session at once pick the same next name; the one that loses reads the
winner's file and records only what it does not hold, so a session counts once and a retry is no
new occurrence. A signature's count is the sessions of the files that hold it.

The index spares a record the reading of every file: a file is named once and never rewritten, so
the index's word for a listed name holds; a name it lacks is read. Like everything in the data dir it
is untrusted (Claude can write it): the hook only stages a pending candidate from its counts, and the
engine (evidence) reads the files themselves before it shows or counts anything.

At the threshold the candidate record (rules/<key>.json, read and changed by candidates.py) is
created here, once: whoever first sees the threshold reached stages it, and a record that exists
(pending, approved or rejected) is never made again. It is created here rather than in
candidates.py because candidates.py reads the ledger, and the hook should load only this module.

Command, error and fix text are redacted before they touch the disk, and capped. So is the ledger:
at most rules.ledger_max_entries files and rules.ledger_max_bytes bytes (a hostile session can invent
new failures without end); past either, whole signatures are forgotten, the rarest and oldest first,
never one a rule candidate rests on (enforce_caps).
Stdlib only (and curator's light utilities): the PostToolUse hook imports it.
"""

from __future__ import annotations

import errno
import os
import time

from memcurate.curator.util import fastjson
from memcurate.curator.util.atomic import (
    dump_json,
    is_temp_name,
    sweep_temps,
    write_json,
    write_new,
)
from memcurate.curator.util.lazyre import LazyRegex
from memcurate.curator.util.private import make_dirs
from memcurate.curator.util.redact import redact_text
from memcurate.curator.util.safe_open import open_regular, read_at_most
from memcurate.curator.util.stamps import now_iso
from memcurate.curator.util.textsafe import clean, one_line

FAILURES_DIR = "failures"
CANDIDATES_DIR = "rules"  # the candidate records (not the rules folder: util/paths.RULES_DIR)
PREFIX = "rule/"  # how a review id, a log line and a message name a candidate: rule/<key>
FAILURE_FILE = "failure.json"
CANDIDATE_FORMAT = 1
MAX_COMMAND = 300
MAX_ERROR = 600
MAX_FIX = 400
MAX_FILES = 10
MAX_SESSION = 80
# The ledger's caps (rules.ledger_max_entries / ledger_max_bytes): files (a failure and each session that
# saw it are one each) and their bytes. A hostile session can fail in endless new ways; the ledger stays small.
DEFAULT_MAX_ENTRIES = 2000
DEFAULT_MAX_BYTES = 1 << 20
INDEX_FILE = (
    ".index.json"  # in failures/: which signatures each record call's file holds, and its size
)
FORMAT = 2  # of a record call's file and of the index
INDEX_EVERY = 8  # files a record reads past the index before it writes a fresh one
MAX_FILE = 256 * 1024  # a call's file larger is not the ledger's (a call writes a few KiB): skipped
MAX_INDEX = 8 << 20
# a ledger past a cap is cut to this share of it: a flood does not recount on every record
LOW_WATER = 0.9
KEY_LENGTH = 12
_HEX = frozenset("0123456789abcdef")
_UNSAFE = LazyRegex(r"[^A-Za-z0-9_-]")
# what a session id used as a file name as it is may hold (no pattern to compile: a hook records many)
_SESSION_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


class Recorded:
    """What one `record` call did: the signature's key, whether this session's occurrence is new,
    how many sessions have now seen it, and whether this call staged its candidate."""

    __slots__ = ("key", "new", "sessions", "staged")

    def __init__(self, key: str, new: bool, sessions: int, staged: bool) -> None:
        self.key, self.new, self.sessions, self.staged = key, new, sessions, staged

    def __repr__(self) -> str:
        return f"Recorded({self.key!r}, new={self.new}, sessions={self.sessions}, staged={self.staged})"


# -- names -------------------------------------------------------------------------------------------


def is_key(key: object) -> bool:
    return isinstance(key, str) and len(key) == KEY_LENGTH and _HEX.issuperset(key)


def session_name(session: str) -> str:
    """A session id as a file name, one per id: the id itself when it is already [A-Za-z0-9_-]{1,80}
    (Claude Code's are), else a readable prefix and a hash of the whole id after a dot, which no id
    used as-is holds (so `a.b` and `a_b`, or two ids sharing their first 80 characters, stay apart)."""
    session = session or "unknown"
    if len(session) <= MAX_SESSION and _SESSION_CHARS.issuperset(session) and session != "failure":
        return session
    from memcurate.curator.rules.signature import (
        sha256_hex,  # the hook's own SHA-256: hashlib loads OpenSSL
    )

    digest = sha256_hex(session.encode("utf-8", "surrogatepass"))[:12]
    return f"{_UNSAFE.sub('_', session)[: MAX_SESSION - 13]}.{digest}"


def session_for(session_id: object, transcript: object = "") -> str:
    """The session to count under: its id; without one, the transcript's name, which is the session id
    (Claude Code names a transcript `<session id>.jsonl`, and the triage reads that id from inside it:
    the hook and the triage then count one session once); else one for the whole project."""
    if isinstance(session_id, str) and session_id.strip():
        return session_id
    if isinstance(transcript, str) and transcript:
        stem = os.path.basename(transcript).rsplit(".", 1)[0]
        if stem:
            return stem
    return "unknown-session"


def failure_dir(data, key: str) -> str:
    if not is_key(key):
        raise ValueError(f"not a failure signature key: {key!r}")
    return os.path.join(os.fspath(data), FAILURES_DIR, key)


def candidate_path(data, key: str) -> str:
    if not is_key(key):
        raise ValueError(f"not a rule candidate id: {key!r}")
    return os.path.join(os.fspath(data), CANDIDATES_DIR, f"{key}.json")


# -- what goes on disk -------------------------------------------------------------------------------


def cap(text: str, limit: int, *, lines: bool = False) -> str:
    """`text` redacted, then cut to `limit` characters (redact first: a cut could split a secret and
    keep half of it). `lines` keeps line breaks (an error excerpt); else one line."""
    text = redact_text(text or "")
    if not lines:
        return one_line(text, limit)
    text = clean(text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _files(files) -> list[str]:
    return [
        one_line(redact_text(f), 300)
        for f in list(files or ())[:MAX_FILES]
        if isinstance(f, str) and f
    ]


def clean_fix(fix: dict | None) -> dict | None:
    """A fix as it is stored: {"text", "files", "command"}, redacted and capped; None stays None."""
    if not fix:
        return None
    return {
        "text": cap(str(fix.get("text") or ""), MAX_FIX),
        "files": _files(fix.get("files")),
        "command": cap(str(fix.get("command") or ""), MAX_COMMAND),
    }


class _Capped(dict):
    """cap() of each text once: a call's failures share commands, and an error is often the excerpt."""

    def __call__(self, text: str, limit: int, *, lines: bool = False) -> str:
        got = self.get((text, limit, lines))
        if got is None:
            got = self[text, limit, lines] = cap(text, limit, lines=lines)
        return got


def _failure_doc(failure, at: str, capped=cap) -> dict:
    doc = failure.as_dict() if hasattr(failure, "as_dict") else dict(failure)
    for name in ("signature", "test", "message", "error_type"):
        if isinstance(doc.get(name), str):
            doc[name] = capped(doc[name], 300)
    doc["excerpt"] = capped(str(doc.get("excerpt") or ""), MAX_ERROR, lines=True)
    doc["files"] = _files(doc.get("files"))
    doc["key"] = failure.key
    doc["first_seen"] = at
    return doc


# -- recording ---------------------------------------------------------------------------------------


class Sighting:
    """One failure a record call saw: when, the command that failed, its error, and what fixed it
    (None when the call does not know)."""

    __slots__ = ("failure", "at", "command", "error", "fix")

    def __init__(self, failure, at: str, command: str, error: str, fix: dict | None = None) -> None:
        self.failure, self.at, self.command, self.error, self.fix = failure, at, command, error, fix


def record(
    data,
    failure,
    *,
    session: str,
    at: str,
    command: str,
    error: str,
    source: str,
    transcript: str = "",
    fix: dict | None = None,
    threshold: int,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Recorded:
    """Count `failure` (a signature.Failure) once for `session`: record_all of one sighting."""
    return record_all(
        data,
        [Sighting(failure, at, command, error, fix)],
        session=session,
        source=source,
        transcript=transcript,
        threshold=threshold,
        max_entries=max_entries,
        max_bytes=max_bytes,
    )[0]


def record_all(
    data,
    sightings,
    *,
    session: str,
    source: str,
    transcript: str = "",
    threshold: int,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> list[Recorded]:
    """Count each failure of `sightings` once for `session`, all in one file; stage the candidate of
    each that reaches `threshold`. Returns a Recorded per signature, in the order first seen.

    A signature the session already counted gains nothing but, when its sighting has a fix the
    session's occurrence does not hold yet, that fix. Of two sightings of one signature the first
    is its occurrence and the last fix given is its fix. A file past the ledger's caps makes room by
    forgetting others (enforce_caps). Raises OSError when the data dir cannot be written (the caller
    logs it)."""
    plan: dict[str, Sighting] = {}
    for s in sightings:
        first = plan.get(s.failure.key)
        if first is None:
            plan[s.failure.key] = s
        elif s.fix:
            plan[s.failure.key] = Sighting(
                first.failure, first.at, first.command, first.error, s.fix
            )
    if not plan:
        return []
    sname = session_name(session)
    view = _View(data)
    legacy = {key: _legacy_sessions(data, key) if key in view.old else set() for key in plan}
    held = view.session_keys(sname)
    entries: dict[str, dict] = {}
    new: set[str] = set()
    capped = _Capped()
    for key, s in plan.items():
        fix = clean_fix(s.fix)
        at = s.at or now_iso()
        if key in held or sname in legacy[key]:
            if fix and _session_fix(data, view, sname, key) != fix:
                entries[key] = {"at": at, "fix": fix}
            continue
        entries[key] = {
            "failure": _failure_doc(s.failure, at, capped),
            "at": at,
            "command": capped(s.command, MAX_COMMAND),
            "error": capped(s.error, MAX_ERROR, lines=True),
            "files": _files(getattr(s.failure, "files", ())),
            "fix": fix,
        }
        new.add(key)
    if entries:
        _write_seen(view, sname, session, source, transcript, entries, new)
    counts = view.sessions_of(legacy)
    out = [
        Recorded(k, k in new, counts[k], counts[k] >= threshold and stage(data, k)) for k in plan
    ]
    if entries or view.read >= INDEX_EVERY:
        files, size = view.totals()
        if files > max_entries or size > max_bytes:
            enforce_caps(data, max_entries, max_bytes, keep=frozenset(plan))
        elif view.read >= INDEX_EVERY:
            view.save()
    return out


def _write_seen(
    view: _View, sname: str, session: str, source: str, transcript: str, entries: dict, new: set
) -> None:
    """Link a file of `entries` into the ledger under the session's next free number. A name taken meanwhile
    is another call of this session's: what its file holds is not recorded again (nor counted new)."""
    doc = {
        "format": FORMAT,
        "session": one_line(session, 200),
        "source": source,
        "transcript": transcript or "",
        "seen": entries,
    }
    make_dirs(view.root)
    number = view.next_number(sname)
    for _ in range(64):
        name = f"{sname}.{number}.json"
        body = dump_json(doc, compact=True)
        if write_new(os.path.join(view.root, name), body, durable=False):
            view.files[name] = (tuple(entries), len(body))
            return
        for key in view.add_read(name):
            entries.pop(key, None)
            new.discard(key)
        if not entries:
            return
        number += 1
    raise OSError(errno.EEXIST, "no free file name in the failure ledger", view.root)


def stage(data, key: str) -> bool:
    """Create the pending candidate record of `key` unless one exists (in any state); returns whether
    this call created it."""
    path = candidate_path(data, key)
    if os.path.exists(path):
        return False
    make_dirs(os.path.dirname(path))
    stamp = now_iso()
    doc = {
        "format": CANDIDATE_FORMAT,
        "id": key,
        "state": "pending",
        "created": stamp,
        "updated": stamp,
        "draft": None,
        "edit": None,
        "decision": None,
    }
    return write_new(path, dump_json(doc))


def add_fix(data, key: str, session: str, fix: dict) -> bool:
    """Record what fixed `key` in `session` (the transcript triage knows it later than the hook).
    Returns whether the occurrence changed: False when it does not exist or already holds this fix."""
    sname, cleaned = session_name(session), clean_fix(fix)
    view = _View(data)
    if not cleaned or (
        key not in view.session_keys(sname) and sname not in _legacy_sessions(data, key)
    ):
        return False
    if _session_fix(data, view, sname, key) == cleaned:
        return False
    _write_seen(view, sname, session, "fix", "", {key: {"at": now_iso(), "fix": cleaned}}, set())
    return True


# -- the files ---------------------------------------------------------------------------------------


def _seen_name(name: str) -> tuple[str, int] | None:
    """(session name, number) of a record call's file name `<session>.<n>.json`; None for any other name."""
    if not name.endswith(".json"):
        return None
    sname, dot, number = name[:-5].rpartition(".")
    if not (dot and number.isdigit() and len(number) <= 9 and 0 < len(sname) <= MAX_SESSION):
        return None
    if not _SESSION_CHARS.issuperset(sname.replace(".", "", 1)):
        return None
    return sname, int(number)


def _names(root: str) -> list[str]:
    try:
        return os.listdir(root)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _listing(root: str) -> list[str]:
    """The record calls' files (temp files, folders of before, the index and any other name left out)."""
    return [n for n in _names(root) if _seen_name(n) is not None]


def files(data) -> list[str]:
    """The paths of the ledger's files, one per record call, in the order written (by session)."""
    root = os.path.join(os.fspath(data), FAILURES_DIR)
    return [os.path.join(root, n) for n in sorted(_listing(root), key=_order)]


def _read_seen(path: str, notes: list | None) -> tuple[dict | None, int]:
    """A record call's file: its document and size; None when it is gone, damaged or not one (named in `notes`).
    Opened as a regular file only: a FIFO or symlink put there is refused, never waited on or followed."""
    try:
        with open_regular(path) as f:
            raw = read_at_most(f, MAX_FILE)
        doc = fastjson.loads(raw) if len(raw) <= MAX_FILE else None
    except FileNotFoundError:
        return None, 0
    except (OSError, ValueError) as e:
        if notes is not None:
            notes.append(f"{path}: unreadable ({e.__class__.__name__}), skipped")
        return None, 0
    if not (isinstance(doc, dict) and isinstance(doc.get("seen"), dict)):
        if notes is not None:
            notes.append(f"{path}: not a failure ledger file, skipped")
        return None, len(raw)
    return doc, len(raw)


def _keys_in(doc: dict | None) -> tuple[str, ...]:
    return (
        ()
        if doc is None
        else tuple(k for k, v in doc["seen"].items() if is_key(k) and isinstance(v, dict))
    )


class _View:
    """The record calls' files as one listing (and the folders of before), with the signatures each file holds: the index's word for a name it
    lists (a name is never rewritten), else the file's own, read (`read` counts them)."""

    __slots__ = ("data", "root", "files", "read", "legacy", "damaged", "old")

    def __init__(self, data) -> None:
        self.data = os.fspath(data)
        self.root = os.path.join(self.data, FAILURES_DIR)
        self.files: dict[str, tuple[tuple[str, ...], int]] = {}  # name -> (keys, bytes)
        self.read = 0
        self.damaged: list[str] = []  # notes on the files read that are not the ledger's
        index = _read_index(self.data)
        known = index[0] if index else {}
        self.legacy: list[int] | None = (
            index[1] if index else None
        )  # [files, bytes] of failures/<key>/
        names = _names(self.root)
        self.old = [n for n in names if is_key(n)]  # the folders of the layout before
        for name in names:
            if _seen_name(name) is None:
                continue
            got = known.get(name)
            if got is None:
                self.add_read(name)
            else:
                self.files[name] = got

    def add_read(self, name: str) -> tuple[str, ...]:
        doc, size = _read_seen(os.path.join(self.root, name), self.damaged)
        self.read += 1
        keys = _keys_in(doc)
        if doc is not None or size:
            self.files[name] = (keys, size)
        return keys

    def holding(self, key: str) -> list[str]:
        """The files that hold `key`, in the order written (by session, then number)."""
        return sorted((n for n, (keys, _) in self.files.items() if key in keys), key=_order)

    def session_keys(self, sname: str) -> set[str]:
        found: set[str] = set()
        for name, (keys, _) in self.files.items():
            if _session_of(name) == sname:
                found.update(keys)
        return found

    def next_number(self, sname: str) -> int:
        numbers = [n for s, n in map(_order, self.files) if s == sname]
        return max(numbers) + 1 if numbers else 0

    def sessions_of(self, legacy: dict[str, set[str]]) -> dict[str, int]:
        """How many sessions saw each key of `legacy` (a key -> its sessions in failures/<key>/)."""
        seen = {key: set(sessions) for key, sessions in legacy.items()}
        for name, (keys, _) in self.files.items():
            for key in keys:
                if key in seen:
                    seen[key].add(_session_of(name))
        return {key: len(sessions) for key, sessions in seen.items()}

    def totals(self) -> tuple[int, int]:
        """The ledger's files and bytes (what its caps count), the old layout's included."""
        if self.legacy is None:
            self.legacy = _legacy_totals(self.data, self.old)
        files = len(self.files) + self.legacy[0]
        return files, sum(size for _, size in self.files.values()) + self.legacy[1]

    def save(self) -> None:
        """Write the index (a cache: a write lost to a race or a full disk costs the next call reads)."""
        self.totals()
        doc = {
            "format": FORMAT,
            "files": {name: [list(keys), size] for name, (keys, size) in self.files.items()},
            "legacy": self.legacy,
        }
        try:
            write_json(
                os.path.join(self.data, FAILURES_DIR, INDEX_FILE), doc, durable=False, compact=True
            )
        except OSError:
            pass


def _order(name: str) -> tuple[str, int]:
    return _seen_name(name) or ("", 0)


def _session_of(name: str) -> str:
    return _order(name)[0]


def _sighting(view: _View, name: str, key: str, notes: list | None) -> dict | None:
    """What file `name` holds of `key`, with the call's session, source and transcript."""
    doc, _ = _read_seen(os.path.join(view.root, name), notes)
    entry = None if doc is None else doc["seen"].get(key)
    if doc is None or not isinstance(entry, dict):
        return None
    found = {k: doc.get(k) for k in ("session", "source", "transcript")}
    return {**entry, **found}


def _read_index(data: str) -> tuple[dict, list[int] | None] | None:
    """The index's files ({name: (keys, bytes)}) and the old layout's [files, bytes]; None when it is
    missing or is not one (a FIFO or symlink put there is refused, never waited on or followed)."""
    try:
        with open_regular(os.path.join(data, FAILURES_DIR, INDEX_FILE)) as f:
            raw = read_at_most(f, MAX_INDEX)
        doc = fastjson.loads(raw) if len(raw) <= MAX_INDEX else None
    except (OSError, ValueError):
        return None
    if not (isinstance(doc, dict) and doc.get("format") == FORMAT):
        return None
    files, legacy = doc.get("files"), doc.get("legacy")
    if not isinstance(files, dict):
        return None
    known = {}
    for name, entry in files.items():
        if (
            isinstance(entry, list)
            and len(entry) == 2
            and isinstance(entry[0], list)
            and type(entry[1]) is int
            and _seen_name(name) is not None
        ):
            known[name] = (tuple(k for k in entry[0] if is_key(k)), max(entry[1], 0))
    ok = (
        isinstance(legacy, list)
        and len(legacy) == 2
        and all(type(v) is int and v >= 0 for v in legacy)
    )
    return known, (legacy if ok else None)


# -- the layout before stop 38: failures/<key>/ ------------------------------------------------------


def _session_files(folder: str) -> list[str]:
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [n for n in names if n.endswith(".json") and n != FAILURE_FILE and not is_temp_name(n)]


def _legacy_sessions(data, key: str) -> set[str]:
    return {n[:-5] for n in _session_files(failure_dir(data, key))}


def _legacy_totals(data, keys: list[str]) -> list[int]:
    files = size = 0
    for key in keys:
        try:
            with os.scandir(failure_dir(data, key)) as listing:
                for f in listing:
                    files += 1
                    size += f.stat(follow_symlinks=False).st_size
        except OSError:
            continue
    return [files, size]


# -- reading -----------------------------------------------------------------------------------------


def read_object(path: str, notes: list | None) -> dict | None:
    """The JSON object at `path`; None when missing, or unreadable or not an object (named in `notes`)."""
    try:
        with open(path, "rb") as f:
            doc = fastjson.loads(f.read())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        if notes is not None:
            notes.append(f"{path}: unreadable ({e.__class__.__name__}), skipped")
        return None
    if not isinstance(doc, dict):
        if notes is not None:
            notes.append(f"{path}: not a JSON object, skipped")
        return None
    return doc


def _text(value) -> str:
    return "" if value is None else value if isinstance(value, str) else str(value)


def _texts(value) -> list[str]:
    """A hand-edited list of files as one: a lone string is one file; anything else not a list is none."""
    if isinstance(value, str):
        return [value] if value else []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _typed(doc: dict, texts: tuple[str, ...]) -> dict:
    """`doc` with its known fields of the types the readers use (a hand edit can put anything there)."""
    out = dict(doc)
    for name in texts:
        out[name] = _text(doc.get(name))
    out["files"] = _texts(doc.get("files"))
    return out


_FAILURE_TEXTS = (
    "kind",
    "tool",
    "signature",
    "test",
    "error_type",
    "message",
    "excerpt",
    "key",
    "first_seen",
)
_OCCURRENCE_TEXTS = ("session", "at", "source", "command", "error", "transcript")


def _occurrence(doc: dict) -> dict:
    out = _typed(doc, _OCCURRENCE_TEXTS)
    fix = doc.get("fix")
    out["fix"] = _typed(fix, ("text", "command")) if isinstance(fix, dict) else None
    return out


def _session_entries(data, view: _View, sname: str, key: str, notes: list | None) -> list[dict]:
    """What the files of session `sname` hold of `key`, oldest written first (the old layout's file
    first): each an occurrence's fields, or only a fix recorded later."""
    found = []
    legacy = read_object(os.path.join(failure_dir(data, key), f"{sname}.json"), None)
    if legacy is not None:
        found.append(legacy)
    for name in view.holding(key):
        if _session_of(name) != sname:
            continue
        entry = _sighting(view, name, key, notes)
        if entry is not None:
            found.append(entry)
    return found


def _session_fix(data, view: _View, sname: str, key: str) -> dict | None:
    fixes = [e["fix"] for e in _session_entries(data, view, sname, key, None) if e.get("fix")]
    return fixes[-1] if fixes else None


def _merged(entries: list[dict]) -> dict:
    """One session's occurrence of a key from what its files hold: the first occurrence's fields and
    the last fix recorded."""
    base = next((e for e in entries if "command" in e or "error" in e), entries[0])
    fixes = [e["fix"] for e in entries if isinstance(e.get("fix"), dict)]
    return _occurrence({**base, "fix": fixes[-1] if fixes else base.get("fix")})


class Evidence:
    """What the ledger holds of one signature, read from its files (never the index's word): the
    failure as first seen, and each session's occurrence, oldest first."""

    __slots__ = ("failure", "occurrences")

    def __init__(self, failure: dict | None, occurrences: list[dict]) -> None:
        self.failure, self.occurrences = failure, occurrences

    @property
    def sessions(self) -> int:
        return len(self.occurrences)


def evidence(data, key: str, *, notes: list | None = None) -> Evidence:
    """The failure of `key` and the sessions that saw it. A damaged file is skipped (named in `notes`)."""
    view = _View(data)
    folder = failure_dir(data, key)
    per_session: dict[str, list[dict]] = {}
    for name in sorted(_session_files(folder)):
        doc = read_object(os.path.join(folder, name), notes)
        if doc is not None:
            per_session.setdefault(name[:-5], []).append(doc)
    if notes is not None:
        notes.extend(view.damaged)  # which signatures a damaged file held cannot be told
    first: tuple[str, str, dict] | None = None  # (at, file, failure) of the earliest sighting
    for name in view.holding(key):
        entry = _sighting(view, name, key, notes)
        if entry is None:
            continue
        per_session.setdefault(_session_of(name), []).append(entry)
        if isinstance(entry.get("failure"), dict):
            at = _text(entry.get("at"))
            if first is None or (at, name) < first[:2]:
                first = (at, name, entry["failure"])
    failure = read_object(os.path.join(folder, FAILURE_FILE), notes)
    if failure is None and first is not None:
        failure = first[2]
    occurrences = [_merged(entries) for entries in per_session.values()]
    return Evidence(
        None if failure is None else _typed(failure, _FAILURE_TEXTS),
        sorted(occurrences, key=lambda d: (d["at"], d["session"])),
    )


def sessions(data, key: str) -> int:
    """How many sessions saw `key`, by its files."""
    return evidence(data, key).sessions


def occurrences(data, key: str, *, notes: list | None = None) -> list[dict]:
    """The sessions that saw `key`, oldest first. A damaged file is skipped (and named in `notes`)."""
    return evidence(data, key, notes=notes).occurrences


def failure(data, key: str, *, notes: list | None = None) -> dict | None:
    """The failure of `key` as first recorded; None when unknown or damaged (named in `notes`)."""
    return evidence(data, key, notes=notes).failure


def keys(data) -> list[str]:
    """Every signature the ledger holds."""
    view = _View(data)
    found = set(view.old)
    for held, _ in view.files.values():
        found.update(held)
    return sorted(found)


# -- forgetting --------------------------------------------------------------------------------------


def prune(data, days: float, *, now: float | None = None) -> list[str]:
    """Forget the signatures that never became candidates and that no session has seen for `days`
    (by when memcurate last wrote a file of theirs), and sweep what killed writers left. A signature
    with a candidate record, in any state, is evidence and stays. Returns the keys forgotten.

    Cheap when nothing is old: the index, a stat per file, no file read."""
    now = time.time() if now is None else now
    cutoff = now - days * 86400
    view = _View(data)
    sweep_temps(view.root)  # what killed writers left (a temp file is never counted)
    newest: dict[str, float] = {}
    for name, (held, _) in view.files.items():
        when = _mtime(view, name)
        for key in held:
            newest[key] = max(newest.get(key, 0.0), when)
    for key in view.old:
        try:
            when = os.stat(failure_dir(data, key)).st_mtime
        except OSError:
            when = float("inf")
        newest[key] = max(newest.get(key, 0.0), when)
    gone = []
    for key in sorted(newest):
        if newest[key] >= cutoff or os.path.exists(candidate_path(data, key)):
            continue
        if any(_mtime(view, name) >= cutoff for name in view.holding(key)):
            continue  # seen again since the look above (a file written meanwhile)
        folder = failure_dir(data, key)
        if os.path.isdir(folder) and _newest(folder) >= cutoff:  # a file touched since
            continue
        if _forget(data, view, key, watch=True):
            gone.append(key)
    if gone or view.read:
        view.save()
    return gone


class _Tally:
    """One signature's share of the ledger: the sessions that saw it, and when it was last written."""

    __slots__ = ("key", "sessions", "newest")

    def __init__(self, key: str) -> None:
        self.key, self.newest = key, 0.0
        self.sessions: set[str] = set()


def _mtime(view: _View, name: str) -> float:
    try:
        return os.stat(os.path.join(view.root, name)).st_mtime
    except OSError:
        return float("inf")  # cannot tell: counted as new


def _tallies(data, view: _View) -> list[_Tally]:
    """Every signature's tally: the index, a stat per file, a listing of each old-layout folder."""
    out: dict[str, _Tally] = {}
    for name, (held, _) in view.files.items():
        try:
            when = os.stat(os.path.join(view.root, name)).st_mtime
        except OSError:
            continue  # forgotten meanwhile
        for key in held:
            t = out.setdefault(key, _Tally(key))
            t.sessions.add(_session_of(name))
            t.newest = max(t.newest, when)
    for key in view.old:
        t = out.setdefault(key, _Tally(key))
        folder = failure_dir(data, key)
        t.sessions.update(_legacy_sessions(data, key))
        t.newest = max(t.newest, _newest(folder))
    return list(out.values())


def enforce_caps(data, max_entries: int, max_bytes: int, *, keep=frozenset()) -> list[str]:
    """Forget whole signatures until the ledger holds at most `max_entries` files and `max_bytes` bytes
    (once past either, LOW_WATER of them): the rarest first (seen in the fewest sessions), among them
    the oldest (least recently seen). Never one of `keep` (the ones just recorded) nor one with a
    candidate record: a rule candidate rests on it. Before any, files that hold none (damaged, or
    not the ledger's) are removed. Returns the keys forgotten, and leaves the index exact. Costs a
    stat per file of the ledger (at most a few thousand)."""
    keep = {keep} if isinstance(keep, str) else keep
    view = _View(data)
    view.legacy = _legacy_totals(data, view.old)  # exact, whatever the index said
    files, size = view.totals()
    gone = []
    if (
        files > max_entries or size > max_bytes
    ):  # then down to the low-water mark: room for the next
        max_entries, max_bytes = int(max_entries * LOW_WATER), int(max_bytes * LOW_WATER)
    # Files that hold no signature (damaged, or not the ledger's) go first: they count nothing, and left
    # in place they keep the ledger past its caps, so that every record would forget real ones.
    for name in sorted((n for n, (held, _) in view.files.items() if not held), key=_order):
        if files <= max_entries and size <= max_bytes:
            break
        held = _keys_in(_read_seen(os.path.join(view.root, name), None)[0])
        if held:  # the index said it holds nothing: the file itself says otherwise
            view.files[name] = (held, view.files[name][1])
            continue
        _remove(view, name)
        files, size = view.totals()
    for t in sorted(_tallies(data, view), key=lambda t: (len(t.sessions), t.newest, t.key)):
        if files <= max_entries and size <= max_bytes:
            break
        if t.key in keep or os.path.exists(candidate_path(data, t.key)):
            continue
        if _forget(data, view, t.key):
            gone.append(t.key)
            files, size = view.totals()
    view.save()
    return gone


def _forget(data, view: _View, key: str, *, watch: bool = False) -> bool:
    """Remove signature `key` from the ledger: each file holding it rewritten without it under a new
    name (or removed when it held nothing else), then the old one removed; its old-layout folder moved
    aside and removed. With `watch` (prune), a file of `key` written meanwhile means it was seen again:
    the new copies are dropped and it is kept whole. Returns whether it was forgotten."""
    copies: list[tuple[str, str]] = []  # (old, new) names
    dropped: list[str] = []
    for name in view.holding(key):
        doc, _ = _read_seen(os.path.join(view.root, name), None)
        if doc is None:
            view.files[name] = ((), view.files[name][1])  # damaged: holds nothing to count
            continue
        rest = {k: v for k, v in doc["seen"].items() if k != key}
        if not _keys_in({"seen": rest}):
            dropped.append(name)
            continue
        sname = _session_of(name)
        for number in range(view.next_number(sname), view.next_number(sname) + 64):
            new_name = f"{sname}.{number}.json"
            body = dump_json({**doc, "seen": rest}, compact=True)
            path = os.path.join(view.root, new_name)
            if write_new(path, body, durable=False):
                _keep_times(os.path.join(view.root, name), path)  # still as old as what it holds
                view.files[new_name] = (_keys_in({"seen": rest}), len(body))
                copies.append((name, new_name))
                break
        else:
            return False
    if watch and _seen_again(view, key, {new for _, new in copies}):
        for _, new_name in copies:
            _remove(view, new_name)
        return False
    for old in dropped + [old for old, _ in copies]:
        _remove(view, old)
    folder = failure_dir(data, key)
    if os.path.isdir(folder):
        return _forget_folder(data, view, key)
    return True


def _keep_times(old: str, new: str) -> None:
    try:
        st = os.stat(old)
        os.utime(new, ns=(st.st_atime_ns, st.st_mtime_ns))
    except OSError:
        pass


def _seen_again(view: _View, key: str, ours: set[str]) -> bool:
    """Whether a file holding `key` was linked into the ledger since `view` listed it (other than `ours`)."""
    for name in _listing(view.root):
        if name not in view.files and name not in ours and key in view.add_read(name):
            return True
    return False


def _remove(view: _View, name: str) -> None:
    try:
        os.unlink(os.path.join(view.root, name))
    except FileNotFoundError:
        pass
    view.files.pop(name, None)


def _forget_folder(data, view: _View, key: str) -> bool:
    """Remove the old layout's folder of `key`, moved aside first: a reader sees it whole or not at all
    (nothing writes into it any more)."""
    import shutil

    folder = failure_dir(data, key)
    aside = os.path.join(os.fspath(data), FAILURES_DIR, f".pruned-{key}-{os.getpid()}")
    try:
        sizes = [os.lstat(os.path.join(folder, n)).st_size for n in os.listdir(folder)]
        os.rename(folder, aside)
    except OSError:
        return False
    shutil.rmtree(aside, ignore_errors=True)
    if view.legacy is not None:
        view.legacy = [max(view.legacy[0] - len(sizes), 0), max(view.legacy[1] - sum(sizes), 0)]
    return True


def _newest(folder: str) -> float:
    """The newest mtime of the files in `folder` (infinity when it cannot be read: nothing is pruned)."""
    try:
        return max([0.0] + [os.stat(os.path.join(folder, n)).st_mtime for n in os.listdir(folder)])
    except OSError:
        return float("inf")
