"""The failure ledger: how many sessions saw each failure signature, in the data dir, without locks.

    failures/<key>/failure.json     the Failure (asdict + "key", "first_seen"), written once
    failures/<key>/<session>.json   one per session that saw it: when, from where, the command, the
                                    error, and what fixed it when a transcript shows that

Every file is made whole in a temp file and linked into place, which never replaces a file: two
hooks of one session at once count once, a retry in a session does not count again, and a writer
killed half-way leaves no half file to be counted. A signature's count is the number of its session
files, so counting is one directory listing.

At the threshold the candidate record (rules/<key>.json, read and changed by candidates.py) is
created here, once, the same way: whoever first sees the threshold reached stages it, and a record
that exists (pending, approved or rejected) is never made again. It is created here rather than in
candidates.py because candidates.py reads the ledger, and the hook should load only this module.

Command, error and fix text are redacted before they touch the disk, and capped. So is the ledger:
at most rules.ledger_max_entries files and rules.ledger_max_bytes bytes (a hostile session can invent
new failures without end); past either, whole signatures are forgotten, the rarest and oldest first,
never one a rule candidate rests on (enforce_caps). A running tally (failures/.tally.json) spares each
record a count of every file.
Stdlib only (and curator's light utilities): the PostToolUse hook imports it.
"""

from __future__ import annotations

import os
import time

from memcurate.curator.util import fastjson
from memcurate.curator.util.atomic import dump_json, is_temp_name, write_json, write_new
from memcurate.curator.util.lazyre import LazyRegex
from memcurate.curator.util.private import make_dirs
from memcurate.curator.util.redact import redact_text
from memcurate.curator.util.safe_open import open_regular
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
TALLY_FILE = ".tally.json"  # in failures/: the ledger's running size (see _grown); no key's name
RECOUNT_EVERY = 256  # files recorded between two recounts of the ledger, whatever the tally says
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


def _failure_doc(failure, at: str) -> dict:
    doc = failure.as_dict() if hasattr(failure, "as_dict") else dict(failure)
    for name in ("signature", "test", "message", "error_type"):
        if isinstance(doc.get(name), str):
            doc[name] = cap(doc[name], 300)
    doc["excerpt"] = cap(str(doc.get("excerpt") or ""), MAX_ERROR, lines=True)
    doc["files"] = _files(doc.get("files"))
    doc["key"] = failure.key
    doc["first_seen"] = at
    return doc


# -- recording ---------------------------------------------------------------------------------------


class Tally:
    """The running tally (failures/.tally.json) held in memory while one pass records many failures (a
    transcript's): read at the first record, written once by `flush`, not read and rewritten per record.
    The caps are checked at every record as without it; a recount (a missing tally, a cap passed) sets it
    exact, and `flush` writes that too: a pass into a fresh ledger writes its tally once, not twice."""

    __slots__ = ("counts", "loaded", "dirty")

    def __init__(self) -> None:
        self.counts: list[int] | None = None
        self.loaded = self.dirty = False

    def flush(self, data) -> None:
        if self.dirty and self.counts is not None:
            _write_tally(data, self.counts)
        self.dirty = False


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
    tally: Tally | None = None,
) -> Recorded:
    """Count `failure` (a signature.Failure) once for `session`; stage its candidate at `threshold`.

    A session that already counted it gains nothing but, when `fix` is given and its occurrence has
    none yet, that fix. A new occurrence past the ledger's caps (`max_entries` files, `max_bytes`)
    makes room by forgetting others (enforce_caps). `tally`: a pass's running tally, which the caller
    flushes once at its end. Raises OSError when the data dir cannot be written (the caller logs it)."""
    key = failure.key
    folder = failure_dir(data, key)
    occurrence: dict = {
        "session": one_line(session, 200),
        "at": at or now_iso(),
        "source": source,
        "command": cap(command, MAX_COMMAND),
        "error": cap(error, MAX_ERROR, lines=True),
        "files": _files(getattr(failure, "files", ())),
        "transcript": transcript or "",
        "fix": clean_fix(fix),
    }
    name = os.path.join(folder, f"{session_name(session)}.json")
    body = dump_json(occurrence)
    for attempt in (0, 1):
        added = [0, 0]  # files, bytes this call linked into the ledger
        try:
            make_dirs(folder)
            if not os.path.exists(os.path.join(folder, FAILURE_FILE)):
                doc = dump_json(_failure_doc(failure, occurrence["at"]))
                if write_new(os.path.join(folder, FAILURE_FILE), doc, durable=False):
                    added = [1, len(doc)]
            # An occurrence already counted (by the PostToolUse hook, a retry) costs a stat, not a temp
            # file made and unlinked: on some file systems a new inode costs more than the rest of a record.
            new = not os.path.exists(name) and write_new(name, body, durable=False)
            break
        except FileNotFoundError:
            if attempt:  # pruned between makedirs and the write: once more, into a fresh folder
                raise
    if not new and occurrence["fix"]:
        add_fix(data, key, session, occurrence["fix"])
    count = sessions(data, key)
    staged = count >= threshold and stage(data, key)
    if new:
        _grown(
            data, added[0] + 1, added[1] + len(body), max_entries, max_bytes, keep=key, tally=tally
        )
    return Recorded(key, new, count, staged)


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
    path = os.path.join(failure_dir(data, key), f"{session_name(session)}.json")
    doc = read_object(path, None)
    cleaned = clean_fix(fix)
    if doc is None or not cleaned or doc.get("fix") == cleaned:
        return False
    doc["fix"] = cleaned
    # as every ledger file: a fix lost to a power cut is only a fix
    write_json(path, doc, durable=False)
    return True


