"""`memcurate install / uninstall`: memcurate's hooks in Claude Code's settings, and where they are.

A settings file is Claude Code's and the person's: nothing of theirs may be lost. So
- a file that does not hold what we expect (not UTF-8, a byte order mark, invalid JSON, the
  wrong shapes) is refused with one line naming it, and left byte for byte as it was;
- only what changes is rewritten (curator/util/jsonsplice.py): every other key and hook keeps its
  bytes, its order and its layout;
- before any change the previous bytes are backed up, the file is replaced atomically with its
  permission bits, a symlink is written through to its target, and the file is re-read under a
  lock just before the rename (atomic.replace_if_unchanged): a change made meanwhile, by Claude
  Code or another install, is merged, never overwritten;
- a file its owner made read-only (no write bit) is refused, even where the system would let
  memcurate write it (as root): read-only is the owner's word;
- uninstall removes exactly memcurate's entries; when the file is as install left it, it gets
  back the very bytes it had before, an older install's memcurate entries included (or goes, when
  install created it); when it changed since, the older entries come back wherever nobody changed
  their event's hooks.

The record of an install (how install left the file, the digest of its bytes from before) is kept
outside the project, in memcurate's user state dir: the data dir is Claude's to write (docs/design.md §14),
and a record there could make uninstall "give back" hooks no one had. A backup is given back only
when its bytes have the digest that record holds.

When install writes `.claude/settings.local.json`, git is made to ignore it as Claude Code makes it
(ignore_local_settings); uninstall leaves that rule, which Claude Code itself adds.

memcurate's entries are told from anyone else's by their command (curator/hook_entries.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from typing import Any

from memcurate.curator import hook_entries
from memcurate.curator.errors import DamagedError, Refusal
from memcurate.curator.util import atomic, jsonsplice
from memcurate.curator.util.locks import FileLock, LockBusy
from memcurate.curator.util.paths import claude_config_dir, data_dir, settings_file, user_state_dir
from memcurate.curator.util.safe_open import read_at_most

SCOPES = ("local", "project", "user")
DEFAULT_SCOPE = "local"  # personal: this machine's path has no place in a file everyone commits
MAX_BYTES = 4 << 20
RECORD = "installed.json"  # an older memcurate's record, in the backups dir: read only for what it cannot forge
RECORDS = "installs"  # under the user state dir: one record per settings file (<key>.json)
_HEX = re.compile(r"[0-9a-f]{64}")
BOM = b"\xef\xbb\xbf"


class InstallError(Refusal):
    """A settings file memcurate must not touch, or cannot: one line to act on."""


# -- where ---------------------------------------------------------------------------------------


def settings_path(scope: str, project, env=None) -> str:
    if scope not in SCOPES:
        raise InstallError(f"unknown scope {scope!r}: expected one of {', '.join(SCOPES)}")
    return settings_file(scope, project, claude_config_dir(env))


def backups_dir(scope: str, project, env=None) -> str:
    """Where the previous bytes of a scope's settings go: the project's data dir for its own files,
    memcurate's user state dir for the user's."""
    if scope == "user":
        return os.path.join(user_state_dir(env), "backups")
    return os.path.join(data_dir(project), "backups")


def entry_point(
    argv0: str | None = None, which=shutil.which, executable: str | None = None
) -> list[str]:
    """The argv that runs this memcurate from anywhere, as fast as it starts: the interpreter running this
    process with the CLI's main (hook_entries.interpreter_entry; a third of an interpreter start faster
    than the console script, whose wrapper imports `re`). Its path is kept as it is, links and all: a
    venv's or pipx's bin/python is a link to the base interpreter, and only through it are the venv's
    packages found. Without a runnable interpreter, the console script this process runs from, else the
    `memcurate` on the PATH, else `<python> -m memcurate.curator.cli`."""
    python = executable or sys.executable
    if python and _runnable(os.path.abspath(python)):
        return hook_entries.interpreter_entry(os.path.abspath(python))
    argv0 = sys.argv[0] if argv0 is None else argv0
    if os.path.basename(argv0) == "memcurate" and os.sep in argv0:
        path = os.path.abspath(argv0)
        if _runnable(path):
            return [path]
    found = which("memcurate")
    if found and _runnable(os.path.abspath(found)):
        return [os.path.abspath(found)]
    return [os.path.abspath(python) if python else "python3", "-m", "memcurate.curator.cli"]


def _runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


# -- reading and checking ------------------------------------------------------------------------------


def _read(path: str) -> bytes | None:
    """The file's bytes, None when it does not exist."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise InstallError(
                f"{path}: a symbolic link to a missing file ({os.readlink(path)}); "
                "fix or remove the link"
            ) from None
        return None
    except OSError as e:
        raise InstallError(f"{path}: {e.strerror}") from None
    if not os.path.isfile(path):
        raise InstallError(f"{path}: not a regular file")
    if st.st_size > MAX_BYTES:
        raise InstallError(
            f"{path}: {st.st_size} bytes, larger than a settings file can be ({MAX_BYTES})"
        )
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise InstallError(f"{path}: {e.strerror}") from None


