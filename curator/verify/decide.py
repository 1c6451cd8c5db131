"""Decisions against existing memories (docs/design.md §8): CREATE, UPDATE, NOOP or DELETE.

The structural finding wins over anyone's opinion: no candidate means no
UPDATE, a category that disallows delete never deletes, an identical memory
means NOOP. An UPDATE or DELETE carries the hash of the version it was based
on, so saving over a file that changed since is a conflict, never a silent
overwrite.

Claude's own topic files are compared with too (owner CLAUDE, id `claude/<where>`), but only to know
the fact is there: one that says the same makes the draft a NOOP naming it, one alike is verify's
near-duplicate advisory; never an UPDATE or DELETE of Claude's file (adopting one is its own proposal).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Set as AbstractSet
from dataclasses import asdict, dataclass, field, replace

from memcurate.curator.categories import CATEGORIES, CLAUDE, LATEST_SECTIONS, ONE_PER_SESSION
from memcurate.curator.errors import Refusal
from memcurate.curator.memory import memfile
from memcurate.curator.util.recent import Recent
from memcurate.curator.verify.checks import content_words

ACTIONS = ("create", "update", "noop", "delete")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass
class Existing:
    """An existing memory the draft is compared with."""

    id: str
    path: str
    hash: str
    doc: memfile.MemoryDoc
    text: str
    owner: str = "memcurate"  # or CLAUDE: a topic file of Claude's, compared with but never changed


@dataclass
class Decision:
    action: str
    target: str | None = None  # id of the memory updated, deleted or duplicated
    target_path: str | None = None
    base_hash: str | None = None
    # the file to write: the draft (create), the merge (update), the retired file (delete)
    text: str = ""
    diff: str = ""
    similarity: float = 0.0
    reasons: list[str] = field(default_factory=list)
    # The memories it was decided against: one saved since that says the same makes a create decided again.
    compared: list[str] = field(default_factory=list)
    # where the index stood before that lookup (MemoryIndex.mark): what is new since is found from it alone
    index_mark: str = ""
    # a noop that records the draft's source on its target (a repeat is worth knowing)
    source_only: bool = False

    def as_dict(self) -> dict:
        return asdict(self)


class DecisionError(Refusal, ValueError):
    """An action the rules do not allow here. The message says why."""


_ATTRIBUTION = re.compile(r"\((?:the )?(?:user|assistant)[^)]*turn[^)]*\)", re.I)


def key_text(doc: memfile.MemoryDoc) -> str:
    """What a memory is about: its title and its first required section (the decision, the rule,
    the symptom…), without "(the user, turn 2)" attributions that every draft shares."""
    first = CATEGORIES[doc.category].required[0] if doc.category in CATEGORIES else ""
    return unattributed(f"{doc.title}\n{doc.section(first, doc.body)}")


def unattributed(text: str) -> str:
    """Text without the "(the user, turn 2)" attributions that every draft shares."""
    return _ATTRIBUTION.sub(" ", text)


# What names one thing: a path or file name, a dotted, snake_case or CamelCase name, a test id (a::b):
# a run of these characters with one of the marks in it. (Found as runs, then marks: one pattern with a
# run around the mark retried the run from each of its characters: half the time of a decision.)
_RUN = re.compile(r"[\w./:-]+")
_MARK = re.compile(r"[a-zA-Z][._/:][a-zA-Z0-9]|_[a-zA-Z0-9]|[a-z][A-Z]")


def identifiers(text: str) -> set[str]:
    out = set()
    for run in _RUN.findall(text):
        # a word of letters in one case, or capitalised, has no mark: most words (a third of the cost)
        if run.isalpha() and (run.islower() or run.istitle() or run.isupper()):
            continue
        if _MARK.search(run):
            name = run.strip(".-/:").lower()
            if len(name) > 3:
                out.add(name)
    return out


@dataclass(frozen=True)
class FactWords:
    """What `similarity` compares of one memory, found once: a check compares each memory with dozens."""

    key: frozenset[str]  # the content words of its key text (title and first section)
    title: frozenset[str]  # the content words of its title
    names: frozenset[str]  # the identifiers its key text names


# FactWords of the memories compared lately, by what they are found from: a save run compares each new
# draft with the same neighbours (the memories it just saved), and a draft with each of them.
_FACT_WORDS = Recent(2048)


def fact_words(doc: memfile.MemoryDoc) -> FactWords:
    at = (doc.category, doc.title, doc.body)
    found = _FACT_WORDS.get(at)
    if found is None:
        key = key_text(doc)
        found = FactWords(
            frozenset(content_words(key)),
            frozenset(content_words(doc.title)),
            frozenset(identifiers(key)),
        )
        _FACT_WORDS.put(at, found, len(doc.title) + len(doc.body))
    return found


def similarity(doc: memfile.MemoryDoc, other: memfile.MemoryDoc) -> float:
    """How alike two memories' facts are (0..1): `similarity_of` their words."""
    return similarity_of(fact_words(doc), fact_words(other))


