"""The config as a hook loads it: from the JSON cache (no YAML), and a config error said the same way
by every handler: one log line saying what it cost, one stderr line, and the session goes on."""

from __future__ import annotations

import sys

from curator import config
from curator.util.log import log_line


def load(project: str, data: str, event: str, consequence: str) -> dict | None:
    """The merged config, or None after logging `config error, <consequence>: <why>`."""
    try:
        return config.load(project, data)
    except config.ConfigError as e:
        log_line(data, event, f"config error, {consequence}: {e}")
        print(f"memcurate: config error: {e}", file=sys.stderr)
        return None
