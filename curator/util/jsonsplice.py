"""Edit a JSON text in place: only the values that change are rewritten, every other byte stays.

A settings file is someone else's (Claude Code's, the person's): their spacing, their key order,
the way they wrote a number or an escape all survive an edit that does not touch that value.
`splice(text, new)` compares the document the text holds with `new` and rewrites only where they
differ: a changed member of an object or item of an array is replaced, a removed one is cut with
its comma, an added one goes after its siblings in their own layout. New text is laid out like
the file (its indentation unit, its separators).
"""

from __future__ import annotations

import difflib
import json
import re

from memcurate.curator.errors import DamagedError

_WS = " \t\n\r"  # JSON's white space
_decoder = json.JSONDecoder()


class DuplicateKey(DamagedError, ValueError):
    """An object to edit holds a key twice: which one counts is a reader's guess, so it is not edited."""


class _Node:
    """A value of the text: its span, and for a container its items, each (start, end, key, node):
    an object member spans from its key to the end of its value (key None in an array)."""

    __slots__ = ("kind", "start", "end", "value", "items")

    def __init__(self, kind: str, start: int, end: int, value, items) -> None:
        self.kind, self.start, self.end, self.value, self.items = kind, start, end, value, items


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _parse(text: str, i: int) -> _Node:
    """The value starting at `i` (white space skipped). The text is valid JSON (checked before)."""
    i = _skip(text, i)
    c = text[i]
    if c not in "{[":
        value, end = _decoder.raw_decode(text, i)
        return _Node("scalar", i, end, value, None)
    close = "}" if c == "{" else "]"
    items, j = [], _skip(text, i + 1)
    while text[j] != close:
        key = None
        start = j
        if c == "{":
            key, j = json.decoder.scanstring(text, j + 1)  # type: ignore[attr-defined]  # public, untyped
            j = _skip(text, j) + 1  # past the colon
        node = _parse(text, j)
        items.append((start, node.end, key, node))
        j = _skip(text, node.end)
        if text[j] == ",":
            j = _skip(text, j + 1)
    if c == "{":
        return _Node("object", i, j + 1, {k: n.value for _s, _e, k, n in items}, items)
    return _Node("array", i, j + 1, [n.value for *_x, n in items], items)


def indent_unit(text: str) -> str | None:
    """The file's indentation step ("  ", "\\t", ...); None for a file on one line."""
    if "\n" not in text.strip():
        return None
    m = re.search(r"^([ \t]+)\S", text, re.M)  # the first indented line is one level deep
    return m.group(1) if m else "  "


class _Layout:
    def __init__(self, text: str) -> None:
        self.text = text
        self.unit = indent_unit(text)
        self.newline = "\r\n" if "\r\n" in text else "\n"

    def line_indent(self, pos: int) -> str:
        """The white space that opens the line holding `pos`."""
        start = self.text.rfind("\n", 0, pos) + 1
        line = self.text[start:pos]
        return line[: len(line) - len(line.lstrip(" \t"))]

    def render(self, value, indent: str) -> str:
        """`value` as JSON, its inner lines indented from `indent` (the indentation of its first line)."""
        if self.unit is None:
            return json.dumps(value, ensure_ascii=False)
        return json.dumps(value, ensure_ascii=False, indent=self.unit).replace(
            "\n", self.newline + indent
        )

    def separator(self, node: _Node) -> str:
        """What the file puts between two items of `node` (a comma and its white space)."""
        if len(node.items) > 1:
            return self.text[node.items[-2][1] : node.items[-1][0]]
        gap = self.text[node.start + 1 : node.items[0][0]]
        return "," + gap if "\n" in gap else ", "


