"""What was worked out lately, by what it was worked out from: a bounded cache for pure functions a run
calls again on the same texts (a save run parses and compares each draft's neighbours once per draft).

Bounded twice: at most `size` entries (all forgotten at once when full: cheap, and a run's working set is
found again at once), and only for keys of at most `MAX_TEXT` characters, so a few files near the 1 MiB
limit (memory files are in Claude's reach) cannot make a long-running process hold gigabytes.
"""

from __future__ import annotations

from collections.abc import Hashable

MAX_TEXT = 16 * 1024


class Recent:
    def __init__(self, size: int) -> None:
        self.size = size
        self._found: dict = {}

    def get(self, key: Hashable):
        return self._found.get(key)

    def put(self, key: Hashable, value, text_size: int) -> None:
        """Keep `value` for `key` unless the texts it was found from (`text_size` characters) are large."""
        if text_size > MAX_TEXT:
            return
        if len(self._found) >= self.size:
            self._found.clear()
        self._found[key] = value
