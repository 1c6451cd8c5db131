"""Verification (docs/design.md §9): what stops a draft (BLOCK) and what a reviewer should know (ADVISORY).

Every issue says what is wrong and where. The checks are pure: the pipeline
and the review actions gather the facts (the draft text, its evidence, the
decision against existing memories) and call `verify`. What drafting itself
found (a fallback draft, the optional model verifier's concerns) becomes
ADVISORY issues here too (`drafting_issues`); BLOCK stays deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from memcurate.curator.memory import memfile
from memcurate.curator.util.instructions import find_instructions
from memcurate.curator.util.redact import find_secrets
from memcurate.curator.verify.confidence import grounding
from memcurate.curator.verify.form import flaws

BLOCK = "BLOCK"
ADVISORY = "ADVISORY"
VERIFIER = "verifier"  # the optional model verifier's concerns (verify.llm)
FALLBACK = "fallback"  # drafted by a fallback model after the category's own failed
# Drafted offline after the Claude backend failed: plainer text than the person chose a Claude backend
# for, and the failure is often passing, so a person decides whether it is worth keeping.
OFFLINE_FALLBACK = "offline-fallback"
# ADVISORY codes that a person must see: --auto-approve leaves such a candidate pending.
HOLD = frozenset({"instruction", OFFLINE_FALLBACK})

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]{2,}")
_STOP = frozenset(
    """
the and for with that this from have has had was were are not but you your our their they them then than
into onto when what which while will would should could can may might must also only just more most such
very been being over under about after before there here its it's does did done use used using make made
all any each other some same both few many much one two three new now out off per via yet how why who
""".split()
)


@dataclass(frozen=True)
class Issue:
    severity: str  # BLOCK | ADVISORY
    code: str  # a stable name: front-matter, section, id, secret, target-missing, conflict, unreadable, …
    where: str  # the field, section or line it is about
    message: str

    def as_dict(self) -> dict:
        return asdict(self)


def content_words(text: str) -> set[str]:
    """Lowercase words that carry meaning (no stop words, no short ones)."""
    if text.isascii():
        # lowercased first, at a third less of the cost (a check finds the words of every memory): the
        # same words, as lowering an ASCII text makes no letter or takes none away
        words = set(_WORD.findall(text.lower()))
        return ({w.strip("'") for w in words} if "'" in text else words) - _STOP
    return {w.lower().strip("'") for w in _WORD.findall(text)} - _STOP


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of two texts' content words (0..1): shared words over all words."""
    wa, wb = content_words(a), content_words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


