"""One project's context: what the engine's lower layers need of it, and nothing more.

Its paths (project, data dir, memory root), its config, the store and index of its memories, the
clock, its locks (the memory root's, each triage's claim) and the log of what memcurate wrote. The
Engine (curator/engine.py) is a Context with the verbs front ends call; the modules below it take a
Context, typed so, so they cannot call back up into those verbs (mypy checks it in CI).
"""

from __future__ import annotations

import os
import threading

from memcurate.curator import config
from memcurate.curator.util.atomic import append_line, read_json, write_json
from memcurate.curator.util.locks import FileLock, SharedLock
from memcurate.curator.util.paths import (
    ARCHIVE_DIR,
    ROOT_LOCK_NAME,
    check_saving,
    data_dir,
    resolve_memory_root,
)
from memcurate.curator.util.stamps import now_iso

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memcurate.curator.settings import Settings

REJECTED = "rejected.json"
WRITTEN = "written.log"


class Context:
    def __init__(self, project, *, cfg: dict | None = None, drafter=None, clock=None) -> None:
        from memcurate.curator.memory.index import MemoryIndex
        from memcurate.curator.memory.index.schema import INDEX_FILE
        from memcurate.curator.memory.store import MemoryStore

        self.project = os.path.abspath(os.fspath(project))
        self.data = data_dir(self.project)
        self.cfg = cfg if cfg is not None else config.load(self.project, self.data)
        # Derived from the repository (or set by config / autoMemoryDirectory), never from a hook payload.
        self.location = resolve_memory_root(self.project, self.cfg, self.data)
        self.root = self.location["path"]
        self.store = MemoryStore(self.root)
        self.index = MemoryIndex(os.path.join(self.data, INDEX_FILE), self.store)
        self._drafter = drafter
        self.now = clock or now_iso
        # Locks held by one thread at a time, re-entrant in it: the TUI's workers share this engine.
        # triage id -> its claim's lock (candidate.Claim), while a claim uses it: a long-running engine
        # (the TUI's, its pipeline's) keeps none for the triages it is done with.
        self.claims: dict[str, SharedLock] = {}
        self._claim_users: dict[str, int] = {}
        self._claims_mutex = threading.Lock()
        self._root_lock = SharedLock(os.path.join(self.root, ROOT_LOCK_NAME))
        # an older memcurate's archive moved on the first locked write
        self._archive_checked = False

    # -- parts ------------------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        """The config's typed, read-only view (curator/settings.py)."""
        from memcurate.curator.settings import settings

        return settings(self.cfg)

    @property
    def drafter(self):
        """The drafter this project drafts with: the one handed in (tests), else the config's, built when
        first needed (by the Engine: the drafting layer sits above this one)."""
        if self._drafter is None:
            self._drafter = self._new_drafter()
        return self._drafter

    def _new_drafter(self):
        raise NotImplementedError("a bare Context has no drafter: hand one in, or build an Engine")

    def target_state(self, category: str, memory_id: str, base_hash: str | None) -> dict:
        """Whether the memory an UPDATE/DELETE was based on still exists unchanged; for a file that
        changed, `unreadable` says why it is no memory any more (not UTF-8, broken front matter...)."""
        from memcurate.curator.memory.store import (
            BrokenMemoryError,
            MissingMemoryError,
            content_hash,
        )

        path = self.store.locate(category, memory_id)
        state = {
            "exists": True,
            "hash_matches": False,
            "path": path,
            "where": self.store.relpath(path),
        }
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

    def root_lock(self, wait: float = 30.0):
        """The memory root's lock (decide-and-save runs under it), as a context manager: re-entrant in
        the thread holding it; another thread of this engine waits for it like another process. Every
        save takes it, so it is where saving into a root Claude never loads is refused."""
        self.check_saving()
        return _MovingArchive(self, self._root_lock.held(wait))

    def move_old_archive(self) -> None:
        """Once per engine, under the root's lock: an older memcurate's archive moved into `.archive/`,
        out of Claude Code's recall (memory/archive_layout.py). A failure is logged: the save goes on."""
        if self._archive_checked:
            return
        self._archive_checked = True
        from memcurate.curator.memory import archive_layout
        from memcurate.curator.util.log import log_line

        try:
            moved, left = archive_layout.migrate(self.root)
        except OSError as e:
            log_line(self.data, "archive", f"could not move the older layout: {e}")
            return
        if moved or left:  # the index sees it: the category folders changed
            log_line(
                self.data,
                "archive",
                f"moved {len(moved)} file(s) into {ARCHIVE_DIR}/"
                + (f"; left {', '.join(left)} (other bytes already there)" if left else ""),
            )

    def enter_claim(self, triage_id: str, path: str) -> SharedLock:
        """The lock of a triage's claim (`path`), one per triage for all the threads of this engine,
        counted as used until `leave_claim`."""
        with self._claims_mutex:
            lock = self.claims.get(triage_id)
            if lock is None:
                lock = self.claims[triage_id] = SharedLock(path)
            self._claim_users[triage_id] = self._claim_users.get(triage_id, 0) + 1
            return lock

    def leave_claim(self, triage_id: str) -> None:
        """One claim done with the lock: the last one lets it go (no thread holds or waits for it)."""
        with self._claims_mutex:
            left = self._claim_users[triage_id] - 1
            if left:
                self._claim_users[triage_id] = left
            else:
                del self._claim_users[triage_id], self.claims[triage_id]

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
        from memcurate.curator.memory.store import content_hash

        append_line(os.path.join(self.data, WRITTEN), f"{content_hash(text)} {path}\n".encode())

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

    def close(self) -> None:
        self.index.close()


class _MovingArchive:
    """Context.root_lock's context: the lock held, then (once) the older archive layout moved."""

    def __init__(self, context: Context, held) -> None:
        self.context, self.held = context, held

    def __enter__(self):
        lock = self.held.__enter__()
        try:
            self.context.move_old_archive()
        except BaseException:
            self.held.__exit__(None, None, None)
            raise
        return lock

    def __exit__(self, *exc) -> None:
        self.held.__exit__(*exc)
