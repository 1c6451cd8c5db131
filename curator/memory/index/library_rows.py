"""The library's reads of the index: every file's row at once, and a full-text search over every category
and Claude's topic files. Run inside MemoryIndex's read transaction (`MemoryIndex.rows`, `.search`)."""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from memcurate.curator.memory.index.schema import WEIGHTS, fts_table


class Row(NamedTuple):
    category: str
    name: str  # the file's name in its category folder; of a Claude topic file: its path under the root
    id: str | None  # None when broken
    title: str | None
    description: str | None
    status: str | None
    created: str | None
    updated: str | None
    sources: str  # session ids, space-separated
    tags: str  # space-separated
    hash: str | None
    broken: str | None
    mtime_ns: int  # 0 when unknown (read from the files, the database busy)


_COLUMNS = (
    "category, name, id, title, description, status, created, updated, coalesce(sources, ''), "
    "coalesce(tags, ''), hash, broken, mtime_ns"
)


def rows(conn: sqlite3.Connection, categories: list[str]) -> list[Row]:
    marks = ",".join("?" * len(categories))
    return [
        *map(
            Row._make,
            conn.execute(
                f"SELECT {_COLUMNS} FROM files WHERE category IN ({marks}) ORDER BY category, name",
                categories,
            ),
        )
    ]


def search(
    conn: sqlite3.Connection, categories: list[str], match: str, limit: int, ranked: bool = True
) -> list[tuple[str, str, float]]:
    """(category, name, -bm25) of the best `limit` matches of each category, best first overall. Not
    `ranked`: the first `limit` matches, score 0 (ranking every memory holding a word that begins with one
    letter costs 3-4x the search, to order a list that says nothing yet)."""
    weights = ", ".join(str(w) for w in WEIGHTS)
    found: list[tuple[str, str, float]] = []
    for category in categories:
        fts = fts_table(category)
        score, order = (f"bm25({fts}, {weights})", "ORDER BY s ") if ranked else ("0.0", "")
        found += [
            (category, name, -score)
            for name, score in conn.execute(
                f"SELECT f.name, {score} AS s FROM {fts} JOIN files f ON f.doc = {fts}.rowid "
                f"WHERE {fts} MATCH ? {order}LIMIT ?",
                (match, limit),
            )
        ]
    found.sort(key=lambda t: (-t[2], t[0], t[1]))
    return found[:limit]


def rows_of_files(store_or_index, categories: list[str]) -> list[Row]:
    """The slow way, when the database cannot even be read: each category's files parsed into memory."""
    return _from_files(store_or_index, categories, rows)


def search_files(
    index, categories: list[str], match: str, limit: int, ranked: bool = True
) -> list[tuple[str, str, float]]:
    found = _from_files(
        index, categories, lambda conn, cats: search(conn, cats, match, limit, ranked)
    )
    found.sort(key=lambda t: (-t[2], t[0], t[1]))
    return found[:limit]


def _from_files(index, categories, read):
    from memcurate.curator.memory.index.search import files_db

    out = []
    for category in categories:
        mem = files_db(index.store, category)
        try:
            out += read(mem, [category])
        finally:
            mem.close()
    return out
