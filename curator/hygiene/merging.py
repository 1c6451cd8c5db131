"""Merges and archives proposed for near-duplicate and contradicting memories (tidy.py stages them, the
check's duplicates.detect reports them): pairs grouped (union-find), each group of memcurate's memories
of one category merged onto the newest, structurally or by a Claude backend's `merge` call, the
others archived; a contradiction's older memory archived. The proposals only: nothing is written here.
Pairs and memories are duplicates.py's (Pair, Memo): read by their fields here (duplicates imports this).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from memcurate.curator.backends import CLAUDE_BACKENDS
from memcurate.curator.categories import CLAUDE
from memcurate.curator.drafting.offline.text import sentences
from memcurate.curator.hygiene import statements as said
from memcurate.curator.memory import memfile
from memcurate.curator.util.stamps import now_iso
from memcurate.curator.util.textsafe import one_line
from memcurate.curator.verify.decide import merge as merge_onto
from memcurate.curator.verify.decide import merge_sources, unattributed

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

H = TypeVar("H")  # a node union_find joins

# a pair's kinds (duplicates.Pair), the findings' codes
DUPLICATE, CONTRADICTION = (
    "duplicate",
    "contradiction",
)
REWORDED = 0.8  # words shared (Jaccard) for an older sentence to be one the newer already says
LISTED = 3  # sentences named in a reason; the rest counted


def union_find(edges: Iterable[tuple[H, H]]) -> Callable[[H], H]:
    """The groups `edges` join (union-find): a node's group, named by one of its nodes."""
    parent: dict[H, H] = {}

    def root(x: H) -> H:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        parent[root(a)] = root(b)
    return root


def groups(pairs: list) -> list[list[str]]:
    """Refs joined by duplicate pairs, each group sorted, the groups in order of first ref."""
    joined = [(p.a, p.b) for p in pairs if p.kind == DUPLICATE]
    root = union_find(joined)
    out: dict[str, list[str]] = {}
    for ref in dict.fromkeys(x for pair in joined for x in pair):
        out.setdefault(root(ref), []).append(ref)
    return sorted(sorted(g) for g in out.values() if len(g) > 1)


# -- the structural merge ------------------------------------------------------


def merged(
    members: list, now: str
) -> tuple[memfile.MemoryDoc, list[tuple[str, str]], list[tuple[str, str]]]:
    """The members (memcurate's, one category) merged onto the newest: (document, dropped, reworded),
    dropped and reworded as (ref, sentence): an older sentence the newer contradicts, and one it
    already says in other words. A sentence said by both is kept once."""
    ordered = sorted(members, key=lambda m: (m.stamp, m.ref), reverse=True)
    doc = ordered[0].doc
    dropped: list[tuple[str, str]] = []
    reworded: list[tuple[str, str]] = []
    for older in ordered[1:]:
        known = said.statements(f"{doc.title}\n{doc.description}\n{doc.body}")
        known_values = said.values(unattributed(doc.body))
        kept: dict[str, str] = {}
        for name, text in older.doc.sections.items():
            lines = []
            fenced = False
            for line in text.split("\n"):
                if line.lstrip().startswith(("```", "~~~")) or fenced:  # code is kept as it is
                    fenced ^= line.lstrip().startswith(("```", "~~~"))
                    lines.append(line)
                    continue
                keep = []
                for s in sentences(line) or [line]:
                    verdict = _against(s, known, known_values)
                    if verdict == "same":
                        continue  # said by both: kept once, the newer's
                    if verdict == "dropped" or (verdict == "reworded" and not name):
                        dropped.append((older.ref, s))
                    elif verdict == "reworded":
                        reworded.append((older.ref, s))
                    elif not name:
                        # text before any heading: no section to put it in
                        dropped.append((older.ref, s))
                    else:
                        keep.append(s)
                if keep or not line.strip():
                    lines.append(" ".join(keep) if line.strip() else "")
            kept[name] = "\n".join(lines).strip()
        filtered = replace(
            older.doc, body=memfile.join_sections({k: v for k, v in kept.items() if k and v})
        )
        doc = merge_onto(doc, filtered, now)
    doc = replace(
        doc,
        created=min((m.doc.created for m in members if m.doc.created), default=doc.created),
        sources=merge_sources(*(m.doc.sources for m in ordered)),
        updated=now,
        status="active",
        tags=list(dict.fromkeys(t for m in ordered for t in m.doc.tags))[: memfile.TAGS_MAX],
    )
    return doc, dropped, reworded


