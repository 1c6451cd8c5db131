"""Regular expressions compiled on first use, and `re` imported on first use.

`re.compile` runs in Python and costs the hook ~0.1 ms per small pattern; most
patterns are needed only when their input shows up (an ANSI escape, a
secret's prefix, a keyword's anchor), so the hook compiles only those.
Importing `re` itself (with enum, functools, collections) costs about a third of
an interpreter start: a hook call whose new text needs no pattern never pays it.

A pattern given `needles` (substrings, one of which is in every text it can match) tries them first: a
text holding none of them cannot match, so it is answered without the pattern being compiled or run.
The failure parsers match dozens of patterns line by line where few can ever match; each needle must be
a necessary condition of its pattern (tests/engine/test_pattern_gates.py holds them to the samples).

What a compile makes is the same in every process of one Python, and most of a hook's compiles are of the
same few dozen patterns, call after call (a transcript's first pass: ~30 of them, with `re`'s import a
fifth of the pass). So the hook keeps what it compiled beside this module's own bytecode
(`__pycache__/lazyre.<python>.patterns`, written as Python writes .pyc files: not when told not to, never
in the data dir), and a pattern found there is made from its stored code by the `_sre` module `re` itself
hands it to, without `re`. An entry is stored only once the same Python, given it, makes exactly the pattern
`re.compile` made (same code); a store of another Python, or one that does not load, is not used.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the hook milliseconds at import
    import re
    from typing import Any

# re's flags, as the patterns below are given them without importing re (re.I, re.M and re.S)
IGNORECASE = 2
MULTILINE = 8
DOTALL = 16

STORE_FORMAT = 1
MAX_STORED = 1000  # patterns; a store past it starts over (patterns edited away stay otherwise)
_stored: dict | None = None  # (pattern, flags) -> its marshalled entry, loaded at the first compile
_compiled_here: list = []  # (pattern, flags) compiled by `re` in this process: what `keep` stores


def _no_match(text: Any, *a) -> None:
    return None


class LazyRegex:
    """A pattern, of text or of bytes, compiled the first time it is used; with `needles`, the first time
    a text holds one of them (see above)."""

    __slots__ = ("pattern", "flags", "needles", "_compiled")

    def __init__(self, pattern: str | bytes, flags: int = 0, needles: tuple = ()) -> None:
        if needles and flags & IGNORECASE:
            raise ValueError("needles are matched case-sensitively")
        self.pattern = pattern
        self.flags = flags
        self.needles = needles
        self._compiled: re.Pattern[Any] | None = None

    def could_match(self, text: Any) -> bool:
        """False when `text` holds none of the needles, so the pattern cannot match anywhere in it."""
        for needle in self.needles:  # a loop, not any(): no generator per line
            if needle in text:
                return True
        return not self.needles

    @property
    def rx(self) -> re.Pattern[Any]:
        if self._compiled is None:
            self._compiled = _compile(self.pattern, self.flags)
        return self._compiled

    # (`self.needles and` first: a pattern without needles pays one attribute test)
    def search(self, text: Any, *a):
        if self.needles and not self.could_match(text):
            return None
        return self.rx.search(text, *a)

    def match(self, text: Any, *a):
        if self.needles and not self.could_match(text):
            return None
        return self.rx.match(text, *a)

    def matcher(self, text: Any):
        """`match` for the lines of `text`: the needles looked for once in the whole text, then the
        compiled pattern's own match per line (a parser matches every line of an output)."""
        if self.needles and not self.could_match(text):
            return _no_match
        return self.rx.match

    def finditer(self, text: Any, *a):
        if self.needles and not self.could_match(text):
            return iter(())
        return self.rx.finditer(text, *a)

    def sub(self, repl, text: str, count: int = 0) -> str:
        if self.needles and not self.could_match(text):
            return text
        return self.rx.sub(repl, text, count)


# -- the store of compiled patterns ------------------------------------------------------------------


def store_path() -> str | None:
    """Where this module's bytecode is cached, the store beside it; None when it has no cache (frozen, zip)."""
    cached = globals().get("__cached__")
    if not isinstance(cached, str) or not cached.endswith(".pyc"):
        return None
    return cached[: -len(".pyc")] + ".patterns"


def _header() -> tuple:
    """What a store must say it was made by: this format, this very Python, the code its `_sre` runs."""
    import _sre  # type: ignore[import-not-found]  # re.compile's own engine (no stub)

    return (STORE_FORMAT, sys.hexversion, sys.implementation.cache_tag, _sre.MAGIC, _sre.CODESIZE)


def _read_store(path: str | None) -> dict:
    """The entries of the store at `path`; none when it is missing, damaged or of another Python."""
    if path is None:
        return {}
    try:
        import marshal

        with open(path, "rb") as f:
            head, entries = marshal.loads(f.read())
        if head == _header() and type(entries) is dict:
            return entries
    except Exception:  # missing, unreadable, not ours: every pattern is compiled as without it
        pass
    return {}


def _compile(pattern, flags: int):
    global _stored
    if _stored is None:
        _stored = _read_store(store_path())
    entry = _stored.get((pattern, flags))
    if entry is not None:
        try:
            import _sre
            import marshal

            return _sre.compile(pattern, *marshal.loads(entry))
        except Exception:  # an entry _sre refuses: compiled as without it
            pass
    import re

    compiled = re.compile(pattern, flags)
    _compiled_here.append((pattern, flags))
    return compiled


def _entry(pattern, flags: int) -> tuple | None:
    """What `_sre.compile` takes after the pattern, as `re.compile` (3.11-3.13: re/_compiler.py) gives it;
    None unless that makes exactly the pattern `re.compile` makes here."""
    import _sre
    import re
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed = _parser.parse(pattern, flags)
    groupindex = dict(parsed.state.groupdict)
    indexgroup = [None] * parsed.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    entry = (
        int(flags | parsed.state.flags),
        [int(op) for op in _compiler._code(parsed, flags)],
        parsed.state.groups - 1,
        groupindex,
        tuple(indexgroup),
    )
    return entry if _sre.compile(pattern, *entry) == re.compile(pattern, flags) else None


def keep() -> None:
    """Add the patterns this process compiled to the store (the hook calls it at its end). Written whole and
    replaced (a reader sees the old store or the new one); two writers at once may each drop the other's new
    entries, which are compiled and kept again later. Not when Python is told to write no bytecode."""
    path = store_path()
    if not _compiled_here or path is None or sys.dont_write_bytecode:
        return
    import os

    folder = os.path.dirname(path)
    # an install no one may write to (a system package): no store, and no work made for it every call
    if not os.access(folder if os.path.isdir(folder) else os.path.dirname(folder), os.W_OK):
        return
    import marshal

    entries = _read_store(path)  # as it is now: another process may have added to it
    if len(entries) + len(_compiled_here) > MAX_STORED:
        entries = {}
    added = False
    # Each was compiled by `re` here: missing from the store, or stored as something _sre refused (replaced).
    for key in _compiled_here:
        try:
            entry = _entry(*key)
        except Exception:  # a Python whose `re` differs there: that pattern is compiled each time
            continue
        blob = None if entry is None else marshal.dumps(entry)
        if blob is not None and entries.get(key) != blob:
            entries[key] = blob
            added = True
    _compiled_here.clear()
    if added:
        from memcurate.curator.util.atomic import write_bytes

        write_bytes(path, marshal.dumps((_header(), entries)), durable=False)
