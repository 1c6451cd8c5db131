"""A folder of JSON records, one `<id>.json` each (Claude's staged writes, proposals): the ids in it, and
the one an id from the command line names, whole or by a unique beginning."""

from __future__ import annotations

import os


def record_ids(folder: str) -> list[str]:
    """The ids of the records in `folder`, sorted (an id begins with its UTC stamp: oldest first); a dot
    name is a writer's temp file, not a record."""
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return []
    return sorted(n[:-5] for n in names if n.endswith(".json") and not n.startswith("."))


def resolve(query: str, ids: list[str], prefix: str, what: str, error: type[Exception]) -> str:
    """The id `query` names among `ids` (with or without `prefix`, whole or a unique beginning of one);
    `error` saying why when none or several do."""
    q = query[len(prefix) :] if query.startswith(prefix) else query
    if not q or "/" in q or os.sep in q or q.startswith("."):
        raise error(f"no {what} {prefix}{q}")
    if q in ids:
        return q
    hits = [i for i in ids if i.startswith(q)]
    if len(hits) > 1:
        raise error(f"{prefix}{q} is ambiguous: {', '.join(prefix + h for h in hits[:5])}")
    if not hits:
        raise error(f"no {what} {prefix}{q}")
    return hits[0]
