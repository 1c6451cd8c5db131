"""PreToolUse on Write, Edit and MultiEdit: the write guard.

Claude never writes memcurate's files, nor the person's settings of memcurate:
  - the data dir `<project>/.memcurate/` (staged records, candidates, proposals, caches, backups, logs);
  - memcurate's state outside projects, `${XDG_STATE_HOME:-~/.local/state}/memcurate/` (install records and
    the backups `memcurate uninstall` gives back to Claude Code's settings);
  - memcurate's config: `<project>/.claude/memcurate.yaml` and the user layer
    `${XDG_CONFIG_HOME:-~/.config}/memcurate/config.yaml` (the person edits them in their editor);
  - the rules folder `<project>/.claude/rules/memcurate/`;
  (in a linked worktree, the main worktree's data dir, rules folder and project config too);
  - in Claude Code's auto-memory folder, derived as `memory.root: auto` derives it under the config dir
    Claude Code runs under (and under the one the data dir records, when that differs): the category
    folders, archive/, memcurate's lock and temp files, and memcurate's sections of MEMORY.md (a change
    of Claude's own lines passes);
  - every folder a config layer names as `memory.root`, whole;
  - memcurate's hooks in Claude Code's settings files (the project's, the local and the user's): a change of
    memcurate's entries, or turning disableAllHooks on, is denied; every other setting passes.
None of this needs the config: a config can add a root and turn review mode on, never take either away.
In review mode (`memcurate hook --review-auto-memory`, or `hooks.review_auto_memory` in any layer) every
other write of Claude's into its auto-memory folder is denied too, and staged for the person's approval.

It fails closed: when it cannot decide (a config error, a cache that neither checks out nor rebuilds, a
hook input it cannot read, an internal error), a write that may touch one of these places is denied with
a reason that says what to fix; any other write passes.

The target is resolved before deciding (`~`, relative to the payload's cwd, `..`, symlinks). A deny is
Claude Code's hook JSON on stdout, exit 0; a pass prints nothing (an "allow" would skip Claude Code's own
permission prompt). A pass costs the config cache, Claude Code's small settings files and the path
resolution, nothing more.
"""

from __future__ import annotations

import os
import sys

from memcurate.curator import config
from memcurate.curator.candidates.tool_edits import TOOLS
from memcurate.curator.util import fastjson
from memcurate.curator.util.atomic import is_temp_name
from memcurate.curator.util.log import log_line
from memcurate.curator.util.paths import (
    ARCHIVE_DIR,
    DATA_DIR_NAME,
    LEGACY_ARCHIVE_DIR,
    ROOT_LOCK_NAME,
    RULES_DIR,
    claude_config_dir,
    is_inside,
    main_worktree,
    project_key,
    recorded_config_dir,
    resolve_memory_root,
    resolve_target,
    settings_file,
    user_state_dir,
)

from . import hook_config

EVENT = "PreToolUse"
MEMORY_MD = "MEMORY.md"
SAY_IT = (
    "To keep a fact, say it in the conversation instead: memcurate proposes it for the person's review "
    "at the end of the turn."
)
AUTO = {
    "memory": {"root": "auto"}
}  # what resolve_memory_root needs to derive Claude Code's own folder
# File systems that ignore case and Unicode normalisation by default (APFS, NTFS): paths are compared folded.
CASE_FOLDING = sys.platform in ("darwin", "win32")


