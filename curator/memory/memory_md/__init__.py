"""MEMORY.md: the one package that reads and writes it (docs/design.md §7).

memcurate owns only its sections, each between a begin and an end marker
(inclusive), and never changes a byte outside them:

    <!-- memcurate:begin section=decision budget=40 -->
    ## Key Decisions
    - [Use JWT for API authentication](decision/use-jwt-for-api-auth.md) — Stateless JWT chosen over server sessions
    <!-- memcurate:end section=decision -->

Everything else in the file is Claude's own auto memory and stays as it is:
line endings, trailing whitespace, a missing final newline, a byte-order mark.
The only bytes memcurate ever adds outside its markers are the line break
(when the file's last line has none) and the blank line that separate a
section it appends at the end of the file; it never removes any, except a
line of Claude's that a person approved dropping or redacting (`plan`'s
drop_line and replace_line changes: that line only, in the same write).

Its modules, each with its part of the contract: entry.py (an entry line's grammar), format.py (markers, entries
and their escaping, `parse`, rendering a section), planning.py (budgets and
limits: `plan`), archive.py (the archive files), loaded.py (the one model of what Claude Code loads:
`loaded`, checked against a named Claude Code version), loading.py (the file as Claude Code loads it,
line by line: `load_view`), writing.py (`apply`,
`read_current`, `usage`: the files read and written).
"""

from __future__ import annotations

from memcurate.curator.util.lazy import lazy_names

# Names resolved on first use (PEP 562): the recall hook reads entry lines with entry.py alone, without
# loading the planning and writing modules (and the staging they import).
_HOMES = {
    "read_archive": "archive",
    "LoadView": "loading",
    "load_view": "loading",
    "Loaded": "loaded",
    "IndexLine": "format",
    "MemoryMdError": "format",
    "parse": "format",
    "render_section": "format",
    "measure": "planning",
    "plan": "planning",
    "apply": "writing",
    "budgets_from": "writing",
    "limits_from": "loaded",
    "memory_md_path": "writing",
    "read_current": "writing",
    "usage": "writing",
    "Budgets": "writing",
    "SectionUse": "writing",
    "LoadTotals": "writing",
}
__all__ = sorted(_HOMES)

__getattr__ = lazy_names(__name__, _HOMES)