def similarity_of(a: FactWords, b: FactWords) -> float:
    """How alike two facts are (0..1): the words of their titles and first sections, or of their titles
    alone when those say more (a quote added to one section dilutes the words), then the things they
    name: a shared identifier (a file, a command, a test) pulls them together, names that are all
    different push them apart ("fix failing test test_a" is not "fix failing test test_b")."""
    sim = jaccard(a.key, b.key)
    if min(len(a.title), len(b.title)) >= 3:
        sim = max(sim, jaccard(a.title, b.title))
    if a.names and b.names:
        shared = len(a.names & b.names) / len(a.names | b.names)
        sim = sim + (1 - sim) * shared / 2 if shared else sim / 2
    return sim


def jaccard(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    """Words shared over all words (0..1; 0 when either has none): `checks.similarity` of two texts, from
    their content words. The union is counted, not built: a check scores tens of thousands of pairs."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def identical(doc: memfile.MemoryDoc, other: memfile.MemoryDoc) -> bool:
    return _norm(doc.title) == _norm(other.title) and _norm(doc.body) == _norm(other.body)


def says_the_same(draft: memfile.MemoryDoc, theirs: memfile.MemoryDoc) -> bool:
    """A topic file of Claude's holding the draft's fact: the same title and body, or the same body."""
    return identical(draft, theirs) or _norm(draft.body) == _norm(theirs.body)


def sessions(doc: memfile.MemoryDoc) -> set[str]:
    return {
        s["session"]
        for s in doc.sources
        if isinstance(s, dict) and isinstance(s.get("session"), str)
    }


def merge_sources(*lists: list[dict]) -> list[dict]:
    """Sources well-formed (docs/design.md §6): one entry per session, in the order first seen, its turns one
    range over every entry of that session."""
    out: dict[str, dict] = {}
    for src in (s for sources in lists for s in sources):
        if not isinstance(src, dict) or not isinstance(src.get("session"), str):
            continue
        turns = [
            t for t in src.get("turns") or [] if isinstance(t, int) and not isinstance(t, bool)
        ]
        have = out.setdefault(src["session"], {**src, "turns": []})
        known = have["turns"] + turns
        have["turns"] = [min(known), max(known)] if known else []
    return [{k: v for k, v in s.items() if k != "turns" or v} for s in out.values()]


def merge(existing: memfile.MemoryDoc, draft: memfile.MemoryDoc, now: str) -> memfile.MemoryDoc:
    """The draft merged onto an existing memory: new sections added, new sentences appended (a section
    the category keeps the latest of, such as a summary's next steps, replaced), sources merged."""
    sections = dict(existing.sections)
    latest = LATEST_SECTIONS.get(existing.category, ())
    for name, text in draft.sections.items():
        if not name:
            continue
        old = sections.get(name, "")
        if not old.strip() or (name in latest and text.strip()):
            sections[name] = text
            continue
        known = {_norm(s) for s in _SENTENCE.split(old) if s.strip()}
        new = [s.strip() for s in _SENTENCE.split(text) if s.strip() and _norm(s) not in known]
        if new:
            sections[name] = old.rstrip() + "\n" + "\n".join(new)
    tags = list(dict.fromkeys(existing.tags + draft.tags))[: memfile.TAGS_MAX]
    sources = merge_sources(existing.sources, draft.sources)
    body = memfile.join_sections(sections)
    return replace(existing, tags=tags, sources=sources, updated=now, status="active", body=body)


def unified_diff(old: str, new: str, path: str) -> str:
    """The diff a decision shows and stages, redacted (the memory on disk may hold a secret)."""
    from memcurate.curator.util.redact import redact_diff

    return redact_diff(
        "".join(
            difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                fromfile=f"a/{path}",
                tofile=f"b/{path}",
            )
        ),
        old,
        new,
    )


def decide(
    draft: memfile.MemoryDoc,
    existing: list[Existing],
    *,
    now: str,
    cfg: dict | None = None,
    proposed: str | None = None,
) -> Decision:
    """The action for `draft` among `existing` memories of its category.

    `proposed` is someone's wish (the drafter's, or the person's `c` key);
    it is honoured only where the rules allow it, with the reason recorded.
    """
    v = (cfg or {}).get("verify", {})
    strong_at = float(v.get("near_duplicate", 0.6))
    compared = [e.id for e in existing]
    theirs = [e for e in existing if e.owner == CLAUDE]
    existing = [e for e in existing if e.owner != CLAUDE]  # only memcurate's are updated or deleted
    scored = sorted(
        ((similarity(draft, e.doc), e) for e in existing if e.doc.status == "active"),
        key=lambda p: -p[0],
    )
    strong = [e for s, e in scored if s >= strong_at]
    if proposed is not None:
        return choose(proposed, draft, existing, now=now, cfg=cfg)
    same = next((e for e in theirs if says_the_same(draft, e.doc)), None)
    if same is not None and not (scored and identical(draft, scored[0][1].doc)):
        decision = Decision(
            "noop",
            same.id,
            same.path,
            same.hash,
            memfile.render(draft),
            similarity=similarity(draft, same.doc),
            reasons=[f"Claude's own memory {same.id!r} says the same: nothing to save"],
        )
    else:
        decision = _decide(draft, existing, scored, strong, now)
    decision.compared = compared
    return decision


def _decide(draft, existing, scored, strong, now) -> Decision:
    best_sim, best = scored[0] if scored else (0.0, None)
    if best is not None and identical(draft, best.doc):
        return _noop(draft, best, best_sim, now, f"identical to existing memory {best.id!r}")
    same_id = next((e for e in existing if e.id == draft.id), None)
    if same_id is not None:
        # A memory already has this id: creating would collide, so the draft goes onto it.
        if identical(draft, same_id.doc):
            return _noop(
                draft, same_id, best_sim, now, f"identical to existing memory {same_id.id!r}"
            )
        return _update(
            draft,
            same_id,
            similarity(draft, same_id.doc),
            now,
            [f"an existing memory has the same id {same_id.id!r}"],
        )
    if draft.category in ONE_PER_SESSION:
        # A later pass over a session (the hook triages as it goes) updates the summary of its earlier ones.
        mine = sessions(draft)
        same = [(s, e) for s, e in scored if mine & sessions(e.doc)]
        if same:
            s, e = same[0]
            return _update(
                draft,
                e,
                s,
                now,
                [
                    f"{e.id!r} already summarises this session "
                    f"({', '.join(sorted(mine & sessions(e.doc)))[:60]})"
                ],
            )
    if len(strong) == 1:
        return _update(
            draft,
            strong[0],
            best_sim,
            now,
            [f"{best_sim:.0%} alike with existing memory {strong[0].id!r}"],
        )
    reasons = (
        ["no existing memory of this category is alike"]
        if not strong
        else [
            f"{len(strong)} existing memories are alike ({', '.join(e.id for e in strong[:3])}): "
            "none is clearly the one to update"
        ]
    )
    return Decision("create", text=memfile.render(draft), similarity=best_sim, reasons=reasons)


def _update(
    draft: memfile.MemoryDoc, target: Existing, sim: float, now: str, reasons: list[str]
) -> Decision:
    merged = merge(target.doc, draft, now)
    text = memfile.render(merged)
    rel = f"{target.doc.category}/{target.id}.md"
    if memfile.render(replace(merged, updated=target.doc.updated)) == memfile.render(target.doc):
        # nothing new at all, not even a source: a noop, said as one
        return Decision(
            "noop",
            target.id,
            target.path,
            target.hash,
            target.text,
            similarity=sim,
            reasons=reasons + ["the draft adds nothing to it"],
        )
    return Decision(
        "update",
        target.id,
        target.path,
        target.hash,
        text,
        unified_diff(target.text, text, rel),
        similarity=sim,
        reasons=reasons,
    )


def _noop(
    draft: memfile.MemoryDoc, target: Existing, sim: float, now: str, reason: str
) -> Decision:
    """The same fact again: nothing to save, except the draft's session among the target's sources
    (a fact seen again is worth knowing), written without touching the text."""
    sources = merge_sources(target.doc.sources, draft.sources)
    if sources == merge_sources(target.doc.sources):
        return Decision(
            "noop",
            target.id,
            target.path,
            target.hash,
            target.text,
            similarity=sim,
            reasons=[reason],
        )
    text = memfile.render(replace(target.doc, sources=sources, updated=now))
    rel = f"{target.doc.category}/{target.id}.md"
    seen = (
        ", ".join(sorted(sessions(draft) - sessions(target.doc)))[:80]
        or "the same session, other turns"
    )
    return Decision(
        "noop",
        target.id,
        target.path,
        target.hash,
        text,
        unified_diff(target.text, text, rel),
        similarity=sim,
        reasons=[reason, f"seen again ({seen}): its source is recorded"],
        source_only=True,
    )


def choose(
    action: str,
    draft: memfile.MemoryDoc,
    existing: list[Existing],
    *,
    now: str,
    cfg: dict | None = None,
    target: str | None = None,
) -> Decision:
    """Force an action (the person's choice), where the rules allow it; DecisionError otherwise."""
    if action not in ACTIONS:
        raise DecisionError(f"unknown action {action!r}: expected one of {', '.join(ACTIONS)}")
    existing = [
        e for e in existing if e.owner != CLAUDE
    ]  # Claude's files change only through adopt
    by_id = {e.id: e for e in existing}
    if target is None and existing:
        target = max(existing, key=lambda e: similarity(draft, e.doc)).id
    chosen = by_id.get(target) if target else None
    if action == "create":
        return Decision(
            "create", text=memfile.render(draft), reasons=["chosen: create a new memory"]
        )
    if action == "noop":
        return Decision(
            "noop",
            chosen.id if chosen else None,
            chosen.path if chosen else None,
            chosen.hash if chosen else None,
            reasons=["chosen: save nothing"],
        )
    if chosen is None:
        raise DecisionError(
            f"cannot {action}: there is no existing memory of category {draft.category!r} to {action}"
        )
    if action == "update":
        return _update(
            draft, chosen, similarity(draft, chosen.doc), now, [f"chosen: update {chosen.id!r}"]
        )
    if not CATEGORIES[draft.category].delete_allowed:
        raise DecisionError(
            f"cannot delete: memories of category {draft.category!r} are never deleted"
        )
    retired = replace(chosen.doc, status="archived", updated=now)
    text = memfile.render(retired)
    rel = f"{chosen.doc.category}/{chosen.id}.md"
    return Decision(
        "delete",
        chosen.id,
        chosen.path,
        chosen.hash,
        text,
        unified_diff(chosen.text, text, rel),
        reasons=[f"chosen: retire {chosen.id!r} (its file kept, marked archived, in .archive/)"],
    )
