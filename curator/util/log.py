"""One-line log records in the data dir's log (never transcript text: it may hold secrets)."""

from __future__ import annotations

import os

from memcurate.curator.util.private import file_mode, make_dirs
from memcurate.curator.util.stamps import now_iso

LOG_NAME = "memcurate.log"
MAX_LOG_BYTES = 1 << 20


def log_line(data_dir, event: str, message: str) -> None:
    """Append one line; best effort, never raises. The log rolls over at 1 MiB."""
    try:
        folder = os.path.join(data_dir, "log")
        path = os.path.join(folder, LOG_NAME)
        make_dirs(folder)
        line = f"{now_iso()} pid={os.getpid()} {event}: {' '.join(message.split())}\n"
        try:
            if os.stat(path).st_size > MAX_LOG_BYTES:
                os.replace(path, path + ".1")
        except OSError:
            pass
        # O_APPEND writes of one short line do not interleave between processes.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, file_mode(path))
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass


def read_log(data_dir) -> list[str]:
    try:
        with open(os.path.join(data_dir, "log", LOG_NAME), encoding="utf-8") as f:
            return f.read().splitlines()
    except OSError:
        return []
