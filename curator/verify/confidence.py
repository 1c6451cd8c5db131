"""A draft's confidence: how sure memcurate is that a careful reviewer would keep it as written (0 to 1).

`--auto-approve` saves a draft only at or above `auto_approve.min_confidence`; the TUI, `status` and
`--json` show the value with its factors, so a person sees why a draft was held. It is a pure function of
what verification already gathered (the triage's entry, the document, the decision, the issues, and what the
drafter said of its own draft), additive and explainable: a base, plus one signed effect per factor, each
with a why, clamped to 0..1. Every weight is in WEIGHTS; bench/calibration_bench.py measures them on a
labelled set of drafts (keep / edit / delete).

The factors:
- evidence: the triage score's margin over its category's threshold (a score just at the threshold is weak).
- grounding (a draft of the model's second look, whose entry has `look`: the fact with the digest entries it
  cites): the cited entries are in the draft's evidence, and the draft's specific items (names, numbers,
  paths, commands) are in the cited text. What the model rephrased is not held against it; what it named
  that the session does not is. See `grounding`.
- agreement: how many snippets, distinct cues and speakers point at it (one line, one cue: nothing agrees).
  Not for a look's draft: its snippets are the entries it cites, one fact, not independent cues.
- user's words: something the person typed or decided (their message, an answer, an approved plan, a
  rejection, a queued prompt) vs the assistant's words alone (a decision or a preference is the user's to
  state). Pasted text (a log, a document), a templated prompt (a slash command's expansion) and a
  notification are nobody's words: they earn no credit.
- specificity: paths, commands, identifiers and numbers in the body (a generic sentence is rarely a fact,
  except a preference's).
- repeats: the fact was already saved from another session (an update or noop), or has several sources.
- weak: each line the drafter listed as weaker than the session could support (DraftResult.weak).
- advisory: each ADVISORY issue of verification (form, support, duplicates, the model verifier...).
- block: each BLOCK issue (such a draft is never saved; the value says so too).
- offline fallback: drafted offline after the Claude backend failed.
- model: a Claude drafter's own confidence (DraftResult.confidence). On a look's draft it is the best signal
  there is once the draft is grounded: ±WEIGHTS["model_grounded"], its credit scaled by the share of the
  draft's specific items found in the cited entries (a model sure of a draft naming what the session does not
  earns nothing; a model unsure of its draft is believed). Elsewhere (a keyword excerpt's draft, nothing to
  ground it on) it moves the value by at most ±WEIGHTS["model"].
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from memcurate.curator.categories import CATEGORIES
from memcurate.curator.memory.memfile import split_sections

WEIGHTS = {
    "base": 0.5,
    "evidence": 0.15,  # ± at the threshold / at a full score
    "second_look": 0.15,  # a category the model's second look found, reading the whole session (no keyword score)
    "agreement_step": 0.03,  # per agreeing snippet, cue or speaker beyond the first, up to agreement_max
    "agreement_alone": -0.05,  # one snippet, one cue, one speaker
    "agreement_max": 0.10,
    "user": 0.10,  # a user snippet
    "assistant_only": -0.10,  # only the assistant (or tool output) said it, where the user decides (USERS_CALL)
    "parent_only": -0.30,  # only a parent agent's prompt to a subagent said it: context the parent session holds
    "unfit": -0.20,  # an offline draft's statement says nothing in the words its category is said in
    "specific_none": -0.05,  # no path, command, identifier or number in the body, where facts are specific
    "specific_step": 0.03,  # per distinct specific item, up to specific_max
    "specific_max": 0.09,
    "repeat": 0.10,  # an update or noop of a saved memory, or several sources
    "weak": -0.15,  # per line of the drafter's `weak`
    "advisory": -0.25,  # per ADVISORY issue: a reviewer would likely edit or delete the draft
    "block": -0.50,  # per BLOCK issue
    "offline_fallback": -0.30,
    "model": 0.20,  # ± for a model's confidence of 1 / 0 (0.5 moves nothing), nothing to ground the draft on
    "model_grounded": 0.45,  # ± on a look's draft for a rating of 1 / 0, its credit scaled by the share grounded
    "model_center": 0.7,  # the rating that moves a look's draft nothing (a self-report tends high)
    "model_nothing_specific": 0.6,  # the scale when a look's draft names nothing to check (its words were read)
    "grounded": 0.10,  # every specific item of a look's draft is in the entries it cites
    "ungrounded_step": -0.10,  # per specific item found in none of them (an invented path, number, name)
    "ungrounded_max": -0.30,
    "cited_missing": -0.30,  # entries the look cites that its evidence does not hold: nothing checks the claim
}

# Categories whose fact is the user's to state (a choice, how they want things done): the assistant's words
# alone are weaker. A fix, a limit met or debt left is as often stated by the assistant, from tool output.
USERS_CALL = frozenset({"decision", "preference"})
# Categories whose fact is a statement of it (a choice, a limit, a deferral, a wish), where the category's cues
# say whether a quote is the fact; a runbook's Symptom is an error and a summary has no cues.
STATED = frozenset({"decision", "constraint", "tech_debt", "preference"})
# Categories where a general statement is normal ("small commits, one change each"): no specifics is no weakness.
GENERAL_OK = frozenset({"preference"})

# ADVISORY codes not counted as an advisory: counted by their own factor (low-score is the evidence
# factor, offline-fallback its own), or provenance rather than a defect (a fallback model drafted it).
NOT_COUNTED = frozenset({"low-score", "offline-fallback", "fallback"})

# What makes a body specific: a path or file name, a backticked command, an identifier, a flag, a number.
_SPECIFIC = re.compile(
    r"`[^`\n]{2,}`"  # `a command` or `a_name`
    r"|(?<![\w/])(?:[\w.-]+/)+[\w.-]+"  # a/path, src/app.py, ./x
    r"|\b[\w-]{2,}\.(?:py|js|ts|tsx|jsx|md|json|ya?ml|toml|sh|rs|go|java|rb|c|h|cpp|cfg|ini|txt|lock|sql|html|css)\b"
    r"|\b[a-z][a-z0-9]*_[a-z0-9_]+\b"  # snake_case
    r"|\b[a-z]+[A-Z][A-Za-z0-9]*\b"  # camelCase
    r"|\b[A-Z][a-z0-9]*[A-Z][A-Za-z0-9]*\b"  # a name or acronym: SQLite, GitHub, CI, SMTP
    r"|\b[A-Z][A-Z0-9]+_[A-Z0-9_]+\b"  # CONSTANT_NAME
    r"|(?<![\w-])--?[a-z][\w-]+"  # --flag
    r"|(?<![\w.])v?\d+(?:\.\d+)*\b"  # 42, 3.12, v1.2.3
)


# Where a drafter says who said a line and when ("(the user, turn 3)", "Turn 2:"): a turn number is no fact.
_TURN = re.compile(r"\bturns? \d+(?:\s*[-–,]\s*\d+)*", re.I)


def specifics(text: str) -> list[str]:
    """The distinct specific items of a text, in order (turn references left out)."""
    return list(dict.fromkeys(m.group(0) for m in _SPECIFIC.finditer(_TURN.sub(" ", text))))


# Digest kinds (curator/capture/digest.py) that are the person's own: typed, or decided through a tool.
USERS_KINDS = frozenset({"user", "answer", "plan", "plan_rejected", "rejection", "queued"})
TYPED = frozenset({"user", "queued"})  # of those, what the person typed (or pasted) into the prompt
_NOTIFICATION = (
    "<task-notification>",
    "<bash-notification>",
    "<system-reminder>",
    "[Request interrupted",
)
_TEMPLATED = ("<command-name>", "<command-message>", "<command-args>")
_ENTRY = re.compile(r"^\[(\d+)\] ", re.M)  # a digest entry as the look's excerpt renders it
# A line of something pasted rather than typed: indented, padded, a log or trace line, a table row, a rule.
_PASTED_LINE = re.compile(
    r"^(?: {4,}|\t)|\S {10,}\S|\d\d:\d\d:\d\d|^\s*(?:\[[A-Z]+\]|at |File \"|Traceback|E |\|)"
    r"|[_=─━│┃•]{3,}|^\s*[│┃├└┌•]"
)
_HEADING = re.compile(r"^#{1,4} ", re.M)
# A short acronym (CI, API, PRs, HTTP): the field's vocabulary, not a fact of the session to ground.
_VOCABULARY = re.compile(r"[A-Z]{2,5}s?")


class Grounding(NamedTuple):
    """How a look's draft stands on the entries it cites."""

    cited: tuple[int, ...]  # the digest entries the look cites
    missing: tuple[int, ...]  # those its evidence does not hold
    items: tuple[str, ...]  # the draft's specific items (names, numbers, paths, commands)
    unfound: tuple[str, ...]  # those in none of the cited entries

    @property
    def share(self) -> float | None:
        """The share of the draft's specific items found in the cited text (None: it names none)."""
        if self.missing and len(self.missing) == len(self.cited):
            return 0.0
        return 1 - len(self.unfound) / len(self.items) if self.items else None


