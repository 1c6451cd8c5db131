"""The drafting worker: every staged triage no other process holds, drafted in this app's `pipeline` worker.

The app starts `Pipeline.run` in its own thread worker (group `pipeline`) once the engine is up, wakes it
when a load shows a triage with work in it, and stops it on unmount. The loop builds its own Engine (the
person's actions keep theirs), posts what it does as messages (PipelineEvent; ActionDone when a triage
fails) and never touches a widget.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.message import Message

from memcurate.curator.candidates import staging
from memcurate.curator.util.locks import LockBusy

from .messages import SAID, ActionDone

if TYPE_CHECKING:
    from memcurate.curator.engine import Engine

# states the pipeline has work in
WAITING = frozenset(("triaged", *staging.IN_FLIGHT))
# how often a quitting app is noticed while a triage is drafted (seconds)
QUIT_POLL = 0.1


class PipelineEvent(Message):
    """A category of a triage moved (drafting, drafted, ready, failed) in this app's pipeline."""

    def __init__(self, tid: str, category: str, state: str) -> None:
        super().__init__()
        self.tid, self.category, self.state = tid, category, state


class _Quitting(Exception):
    """The app is quitting while a triage is being drafted: the pipeline worker leaves it."""


class Pipeline:
    """The loop the `pipeline` worker runs. `stop` is the app's (set on unmount); `wake` says a load saw
    work; `idle` is set while the loop waits for work (tests await it)."""

    def __init__(
        self,
        engine_factory: Callable[[], Engine],
        post: Callable[[Message], object],
        stop: threading.Event,
    ) -> None:
        self.engine_factory, self.post, self.stop = engine_factory, post, stop
        self.work = threading.Event()  # something to look at
        self.idle = threading.Event()

    def wake(self) -> None:
        self.work.set()

    def run(self) -> None:
        """Draft every triage no other process holds; a killed holder's work is picked up too."""
        import sqlite3  # the index verification reads: loaded with the engine

        engine = self.engine_factory()
        abandoned = False
        try:
            while not self.stop.is_set():
                if not self.work.is_set():
                    self.idle.set()
                self.work.wait()
                self.idle.clear()
                self.work.clear()
                try:
                    tids = engine.pending()
                except OSError:
                    continue  # the load worker reports an unreadable staging dir
                for tid in tids:
                    if self.stop.is_set():
                        return
                    try:
                        states = {c.state for c in engine.candidates(tid).values()}
                        if "approved" in states:  # a save a killed process left half-done
                            engine.resume(tid)
                        # no candidate yet: its second look is due
                        if states & WAITING or not states:
                            self._process(engine, tid)
                    except _Quitting:
                        abandoned = True
                        return
                    except LockBusy:
                        pass  # another process holds it: its progress shows through the watcher
                    except staging.StagingError:
                        pass  # shown as an error row
                    # one triage's trouble must not stop the others
                    except (*SAID, sqlite3.Error) as e:
                        self.post(ActionDone(f"drafting {tid} failed: {e}", {tid}, "error"))
        finally:
            if not abandoned:  # else its thread may still use it, until the process ends
                engine.close()

    def _process(self, engine: Engine, tid: str) -> None:
        """`engine.process(tid)` in a daemon thread that this worker waits on. A model call can take
        minutes, and a worker's thread is joined when the app exits (asyncio's default executor): on
        quit the call is abandoned instead (_Quitting), and cli._leave ends the process without it;
        what it leaves half-done in staging is resumed by the next run, as after any killed process."""
        done, outcome = threading.Event(), []

        def call() -> None:
            try:
                engine.process(
                    tid, on_event=lambda e: self.post(PipelineEvent(e.triage, e.category, e.state))
                )
            except BaseException as e:  # handed to the worker, which says what went wrong
                outcome.append(e)
            finally:
                done.set()

        threading.Thread(target=call, name=f"memcurate-process-{tid}", daemon=True).start()
        while not done.wait(QUIT_POLL):
            if self.stop.is_set():
                raise _Quitting
        if outcome:
            raise outcome[0]