def verify(
    text: str,
    *,
    category: str,
    evidence: str = "",
    action: str = "create",
    target: dict | None = None,
    near: list[dict] | None = None,
    score: float | None = None,
    threshold: float | None = None,
    cfg: dict | None = None,
    entry: Mapping | None = None,
) -> list[Issue]:
    """The issues of one draft.

    `entry`: the triage's category entry. For a draft of the model's second look (the entry has `look`, the
    fact with the digest entries it cites), support is checked against the cited entries: each specific item
    of the draft (a name, number, path, command) must be in them. A faithful paraphrase is supported; an
    invented path is not. Other drafts are checked by word overlap with `evidence` (a keyword excerpt, which
    an offline draft quotes).

    `target`: the file the save would write, as `Engine.target_state` gives it: {"exists": bool,
    "hash_matches": bool, "path": str, "where": str, "unreadable": why it is no memory (any action)}.
    `near`: existing memories of the category to compare with, as {id, title, text}.
    """
    v = (cfg or {}).get("verify", {})
    issues: list[Issue] = []

    try:
        doc = memfile.parse(text)
    except memfile.MemoryFormatError as e:
        issues.append(Issue(BLOCK, "front-matter", "front matter", str(e)))
        doc = None
    if doc is not None:
        for where, what in memfile.problems(doc):
            code = (
                "section"
                if where.startswith("## ")
                else ("id" if where == "id" else "front-matter")
            )
            issues.append(Issue(BLOCK, code, where, f"{where} {what}"))
        if doc.category != category and doc.category:
            issues.append(
                Issue(
                    BLOCK,
                    "front-matter",
                    "category",
                    f"category is {doc.category!r} but this draft is for {category!r}",
                )
            )

    parts = _parts(text)
    issues += secret_issues(text, parts)
    issues += instruction_issues(parts)

    t = target or {}
    if t.get("unreadable"):
        # the file the save would write over is no memory (a bad hand edit): a person fixes it first
        issues.append(
            Issue(
                BLOCK,
                "unreadable",
                t.get("where") or t.get("path", "file"),
                f"{t['unreadable']}: fix or delete the file",
            )
        )
    # a noop given a target records a source on it
    elif action in ("update", "delete") or (action == "noop" and t):
        if not t.get("exists"):
            issues.append(
                Issue(
                    BLOCK,
                    "target-missing",
                    "action",
                    f"the memory to {action if action != 'noop' else 'add the source to'} no longer "
                    f"exists ({t.get('path', 'unknown')})",
                )
            )
        elif not t.get("hash_matches", True):
            issues.append(
                Issue(
                    BLOCK,
                    "conflict",
                    "action",
                    f"{t.get('path', 'the memory')} changed since this draft was made: redo the {action}",
                )
            )

    if doc is None:
        return issues

    body = doc.body
    # A memory a reviewer would delete however valid its format (curator/verify/form.py).
    issues += [Issue(ADVISORY, f.code, f.where, f.message) for f in flaws(doc)]
    claim_text = f"{doc.title}\n{doc.description}\n{body}"
    ground = grounding(entry, claim_text) if entry is not None else None
    if ground is not None:
        issues += _grounding_issues(ground)
    elif evidence:
        words = content_words(claim_text)
        support = len(words & content_words(evidence)) / len(words) if words else 1.0
        if support < float(v.get("min_support", 0.35)):
            issues.append(
                Issue(
                    ADVISORY,
                    "unsupported",
                    "body",
                    f"only {support:.0%} of the draft's words appear in the transcript excerpt: "
                    "check its claims against the session",
                )
            )
    if action == "create":
        for other in near or []:
            sim = similarity(f"{doc.title}\n{body}", other.get("text", ""))
            if sim >= float(v.get("near_duplicate", 0.6)):
                issues.append(
                    Issue(
                        ADVISORY,
                        "near-duplicate",
                        "text",
                        f"{sim:.0%} alike with existing memory {other.get('id')!r} "
                        f"({other.get('title', '')[:80]}): consider updating it instead",
                    )
                )
    issues += recall_size_issues(memfile.render(doc))
    limit = int(v.get("max_body_chars", 4000))
    if len(body) > limit:
        issues.append(
            Issue(
                ADVISORY,
                "overlong",
                "body",
                f"the body is {len(body)} characters; keep it under {limit}",
            )
        )
    if score is not None and threshold is not None and score < threshold + 0.1:
        issues.append(
            Issue(
                ADVISORY,
                "low-score",
                "triage",
                f"triage score {score:.2f} is close to the threshold {threshold:.2f}: weak evidence",
            )
        )
    return issues


# What Claude Code 2.1's recall injects of a memory file it picks: the first 4,096 bytes or 200 lines of the
# whole file, front matter included (its own memory writes are warned at the same limits).
RECALL_BYTES = 4096
RECALL_LINES = 200


def recall_size_issues(file_text: str) -> list[Issue]:
    """The ADVISORY of a memory file Claude Code's recall would cut: what lies past the cut is not seen
    unless Claude opens the file. ADVISORY: the fact comes first and survives; the person shortens the rest."""
    size, lines = len(file_text.encode("utf-8")), file_text.count("\n")
    if size <= RECALL_BYTES and lines <= RECALL_LINES:
        return []
    what = f"{size} bytes" if size > RECALL_BYTES else f"{lines} lines"
    return [
        Issue(
            ADVISORY,
            "recall-cut",
            "file",
            f"the file is {what}: Claude Code's recall shows only its first "
            f"{RECALL_BYTES} bytes or {RECALL_LINES} lines; shorten it, one fact "
            "per memory",
        )
    ]


