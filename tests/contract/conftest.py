"""Fixtures for the contract suite: the real Claude Code, pinned in package.json, in print mode against
the scripted Messages API (api.py), with memcurate installed into a private config dir.

The binary is tests/contract/node_modules/@anthropic-ai/claude-code/bin/claude.exe (`npm ci --prefix
tests/contract`; where npm skipped its postinstall, the platform package's `claude` beside it), or
`MEMCURATE_CLAUDE_BIN` to check another release (its version is then not compared with the pin). Without it every test skips with the same reason, except where
`MEMCURATE_CONTRACT=required` (.ci/run): there a missing binary fails it, so CI never passes by skipping.

Each run gets a clean environment: the private HOME, CLAUDE_CONFIG_DIR and XDG folders the suite's
autouse `isolated_home` made, telemetry, nonessential traffic and the auto-updater off, `IS_SANDBOX=1`
so bypass mode is allowed as root, and a PATH whose `memcurate` is a shim (SHIM) of the venv's: install
run through it writes the shim's path into the hooks, and it records each hook's payload, output and exit
code around the command `memcurate install` writes (the venv's interpreter running the CLI). The hooks log into the project's data dir: `Run.memcurate_log`.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from contract.api import ScriptedAPI, Turn
from memcurate.curator import hook_entries
from memcurate.curator.util.log import read_log
from memcurate.curator.util.paths import data_dir

HERE = Path(__file__).resolve().parent
PINNED_BIN = HERE / "node_modules" / "@anthropic-ai" / "claude-code" / "bin" / "claude.exe"
PINNED_VERSION = json.loads((HERE / "package.json").read_text())["dependencies"][
    "@anthropic-ai/claude-code"
]
REQUIRED = os.environ.get("MEMCURATE_CONTRACT") == "required"
RUN_TIMEOUT = 90  # one print-mode run; a scripted one takes a few seconds
# memcurate's config for these runs: drafting offline (no model of memcurate's own is reachable, and the
# scripted API must see Claude Code's requests only), hygiene's detached check off.
CONTRACT_CONFIG = (
    "backend: offline\nhygiene:\n  interval_minutes: 0\nauto_approve:\n  offline_cards: true\n"
)


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", "contract: drives the real Claude Code (tests/contract, package.json pin)"
    )


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.contract)


def _version_problem(path: str) -> str | None:
    """Why `path` is not the pinned Claude Code (None when it is)."""
    if not os.access(path, os.X_OK):
        return f"{path} is not installed"
    try:
        out = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
            env={
                "PATH": "/usr/bin:/bin",
                "HOME": os.environ.get("HOME", "/tmp"),
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_TELEMETRY": "1",
            },
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{path} --version did not answer: {e}"
    if out.returncode != 0:
        return (
            f"{path} --version exited {out.returncode}: {(out.stderr or out.stdout).strip()[:300]}"
        )
    if not os.environ.get("MEMCURATE_CLAUDE_BIN") and not out.stdout.startswith(
        PINNED_VERSION + " "
    ):
        return f"{path} is {out.stdout.strip()!r}, package.json pins {PINNED_VERSION}: run npm ci again"
    return None


def find_claude() -> tuple[str, str | None]:
    """The binary to drive and, when none can be driven, why. bin/claude.exe is a stub until the package's
    postinstall links the platform's binary in (npm may skip install scripts): the platform package's own
    binary, installed beside it, is the same file."""
    if os.environ.get("MEMCURATE_CLAUDE_BIN"):
        chosen = os.environ["MEMCURATE_CLAUDE_BIN"]
        return chosen, _version_problem(chosen)
    candidates = [
        str(PINNED_BIN),
        *sorted(
            str(p) for p in (HERE / "node_modules" / "@anthropic-ai").glob("claude-code-*/claude")
        ),
    ]
    problems = []
    for path in candidates:
        problem = _version_problem(path)
        if problem is None:
            return path, None
        problems.append(problem)
    return str(PINNED_BIN), (
        f"the real Claude Code {PINNED_VERSION} is not installed "
        f"(run `npm ci --prefix tests/contract --no-audit --no-fund`): {'; '.join(problems)}"
    )


@pytest.fixture(scope="session")
def claude_bin() -> str:
    """The real Claude Code, or a skip that says how to get it (a failure where MEMCURATE_CONTRACT=required)."""
    chosen, missing = find_claude()
    if missing:
        if REQUIRED:
            pytest.fail(f"MEMCURATE_CONTRACT=required: {missing}", pytrace=False)
        pytest.skip(missing)
    return chosen


@pytest.fixture
def claude_home(isolated_home) -> Path:
    """The private HOME (its .claude is CLAUDE_CONFIG_DIR), with memcurate's contract config."""
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "memcurate" / "config.yaml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(CONTRACT_CONFIG)
    Path(os.environ["CLAUDE_CONFIG_DIR"]).mkdir(parents=True, exist_ok=True)
    return isolated_home