def look_of(entry: Mapping) -> Mapping | None:
    """The look's fact of a triage entry ({statement, why, how_to_apply, entries, confidence}), when it has one."""
    look = entry.get("look")
    return look if isinstance(look, Mapping) and isinstance(look.get("entries"), list) else None


def cited_blocks(entry: Mapping) -> dict[int, str]:
    """The text of each cited digest entry the evidence holds, by its number: the excerpt's `[n] …` blocks
    (whole, as the draft saw them), else a snippet carrying its `n`, else the snippets in the look's order."""
    look = look_of(entry) or {}
    raw = entry.get("excerpt")
    excerpt = raw if isinstance(raw, str) else ""
    marks = list(_ENTRY.finditer(excerpt))
    blocks = {
        int(m.group(1)): excerpt[
            m.start() : marks[i + 1].start() if i + 1 < len(marks) else len(excerpt)
        ]
        for i, m in enumerate(marks)
    }
    ns = [n for n in look.get("entries") or () if isinstance(n, int)]
    snips = _snippets(entry)
    for i, s in enumerate(snips):
        n = (
            s.get("n")
            if isinstance(s.get("n"), int)
            else (ns[i] if len(snips) == len(ns) else None)
        )
        if n is not None and n not in blocks and isinstance(s.get("text"), str):
            blocks[n] = s["text"]
    return blocks


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("`", "").replace("**", "")).lower()


