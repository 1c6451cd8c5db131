"""The session_summary recipe: Goal from the prompts, Outcome and Next steps from the last reply,
Completed from the files changed."""

from __future__ import annotations

import re

from memcurate.curator.drafting.offline.choosing import Draft, NoEvidence
from memcurate.curator.drafting.offline.evidence import MAX_EXCERPT_CHARS, Sent, Snip, parse_excerpt
from memcurate.curator.drafting.offline.statements import (
    NARRATION,
    WEAK_END,
    is_codeish,
    is_fluff,
    is_heading,
    is_lead_in,
    strip_interjections,
)
from memcurate.curator.drafting.offline.text import (
    MAX_ITEMS,
    bullets,
    finish,
    fold,
    inline_code,
    inside_code,
    lower_first,
    norm,
    segments,
    sentences,
    shorten,
)
from memcurate.curator.drafting.offline.titles import TITLE_SOFT, describe, title_from
from memcurate.curator.util.textsafe import clean
from memcurate.curator.verify.form import is_chatter, is_foreign, title_flaws

NO_NEXT_STEP = "No next step was stated in the session."


_NEXT = re.compile(
    r"\b(?:next time|next steps?|todo|to-do|follow-?ups?|left for|still (?:need|to do)|"
    r"remaining (?:work|issues|steps)|not yet|open questions?|before deploying|later)\b",
    re.I,
)
_NEXT_HEAD = re.compile(
    r"\b(?:left for next time|next steps?|todo|to do next|remaining work|follow-?ups?|"
    r"still to do|what's left)\b\s*:",
    re.I,
)
_ASKS = re.compile(
    r"\b(?:let's|please|can you|could you|would you|i think we should|we should|i want|i'd like|"
    r"go with|make sure|i prefer|i'd rather)\b",
    re.I,
)
_RULES = re.compile(r"\b(?:must|never|always|don't|do not|should|need to)\b", re.I)
_PASTED = re.compile(r"\s(?:_{3,}|`{3}|={3,}|-{5,})")


def _ask_score(x: str) -> float:
    return 2 * bool(_ASKS.search(x)) + bool(_RULES.search(x)) - (len(x.split()) < 6)


def _summary_parts(excerpt: str, snippets: list[Snip]):
    blocks = parse_excerpt(clean(excerpt[:MAX_EXCERPT_CHARS]))
    prompts = [
        (b.turn, " ".join(b.lines))
        for b in blocks
        if b.kind == "prompt" and b.speaker in ("user", "parent")
    ]
    if not prompts:
        prompts = [(s.turn, s.text) for s in snippets if s.speaker in ("user", "parent")]
    reply = next(((b.turn, " ".join(b.lines)) for b in blocks if b.kind == "reply"), None)
    if reply is None:
        last = [s for s in snippets if s.speaker == "assistant"]
        reply = (last[-1].turn, last[-1].text) if last else None
    files: list[str] = []
    for b in blocks:
        if b.kind == "files":
            files = [f.strip() for f in " ".join(b.lines).split(", ") if f.strip()]
    return prompts, reply, files


def _short_paths(files: list[str]) -> list[str]:
    """Paths without the folders they all share (one file keeps its last three parts)."""
    split = [f.split("/") for f in files]
    common = 0
    if len(files) > 1:
        for parts in zip(*[p[:-1] for p in split], strict=False):
            if len(set(parts)) != 1:
                break
            common += 1
    elif split:
        common = max(0, len(split[0]) - 3)
    return ["/".join(p[common:]) or f for p, f in zip(split, files, strict=True)]


def _prose(text: str, *, folded: bool = True) -> list[str]:
    """The sentences of `text` worth quoting: no fluff, narration, code or pasted output."""
    out = []
    text = _PASTED.split(text, 1)[0]  # what follows is pasted output
    for seg in segments(text, folded=folded):
        for x in sentences(seg):
            x2 = strip_interjections(x)
            if (
                not is_fluff(x)
                and not NARRATION.match(x2)
                and len(x2.split()) >= 3
                and not is_codeish(x2)
            ):
                out.append(x2)
    return out


_PREAMBLE = re.compile(
    r"^(?:you are|you're|you have been|you've been|context\b|this is an? |the parent |"
    r"background\b|note that|remember)",
    re.I,
)


_PAST = r"(?:\w+ed|built|made|wrote|rewrote|ran|set|put|found|split|kept|got|began|brought|cut|sent|shipped|left)"
_DID = re.compile(
    rf"^(?:(?:now|so|and),? )?(?:i|we)(?:'ve| have)?\s+(?:now |also |just |then )?(?:successfully |fully |"
    rf"completely )?(?={_PAST}\b)",
    re.I,
)
_BEEN = re.compile(
    rf"^(.{{6,80}}?) (?:has|have) (?:now |also )?been (?:successfully |fully |completely )?({_PAST})\b(.*)$",
    re.I,
)


