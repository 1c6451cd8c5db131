"""MEMORY.md: the one package that reads and writes it (DESIGN §7).

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
section it appends at the end of the file; it never removes any.

Its modules, each with its part of the contract: format.py (markers, entries
and their escaping, `parse`, rendering a section), planning.py (budgets and
limits: `plan`), archive.py (the archive files), writing.py (`apply`,
`read_current`, `usage`: the files read and written).
"""

from curator.memory.memory_md.archive import read_archive
from curator.memory.memory_md.format import IndexLine, MemoryMdError, parse, render_section
from curator.memory.memory_md.planning import measure, plan
from curator.memory.memory_md.writing import apply, budgets_from, limits_from, memory_md_path, read_current, usage

__all__ = ["IndexLine", "MemoryMdError", "apply", "budgets_from", "limits_from", "measure", "memory_md_path",
           "parse", "plan", "read_archive", "read_current", "render_section", "usage"]