def _in(item: str, text: str) -> bool:
    """Whether a specific item is in a text (normalised): whole, or for a command each of its words."""
    x = _norm(item).strip().rstrip(".,;:")
    if not x:
        return True
    if re.search(r"(?<![\w])" + re.escape(x) + r"(?![\w])", text):
        return True
    words = re.findall(r"\w[\w.-]*\w|\w", x) if item.startswith("`") else []
    return bool(words) and all(
        re.search(r"(?<![\w])" + re.escape(w) + r"(?![\w])", text) for w in words
    )


def grounding(entry: Mapping, claim: str) -> Grounding | None:
    """How a look's draft (its claim: title, description and body) stands on the entries the look cites; None
    for a draft without a look. An item counts as grounded when it is in the text of a cited entry: a faithful
    paraphrase keeps the names, numbers, paths and commands of what it rephrases."""
    look = look_of(entry)
    if look is None:
        return None
    cited = tuple(n for n in look["entries"] if isinstance(n, int))
    blocks = cited_blocks(entry)
    text = _norm("\n".join(blocks[n] for n in cited if n in blocks))
    items = tuple(
        {
            _norm(i).strip().rstrip(".,;:"): i
            for i in specifics(_ENTRY.sub("", claim))
            if not _VOCABULARY.fullmatch(i)
        }.values()
    )
    return Grounding(
        cited,
        tuple(n for n in cited if n not in blocks),
        items,
        tuple(i for i in items if not _in(i, text)),
    )