def _against(sentence: str, known, known_values) -> str | None:
    """What the newer text makes of an older sentence: "same" (it says it too: kept once), "reworded"
    (it says it in other words), "dropped" (it says otherwise), or None (new: kept)."""
    plain = unattributed(sentence).strip()
    words, negated = said.statement(plain)
    if len(words) < 2:
        return None
    if any(_norm(plain) == _norm(other) for _, _, other in known):
        return "same"
    if said.other_value(said.values(plain), known_values):
        return "dropped"
    numbers = set(_NUMBER.findall(plain))
    for w, n, other in known:
        if said.flipped((words, negated), (w, n)) or said.value_clash(plain, other):
            return "dropped"  # denied, or said with another value ("seven days" / "fourteen days")
        if n == negated and len(words & w) / len(words | w) >= REWORDED:
            # the same sentence with other numbers ("expire after 15m" / "after 60m") says otherwise
            theirs = set(_NUMBER.findall(other))
            return "dropped" if numbers and theirs and numbers != theirs else "reworded"
    return None


def _said_again(
    text: str, structural: memfile.MemoryDoc, dropped: list[tuple[str, str]]
) -> str | None:
    """A value of a sentence the structural merge left out (the newer says otherwise) that the model's
    merge says again, when the structural merge does not say it: the first such value, else None."""
    if not dropped:
        return None

    def loose(text: str) -> frozenset[str]:  # "two or three days": a number without its unit is too
        values, _ = said.said_values(unattributed(text))
        return values | {v.split()[0] for v in values}

    # not the front matter's stamps and turns
    def said_in(
        doc: memfile.MemoryDoc,
    ) -> frozenset[str]:
        return loose(f"{doc.title}\n{doc.description}\n{doc.body}")

    kept, drafted = said_in(structural), said_in(memfile.parse(text))
    for _ref, sentence in dropped:
        again = sorted((loose(sentence) - kept) & drafted)
        if again:
            return again[0]
    return None


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")


_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)*[a-z%]*")


# -- proposals -----------------------------------------------------------------


def specs(
    engine: Context, found: list, memos: list, *, draft: bool = True, notes: list[str] | None = None
) -> list[dict]:
    """The proposals tidy would stage, each {kind, title, reason, ops, code, refs}: a merge per group of
    duplicates, an archive per contradiction. `draft`: let a Claude backend draft each merge not
    proposed yet. `notes` gains one line per group tidy leaves to the person (Claude's files)."""
    by_ref = {m.ref: m for m in memos}
    out = []
    now = now_iso()
    for group in groups(found):
        members = [by_ref[r] for r in group if r in by_ref]
        spec = merge_spec(engine, members, now, draft=draft, notes=notes)
        if spec is not None:
            out.append(spec)
    for p in found:
        if p.kind == CONTRADICTION and p.a in by_ref and p.b in by_ref:
            spec = archive_spec(by_ref[p.a], by_ref[p.b], p, notes=notes)
            if spec is not None:
                out.append(spec)
    return out


def merge_spec(
    engine: Context, members: list, now: str, *, draft: bool = True, notes: list[str] | None = None
) -> dict | None:
    """One group's merge proposal, or None when fewer than two of memcurate's memories of one category
    are in it (a Claude file is merged by adopting it first)."""
    claude = [m.ref for m in members if m.owner == CLAUDE]
    ours = [m for m in members if m.owner != CLAUDE]
    category = max(
        {m.category for m in ours} or {""}, key=lambda c: sum(m.category == c for m in ours)
    )
    ours = [m for m in ours if m.category == category]
    if len(ours) < 2:
        if notes is not None and claude:
            notes.append(
                f"{', '.join(m.ref for m in members)} say the same; "
                f"{', '.join(claude)} is Claude's own: adopt it to merge"
            )
        return None
    doc, dropped, reworded = merged(ours, now)
    target = max(ours, key=lambda m: (m.stamp, m.ref))
    others = sorted((m for m in ours if m is not target), key=lambda m: m.ref)
    ops = [
        {"op": "write", "ref": target.ref, "base_hash": target.hash, "text": memfile.render(doc)}
    ]
    ops += [{"op": "archive", "ref": m.ref, "base_hash": m.hash} for m in others]
    ops.append({"op": "add_line", "ref": target.ref})  # its MEMORY.md line says what the merge says
    spec = {
        "kind": "merge",
        "code": DUPLICATE,
        "refs": [m.ref for m in members],
        "title": one_line(f"Merge {len(ours)} memories that say the same: {target.doc.title}", 160),
        "ops": ops,
    }
    drafted = ""
    if draft and not _known(engine, spec):
        text, drafted = model_merge(engine, ours, doc)
        stale = _said_again(text, doc, dropped) if text else None
        if stale:  # the model put back what the newer replaced: the memory would say both
            text, drafted = (
                "",
                one_line(
                    f"Merged without a model: its merge says {stale!r}, which the newer "
                    "memory replaces.",
                    300,
                ),
            )
        if text:
            ops[0]["text"] = text
    spec["reason"] = _merge_reason(target, others, claude, dropped, reworded, drafted)
    return spec


