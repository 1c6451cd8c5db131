"""PreToolUse on Write, Edit and MultiEdit: the write guard.

memcurate's own files are never Claude's to write: the memory files of the six
categories and the archive under the memory root, memcurate's lock and temp
files there, the rules folder `<project>/.claude/rules/memcurate/`, the whole
memory root when `memory.root` puts it somewhere Claude Code does not keep its
auto memory, and the memcurate sections of MEMORY.md (a change that only touches
Claude's own lines passes). In review mode (`memcurate hook --review-auto-memory`
or `hooks.review_auto_memory`) every other write of Claude's into its
auto-memory folder is denied too, and staged for the person's approval.

The target is resolved before deciding (`~`, relative to the payload's cwd, `..`,
symlinks). A deny is Claude Code's hook JSON on stdout, exit 0; a pass prints
nothing (an "allow" would skip Claude Code's own permission prompt). Anything
else passes fast: the config cache, Claude Code's small settings files and the
path resolution, nothing more.
"""

from __future__ import annotations

import json
import os

from curator.candidates.tool_edits import TOOLS, file_path
from curator.util.atomic import is_temp_name
from curator.util.log import log_line
from curator.util.paths import ARCHIVE_DIR, ROOT_LOCK_NAME, RULES_DIR, is_inside, resolve_memory_root, resolve_target

from . import hook_config

EVENT = "PreToolUse"
MEMORY_MD = "MEMORY.md"
SAY_IT = ("To keep a fact, say it in the conversation instead: memcurate proposes it for the person's review "
          "at the end of the turn.")


def handle(payload: dict, project: str, data: str, *, env=None, session_dirs=(), review_auto_memory=False) -> int:
    tool = payload.get("tool_name")
    if tool not in TOOLS:
        return 0
    tool_input = payload.get("tool_input")
    raw = file_path(tool_input)
    if raw is None:
        log_line(data, EVENT, f"{tool} without a usable tool_input.file_path: passed (Claude Code's tool fails it)")
        return 0
    cwd = payload.get("cwd")
    target = resolve_target(raw, cwd if isinstance(cwd, str) and os.path.isabs(cwd) else os.getcwd())
    cfg = hook_config.load(project, data, EVENT, f"{tool} of {target} passed unchecked")
    if cfg is None:
        return 0
    env = os.environ if env is None else env
    reason = decide(payload, tool, tool_input, target, project, data, cfg, env,
                    review_auto_memory or cfg["hooks"]["review_auto_memory"])
    if reason:
        log_line(data, EVENT, f"{tool} of {target} denied: {reason[:200]}")
        deny(reason)
    return 0


def deny(reason: str) -> None:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": EVENT, "permissionDecision": "deny",
                                             "permissionDecisionReason": reason}}))


def decide(payload: dict, tool: str, tool_input: dict, target: str, project: str, data: str, cfg: dict, env,
           review: bool) -> str | None:
    """The reason to deny the call, None to let it pass."""
    if is_inside(target, os.path.realpath(os.path.join(project, RULES_DIR))):
        return (f"{target} is in memcurate's rules folder ({RULES_DIR}), which only memcurate writes, after the "
                f"person approves a rule. Never write these files. {SAY_IT}")
    location = resolve_memory_root(project, cfg, data, env)
    root = os.path.realpath(location["path"])
    auto = root if location["source"] != "config" else _auto_folder(project, cfg, data, env)
    if is_inside(target, root):
        own = _own_file(target, root, auto)
        if own:
            return (f"{target} is {own}, managed by memcurate: memories are saved there only after the person "
                    f"reviews them. Never write these files. {SAY_IT}")
    if target == os.path.join(root, MEMORY_MD):
        reason = _sections_reason(tool, tool_input, target, data, review)
        if reason:
            return f"{reason} {SAY_IT}"
    if review and is_inside(target, auto) and target != auto:
        return _stage(payload, tool, tool_input, target, auto, data, cfg)
    return None


def _auto_folder(project: str, cfg: dict, data: str, env) -> str:
    """Claude Code's own auto-memory folder, when memory.root puts memcurate's memories elsewhere."""
    auto_cfg = {**cfg, "memory": {**cfg["memory"], "root": "auto"}}
    return os.path.realpath(resolve_memory_root(project, auto_cfg, data, env)["path"])


def _own_file(target: str, root: str, auto: str) -> str | None:
    """What of memcurate's `target` is under the memory root, None when it is not memcurate's."""
    from curator.categories import CATEGORIES

    rel = os.path.relpath(target, root)
    top = rel.split(os.sep, 1)[0]
    if top in CATEGORIES:
        return f"a memory file of memcurate's {top} category"
    if top == ARCHIVE_DIR:
        return "in memcurate's archive of MEMORY.md entries"
    if top == rel and (top == ROOT_LOCK_NAME or is_temp_name(top)):
        return "memcurate's lock or temporary file"
    if root != auto:
        return "in memcurate's memory root (memory.root in memcurate's config)"
    return None


def _sections_reason(tool: str, tool_input: dict, target: str, data: str, review: bool) -> str | None:
    """Why the call would change memcurate's sections of MEMORY.md, None when it leaves them as they are
    (or cannot be applied: Claude Code's tool fails it, and review mode says so when staging)."""
    from curator.candidates.tool_edits import EditFailed, after
    from curator.memory.memory_md.format import MemoryMdError, read_text, section_spans

    try:
        base = read_text(target)
        if review:  # an edit applies to what is staged for the file, when something is
            from curator.candidates.claude_writes import pending_for

            staged = pending_for(data, target)
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
        return (f"This change would break memcurate's markers in MEMORY.md ({e}): leave every "
                "`<!-- memcurate:... -->` line and the lines between a begin and an end marker as they are.")
    if changed:
        return ("This change would alter memcurate's sections of MEMORY.md (from a `<!-- memcurate:begin ... -->` "
                "line to its `<!-- memcurate:end ... -->` line), which only memcurate writes: change only the "
                "lines outside them.")
    return None


def _stage(payload: dict, tool: str, tool_input: dict, target: str, auto: str, data: str, cfg: dict) -> str:
    from curator.candidates import claude_writes

    session = payload.get("session_id") if isinstance(payload.get("session_id"), str) else ""
    try:
        record = claude_writes.stage(data, tool=tool, tool_input=tool_input, path=target,
                                     folder=auto, session_id=session,
                                     max_bytes=cfg["hooks"]["review_max_bytes"])
    except claude_writes.Refused as e:
        return (f"This memory write was not made and not queued for review: {e}. Memory writes here wait for "
                "the person's approval.")
    wid = claude_writes.PREFIX + record["id"]
    return (f"Not written yet: this memory write is queued for the person's approval as {wid} (memcurate "
            f"reviews Claude's memory writes; `memcurate approve {wid}` saves exactly this change). Do not retry "
            "it or write it anywhere else; go on with the task.")
