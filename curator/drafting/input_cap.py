"""The per-triage input cap (`drafting.max_input_tokens`): a huge session never sends more than configured.

The cap is split evenly across the triage's triggered categories, so each draft (a first one, or one
asked again from the TUI) gets the same share whatever else is drafted with it. A second look at the
session (curator/candidates/second_look.py) is made first and takes at most two thirds of the cap (it
reads the whole session digest; each draft then gets only the entries it cited); the drafts share what it
left. With the verification pass on (`verify.llm`), each draft has two shares' worth of
calls, so the shares are halved: the check sends the same (cut) evidence again, and the draft itself,
which `drafting.max_tokens` bounds. A share covers
everything a call sends: the system prompt, the answer's schema, the user prompt and its evidence.
When a draft's prompt would be larger, its excerpt and snippets are cut to fit (the excerpt keeps its
beginning and end), the cut says so inside the prompt ("[… N characters cut: per-triage input cap …]")
and the category's state line records it (`input_cut`).

Tokens are estimated from characters, conservatively: 3 characters a token (English prose runs about
4 on Claude's tokenizers, code and JSON fewer, and newer models count about 30 % more tokens for the
same text), so what is sent stays under the cap in real tokens too. The offline drafter sends nothing
and is never cut.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from memcurate.curator.drafting import DraftRequest
from memcurate.curator.drafting import prompt as prompts

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

CHARS_PER_TOKEN = 3
TOOL_CHARS = 120  # the tool's name and description (anthropic), or the CLI flags around the schema
MARK_ROOM = 64  # room for a cut marker
LOOK_SHARE = (2, 3)  # the share of the cap the second look may take at most: two thirds


def marker(n: int) -> str:
    return f"[… {n:,} characters cut: per-triage input cap …]"


def call_chars(system: str, schema: dict, prompt: str) -> int:
    """What one model call sends, in characters: system prompt, answer schema, user prompt."""
    return len(system) + len(json.dumps(schema)) + len(prompt) + TOOL_CHARS


def prompt_chars(request: DraftRequest) -> int:
    """What one draft sends, in characters."""
    return call_chars(
        prompts.SYSTEM_PROMPT, prompts.schema(request.category), prompts.user_prompt(request)
    )


def cap_tokens(cfg: Mapping) -> int:
    """The per-triage cap in tokens; 0 when there is none."""
    return max(0, int((cfg.get("drafting") or {}).get("max_input_tokens") or 0))


def share_tokens(cfg: Mapping, triggered: int, spent_chars: int = 0) -> int:
    """One draft's share of the cap, once the triage's second look took `spent_chars`; 0 when there is
    no cap (and at least 1 when there is, so a cap the look used up fails the drafts, never uncaps them)."""
    cap = cap_tokens(cfg)
    if not cap:
        return 0
    return max(1, (cap - -(-spent_chars // CHARS_PER_TOKEN)) // max(1, triggered))


def look_room(cfg: Mapping, overhead_chars: int, spent_chars: int = 0) -> int:
    """Characters one segment of the digest a second look sends may take: `second_look.max_chars`, and under
    a cap at most the look's share of it, less what its prompt costs and what an earlier attempt sent (the
    drafts share the rest)."""
    room = int(cfg["second_look"]["max_chars"])
    budget = look_budget(cfg, spent_chars)
    if budget is not None:
        room = min(room, budget - overhead_chars)
    return max(0, room)


def look_budget(cfg: Mapping, spent_chars: int = 0) -> int | None:
    """Characters all of a second look's calls may send together (one call per digest segment): its share
    of the cap (LOOK_SHARE), less what an earlier attempt sent; None when there is no cap."""
    cap = cap_tokens(cfg)
    share, of = LOOK_SHARE
    return max(0, cap * CHARS_PER_TOKEN * share // of - spent_chars) if cap else None


def look_overhead(already: tuple) -> int:
    """What a second look sends besides the session's activity, in characters."""
    return call_chars(
        prompts.LOOK_SYSTEM_PROMPT, prompts.look_schema(), prompts.look_prompt("", already)
    )


