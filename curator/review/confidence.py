"""A draft's confidence: how sure memcurate is that a careful reviewer would keep it as written (0 to 1).

`--auto-approve` saves a draft only at or above `auto_approve.min_confidence`; the TUI, `status` and
`--json` show the value with its factors, so a person sees why a draft was held. It is a pure function of
what verification already gathered (the triage's entry, the document, the decision, the issues, and what the
drafter said of its own draft), additive and explainable: a base, plus one signed effect per factor, each
with a why, clamped to 0..1. Every weight is in WEIGHTS.

The factors:
- evidence: the triage score's margin over its category's threshold (a score just at the threshold is weak).
- agreement: how many snippets, distinct cues and speakers point at it (one line, one cue: nothing agrees).
- user's words: a user snippet (the person said it) vs the assistant's words alone (a decision or a
  preference is the user's to state).
- specificity: paths, commands, identifiers and numbers in the body (a generic sentence is rarely a fact,
  except a preference's).
- repeats: the fact was already saved from another session (an update or noop), or has several sources.
- weak: each line the drafter listed as weaker than the session could support (DraftResult.weak).
- advisory: each ADVISORY issue of verification (form, support, duplicates, the model verifier...).
- block: each BLOCK issue (such a draft is never saved; the value says so too).
- offline fallback: drafted offline after the Claude backend failed.
- model: a Claude drafter's own confidence (DraftResult.confidence). It is one factor among the others,
  weighted like the evidence: a model's self-report is not calibrated and tends high, so it can move the value
  by at most ±WEIGHTS["model"], never decide it alone.
"""

from __future__ import annotations

import functools
import re
from typing import Iterable, Mapping

from curator.categories import CATEGORIES
from curator.memory.memfile import split_sections

