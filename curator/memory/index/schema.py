"""The database's tables, and one file's rows (a Change) added or removed.

`files` holds per memory file its stat signature, hash and indexed fields
(or why it is broken); `terms` the document frequency of each word per
category; one FTS5 table per category the memories' text, porter-stemmed;
`compared` the words a check compares of each file (compared.py).
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter

from memcurate.curator.categories import CATEGORIES, CLAUDE
from memcurate.curator.memory.index.terms import doc_terms, text_hash, words
from memcurate.curator.memory.memfile import redact_document
from memcurate.curator.util.redact import redact_text

SCHEMA_VERSION = 5  # 3: the library's fields (description, created, updated, sources, tags); Claude's topic files;
# 4: a file's row numbers never reused (a lookup since a mark: MemoryIndex.mark); 5: `compared`
INDEXED = (*CATEGORIES, CLAUDE)  # every FTS5 table
INDEX_FILE = "index.sqlite"  # in the data dir: the index of its project's memory root
WEIGHTS = (8.0, 4.0, 3.0, 1.0)  # bm25 column weights: title, description, tags, body (every search)
_TOKENIZE = "porter unicode61 remove_diacritics 2"


def fts_table(category: str) -> str:
    """The FTS5 table of a category's memories."""
    return "fts_" + re.sub(r"[^a-z0-9_]", "", category)


_FILES = [
    """CREATE TABLE IF NOT EXISTS files(
        doc INTEGER PRIMARY KEY AUTOINCREMENT, -- the rowid in fts_<category>: a file written later has a larger one
        category TEXT NOT NULL,
        name TEXT NOT NULL,            -- file name: <id>.md
        mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL, size INTEGER NOT NULL, ino INTEGER NOT NULL,
        checked_ns INTEGER NOT NULL,   -- when the signature was taken (racy when close to mtime or ctime)
        hash TEXT,                     -- sha256 of the bytes
        id TEXT, title TEXT, status TEXT, text_hash TEXT,
        description TEXT, created TEXT, updated TEXT,
        sources TEXT, tags TEXT,       -- session ids, tags: space-separated (neither holds a space)
        broken TEXT,                   -- why it is not indexed (NULL when it is)
        UNIQUE(category, name))""",
    "CREATE INDEX IF NOT EXISTS files_text ON files(category, text_hash)",
    "CREATE INDEX IF NOT EXISTS files_status ON files(category, status)",
]


def _fts_schema(category: str) -> str:
    return (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {fts_table(category)} USING fts5(title, description, "
        f"tags, body, tokenize = '{_TOKENIZE}')"
    )


_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    *_FILES,
    """CREATE TABLE IF NOT EXISTS terms(category TEXT NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL,
        PRIMARY KEY(category, term)) WITHOUT ROWID""",
    # what a check compares of a memory file, by the hash of its bytes (compared.py): read whole, never
    # looked up, so no index (a primary key doubled the cost of writing 10,000 rows)
    """CREATE TABLE IF NOT EXISTS compared(hash TEXT NOT NULL, words TEXT NOT NULL, subject TEXT NOT NULL,
        fact_key TEXT NOT NULL, fact_title TEXT NOT NULL, names TEXT NOT NULL)""",
    *(_fts_schema(c) for c in INDEXED),
]


def create(conn: sqlite3.Connection) -> None:
    for statement in _SCHEMA:
        conn.execute(statement)


class Change:
    """A file to write into the index: its parsed document, or why it is broken, or only a new signature."""

    __slots__ = ("name", "sig", "checked_ns", "hash", "doc", "broken", "restamp", "_rows")

    def __init__(self, name, sig, checked_ns, hash, doc=None, broken=None, restamp=False):
        self.name = name
        self.sig = sig
        self.checked_ns = checked_ns
        self.hash = hash
        self.doc = doc
        self.broken = broken
        self.restamp = restamp
        self._rows: tuple | None = None

    def rows(self) -> tuple:
        """(identical-text hash, the document redacted, its words) of a parsed file, worked out once: a
        save run inserts a change twice (its private copy of what it holds, then the index)."""
        if self._rows is None:
            d = self.doc
            # the words from the redacted document: a secret typed into a memory is no term either
            redacted = redact_document(d, keep_id=True)[0]
            self._rows = (text_hash(d.title, d.body), redacted, doc_terms(redacted))
        return self._rows


NO_SIG = (0, 0, 0, 0)


