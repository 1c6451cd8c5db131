"""Adopt one of Claude's own memories: a topic file, or a line of its in MEMORY.md, turned into a
memcurate memory, staged as one reviewable proposal (kind `adopt`), never applied silently.

The new memory is built offline from Claude's text: its category from the front matter's `type`
(feedback -> preference) or else from the triage keywords that score highest on the text (decision when
none do); its id from its name, unique among the memories there are; title and description from the
front matter (else its first heading or sentence); tags from its words; created = the file's mtime; no
sources. Claude's text goes whole into the category's first required section, and each other required
section gets the sentence of the text that says it best (a reason for a "why" section), else its first
sentence, so the draft verifies without a BLOCK. The change, one diff: the memory written, its
MEMORY.md line added; Claude's file archived (.archive/claude/<where>, bytes kept) and the lines of
Claude's that linked it dropped. A line that links a topic file adopts that file.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memcurate.curator.categories import CATEGORIES
from memcurate.curator.proposals.store import ProposalError

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

DEFAULT_CATEGORY = "decision"
WHY_SECTIONS = frozenset({"Rationale", "Reason", "Impact", "Why deferred"})
_HEADING_LINE = re.compile(r"^(#{1,2})(?=[ \t])", re.M)  # would open a section of the memory file
# the file's own title: the memory's title says it
_LEADING_HEADING = re.compile(r"\A#{1,6}[ \t][^\n]*\n*")


def adopt(engine: Context, ref: str) -> str:
    """Stage the adoption of Claude's memory `ref` (claude/<path> or claude/MEMORY.md#<hash>); the
    proposal's id (the one already proposed, when it is). ProposalError when `ref` is not Claude's or
    names nothing adoptable; LibraryError when it is gone."""
    from memcurate.curator.library.entries import (
        CLAUDE,
        MEMORY_MD,
        file_ref,
        is_line_ref,
        parse_ref,
    )

    try:
        owner, _, _ = parse_ref(ref)
    except ValueError as e:
        raise ProposalError(str(e)) from None
    if owner != CLAUDE:
        raise ProposalError(f"{ref} is memcurate's already: only Claude's own memories are adopted")
    from memcurate.curator.library import catalog
    from memcurate.curator.proposals import store

    entries = catalog.entries(engine)
    got = catalog.entry(engine, ref)
    entry = got.entry
    if entry.broken:
        raise ProposalError(f"{ref} cannot be read: {entry.broken}")
    if is_line_ref(ref):
        linked = file_ref(entry.where) if entry.where != MEMORY_MD else ""
        if linked and any(e.ref == linked for e in entries):
            # the line is the index of a topic file: the file is the memory
            return adopt(engine, linked)
        source = from_line(entry)
        retire = [{"op": "drop_line", "ref": ref, "base_hash": entry.hash}]
    else:
        source = from_file(entry.where, got.text)
        retire = [{"op": "archive", "ref": ref, "base_hash": entry.hash}]
        retire += [
            {"op": "drop_line", "ref": e.ref, "base_hash": e.hash}
            for e in entries
            if is_line_ref(e.ref) and e.where == entry.where
        ]
    category = category_of(engine.cfg, source)
    taken = {e.ref.partition("/")[2] for e in entries if e.owner != CLAUDE}
    mid = unique_id(source["name"], taken, lambda i: engine.store.exists(category, i))
    # the file's mtime
    text = memory_text(engine, source, category, mid, created=entry.created or engine.now())
    new_ref = f"{category}/{mid}"
    ops: list[dict] = [
        {"op": "write", "ref": new_ref, "base_hash": None, "text": text},
        {"op": "add_line", "ref": new_ref},
        *retire,
    ]
    what = "MEMORY.md line" if is_line_ref(ref) else f"topic file {entry.where}"
    pid = store.stage(
        engine.data,
        "adopt",
        f"Adopt Claude's {what} as {new_ref}",
        f"Claude's own {what} becomes a memcurate memory ({category}) with front matter, sections and its "
        "MEMORY.md line; Claude's version is "
        + (
            "dropped from MEMORY.md."
            if is_line_ref(ref)
            else "archived (bytes kept) and its lines unlinked."
        ),
        ops,
        source="library",
        finding=None,
    )
    if pid is None:
        known = store.by_key(engine.data, "adopt", ops)
        if known is None:  # staged and gone between the two looks: the person sees it next time
            raise ProposalError(f"{ref}: the adoption is proposed already")
        pid = known["id"]
    return pid


# -- Claude's text -> what the memory is made of -----------------------------------------------------


def from_file(where: str, text: str) -> dict:
    """{name, description, type, body} of a topic file, read as the library reads it (its front matter's
    name and description, else its first heading and sentence)."""
    from memcurate.curator.memory.claude_topics import describe

    name, description, kind, body = describe(where, text)
    return {
        "name": name,
        "description": description,
        "type": kind,
        "body": body.replace("\r\n", "\n"),
    }


def from_line(entry) -> dict:
    """{name, description, type, body} of a line of Claude's in MEMORY.md (its Entry: the link's text, or
    the line, and what follows the link)."""
    body = entry.title + (f" — {entry.description}" if entry.description else "")
    return {"name": entry.title, "description": entry.description, "type": "", "body": body}


def category_of(cfg: dict, source: dict) -> str:
    """preference for Claude's `feedback`; else the category whose triage keywords score highest on the
    text (a weak keyword half), the default when none match."""
    if source["type"] == "feedback":
        return "preference"
    from memcurate.curator.capture.triage import keyword_sets

    keywords, _ = keyword_sets(cfg)
    scores: dict[str, float] = {}
    for line in f"{source['name']}\n{source['description']}\n{source['body']}".splitlines():
        lowered = line.lower()
        if not lowered.strip():
            continue
        hit = {
            kw.category: (0.5 if kw.weak else 1.0)
            for kw in keywords.candidates(lowered)
            if next(kw.find(line, lowered), None) is not None
        }
        for cat, w in hit.items():
            scores[cat] = scores.get(cat, 0.0) + w
    best = max(
        scores.items(),
        key=lambda kv: (kv[1], kv[0] == DEFAULT_CATEGORY),
        default=(DEFAULT_CATEGORY, 0),
    )
    return best[0] if best[1] > 0 else DEFAULT_CATEGORY


def unique_id(name: str, taken: set[str], exists) -> str:
    """A slug of `name` no memory has (in `taken`, or on disk by `exists(id)`): -2, -3... when needed."""
    from memcurate.curator.memory.memfile import ID_MAX, slugify

    base = slugify(name, ID_MAX - 4)
    mid, n = base, 1
    while mid in taken or exists(mid):
        n += 1
        mid = f"{base}-{n}"
    return mid


def memory_text(engine: Context, source: dict, category: str, mid: str, *, created: str) -> str:
    """The memory file: front matter completed, Claude's text in the category's sections, secrets redacted."""
    from memcurate.curator.drafting.offline.tags import make_tags
    from memcurate.curator.drafting.offline.text import sentences
    from memcurate.curator.memory.memfile import (
        DESCRIPTION_MAX,
        TITLE_MAX,
        MemoryDoc,
        join_sections,
        render,
    )
    from memcurate.curator.util.redact import redact_text
    from memcurate.curator.util.textsafe import one_line

    body = (
        _LEADING_HEADING.sub("", redact_text(source["body"]).strip(), count=1).strip()
        or source["name"]
    )
    prose = " ".join(line for line in body.splitlines() if not line.lstrip().startswith("#"))
    said = [s for s in sentences(prose) if s.strip()] or [one_line(body, 300)]
    title = one_line(redact_text(source["name"]), TITLE_MAX)
    description = one_line(redact_text(source["description"]) or said[0], DESCRIPTION_MAX)
    required = CATEGORIES[category].required
    sections = {required[0]: _HEADING_LINE.sub(lambda m: "###", body)}
    for n, name in enumerate(required[1:], 1):
        sections[name] = _sentence_for(name, said, n)
    tags = make_tags([title, description, body], category) or [category.replace("_", "-")]
    doc = MemoryDoc(
        id=mid,
        category=category,
        title=title,
        description=description,
        tags=tags[:12],
        created=created,
        updated=engine.now(),
        sources=[],
        status="active",
        body=join_sections(sections),
    )
    return render(doc)


def _sentence_for(section: str, said: list[str], n: int) -> str:
    """The sentence of Claude's text that a section can state: for a "why" section its first reason, as the
    offline drafter states one ("… because the log view cuts them" -> "The log view cuts them."); else the
    text's n-th sentence (its steps follow its symptom), else its first."""
    if section in WHY_SECTIONS:
        from memcurate.curator.drafting.offline.statements import reason_sentence, split_reason

        for s in said:
            reason = split_reason(s).reason
            if reason:
                return reason_sentence(reason)
    return said[n] if n < len(said) else said[0]
