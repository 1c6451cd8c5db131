"""Shared by the TUI tests: an app on a tmp project, and waiting for its work without sleeping."""

from __future__ import annotations

from pathlib import Path

from curator.engine import Engine
from widgets.app import MemcurateApp, make_app

BACKGROUND = ("watch", "pipeline")  # groups that run for the app's whole life
FIXED_NOW = 1795000000.0  # 2026-11-18: ages on screen do not move


def engine_factory(project: Path, memory: Path, drafter=None):
    """Engines over `project` with an offline config whose memory root is `memory`."""
    (project / ".claude").mkdir(parents=True, exist_ok=True)
    cfg = project / ".claude" / "memcurate.yaml"
    if not cfg.exists():
        cfg.write_text(f"backend: offline\nmemory:\n  root: {memory}\ndrafting:\n  backoff_seconds: 0.0\n")
    return lambda: Engine(project, clock=lambda: "2026-11-22T10:04:00Z", drafter=drafter)


def tui(project: Path, memory: Path, **kw) -> MemcurateApp:
    kw.setdefault("watch", False)
    kw.setdefault("clock", lambda: FIXED_NOW)
    kw.setdefault("subtitle", "project")
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
            await app.workers.wait_for_complete(busy)
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