class Places:
    """What the guard protects in one project, every path resolved. The fixed places need no config;
    `roots` (whole folders) and `review` come from the config once it is known."""

    def __init__(self, project: str, data: str, env) -> None:
        self.project, self.env = project, env
        # this checkout's, and the main worktree's when this is a linked one (the two share one memory folder)
        main = main_worktree(project)
        checkouts = dict.fromkeys([project, main])
        self.data = list(
            dict.fromkeys(
                os.path.realpath(p)
                for p in [data, *(os.path.join(c, DATA_DIR_NAME) for c in checkouts)]
            )
        )
        self.rules = [os.path.realpath(os.path.join(c, RULES_DIR)) for c in checkouts]
        self.configs = [os.path.realpath(p) for p in _config_files(list(checkouts))]
        # as this environment names it, and the default (user_state_dir of an environment without XDG_STATE_HOME)
        self.state = list(
            dict.fromkeys(os.path.realpath(p) for p in (user_state_dir(env), user_state_dir({})))
        )
        self.config_dirs = [claude_config_dir(env)]
        # the data dir is Claude's to write: this only adds a folder
        recorded = recorded_config_dir(data)
        if recorded and os.path.realpath(recorded) != os.path.realpath(self.config_dirs[0]):
            self.config_dirs.append(recorded)
        # memcurate's parts are guarded in these (derived from the repository, with no settings read)...
        self.auto = [
            os.path.realpath(os.path.join(d, "projects", project_key(main), "memory"))
            for d in self.config_dirs
        ]
        # Claude Code's settings files Claude may write, where memcurate's hooks are installed
        self.settings = [
            os.path.realpath(settings_file(scope, project, d))
            for scope, d in [
                ("project", ""),
                ("local", ""),
                *(("user", d) for d in self.config_dirs),
            ]
        ]
        self.claude: list[
            str
        ] = []  # ...and Claude Code's auto-memory folders, whole in review mode
        self.roots: list[str] = []
        self.review: bool | None = None  # None: not known (yet)

    def add_claude_folders(self) -> None:
        """Claude Code's own auto-memory folders: autoMemoryDirectory (Claude Code's settings) or derived."""
        for d in self.config_dirs:
            folder = os.path.realpath(
                resolve_memory_root(self.project, AUTO, None, {**self.env, "CLAUDE_CONFIG_DIR": d})[
                    "path"
                ]
            )
            self.claude.append(folder)
            if not any(_same(folder, a) for a in self.auto):
                self.auto.append(folder)

    def add_roots(self, roots: list[str]) -> None:
        """The memory roots a config names: protected whole, except where one is Claude Code's own folder."""
        for raw in roots:
            path = os.path.expanduser(raw)
            path = os.path.realpath(
                path if os.path.isabs(path) else os.path.join(self.project, path)
            )
            if not any(_same(path, known) for known in self.auto + self.roots):
                self.roots.append(path)

    def may_be_guarded(self, target: str) -> bool:
        """Whether a write of `target` may touch what the guard protects (decided without the tool input)."""
        if (
            any(_inside(target, f) for f in self.data + self.rules)
            or any(_same(target, c) for c in self.configs + self.settings)
            or any(_inside(target, f) for f in self.state + self.roots)
        ):
            return True
        for auto in self.auto:
            if _inside(target, auto) and (
                _own_part(target, auto) or _same(target, os.path.join(auto, MEMORY_MD))
            ):
                return True
        folders = self.claude or self.auto
        return self.review is not False and any(
            _inside(target, f) and not _same(target, f) for f in folders
        )


def _config_files(checkouts: list[str]) -> list[str]:
    """memcurate's config layers that are the person's: the project layers (of each checkout) and the user
    layer (as this environment names it, and the default one: a shell without XDG_CONFIG_HOME reads that)."""
    default = os.path.join(os.path.expanduser("~"), ".config", "memcurate", "config.yaml")
    return [*map(config.project_config_path, checkouts), config.user_config_path(), default]


def handle(
    payload: dict, project: str, data: str, *, env=None, session_dirs=(), review_auto_memory=False
) -> int:
    tool = payload.get("tool_name")
    if tool not in TOOLS:
        return 0
    env = os.environ if env is None else env
    tool_input = payload.get("tool_input")
    raw = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not isinstance(raw, str) or not raw or "\0" in raw:
        log_line(
            data,
            EVENT,
            f"{tool} without a usable tool_input.file_path: passed (Claude Code's tool fails it)",
        )
        return 0
    if not _encodable(raw):
        return check_unreadable(
            tool,
            [raw],
            payload.get("cwd"),
            "its file_path holds a lone surrogate",
            project,
            data,
            env=env,
            session_dirs=session_dirs,
            review_auto_memory=review_auto_memory,
        )
    places: Places | None = None
    targets: list[str] = []
    try:
        targets = _targets(raw, payload.get("cwd"), project, session_dirs)
        places = Places(project, data, env)
        places.add_claude_folders()
        cfg, error = _load_config(project, data, places, review_auto_memory)
        reasons = [
            r
            for t in targets
            for r in [
                decide(payload, tool, tool_input, t, places, data, cfg, error, len(targets) > 1)
            ]
            if r
        ]
        reason = reasons[0] if reasons else None
        if error:
            hook_config.report(
                data,
                EVENT,
                f"{tool} of {targets[0]} "
                + ("denied" if reason else "passed: not a guarded place"),
                error,
            )
    except Exception as e:  # fail closed where it guards: see _fail_closed
        _internal_error(data, e)
        reason = _fail_closed(
            places,
            targets,
            project,
            data,
            env,
            f"an internal error ({e.__class__.__name__}) stopped memcurate's check; "
            "the person can see it in .memcurate/log/memcurate.log",
        )
    if reason:
        log_line(data, EVENT, f"{tool} of {targets[0] if targets else raw} denied: {reason[:200]}")
        deny(reason)
    return 0