def done_statement(x: str) -> str:
    """What the assistant reported doing, as a fact: "I've successfully updated the GitHub Action" ->
    "Updated the GitHub Action"; "All the lint errors have been fixed" -> "Fixed all the lint errors"."""
    t = strip_interjections(x).strip()
    m = _DID.match(t)
    if m:
        t = t[m.end() :]
    else:
        m = _BEEN.match(t)
        if m:
            t = f"{m.group(2)} {lower_first(m.group(1))}{m.group(3)}"
    return t[:1].upper() + t[1:]


# A head that only counts or holds the work ("`auth/x` has six commits on top of `trunk`: a, b, c"): the work is
# the list after it.
_HOLDER = re.compile(
    r"\b(?:has|have|contains?|includes?|holds?|brings?|with|adds?)\b.*\b(?:commits?|changes?|files?|"
    r"prs?|fixes|parts?|things|items?|features?)\b",
    re.I,
)


def _title_phrase(x: str) -> str:
    """The phrase a summary title is made of: no trailing list ("…: a, b, c, and d"), no markdown; when the
    head only counts the work, the list's first two items are the work."""
    x = x.replace("**", "").rstrip(".")
    k = x.find(": ")
    if k > 0 and not inside_code(x, k):
        head, tail = x[:k], x[k + 2 :]
        items = [i.strip() for i in re.split(r",\s+(?:and\s+)?|\s+and\s+", tail) if i.strip()]
        if len(items) >= 3:
            x = f"{items[0]} and {items[1]}" if _HOLDER.search(head) else head
    return x.replace("`", "")


def _done_title(outcome: list[str], items: list[str], files: list[str]) -> str:
    """A session summary's title: what was done (the outcome as a fact, else the files changed), '' if neither."""
    names = [f.rsplit("/", 1)[-1] for f in files]
    for x in outcome + items:
        if is_foreign(x):  # the drafter cannot translate it: the files say what was done
            continue
        x = re.sub(r"^[^:`]{3,50}:\s+", "", x)  # "Fixed lint: Replaced …" -> "Replaced …"
        t = title_from(_title_phrase(x), "session_summary")
        if len(t.split()) >= 3 and not is_chatter(t) and not title_flaws(t, "session_summary"):
            if 1 <= len(names) <= 2 and not any(n in t for n in names) and len(t) < TITLE_SOFT - 30:
                t += f" ({', '.join(names)})"
            return t
    if names:
        shown = names[:3] + ([f"{len(names) - 3} more"] if len(names) > 3 else [])
        return "Changed " + (
            ", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1 else shown[0]
        )
    return ""


