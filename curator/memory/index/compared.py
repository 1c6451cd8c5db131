"""The words a check compares of each memory file, kept between checks by the hash of the file's bytes:
at 10,000 memories, parsing every file and finding its words was two thirds of a check's work, and a
check finds most files as the last one left them.

The rows are the duplicate detector's (hygiene/duplicates.py says what the words are); this module
only keeps them. A row is a tuple of texts, each a set of words joined by NUL (a word holds none).
They live in the index's database, in the data dir, which Claude can write: what is read back only
chooses which memories are compared, and the detector checks every pair it reports against the
files themselves (a row that disagrees with its file drops the whole table).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

COLUMNS = ("words", "subject", "fact_key", "fact_title", "names")
_VERSION_KEY = "compared"  # meta: the version of the words the rows hold
MAX_ROW = 1 << 16  # characters: a row larger than any memory's words is not read


def read(conn: sqlite3.Connection, version: str, limit: int) -> dict[str, tuple[str, ...]]:
    """hash -> its row; none when the rows are of another version, or more than `limit` of them."""
    found = conn.execute("SELECT value FROM meta WHERE key = ?", (_VERSION_KEY,)).fetchone()
    if found is None or found[0] != version:
        return {}
    total = " + ".join(f"length({c})" for c in COLUMNS)
    rows = conn.execute(
        f"SELECT hash, {', '.join(COLUMNS)} FROM compared WHERE {total} <= ? LIMIT ?",
        (MAX_ROW, limit + 1),
    ).fetchall()
    if len(rows) > limit:
        return {}
    return {r[0]: tuple(r[1:]) for r in rows if all(isinstance(x, str) for x in r)}


def write(
    conn: sqlite3.Connection,
    version: str,
    rows: Iterable[tuple[str, tuple[str, ...]]],
    live: set[str],
) -> None:
    """Add `rows` (hash, its row) but for a hash kept already, and drop every row whose hash is not in
    `live` (and a hash's second row: two checks at once both wrote it); all of them when they were of
    another version. The caller holds a write transaction."""
    found = conn.execute("SELECT value FROM meta WHERE key = ?", (_VERSION_KEY,)).fetchone()
    held: set[str] = set()
    if found is None or found[0] != version:
        conn.execute("DELETE FROM compared")
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (_VERSION_KEY, version)
        )
    else:
        gone = []
        for n, h in conn.execute("SELECT rowid, hash FROM compared").fetchall():
            if h not in live or h in held:
                gone.append((n,))
            held.add(h)
        conn.executemany("DELETE FROM compared WHERE rowid = ?", gone)
    conn.executemany(
        f"INSERT INTO compared(hash, {', '.join(COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?)",
        [(h, *row) for h, row in rows if h not in held],
    )


def forget(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM compared")
