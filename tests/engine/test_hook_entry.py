"""The hook command `memcurate install` writes: the interpreter memcurate is installed in, running the CLI
without pip's console-script wrapper. It runs the hook from a venv whose path holds a space, `status` and a
second install still know it as memcurate's, and no file in the project (Claude's to write) can stand in
for memcurate's modules, whether the hook runs from Claude Code or as the deferred SessionEnd pass."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, claude_transcripts
from test_hook import decision_session, log_lines, payload

from memcurate.curator import hook_entries
from memcurate.curator import install as setup


@pytest.fixture(scope="module")
def spaced_venv(tmp_path_factory) -> Path:
    """A venv at a path with a space, memcurate in it as an editable install puts it (a .pth naming this
    checkout's dev/), and its dependencies beside (the cold config reads YAML). No console script."""
    venv = tmp_path_factory.mktemp("venvs") / "my tools" / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = sysconfig.get_path(
        "purelib", vars={"base": str(venv), "platbase": str(venv)}, scheme="venv"
    )
    deps = os.path.dirname(os.path.dirname(yaml.__file__))
    Path(purelib, "memcurate-dev.pth").write_text(f"{ROOT / 'dev'}\n{deps}\n")
    return venv / "bin" / "python"


def _env(venv_python: Path) -> dict:
    """What the venv's processes see: no PYTHONPATH (the .pth alone finds memcurate), the venv's bin first
    on the PATH and no other `memcurate` on it."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv_python.parent}:/usr/bin:/bin"
    return env


def _install(venv_python: Path, project: Path) -> str:
    """`memcurate install` run by the venv's interpreter; the Stop hook's command it wrote."""
    ran = subprocess.run(
        [str(venv_python), "-P", "-c", hook_entries.RUN_CLI, "install", "--json"],
        cwd=project,
        env=_env(venv_python),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)["command"]


def _run(command: str, doc: dict, project: Path, venv_python: Path) -> subprocess.CompletedProcess:
    """The hook as Claude Code runs it: the command through the shell, the payload on stdin."""
    return subprocess.run(
        command,
        shell=True,
        input=json.dumps(doc),
        text=True,
        capture_output=True,
        cwd=project,
        env=_env(venv_python),
        timeout=60,
    )


def test_the_installed_command_runs_the_hook_from_a_venv_at_a_path_with_a_space(
    spaced_venv, project
):
    command = _install(spaced_venv, project)
    assert shlex.split(command) == [
        str(spaced_venv),
        "-P",
        "-c",
        hook_entries.RUN_CLI,
        "hook",
    ]
    path = claude_transcripts() / "s.jsonl"
    path.write_bytes(decision_session().bytes())
    ran = _run(command, payload("Stop", path, project), project, spaced_venv)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", "")
    assert "staged bytes" in log_lines(project)[-1]
    # status and a second install know it as memcurate's: found, and replaced rather than added to
    (found,) = setup.installed(project)
    assert found["executables"] == [str(spaced_venv)] and not found["outdated"]
    assert _install(spaced_venv, project) == command
    doc = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert [len(groups) for groups in doc["hooks"].values()] == [1] * len(hook_entries.EVENTS)


def _plant(project: Path) -> Path:
    """A `memcurate.curator` package in the project that leaves a mark when it is imported: what Claude
    could write into the folder the hook runs in (a regular package wins over memcurate's namespace)."""
    planted = project / "memcurate" / "curator"
    planted.mkdir(parents=True)
    mark = project / "planted-module-ran"
    (planted / "__init__.py").write_text(f"open({str(mark)!r}, 'w').close()\n")
    (planted / "cli.py").write_text("def main(argv=None):\n    return 0\n")
    return mark


def test_no_module_in_the_project_stands_in_for_memcurates(spaced_venv, project):
    command = _install(spaced_venv, project)
    mark = _plant(project)
    path = claude_transcripts() / "s.jsonl"
    path.write_bytes(decision_session().bytes())
    ran = _run(command, payload("Stop", path, project), project, spaced_venv)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", "")
    assert not mark.exists()
    assert "staged bytes" in log_lines(project)[-1]


def test_the_deferred_session_end_pass_starts_as_install_runs_the_hook(monkeypatch, project):
    from memcurate.hooks import capture

    started: list[list[str]] = []

    class Child:
        pid = 1

        def __init__(self, argv, **_kw) -> None:
            started.append(argv)
            self.stdin = open(os.devnull, "wb")  # closed by _defer

    monkeypatch.setattr(subprocess, "Popen", Child)
    capture._defer({"hook_event_name": "SessionEnd"}, 1 << 20, {})
    # not `-m`: that puts the cwd (the project) first on sys.path
    assert started == [[sys.executable, "-P", "-c", hook_entries.RUN_CLI, "hook"]]