def pasted(text: str) -> bool:
    """Text a person pasted rather than wrote (a log, a terminal copy, a document): nobody's own words."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if len(text) < 400 or len(lines) < 5:
        return False
    marked = sum(1 for ln in lines if _PASTED_LINE.search(ln))
    return (marked >= 5 and marked >= 0.4 * len(lines)) or (
        len(text) >= 1500 and len(_HEADING.findall(text)) >= 3
    )


def _kind(snip: Mapping) -> str:
    kind = snip.get("kind")
    return (
        kind
        if isinstance(kind, str)
        else ("user" if snip.get("speaker") == "user" else str(snip.get("speaker")))
    )


def _own_words(snip: Mapping, full: str) -> str | None:
    """Why a user's snippet is nobody's own words (None when it is the person's): templated, a notification,
    pasted."""
    text = full or str(snip.get("text") or "")
    if _kind(snip) == "command" or any(t in text for t in _TEMPLATED):
        return "a templated prompt"
    if any(t in text for t in _NOTIFICATION):
        return "a notification"
    # a plan or an answer is long and structured by nature
    if _kind(snip) in TYPED and pasted(text):
        return "pasted text"
    return None


def _factor(name: str, effect: float, why: str) -> dict:
    return {"name": name, "effect": round(effect, 3), "why": why}


def _evidence(entry: Mapping) -> list[dict]:
    score, threshold = entry.get("score"), entry.get("threshold")
    if (entry.get("signals") or {}).get("second_look"):
        return [
            _factor(
                "evidence",
                WEIGHTS["second_look"],
                "found by the model's second look at the session "
                "(no keyword score): " + str(entry.get("why") or "")[:160],
            )
        ]
    if not isinstance(score, (int, float)) or not isinstance(threshold, (int, float)):
        return []
    margin = (score - threshold) / (1 - threshold) if threshold < 1 else 1.0
    margin = min(1.0, max(0.0, margin))
    return [
        _factor(
            "evidence",
            WEIGHTS["evidence"] * (2 * margin - 1),
            f"triage score {score:.2f} against the threshold {threshold:.2f}",
        )
    ]


def _snippets(entry: Mapping) -> list[Mapping]:
    s = entry.get("snippets")
    return [x for x in s if isinstance(x, Mapping)] if isinstance(s, list) else []


def _agreement(snips: list[Mapping]) -> list[dict]:
    if not snips:
        return []
    lines = len({(s.get("turn"), s.get("text")) for s in snips})
    cues = len({k for s in snips for k in (s.get("keywords") or []) if isinstance(k, str)})
    speakers = len({s.get("speaker") for s in snips})
    beyond = max(0, lines - 1) + max(0, cues - 1) + max(0, speakers - 1)
    what = f"{lines} snippet(s), {cues} distinct cue(s), {speakers} speaker(s)"
    if not beyond:
        return [
            _factor("agreement", WEIGHTS["agreement_alone"], f"{what}: nothing else points at it")
        ]
    return [
        _factor(
            "agreement",
            min(WEIGHTS["agreement_max"], WEIGHTS["agreement_step"] * beyond),
            f"{what} agree",
        )
    ]


def _users_words(
    snips: list[Mapping],
    category: str,
    body: str = "",
    blocks: Mapping[int, str] | None = None,
    cited: tuple[int, ...] = (),
) -> list[dict]:
    # a summary comes from activity: whose words is not the point
    if not snips or category == "session_summary":
        return []
    # The speaker the draft's own statement is quoted from, when it says so ("(the assistant, turn 4)"): a
    # user elsewhere in the evidence does not make an assistant's sentence the user's word.
    quoted = _QUOTED.search(_statement(body, category))
    if quoted is not None and quoted.group(1) != "user":
        snips = (
            [{"speaker": "parent"}]
            if quoted.group(1) == "parent agent"
            else [s for s in snips if s.get("speaker") != "user"] or [{"speaker": "assistant"}]
        )
    full = [
        (blocks or {}).get(
            s["n"]
            if isinstance(s.get("n"), int)
            else (cited[i] if len(cited) == len(snips) else -1),
            "",
        )
        for i, s in enumerate(snips)
    ]
    theirs = [(s, f) for s, f in zip(snips, full) if s.get("speaker") == "user"]
    not_own = [why for s, f in theirs if (why := _own_words(s, f))]
    own = [s for s, f in theirs if _kind(s) in USERS_KINDS and not _own_words(s, f)]
    turns = sorted({t for s in own if isinstance(t := s.get("turn"), int)})
    if turns:
        kinds = sorted({_kind(s) for s in own})
        said = "said" if kinds == ["user"] else "said or decided (" + ", ".join(kinds) + ")"
        return [
            _factor(
                "user's words",
                WEIGHTS["user"],
                f"the user {said} it (turn " + ", ".join(map(str, turns[:4])) + ")",
            )
        ]
    if all(s.get("speaker") == "parent" for s in snips):
        return [
            _factor(
                "user's words",
                WEIGHTS["parent_only"],
                "only a parent agent's prompt to this subagent "
                "says it: context handed down, not something the session established",
            )
        ]
    if category in USERS_CALL:
        what = (
            f"only {', '.join(sorted(set(not_own)))} and the assistant's words"
            if not_own
            else "only the assistant's words (or tool output)"
        )
        return [
            _factor(
                "user's words",
                WEIGHTS["assistant_only"],
                f"{what} support it; a {category} is the user's to state",
            )
        ]
    return []


def _specificity(body: str, category: str) -> list[dict]:
    found = specifics(body)
    if not found:
        if category in GENERAL_OK:
            return []
        return [
            _factor(
                "specificity",
                WEIGHTS["specific_none"],
                "no path, command, identifier or number in the body",
            )
        ]
    shown = ", ".join(f.strip("`")[:30] for f in found[:3]) + (", …" if len(found) > 3 else "")
    return [
        _factor(
            "specificity",
            min(WEIGHTS["specific_max"], WEIGHTS["specific_step"] * len(found)),
            f"{len(found)} specific item(s): {shown}",
        )
    ]


def _repeats(action: str, sources: int) -> list[dict]:
    if action in ("update", "noop"):
        return [
            _factor("repeats", WEIGHTS["repeat"], f"an existing memory already says it ({action})")
        ]
    if sources > 1:
        return [_factor("repeats", WEIGHTS["repeat"], f"seen in {sources} sources")]
    return []


@functools.lru_cache(maxsize=16)
def _cue_regex(cues: tuple[str, ...]) -> re.Pattern:
    return re.compile("|".join(f"(?:{c})" for c in cues), re.I)


def _fit(category: str, body: str, cues: tuple[str, ...]) -> list[dict]:
    """An offline draft quotes the session: when its first section holds none of the ways its category is
    stated (the triage's own cues for it), the quote is most likely a sentence beside the fact, not the fact."""
    if not cues or category not in STATED:
        return []
    first = CATEGORIES[category].required[0]
    try:
        found = _cue_regex(cues).search(_statement(body, category))
    except re.error:
        return []
    if found:
        return []
    return [
        _factor(
            "fit",
            WEIGHTS["unfit"],
            f"the {first} quoted does not say a {category.replace('_', ' ')} "
            "in the words one is stated in",
        )
    ]


def _statement(body: str, category: str) -> str:
    """The first required section (the decision, the rule…): where a draft states its fact."""
    return (
        split_sections(body).get(CATEGORIES[category].required[0], "")
        if category in CATEGORIES
        else ""
    )


_QUOTED = re.compile(r"\((?:the )?(user|assistant|parent agent)\b[^)]*\bturn\b")


def _model(confidence: float | None, ground: Grounding | None = None) -> list[dict]:
    if confidence is None:
        return []
    said = f"the drafting model rated its draft {confidence:.2f}"
    if ground is None:
        return [_factor("model", WEIGHTS["model"] * (2 * confidence - 1), said)]
    # A model's self-report tends high: a rating at model_center moves nothing, one below it lowers the value
    # (a model unsure of its own draft is believed, however grounded), one above it raises it, scaled by grounding.
    center = WEIGHTS["model_center"]
    if confidence <= center:
        return [_factor("model", WEIGHTS["model_grounded"] * (confidence - center) / center, said)]
    share = ground.share
    # one miss among many costs little
    scale = WEIGHTS["model_nothing_specific"] if share is None else share**2
    why = (
        said
        if scale == 1
        else f"{said}, counted at {scale:.0%}: "
        + (
            "the draft names nothing to check against the cited entries"
            if share is None
            else "the cited entries do not bear out all it names"
        )
    )
    return [
        _factor(
            "model", WEIGHTS["model_grounded"] * (confidence - center) / (1 - center) * scale, why
        )
    ]


def _grounding(ground: Grounding | None) -> list[dict]:
    if ground is None:
        return []
    if not ground.cited:
        return [
            _factor(
                "grounding",
                WEIGHTS["cited_missing"],
                "the model's fact cites no entry of the session",
            )
        ]
    if ground.missing:
        return [
            _factor(
                "grounding",
                WEIGHTS["cited_missing"],
                "the evidence lacks cited entr"
                + ("y " if len(ground.missing) == 1 else "ies ")
                + ", ".join(f"[{n}]" for n in ground.missing),
            )
        ]
    if not ground.items:
        return [
            _factor(
                "grounding",
                0.0,
                "the draft names no path, number, name or command to check "
                "against the cited entries",
            )
        ]
    if not ground.unfound:
        return [
            _factor(
                "grounding",
                WEIGHTS["grounded"],
                f"all {len(ground.items)} specific item(s) are in the cited entries",
            )
        ]
    shown = ", ".join(u.strip("`")[:40] for u in ground.unfound[:4]) + (
        ", …" if len(ground.unfound) > 4 else ""
    )
    return [
        _factor(
            "grounding",
            max(WEIGHTS["ungrounded_max"], WEIGHTS["ungrounded_step"] * len(ground.unfound)),
            f"{len(ground.unfound)} of {len(ground.items)} specific item(s) are in none of the cited "
            f"entries: {shown}",
        )
    ]


def assess(
    *,
    category: str,
    entry: Mapping,
    body: str,
    action: str,
    sources: int = 1,
    issues: Iterable = (),
    weak: Iterable[str] = (),
    model_confidence: float | None = None,
    cues: Iterable[str] = (),
    title: str = "",
    description: str = "",
) -> dict:
    """{"value": 0..1, "factors": [{name, effect, why}]} of one draft.

    `entry` is the triage's category entry (score, threshold, snippets); `body` the memory's Markdown body;
    `action` the decision (create, update, noop, delete); `sources` how many sources its front matter names;
    `issues` verification's issues (anything with severity, code, where, message); `weak` the drafter's weak
    lines; `model_confidence` a Claude drafter's own confidence (None offline); `cues` the triage's keyword
    patterns of the category, given for an offline draft's own text (a model states the fact in its words);
    `title` and `description` the front matter's, checked with the body against the entries a look cites."""
    snips = _snippets(entry)
    look = look_of(entry)
    ground = grounding(entry, f"{title}\n{description}\n{body}") if look is not None else None
    cited = ground.cited if ground is not None else ()
    factors = (
        _evidence(entry)
        + _grounding(ground)
        + ([] if look is not None else _agreement(snips))
        + _users_words(
            snips, category, body, cited_blocks(entry) if look is not None else None, cited
        )
        + _specificity(body, category)
        + _repeats(action, sources)
        + _fit(category, body, tuple(cues))
    )
    issues = list(issues)
    # A weakness that verification also flags (a "Not stated" Rationale is a vacuous section too) counts once,
    # as the advisory: one gap in a draft, not two.
    flagged = {
        str(i.where).removeprefix("## ").strip().lower() for i in issues if i.severity != "BLOCK"
    }
    factors += [
        _factor("weak", WEIGHTS["weak"], line)
        for line in weak
        if line.partition(":")[0].strip().lower() not in flagged
    ]
    for i in issues:
        if i.severity == "BLOCK":
            factors.append(_factor("block", WEIGHTS["block"], f"{i.code} ({i.where}): {i.message}"))
        elif i.code == "offline-fallback":
            factors.append(
                _factor(
                    "offline fallback",
                    WEIGHTS["offline_fallback"],
                    "drafted offline after the Claude backend failed",
                )
            )
        elif i.code not in NOT_COUNTED and not (i.code == "unsupported" and ground is not None):
            factors.append(
                _factor("advisory", WEIGHTS["advisory"], f"{i.code} ({i.where}): {i.message}")
            )
    factors += _model(model_confidence, ground)
    value = WEIGHTS["base"] + sum(f["effect"] for f in factors)
    return {"value": round(min(1.0, max(0.0, value)), 2), "factors": factors}


def pulled_down(conf: Mapping) -> list[dict]:
    """The factors that lowered a confidence, the strongest first: why a draft was held."""
    return sorted(
        (f for f in conf.get("factors") or [] if f.get("effect", 0) < 0), key=lambda f: f["effect"]
    )