def apply(engine: Context, todo: list, requests: dict[str, DraftRequest]) -> None:
    """Cut the requests of `todo` (candidates about to be drafted) to their share of the cap, in place,
    and record each cut on its category's state line."""
    if getattr(engine.drafter, "name", "") == "offline" or not cap_tokens(engine.cfg):
        return
    for cand in list(todo):
        look = (cand.triage.doc.get("second_look") or {}).get("record") or {}
        spent = sent if isinstance(sent := look.get("sent_chars"), int) else 0  # what the look sent
        triggered = sum(
            1
            for c in cand.triage.doc["categories"].values()
            if isinstance(c, dict) and c.get("triggered")
        )
        # With the verification pass on, each draft is sent twice (drafted, then checked): two shares.
        share = share_tokens(
            engine.cfg, triggered * (2 if engine.settings.verify.llm else 1), spent
        )
        request, cut = fit(requests[cand.name], share * CHARS_PER_TOKEN)
        # not even the prompt without evidence fits
        if prompt_chars(request) > share * CHARS_PER_TOKEN:
            todo.remove(cand)
            need = -(-prompt_chars(request) // CHARS_PER_TOKEN) * triggered
            cand.move(
                "failed",
                error=f"drafting.max_input_tokens is too small: {triggered} draft(s) of this "
                f"triage need at least {need:,} tokens",
            )
        elif cut:
            requests[cand.name] = request
            cand.move("drafting", input_cut={"chars": cut, "share_tokens": share})


def fit(request: DraftRequest, limit: int) -> tuple[DraftRequest, int]:
    """The request cut to send at most `limit` characters, and how many characters of evidence were cut."""
    if prompt_chars(request) <= limit:
        return request, 0
    if prompts.look_finding(request) is not None:
        return _fit_entries(request, limit)
    excerpt, snippets = request.excerpt, [s for s in request.snippets if isinstance(s, Mapping)]
    room = max(0, limit - prompt_chars(_with(request, "", [])) - 2 * MARK_ROOM)
    snippet_chars = sum(len(prompts.snippet_line(s)) + 1 for s in snippets)
    # The snippets are the lines that scored: they keep their room unless the excerpt would get less than half.
    excerpt_room = min(len(excerpt), max(room - snippet_chars, room // 2))
    kept_snippets = _cut_snippets(snippets, room - excerpt_room)
    cut_excerpt = _cut(excerpt, excerpt_room)
    out = _with(request, cut_excerpt, kept_snippets)
    over = prompt_chars(out) - limit
    # a marker or a fence line counted short: take it from the excerpt
    while over > 0 and excerpt_room > 0:
        excerpt_room = max(0, excerpt_room - over - MARK_ROOM)
        out = _with(request, _cut(excerpt, excerpt_room), kept_snippets)
        over = prompt_chars(out) - limit
    if over > 0:  # still too large: the evidence goes whole, and the prompt says so
        out = _with(
            request, marker(len(excerpt) + sum(len(str(s.get("text", ""))) for s in snippets)), []
        )
    kept = len(out.excerpt) + sum(len(str(s.get("text", ""))) for s in out.snippets)
    whole = len(excerpt) + sum(len(str(s.get("text", ""))) for s in snippets)
    return out, max(1, whole - kept)


_ENTRY = re.compile(r"^\[(\d+)\] ", re.M)  # a digest entry's start (curator/capture/digest.py)


def _fit_entries(request: DraftRequest, limit: int) -> tuple[DraftRequest, int]:
    """A request whose evidence is the digest entries the second look cited, cut to `limit` by leaving out
    whole entries, the last cited first (the look cites the most telling first); when even the first one
    alone is too large, its beginning and end are kept."""
    excerpt = request.excerpt
    marks = list(_ENTRY.finditer(excerpt))
    ends = [m.start() for m in marks[1:]] + [len(excerpt)]
    blocks = {int(m.group(1)): excerpt[m.start() : e].rstrip("\n") for m, e in zip(marks, ends)}
    order = [n for n in request.entry["look"]["entries"] if n in blocks] or list(blocks)
    for keep in range(len(order) - 1, 0, -1):
        chosen = set(order[:keep])
        kept = "\n".join(text for n, text in blocks.items() if n in chosen)
        cut = len(excerpt) - len(kept)
        out = _with(request, f"{kept}\n{marker(cut)}", [])
        if prompt_chars(out) <= limit:
            return out, cut
    first = blocks.get(order[0], excerpt) if order else excerpt
    room = max(0, limit - prompt_chars(_with(request, "", [])) - 2 * MARK_ROOM)
    out = _with(request, _cut(first, room), [])
    while prompt_chars(out) > limit and room > 0:  # a marker counted short: take it from the entry
        room = max(0, room - (prompt_chars(out) - limit) - MARK_ROOM)
        out = _with(request, _cut(first, room), [])
    return out, max(1, len(excerpt) - len(out.excerpt))


def _with(request: DraftRequest, excerpt: str, snippets: list) -> DraftRequest:
    return dataclasses.replace(
        request, entry={**request.entry, "excerpt": excerpt, "snippets": snippets}
    )


def _cut(text: str, room: int) -> str:
    """`text` in at most `room` characters: its beginning and end around a marker saying how much went."""
    if len(text) <= room:
        return text
    keep = max(0, room - MARK_ROOM)
    head, tail = text[: keep - keep // 3], text[len(text) - keep // 3 :] if keep // 3 else ""
    return f"{head}\n{marker(len(text) - len(head) - len(tail))}\n{tail}".strip("\n")


def _cut_snippets(snippets: list, room: int) -> list:
    """The snippets in order while they fit; the first that does not is cut, the rest dropped (and said)."""
    out, used = [], 0
    for i, s in enumerate(snippets):
        line = len(prompts.snippet_line(s)) + 1
        if used + line <= room:
            out.append(s)
            used += line
            continue
        text = str(s.get("text", ""))
        rest = sum(len(str(r.get("text", ""))) for r in snippets[i + 1 :])
        left = room - used - (line - len(text)) - MARK_ROOM
        if left > 0 or rest or text:
            kept = text[: max(0, left)]
            out.append({**s, "text": f"{kept} {marker(len(text) - len(kept) + rest)}".strip()})
        break
    return out
