"""The README's five-minute walk-through, replayed command by command as a new user types it.

The commands are read from the README's own section ("Your own project in five minutes"), so the
walk-through cannot drift from what memcurate does. Only what a test cannot do as typed is adapted,
each said below: installing the package (the checkout is used), the example home and ids (the test's
own), and the TUI (it needs a terminal: `list --draft` in the same section does its drafting).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from memcurate.curator.util.assets import asset
from memcurate.curator.util.paths import project_key

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Your own project in five minutes"
EXAMPLE_KEY = "-home-me-code-myproject"  # the README's example: the project /home/me/code/myproject
EXAMPLE_ID = re.compile(r"\b\d{8}T\d{6}Z-[0-9a-f]{8}/(\w+)")
SESSION = "7c1f2a90-5b3e-4d11-8e2a-4f6b9d0c1e23"


def walkthrough() -> list[str]:
    """The shell commands of the README's walk-through, in order, comments dropped."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    return [
        line.split("  #", 1)[0].strip()
        for block in blocks
        for line in block.splitlines()
        if line.strip()
    ]


def shim(folder: Path) -> Path:
    """A `memcurate` on the PATH that runs this checkout (what `pipx install ./memcurate` would put there)."""
    folder.mkdir()
    exe = folder / "memcurate"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m memcurate.curator.cli "$@"\n')
    exe.chmod(0o755)
    return folder


def test_a_new_user_follows_the_readme_on_their_own_project(tmp_path):
    home = Path(os.environ["HOME"])
    project = home / "code" / "myproject"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    key = project_key(str(project.resolve()))
    sessions = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / key
    sessions.mkdir(parents=True)
    # a session they had
    shutil.copy(asset(os.path.join("demo", "session.jsonl")), sessions / f"{SESSION}.jsonl")
    # The user's config as a newcomer has it: none (the suite's own opt-ins out), and no model reachable: no
    # `claude` on this PATH and no API key, so `backend: auto` drafts offline and nothing is billed.
    # what the commands need
    tools = sorted({os.path.dirname(shutil.which(t)) for t in ("bash", "git")})
    path = os.pathsep.join([str(shim(tmp_path / "bin")), *tools])
    # a `claude` beside git: no calls
    offline = "backend: offline\n" if shutil.which("claude", path=path) else ""
    (home / ".config" / "memcurate" / "config.yaml").write_text(
        "hygiene: {interval_minutes: 0}\n" + offline
    )
    env = {
        **os.environ,
        "PATH": path,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "dev"), os.environ.get("PYTHONPATH", "")]),
    }

    commands = walkthrough()
    assert commands[0].startswith("pipx install ./memcurate") and "memcurate install" in commands
    cwd, ran, ids = home, [], {}
    for command in commands:
        if command.startswith(("pipx ", "pip ", "uv ")):
            continue  # installing: the shim above is this checkout
        if command.startswith("cd "):
            cwd = Path(os.path.expanduser(command[3:].strip().replace("~", str(home), 1)))
            continue
        if command == "memcurate":
            continue  # the TUI needs a terminal; `memcurate list --draft` below drafts as it would
        command = command.replace(EXAMPLE_KEY, key)
        command = EXAMPLE_ID.sub(lambda m, ids=ids: ids[m[1]], command)
        out = subprocess.run(
            ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, f"`{command}` exited {out.returncode}: {out.stderr}"
        ran.append((command, out.stdout))
        if command.startswith("memcurate list"):
            listed = subprocess.run(
                ["bash", "-c", "memcurate list --json"],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            ids = {
                item["category"]: item["id"]
                for item in json.loads(listed.stdout)["items"]
                if item["state"] == "ready" and not item["blocked"]
            }
            assert "decision" in ids, listed.stdout

    said = dict(ran)
    assert "memcurate install" in said and "memcurate status" in said
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert "Stop" in settings["hooks"] and "UserPromptSubmit" in settings["hooks"]
    # which backend drafts, and why, before anything is drafted
    assert "offline" in said["memcurate status"]
    approved = next(c for c in said if c.startswith("memcurate approve"))
    memory = sessions / "memory"
    saved = list((memory / "decision").glob("*.md"))
    # approve names where it saved the memory
    assert len(saved) == 1 and saved[0].name in said[approved]
    # and the index Claude Code loads links it
    assert saved[0].stem in (memory / "MEMORY.md").read_text()
