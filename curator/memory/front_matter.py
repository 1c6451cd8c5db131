"""A memory file's front matter read without YAML: the fences, and the plain fields memcurate writes.

The hooks cannot import YAML (~20 ms a call; docs/design.md §2), and neither can they afford the full format
module (memfile.py, which builds MemoryDoc dataclasses). The recall hook reads the memories it gives
with `light_fields`; everything else parses with memfile.parse, which uses `split_front_matter` too.
"""

from __future__ import annotations

import json
import re

from memcurate.curator.errors import DamagedError

MAX_FILE_BYTES = 1 << 20  # a memory file is a page of text; a bigger one is reported, not read
_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


class MemoryFormatError(DamagedError, ValueError):
    """A memory file that cannot be parsed. The message says what and where."""


def split_front_matter(text: str) -> tuple[str, str]:
    """(front matter text, body) of a memory file; MemoryFormatError when the fences are missing."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---"):
        raise MemoryFormatError("line 1: expected '---' opening the front matter")
    lines = text.split("\n")
    if lines[0].strip() != "---":
        raise MemoryFormatError("line 1: expected '---' alone opening the front matter")
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :])
    raise MemoryFormatError("front matter is not closed by a '---' line")


_YAML_WORDS = frozenset("yes no on off true false null ~ y n".split())


def light_fields(text: str) -> tuple[dict[str, str], str]:
    """(top-level scalar fields, body) without YAML, for the hooks that must not import it (~20 ms).

    Reads what memfile.render writes: a plain scalar that starts with a letter (or a time stamp) or a JSON
    string; a single-quoted string as a hand edit may leave it. A field in any other form (a number,
    a YAML word such as `yes`, a block scalar) is left out, never guessed; callers treat a missing
    field as a file they cannot use. MemoryFormatError when the front matter fences are missing."""
    fm, body = split_front_matter(text)
    out: dict[str, str] = {}
    meta_type = None
    in_metadata = False
    for line in fm.split("\n"):
        if in_metadata and line.startswith((" ", "\t")):
            # Claude Code 2.1 reads metadata.type first: so do we
            if line.strip().startswith("type:"):
                meta_type = line.strip()[len("type:") :].strip()
            continue
        in_metadata = line.rstrip() == "metadata:"
        key, sep, value = line.partition(":")
        if not sep or not key or key != key.strip() or not key.isidentifier():
            continue
        value = value.strip()
        if value.startswith('"'):
            try:
                v = json.loads(value)
            except ValueError:
                continue
            if isinstance(v, str):
                out[key] = v
        elif value.startswith("'") and value.endswith("'") and len(value) >= 2:
            out[key] = value[1:-1].replace("''", "'")
        elif _STAMP.match(value) or (
            value[:1].isalpha()
            and value.lower() not in _YAML_WORDS
            and ": " not in value
            and " #" not in value
        ):
            out[key] = value
    if meta_type is not None:
        fields, _ = light_fields(f"---\ntype: {meta_type}\n---\n")
        if "type" in fields:
            out["type"] = fields["type"]
        else:
            # a metadata.type not read plainly: no type rather than the top-level one
            out.pop("type", None)
    return out, body.strip("\n")
