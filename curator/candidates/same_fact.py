"""One fact, one memory, across categories: the drafts of one triage that state the same fact.

A user's "let's use the vis library's `visible` property, it is less work" is drafted as a decision
and as a preference; a one-prompt session's summary restates its one decision. Each draft is decided
against the memories of its own category only, so both would be saved. Once a triage's drafts are
verified, `fold` keeps the fact in one category and moves the others to `skipped`, their reason
naming the category and title that hold it.

Which category keeps it: one already approved or saved (the fact is held), else the first in the
order of curator/categories.py: a decision (with its reason) before a constraint, a runbook, a debt,
a preference, and a session summary last (a summary is about the session, not the fact).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from memcurate.curator.candidates.candidate import Candidate
from memcurate.curator.categories import CATEGORIES, NAMES, base
from memcurate.curator.memory import memfile
from memcurate.curator.util.safe_open import read_text_path
from memcurate.curator.verify.checks import similarity as text_similarity
from memcurate.curator.verify.decide import similarity, unattributed

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

HELD = ("approved", "saved")


def same_fact(a: memfile.MemoryDoc, b: memfile.MemoryDoc, strong_at: float) -> bool:
    """Two drafts state one fact: the same title, their titles and first sections as alike as a
    near duplicate within a category (verify.near_duplicate), or their first sections alone that alike
    (when no sentence states the fact well, each draft's title is made from its own topic words)."""
    if " ".join(a.title.lower().split()) == " ".join(b.title.lower().split()):
        return True
    return (
        similarity(a, b) >= strong_at or text_similarity(_statement(a), _statement(b)) >= strong_at
    )


def _statement(doc: memfile.MemoryDoc) -> str:
    first = CATEGORIES[doc.category].required[0] if doc.category in CATEGORIES else ""
    return unattributed(doc.sections.get(first, "")).replace(">", " ")


# In a triage's folder: what the last fold compared (_inputs), so that a fold of the same texts in the same
# states, which would skip nothing more (only a text or a state can), is not made again (--auto-approve
# processes every triage drafted earlier). A stale one matches no text. A forged one (the data dir is
# Claude's to write) can only spare a fold: both drafts of one fact then go on to their own checks and
# the save's duplicate check, as two drafts would; it adds no text and lifts no check.
FOLDED = "same_fact"


def _texts(cands: dict[str, Candidate]) -> dict[str, str]:
    """The text under review of each ready or held candidate that can be read."""
    out = {}
    for cat, cand in cands.items():
        if cand.state in HELD or cand.state == "ready":
            try:
                out[cat] = read_text_path(cand.files.file)
            except (OSError, ValueError):
                continue  # unreadable: nothing to compare; the review says why
    return out


def _inputs(cands: dict[str, Candidate], texts: dict[str, str], strong_at: float) -> str:
    """What a fold's outcome depends on: the threshold, and each text compared with its state."""
    import hashlib

    h = hashlib.sha256(repr(strong_at).encode())
    for cat in sorted(texts):
        h.update(f"\0{cat}\0{cands[cat].state in HELD}\0".encode())
        h.update(texts[cat].encode("utf-8"))
    return h.hexdigest()


def fold(engine: Context, cands: dict[str, Candidate]) -> list[tuple[str, str]]:
    """Skip the ready drafts among a triage's candidates (category -> Candidate, moved in place) whose
    fact another of its categories keeps; returns (category, reason) of each skipped. Call it under
    the triage's claim."""
    from memcurate.curator.candidates.staging import triage_dir
    from memcurate.curator.util.atomic import write_text

    if not cands:
        return []
    strong_at = engine.settings.verify.near_duplicate
    texts = _texts(cands)
    triage = next(iter(cands.values())).triage
    mark = os.path.join(triage_dir(triage.data, triage.tid), FOLDED)
    try:
        if read_text_path(mark) == _inputs(cands, texts, strong_at):
            return []
    except (OSError, ValueError):
        pass
    skipped = _fold(cands, texts, strong_at)
    left = {cat: t for cat, t in texts.items() if cands[cat].state != "skipped"}
    try:
        # not fsynced: one lost to a crash costs the next run this fold again
        write_text(mark, _inputs(cands, left, strong_at), durable=False)
    except OSError:
        pass
    return skipped


def _fold(
    cands: dict[str, Candidate], texts: dict[str, str], strong_at: float
) -> list[tuple[str, str]]:
    docs = {}
    for cat, text in texts.items():
        try:
            docs[cat] = memfile.parse(text)
        except memfile.MemoryFormatError:
            continue  # blocked: nothing to compare; the review says why
    order = sorted(
        docs,
        key=lambda c: (
            cands[c].state not in HELD,
            NAMES.index(base(c)) if base(c) in NAMES else len(NAMES),
        ),
    )
    keepers: list[str] = []
    skipped = []
    for cat in order:
        doc = docs[cat]
        keeper = next((k for k in keepers if same_fact(doc, docs[k], strong_at)), None)
        if keeper is None or cands[cat].state != "ready":
            keepers.append(cat)
            continue
        held = "saved" if cands[keeper].state in HELD else "kept"
        reason = (
            f"the same fact as this session's {keeper} “{docs[keeper].title[:80]}” "
            f"({held} as {keeper}/{docs[keeper].id})"
        )
        cands[cat].move("skipped", reason=reason, same_as=f"{keeper}/{docs[keeper].id}")
        skipped.append((cat, reason))
    return skipped
