"""Failure signatures (curator/rules/signature.py): real outputs in, what recurs out."""

from __future__ import annotations

import dataclasses

import pytest

from curator.rules import signature
from curator.rules.signature import KINDS, classify, failures, looks_failed

PYTEST_OUT = """\
============================= test session starts ==============================
platform darwin -- Python 3.12.7, pytest-8.4.0, pluggy-1.6.0
rootdir: /Users/dain/workspace/claude-code-log
collected 2 items

test/test_cache.py F.                                                    [100%]

=================================== FAILURES ===================================
___________________________ TestCache.test_save ________________________________

self = <test.test_cache.TestCache object at 0x1067e41a0>

    def test_save(self):
>       cache = CacheManager("/tmp/pytest-of-dain/pytest-12/test_save0")
E       TypeError: CacheManager.__init__() missing 1 required positional argument: 'library_version'

test/test_cache.py:32: TypeError
=========================== short test summary info ============================
FAILED test/test_cache.py::TestCache::test_save - TypeError: CacheManager.__init__() missing 1 required...
========================= 1 failed, 1 passed in 0.48s ==========================
"""


def test_the_public_api_is_the_shared_design():
    assert KINDS == ("test", "lint", "type", "build", "runtime", "command")
    [f] = failures("uv run pytest", PYTEST_OUT)
    assert dataclasses.is_dataclass(f) and isinstance(f, signature.Failure)
    assert set(dataclasses.asdict(f)) == {"kind", "tool", "signature", "test", "error_type", "message", "files",
                                         "excerpt"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.kind = "lint"
    assert len(f.key) == 12 and int(f.key, 16) >= 0


def test_a_pytest_failure_keeps_test_id_error_type_and_message():
    [f] = failures("uv run pytest -x", PYTEST_OUT, project="/Users/dain/workspace/claude-code-log")
    assert (f.kind, f.tool, f.test, f.error_type) == ("test", "pytest", "test/test_cache.py::TestCache::test_save",
                                                       "TypeError")
    assert f.message == "CacheManager.__init__() missing <n> required positional argument: 'library_version'"
    assert f.files == ("test/test_cache.py",)
    assert "E       TypeError" in f.excerpt


def test_classify_names_checkers_and_nothing_else():
    assert classify("uv run pytest -x") == ("test", "pytest")
    assert classify("cd web && npm test") == ("test", "npm")
    assert classify("npx tsc --noEmit") == ("type", "tsc")
    assert classify("cargo clippy -- -D warnings") == ("lint", "cargo")
    assert classify("go vet ./...") == ("lint", "go")
    assert classify("make test") == ("test", "make")
    assert classify("git status") is None
    assert classify("echo pytest") is None


def test_looks_failed_sees_a_failure_piped_through_tail():
    assert looks_failed("==== 2 failed, 3 passed in 0.2s ====")
    assert not looks_failed("==== 5 passed in 0.2s ====")


def test_unknown_output_gives_one_generic_failure_and_empty_gives_none():
    [f] = failures("git checkout nope", "error: pathspec 'nope' did not match any file(s) known to git")
    assert (f.kind, f.tool) == ("command", "git checkout")
    assert failures("git checkout nope", "") == []