def git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(folder), *args],
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "dev",
            "GIT_AUTHOR_EMAIL": "dev@example.com",
            "GIT_COMMITTER_NAME": "dev",
            "GIT_COMMITTER_EMAIL": "dev@example.com",
        },
    )


def make_project(folder: Path) -> Path:
    """A git project with one commit (Claude Code reads its git status into the first request)."""
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q", "-b", "main")
    (folder / "README.md").write_text("# notes app\n")
    git(folder, "add", "README.md")
    git(folder, "commit", "-q", "-m", "init")
    return folder.resolve()


@pytest.fixture
def cproject(tmp_path, claude_home) -> Path:
    """A git project folder for Claude Code to run in."""
    return make_project(tmp_path / "notes-app")


@pytest.fixture
def shim(tmp_path) -> Path:
    """The `memcurate` the runs use (SHIM below): first on their PATH, and the command install writes."""
    path = tmp_path / "bin" / "memcurate"
    path.parent.mkdir()
    real = hook_entries.interpreter_entry(sys.executable)
    path.write_text(SHIM.format(python=sys.executable, real=real))
    path.chmod(0o755)
    return path


@pytest.fixture
def mc(shim, claude_home):
    """mc(*args, project=DIR, check=True): the memcurate CLI as a person runs it, in the private home."""

    def run(*args: str, project: Path, check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run(
            [str(shim), *args],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=120,
            env=clean_env({"PATH": f"{shim.parent}:{clean_env()['PATH']}"}),
        )
        if check and p.returncode != 0:
            raise AssertionError(
                f"memcurate {shlex.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}"
            )
        return p

    return run


@pytest.fixture
def installed(cproject, mc) -> Path:
    """The project with memcurate's hooks installed (`memcurate install`, local scope)."""
    mc("install", "--project", str(cproject), project=cproject)
    return cproject


def clean_env(extra: dict | None = None) -> dict:
    """Only what a run needs: nothing of the session running the tests leaks into Claude Code."""
    env = {
        name: os.environ[name]
        for name in ("HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME")
    }
    env.update(
        PATH=f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        LANG="C.UTF-8",
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        IS_SANDBOX="1",
    )
    # a worktree's code first, also for the hooks Claude Code starts
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    env.update(extra or {})
    return env


SHIM = """#!{python}
# memcurate as installed for the contract runs: `memcurate install` run through this file writes its path
# into the hooks, so each hook's stdin, output and exit code are recorded around the command install
# writes otherwise (`real`: the interpreter running the CLI).
import os, subprocess, sys, time
real, log = {real!r}, os.environ.get("MEMCURATE_HOOK_LOG")
if sys.argv[1:2] != ["hook"] or not log:  # in this process
    from memcurate.curator import install
    install.entry_point = lambda *a, **kw: [os.path.abspath(__file__)]  # install writes this file's path
    from memcurate.curator.cli import main
    sys.exit(main())
data = sys.stdin.buffer.read()
base = os.path.join(log, f"{{time.time_ns()}}-{{os.getpid()}}")
with open(base + ".in", "wb") as f:
    f.write(data)
p = subprocess.run([*real, *sys.argv[1:]], input=data, capture_output=True)
for ext, out in ((".out", p.stdout), (".err", p.stderr), (".rc", str(p.returncode).encode())):
    with open(base + ext, "wb") as f:
        f.write(out)
sys.stdout.buffer.write(p.stdout)
sys.stderr.buffer.write(p.stderr)
sys.exit(p.returncode)
"""


@dataclass
class HookCall:
    """One `memcurate hook` Claude Code ran: its payload, exit code and output."""

    payload: dict
    rc: int | None
    stdout: str
    stderr: str

    @property
    def event(self) -> str:
        return self.payload.get("hook_event_name", "?")


@dataclass
class Run:
    """A finished `claude -p` run."""

    cwd: Path
    returncode: int
    stdout: str
    stderr: str
    events: list[dict]
    api: ScriptedAPI
    hooks: list[HookCall] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def requests(self):
        return self.api.requests

    @property
    def result(self) -> dict:
        """The stream's final `result` event ({} when the client never wrote one)."""
        return next((e for e in reversed(self.events) if e.get("type") == "result"), {})

    def memcurate_log(self) -> list[str]:
        """memcurate's own log lines for the project it ran in (one per hook that did something)."""
        return read_log(data_dir(self.cwd, create=False))

    def hook_events(self) -> list[str]:
        return [h.event for h in self.hooks]

    def explain(self) -> str:
        """What the client did, for a failure message."""
        tail = "\n".join(json.dumps(e)[:300] for e in self.events[-4:])
        hooks = ", ".join(f"{h.event}->{h.rc}" for h in self.hooks) or "(none)"
        return (
            f"claude exited {self.returncode} in {self.seconds:.1f}s\nrequests:\n{self.api.describe()}\n"
            f"hooks run: {hooks}\nlast events:\n{tail}\nstderr: {self.stderr.strip()[-1500:]}"
        )


def read_hooks(folder: Path) -> list[HookCall]:
    calls = []
    for f in sorted(folder.glob("*.in"), key=lambda p: int(p.stem.split("-")[0])):
        base = f.with_suffix("")
        rc_file = Path(f"{base}.rc")
        try:
            payload = json.loads(f.read_text() or "{}")
        except json.JSONDecodeError:
            payload = {"unparsed": f.read_text()}
        calls.append(
            HookCall(
                payload,
                int(rc_file.read_text()) if rc_file.exists() else None,
                Path(f"{base}.out").read_text() if Path(f"{base}.out").exists() else "",
                Path(f"{base}.err").read_text() if Path(f"{base}.err").exists() else "",
            )
        )
    return calls


@pytest.fixture
def run_claude(claude_bin, claude_home, shim, tmp_path):
    """run_claude(prompt, script, cwd=project, args=(), env=None, status=None, api_options=None) -> Run.

    One `claude -p PROMPT --output-format stream-json --verbose` in bypass mode against a fresh scripted
    API. Hook records are collected after the process exits (SessionEnd hooks included: the client waits
    for them)."""
    runs = iter(range(1, 1000))

    def run(
        prompt: str,
        script: list[Turn] | None = None,
        *,
        cwd: Path,
        args: tuple[str, ...] = (),
        env: dict | None = None,
        status: int | None = None,
        timeout: float = RUN_TIMEOUT,
        api_options: dict | None = None,
    ) -> Run:
        hook_log = tmp_path / f"hooks-{next(runs)}"
        hook_log.mkdir()
        api = ScriptedAPI(script, status=status, **(api_options or {})).start()
        full_env = clean_env(
            {
                "ANTHROPIC_BASE_URL": api.url,
                "ANTHROPIC_API_KEY": "test",
                "MEMCURATE_HOOK_LOG": str(hook_log),
            }
        )
        full_env["PATH"] = f"{shim.parent}:{full_env['PATH']}"
        full_env.update(env or {})
        argv = [
            claude_bin,
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--dangerously-skip-permissions",
            *args,
        ]
        start = time.monotonic()
        try:
            p = subprocess.run(
                argv,
                cwd=cwd,
                env=full_env,
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as e:
            api.stop()
            raise AssertionError(
                f"claude -p did not finish in {timeout}s; requests:\n{api.describe()}\n"
                f"stderr: {e.stderr!r}"
            ) from None
        finally:
            api.stop()
        events = []
        for line in p.stdout.splitlines():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                events.append({"type": "unparsed", "line": line})
        return Run(
            Path(cwd),
            p.returncode,
            p.stdout,
            p.stderr,
            events,
            api,
            read_hooks(hook_log),
            time.monotonic() - start,
        )

    return run
