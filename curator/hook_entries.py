"""The hooks memcurate asks Claude Code to run: the one table behind `memcurate install` and the
plugin's hooks/hooks.json (`python -m memcurate.curator.hook_entries` prints that file; a test keeps them equal).

Also how to tell memcurate's own entries in a settings file from anyone else's: by their command,
whatever path it carries (`<python> -P -c '<RUN_CLI>' hook …` as install writes it, `<…>/memcurate hook …` or
`<python> -m memcurate.curator.cli hook …` as older installs and the plugin do).
"""

from __future__ import annotations

import json
import os
import shlex

REVIEW_FLAG = "--review-auto-memory"
_CLI_MODULES = ("memcurate.curator.cli", "curator.cli")
# What `memcurate install` has the interpreter run: the CLI's main, as the `memcurate` console script does,
# without pip's wrapper around it (which imports `re` first: a third of an interpreter start, paid by every
# hook call). The arguments after it are the CLI's (`hook …`). With -P the hook's cwd (the project, in
# Claude's reach) is not put on sys.path, so no file there can stand in for memcurate's modules.
RUN_CLI = "from memcurate.curator.cli import main; main()"
PLUGIN_COMMAND = "memcurate hook"  # the plugin expects memcurate on the PATH
PLUGIN_DESCRIPTION = (
    "memcurate: capture memory candidates at the end of each turn, subagent, compaction and "
    "session; guard and review writes into memory; recall saved memories for a prompt"
)

# (event, matcher or None, timeout in seconds). The capture events read a transcript: up to 30 s.
# The others run before a tool or a prompt, where Claude Code waits: 10 s. PostToolUse and
# PostToolUseFailure fire on every Bash call (failure capture for rule graduation): a call that
# shows no failure returns at once, before the project is even looked up.
# The write guard matches Write and Edit only: MultiEdit is no longer a tool in Claude Code 2.1, so a matcher
# naming it is dead (its calls in older transcripts are still read: curator/candidates/tool_edits.py).
# SessionEnd's 30 s holds for `memcurate install` only: a plugin's SessionEnd hooks share Claude Code's 1.5 s
# budget whatever they declare, which hooks/capture.py keeps to (a long tail is triaged in the background).
ENTRIES: tuple[tuple[str, str | None, int], ...] = (
    ("Stop", None, 30),
    ("SubagentStop", None, 30),
    ("PreCompact", None, 30),
    ("SessionEnd", None, 30),
    ("PreToolUse", "Write|Edit", 10),
    ("UserPromptSubmit", None, 10),
    ("PostToolUse", "Bash", 10),
    ("PostToolUseFailure", "Bash", 10),
)
EVENTS = tuple(event for event, _m, _t in ENTRIES)


def groups(command: str) -> dict[str, list[dict]]:
    """Claude Code's `hooks` setting for memcurate: per event, one matcher group running `command`."""
    out: dict[str, list[dict]] = {}
    for event, matcher, timeout in ENTRIES:
        group: dict[str, object] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": command, "timeout": timeout}]
        out[event] = [group]
    return out


def plugin_hooks() -> dict:
    """The plugin's hooks/hooks.json document."""
    return {"description": PLUGIN_DESCRIPTION, "hooks": groups(PLUGIN_COMMAND)}


def render_plugin_hooks() -> str:
    doc = plugin_hooks()
    lines = [f'  "{event}": {json.dumps(value)}' for event, value in doc["hooks"].items()]
    return (
        '{\n  "description": '
        + json.dumps(doc["description"])
        + ',\n  "hooks": {\n  '
        + ",\n  ".join(lines)
        + "\n  }\n}\n"
    )


def interpreter_entry(python: str) -> list[str]:
    """The argv that runs memcurate's CLI with the interpreter at `python` (see RUN_CLI)."""
    return [python, "-P", "-c", RUN_CLI]


def parse_command(command) -> dict | None:
    """What a hook command of memcurate's says ({"executable", "review_auto_memory", "outdated"}), None
    when the command is not memcurate's: an interpreter running RUN_CLI (interpreter_entry), an executable
    named `memcurate`, or an interpreter with `-m memcurate.curator.cli` (or `-m curator.cli`, as installs
    before the package was named `memcurate` wrote it: `outdated`, it fails now, and is found so it can be
    replaced), then `hook`."""
    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) >= 5 and words[1:4] == interpreter_entry("")[1:] and words[4] == "hook":
        rest = words[5:]
    elif len(words) >= 2 and os.path.basename(words[0]) == "memcurate" and words[1] == "hook":
        rest = words[2:]
    elif len(words) >= 4 and words[1] == "-m" and words[2] in _CLI_MODULES and words[3] == "hook":
        rest = words[4:]
    else:
        return None
    outdated = len(words) >= 3 and words[1] == "-m" and words[2] != _CLI_MODULES[0]
    return {"executable": words[0], "review_auto_memory": REVIEW_FLAG in rest, "outdated": outdated}


def command_for(entry: list[str], review_auto_memory: bool) -> str:
    """The shell command that runs `memcurate hook` through `entry` (argv of the entry point)."""
    words = [*entry, "hook"] + ([REVIEW_FLAG] if review_auto_memory else [])
    return shlex.join(words)


if __name__ == "__main__":
    import sys

    sys.stdout.write(render_plugin_hooks())
