"""Where things live (docs/design.md §4): project root, data dir, memory root.

String paths and os.path, not pathlib: the hook imports this on every turn.

The memory root is derived from the repository the way Claude Code derives its
auto-memory folder, never from a hook payload: one folder per git repository
(its subfolders and worktrees share it), under Claude Code's config dir,
unless `autoMemoryDirectory` moves it. The only thing the hook records is the
config dir it ran under (the TUI may run in a shell without Claude Code's
CLAUDE_CONFIG_DIR), and only once a transcript proves Claude Code keeps this
project's sessions there.
"""

from __future__ import annotations

import os
import sys

from memcurate.curator.errors import Refusal
from memcurate.curator.util import fastjson
from memcurate.curator.util.atomic import read_json, write_json, write_text
from memcurate.curator.util.private import DATA_DIR_NAME, make_dirs, tighten

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the hook milliseconds at import
    from typing import Any

# memcurate's own names in the memory root (the write guard keeps Claude out of them)
ROOT_LOCK_NAME = ".memcurate.lock"
# What memcurate archives: archived memory files (`.archive/<category>/<id>.md`), the entries MEMORY.md has
# no room for (`.archive/<category>.md`) and Claude's archived topic files (`.archive/claude/...`). A dot
# folder: Claude Code 2.1's recall lists every .md of the memory folder to its selector, except in dot folders.
ARCHIVE_DIR = ".archive"
# where memcurate before 2.1 archived: moved to ARCHIVE_DIR on the next locked write
LEGACY_ARCHIVE_DIR = "archive"
# An archived memory's name in its category's listing (the index keys files by category and name): a path
# from the category folder, `../.archive/<category>/<id>.md`, so that joined to the folder it names the file.
ARCHIVED_PREFIX = f"../{ARCHIVE_DIR}/"


def archived_name(category: str, file: str) -> str:
    return f"{ARCHIVED_PREFIX}{category}/{file}"


CONFIG_DIR_RECORD = "claude-config-dir.json"
# The one folder of rule files memcurate writes, relative to the project (docs/design.md §4); the write guard
# keeps Claude out of it and nothing else under .claude/rules/ is ever touched.
RULES_DIR = os.path.join(".claude", "rules", "memcurate")
MAX_SETTINGS_BYTES = 1 << 20
# Claude Code's managed (policy) settings: the highest layer, which no user setting overrides.
MANAGED_SETTINGS = (
    "/Library/Application Support/ClaudeCode/managed-settings.json"
    if sys.platform == "darwin"
    else "/etc/claude-code/managed-settings.json"
)
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


class AutoMemoryOff(Refusal):
    """Claude Code's auto memory is off and memory.root is `auto`: saving would write where Claude never looks."""


def project_root(start=None) -> str:
    """The git top level of `start` (default: cwd), else `start` itself.

    Walks up looking for `.git` (a folder, or a file in worktrees) instead of
    running git: a subprocess would cost the hook more than everything else.
    """
    here = os.path.abspath(os.fspath(start) if start else os.getcwd())
    d = here
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return here
        d = parent


def data_dir(project, *, create: bool = True) -> str:
    """The project's data dir; with `create`, made (0700, git told to ignore it) unless it is set up.

    Set up means its `.gitignore` is there and readable by the owner alone: one stat on every hook.
    The `.gitignore` is written last, so a data dir an older memcurate left readable by others (or one
    made half-way) is tightened (private.py) the next time it is opened."""
    d = os.path.join(os.fspath(project), DATA_DIR_NAME)
    if create:
        mark = os.path.join(d, ".gitignore")
        try:
            ready = not os.stat(mark).st_mode & 0o077
        except OSError:
            ready = False
        if not ready:
            make_dirs(d)
            tighten(d)
            write_text(mark, "*\n", durable=False)
    return d


def claude_config_dir(env=None) -> str:
    env = os.environ if env is None else env
    return os.path.abspath(
        env.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    )


PROJECT_KEY_MAX = 200  # Claude Code's MTe: a longer key is cut here and a hash added


