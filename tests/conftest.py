"""Shared fixtures. Tests never touch the real home: HOME, CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME and
XDG_STATE_HOME point at temporary folders for every test (DESIGN §4)."""

from __future__ import annotations

import fcntl
import gc
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_TRANSCRIPTS = ROOT.parent / "shared" / "transcripts"
TESTS = ROOT / "tests"
DATA = TESTS / "data"
# The suite's layers: engine (no Textual), tui (Pilot), snapshots (a few deterministic screens); contract is a
# package. Their modules share helpers across folders (`from test_engine import stage`): every folder is on
# the path from the start, so an import does not depend on which folder pytest collected first.
LAYERS = ("engine", "tui", "snapshots")
for _layer in LAYERS:
    if str(TESTS / _layer) not in sys.path:
        sys.path.insert(0, str(TESTS / _layer))


# -- tests that must run alone -------------------------------------------------------------------------
# The suite runs on two xdist workers per core (pyproject's addopts, pytest_xdist_auto_num_workers). A test
# marked `serial` measures time or otherwise needs the machine to itself: while it runs (setup, call and
# teardown), no other worker runs a test.
# Every test takes the run's lock shared, a serial one exclusively; a serial test first closes a gate that
# the others pass on their way to the lock, so they cannot keep it shared forever by taking turns.


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers per core. A test mostly waits (memcurate processes, pseudo-terminals, Textual's
    timers): on two cores, four workers ran the suite in 5.2 minutes where two took 6.7."""
    return 2 * len(os.sched_getaffinity(0))


# The cycle collector in a process that runs tests (a worker, or a run without xdist). A Pilot test leaves an
# app's worth of cycles; at the default thresholds (700, 10, 10) a worker walked its whole heap about once a
# test: ~22 % of the TUI tests' CPU. Rarer passes and the collected modules frozen (pytest_collection_finish)
# leave ~6 %. A test's cycles are collected after its teardown (pytest_runtest_teardown); memcurate's
# processes keep their own settings.
COLLECTOR_THRESHOLDS = (10_000, 10, 10)


def pytest_configure(config: pytest.Config) -> None:
    """Before the workers start, compile memcurate's modules once (see _compile_memcurate) and rewrite
    every test module's asserts once, into pytest's own cache. Each worker would otherwise rewrite all
    ~200 modules itself (~8 s of CPU each, four workers at once, before any test runs); it reads the
    cache even where bytecode is not written. Every process that runs tests collects cycles less often
    (COLLECTOR_THRESHOLDS)."""
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
    if not hasattr(config, "workerinput"):
        _compile_memcurate()
    workers = getattr(config.option, "numprocesses", None)
    if hasattr(config, "workerinput") or not workers or config.getoption("assertmode") != "rewrite":
        return
    import multiprocessing

    from _pytest.assertion import rewrite

    global _CONFIG
    _CONFIG = config
    stale = []
    for fn in sorted(TESTS.rglob("*.py")):
        if "node_modules" in fn.parts or not fn.name.startswith(("test_", "conftest")):
            continue
        pyc = rewrite.get_cache_dir(fn) / (fn.name[:-3] + rewrite.PYC_TAIL)
        if rewrite._read_pyc(fn, pyc) is None:
            stale.append(fn)
    if stale:
        # forked, so each child has this run's config; a failure only leaves a module to the workers
        with multiprocessing.get_context("fork").Pool(len(os.sched_getaffinity(0))) as pool:
            pool.map(_rewrite_one, stale, chunksize=4)


_CONFIG: pytest.Config | None = None


def _compile_memcurate() -> None:
    """Write the bytecode of memcurate's packages, as pip does for an installed copy. Where
    PYTHONDONTWRITEBYTECODE is set (as on the machines this suite runs on) a checkout's modules would
    otherwise be compiled again by every worker and every `memcurate` process a test starts (about
    0.15 s of CPU each; test_memory_root.py and test_review_cli.py took 45 s of CPU, 32 s with this).
    Python still reads bytecode with the variable set."""
    import compileall

    for package in ("curator", "hooks", "widgets"):
        compileall.compile_dir(ROOT / package, quiet=2, workers=len(os.sched_getaffinity(0)))


def _rewrite_one(fn: Path) -> None:
    from _pytest.assertion import rewrite

    try:
        source_stat, co = rewrite._rewrite_test(fn, _CONFIG)
        cache = rewrite.get_cache_dir(fn)
        cache.mkdir(exist_ok=True)
        pyc = cache / (fn.name[:-3] + rewrite.PYC_TAIL)
        tmp = f"{pyc}.{os.getpid()}"
        with open(tmp, "wb") as fp:
            rewrite._write_pyc_fp(fp, source_stat, co)
        os.replace(tmp, pyc)
    except Exception:  # left to the worker, which rewrites it itself and reports what is wrong
        pass


def pytest_collection_finish(session: pytest.Session) -> None:
    """What the collection imported (textual, memcurate, ~200 test modules) lives as long as the process:
    frozen, the collector's full passes no longer walk it (as the app freezes its start, widgets/app.py)."""
    gc.collect()
    gc.freeze()


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    """Once a test's own cleanup is done, its cycles are collected and what is still alive (modules it
    imported, caches) frozen with the rest: each pass then walks one test's objects, never the process's.
    Over test_tui and test_tui_library, 3.1-3.5 s in the collector where automatic passes took 4.7-5.2;
    the engine's short tests cost the same. It also keeps the process's objects frozen where a test hands
    them back to the collector (gc.unfreeze(), after an app froze its start)."""
    try:
        return (yield)
    finally:
        gc.collect()
        gc.freeze()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow layers first (Pilot, snapshots, the real Claude Code: seconds a test), then the engine's
    many short tests: workers hand out tests in this order, so the last minute is not one worker finishing
    a TUI test while the others wait."""
    slow = (TESTS / "tui", TESTS / "snapshots", TESTS / "contract")
    items.sort(key=lambda item: not any(item.path.is_relative_to(d) for d in slow))


def _run_lock(config: pytest.Config) -> str | None:
    """The lock file this run's workers share (in the run's base temp folder); None for a serial run."""
    if not hasattr(config, "workerinput"):
        return None
    return os.path.join(os.path.dirname(config.option.basetemp), "serial.lock")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    path = _run_lock(item.config)
    if path is None:
        return (yield)
    alone = item.get_closest_marker("serial") is not None
    with open(path + ".gate", "a") as gate, open(path, "a") as lock:
        fcntl.flock(gate, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        if not alone:
            fcntl.flock(gate, fcntl.LOCK_UN)
        fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        return (yield)  # closing the files lets both locks go


# The tests that import the Anthropic SDK (~2 s of CPU a process, its types): on one worker, which imports it
# once, not once on every worker (loadgroup keeps a group's tests on one worker).
ANTHROPIC_SDK = pytest.mark.xdist_group("anthropic-sdk")


# the user layer's opt-in (see isolated_home)
CARDS_SAVED = "auto_approve:\n  offline_cards: true\n"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    # install's backups of user settings
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    # What Claude Code sets for its hooks and sessions must not leak in from a session running the tests.
    # The SessionEnd hook starts a detached `memcurate check` (hooks/hygiene.py) that writes into the data
    # dir whenever it gets to it: off for every test (the user's config layer), on where a test says so.
    user_config = home / ".config" / "memcurate" / "config.yaml"
    user_config.parent.mkdir(parents=True)
    # The suite's tests of saving draft offline, the offline drafter standing in for a model: they opt in to
    # saving offline cards unattended; tests/engine/test_offline_cards.py takes it out to test the default (held).
    user_config.write_text(f"hygiene:\n  interval_minutes: 0\n{CARDS_SAVED}")
    for name in (
        "MEMCURATE_CHILD",
        "ANTHROPIC_API_KEY",
        "CLAUDE_PROJECT_DIR",
        "CLAUDE_CODE_DISABLE_AUTO_MEMORY",
    ):
        monkeypatch.delenv(name, raising=False)
    return home


def claude_transcripts(key: str = "-home-dev-app") -> Path:
    """A folder where Claude Code keeps a project's transcripts: `$CLAUDE_CONFIG_DIR/projects/<key>`
    (the only place, with the project itself, that the hook reads transcripts from)."""
    d = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / key
    d.mkdir(parents=True, exist_ok=True)
    return d


def shared_transcripts() -> list[Path]:
    """Every .jsonl in ../shared/transcripts (empty when the folder is absent)."""
    if not SHARED_TRANSCRIPTS.is_dir():
        return []
    return sorted(SHARED_TRANSCRIPTS.rglob("*.jsonl"))


needs_shared = pytest.mark.skipif(
    not SHARED_TRANSCRIPTS.is_dir(),
    reason=f"real transcripts not found at {SHARED_TRANSCRIPTS} (they sit beside the checkout in CI)",
)


def shared(rel: str) -> Path:
    return SHARED_TRANSCRIPTS / rel


def shared_config_env(tmp_path: Path) -> dict:
    """An environment whose Claude config dir has the shared transcripts as its projects folder
    (a symlink), so the hook reads them in place, as it reads Claude Code's own."""
    config = tmp_path / "claude-shared"
    config.mkdir(exist_ok=True)
    if not (config / "projects").exists():
        (config / "projects").symlink_to(SHARED_TRANSCRIPTS.resolve(), target_is_directory=True)
    return {"CLAUDE_CONFIG_DIR": str(config)}


@pytest.fixture
def project(tmp_path) -> Path:
    """An empty git-root project folder."""
    p = tmp_path / "project"
    (p / ".git").mkdir(parents=True)
    return p


def memcurate_exe() -> list[str]:
    """The installed console script when there is one, else the module (same code)."""
    exe = shutil.which("memcurate", path=os.path.dirname(sys.executable)) or shutil.which(
        "memcurate"
    )
    return [exe] if exe else [sys.executable, "-m", "memcurate.curator.cli"]


def run_hook(
    payload,
    *,
    cwd: Path,
    env: dict | None = None,
    raw: bytes | None = None,
    timeout: float = 60,
    args: list[str] = (),
) -> subprocess.CompletedProcess:
    """Run the real `memcurate hook [args]` process with `payload` (or `raw` bytes) on stdin."""
    data = raw if raw is not None else json.dumps(payload).encode()
    return subprocess.run(
        memcurate_exe() + ["hook", *args],
        input=data,
        cwd=cwd,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


def run_cli(
    *args: str, cwd: Path, env: dict | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    return subprocess.run(
        memcurate_exe() + list(args),
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )
