"""Shared by the TUI tests: an app on a tmp project, and waiting for its work without sleeping."""

from __future__ import annotations

import asyncio
from pathlib import Path

from scenarios import engine_factory

from memcurate.curator.drafting import DraftingStatus
from memcurate.widgets.app import MemcurateApp, make_app

BACKGROUND = ("watch", "pipeline")  # groups that run for the app's whole life
FIXED_NOW = 1795000000.0  # 2026-11-18: ages on screen do not move
# What the backend line says in tests (the real one names the machine's PATH and the SDK's table).
FIXED_DRAFTING = DraftingStatus(
    configured="offline",
    backend="offline",
    why="",
    executable="",
    available=True,
    unavailable="",
    models={},
    line="drafting: offline — backend: offline; models: none (the offline drafter uses no model)",
)


def tui(project: Path, memory: Path, **kw) -> MemcurateApp:
    kw.setdefault("watch", False)
    kw.setdefault("clock", lambda: FIXED_NOW)
    kw.setdefault("subtitle", "project")
    kw.setdefault("drafting", lambda: FIXED_DRAFTING)
    drafter = kw.pop("drafter", None)
    return make_app(project, engine_factory=engine_factory(project, memory, drafter), **kw)


async def settle(pilot, rounds: int = 200) -> None:
    """Wait until the app has nothing left to do: no load, detail, budgets or review worker running,
    the pipeline waiting for work, and no reload pending. Awaits workers; never sleeps."""
    app = pilot.app
    for _ in range(rounds):
        await pilot.pause()
        busy = [w for w in app.workers if w.group not in BACKGROUND and w.is_running]
        if busy:
            # An exclusive worker (selection, budgets) may be cancelled by the next one meanwhile: not an error.
            await asyncio.gather(*(w.wait() for w in busy), return_exceptions=True)
            continue
        if app._loading or app._dirty is None or app._dirty:
            continue
        if app.pipeline_enabled and not app.pipeline_idle.is_set():
            await pilot.pause(0.01)
            continue
        await pilot.pause()
        if not any(w.group not in BACKGROUND and w.is_running for w in app.workers):
            return
    raise AssertionError("the app did not settle")


async def until(pilot, predicate, what: str, rounds: int = 400, step: float = 0.05) -> None:
    """Await (bounded: `rounds` pauses of `step` s) until `predicate()` holds, for what another
    process or the app's watcher does on its own clock; settles once it holds."""
    for _ in range(rounds):
        if predicate():
            await settle(pilot)
            return
        await pilot.pause(step)
    raise AssertionError(f"timed out waiting for {what}")


async def watching(pilot) -> None:
    """Await until the app's watcher reports changes (it starts in a thread after mount): touch a
    probe file in the memory root until a StagingChanged for it reaches the app."""
    from memcurate.widgets.messages import StagingChanged

    app = pilot.app
    seen = []
    post = app.post_message

    def spy(message):
        if isinstance(message, StagingChanged) and message.memory:
            seen.append(message)
        return post(message)

    app.post_message = spy
    probe = Path(app.engine.root) / ".watch-probe"
    try:
        for n in range(200):
            probe.parent.mkdir(parents=True, exist_ok=True)
            probe.write_text(str(n))
            for _ in range(10):
                await pilot.pause(0.02)
                if seen:
                    return
        raise AssertionError("the app's watcher never reported a change")
    finally:
        app.post_message = post
        probe.unlink(missing_ok=True)
        await settle(pilot)