def project_key(project) -> str:
    """Claude Code's folder name for a project, as Claude Code 2.1.328 makes it (read in its bundled JS and
    checked against the binary, tests/engine/test_project_key.py): every UTF-16 code unit of the absolute path
    that is not an ASCII letter or digit becomes '-' (a character outside the BMP is two units, so two
    dashes); a key over 200 units is cut to 200 and gets '-' and the base-36 absolute value of the path's
    32-bit Java string hash. A folder named any other way is one Claude Code never reads."""
    path = os.path.abspath(os.fspath(project))
    key = "".join(
        c if c.isascii() and c.isalnum() else "-" * (2 if ord(c) > 0xFFFF else 1) for c in path
    )
    if len(key) <= PROJECT_KEY_MAX:
        return key
    # Only here: the codec is a module of its own, which every hook that records its config dir would load.
    # A byte the file system could not decode stays one unit.
    units = path.encode("utf-16-le", "surrogatepass")
    return f"{key[:PROJECT_KEY_MAX]}-{_base36(abs(_string_hash(units)))}"


def _string_hash(utf16le: bytes) -> int:
    """Claude Code's `vte`: h = h * 31 + unit over the UTF-16 code units, wrapped to a signed 32-bit int."""
    h = 0
    for i in range(0, len(utf16le), 2):
        h = (h * 31 + (utf16le[i] | utf16le[i + 1] << 8)) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _base36(n: int) -> str:
    """`n.toString(36)` of a non-negative integer."""
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


def is_inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or below it (both compared as given: resolve them first)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def project_relative(path: str, project: str) -> str | None:
    """`path`, a file a session wrote, relative to `project` ('/' separated); None outside it.

    A relative path is taken from the project; `..` is collapsed first, so `proj/../other/x` is outside. A
    project reached through a symbolic link (the transcript says /tmp/p, the file /private/tmp/p/x) is
    compared resolved too. Without a project (`""`) the path is returned as written."""
    if not project or not path:
        return path or None
    root = os.path.normpath(project)
    full = os.path.normpath(os.path.join(root, path))
    if not is_inside(full, root):
        try:
            full, root = os.path.realpath(full), os.path.realpath(root)
        except (ValueError, OSError):  # a NUL or a lone surrogate in a path from the transcript
            return None
        if not is_inside(full, root):
            return None
    rel = os.path.relpath(full, root)
    return None if rel == os.curdir else rel.replace(os.sep, "/")


def resolve_target(path: str, cwd: str) -> str:
    """Where a tool's file path really points: `~` expanded, relative to `cwd`, `..` collapsed and the
    symlinks of every existing ancestor resolved (the file itself may not exist yet)."""
    path = os.path.expanduser(path)
    return os.path.realpath(path if os.path.isabs(path) else os.path.join(cwd, path))


# -- the repository -------------------------------------------------------------------


def main_worktree(start) -> str:
    """The root of the main worktree of the repository holding `start`; `start` itself outside git.

    Read from the files git keeps, without running git: in a linked worktree `.git`
    is a file `gitdir: <main>/.git/worktrees/<name>` whose folder holds `commondir`.
    """
    here = os.path.realpath(os.fspath(start))
    d = here
    while True:
        dotgit = os.path.join(d, ".git")
        if os.path.isdir(dotgit):
            return d
        if os.path.isfile(dotgit):
            return _main_of_linked(d, dotgit) or d
        parent = os.path.dirname(d)
        if parent == d:
            return here
        d = parent


def _read_small(path: str, limit: int = 4096) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _main_of_linked(worktree: str, dotgit: str) -> str | None:
    """The main worktree of the linked worktree `worktree`, None when `.git` is not one (a submodule,
    a separate git dir) or does not hold together: its git dir must sit in `<common>/worktrees/` and
    point back to this `.git`, so a stray `.git` file cannot borrow another repository's memory."""
    text = _read_small(dotgit)
    if not text or not text.startswith("gitdir:"):
        return None
    gitdir = os.path.realpath(os.path.join(worktree, text[len("gitdir:") :].strip()))
    common = _read_small(os.path.join(gitdir, "commondir"))
    back = _read_small(os.path.join(gitdir, "gitdir"))
    if not common or not back:
        return None
    common = os.path.realpath(os.path.join(gitdir, common.strip()))
    if os.path.dirname(gitdir) != os.path.join(common, "worktrees"):
        return None
    if os.path.realpath(os.path.join(gitdir, back.strip())) != os.path.realpath(dotgit):
        return None
    # A bare repository's worktrees have no main worktree: each keeps its own folder.
    return os.path.dirname(common) if os.path.basename(common) == ".git" else None


# -- Claude Code's settings -----------------------------------------------------------------