# -- reading -----------------------------------------------------------------------------------------


def _session_files(folder: str) -> list[str]:
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [n for n in names if n.endswith(".json") and n != FAILURE_FILE and not is_temp_name(n)]


def sessions(data, key: str) -> int:
    """How many sessions saw `key` (one directory listing)."""
    return len(_session_files(failure_dir(data, key)))


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


def occurrences(data, key: str, *, notes: list | None = None) -> list[dict]:
    """The sessions that saw `key`, oldest first. A damaged file is skipped (and named in `notes`)."""
    folder = failure_dir(data, key)
    found = []
    for name in _session_files(folder):
        doc = read_object(os.path.join(folder, name), notes)
        if doc is not None:
            found.append(_occurrence(doc))
    return sorted(found, key=lambda d: (d["at"], d["session"]))


def failure(data, key: str, *, notes: list | None = None) -> dict | None:
    """The failure of `key` as first recorded; None when unknown or damaged (named in `notes`)."""
    doc = read_object(os.path.join(failure_dir(data, key), FAILURE_FILE), notes)
    return None if doc is None else _typed(doc, _FAILURE_TEXTS)


def keys(data) -> list[str]:
    """Every signature the ledger holds."""
    try:
        return sorted(
            n for n in os.listdir(os.path.join(os.fspath(data), FAILURES_DIR)) if is_key(n)
        )
    except OSError:
        return []


# -- forgetting --------------------------------------------------------------------------------------


def prune(data, days: float, *, now: float | None = None) -> list[str]:
    """Forget the signatures that never became candidates and that no session has seen for `days`
    (by when memcurate last wrote into their folder). A signature with a candidate record, in any
    state, is evidence and stays. Returns the keys forgotten.

    Cheap when nothing is old: one listing and a stat per signature (every write links a new file
    into the folder, so its mtime is the newest write; its files are looked at only when it is old)."""
    now = time.time() if now is None else now
    cutoff = now - days * 86400
    gone = []
    for key in keys(data):
        folder = failure_dir(data, key)
        try:
            if os.stat(folder).st_mtime >= cutoff or os.path.exists(candidate_path(data, key)):
                continue
        except OSError:
            continue
        if _newest(folder) >= cutoff:  # a file touched since (by hand, or a copy kept its time)
            continue
        # Moved aside first: a hook recording this signature meanwhile starts a fresh folder.
        aside = os.path.join(os.fspath(data), FAILURES_DIR, f".pruned-{key}-{os.getpid()}")
        try:
            os.rename(folder, aside)
        except OSError:
            continue
        # A hook may have linked its occurrence in between the look above and the rename: looked at
        # again once nothing more can arrive, and a fresh one puts the folder back.
        if _newest(aside) >= cutoff:
            _put_back(aside, folder)
            continue
        import shutil

        shutil.rmtree(aside, ignore_errors=True)
        gone.append(key)
    return gone


class _Tally:
    """One signature's share of the ledger: files, bytes, sessions, and when it was last written."""

    __slots__ = ("key", "files", "bytes", "sessions", "newest")

    def __init__(self, key: str) -> None:
        self.key, self.files, self.bytes, self.sessions, self.newest = key, 0, 0, 0, 0.0


