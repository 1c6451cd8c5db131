"""SessionEnd's hygiene pass: start `memcurate check --quiet` in the background, at most once per
`hygiene.interval_minutes` per project (a stamp file's mtime in the data dir decides), so the check only
stages proposals and the hook returns at once. Imports nothing heavy: subprocess only when a check is due."""

from __future__ import annotations

import os
import sys
import time

from memcurate.curator.util.child_env import CHILD_ENV
from memcurate.curator.util.private import file_mode

STAMP = "check.stamp"


def due(data: str, minutes: float, now: float | None = None) -> bool:
    if minutes <= 0:
        return False
    try:
        last = os.stat(os.path.join(data, STAMP)).st_mtime
    except OSError:
        return True
    return (time.time() if now is None else now) - last >= minutes * 60


def start_check(project: str, data: str, cfg: dict, spawn=None) -> bool:
    """Start the background check when one is due; whether it was started. The stamp is touched first,
    so two hooks ending at once start one check."""
    if not due(data, float((cfg.get("hygiene") or {}).get("interval_minutes", 60))):
        return False
    stamp = os.path.join(data, STAMP)
    os.close(os.open(stamp, os.O_WRONLY | os.O_CREAT, file_mode(stamp)))
    os.utime(stamp)
    from memcurate.curator.hook_entries import interpreter_entry

    # as install runs the hook (-P): with -m, the cwd (the project, Claude's to write) would come first
    # on sys.path, and a `memcurate/` folder planted there would run instead of memcurate
    (spawn or _spawn)(
        [*interpreter_entry(sys.executable), "check", "--quiet", "--project", project]
    )
    return True


def _spawn(argv: list[str]) -> None:
    import subprocess

    env = {**os.environ, CHILD_ENV: "1"}
    subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        env=env,
    )
