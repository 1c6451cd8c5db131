"""The engine of one project, put together: config, data dir, memory root, store, index, drafter.

Both front ends (the TUI and `--auto-approve`) build one of these and call
the pipeline and review functions with it; tests build it with a tmp project
and fakes (`drafter=`, `clock=`).
"""

from __future__ import annotations

import os

from . import config
from .atomic import append_line, read_json, sweep_temps, write_json
from .locks import FileLock
from .paths import check_saving, data_dir, resolve_memory_root
from .pipeline import now_iso

REJECTED = "rejected.json"
WRITTEN = "written.log"


class Engine:
    def __init__(self, project, *, cfg: dict | None = None, drafter=None, clock=None) -> None:
        from .index import MemoryIndex
        from .store import MemoryStore

        self.project = os.path.abspath(os.fspath(project))
        self.data = data_dir(self.project)
        self.cfg = cfg if cfg is not None else config.load(self.project, self.data)
        # Derived from the repository (or set by config / autoMemoryDirectory), never from a hook payload.
        self.location = resolve_memory_root(self.project, self.cfg, self.data)
        self.root = self.location["path"]
        self.store = MemoryStore(self.root)
        self.index = MemoryIndex(os.path.join(self.data, "index.sqlite"), self.store)
        self._drafter = drafter
        self.now = clock or now_iso
        self.claims: dict[str, int] = {}  # triage id -> depth of this process's claim on it
        self._root_lock: FileLock | None = None
        self._root_depth = 0
        self.near: dict = {}  # (triage, category) -> memories just decided against, taken by the next verification

    @property
    def drafter(self):
        if self._drafter is None:
            from .drafting import get_drafter

            self._drafter = get_drafter(self.cfg)
        return self._drafter

    def target_state(self, category: str, memory_id: str, base_hash: str | None) -> dict:
        """Whether the memory an UPDATE/DELETE was based on still exists unchanged; for a file that
        changed, `unreadable` says why it is no memory any more (not UTF-8, broken front matter...)."""
        from .store import BrokenMemoryError, MissingMemoryError, content_hash

        path = self.store.path_for(category, memory_id)
        state = {"exists": True, "hash_matches": False, "path": path, "where": self.store.relpath(path)}
        try:
            data = self.store.read_bytes(path)
            current = content_hash(data)
            state["hash_matches"] = current == base_hash
            if current != base_hash:  # the version decided against parsed; any other is checked now
                self.store.parse_bytes(path, data, category, memory_id)
        except MissingMemoryError:
            state["exists"] = False
        except BrokenMemoryError as e:
            state["unreadable"] = e.reason
        return state

    # -- the memory root ------------------------------------------------------------
    def check_saving(self) -> None:
        """AutoMemoryOff (one line: why, and how to set memory.root) when saving would write into a
        folder Claude Code never loads."""
        check_saving(self.location)

    def root_lock(self, wait: float = 30.0) -> "_RootLock":
        """The memory root's lock, re-entrant within this engine (decide-and-save runs under it).
        Every save takes it, so it is where saving into a root Claude never loads is refused."""
        self.check_saving()
        return _RootLock(self, wait)

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


class _RootLock:
    def __init__(self, engine: Engine, wait: float) -> None:
        self.engine, self.wait = engine, wait

    def __enter__(self) -> "_RootLock":
        e = self.engine
        if e._root_depth == 0:
            e._root_lock = e.store.lock(wait=self.wait).__enter__()
        e._root_depth += 1
        return self

    def __exit__(self, *exc) -> None:
        e = self.engine
        e._root_depth -= 1
        if e._root_depth == 0 and e._root_lock is not None:
            e._root_lock.__exit__(*exc)
            e._root_lock = None
