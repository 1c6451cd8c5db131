"""A typed, read-only view of a built config (issue 25 §3): `settings(cfg).auto_approve.min_confidence`
instead of `cfg["auto_approve"]["min_confidence"]`, checked by mypy, with no second copy of a default.

The config itself stays the dict config.build makes (validated against assets/config.default.yaml, every
key present with its default's type) and caches as JSON for the hooks: the hook path keeps reading the
dict and never imports this module (dataclasses cost it milliseconds). The engine reads the sections below
through the view; the categories and the triage rules, read by the capture code, stay dicts.

tests/engine/test_settings.py checks that every key of these sections in the defaults is a field here, so
the view cannot fall behind the file.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class MemorySettings:
    root: str


@dataclass(frozen=True, slots=True)
class HooksSettings:
    lock_wait_seconds: float
    max_stdin_bytes: int
    summary_events: tuple[str, ...]
    review_auto_memory: bool
    review_max_bytes: int


@dataclass(frozen=True, slots=True)
class DraftingSettings:
    concurrency: int
    timeout_seconds: float
    retries: int
    backoff_seconds: float
    fallback: tuple[str, ...]
    deadline_seconds: float
    max_tokens: int
    max_input_tokens: int


@dataclass(frozen=True, slots=True)
class RecallSettings:
    enabled: bool
    max_chars: int
    max_memories: int
    min_words: int


@dataclass(frozen=True, slots=True)
class MemoryMdSettings:
    max_lines: int
    max_bytes: int  # characters, as Claude Code counts them (the key keeps its old name)


@dataclass(frozen=True, slots=True)
class HygieneSettings:
    interval_minutes: int
    duplicate_threshold: float


@dataclass(frozen=True, slots=True)
class LibrarySettings:
    trash_days: int


@dataclass(frozen=True, slots=True)
class SecondLookSettings:
    enabled: bool
    events: tuple[str, ...]
    model: str
    max_chars: int
    segment_bytes: int


@dataclass(frozen=True, slots=True)
class VerifySettings:
    max_body_chars: int
    near_duplicate: float
    min_support: float
    llm: bool
    model: str


@dataclass(frozen=True, slots=True)
class AutoApproveSettings:
    min_confidence: float
    offline_cards: bool


@dataclass(frozen=True, slots=True)
class RulesSettings:
    enabled: bool
    threshold: int
    per_output: int
    auto_approve: bool
    forget_after_days: int
    ledger_max_entries: int
    ledger_max_bytes: int


class Settings:
    """The view of one config: each section made when read (a few microseconds), so a hot path pays for
    the one it reads, and a test that changes a key of a built config sees it."""

    __slots__ = ("_cfg",)

    def __init__(self, cfg: dict) -> None:
        self._cfg = cfg

    @property
    def backend(self) -> str:
        return str(self._cfg["backend"])

    def model_id(self, alias: str) -> str:
        """The id the alias stands for; the alias itself when it is an id already."""
        return str(self._cfg["models"].get(alias, alias))

    @property
    def memory(self) -> MemorySettings:
        return _section(MemorySettings, self._cfg, "memory")

    @property
    def hooks(self) -> HooksSettings:
        return _section(HooksSettings, self._cfg, "hooks")

    @property
    def drafting(self) -> DraftingSettings:
        return _section(DraftingSettings, self._cfg, "drafting")

    @property
    def recall(self) -> RecallSettings:
        return _section(RecallSettings, self._cfg, "recall")

    @property
    def memory_md(self) -> MemoryMdSettings:
        return _section(MemoryMdSettings, self._cfg, "memory_md")

    @property
    def hygiene(self) -> HygieneSettings:
        return _section(HygieneSettings, self._cfg, "hygiene")

    @property
    def library(self) -> LibrarySettings:
        return _section(LibrarySettings, self._cfg, "library")

    @property
    def second_look(self) -> SecondLookSettings:
        return _section(SecondLookSettings, self._cfg, "second_look")

    @property
    def verify(self) -> VerifySettings:
        return _section(VerifySettings, self._cfg, "verify")

    @property
    def auto_approve(self) -> AutoApproveSettings:
        return _section(AutoApproveSettings, self._cfg, "auto_approve")

    @property
    def rules(self) -> RulesSettings:
        return _section(RulesSettings, self._cfg, "rules")


# The sections, by their key in the config (each a property of Settings of the same name).
SECTIONS: dict[str, type] = {
    "memory": MemorySettings,
    "hooks": HooksSettings,
    "drafting": DraftingSettings,
    "recall": RecallSettings,
    "memory_md": MemoryMdSettings,
    "hygiene": HygieneSettings,
    "library": LibrarySettings,
    "second_look": SecondLookSettings,
    "verify": VerifySettings,
    "auto_approve": AutoApproveSettings,
    "rules": RulesSettings,
}


def settings(cfg: dict) -> Settings:
    """The typed view of a built config. A section read from a config that lacks a key (a test's
    partial dict) is a KeyError naming it: the view has no defaults of its own."""
    return Settings(cfg)


_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _section(kind: type[T], cfg: dict[str, Any], name: str) -> T:
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple((f.name, f.type == "float") for f in fields(kind))  # type: ignore[arg-type]
    values = cfg[name]
    args = {}
    for key, is_float in names:
        if key not in values:
            raise KeyError(f"{name}.{key}")
        v = values[key]
        # the YAML's 120 for a float key: the view says 120.0
        args[key] = tuple(v) if isinstance(v, list) else float(v) if is_float else v
    return kind(**args)