def _settings(path: str) -> dict:
    """A Claude Code settings file; {} when missing or unreadable (Claude Code skips those too)."""
    try:
        with open(path, "rb") as f:
            doc = fastjson.loads(f.read(MAX_SETTINGS_BYTES))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def settings_file(scope: str, project, config_dir: str) -> str:
    """Claude Code's settings file of a scope: policy, local (personal), project (shared) or user."""
    claude = os.path.join(os.fspath(project), ".claude")
    return {
        "policy": MANAGED_SETTINGS,
        "local": os.path.join(claude, "settings.local.json"),
        "project": os.path.join(claude, "settings.json"),
        "user": os.path.join(config_dir, "settings.json"),
    }[scope]


def settings_layers(project, config_dir: str) -> list[tuple[str, str, dict]]:
    """(scope, file, settings) from the highest precedence down: policy, local, project, user."""
    return [
        (scope, path, _settings(path))
        for scope in ("policy", "local", "project", "user")
        for path in [settings_file(scope, project, config_dir)]
    ]


def user_state_dir(env=None) -> str:
    """memcurate's own state outside any project: ${XDG_STATE_HOME:-~/.local/state}/memcurate."""
    env = os.environ if env is None else env
    base = env.get("XDG_STATE_HOME")
    if not (base and os.path.isabs(base)):  # the XDG spec: a relative value is ignored
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "memcurate")


def _memory_directory(value) -> str | None:
    """An autoMemoryDirectory value as Claude Code accepts it: absolute, or `~/…`; else None."""
    if not isinstance(value, str) or "\0" in value:
        return None
    if value.startswith("~/"):
        value = os.path.expanduser("~") + value[1:]
    if not os.path.isabs(value):
        return None
    value = os.path.normpath(value)
    return value if value != os.sep else None


