"""The config as a hook loads it: from the JSON cache (no YAML), and a config error said the same way
by every handler: one log line saying what it cost, one stderr line, and the session goes on."""

from __future__ import annotations

import sys

from memcurate.curator import config
from memcurate.curator.util.log import log_line


def load(project: str, data: str, event: str, consequence: str) -> dict | None:
    """The merged config, or None after logging `config error, <consequence>: <why>`."""
    try:
        return config.load(project, data)
    except config.ConfigError as e:
        report(data, event, consequence, str(e))
        return None


def report(data: str, event: str, consequence: str, error: str) -> None:
    """A config error said once per call: the log line (with what it cost) and the stderr line."""
    log_line(data, event, f"config error, {consequence}: {error}")
    print(f"memcurate: config error: {error}", file=sys.stderr)
