"""Messages the workers post; handlers on the app turn them into state."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

from memcurate.curator.errors import MemcurateError

if TYPE_CHECKING:
    from memcurate.curator.drafting import DraftingStatus
    from memcurate.curator.memory.memory_md import Budgets

# What a worker says and goes on from: memcurate's own errors (curator/errors.py) and the system's refusals
# (a full disk, a folder gone, no permission). Anything else is a bug, left to textual, which shows it.
SAID = (MemcurateError, OSError)


class StagingChanged(Message):
    """Files changed under the staging dir (`tids`: the triages touched; None: reload all) or in
    the memory root (`memory`)."""

    def __init__(self, tids: set[str] | None, memory: bool = False) -> None:
        super().__init__()
        self.tids, self.memory = tids, memory


class ItemsLoaded(Message):
    def __init__(self, items: dict, full: bool, outcomes: dict | None = None) -> None:
        super().__init__()
        self.items, self.full = items, full  # tid -> list[Item]; full: every staged triage was read
        # tid -> queue.TriageProgress (skips, model use) of the triages read
        self.outcomes = outcomes or {}


class DetailLoaded(Message):
    """The selection's Detail (curator/review/items.py), or None and why it cannot be read."""

    def __init__(self, key: tuple[str, str], detail, error: str = "") -> None:
        super().__init__()
        self.key, self.detail, self.error = key, detail, error


class BudgetsLoaded(Message):
    def __init__(self, usage: Budgets | None, moves: dict, key, error: str = "") -> None:
        super().__init__()
        self.usage, self.moves, self.key, self.error = usage, moves, key, error


class DraftingDescribed(Message):
    """Which backend and models draft, and why (curator.drafting.describe)."""

    def __init__(self, info: DraftingStatus) -> None:
        super().__init__()
        self.info = info


class ActionDone(Message):
    """A review action finished: what to say, how, and which triages to read again."""

    def __init__(self, text: str, tids: set[str], severity: str = "information") -> None:
        super().__init__()
        self.text, self.tids, self.severity = text, tids, severity


class RuleEditSaved(Message):
    """The rule edit dialog's save finished: `error` says why the edit was refused ("" when saved)."""

    def __init__(self, edit, error: str = "") -> None:
        super().__init__()
        self.edit, self.error = edit, error


class EngineReady(Message):
    """The engine worker built the engine (after the first frame): `engine` and its `board`, or None and
    `error` (why it could not be built: a bad config, an unreadable data dir)."""

    def __init__(self, engine, board, error: str = "") -> None:
        super().__init__()
        self.engine, self.board, self.error = engine, board, error