def check_unreadable(
    tool: object,
    paths: list[str],
    cwd: object,
    problem: str,
    project: str,
    data: str,
    *,
    env=None,
    session_dirs=(),
    review_auto_memory=False,
) -> int:
    """A Write/Edit/MultiEdit whose input could not be read as it is (a lone surrogate, bytes that are not
    UTF-8, JSON that does not parse): read as far as it goes, it is denied when one of the targets it may
    name may be guarded, or when it names none; anything else passes. `tool` None: not found (the hook is
    installed for the writing tools only, so it is one)."""
    if tool is not None and tool not in TOOLS:
        return 0
    env = os.environ if env is None else env
    places: Places | None = None
    targets: list[str] = []
    why = f"memcurate could not read this call's hook input ({problem})"
    try:
        targets = [
            t
            for p in paths
            for variant in _spellings(p)
            for t in _targets(variant, cwd, project, session_dirs)
        ]
        places = Places(project, data, env)
        if targets:
            places.add_claude_folders()
            _load_config(project, data, places, review_auto_memory)
        reason = _fail_closed(places, targets, project, data, env, why)
    except Exception as e:
        _internal_error(data, e)
        reason = _fail_closed(places, targets, project, data, env, why)
    log_line(
        data,
        EVENT,
        f"{tool or 'a tool'} with unreadable input ({problem}): {'denied' if reason else 'passed'}",
    )
    if reason:
        deny(reason)
    return 0


def deny(reason: str) -> None:
    print(
        fastjson.dumps(
            {
                "hookSpecificOutput": {
                    "hookEventName": EVENT,
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reason,
                }
            }
        )
    )


def _internal_error(data: str, e: Exception) -> None:
    from .dispatch import tell_internal_error  # loaded already: the dispatcher called this handler

    log_line(data, EVENT, f"internal error: {e.__class__.__name__}: {e}")
    tell_internal_error(e)


def _load_config(
    project: str, data: str, places: Places, flag: bool
) -> tuple[dict | None, str | None]:
    """The config (None and the error when it does not build), its roots and review mode put into `places`.
    A config error still says what it can: each readable layer's memory.root and review mode."""
    try:
        cfg = config.load(project, data)
    except config.ConfigError as e:
        guard = e.guard or {"roots": [], "review_auto_memory": None}
        places.add_roots(guard["roots"])
        places.review = True if flag else guard["review_auto_memory"]
        return None, str(e)
    places.add_roots([cfg["memory"]["root"], *cfg["_derived"][config.GUARD]["roots"]])
    places.review = flag or cfg["hooks"]["review_auto_memory"]
    return cfg, None


def _fail_closed(
    places: Places | None, targets: list[str], project: str, data: str, env, why: str
) -> str | None:
    """The deny reason when the guard cannot decide: when a target may be guarded, or none is known."""
    if not targets:
        return f"{why}, and could not tell which file this call writes, so it is refused. Tell the person."
    try:
        places = places or Places(project, data, env)
        guarded = next((t for t in targets if places.may_be_guarded(t)), None)
    except Exception:  # not even the places: every target may be guarded
        guarded = targets[0]
    if guarded is None:
        return None
    return (
        f"{why}; {guarded} may be one of memcurate's files, so this write is refused until that is "
        "fixed. Tell the person; do not try to write it another way."
    )


def _fold(path: str) -> str:
    """`path` as the file system compares names: case and Unicode normalisation ignored where they are
    (macOS and Windows by default), so `.MEMCURATE/` or `Decision/` cannot slip past a comparison."""
    if not CASE_FOLDING:
        return path
    import unicodedata

    return unicodedata.normalize("NFC", path).casefold()


def _inside(path: str, folder: str) -> bool:
    return is_inside(_fold(path), _fold(folder))


