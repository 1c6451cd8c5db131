"""One family for every error memcurate raises, grouped by what a caller does about it.

Every exception class in curator/ and hooks/ derives from `MemcurateError` (tests/engine/test_errors.py checks), through
one of the families below. A module's own umbrella error (StoreError, ReviewError, ...) is a `Refusal`, the
general case: show the message. A subclass that asks for something more specific also joins that family
(store.ConflictError is a StoreError and a `StaleError`), so a caller that redoes, retries or skips catches the
specific family first and `Refusal` after. Classes that also were a ValueError, KeyError or OSError stay so, for
the `except` clauses that rely on it. Private control-flow signals that never leave their module derive from
`MemcurateError` directly.

Imports nothing: the hook path loads it.
"""

from __future__ import annotations


class MemcurateError(Exception):
    """Anything memcurate raises on purpose: one `except MemcurateError` tells it from a bug."""


class Refusal(MemcurateError):
    """What was asked cannot be done as asked (a bad argument or id, a setting, a state that does not allow it,
    a write Claude may not make); nothing was changed. The message is one line the person (or Claude) acts on:
    show it (a command exits 1). Asking again unchanged fails again."""


class StaleError(MemcurateError):
    """What the action was based on changed meanwhile (a file edited or gone, a draft redone); nothing was
    overwritten. Show the thing again, then redo the action on what is there now."""


class BusyError(MemcurateError):
    """Another process holds what is needed (a lock, the index database, a file still being written); nothing
    was changed. Retry later, or skip this round: the next run catches up."""


class DamagedError(MemcurateError):
    """Stored or read data that does not check out (unparsable, malformed, not UTF-8, not a regular file, a key
    written twice): never acted on. List it with the message, skip it and go on with the rest; the person
    repairs or removes it."""


class DiskError(MemcurateError):
    """The system refused a write (a full disk, a read-only folder, no permission). Writes are atomic, so nothing
    is half-written: stop writing for this run; once the disk is fixed the next run finishes the work."""
