"""The CLI's error table (docs/guide/commands.md, "Errors you may meet"), row by row: each command, run
as a person runs it, says what is wrong on stderr's last line, exits with its code, and writes nothing."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest
from conftest import ROOT

DOC = ROOT / "docs" / "guide" / "commands.md"


def rows() -> list[tuple[str, str, int]]:
    text = DOC.read_text(encoding="utf-8")
    table = text.split("<!-- cli-errors -->", 1)[1].split("\n\n", 1)[0]
    found = re.findall(r"^\| `(memcurate [^`]*)` \| `([^`]*)` \| (\d) \|$", table, re.M)
    assert len(found) >= 10, "the error table in docs/guide/commands.md lost its rows"
    return [(cmd, said, int(code)) for cmd, said, code in found]


@pytest.mark.parametrize("command, said, code", rows(), ids=[r[0] for r in rows()])
def test_each_error_in_the_table_is_said_with_its_exit_code(tmp_path, command, said, code):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "empty").mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "NO_COLOR": "1", "COLUMNS": "200"}
    args = shlex.split(command)[1:]
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from memcurate.curator.cli import main; sys.exit(main())",
            *args,
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    assert said in last, f"{command}: stderr ends {last!r}"
    assert done.returncode == code, f"{command}: exit {done.returncode}\n{done.stderr}"
    assert "Traceback" not in done.stderr
    memory = home / ".claude" / "projects"
    assert not memory.exists() or not any(p.is_file() for p in memory.rglob("*")), (
        "a refused command wrote memory"
    )
