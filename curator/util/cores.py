"""Whether a forked child would have a core to itself: the rule behind the engine's forks (a check's share of
its work, hygiene/forked.py; a long transcript read beside its triage, capture/transcript.py).

Standard library only, and light: the hook imports it.
"""

from __future__ import annotations

import os
import sys


def cpus() -> int:
    """The CPUs this process may run on."""
    count = getattr(os, "process_cpu_count", None)  # Python 3.13
    if count is not None:
        return count() or 1
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def load() -> float:
    """The last minute's load average; 0 when not known here."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def free_core() -> bool:
    """A fork may run beside this process: `fork` exists, no other thread runs (a fork copies the locks
    they hold; with `threading` never imported, none was started), two CPUs or more, and not every one busy
    on the last minute's average (on a busy machine a child only competes for the cores)."""
    threading = sys.modules.get("threading")
    if not hasattr(os, "fork") or (threading is not None and threading.active_count() != 1):
        return False
    n = cpus()
    return n >= 2 and load() < n
