"""Where things live (DESIGN §4): project root, data dir, memory root.

String paths and os.path, not pathlib: the hook imports this on every turn.
"""

from __future__ import annotations

import os
import re

from .atomic import read_json, write_json, write_text

DATA_DIR_NAME = ".memcurate"
MEMORY_ROOT_RECORD = "memory-root.json"


def project_root(start=None) -> str:
    """The git top level of `start` (default: cwd), else `start` itself.

    Walks up looking for `.git` (a folder, or a file in worktrees) instead of
    running git: a subprocess would cost the hook more than everything else.
    """
    here = os.path.abspath(os.fspath(start) if start else os.getcwd())
    d = here
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return here
        d = parent


def data_dir(project, *, create: bool = True) -> str:
    d = os.path.join(os.fspath(project), DATA_DIR_NAME)
    if create and not os.path.isfile(os.path.join(d, ".gitignore")):
        os.makedirs(d, exist_ok=True)
        write_text(os.path.join(d, ".gitignore"), "*\n", durable=False)
    return d


def claude_config_dir() -> str:
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


def project_key(project) -> str:
    """Claude Code's folder name for a project: every non-alphanumeric character becomes '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", os.path.abspath(os.fspath(project)))


def record_memory_root(data, transcript_path: str) -> None:
    """Remember the auto-memory folder the hook saw: the transcript's folder plus memory/."""
    root = os.path.join(os.path.dirname(os.path.abspath(transcript_path)), "memory")
    record = os.path.join(data, MEMORY_ROOT_RECORD)
    try:
        if read_json(record).get("path") == root:
            return
    except (OSError, ValueError, AttributeError):
        pass
    write_json(record, {"path": root, "seen_in": os.path.abspath(transcript_path)})


def memory_root(project, cfg: dict, data=None) -> str:
    """The memory root of `project`: config, else the hook's record, else Claude Code's rule."""
    project = os.fspath(project)
    configured = cfg["memory"]["root"]
    if configured != "auto":
        p = os.path.expanduser(configured)
        return p if os.path.isabs(p) else os.path.join(project, p)
    if data is not None:
        try:
            recorded = read_json(os.path.join(data, MEMORY_ROOT_RECORD)).get("path")
            if isinstance(recorded, str) and recorded:
                return recorded
        except (OSError, ValueError, AttributeError):
            pass
    return os.path.join(claude_config_dir(), "projects", project_key(project), "memory")
