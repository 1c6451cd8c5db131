"""A share of a check's work done in a forked child while the parent does the rest: a check at 10,000
memories is mostly per-memory and per-pair work, and a machine has two cores or more.

The child is a fork, so it reads what the parent has built (memories, their words) without a copy
or a pickle; only its result comes back through a pipe, pickled. Nothing is cached on disk: what the
child computes lives as long as the check. The same work runs in the parent instead (`serial`) with
one CPU or every core busy (the load average), a small store (forking costs more than it saves), no
`fork` on the platform, or other threads running (the TUI calls the engine from worker threads: a fork copies their locks held).

What the child raises is raised again in the parent (a bug is a bug, an OSError is the detector's
error as it is serially); a child that dies without a result is a WorkerError: never a silent miss.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import traceback
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from memcurate.curator.errors import MemcurateError
from memcurate.curator.util.cores import free_core

T = TypeVar("T")
A = TypeVar("A")
B = TypeVar("B")

MIN_ITEMS = 500  # below this many memories a fork costs more than the half of the work it takes


class WorkerError(MemcurateError):
    """A check's forked child ended without its result (killed, or its result could not be sent): the
    work it had is not done, so the check says so instead of reporting less."""


def worth_it(items: int) -> bool:
    """Whether `items` memories' work is shared with a forked child (see the module's docstring)."""
    return items >= MIN_ITEMS and free_core()


class Child(Generic[T]):
    """`fn()` running in a forked child; `result()` waits for it and gives what it returned. Used as a
    context manager: a child whose result is not asked for (the parent's share raised) is killed."""

    def __init__(self, fn: Callable[[], T]) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: compute, send, leave without the parent's exit handlers
            try:
                os.close(read)
                # short-lived: the collector's passes would only copy the parent's pages
                gc.disable()
                _send(write, fn)
            finally:
                os._exit(0)
        os.close(write)
        self._pid, self._read = pid, read
        self._done = False

    def __enter__(self) -> Child[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._done:
            os.kill(self._pid, signal.SIGKILL)
            self._reap()

    def _reap(self) -> int:
        self._done = True
        os.close(self._read)
        return os.waitpid(self._pid, 0)[1]

    def result(self) -> T:
        chunks = []
        try:
            while chunk := os.read(self._read, 1 << 20):
                chunks.append(chunk)
        finally:
            status = self._reap()
        data = b"".join(chunks)
        if not data:
            raise WorkerError(f"a check's worker process ended without its result ({_how(status)})")
        ok, value = pickle.loads(data)
        if not ok:
            raise value
        return value


def _send(fd: int, fn: Callable[[], object]) -> None:
    """`fn()`'s result (or what it raised) pickled to `fd`; a result that cannot be pickled as an error."""
    try:
        try:
            data = pickle.dumps((True, fn()), pickle.HIGHEST_PROTOCOL)
        except BaseException as e:  # noqa: BLE001 (all of it goes back to the parent)
            try:
                data = pickle.dumps((False, e), pickle.HIGHEST_PROTOCOL)
            except Exception:  # an exception that does not pickle: its text
                text = "".join(traceback.format_exception_only(type(e), e)).strip()
                data = pickle.dumps((False, WorkerError(f"a check's worker failed: {text}")))
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


def share(
    items: list, here: Callable[[Any], A], there: Callable[[Any], B]
) -> tuple[list[A], list[B]]:
    """`items` worked through by this process (`here`, from the front) and a forked child (`there`, from
    the back), each taking the next one until they meet: `here`'s results for `items[:k]` and `there`'s
    for `items[k:]`. With a fixed half each, a check's parent waited 57-444 ms on its memos child
    (copy-on-write faults, the packing, the machine's load); now it waits only for what sending the
    child's results costs (~0.1 s at 10,000 memories).

    Each side claims an item in a shared word (its count) before working on it, after reading the other's:
    claims only grow, so no item is left by both; when both read before the other wrote, the one they
    meet at is worked on twice and the child's result for it dropped."""
    import mmap

    n = len(items)
    if not n:
        return [], []
    claims = memoryview(mmap.mmap(-1, 16)).cast("q")  # [taken from the front, taken from the back]
    # the last item is the child's from the start: it always has one (and what it raises is raised)
    claims[1] = 1

    def child() -> tuple[int, list[B]]:
        out = [there(items[n - 1])]
        j = n - 2
        while j >= claims[0]:
            claims[1] = n - j
            out.append(there(items[j]))
            j -= 1
        out.reverse()
        return j + 1, out

    with Child(child) as worker:
        mine: list[A] = []
        for i in range(n):
            if i >= n - claims[1]:
                break
            claims[0] = i + 1
            mine.append(here(items[i]))
        low, theirs = worker.result()
    if low > len(mine):  # (cannot happen: claims only grow) never a result given for the wrong item
        raise WorkerError(f"a check's worker skipped items {len(mine)}..{low - 1}")
    return mine, theirs[len(mine) - low :]
