"""The engine of one project, put together: config, data dir, memory root, store, index, drafter.

Both front ends (the TUI and `--auto-approve`) build one of these and call
the pipeline and review functions with it; tests build it with a tmp project
and fakes (`drafter=`, `clock=`).
"""

from __future__ import annotations

import os

from . import config
from .atomic import append_line, read_json, sweep_temps, write_json
from .locks import FileLock, SharedLock
from .paths import data_dir, memory_root
from .pipeline import now_iso

REJECTED = "rejected.json"
WRITTEN = "written.log"


class Engine:
    def __init__(self, project, *, cfg: dict | None = None, drafter=None, clock=None) -> None:
        from .index import MemoryIndex
        from .store import LOCK_NAME, MemoryStore

        self.project = os.path.abspath(os.fspath(project))
        self.data = data_dir(self.project)
        self.cfg = cfg if cfg is not None else config.load(self.project, self.data)
        self.root = memory_root(self.project, self.cfg, self.data)
        self.store = MemoryStore(self.root)
        self.index = MemoryIndex(os.path.join(self.data, "index.sqlite"), self.store)
        self._drafter = drafter
        self.now = clock or now_iso
        # Locks held by one thread at a time, re-entrant in it: the TUI's workers share this engine.
        self.claims: dict[str, SharedLock] = {}  # triage id -> its claim's lock (see pipeline.Claim)
        self._root_lock = SharedLock(os.path.join(self.root, LOCK_NAME))
        self.near: dict = {}  # (triage, category) -> memories just decided against, taken by the next verification

    @property
    def drafter(self):
        if self._drafter is None:
            from .drafting import get_drafter

            self._drafter = get_drafter(self.cfg)
        return self._drafter

    def target_state(self, category: str, memory_id: str, base_hash: str | None) -> dict:
        """Whether the memory an UPDATE/DELETE was based on still exists unchanged."""
        from .store import content_hash

        path = self.store.path_for(category, memory_id)
        try:
            with open(path, "rb") as f:
                current = content_hash(f.read())
        except FileNotFoundError:
            return {"exists": False, "hash_matches": False, "path": path}
        return {"exists": True, "hash_matches": current == base_hash, "path": path}

    # -- the memory root ------------------------------------------------------------
    def root_lock(self, wait: float = 30.0):
        """The memory root's lock (decide-and-save runs under it), as a context manager: re-entrant in
        the thread holding it; another thread of this engine waits for it like another process."""
        return self._root_lock.held(wait)

    def claim_lock(self, triage_id: str, path: str) -> SharedLock:
        """The lock of a triage's claim (`path`), one per triage for all the threads of this engine."""
        lock = self.claims.get(triage_id)
        if lock is None:
            lock = self.claims.setdefault(triage_id, SharedLock(path))  # setdefault: one even if two threads race
        return lock

    def written(self) -> dict[str, str]:
        """path -> hash of the last version memcurate itself wrote there (tells its own writes from hand edits)."""
        known: dict[str, str] = {}
        try:
            with open(os.path.join(self.data, WRITTEN), encoding="utf-8", errors="replace") as f:
                for line in f:
                    if not line.endswith("\n"):
                        break  # unfinished: its writer was killed
                    h, _, path = line[:-1].partition(" ")
                    if len(h) == 64 and path:
                        known[path] = h  # later lines win
        except OSError:
            pass
        return known

    def record_written(self, path: str, text: str) -> None:
        """Append one line (no rewrite per save); read only when a save meets a conflict."""
        from .store import content_hash

        append_line(os.path.join(self.data, WRITTEN), f"{content_hash(text)} {path}\n".encode("utf-8"))

    # -- rejected evidence: never proposed again --------------------------------
    def rejected_fingerprints(self) -> set[str]:
        try:
            return set(read_json(os.path.join(self.data, REJECTED)).get("fingerprints", []))
        except (OSError, ValueError, AttributeError):
            return set()

    def add_rejected(self, fp: str) -> None:
        with FileLock(os.path.join(self.data, "locks", "rejected.lock"), wait=10):
            known = self.rejected_fingerprints()
            known.add(fp)
            write_json(os.path.join(self.data, REJECTED), {"fingerprints": sorted(known)})

    def sweep_temps(self) -> int:
        """Remove temp files killed writers left in the memory root and the data dir; returns how many."""
        from .categories import CATEGORIES
        from .store import ARCHIVE_DIR

        folders = [self.root, os.path.join(self.root, ARCHIVE_DIR), self.data, os.path.join(self.data, "offsets")]
        folders += [os.path.join(self.root, c) for c in CATEGORIES]
        return sum(sweep_temps(f) for f in folders)

    def close(self) -> None:
        self.index.close()

