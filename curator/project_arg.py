"""The project a command works on, from its --project, and the error the user must act on. Here, not in
commands.py, so `memcurate` opens the TUI without loading the commands and the config before its first
frame (bench/tui_bench.py `--only start`)."""

from __future__ import annotations

import os

from memcurate.curator.errors import Refusal
from memcurate.curator.util.paths import project_root


class UserError(Refusal):
    """An error the user must act on: one clear line, exit 1."""


def project_dir(args) -> str:
    """The project a command works on: the git root of --project, else of the current folder (so
    `--project sub` is the same project as `cd sub`, not a second data dir with an empty queue)."""
    if args.project:
        path = os.path.abspath(os.path.expanduser(args.project))
        if not os.path.isdir(path):
            raise UserError(f"--project {args.project}: not a folder")
        return project_root(path)
    return project_root()
