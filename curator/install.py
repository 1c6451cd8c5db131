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
- uninstall removes exactly memcurate's entries; when the file is as install left it, it gets
  back the very bytes it had before (or goes, when install created it).

memcurate's entries are told from anyone else's by their command (curator/hook_entries.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time

from curator import hook_entries
from curator.util import atomic, jsonsplice
from curator.util.locks import FileLock, LockBusy
from curator.util.paths import claude_config_dir, data_dir, settings_file, user_state_dir

SCOPES = ("local", "project", "user")
DEFAULT_SCOPE = "local"  # personal: this machine's path has no place in a file everyone commits
MAX_BYTES = 4 << 20
RECORD = "installed.json"  # per settings file: the hash install left it with, and its backup of before
BOM = b"\xef\xbb\xbf"


class InstallError(Exception):
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


def entry_point(argv0: str | None = None, which=shutil.which, executable: str | None = None) -> list[str]:
    """The argv that runs this memcurate from anywhere: the console script this process runs from,
    else the `memcurate` on the PATH, else this interpreter with `-m curator.cli`. Symlinks are
    kept as they are: pipx's ~/.local/bin/memcurate is a link that survives upgrades."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    if os.path.basename(argv0) == "memcurate" and os.sep in argv0:
        path = os.path.abspath(argv0)
        if _runnable(path):
            return [path]
    found = which("memcurate")
    if found and _runnable(os.path.abspath(found)):
        return [os.path.abspath(found)]
    return [os.path.abspath(executable or sys.executable), "-m", "curator.cli"]


def _runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


# -- reading and checking ------------------------------------------------------------------------------

def _read(path: str) -> bytes | None:
    """The file's bytes, None when it does not exist."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise InstallError(f"{path}: a symbolic link to a missing file ({os.readlink(path)}); "
                               "fix or remove the link") from None
        return None
    except OSError as e:
        raise InstallError(f"{path}: {e.strerror}") from None
    if not os.path.isfile(path):
        raise InstallError(f"{path}: not a regular file")
    if st.st_size > MAX_BYTES:
        raise InstallError(f"{path}: {st.st_size} bytes, larger than a settings file can be ({MAX_BYTES})")
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
        raise InstallError(f"{path}: starts with a UTF-8 byte order mark, which JSON does not allow; "
                           "save it as UTF-8 without a BOM")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InstallError(f"{path}: not UTF-8 (byte {e.start}); save it as UTF-8") from None
    if not text.strip():
        return {}
    try:
        doc = json.loads(text, object_pairs_hook=_unique)
    except _Duplicate as e:
        raise InstallError(f"{path}: the key {e} appears twice in one object; remove one of them") from None
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
        raise InstallError(f"{path}: \"hooks\" is {_kind(hooks)}, not an object")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise InstallError(f"{path}: hooks.{event} is {_kind(groups)}, not a list")
        for i, group in enumerate(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                raise InstallError(f"{path}: hooks.{event}[{i}] has no \"hooks\" list")
    return doc


class _Duplicate(Exception):
    pass


def _unique(pairs: list) -> dict:
    """An object of the file; a key written twice is refused (which one counts is a reader's guess)."""
    doc = dict(pairs)
    if len(doc) != len(pairs):
        seen = set()
        raise _Duplicate(repr(next(k for k, _v in pairs if k in seen or seen.add(k))))
    return doc


def _kind(value) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


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


def _records(backups: str) -> dict:
    try:
        doc = atomic.read_json(os.path.join(backups, RECORD))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _set_record(backups: str, target: str, value: dict | None) -> None:
    records = _records(backups)
    if value is None and target not in records:
        return
    if value is None:
        del records[target]
    else:
        records[target] = value
    atomic.write_json(os.path.join(backups, RECORD), records)


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

    def lock(self) -> FileLock:
        key = hashlib.sha1(self.target.encode("utf-8", "surrogateescape")).hexdigest()[:16]
        return FileLock(os.path.join(self.backups, "locks", f"settings-{key}.lock"), wait=10.0)

    def run(self, decide, then=None) -> bool:
        """Apply `decide`, then `then(wrote)` still under the lock; returns whether the file was written."""
        try:
            with self.lock():
                wrote = self._run(decide)
                if then:
                    then(wrote)
                return wrote
        except LockBusy:
            raise InstallError(f"{self.path}: another memcurate install or uninstall is changing it; "
                               "try again") from None

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
            current = _read(self.path)  # refuses a link to a missing file: never created behind a link
            mode = os.stat(self.target).st_mode & 0o7777 if current is not None else None
            return atomic.replace_if_unchanged(self.target, render, mode=mode)
        except atomic.Unsettled:
            raise InstallError(f"{self.path}: another program kept changing it while memcurate wrote; "
                               "nothing was lost: try again") from None
        except OSError as e:
            raise InstallError(f"{self.path}: {atomic.failure(e)}") from None

    def remove(self, expected: bytes) -> bool:
        """Delete the file when it still holds `expected` (backed up first); False when it changed."""
        with self.lock():
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

def install(project, scope: str = DEFAULT_SCOPE, *, review_auto_memory: bool = False,
            entry: list[str] | None = None, env=None) -> dict:
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

    wrote = change.run(decide, then=lambda wrote: wrote and _record_install(change, backups, before_doc))
    report = _report("install", scope, path, change, command=command, review_auto_memory=review_auto_memory)
    after_doc = parse(path, change.result)
    had, has = ours(before_doc), ours(after_doc)
    report["added"] = [e for e in has if e not in had]
    report["updated"] = [e for e in has if e in had and _groups_of(before_doc, e) != _groups_of(after_doc, e)]
    report["removed"] = [e for e in had if e not in has]
    report["created"] = wrote and change.base is None
    if scope == "project":
        report["notes"].append(f"{path} is shared with everyone who clones the project and now holds this "
                               f"machine's path ({command}); --scope local keeps it to you")
    return report


def _groups_of(doc: dict, event: str) -> list:
    return [g for g in ((doc or {}).get("hooks") or {}).get(event, []) if any(_mine(h) for h in g["hooks"])]


def _record_install(change: _Change, backups: str, before_doc: dict) -> None:
    """Remember how install left the file, and where its bytes from before memcurate are, so that
    uninstall can give them back. A reinstall over a file install left as it was keeps the older
    'before'; over a file that held memcurate's entries otherwise, nothing can be given back."""
    old = _records(backups).get(change.target)
    if old and change.base is not None and old.get("after") == _digest(change.base):
        before = old.get("before")
    elif ours(before_doc):
        before = "unknown"
    else:
        before = change.backup  # None: install created the file
    _set_record(backups, change.target, {"after": _digest(change.result), "before": before})


def uninstall(project, scope: str = DEFAULT_SCOPE, *, env=None) -> dict:
    """Remove memcurate's hooks from the settings file of `scope`; a report of what changed."""
    path = settings_path(scope, project, env)
    backups = backups_dir(scope, project, env)
    change = _Change(path, backups)
    record = _records(backups).get(change.target) or {}  # read again under the lock (decide)
    how = {"restored": False}
    before_doc: dict = {}

    def decide(base, doc):
        nonlocal before_doc
        before_doc = doc or {}
        if not ours(doc):
            return None
        new = without_ours(doc)
        original = _original(_records(backups).get(change.target) or {}, base, new)
        how["restored"] = original is not None
        return original if original is not None else _render(path, base, new)

    current = _read(change.target)
    created = record.get("before", "unknown") is None and current is not None \
        and record.get("after") == _digest(current) and without_ours(parse(path, current)) == {}
    if created and change.remove(current):
        report = _report("uninstall", scope, path, change)
        report.update(removed=list(ours(parse(path, current))), deleted=True, restored=True)
        _set_record(backups, change.target, None)
        return report
    change.run(decide, then=lambda wrote: _set_record(backups, change.target, None))  # nothing of ours is left
    report = _report("uninstall", scope, path, change)
    report["removed"] = list(ours(before_doc))
    report["restored"] = how["restored"]
    return report


def _original(record: dict, base: bytes | None, new: dict) -> bytes | None:
    """The bytes the file had before install, when it is exactly as install left it and those bytes
    hold what removing memcurate's entries gives; else None (remove them in place)."""
    before = record.get("before")
    if not before or before == "unknown" or base is None or record.get("after") != _digest(base):
        return None
    try:
        with open(before, "rb") as f:
            data = f.read()
        doc = json.loads(data.decode("utf-8")) if data.strip() else {}
    except (OSError, ValueError):
        return None
    return data if doc == new else None


def _report(action: str, scope: str, path: str, change: _Change, **extra) -> dict:
    return {"action": action, "scope": scope, "settings": path,
            "target": change.target if change.target != os.path.abspath(path) else None,
            "changed": change.result != change.base or extra.get("deleted", False),
            "backup": change.backup, "added": [], "updated": [], "removed": [], "notes": [], **extra}


# -- where it is installed -----------------------------------------------------------------------

def installed(project, env=None) -> list[dict]:
    """Where memcurate's hooks are installed, by scope: its settings file, the events, whether with
    review mode; or why that file cannot be read. Also the plugin, where a scope enables it."""
    found = []
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
            found.append({"scope": scope, "settings": path, "events": list(mine),
                          "review_auto_memory": any(c["review_auto_memory"] for c in commands),
                          "executables": sorted({c["executable"] for c in commands})})
        plugins = (doc or {}).get("enabledPlugins")
        if isinstance(plugins, dict):
            for name, on in plugins.items():
                if on is True and isinstance(name, str) and name.split("@")[0] == "memcurate":
                    found.append({"scope": scope, "settings": path, "plugin": name})
    return found