def _tallies(data) -> list[_Tally]:
    """Every signature's tally: one listing of the ledger, one of each signature, a stat per file."""
    root = os.path.join(os.fspath(data), FAILURES_DIR)
    out = []
    try:
        with os.scandir(root) as listing:
            folders = [e for e in listing if is_key(e.name) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    for entry in folders:
        t = _Tally(entry.name)
        try:
            with os.scandir(entry.path) as files:
                for f in files:
                    st = f.stat(follow_symlinks=False)
                    t.files += 1
                    t.bytes += st.st_size
                    t.newest = max(t.newest, st.st_mtime)
                    t.sessions += (
                        f.name.endswith(".json")
                        and f.name != FAILURE_FILE
                        and not is_temp_name(f.name)
                    )
        except OSError:
            continue  # forgotten meanwhile
        out.append(t)
    return out


def _grown(
    data,
    files: int,
    size: int,
    max_entries: int,
    max_bytes: int,
    *,
    keep: str,
    tally: Tally | None = None,
) -> None:
    """Count what a record added in the running tally (failures/.tally.json); past a cap, or every
    RECOUNT_EVERY files, recount the ledger and enforce its caps. The tally makes a record cost one
    small read and write, not a stat of every file (with a pass's `tally`, not even that); it may lag
    (two hooks at once, a hand edit, prune), and the recount sets it right: the caps are never passed
    by more than a recount's worth."""
    if tally is not None and tally.loaded:
        before = tally.counts
    else:
        before = _read_tally(os.path.join(os.fspath(data), FAILURES_DIR, TALLY_FILE))
        if tally is not None:
            tally.counts, tally.loaded = before, True
    after = None if before is None else [before[0] + files, before[1] + size]
    if (
        before is None
        or after is None
        or after[0] > max_entries
        or after[1] > max_bytes
        or (after[0] // RECOUNT_EVERY != before[0] // RECOUNT_EVERY)
    ):
        if tally is None:
            enforce_caps(data, max_entries, max_bytes, keep=keep)  # it writes the exact tally
        else:  # the pass holds the exact tally and writes it once, at its end (a missing one is recounted)
            tally.counts = _enforce(data, max_entries, max_bytes, keep)[1]
            tally.loaded = tally.dirty = True
        return
    if tally is not None:
        tally.counts, tally.dirty = after, True
        return
    _write_tally(data, after)


def _write_tally(data, counts: list[int]) -> None:
    try:
        write_json(
            os.path.join(os.fspath(data), FAILURES_DIR, TALLY_FILE),
            {"files": counts[0], "bytes": counts[1]},
            durable=False,
            compact=True,
        )
    except OSError:
        pass  # the next record recounts


def _read_tally(path: str) -> list[int] | None:
    """[files, bytes] of the running tally; None when it is missing or is not one (a FIFO or symlink
    put there is refused, never waited on or followed: open_regular)."""
    try:
        with open_regular(path) as f:
            doc = fastjson.loads(f.read(4096))
    except (OSError, ValueError):
        return None
    tally = [doc.get(k) for k in ("files", "bytes")] if isinstance(doc, dict) else []
    counts = [v for v in tally if type(v) is int and v >= 0]
    return counts if len(counts) == 2 else None


def enforce_caps(data, max_entries: int, max_bytes: int, *, keep: str = "") -> list[str]:
    """Forget whole signatures until the ledger holds at most `max_entries` files and `max_bytes` bytes
    (once past either, LOW_WATER of them): the rarest first (seen in the fewest sessions), among them
    the oldest (least recently seen). Never `keep` (the one just recorded) nor one with a candidate
    record: a rule candidate rests on it.
    Returns the keys forgotten. Costs a stat per file of the ledger (at most a few thousand), and
    leaves the running tally exact."""
    gone, counts = _enforce(data, max_entries, max_bytes, keep)
    _write_tally(data, counts)
    return gone


def _enforce(data, max_entries: int, max_bytes: int, keep: str) -> tuple[list[str], list[int]]:
    """enforce_caps but for the tally: the keys forgotten and the ledger's exact [files, bytes] after."""
    tallies = _tallies(data)
    files, size = sum(t.files for t in tallies), sum(t.bytes for t in tallies)
    gone = []
    # then down to the low-water mark: room for the next records
    if files > max_entries or size > max_bytes:
        max_entries, max_bytes = int(max_entries * LOW_WATER), int(max_bytes * LOW_WATER)
    for t in sorted(tallies, key=lambda t: (t.sessions, t.newest, t.key)):
        if files <= max_entries and size <= max_bytes:
            break
        if t.key == keep or os.path.exists(candidate_path(data, t.key)) or not _forget(data, t.key):
            continue
        files, size = files - t.files, size - t.bytes
        gone.append(t.key)
    return gone, [files, size]


def _forget(data, key: str) -> bool:
    """Remove signature `key`: moved aside first (a hook recording it meanwhile starts a fresh folder)."""
    import shutil

    aside = os.path.join(os.fspath(data), FAILURES_DIR, f".pruned-{key}-{os.getpid()}")
    try:
        os.rename(failure_dir(data, key), aside)
    except OSError:
        return False
    shutil.rmtree(aside, ignore_errors=True)
    return True


def _newest(folder: str) -> float:
    """The newest mtime of the files in `folder` (infinity when it cannot be read: nothing is pruned)."""
    try:
        return max([0.0] + [os.stat(os.path.join(folder, n)).st_mtime for n in os.listdir(folder)])
    except OSError:
        return float("inf")


def _put_back(aside: str, folder: str) -> None:
    """Return the files moved aside to `folder`, which a hook may have started afresh meanwhile: linked
    back, never replacing (a session already counted there is the same session)."""
    import shutil

    try:
        os.rename(aside, folder)  # no fresh folder (or an empty one) yet: the whole folder at once
        return
    except OSError:
        pass
    try:
        make_dirs(folder)
        for name in os.listdir(aside):
            try:
                os.link(os.path.join(aside, name), os.path.join(folder, name))
            except FileExistsError:
                pass
    except OSError:
        return  # left aside: not counted, but not deleted either
    shutil.rmtree(aside, ignore_errors=True)
