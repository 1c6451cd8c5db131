"""The watcher: which rows a changed path asks to read again. Textual-free (tests need no App).

The app's `watch` worker hands `run` the folders and a callback that posts StagingChanged. A path under
the staging dir names its triage (the first folder under it), a path under another kind's folder (Claude's
staged writes, rule candidates, proposals) that kind's rows' key, and anything else the memory root.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field

# Short debounce: new work shows within the 300 ms the issue asks; a burst is one batch.
DEBOUNCE_MS = 80
STEP_MS = 20
# how often the watch loop looks at its stop event
RUST_TIMEOUT_MS = 500


@dataclass(frozen=True)
class Folders:
    """What the app watches: the staging dir, each other kind's folder -> the key its rows are kept under,
    and the memory root."""

    staging: str
    root: str
    kinds: Mapping[str, str] = field(default_factory=dict)

    def every(self) -> tuple[str, ...]:
        return (self.staging, *self.kinds, self.root)


@dataclass(frozen=True)
class Changed:
    """One batch classified: the rows' keys to read again (triage ids, other kinds' keys) and whether the
    memory root changed (the budgets, the library and what follows the memory files)."""

    keys: set[str]
    memory: bool


def classify(paths: Iterable[str], folders: Folders) -> Changed:
    """The keys `paths` touch. A file or folder whose name starts with a dot is a temp file (its rename
    follows) or staging's own (`.incoming`, a `.claim`): it asks for nothing."""
    staging = folders.staging.rstrip(os.sep) + os.sep
    kinds = {folder.rstrip(os.sep) + os.sep: key for folder, key in folders.kinds.items()}
    keys: set[str] = set()
    memory = False
    for path in paths:
        kind = next((key for folder, key in kinds.items() if path.startswith(folder)), None)
        if kind is not None:
            # staged, updated, approved or rejected elsewhere: read them again
            if not os.path.basename(path).startswith("."):
                keys.add(kind)
        elif path.startswith(staging):
            tid = path[len(staging) :].split(os.sep, 1)[0]
            if tid and not tid.startswith("."):
                keys.add(tid)
        else:
            memory = True
    return Changed(keys, memory)


def to_read(changed: Changed, shown: Collection[str], follow_memory: Collection[str]) -> set[str]:
    """The keys to read again: with the memory root changed, the rows of the kinds in `follow_memory` too,
    those shown (their issues and plans follow the memory files: a link in MEMORY.md, a stale proposal)."""
    if changed.memory:
        return changed.keys | {k for k in follow_memory if k in shown}
    return changed.keys


def run(folders: Folders, stop: threading.Event, on_change: Callable[[Changed], object]) -> None:
    """Call `on_change` with each batch of changes until `stop` is set; the folders are made first (a
    folder that does not exist cannot be watched). Raises what watchfiles raises (a folder gone, too many
    watches): the caller says so."""
    import watchfiles

    from memcurate.curator.util.private import make_dirs

    for folder in folders.every():
        make_dirs(folder)
    for changes in watchfiles.watch(
        *folders.every(),
        debounce=DEBOUNCE_MS,
        step=STEP_MS,
        stop_event=stop,
        rust_timeout=RUST_TIMEOUT_MS,
        yield_on_timeout=False,
        raise_interrupt=False,
    ):
        on_change(classify((path for _, path in changes), folders))
