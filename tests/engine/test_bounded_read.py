"""Every memory file is read through safe_open.read_at_most: all of a file within the limit, one byte
more of a larger one (so the caller refuses it), never a buffer of the limit's size per file."""

from __future__ import annotations

import io
import tracemalloc

import pytest

from memcurate.curator.memory import store
from memcurate.curator.memory.front_matter import MAX_FILE_BYTES
from memcurate.curator.util.safe_open import read_at_most


@pytest.mark.parametrize("size", [0, 1, 65_535, 65_536, 65_537, 200_000])
def test_a_file_within_the_limit_is_read_whole(tmp_path, size):
    path = tmp_path / "m.md"
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    path.write_bytes(data)
    with open(path, "rb") as f:
        assert read_at_most(f, 200_000) == data


@pytest.mark.parametrize("over", [1, 70_000])
def test_a_larger_file_gives_one_byte_more_than_the_limit(tmp_path, over):
    path = tmp_path / "big.md"
    path.write_bytes(b"a" * (100_000 + over))
    with open(path, "rb") as f:
        assert read_at_most(f, 100_000) == b"a" * 100_001


def test_a_short_read_is_not_the_end(tmp_path):
    """A stream that hands out a few bytes a read (a pipe, a slow disk) is read to its end."""

    class Trickle(io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self.data = data

        def readable(self) -> bool:
            return True

        def readinto(self, b) -> int:
            n = min(len(b), 7, len(self.data))
            b[:n], self.data = self.data[:n], self.data[n:]
            return n

    assert read_at_most(Trickle(b"0123456789" * 30), 1_000) == b"0123456789" * 30


def test_the_store_reads_a_small_memory_without_a_buffer_of_the_limits_size(tmp_path):
    """A check reads every memory: a read(MAX_FILE_BYTES + 1) per file allocated the limit each time."""
    path = tmp_path / "decision" / "m.md"
    path.parent.mkdir()
    path.write_bytes(b"---\nid: m\n---\nbody\n")
    memories = store.MemoryStore(tmp_path)
    tracemalloc.start()
    try:
        for _ in range(20):
            assert memories.read_bytes(str(path)) == path.read_bytes()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MAX_FILE_BYTES // 4, peak