def splice(text: str, new) -> str:
    """`text` (valid JSON) edited so that it holds `new`, rewriting only the values that differ.
    DuplicateKey when an object that changes holds a key twice."""
    edits: list[tuple[int, int, str]] = []
    _edit(_Layout(text), _parse(text, 0), new, edits)
    out, last = [], len(text)
    for start, end, repl in sorted(edits, reverse=True):
        if end > last:
            raise AssertionError("overlapping edits")  # a bug: never a file written half right
        out += [text[end:last], repl]
        last = start
    out.append(text[:last])
    result = "".join(reversed(out))
    if json.loads(result) != new:
        raise AssertionError("spliced text does not hold the new document")
    return result


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


def _rewrite(layout: _Layout, node: _Node, new, edits: list) -> None:
    edits.append((node.start, node.end, layout.render(new, layout.line_indent(node.start))))


def _edit(layout: _Layout, node: _Node, new, edits: list) -> None:
    if _same(node.value, new):
        return
    if node.kind == "object" and isinstance(new, dict):
        _edit_object(layout, node, new, edits)
    elif node.kind == "array" and isinstance(new, list):
        _edit_array(layout, node, new, edits)
    else:
        _rewrite(layout, node, new, edits)


def _edit_object(layout: _Layout, node: _Node, new: dict, edits: list) -> None:
    keys = [k for _s, _e, k, _n in node.items]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise DuplicateKey(f"the key {dup!r} appears twice in one object")
    kept = [i for i, k in enumerate(keys) if k in new]
    if not kept:
        return _rewrite(layout, node, new, edits)
    for i in kept:
        _edit(layout, node.items[i][3], new[keys[i]], edits)
    _cut(node, [i for i, k in enumerate(keys) if k not in new], kept, edits)
    added = [(k, v) for k, v in new.items() if k not in set(keys)]
    _append(layout, node, kept, added, edits)


def _edit_array(layout: _Layout, node: _Node, new: list, edits: list) -> None:
    def canon(values):
        return [json.dumps(v, sort_keys=True) for v in values]

    ops = difflib.SequenceMatcher(None, canon(node.value), canon(new), autojunk=False).get_opcodes()
    gone: list[int] = []
    changed: list[tuple[int, object]] = []
    added: list[object] = []
    for op, i1, i2, j1, j2 in ops:
        if op == "replace" and i2 - i1 == j2 - j1:
            changed += [(i1 + k, new[j1 + k]) for k in range(i2 - i1)]
        elif op != "equal":
            gone += range(i1, i2)
            if j2 > j1:
                if i2 < len(node.items):  # items inserted before others: settings edits only append
                    return _rewrite(layout, node, new, edits)
                added += new[j1:j2]
    kept = [i for i in range(len(node.items)) if i not in set(gone)]
    if not kept:
        return _rewrite(layout, node, new, edits)
    for i, value in changed:
        _edit(layout, node.items[i][3], value, edits)
    _cut(node, gone, kept, edits)
    _append(layout, node, kept, [(None, v) for v in added], edits)


def _cut(node: _Node, gone: list, kept: list, edits: list) -> None:
    """Remove the items at the indexes `gone` of a container (some kept), with their separators."""
    for i in gone:
        start, end = node.items[i][:2]
        if i < kept[0]:  # before every kept item: up to the next item
            edits.append((start, node.items[i + 1][0], ""))
        else:  # after a kept one: from the end of the item before it
            edits.append((node.items[i - 1][1], end, ""))


def _append(layout: _Layout, node: _Node, kept: list, added: list, edits: list) -> None:
    """Add `added` ((key or None, value) each) after the last kept item, laid out like its siblings."""
    if not added:
        return
    sep = layout.separator(node)
    last_start, last_end = node.items[kept[-1]][:2]
    indent = layout.line_indent(last_start)
    inline = "\n" not in sep  # siblings on one line: so are the new ones

    def item(key, value) -> str:
        text = json.dumps(value, ensure_ascii=False) if inline else layout.render(value, indent)
        return text if key is None else json.dumps(key, ensure_ascii=False) + ": " + text

    edits.append((last_end, last_end, "".join(sep + item(k, v) for k, v in added)))