def _grounding_issues(ground) -> list[Issue]:
    """The `unsupported` ADVISORY of a look's draft: cited entries its evidence lacks, or the names, numbers,
    paths and commands it holds that none of the cited entries does."""
    if not ground.cited or ground.missing:
        lacking = ", ".join(f"[{n}]" for n in ground.missing) or "none cited"
        return [
            Issue(
                ADVISORY,
                "unsupported",
                "evidence",
                f"the entries the fact rests on are not in its evidence "
                f"({lacking}): check its claims against the session",
            )
        ]
    if ground.unfound:
        shown = ", ".join(u.strip("`")[:40] for u in ground.unfound[:5]) + (
            ", …" if len(ground.unfound) > 5 else ""
        )
        return [
            Issue(
                ADVISORY,
                "unsupported",
                "body",
                f"not in the entries it cites: {shown}: check these against the session",
            )
        ]
    return []


def _parts(text: str) -> list[tuple[str, str]]:
    """(where, text) of each front matter field (its continuation lines included) and each body section."""
    try:
        fm, body = memfile.split_front_matter(text)
    except memfile.MemoryFormatError:
        return [("text", text)]
    parts: list[tuple[str, str]] = []
    for line in fm.split("\n"):
        key = line.split(":", 1)[0].strip() if line[:1] not in (" ", "\t", "-", "#", "") else ""
        if key or not parts:
            parts.append((key or "front matter", line))
        else:
            parts[-1] = (parts[-1][0], parts[-1][1] + "\n" + line)
    sections = memfile.split_sections(body)
    parts += [(f"## {name}" if name else "body", t) for name, t in sections.items()]
    return parts


def secret_issues(text: str, parts: list[tuple[str, str]] | None = None) -> list[Issue]:
    """A BLOCK for each secret still in the file, front matter included, naming the field or section."""
    issues = [
        Issue(
            BLOCK,
            "secret",
            where,
            f"a secret is still present in {where} ({kind}): remove it before saving",
        )
        for where, part in (parts or _parts(text))
        for kind in find_secrets(part)
    ]
    if not issues:  # one that only the whole text shows (split across parts) blocks too
        issues = [
            Issue(
                BLOCK,
                "secret",
                "text",
                f"a secret is still present ({kind}): remove it before saving",
            )
            for kind in find_secrets(text)
        ]
    return issues


def instruction_issues(parts: list[tuple[str, str]]) -> list[Issue]:
    """An ADVISORY for each dangerous instruction (curator/instructions.py): MEMORY.md is read by
    every session, so a person, not --auto-approve, decides whether it is saved."""
    found: dict[str, tuple[list[str], str]] = {}  # what -> (where, the first quote): one issue each
    for where, part in parts:
        for what, quote in find_instructions(part):
            found.setdefault(what, ([], quote))[0].append(where)
    return [
        Issue(
            ADVISORY,
            "instruction",
            ", ".join(wheres),
            f"tells the agent to {what} (“{quote}”): "
            "a person must approve it; --auto-approve leaves it pending",
        )
        for what, (wheres, quote) in found.items()
    ]


def drafting_issues(
    fallback: str | None,
    offline: bool,
    concerns: list[dict] | None,
    verifier_error: str | None = None,
) -> list[Issue]:
    """The ADVISORY issues of how a draft was made: where it came from when not from the category's own
    model, and the model verifier's concerns (each {kind, where, message}), or why it could not say."""
    issues = []
    if fallback:
        issues.append(
            Issue(
                ADVISORY,
                OFFLINE_FALLBACK if offline else FALLBACK,
                "drafting",
                f"{fallback}"
                + (
                    ": a person must approve it; --auto-approve leaves it pending"
                    if offline
                    else ""
                ),
            )
        )
    if verifier_error:
        issues.append(
            Issue(ADVISORY, VERIFIER, "verifier", f"verifier unavailable: {verifier_error}")
        )
    for c in concerns or []:
        where = f"verifier: {c['where']}" if c.get("where") else "verifier"
        issues.append(
            Issue(ADVISORY, VERIFIER, where, f"{c.get('kind', 'concern')}: {c['message']}")
        )
    return issues


def held(issues: list[Issue]) -> list[Issue]:
    """The issues that keep a candidate from being saved unattended."""
    return [i for i in issues if i.code in HOLD]


def blocking(issues: list[Issue]) -> list[Issue]:
    return [i for i in issues if i.severity == BLOCK]
