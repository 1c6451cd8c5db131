"""Drafting (DESIGN §10): turn one triaged category into a memory file to review.

The interface every backend implements, and the resolution of `backend:`:

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
import shutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, Protocol, runtime_checkable

from curator.candidates.staging import now_iso

if TYPE_CHECKING:
    from curator.memory.memfile import MemoryDoc

BACKENDS = ("auto", "anthropic", "claude-cli", "offline")


class DrafterUnavailable(Exception):
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
    def from_triage(cls, triage: Mapping, category: str, cfg: Mapping, *, candidates=None,
                    now: str | None = None) -> "DraftRequest":
        """The request for `category` of a staged triage document (staging.load_triage)."""
        alias, model = model_for(cfg, category)
        entry = (triage.get("categories") or {}).get(category) or {}
        return cls(triage_id=str(triage.get("id", "")), category=category, entry=entry,
                   source=triage.get("source") or {}, model_alias=alias, model_id=model,
                   candidates=tuple(candidates or ()), now=now or now_iso())

    @property
    def snippets(self) -> list:
        s = self.entry.get("snippets") if isinstance(self.entry, Mapping) else None
        return list(s) if isinstance(s, list) else []

    @property
    def excerpt(self) -> str:
        e = self.entry.get("excerpt") if isinstance(self.entry, Mapping) else None
        return e if isinstance(e, str) else ""


@dataclass(kw_only=True)
class ModelCall:
    """What every model call reports besides its answer: usage, and how it failed.

    tokens_in counts cache reads and writes too; `cost_usd` is what the call cost, when the backend
    says (the claude CLI's `total_cost_usd`). A failure (`error`) says whether asking again may help
    (`retryable`: a 429, a 5xx, overloaded, a timeout, a malformed answer), how long the server asked
    to wait first (`retry_after`, seconds), and whether no call of this backend can succeed now
    (`fatal`: not logged in, a bad key, no credit), so the fallback chain goes straight to offline.
    """

    tokens_in: int = 0
    tokens_out: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    elapsed: float = 0.0
    error: str | None = None
    retryable: bool = True
    retry_after: float | None = None
    fatal: bool = False


@dataclass
class DraftResult(ModelCall):
    """One draft. `text` is the rendered memory file (empty when `error` is set).

    `skipped` is the model's reason when it answered that the evidence holds nothing durable of the
    category (then `doc` is None and `error` too).
    """

    doc: "MemoryDoc | None"
    text: str
    model: str
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.doc is not None


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


@runtime_checkable
class Checker(Protocol):
    """A Claude backend that can also verify a draft (the optional verification pass, `verify.llm`):
    `check` asks `request`'s model whether `text` is supported by the request's excerpt. Never raises."""

    def check(self, request: DraftRequest, text: str) -> CheckResult: ...


def get_drafter(cfg: Mapping, env: Mapping[str, str] = os.environ) -> Drafter:
    """The drafter that `backend:` asks for (DESIGN §10).

    auto: anthropic when ANTHROPIC_API_KEY is set, else the `claude` CLI when
    it is on the PATH, else offline. `anthropic` without a key raises
    DrafterUnavailable, and so does `claude-cli` when no `claude` is on the PATH.
    """
    from curator.drafting.offline import OfflineDrafter

    backend = cfg.get("backend", "auto") or "auto"
    if backend == "offline":
        return OfflineDrafter(reason="backend: offline")
    if backend == "anthropic":
        if not env.get("ANTHROPIC_API_KEY", "").strip():
            raise DrafterUnavailable("backend: anthropic, but ANTHROPIC_API_KEY is not set; export your API key "
                                     "(and ANTHROPIC_BASE_URL for a gateway), or use backend: claude-cli or offline")
        return _anthropic(cfg, "backend: anthropic", env)
    claude = shutil.which("claude", path=env.get("PATH", ""))
    if backend == "claude-cli":
        if not claude:
            raise DrafterUnavailable("backend: claude-cli, but no `claude` executable is on the PATH; install "
                                     "Claude Code (and log in), or use backend: offline")
        return _claude_cli(claude, cfg, f"backend: claude-cli ({claude})")
    if backend != "auto":
        raise DrafterUnavailable(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    if env.get("ANTHROPIC_API_KEY", "").strip():
        return _anthropic(cfg, "backend: auto found ANTHROPIC_API_KEY: drafting with the anthropic API", env)
    if claude:
        return _claude_cli(claude, cfg, f"backend: auto found no ANTHROPIC_API_KEY and the claude CLI ({claude})")
    return OfflineDrafter(reason="backend: auto found no ANTHROPIC_API_KEY and no claude CLI on the PATH: "
                                 "drafting offline")


def _anthropic(cfg: Mapping, reason: str, env: Mapping[str, str]) -> Drafter:
    from curator.drafting.anthropic_backend import AnthropicDrafter  # lazily: the SDK's import costs seconds

    return AnthropicDrafter(cfg, reason=reason, env=env)


def _claude_cli(executable: str, cfg: Mapping, reason: str) -> Drafter:
    from curator.drafting.claude_cli import ClaudeCliDrafter  # lazily: the offline path never loads it

    return ClaudeCliDrafter(executable, cfg, reason=reason)


__all__ = ["BACKENDS", "CheckResult", "Checker", "DraftRequest", "DraftResult", "Drafter", "DrafterUnavailable",
           "ModelCall", "get_drafter", "model_for"]