def _merge_reason(target, others: list, claude: list[str], dropped, reworded, drafted: str) -> str:
    """Why, and what the merge leaves out (the proposal keeps 600 characters: the most telling first)."""
    parts = [
        f"They say the same: merged onto {target.ref} (the newest); {', '.join(m.ref for m in others)} "
        "archived (files kept)."
    ]
    if claude:
        parts.append(
            f"{', '.join(claude)} {'are' if len(claude) > 1 else 'is'} Claude's own, alike: adopt it to merge."
        )
    if drafted:
        parts.append(drafted)
    if dropped:
        parts.append("Left out, the newer says otherwise: " + _listed(dropped) + ".")
    if reworded:
        parts.append(
            f"Left out, said by the newer in other words: {len(reworded)} sentence"
            f"{'s' if len(reworded) > 1 else ''}."
        )
    return " ".join(parts)


def _listed(items: list[tuple[str, str]]) -> str:
    shown = "; ".join(f"{one_line(s, 90)!r} ({ref})" for ref, s in items[:LISTED])
    return shown + (f"; and {len(items) - LISTED} more" if len(items) > LISTED else "")


def archive_spec(old, new, pair, *, notes: list[str] | None = None) -> dict | None:
    """A contradiction's proposal: archive the older (the person decides which stands); None when the
    older is Claude's own (edit or adopt it in the library)."""
    if old.owner == CLAUDE:
        if notes is not None:
            notes.append(
                f"{new.ref} contradicts {old.ref} ({pair.why}); {old.ref} is Claude's own: edit or adopt it"
            )
        return None
    return {
        "kind": "archive",
        "code": CONTRADICTION,
        "refs": [old.ref, new.ref],
        "title": one_line(f"Archive {old.ref}: contradicted by the newer {new.ref}", 160),
        "reason": one_line(
            f"{new.ref} (newer) {pair.why}. Archive {old.ref} if the newer is right; "
            "reject this and edit one of them otherwise.",
            600,
        ),
        "ops": [{"op": "archive", "ref": old.ref, "base_hash": old.hash}],
    }


def _known(engine: Context, spec: dict) -> bool:
    """A proposal (any state) staged for the same kind, finding code, refs and base hashes as `spec`."""
    from memcurate.curator.proposals.store import known

    return known(engine.data, spec["kind"], spec["ops"], spec.get("code", "")) is not None


# -- the model's merge ---------------------------------------------------------


def model_merge(engine: Context, members: list, structural: memfile.MemoryDoc) -> tuple[str, str]:
    """(text, note): the model's merge as the file to write, or "" and why the structural merge stands
    ("" when no Claude backend is in use). The model gives title, description, tags and sections; the
    id, sources and stamps stay the structural merge's, and the text must pass verification."""
    drafter = engine.drafter
    name = str(getattr(drafter, "name", "") or "offline")
    if name not in CLAUDE_BACKENDS or not callable(getattr(drafter, "merge", None)):
        return "", ""
    from memcurate.curator.drafting import DraftResult, MergeRequest, model_for
    from memcurate.curator.verify.checks import BLOCK, verify

    alias, model_id = model_for(engine.cfg, structural.category)
    ordered = sorted(members, key=lambda m: (m.stamp, m.ref), reverse=True)
    request = MergeRequest(
        category=structural.category,
        memories=tuple(m.text for m in ordered),
        merged=memfile.render(structural),
        now=structural.updated,
        model_alias=alias,
        model_id=model_id,
    )
    try:
        result = drafter.merge(request)
    except Exception as e:  # a backend must not raise; if one does, the structural merge stands
        result = DraftResult(
            doc=None, text="", model=model_id or alias, error=f"{e.__class__.__name__}: {e}"
        )
    why = result.error or (f"skipped: {result.skipped}" if result.skipped is not None else "")
    if not why and result.doc is not None:
        doc = replace(
            structural,
            title=result.doc.title,
            description=result.doc.description,
            tags=result.doc.tags,
            body=result.doc.body,
        )
        text = memfile.render(doc)
        blocks = [
            i for i in verify(text, category=doc.category, cfg=engine.cfg) if i.severity == BLOCK
        ]
        if not blocks:
            return text, f"Drafted by {name} ({result.model or alias})."
        why = "; ".join(i.message for i in blocks[:2])
    return "", one_line(
        f"Merged without a model: {name}'s merge was not used ({why or 'no answer'}).", 300
    )