def parse(path: str, data: bytes | None) -> dict | None:
    """The settings document of `data` (None: no file), checked where memcurate will look: an object
    whose `hooks` is an object of event lists of matcher groups, each with a `hooks` list.
    InstallError naming the file (and the line and column of a JSON error) otherwise."""
    if data is None:
        return None
    if data.startswith(BOM):
        raise InstallError(
            f"{path}: starts with a UTF-8 byte order mark, which JSON does not allow; "
            "save it as UTF-8 without a BOM"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InstallError(f"{path}: not UTF-8 (byte {e.start}); save it as UTF-8") from None
    if not text.strip():
        return {}
    try:
        doc = json.loads(text, object_pairs_hook=_unique)
    except _Duplicate as e:
        raise InstallError(
            f"{path}: the key {e} appears twice in one object; remove one of them"
        ) from None
    except json.JSONDecodeError as e:
        raise InstallError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    except RecursionError:
        raise InstallError(f"{path}: nested too deeply to be a settings file") from None
    if not isinstance(doc, dict):
        raise InstallError(f"{path}: the top level is {_kind(doc)}, not an object")
    if "hooks" not in doc:
        return doc
    hooks = doc["hooks"]
    if not isinstance(hooks, dict):
        raise InstallError(f'{path}: "hooks" is {_kind(hooks)}, not an object')
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise InstallError(f"{path}: hooks.{event} is {_kind(groups)}, not a list")
        for i, group in enumerate(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                raise InstallError(f'{path}: hooks.{event}[{i}] has no "hooks" list')
    return doc


class _Duplicate(DamagedError):
    pass


def _unique(pairs: list) -> dict:
    """An object of the file; a key written twice is refused (which one counts is a reader's guess)."""
    doc = dict(pairs)
    if len(doc) != len(pairs):
        seen = set()
        for k, _v in pairs:
            if k in seen:
                raise _Duplicate(repr(k))
            seen.add(k)
    return doc


def _kind(value) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
    }.get(type(value), "a number")


def _mine(hook) -> dict | None:
    return hook_entries.parse_command(hook.get("command")) if isinstance(hook, dict) else None


def ours(doc: dict | None) -> dict[str, list[dict]]:
    """memcurate's hook commands in a settings document, by event: [{"executable", "review_auto_memory"}]."""
    found: dict[str, list[dict]] = {}
    for event, groups in ((doc or {}).get("hooks") or {}).items():
        for group in groups:
            for hook in group["hooks"]:
                mine = _mine(hook)
                if mine:
                    found.setdefault(event, []).append(mine)
    return found


# -- the edits --------------------------------------------------------------------------------------


def _strip(groups: list) -> list:
    """An event's matcher groups without memcurate's hooks (a group left empty goes)."""
    out = []
    for group in groups:
        rest = [h for h in group["hooks"] if not _mine(h)]
        if len(rest) == len(group["hooks"]):
            out.append(group)
        elif rest:
            out.append({**group, "hooks": rest})
    return out


def with_ours(doc: dict, command: str) -> dict:
    """`doc` with memcurate's entries running `command`, one matcher group per event of the table.
    An existing group of memcurate's alone is replaced where it stands (a reinstall keeps the
    order); memcurate's hooks anywhere else go; everything else stays as it was."""
    wanted = hook_entries.groups(command)
    new_hooks = {}
    for event, groups in doc.get("hooks", {}).items():
        placed = event not in wanted
        out = []
        for group in groups:
            if not placed and group["hooks"] and all(_mine(h) for h in group["hooks"]):
                out.extend(wanted[event])
                placed = True
            else:
                out.extend(_strip([group]))
        if not placed:
            out.extend(wanted[event])
        if out or not groups:  # a list that only held memcurate's (older) entries goes
            new_hooks[event] = out
    for event, groups in wanted.items():
        new_hooks.setdefault(event, groups)
    return {**doc, "hooks": new_hooks}


def without_ours(doc: dict) -> dict:
    """`doc` without memcurate's entries: an event list, or the `hooks` object, emptied by that goes too."""
    if not ours(doc):
        return doc
    new_hooks = {}
    for event, groups in doc["hooks"].items():
        stripped = _strip(groups)
        if stripped or not groups:
            new_hooks[event] = stripped
    if not new_hooks:
        return {k: v for k, v in doc.items() if k != "hooks"}
    return {**doc, "hooks": new_hooks}


def _render(path: str, data: bytes | None, doc: dict) -> bytes:
    """`doc` as the bytes of the file that held `data`: only what changed rewritten."""
    text = data.decode("utf-8") if data is not None else ""
    if not text.strip():
        return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    try:
        return jsonsplice.splice(text, doc).encode("utf-8")
    except jsonsplice.DuplicateKey as e:
        raise InstallError(f"{path}: {e}; remove one of them") from None


# -- the record of an install ---------------------------------------------------------------------


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _key(target: str) -> str:
    return hashlib.sha1(target.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _record_path(target: str, env=None) -> str:
    return os.path.join(user_state_dir(env), RECORDS, f"{_key(target)}.json")


def _record(target: str, env=None) -> dict | None:
    """How install left `target`: {"target", "after": digest, "before": digest of the bytes from before
    install (None: install created the file), "backup": where those bytes are}. None when there is
    none, or it is not one (a damaged record is no record: uninstall then only removes entries)."""
    try:
        doc = atomic.read_json(_record_path(target, env))
    except (OSError, ValueError):
        return None
    if not (
        isinstance(doc, dict)
        and doc.get("target") == target
        and _is_digest(doc.get("after"))
        and (doc.get("before") is None or _is_digest(doc["before"]))
        and (doc.get("backup") is None or isinstance(doc["backup"], str))
    ):
        return None
    return {
        "target": target,
        "after": doc["after"],
        "before": doc.get("before"),
        "backup": doc.get("backup"),
    }


def _is_digest(value) -> bool:
    return isinstance(value, str) and bool(_HEX.fullmatch(value))


def _set_record(target: str, value: dict | None, env=None) -> None:
    path = _record_path(target, env)
    if value is not None:
        atomic.write_json(path, {"target": target, **value})  # digests and a path: nothing secret
    elif os.path.lexists(path):
        os.unlink(path)


def _before(record: dict | None) -> bytes | None:
    """The bytes the file had before install, from their backup: only when they have the record's digest
    (a backup in the data dir is Claude's to change)."""
    if not record or record["before"] is None or not record["backup"]:
        return None
    try:
        with open(record["backup"], "rb") as f:
            data = read_at_most(f, MAX_BYTES)
    except OSError:
        return None
    return data if _digest(data) == record["before"] else None


def _legacy(backups: str, target: str, base: bytes | None) -> dict | None:
    """An older memcurate's record of `target` (backups/installed.json, in the data dir: anyone's to
    write) made a record, when the file is as that install left it: its backup is taken only when it
    holds what removing memcurate's entries gives (so it can bring back no hook), or install had
    created the file. None otherwise."""
    try:
        doc = atomic.read_json(os.path.join(backups, RECORD))
    except (OSError, ValueError):
        return None
    old = doc.get(target) if isinstance(doc, dict) else None
    if not isinstance(old, dict) or base is None or old.get("after") != _digest(base):
        return None
    if old.get("before", "unknown") is None:
        return {"target": target, "after": old["after"], "before": None, "backup": None}
    backup = old.get("before")
    if not isinstance(backup, str) or os.path.dirname(os.path.abspath(backup)) != os.path.abspath(
        backups
    ):
        return None
    try:
        with open(backup, "rb") as f:
            data = read_at_most(f, MAX_BYTES)
        before_doc = json.loads(data.decode("utf-8")) if data.strip() else {}
    except (OSError, ValueError):
        return None
    if before_doc != without_ours(parse(target, base) or {}):
        return None
    return {"target": target, "after": old["after"], "before": _digest(data), "backup": backup}


def _drop_legacy(backups: str, target: str) -> None:
    path = os.path.join(backups, RECORD)
    try:
        doc = atomic.read_json(path)
    except (OSError, ValueError):
        return
    if isinstance(doc, dict) and target in doc:
        del doc[target]
        atomic.write_json(path, doc)


def _backup(backups: str, name: str, data: bytes) -> str:
    """Keep `data` (the bytes a change replaces) in `backups`; returns the backup's path. Readable by
    its owner only: settings can hold secrets (an env block)."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    for n in range(1000):
        path = os.path.join(backups, f"{name}.{stamp}{f'.{n}' if n else ''}.bak")
        if not os.path.lexists(path):
            atomic.write_bytes(path, data, mode=0o600)
            return path
    raise InstallError(f"{backups}: too many backups this second")


# -- the change ----------------------------------------------------------------------------------------


class _Change:
    """One locked change of a settings file: `decide(base bytes, doc)` says what the file becomes
    (bytes, or None to leave it); each distinct base that is replaced is backed up first."""

    def __init__(self, path: str, backups: str) -> None:
        self.path = path
        self.target = os.path.realpath(path)  # a symlink is written through, never replaced
        self.backups = backups
        self.backup: str | None = None
        self._backed: bytes | None = None
        self.base: bytes | None = None
        self.result: bytes | None = None
        self.notes: list[str] = []

    def lock(self) -> FileLock:
        return FileLock(
            os.path.join(self.backups, "locks", f"settings-{_key(self.target)}.lock"), wait=10.0
        )

    def run(self, decide, then=None) -> bool:
        """Apply `decide`, then `then(wrote)` still under the lock; returns whether the file was written."""
        self.check_writable()  # before the lock: a refusal leaves no file behind
        try:
            with self.lock():
                wrote = self._run(decide)
                if then:
                    then(wrote)
                return wrote
        except LockBusy:
            raise InstallError(
                f"{self.path}: another memcurate install or uninstall is changing it; try again"
            ) from None

    def _run(self, decide) -> bool:
        def render(base: bytes | None) -> bytes | None:
            self.base = base
            new = decide(base, parse(self.path, base))
            self.result = base if new is None else new
            if new is not None and new != base and base is not None and base != self._backed:
                self.backup = _backup(self.backups, os.path.basename(self.path), base)
                self._backed = base
            return new

        try:
            # refuses a link to a missing file: never created behind a link
            current = _read(self.path)
            self.check_writable()
            mode = os.stat(self.target).st_mode & 0o7777 if current is not None else None
            return atomic.replace_if_unchanged(self.target, render, mode=mode)
        except atomic.Unsettled:
            raise InstallError(
                f"{self.path}: another program kept changing it while memcurate wrote; "
                "nothing was lost: try again"
            ) from None
        except OSError as e:
            raise InstallError(f"{self.path}: {atomic.failure(e)}") from None

    def check_writable(self) -> None:
        """InstallError when the file exists and its owner made it read-only (no write bit for the owner),
        or this user may not write it: root may, but read-only is the owner's word, not an obstacle."""
        try:
            mode = os.stat(self.target).st_mode & 0o7777
        except OSError:
            return  # no file yet (or unreadable: _read says why)
        if not mode & stat.S_IWUSR or not os.access(self.target, os.W_OK):
            raise InstallError(
                f"{self.path}: read-only (mode {mode:04o}); memcurate does not change a file its "
                "owner made read-only: make it writable (chmod u+w) and run again"
            )

    def remove(self, expected: bytes) -> bool:
        """Delete the file when it still holds `expected` (backed up first); False when it changed."""
        self.check_writable()
        with self.lock():
            self.check_writable()
            current = _read(self.target)
            if current != expected:
                return False
            self.backup = _backup(self.backups, os.path.basename(self.path), current)
            try:
                os.unlink(self.target)
            except OSError as e:
                raise InstallError(f"{self.path}: {atomic.failure(e)}") from None
            return True


# -- install and uninstall -----------------------------------------------------------------------


def install(
    project,
    scope: str = DEFAULT_SCOPE,
    *,
    review_auto_memory: bool = False,
    entry: list[str] | None = None,
    env=None,
) -> dict:
    """Add memcurate's hooks to the settings file of `scope`; a report of what changed."""
    path = settings_path(scope, project, env)
    backups = backups_dir(scope, project, env)
    command = hook_entries.command_for(entry or entry_point(), review_auto_memory)
    change = _Change(path, backups)
    before_doc: dict = {}

    def decide(base, doc):
        nonlocal before_doc
        before_doc = doc or {}
        new = with_ours(before_doc, command)
        if doc is not None and new == doc:
            return None
        return _render(path, base, new)

    def record(wrote: bool) -> None:
        if wrote:
            _record_install(change, env)

    wrote = change.run(decide, then=record)
    report = _report(
        "install", scope, path, change, command=command, review_auto_memory=review_auto_memory
    )
    after_doc = parse(path, change.result)
    had, has = ours(before_doc), ours(after_doc)
    report["added"] = [e for e in has if e not in had]
    report["updated"] = [
        e for e in has if e in had and _groups_of(before_doc, e) != _groups_of(after_doc, e)
    ]
    report["removed"] = [e for e in had if e not in has]
    report["created"] = wrote and change.base is None
    if scope == "project":
        report["notes"].append(
            f"{path} is shared with everyone who clones the project and now holds this "
            f"machine's path ({command}); --scope local keeps it to you"
        )
    if scope == "local" and wrote:
        report["gitignore"], note = ignore_local_settings(project, env)
        if note:
            report["notes"].append(note)
    return report


def _groups_of(doc: dict | None, event: str) -> list:
    return [
        g
        for g in ((doc or {}).get("hooks") or {}).get(event, [])
        if any(_mine(h) for h in g["hooks"])
    ]


def _record_install(change: _Change, env) -> None:
    """Remember how install left the file and the digest of its bytes from before, so that uninstall
    can give them back (an older install's memcurate entries included). A reinstall over the file as
    install left it keeps the older 'before': the bytes from before memcurate came."""
    old = _record(change.target, env) or _legacy(change.backups, change.target, change.base)
    if old and change.base is not None and old["after"] == _digest(change.base):
        before, backup = old["before"], old["backup"]
    else:
        before = None if change.base is None else _digest(change.base)
        backup = change.backup
    if change.result is None:  # (install always leaves a file)
        return
    try:
        _set_record(
            change.target,
            {"after": _digest(change.result), "before": before, "backup": backup},
            env,
        )
        _drop_legacy(change.backups, change.target)
    except OSError as e:  # installed all the same; uninstall will remove the entries in place
        change.notes.append(
            f"the record of this install could not be kept ({atomic.failure(e)}): uninstall will "
            "remove memcurate's entries but cannot give back the bytes from before"
        )


def uninstall(project, scope: str = DEFAULT_SCOPE, *, env=None) -> dict:
    """Remove memcurate's hooks from the settings file of `scope`, giving back the entries an older
    install had there before; a report of what changed."""
    path = settings_path(scope, project, env)
    backups = backups_dir(scope, project, env)
    change = _Change(path, backups)
    how: dict = {}
    before_doc: dict = {}

    def decide(base, doc):
        nonlocal before_doc
        before_doc = doc or {}
        how.update(restored=False, gave_back=[], kept_back=[], lost_backup=None)
        if not ours(doc):
            return None
        record = _record(change.target, env) or _legacy(backups, change.target, base)
        old = _before(record)
        old_doc = _parsed(path, old) if old is not None else None
        new = without_ours(doc)
        how["backup"] = record and record["backup"]
        if record and record["before"] is not None and old_doc is None:
            how["lost_backup"] = record["backup"]
        elif old_doc is not None and record["after"] == _digest(base):
            if without_ours(old_doc) == new:  # as install left it: the very bytes from before
                how.update(restored=True, gave_back=list(ours(old_doc)))
                return old
        # changed since: the older entries go back where nobody touched theirs
        elif old_doc is not None:
            new = _give_back(new, old_doc, how)
        return _render(path, base, new)

    current = _read(change.target)
    record = _record(change.target, env) or _legacy(backups, change.target, current)
    created = (
        record is not None
        and record["before"] is None
        and current is not None
        and record["after"] == _digest(current)
        and without_ours(parse(path, current) or {}) == {}
    )
    if created and current is not None and change.remove(current):
        report = _report("uninstall", scope, path, change, deleted=True)
        report.update(removed=list(ours(parse(path, current))), restored=True)
        _forget(change, env)
        return report
    change.run(decide, then=lambda wrote: _forget(change, env))  # nothing of this install is left
    report = _report("uninstall", scope, path, change)
    report["removed"] = list(ours(before_doc))
    report["restored"] = how.get("restored", False)
    report["gave_back"] = how.get("gave_back", [])
    if how.get("gave_back"):
        report["notes"].append(
            f"gave back the memcurate entries the file held before install (of "
            f"{', '.join(how['gave_back'])}): an older install's, as they were"
        )
    if how.get("kept_back"):
        report["notes"].append(
            f"the older memcurate entries of {', '.join(how['kept_back'])} are not given back: "
            f"those hooks changed since install; the file as it was is in {how['backup']}"
        )
    if how.get("lost_backup"):
        report["notes"].append(
            f"the backup of the file from before install ({how['lost_backup']}) is gone or "
            "changed: only memcurate's entries were removed"
        )
    return report


def _forget(change: _Change, env) -> None:
    try:
        _set_record(change.target, None, env)
        _drop_legacy(change.backups, change.target)
    except OSError as e:  # a record left behind names bytes the file no longer has: never used
        change.notes.append(f"the record of the install could not be removed: {atomic.failure(e)}")


def _parsed(path: str, data: bytes) -> dict | None:
    try:
        return parse(path, data) or {}
    except InstallError:
        return None


def _give_back(new: dict, old: dict, how: dict) -> dict:
    """`new` (the file without memcurate's entries) with the memcurate entries the file held before
    install, event by event: an event's hooks as they were, wherever its other hooks are as they were."""
    hooks = dict(new.get("hooks") or {})
    for event, groups in (old.get("hooks") or {}).items():
        if not any(_mine(h) for g in groups for h in g["hooks"]):
            continue
        if hooks.get(event, []) == _strip(groups):
            hooks[event] = groups
            how["gave_back"].append(event)
        else:
            how["kept_back"].append(event)
    return {**new, "hooks": hooks} if how["gave_back"] else new


def _report(action: str, scope: str, path: str, change: _Change, **extra) -> dict:
    return {
        "action": action,
        "scope": scope,
        "settings": path,
        "target": change.target if change.target != os.path.abspath(path) else None,
        "changed": change.result != change.base or extra.get("deleted", False),
        "backup": change.backup,
        "added": [],
        "updated": [],
        "removed": [],
        "notes": list(change.notes),
        **extra,
    }


# -- git ignores the local settings, as Claude Code makes it ---------------------------------------------

LOCAL_SETTINGS = ".claude/settings.local.json"
IGNORE_LINE = "**/" + LOCAL_SETTINGS
GIT_TIMEOUT = 10.0


def ignore_local_settings(project, env=None) -> tuple[str | None, str | None]:
    """Make git ignore `.claude/settings.local.json` the way Claude Code does each time it writes that file:
    in a git work tree where git does not ignore it yet, the line `**/.claude/settings.local.json` goes into
    git's global excludes file (core.excludesFile, else $XDG_CONFIG_HOME/git/ignore, else
    ~/.config/git/ignore), never twice. Nothing is touched when git already ignores it, or tracks it (an
    ignore rule would not apply). Returns (the excludes file written, a note for the person)."""
    project = os.fspath(project)
    ignored = _git(project, "check-ignore", "-q", "--", LOCAL_SETTINGS)
    if ignored != 1:  # 0: ignored already; anything else: not a git work tree, or no git
        return None, None
    if _git(project, "ls-files", "--error-unmatch", "--", LOCAL_SETTINGS) == 0:
        return None, (
            f"{LOCAL_SETTINGS} is tracked by git, so no ignore rule applies to it: it now holds this "
            "machine's path; `git rm --cached` it to keep it yours"
        )
    excludes = _excludes_file(project, env)
    try:
        atomic.replace_if_unchanged(
            os.path.realpath(excludes), _with_ignore_line, mode=_mode_of(os.path.realpath(excludes))
        )
    except OSError as e:
        return (
            None,
            f"git may commit {LOCAL_SETTINGS}: could not add {IGNORE_LINE} to {atomic.failure(e)}",
        )
    if _git(project, "check-ignore", "-q", "--", LOCAL_SETTINGS) != 0:
        return excludes, (
            f"{IGNORE_LINE} is in {excludes}, yet git does not ignore {LOCAL_SETTINGS}: "
            "core.excludesFile may point elsewhere"
        )
    return excludes, (
        f"git now ignores {LOCAL_SETTINGS} in every repository, as Claude Code makes it: "
        f"{IGNORE_LINE} is in {excludes}"
    )


def _with_ignore_line(base: bytes | None) -> bytes | None:
    """The excludes file with the ignore line at its end; None when a line of it already says it."""
    base = base or b""
    if any(line.strip() == IGNORE_LINE.encode() for line in base.splitlines()):
        return None
    return (
        base + (b"\n" if base and not base.endswith(b"\n") else b"") + IGNORE_LINE.encode() + b"\n"
    )


def _mode_of(path: str) -> int | None:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return None


def _excludes_file(project: str, env=None) -> str:
    """git's global excludes file, found as Claude Code finds it."""
    env = os.environ if env is None else env
    home = env.get("HOME") or os.path.expanduser("~")
    out = _git_output(project, "config", "--global", "--get", "core.excludesfile").strip()
    if out == "~" or out.startswith("~/"):
        return os.path.join(home, out[2:])
    if os.path.isabs(out):
        return out
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "git", "ignore")
    return os.path.join(home, ".config", "git", "ignore")


def _git_run(project: str, *args: str) -> subprocess.CompletedProcess | None:
    """git in `project`, none of its hooks or fsmonitor run (the project's .git/config is Claude's to write)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        return subprocess.run(
            [
                "git",
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.hooksPath=/dev/null",
                "-C",
                project,
                *args,
            ],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None


def _git(project: str, *args: str) -> int | None:
    done = _git_run(project, *args)
    return None if done is None else done.returncode


def _git_output(project: str, *args: str) -> str:
    done = _git_run(project, *args)
    return (
        done.stdout.decode("utf-8", "replace") if done is not None and done.returncode == 0 else ""
    )


# -- where it is installed -----------------------------------------------------------------------


def installed(project, env=None) -> list[dict]:
    """Where memcurate's hooks are installed, by scope: its settings file, the events, whether with
    review mode; or why that file cannot be read. Also the plugin, where a scope enables it."""
    found: list[dict[str, Any]] = []
    for scope in SCOPES:
        path = settings_path(scope, project, env)
        try:
            doc = parse(path, _read(path))
        except InstallError as e:
            found.append({"scope": scope, "settings": path, "error": str(e)})
            continue
        mine = ours(doc)
        if mine:
            commands = [c for cs in mine.values() for c in cs]
            found.append(
                {
                    "scope": scope,
                    "settings": path,
                    "events": list(mine),
                    "review_auto_memory": any(c["review_auto_memory"] for c in commands),
                    "executables": sorted({c["executable"] for c in commands}),
                    "outdated": any(c["outdated"] for c in commands),
                }
            )
        plugins = (doc or {}).get("enabledPlugins")
        if isinstance(plugins, dict):
            for name, on in plugins.items():
                if on is True and isinstance(name, str) and name.split("@")[0] == "memcurate":
                    found.append({"scope": scope, "settings": path, "plugin": name})
    return found