def _same(a: str, b: str) -> bool:
    return _fold(a) == _fold(b)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _spellings(path: str) -> list[str]:
    """The paths a file_path that is not clean text may end up as: its lone surrogates as U+FFFD (what
    Claude Code's runtime writes for them), and, for bytes that were not UTF-8, those bytes themselves."""
    if _encodable(path):
        return [path]
    out = ["".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in path)]
    try:
        path.encode("utf-8", "surrogateescape")
        out.append(path)  # os functions take it as those bytes
    except UnicodeEncodeError:
        pass
    return out


def _targets(raw: str, cwd: object, project: str, session_dirs) -> list[str]:
    """Where `raw` may point, resolved: one target, unless it is relative and the payload's cwd is not a
    usable absolute path (then every folder the session may run in)."""
    path = os.path.expanduser(raw)
    if os.path.isabs(path):
        return [resolve_target(path, "/")]
    if isinstance(cwd, str) and os.path.isabs(cwd) and "\0" not in cwd and _encodable(cwd):
        return [resolve_target(path, cwd)]
    folders = dict.fromkeys([os.getcwd(), project, *session_dirs])
    return [resolve_target(path, folder) for folder in folders]


def decide(
    payload: dict,
    tool: str,
    tool_input: dict,
    target: str,
    places: Places,
    data: str,
    cfg: dict | None,
    error: str | None,
    unsure: bool,
) -> str | None:
    """The reason to deny the call, None to let it pass. `unsure`: the target is one of several the call
    may write (a relative path without a usable cwd), so a write that would be staged is denied instead."""
    if any(_inside(target, f) for f in places.data):
        return (
            f"{target} is in memcurate's data dir ({DATA_DIR_NAME}/: its staged records, candidates, caches and "
            f"logs), which only memcurate writes. Never write these files. {SAY_IT}"
        )
    if any(_inside(target, f) for f in places.state):
        return (
            f"{target} is in memcurate's own state folder (its install records and the backups of the settings "
            "it changed), which only memcurate writes. Never write these files."
        )
    if any(_same(target, c) for c in places.configs):
        return (
            f"{target} is memcurate's config, which is the person's: ask the person; they edit it in their "
            "editor. Never write it."
        )
    if any(_same(target, c) for c in places.settings):
        reason = _settings_reason(tool, tool_input, target)
        if reason:
            return reason
    if any(_inside(target, f) for f in places.rules):
        return (
            f"{target} is in memcurate's rules folder ({RULES_DIR}), which only memcurate writes, after the "
            f"person approves a rule. Never write these files. {SAY_IT}"
        )
    for root in places.roots:
        if _inside(target, root):
            return (
                f"{target} is in memcurate's memory root (memory.root in memcurate's config), managed by "
                f"memcurate: memories are saved there only after the person reviews them. Never write these "
                f"files. {SAY_IT}"
            )
    review = places.review
    for auto in places.auto:
        own = _own_part(target, auto) if _inside(target, auto) else None
        if own:
            return (
                f"{target} is {own}, managed by memcurate: memories are saved there only after the person "
                f"reviews them. Never write these files. {SAY_IT}"
            )
        if _same(target, os.path.join(auto, MEMORY_MD)):
            reason = _sections_reason(tool, tool_input, target, data, review is True, auto)
            if reason:
                return f"{reason} {SAY_IT}"
    for folder in places.claude:
        if not _inside(target, folder) or _same(target, folder) or review is False:
            continue
        if error or cfg is None:
            return (
                f"memcurate could not check this memory write: its config has an error ({error}), so it cannot "
                "tell whether Claude's memory writes wait for the person's review. Ask the person to fix that "
                "file in their editor; until then memory writes here are refused."
            )
        if unsure:
            return f"memcurate could not tell which file {tool_input.get('file_path')!r} is: give an absolute path."
        return _stage(payload, tool, tool_input, target, folder, data, cfg)
    return None


def _own_part(target: str, root: str) -> str | None:
    """What of memcurate's `target` is in the auto-memory folder `root`, None when it is not memcurate's."""
    from memcurate.curator.categories import CATEGORIES

    rel = os.path.relpath(_fold(target), _fold(root))
    top = rel.split(os.sep, 1)[0]
    if top in CATEGORIES:
        return f"a memory file of memcurate's {top} category"
    if top in (ARCHIVE_DIR, LEGACY_ARCHIVE_DIR):
        return "in memcurate's archive (archived memories and MEMORY.md entries)"
    if top == rel and (top == ROOT_LOCK_NAME or is_temp_name(top)):
        return "memcurate's lock or temporary file"
    return None