def auto_memory_state(layers, env=None) -> tuple[bool, str]:
    """Whether Claude Code's auto memory is on, and why. The environment variable wins over every
    setting (1/true turns it off, 0/false on); then the first layer that sets autoMemoryEnabled."""
    env = os.environ if env is None else env
    flag = (env.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY") or "").strip().lower()
    if flag in _TRUE:
        return False, f"CLAUDE_CODE_DISABLE_AUTO_MEMORY={env['CLAUDE_CODE_DISABLE_AUTO_MEMORY']}"
    if flag in _FALSE:
        return True, f"CLAUDE_CODE_DISABLE_AUTO_MEMORY={env['CLAUDE_CODE_DISABLE_AUTO_MEMORY']}"
    for _scope, path, doc in layers:
        if isinstance(doc.get("autoMemoryEnabled"), bool):
            return doc[
                "autoMemoryEnabled"
            ], f"autoMemoryEnabled: {str(doc['autoMemoryEnabled']).lower()} in {path}"
    return True, "default"


# -- the config dir the hook saw -----------------------------------------------------------------


def recorded_config_dir(data) -> str | None:
    """The config dir the hook last proved Claude Code runs this project under (None: no usable record)."""
    try:
        path = read_json(os.path.join(os.fspath(data), CONFIG_DIR_RECORD)).get("path")
    except (OSError, ValueError, AttributeError):
        return None
    if (
        isinstance(path, str)
        and os.path.isabs(path)
        and "\0" not in path
        and os.path.isdir(os.path.join(path, "projects"))
    ):
        return path
    return None


def record_config_dir(data, transcript: str, session_dirs, env=None) -> bool:
    """Remember the config dir this hook runs under, when `transcript` proves Claude Code keeps this
    project's sessions there: it lies in `<config dir>/projects/<key>/` with `<key>` the key of one
    of `session_dirs` (the folders of this project the session may have started in). Returns
    whether the record is now this config dir. Cheap when nothing changed: one small read."""
    config_dir = claude_config_dir(env)
    record = os.path.join(os.fspath(data), CONFIG_DIR_RECORD)
    try:
        if read_json(record).get("path") == config_dir:
            return True
    except (OSError, ValueError, AttributeError):
        pass
    real = os.path.realpath(transcript)
    if not os.path.isfile(real):
        return False
    folder = os.path.dirname(real)
    if os.path.dirname(folder) != os.path.realpath(os.path.join(config_dir, "projects")):
        return False
    keys = {project_key(p) for d in session_dirs for p in (d, os.path.realpath(d))}
    if os.path.basename(folder) not in keys:
        return False
    write_json(record, {"path": config_dir, "seen_in": transcript}, durable=False)
    return True


def hook_may_read(path: str, project, env=None, *, resolved: bool = False) -> str | None:
    """Why the hook must not open `path`, None when it may: only transcripts in Claude Code's
    projects folder or inside the project, both resolved (symlinks and `..` included), so a
    payload cannot point the hook at any other readable file. Asked once of the payload's path, and
    again of where the file the hook opened really is (`resolved`: taken as it is, the kernel's
    word; see util.safe_open.open_regular), which a path swapped meanwhile cannot change."""
    if not os.path.isabs(path):
        return "is not an absolute path"
    real = path if resolved else os.path.realpath(path)
    for folder in (os.path.join(claude_config_dir(env), "projects"), os.fspath(project)):
        if is_inside(real, os.path.realpath(folder)):
            return None
    return "lies outside Claude Code's projects folder and the project"


# -- the memory root ---------------------------------------------------------------------------------


def _config_dir(data, env) -> tuple[str, str]:
    """Claude Code's config dir for this project, and where that came from."""
    recorded = recorded_config_dir(data) if data is not None else None
    if recorded:
        return recorded, f"recorded by the hook in {os.path.join(data, CONFIG_DIR_RECORD)}"
    return claude_config_dir(env), "CLAUDE_CONFIG_DIR" if env.get(
        "CLAUDE_CONFIG_DIR"
    ) else "default"


def resolve_memory_root(project, cfg: dict, data=None, env=None) -> dict:
    """Where memories of `project` are saved, and where that came from.

    `memory.root` in memcurate's config wins; with `auto`, Claude Code's rule:
    `autoMemoryDirectory` (policy, local or user settings: Claude Code ignores it in
    the shared project settings, so a cloned repository cannot redirect memory
    writes), else `<config dir>/projects/<key of the main worktree>/memory`. The
    config dir is the one the hook recorded, else $CLAUDE_CONFIG_DIR, else ~/.claude.
    """
    env = os.environ if env is None else env
    project = os.fspath(project)
    config_dir, config_dir_from = _config_dir(data, env)
    layers = settings_layers(project, config_dir)
    enabled, why = auto_memory_state(layers, env)
    doc: dict[str, Any] = {
        "claude_config_dir": config_dir,
        "claude_config_dir_from": config_dir_from,
        "auto_memory": {"enabled": enabled, "why": why},
        "notes": [],
    }
    configured = cfg["memory"]["root"]
    if configured != "auto":
        p = os.path.expanduser(configured)
        return {
            **doc,
            "path": p if os.path.isabs(p) else os.path.join(project, p),
            "source": "config",
            "from": "memory.root in memcurate's config",
        }
    for scope, path, settings in layers:
        if "autoMemoryDirectory" not in settings:
            continue
        if scope == "project":
            doc["notes"].append(
                f"autoMemoryDirectory in {path} ignored: Claude Code does not take it "
                "from the shared project settings"
            )
            continue
        value = _memory_directory(settings["autoMemoryDirectory"])
        if value:
            return {
                **doc,
                "path": value,
                "source": "autoMemoryDirectory",
                "from": f"autoMemoryDirectory in {path}",
            }
        doc["notes"].append(f"autoMemoryDirectory in {path} ignored: not an absolute or ~/ path")
    main = main_worktree(project)
    where = (
        f"the repository at {main}"
        if os.path.exists(os.path.join(main, ".git"))
        else f"the folder {main} (not a git repository)"
    )
    return {
        **doc,
        "path": os.path.join(config_dir, "projects", project_key(main), "memory"),
        "source": "derived",
        "from": f"derived from {where}",
        "repository": main,
    }


def memory_root(project, cfg: dict, data=None) -> str:
    """The memory root of `project` (see resolve_memory_root)."""
    return resolve_memory_root(project, cfg, data)["path"]


def check_saving(location: dict) -> None:
    """AutoMemoryOff when saving into `location` would write where Claude Code never looks."""
    if location["source"] == "config" or location["auto_memory"]["enabled"]:
        return
    raise AutoMemoryOff(
        f"Claude Code's auto memory is off ({location['auto_memory']['why']}), so it would never load memories "
        f"saved in {location['path']}: nothing saved. Set memory.root in .claude/memcurate.yaml to the folder "
        "to save into, or turn auto memory on"
    )