WEIGHTS = {
    "base": 0.5,
    "evidence": 0.15,  # ± at the threshold / at a full score
    "second_look": 0.05,  # a category the model's second look found (it has no keyword score)
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
    "model": 0.20,  # ± for a model's confidence of 1 / 0 (0.5 moves nothing)
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


def _factor(name: str, effect: float, why: str) -> dict:
    return {"name": name, "effect": round(effect, 3), "why": why}


def _evidence(entry: Mapping) -> list[dict]:
    score, threshold = entry.get("score"), entry.get("threshold")
    if (entry.get("signals") or {}).get("second_look"):
        return [_factor("evidence", WEIGHTS["second_look"], "found by the model's second look at the session "
                        "(no keyword score): " + str(entry.get("why") or "")[:160])]
    if not isinstance(score, (int, float)) or not isinstance(threshold, (int, float)):
        return []
    margin = (score - threshold) / (1 - threshold) if threshold < 1 else 1.0
    margin = min(1.0, max(0.0, margin))
    return [_factor("evidence", WEIGHTS["evidence"] * (2 * margin - 1),
                    f"triage score {score:.2f} against the threshold {threshold:.2f}")]


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
        return [_factor("agreement", WEIGHTS["agreement_alone"], f"{what}: nothing else points at it")]
    return [_factor("agreement", min(WEIGHTS["agreement_max"], WEIGHTS["agreement_step"] * beyond), f"{what} agree")]


def _users_words(snips: list[Mapping], category: str, body: str = "") -> list[dict]:
    if not snips or category == "session_summary":  # a summary comes from activity: whose words is not the point
        return []
    # The speaker the draft's own statement is quoted from, when it says so ("(the assistant, turn 4)"): a
    # user elsewhere in the evidence does not make an assistant's sentence the user's word.
    quoted = _QUOTED.search(_statement(body, category))
    if quoted is not None and quoted.group(1) != "user":
        snips = ([{"speaker": "parent"}] if quoted.group(1) == "parent agent"
                 else [s for s in snips if s.get("speaker") != "user"] or [{"speaker": "assistant"}])
    turns = sorted({s.get("turn") for s in snips if s.get("speaker") == "user" and isinstance(s.get("turn"), int)})
    if turns:
        return [_factor("user's words", WEIGHTS["user"], "the user said it (turn " + ", ".join(map(str, turns[:4])) + ")")]
    if all(s.get("speaker") == "parent" for s in snips):
        return [_factor("user's words", WEIGHTS["parent_only"], "only a parent agent's prompt to this subagent "
                        "says it: context handed down, not something the session established")]
    if category in USERS_CALL:
        return [_factor("user's words", WEIGHTS["assistant_only"],
                        f"only the assistant's words (or tool output) support it; a {category} is the user's to state")]
    return []


def _specificity(body: str, category: str) -> list[dict]:
    found = specifics(body)
    if not found:
        if category in GENERAL_OK:
            return []
        return [_factor("specificity", WEIGHTS["specific_none"], "no path, command, identifier or number in the body")]
    shown = ", ".join(f.strip("`")[:30] for f in found[:3]) + (", …" if len(found) > 3 else "")
    return [_factor("specificity", min(WEIGHTS["specific_max"], WEIGHTS["specific_step"] * len(found)),
                    f"{len(found)} specific item(s): {shown}")]


def _repeats(action: str, sources: int) -> list[dict]:
    if action in ("update", "noop"):
        return [_factor("repeats", WEIGHTS["repeat"], f"an existing memory already says it ({action})")]
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
    return [_factor("fit", WEIGHTS["unfit"], f"the {first} quoted does not say a {category.replace('_', ' ')} "
                                              "in the words one is stated in")]


def _statement(body: str, category: str) -> str:
    """The first required section (the decision, the rule…): where a draft states its fact."""
    return split_sections(body).get(CATEGORIES[category].required[0], "") if category in CATEGORIES else ""


_QUOTED = re.compile(r"\((?:the )?(user|assistant|parent agent)\b[^)]*\bturn\b")


def _model(confidence: float | None) -> list[dict]:
    if confidence is None:
        return []
    return [_factor("model", WEIGHTS["model"] * (2 * confidence - 1), f"the drafting model rated its draft {confidence:.2f}")]


def assess(*, category: str, entry: Mapping, body: str, action: str, sources: int = 1, issues: Iterable = (),
           weak: Iterable[str] = (), model_confidence: float | None = None, cues: Iterable[str] = ()) -> dict:
    """{"value": 0..1, "factors": [{name, effect, why}]} of one draft.

    `entry` is the triage's category entry (score, threshold, snippets); `body` the memory's Markdown body;
    `action` the decision (create, update, noop, delete); `sources` how many sources its front matter names;
    `issues` verification's issues (anything with severity, code, where, message); `weak` the drafter's weak
    lines; `model_confidence` a Claude drafter's own confidence (None offline); `cues` the triage's keyword
    patterns of the category, given for an offline draft's own text (a model states the fact in its words)."""
    snips = _snippets(entry)
    factors = (_evidence(entry) + _agreement(snips) + _users_words(snips, category, body) + _specificity(body, category)
               + _repeats(action, sources) + _fit(category, body, tuple(cues)))
    issues = list(issues)
    # A weakness that verification also flags (a "Not stated" Rationale is a vacuous section too) counts once,
    # as the advisory: one gap in a draft, not two.
    flagged = {str(i.where).removeprefix("## ").strip().lower() for i in issues if i.severity != "BLOCK"}
    factors += [_factor("weak", WEIGHTS["weak"], line) for line in weak
                if line.partition(":")[0].strip().lower() not in flagged]
    for i in issues:
        if i.severity == "BLOCK":
            factors.append(_factor("block", WEIGHTS["block"], f"{i.code} ({i.where}): {i.message}"))
        elif i.code == "offline-fallback":
            factors.append(_factor("offline fallback", WEIGHTS["offline_fallback"],
                                   "drafted offline after the Claude backend failed"))
        elif i.code not in NOT_COUNTED:
            factors.append(_factor("advisory", WEIGHTS["advisory"], f"{i.code} ({i.where}): {i.message}"))
    factors += _model(model_confidence)
    value = WEIGHTS["base"] + sum(f["effect"] for f in factors)
    return {"value": round(min(1.0, max(0.0, value)), 2), "factors": factors}


def pulled_down(conf: Mapping) -> list[dict]:
    """The factors that lowered a confidence, the strongest first: why a draft was held."""
    return sorted((f for f in conf.get("factors") or [] if f.get("effect", 0) < 0), key=lambda f: f["effect"])

