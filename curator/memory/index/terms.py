"""The words the index searches by: a memory's words as FTS5's unicode61 tokenizer cuts them (less stop
words), the query terms of a draft, the MATCH expression, and what "identical" means."""

from __future__ import annotations

import re
from collections import Counter

from memcurate.curator.categories import CATEGORIES

DRAFT_TERMS = 60  # words considered from a draft
_WORD = re.compile(r"[^\W_]+")  # a unicode61 token: letters and digits; '_' separates

_STOP = frozenset(
    """
a about above after again against all also am an and any are aren as at be because been before being
below between both but by can cannot could did didn do does doesn doing don down during each else
etc few for from further get got had has have having he her here hers him his how i if in into is
isn it its itself just let me more most must my no nor not now of off on once one only or other our
ours out over own same she should so some such than that the their them then there these they this
those through to too under until up upon us use used using very via was we were what when where
which while who whom why will with would yes yet you your
""".split()
)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def text_hash(title: str, body: str) -> str:
    """What 'identical' means (as curator.verify.decide.identical): same title and body, case and spacing aside."""
    import hashlib  # here: loading OpenSSL costs a hook that only searches

    return hashlib.sha1(f"{_norm(title)}\n{_norm(body)}".encode()).hexdigest()


def draft_text(doc) -> str:
    """A document (a memfile.MemoryDoc) as search text: title, description, tags and body, one per line.
    memfile is not imported here: the recall hook reads words without the memory file format."""
    return f"{doc.title}\n{doc.description}\n{' '.join(doc.tags)}\n{doc.body}"


def words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if 1 < len(w) <= 64 and w not in _STOP]


def query_terms(text: str, category: str | None = None, limit: int = DRAFT_TERMS) -> list[str]:
    """The words of `text` worth searching for: no stop words, no section headings; the first two
    lines' words (a draft's title and description) first, then the rest by how often they occur."""
    skip: frozenset[str] | set[str] = frozenset()
    if category in CATEGORIES:
        cat = CATEGORIES[category]
        skip = {w for name in cat.required + cat.optional for w in _WORD.findall(name.lower())}
    head, _, rest = text.partition("\n")
    head2, _, rest = rest.partition("\n")
    out: dict[str, None] = {}
    for w in words(f"{head} {head2}"):
        if w not in skip:
            out.setdefault(w)
    for w, _n in Counter(w for w in words(rest) if w not in skip).most_common():
        if len(out) >= limit:
            break
        out.setdefault(w)
    return list(out)[:limit]


def match_expression(terms: list[str]) -> str:
    """An FTS5 MATCH string for `terms`: each one a quoted string (never raw user text), OR-ed."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def doc_terms(d) -> set[str]:  # d: a memfile.MemoryDoc
    return set(words(draft_text(d)))
