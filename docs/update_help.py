"""The CLI help quoted in the docs, kept true: find the quoted blocks, and rewrite them from the real output.

A quoted block is a fenced block right after a marker line naming the command:

    <!-- help: memcurate list --help -->
    ```text
    usage: memcurate list ...
    ```

tests/engine/test_docs.py fails when a block differs from what `memcurate ...` prints at 80 columns;
`python docs/update_help.py` rewrites every block in README.md and docs/**.md from the real output.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- help: (memcurate(?: [^>]*)?) -->$")


def doc_files() -> list[Path]:
    """README.md and every Markdown file under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def help_blocks(text: str) -> list[tuple[str, int, int]]:
    """Each quoted block: (command, index of its first line, index past its last line), in lines of `text`."""
    lines = text.split("\n")
    found = []
    for i, line in enumerate(lines):
        m = MARKER.match(line.strip())
        if not m:
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            raise ValueError(f"line {i + 1}: a help marker must be followed by a fenced block")
        end = next((j for j in range(i + 2, len(lines)) if lines[j].startswith("```")), None)
        if end is None:
            raise ValueError(
                f"line {i + 1}: the fenced block after the help marker is never closed"
            )
        found.append((m[1], i + 2, end))
    return found


def real_help(command: str) -> str:
    """What `command` prints at 80 columns, run from this checkout (`memcurate` is `python -m memcurate.curator.cli`)."""
    argv = shlex.split(command)
    env = {
        **os.environ,
        "COLUMNS": "80",
        "LINES": "24",
        "NO_COLOR": "1",
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
        ),
    }
    out = subprocess.run(
        [sys.executable, "-m", "memcurate.curator.cli", *argv[1:]],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    return out.stdout.rstrip("\n")


def update(path: Path) -> bool:
    """Rewrite the quoted blocks of one file from the real output; whether it changed."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    for command, start, end in reversed(help_blocks(text)):
        lines[start:end] = real_help(command).split("\n")
    new = "\n".join(lines)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    for doc in doc_files():
        if update(doc):
            print(f"updated {doc.relative_to(ROOT)}")
