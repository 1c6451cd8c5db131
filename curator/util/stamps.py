"""The two small facts every writer of the data dir and the memory root shares, light enough for the
hooks (no store, no staging): the time stamp memcurate writes, and the hash of a file's bytes."""

from __future__ import annotations

import time

STAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"  # UTC, as in the memory files' front matter and every record


def now_iso() -> str:
    return time.strftime(STAMP_FORMAT, time.gmtime())


def content_hash(data: str | bytes) -> str:
    """sha256 hex of a file's bytes (text is encoded as UTF-8, the way memcurate writes it)."""
    import hashlib  # here: loading OpenSSL costs a hook that never hashes

    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()
