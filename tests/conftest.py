"""Shared fixtures. Tests never touch the real home: HOME, CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME and
XDG_STATE_HOME point at temporary folders for every test (DESIGN §4)."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SHARED_TRANSCRIPTS = ROOT.parent / "shared" / "transcripts"


def _memoize_yaml_parsing() -> None:
    """Parse each distinct YAML text once per test session: yaml.safe_load (pure Python here) costs ~0.1 s
    for config.default.yaml, and every in-process config.build reads it again. A parse is a pure function
    of its text, so a deep copy of the first result is what a fresh parse returns; errors are not cached
    (they raise again), and streams other than str go through untouched."""
    parse = yaml.safe_load
    parsed: dict[str, object] = {}

    def safe_load(stream):
        if not isinstance(stream, str):
            return parse(stream)
        if stream not in parsed:
            parsed[stream] = parse(stream)
        return copy.deepcopy(parsed[stream])

    yaml.safe_load = safe_load


def _memoize_config_builds() -> None:
    """Build each distinct set of config layers once per test session: config.build derives the triage's
    keyword sets (~0.1 s) on every call, and in-process tests build the same defaults hundreds of times.
    The key is every layer's path and bytes (build reads nothing else), the result a deep copy; a layer
    that fails to build raises again, as nothing is cached for it."""
    from memcurate.curator import config

    build = config.build
    built: dict[tuple, dict] = {}

    def layer(path: str) -> bytes | None:
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError:
            return None

    def memoized(paths: list[str]) -> dict:
        key = tuple((str(p), os.path.isfile(p), layer(p)) for p in paths)
        if key not in built:
            built[key] = build(paths)
        return copy.deepcopy(built[key])

    config.build = memoized


_memoize_yaml_parsing()
_memoize_config_builds()


CARDS_SAVED = "auto_approve:\n  offline_cards: true\n"  # the user layer's opt-in (see isolated_home)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))  # install's backups of user settings
    # What Claude Code sets for its hooks and sessions must not leak in from a session running the tests.
    # The SessionEnd hook starts a detached `memcurate check` (hooks/hygiene.py) that writes into the data
    # dir whenever it gets to it: off for every test (the user's config layer), on where a test says so.
    user_config = home / ".config" / "memcurate" / "config.yaml"
    user_config.parent.mkdir(parents=True)
    # The suite's tests of saving draft offline, the offline drafter standing in for a model: they opt in to
    # saving offline cards unattended; tests/test_offline_cards.py takes it out to test the default (held).
    user_config.write_text(f"hygiene:\n  interval_minutes: 0\n{CARDS_SAVED}")
    for name in ("MEMCURATE_CHILD", "ANTHROPIC_API_KEY", "CLAUDE_PROJECT_DIR", "CLAUDE_CODE_DISABLE_AUTO_MEMORY"):
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
    exe = shutil.which("memcurate", path=os.path.dirname(sys.executable)) or shutil.which("memcurate")
    return [exe] if exe else [sys.executable, "-m", "memcurate.curator.cli"]


def run_hook(payload, *, cwd: Path, env: dict | None = None, raw: bytes | None = None,
             timeout: float = 60, args: list[str] = ()) -> subprocess.CompletedProcess:
    """Run the real `memcurate hook [args]` process with `payload` (or `raw` bytes) on stdin."""
    data = raw if raw is not None else json.dumps(payload).encode()
    return subprocess.run(memcurate_exe() + ["hook", *args], input=data, cwd=cwd, capture_output=True,
                          env={**os.environ, **(env or {})}, timeout=timeout)


def run_cli(*args: str, cwd: Path, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(memcurate_exe() + list(args), cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout)
