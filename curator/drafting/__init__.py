"""Drafting (docs/design.md §10): turn one triaged category into a memory file to review.

The interface every backend implements, and the drafter `backend:` resolves to (which backend
it is: curator/backends.py, light enough for the hook):

    request = DraftRequest.from_triage(triage_doc, "decision", cfg)
    drafter = get_drafter(cfg)          # auto | anthropic | claude-cli | offline
    result = drafter.draft(request)     # never raises; result.error says what failed
    result.text                         # the memory file, exactly what the person reviews

A drafter is called from several threads at once (the pipeline drafts the
categories of a triage concurrently), so `draft` keeps no state between calls.
It proposes a document only: whether it creates, updates or duplicates an
existing memory is the engine's decision (curator/decide.py), and the text is
verified like any other draft (curator/verify.py).

The Claude backends (the `anthropic` SDK, the `claude` CLI) live in their own
modules of this package (anthropic_backend.py, claude_cli.py; the prompt they share in prompt.py)
and are imported lazily by `get_drafter`; this module imports neither (the
`anthropic` import alone costs seconds).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from memcurate.curator.backends import BACKENDS, Choice, choose
from memcurate.curator.errors import Refusal
from memcurate.curator.util.stamps import now_iso
from memcurate.curator.util.usage import KEYS

if TYPE_CHECKING:
    from memcurate.curator.memory.memfile import MemoryDoc


class DrafterUnavailable(Refusal):
    """The configured backend cannot be used here. The message says why and what to do."""


def model_for(cfg: Mapping, category: str) -> tuple[str, str]:
    """(alias, model id) of a category: `categories.<c>.model` looked up in `models`."""
    alias = str(((cfg.get("categories") or {}).get(category) or {}).get("model") or "")
    model = str((cfg.get("models") or {}).get(alias) or alias)
    return alias, model


@dataclass(frozen=True)
class DraftRequest:
    """Everything a drafter may use to draft one category of one triage.

    `entry` is the triage's category entry as staged (`score`, `threshold`,
    `snippets` [{turn, speaker, weight, keywords, text}], `excerpt`); its text
    is already redacted. `source` is the triage's source (`session`,
    `transcript`, `turns`, ...). `candidates` are existing memories of the
    category the engine found ({id, title, description, body}): a drafter may
    borrow their wording, never decide against them. `now` is the UTC stamp
    written as created/updated (injectable, so a draft is reproducible).
    `model_alias`/`model_id` are the category's model (`categories.<c>.model`
    looked up in `models`); the offline drafter ignores them.
    """

    triage_id: str
    category: str
    entry: Mapping
    source: Mapping
    model_alias: str = ""
    model_id: str = ""
    candidates: tuple = ()
    now: str = field(default_factory=now_iso)

    @classmethod
    def from_triage(
        cls,
        triage: Mapping,
        category: str,
        cfg: Mapping,
        *,
        candidates=None,
        now: str | None = None,
    ) -> DraftRequest:
        """The request for `category` of a staged triage document (staging.load_triage)."""
        alias, model = model_for(cfg, category)
        entry = (triage.get("categories") or {}).get(category) or {}
        return cls(
            triage_id=str(triage.get("id", "")),
            category=category,
            entry=entry,
            source=triage.get("source") or {},
            model_alias=alias,
            model_id=model,
            candidates=tuple(candidates or ()),
            now=now or now_iso(),
        )

    @property
    def snippets(self) -> list:
        s = self.entry.get("snippets") if isinstance(self.entry, Mapping) else None
        return list(s) if isinstance(s, list) else []

    @property
    def excerpt(self) -> str:
        e = self.entry.get("excerpt") if isinstance(self.entry, Mapping) else None
        return e if isinstance(e, str) else ""


USAGE = KEYS  # what a call uses, summed (its home: curator/util/usage.py)


@dataclass(kw_only=True)
class ModelCall:
    """What every model call reports besides its answer: usage, and how it failed.

    tokens_in counts cache reads and writes too; `cost_usd` is what the call cost, when the backend
    says (the claude CLI's `total_cost_usd`) or its price is known (curator/drafting/prices.py);
    `calls` is used where a ModelCall is a sum over calls (add_usage), each call counted by its caller.
    A failure (`error`) says whether asking again may help
    (`retryable`: a 429, a 5xx, overloaded, a timeout, a malformed answer), how long the server asked
    to wait first (`retry_after`, seconds), and whether no call of this backend can succeed now
    (`fatal`: not logged in, a bad key, no credit), so the fallback chain goes straight to offline.
    """

    tokens_in: int = 0
    tokens_out: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    elapsed: float = 0.0
    error: str | None = None
    retryable: bool = True
    retry_after: float | None = None
    fatal: bool = False

    def add_usage(self, call: ModelCall, *, calls: int = 1) -> None:
        """Add `call`'s usage into this one's sums, counting it as `calls` model calls (0 offline):
        a ModelCall also serves as the sum over a category's retries, fallbacks and verification."""
        for key in USAGE[:-1]:
            setattr(self, key, getattr(self, key) + (getattr(call, key, 0) or 0))
        self.calls += calls


@dataclass
class DraftResult(ModelCall):
    """One draft. `text` is the rendered memory file (empty when `error` is set).

    `skipped` is the model's reason when it answered that the evidence holds nothing durable of the
    category (then `doc` is None and `error` too).

    `confidence` is a model's own confidence in its draft (0 to 1), None when it gave none (the
    offline drafter gives none). `weak` lists what makes the draft weaker than the session could
    support ("Rationale: no reason stated in the session"): a drafter says it instead of writing
    filler, and the draft's confidence (curator/verify/confidence.py) counts it.
    """

    doc: MemoryDoc | None
    text: str
    model: str
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None
    confidence: float | None = None
    weak: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and self.doc is not None


@dataclass(frozen=True)
class LookRequest:
    """A second look at a stretch of a session (curator/candidates/second_look.py): `activity` is one
    segment of its digest (curator/capture/digest.py: redacted, numbered entries), `entries` the entry
    numbers it holds (the ones a finding may cite), `turns` their turns, `already` the categories the keyword
    triage flagged there (to confirm, not skip). A Claude drafter's `second_look` answers it."""

    triage_id: str
    activity: str
    turns: frozenset
    already: tuple = ()
    model_alias: str = ""
    model_id: str = ""
    entries: frozenset = frozenset()


@dataclass
class LookResult(ModelCall):
    """What a second look found: `findings` [{category, entries, statement}] (validated), `dropped` one line
    per finding or entry the answer named that is not valid; the call's usage as on a DraftResult."""

    model: str
    findings: list = field(default_factory=list)
    dropped: list = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RuleRequest:
    """A graduation candidate's rule to draft (curator/drafting/rule_draft.py): `evidence` is the failure and its
    sessions as text (redacted; the prompt fences it), `key` the candidate's. A Claude drafter's `rule`
    answers it."""

    key: str
    evidence: str
    model_alias: str = ""
    model_id: str = ""


@dataclass
class RuleResult(ModelCall):
    """A model's rule: `answer` {rule, topic, paths} as the model gave it (read for its shape only; the
    caller checks what it says), or `skipped` (the model's reason); the call's usage as on a DraftResult."""

    model: str
    answer: dict | None = None
    skipped: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class MergeRequest:
    """Memories that say the same thing, to merge into one (curator/hygiene/tidy.py): `memories` their
    files' texts, newest first; `merged` the structural merge (no model), a starting point. A Claude
    drafter's `merge` answers it with a DraftResult (its doc: title, description, tags, sections)."""

    category: str
    memories: tuple
    merged: str
    now: str = field(default_factory=now_iso)
    model_alias: str = ""
    model_id: str = ""
    source: Mapping = field(default_factory=dict)  # none: the merge keeps the members' sources


@dataclass
class CheckResult(ModelCall):
    """The verification pass's answer about one draft: its concerns, each {kind, where, message}."""

    model: str
    concerns: list[dict] = field(default_factory=list)


@runtime_checkable
class Drafter(Protocol):
    """A drafting backend.

    `name` identifies it (offline, anthropic, claude-cli); `reason` says why
    `get_drafter` chose it. `draft` must be safe to call from several threads
    at once and must not raise for bad input: it returns a result whose
    `error` says what went wrong.
    """

    name: str
    reason: str

    def draft(self, request: DraftRequest) -> DraftResult: ...

    # The Claude backends also have `second_look(request: LookRequest) -> LookResult`,
    # `rule(request: RuleRequest) -> RuleResult` and `merge(request: MergeRequest) -> DraftResult`
    # (none raises).


@runtime_checkable
class Checker(Protocol):
    """A Claude backend that can also verify a draft (the optional verification pass, `verify.llm`):
    `check` asks `request`'s model whether `text` is supported by the request's excerpt. Never raises."""

    def check(self, request: DraftRequest, text: str) -> CheckResult: ...


def get_drafter(cfg: Mapping, env: Mapping[str, str] = os.environ) -> Drafter:
    """The drafter that `backend:` asks for (see `choose`); DrafterUnavailable when it cannot be used."""
    choice = choose(cfg, env)
    if choice.unavailable:
        raise DrafterUnavailable(choice.unavailable)
    if choice.backend == "anthropic":
        return _anthropic(cfg, choice.reason, env)
    if choice.backend == "claude-cli":
        return _claude_cli(choice.executable, cfg, choice.reason)
    from memcurate.curator.drafting.offline.drafter import OfflineDrafter

    return OfflineDrafter(reason=choice.reason)


@dataclass(frozen=True)
class DraftingStatus:
    """Which backend and models draft here, and why, as `status` and the TUI show it. `line` is the one
    line ("drafting: claude-cli (/usr/bin/claude) — backend: auto, no ANTHROPIC_API_KEY, claude on the
    PATH; models: decision/constraint sonnet, others haiku"); `models` each category's {alias, id};
    `warnings` the configured model ids the SDK marks deprecated; `deprecation_table` "available", or why
    the SDK's table could not be read."""

    configured: str
    backend: str
    why: str
    executable: str
    available: bool
    unavailable: str
    models: dict[str, dict[str, str]]
    line: str
    warnings: tuple[str, ...] = ()
    deprecation_table: str = "available"

    @classmethod
    def unknown(cls, why: str) -> DraftingStatus:
        """What is shown when the look itself failed: drafting cannot be told, and why."""
        return cls("", "", "", "", False, why, {}, f"drafting: cannot tell ({why})")

    def as_dict(self) -> dict:
        """The shape `status --json` prints."""
        return {
            "configured": self.configured,
            "backend": self.backend,
            "why": self.why,
            "executable": self.executable,
            "available": self.available,
            "unavailable": self.unavailable,
            "models": self.models,
            "line": self.line,
            "warnings": list(self.warnings),
            "deprecation_table": self.deprecation_table,
        }


def describe(cfg: Mapping, env: Mapping[str, str] = os.environ) -> DraftingStatus:
    """Which backend and models draft here, and why; builds no drafter and imports no SDK."""
    from memcurate.curator.categories import NAMES
    from memcurate.curator.drafting.models import check

    choice = choose(cfg, env)
    models = {c: dict(zip(("alias", "id"), model_for(cfg, c))) for c in NAMES}
    checked = check(cfg.get("models") or {})
    if choice.unavailable:
        line = f"drafting: UNAVAILABLE ({choice.backend}) — {choice.unavailable}"
    else:
        where = f" ({choice.executable})" if choice.executable else ""
        line = f"drafting: {choice.backend}{where} — {choice.reason}; models: {_models_phrase(choice.backend, models)}"
    return DraftingStatus(
        configured=choice.configured,
        backend=choice.backend,
        why=choice.why,
        executable=choice.executable,
        available=not choice.unavailable,
        unavailable=choice.unavailable,
        models=models,
        line=line,
        warnings=tuple(checked["warnings"]),
        deprecation_table=checked["deprecation_table"],
    )


def _models_phrase(backend: str, models: Mapping[str, Mapping[str, str]]) -> str:
    """ "decision/constraint sonnet, others haiku": categories grouped by model, the largest group
    last as "others". The anthropic backend sends the id, the claude CLI the alias."""
    if backend == "offline":
        return "none (the offline drafter uses no model)"
    groups: dict[str, list[str]] = {}
    for cat, m in models.items():
        name = (
            f"{m['alias']} ({m['id']})"
            if backend == "anthropic" and m["id"] != m["alias"]
            else m["alias"]
        )
        groups.setdefault(name, []).append(cat)
    if len(groups) == 1:
        return f"all {next(iter(groups))}"
    ordered = sorted(groups.items(), key=lambda g: len(g[1]))  # stable: ties keep category order
    parts = [f"{'/'.join(cats)} {name}" for name, cats in ordered[:-1]]
    return ", ".join(parts + [f"others {ordered[-1][0]}"])


def _anthropic(cfg: Mapping, reason: str, env: Mapping[str, str]) -> Drafter:
    from memcurate.curator.drafting.anthropic_backend import (
        AnthropicDrafter,  # lazily: the SDK's import costs seconds
    )

    return AnthropicDrafter(cfg, reason=reason, env=env)


def _claude_cli(executable: str, cfg: Mapping, reason: str) -> Drafter:
    from memcurate.curator.drafting.claude_cli import (
        ClaudeCliDrafter,  # lazily: the offline path never loads it
    )

    return ClaudeCliDrafter(executable, cfg, reason=reason)


__all__ = [
    "BACKENDS",
    "CheckResult",
    "Checker",
    "Choice",
    "DraftRequest",
    "DraftResult",
    "Drafter",
    "DrafterUnavailable",
    "LookRequest",
    "LookResult",
    "ModelCall",
    "RuleRequest",
    "RuleResult",
    "USAGE",
    "choose",
    "describe",
    "get_drafter",
    "model_for",
]
