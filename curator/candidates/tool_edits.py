"""Claude Code's Write, Edit and MultiEdit, applied to a text the way the tools apply them.

The write guard needs the file as it would be after Claude's tool call (to see
whether MEMORY.md's memcurate sections would change, and to stage the write for
review). The rules are the tools' own: an Edit's old_string must be found, once
unless replace_all; an empty old_string creates a file that does not exist (or
is empty); old_string equal to new_string changes nothing and is refused;
MultiEdit applies its edits in order and fails whole when one fails.
"""

from __future__ import annotations

from memcurate.curator.errors import Refusal

TOOLS = ("Write", "Edit", "MultiEdit")


class EditFailed(Refusal, ValueError):
    """The tool call would fail in Claude Code (the message says why, as a reason Claude can act on)."""


def file_path(tool_input: object) -> str | None:
    """The target path of a tool call, None when it has no usable one (missing, not a string, a NUL byte)."""
    if not isinstance(tool_input, dict):
        return None
    path = tool_input.get("file_path")
    if not isinstance(path, str) or not path or "\0" in path:
        return None
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return path


def after(tool: str, tool_input: dict, current: str | None) -> str:
    """The file's text after the call, from `current` (None: the file does not exist). EditFailed when
    Claude Code's tool would refuse the call."""
    if tool == "Write":
        content = tool_input.get("content")
        if not isinstance(content, str):
            raise EditFailed("the Write has no content string")
        return content
    if tool == "Edit":
        return _edit(current, tool_input)
    if tool == "MultiEdit":
        edits = tool_input.get("edits")
        if not isinstance(edits, list) or not edits:
            raise EditFailed("the MultiEdit has no edits")
        text = current
        for i, edit in enumerate(edits, 1):
            try:
                text = _edit(text, edit)
            except EditFailed as e:
                raise EditFailed(f"edit {i} of {len(edits)}: {e}") from None
        return text if text is not None else ""  # (edits is not empty: each returned text)
    raise EditFailed(f"{tool} is not a file-writing tool")


def _edit(current: str | None, edit: object) -> str:
    if not isinstance(edit, dict):
        raise EditFailed("an edit is not an object")
    old, new = edit.get("old_string"), edit.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        raise EditFailed("old_string and new_string must be strings")
    if old == new:
        raise EditFailed("old_string and new_string are the same: no change to make")
    if old == "":
        if current:
            raise EditFailed("an empty old_string creates a file, and this file already exists")
        return new
    if current is None:
        raise EditFailed("the file does not exist")
    count = current.count(old)
    if count == 0:
        raise EditFailed("old_string was not found in the file")
    if count > 1 and edit.get("replace_all") is not True:
        raise EditFailed(f"old_string is found {count} times; give more context or set replace_all")
    return (
        current.replace(old, new)
        if edit.get("replace_all") is True
        else current.replace(old, new, 1)
    )