def insert(
    conn: sqlite3.Connection,
    category: str,
    ch: Change,
    *,
    tally: Counter[str] | None = None,
) -> None:
    """Add one file's row (and, when it parsed, its text; its words to `tally`, the transaction's
    changes to the word counts that `write_counts` writes, or none in a copy without counts). The
    caller removed any old row.

    The text is redacted on its way in: a secret typed into a memory by hand is a finding about
    that file, never a copy in the index. 'Identical' is still judged on the file's own text."""
    same, d, terms = ch.rows() if ch.doc is not None else (None, None, ())
    library = (
        (d.description, d.created, d.updated, " ".join(session_ids(d.sources)), " ".join(d.tags))
        if d
        else (None,) * 5
    )
    # a reason may quote the file
    cur = conn.execute(
        "INSERT INTO files(category, name, mtime_ns, ctime_ns, size, ino, checked_ns, hash, id, title, status, "
        "text_hash, description, created, updated, sources, tags, broken) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            category,
            ch.name,
            *ch.sig,
            ch.checked_ns,
            ch.hash,
            d.id if d else None,
            d.title if d else None,
            d.status if d else None,
            same,
            *library,
            ch.broken and redact_text(ch.broken),
        ),
    )
    if d is None:
        return
    conn.execute(
        f"INSERT INTO {fts_table(category)}(rowid, title, description, tags, body) VALUES (?, ?, ?, ?, ?)",
        (cur.lastrowid, d.title, d.description, " ".join(d.tags), d.body),
    )
    if tally is not None:
        tally.update(terms)


def write_counts(conn: sqlite3.Connection, category: str, tally: Counter[str]) -> None:
    """Add a transaction's changes to the word counts: one statement a word, however many files changed
    it (a word's statement costs a few µs, and a file has dozens of words: a save run's index write
    was mostly these)."""
    up = [(category, t, n) for t, n in tally.items() if n > 0]
    down = [(n, category, t) for t, n in tally.items() if n < 0]
    if up:
        conn.executemany(
            "INSERT INTO terms(category, term, df) VALUES (?, ?, ?) "
            "ON CONFLICT(category, term) DO UPDATE SET df = df + excluded.df",
            up,
        )
    if down:
        # a removed file's words have rows: rows left at 0 cost nothing and are reused when it comes back
        conn.executemany("UPDATE terms SET df = df + ? WHERE category = ? AND term = ?", down)


def session_ids(sources) -> list[str]:
    """The session ids of a document's sources, once each, in order (a space inside one would split it)."""
    ids = (s.get("session") for s in sources if isinstance(s, dict))
    return list(
        dict.fromkeys(
            i for i in ids if isinstance(i, str) and i and not any(c.isspace() for c in i)
        )
    )


def remove(
    conn: sqlite3.Connection,
    category: str,
    name: str,
    *,
    tally: Counter[str] | None = None,
) -> None:
    """Remove one file's rows and its text (with a `tally`, its words taken from the tally for
    `write_counts`)."""
    row = conn.execute(
        "SELECT doc, broken FROM files WHERE category = ? AND name = ?", (category, name)
    ).fetchone()
    if row is None:
        return
    doc, broken = row
    if broken is None:
        fts = fts_table(category)
        old = conn.execute(
            f"SELECT title, description, tags, body FROM {fts} WHERE rowid = ?", (doc,)
        ).fetchone()
        if old is not None:
            if tally is not None:
                tally.subtract(set(words("\n".join(old))))
            conn.execute(f"DELETE FROM {fts} WHERE rowid = ?", (doc,))
    conn.execute("DELETE FROM files WHERE doc = ?", (doc,))


def count_rows(conn: sqlite3.Connection, category: str) -> int:
    """The category's file rows (broken ones too): a walk of them all."""
    return conn.execute("SELECT count(*) FROM files WHERE category = ?", (category,)).fetchone()[0]


def memory_db(category: str | None = None) -> sqlite3.Connection:
    """A private in-memory database: every table, or (`category`) the files table and that category's
    text alone, for a copy searched with words chosen from the index's counts (no `terms`; creating the
    six text tables costs milliseconds), its text kept in a segment or two."""
    mem = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    if category is None:
        create(mem)
    else:
        for statement in [*_FILES, _fts_schema(category)]:
            mem.execute(statement)
        # filled a change at a time (a save run's held copy): each insert makes a segment, up to 15 kept
        # before FTS5 merges them, and every word of a search walks each; merged at once: one or two
        fts = fts_table(category)
        mem.execute(f"INSERT INTO {fts}({fts}, rank) VALUES ('crisismerge', 2)")
    return mem