def draft_session_summary(excerpt: str, snippets: list[Snip], *, subagent: bool = False) -> Draft:
    prompts, reply, files = _summary_parts(excerpt, snippets)
    if not prompts and not reply:
        raise NoEvidence()
    who = "the parent agent" if subagent else "the user"
    goal_lines: list[str] = []
    title_src = title_next = ""
    for turn, text in prompts:
        ss = _prose(text)
        if not ss:
            continue
        if not goal_lines:
            picked, size = [], 0
            for x in ss:
                if size and size + len(x) > 420:
                    break
                picked.append(finish(x))
                size += len(x)
            goal_lines.append(" ".join(picked) + (f" ({who}, turn {turn})" if turn else ""))
            # A subagent's brief opens with its role ("You are alice, …"): the title is the task.
            topical = [x for x in ss if not _PREAMBLE.match(x)] or ss
            title_src = re.sub(
                r"^(?:your )?task\b\s*(?:\([^)]*\))?[\s:]*", "", topical[0], flags=re.I
            )
            title_next = topical[1] if len(topical) > 1 else ""
        elif len(goal_lines) < 4:
            best = max(ss[:5], key=lambda x: (_ask_score(x), -ss.index(x)))
            goal_lines.append(
                (f"Turn {turn}: " if turn else "")
                + finish(shorten(best, 240, ellipsis=True) if len(best) > 240 else best)
            )
    if not goal_lines and prompts:
        goal_lines.append(finish(shorten(fold(prompts[0][1]), 300, ellipsis=True)))
        title_src = goal_lines[0]

    outcome: list[str] = []
    items: list[str] = []
    next_steps: list[str] = []
    in_next = False
    for seg in segments(reply[1], folded=True) if reply else []:
        if in_next:
            next_steps += [
                finish(strip_interjections(x)) for x in sentences(seg) if not is_fluff(x)
            ]
            continue
        m = _NEXT_HEAD.search(seg)
        if m:
            in_next = True
            tail = seg[m.end() :].strip()
            if tail:
                next_steps.append(finish(tail))
            seg = seg[: m.start()].strip()
        for x in sentences(seg):
            x2 = strip_interjections(x)
            if (
                is_fluff(x)
                or NARRATION.match(x2)
                or is_codeish(x2)
                or len(x2.split()) < (2 if not outcome else 3)
                or is_heading(x2)
            ):
                continue
            label = re.match(r"^[^:`]{3,50}:\s", x2)
            if is_lead_in(x2):
                words = x2.rstrip(":").split()
                prose_words = re.findall(r"[A-Za-z]{2,}", re.sub(r"`[^`]*`", "", x2))
                if (
                    len(prose_words) >= 4
                    and ": " not in x2
                    and words[-1].lower() not in WEAK_END
                    and len(outcome) < 2
                    and not items
                ):
                    outcome.append(finish(x2))
                continue
            if label and len(items) < 5:
                items.append(finish(x2))
            elif not label and len(outcome) < 2 and not items:
                outcome.append(finish(x2))
    if not next_steps and reply:
        next_steps = [finish(x) for x in _prose(reply[1]) if _NEXT.search(x)][:3]
    if not next_steps:
        for turn, text in prompts[1:]:
            next_steps += [
                f"{finish(x)} ({who}, turn {turn})"
                for x in _prose(text)
                if re.search(r"\b(?:next time|later|follow-?up|todo)\b", x, re.I)
            ]
    # What was done, as facts; a bare progress report ("All six tasks done.") says nothing the items don't.
    outcome = [y for y in (finish(done_statement(x)) for x in outcome) if not is_chatter(y)]
    items = [finish(done_statement(x)) for x in items if not is_chatter(x)]
    next_steps = [x for x in next_steps if not is_chatter(x)]
    if not outcome and items:
        outcome, items = items[:1], items[1:]
    weak: list[str] = []
    if not outcome:
        outcome = [finish(x) for x in (_prose(reply[1]) if reply else []) if not is_chatter(x)][:1]
    if not outcome:
        outcome = ["The session ended without a closing summary from the assistant."]
        weak.append("Outcome: no outcome stated in the session")
    outcome_text = " ".join(outcome)
    if reply and reply[0]:
        outcome_text += f" (the assistant, turn {reply[0]})"
    if items:
        outcome_text += "\n\n" + bullets(items)
    goal = goal_lines[0] if goal_lines else "Not stated in the session's prompts."
    if len(goal_lines) > 1:
        goal += "\n\nLater in the session:\n" + bullets(goal_lines[1:])
    if next_steps:
        next_text = bullets(list(dict.fromkeys(next_steps))[:MAX_ITEMS], numbered=True)
    else:
        # Say so, and quote where the session stopped: the next session picks up from there.
        last = next(((t, _prose(x)) for t, x in reversed(prompts) if _prose(x)), None)
        next_text = NO_NEXT_STEP
        weak.append("Next steps: none stated in the session")
        if last:
            next_text += f" It stopped at: “{finish(shorten(last[1][0], 240, ellipsis=True))}” ({who}, turn {last[0]})"
    sections = {"Goal": goal, "Outcome": outcome_text, "Next steps": next_text}
    short = _short_paths(files)
    if short:
        sections["Completed"] = "Files changed:\n" + bullets([inline_code(f) for f in short[:12]])
    # Titled by what was done; the opening request only when it states the work (no question, no "these").
    # A reply in another language ("Push fatto. Audit finale GitHub …") is no title: the files say what was done.
    foreign = bool(reply) and is_foreign(reply[1])
    stated = not any(w.startswith("Outcome:") for w in weak) and not foreign
    title = _done_title(outcome if stated else [], [] if foreign else items, files)
    if not title and title_src:
        title = title_from(title_src, "session_summary")
        if len(title.split()) < 4 and title_next and not title_next.endswith("?"):
            title = shorten(
                f"{title}: {lower_first(title_from(title_next, 'session_summary'))}", TITLE_SOFT
            )
    if title_flaws(title, "session_summary"):
        title = ""  # the drafter names the topic instead, and says the title is weak
    turns = [t for t, _ in prompts] + ([reply[0]] if reply else [])
    used = [Sent("", t, "user", (0, 0, 0)) for t in turns if t]
    # The MEMORY.md line adds the outcome to a goal title, or the goal to an outcome title.
    extra = (
        outcome[0]
        if norm(title) not in norm(outcome[0])
        else (goal_lines[0].rsplit(" (", 1)[0] if goal_lines else "")
    )
    return Draft(title, describe(title, "" if foreign else extra), sections, used, weak=weak)