def _sections_reason(
    tool: str, tool_input: dict, target: str, data: str, review: bool, folder: str
) -> str | None:
    """Why the call would change memcurate's sections of MEMORY.md, None when it leaves them as they are
    (or cannot be applied: Claude Code's tool fails it, and review mode says so when staging)."""
    from memcurate.curator.candidates.tool_edits import EditFailed, after
    from memcurate.curator.memory.memory_md.format import MemoryMdError, read_text, section_spans

    try:
        base = read_text(target)
        if review:  # an edit applies to what is staged for the file, when something is
            from memcurate.curator.candidates.claude_writes import pending_for

            # a record that checks out, never a forged one
            staged = pending_for(data, target, memory_dir=folder)
            base = staged["text"] if staged else base
        before = section_spans(base or "")
    except (MemoryMdError, OSError):
        return None  # damaged already: memcurate itself will not rewrite it until it is fixed
    try:
        new = after(tool, tool_input, base)
    except EditFailed:
        return None
    try:
        changed = section_spans(new) != before
    except MemoryMdError as e:
        return (
            f"This change would break memcurate's markers in MEMORY.md ({e}): leave every "
            "`<!-- memcurate:... -->` line and the lines between a begin and an end marker as they are."
        )
    if changed:
        return (
            "This change would alter memcurate's sections of MEMORY.md (from a `<!-- memcurate:begin ... -->` "
            "line to its `<!-- memcurate:end ... -->` line), which only memcurate writes: change only the "
            "lines outside them."
        )
    return None


def _settings_reason(tool: str, tool_input: dict, target: str) -> str | None:
    """Why the call would switch memcurate's hooks in a Claude Code settings file off or change them (its
    entries, disableAllHooks), None when it leaves them as they are (or Claude Code's tool fails it)."""
    from memcurate.curator.candidates.tool_edits import EditFailed, after

    try:
        with open(target, "rb") as f:
            base: str | None = f.read().decode("utf-8")
    except FileNotFoundError:
        base = None
    try:
        new = after(tool, tool_input, base)
    except EditFailed:
        return None
    before, now = _hook_switches(base) or ([], False), _hook_switches(new)
    if now is None:  # Claude Code would skip the file, and memcurate's hooks in it
        changed = bool(before[0])
    else:
        changed = now[0] != before[0] or (now[1] and not before[1])
    if not changed:
        return None
    return (
        f"This change to {target} would switch memcurate's hooks off or change them (its entries under "
        '"hooks", or disableAllHooks): they are the person\'s to change, with `memcurate install` or '
        "`memcurate uninstall`. Ask the person; change only the other settings."
    )


def _hook_switches(text: str | None) -> tuple[list[str], bool] | None:
    """What in a settings text keeps memcurate's hooks running: its entries (event, matcher, command, type,
    timeout) and whether disableAllHooks is on. None when the text is no JSON object (Claude Code skips it)."""
    from memcurate.curator.hook_entries import parse_command

    try:
        doc = fastjson.loads(text) if text is not None else {}
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    found = []
    hooks = doc.get("hooks")
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            entries = group.get("hooks") if isinstance(group, dict) else None
            for hook in entries if isinstance(entries, list) else ():
                if isinstance(hook, dict) and parse_command(hook.get("command")):
                    found.append(
                        fastjson.dumps(
                            [
                                event,
                                group.get("matcher"),
                                hook.get("command"),
                                hook.get("type"),
                                hook.get("timeout"),
                            ]
                        )
                    )
    return sorted(found), bool(doc.get("disableAllHooks"))


def _stage(
    payload: dict, tool: str, tool_input: dict, target: str, auto: str, data: str, cfg: dict
) -> str:
    from memcurate.curator.candidates import claude_writes

    session = payload.get("session_id") if isinstance(payload.get("session_id"), str) else ""
    try:
        record = claude_writes.stage(
            data,
            tool=tool,
            tool_input=tool_input,
            path=target,
            folder=auto,
            session_id=session,
            max_bytes=cfg["hooks"]["review_max_bytes"],
        )
    except claude_writes.WriteRefused as e:
        return (
            f"This memory write was not made and not queued for review: {e}. Memory writes here wait for "
            "the person's approval."
        )
    wid = claude_writes.PREFIX + record["id"]
    return (
        f"Not written yet: this memory write is queued for the person's approval as {wid} (memcurate "
        f"reviews Claude's memory writes; `memcurate approve {wid}` saves exactly this change). Do not retry "
        "it or write it anywhere else; go on with the task."
    )
