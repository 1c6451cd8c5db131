"""One error family: every exception memcurate defines derives from memcurate.curator.errors.MemcurateError, so a front end
tells a refusal, a conflict, a busy lock or damaged input from a bug with one `except`; and the family costs the
hook path nothing (it still loads no UI, no model SDK, no YAML)."""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import json
import os
import pkgutil
import subprocess
import sys

import pytest
from conftest import ROOT, claude_transcripts
from synthetic import Transcript, text, tool

from memcurate import curator, hooks
from memcurate.curator import errors
from memcurate.curator.errors import (
    BusyError,
    DamagedError,
    DiskError,
    MemcurateError,
    Refusal,
    StaleError,
)

BUILTIN_EXCEPTIONS = {
    n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)
}


def modules() -> list[str]:
    """Every module of curator/ and hooks/ (the hook path's modules included)."""
    names = []
    for pkg in (curator, hooks):
        names.append(pkg.__name__)
        names.extend(m.name for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."))
    return names


def test_every_exception_class_in_curator_and_hooks_is_a_memcurate_error():
    found, outside = [], []
    for name in modules():
        mod = importlib.import_module(name)
        for cls in vars(mod).values():
            if inspect.isclass(cls) and issubclass(cls, BaseException) and cls.__module__ == name:
                found.append(f"{name}.{cls.__qualname__}")
                if not issubclass(cls, MemcurateError):
                    outside.append(f"{name}.{cls.__qualname__}")
    assert len(found) >= 40  # the walk reached the modules that define them
    assert not outside, f"not in the family (derive from a class of curator/errors.py): {outside}"


def test_no_class_anywhere_in_the_source_derives_from_a_builtin_exception_alone():
    """Nested classes too, which the import walk cannot see: a builtin base (ValueError, OSError) is kept for
    existing `except` clauses only beside a base of the family."""
    bad = []
    for top in ("curator", "hooks"):
        for path in sorted((ROOT / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef) and node.bases:
                    names = [b.id for b in node.bases if isinstance(b, ast.Name)]
                    if len(names) == len(node.bases) and set(names) <= BUILTIN_EXCEPTIONS:
                        bad.append(f"{path.relative_to(ROOT)}: {node.name}")
    assert bad == ["curator/errors.py: MemcurateError"], bad  # the family's root alone


@pytest.mark.parametrize(
    "where, name, family",
    [
        ("memcurate.curator.memory.store", "ConflictError", StaleError),
        ("memcurate.curator.candidates.claude_writes", "WriteConflict", StaleError),
        ("memcurate.curator.review.actions", "Changed", StaleError),
        ("memcurate.curator.util.locks", "LockBusy", BusyError),
        ("memcurate.curator.memory.store", "BrokenMemoryError", DamagedError),
        ("memcurate.curator.memory.front_matter", "MemoryFormatError", DamagedError),
        ("memcurate.curator.review.actions", "SaveFailed", DiskError),
        ("memcurate.curator.config", "ConfigError", Refusal),
        ("memcurate.curator.commands", "UserError", Refusal),
    ],
)
def test_a_caller_acts_on_the_family_it_catches(where, name, family):
    assert issubclass(getattr(importlib.import_module(where), name), family)


@pytest.mark.parametrize(
    "where, name, builtin",
    [
        ("memcurate.curator.memory.store", "MissingMemoryError", FileNotFoundError),
        ("memcurate.curator.memory.store", "UnsafePathError", ValueError),
        ("memcurate.curator.util.safe_open", "Refused", OSError),
        ("memcurate.curator.util.atomic", "Unsettled", OSError),
        ("memcurate.curator.library.entries", "LibraryError", KeyError),
        ("memcurate.curator.verify.decide", "DecisionError", ValueError),
        ("memcurate.curator.memory.memory_md.format", "MemoryMdError", ValueError),
    ],
)
def test_existing_except_clauses_still_catch(where, name, builtin):
    cls = getattr(importlib.import_module(where), name)
    assert issubclass(cls, builtin) and issubclass(cls, MemcurateError)


def test_the_families_are_few_and_each_says_what_a_caller_does():
    families = [
        c for c in vars(errors).values() if inspect.isclass(c) and issubclass(c, MemcurateError)
    ]
    assert set(families) == {
        MemcurateError,
        Refusal,
        StaleError,
        BusyError,
        DamagedError,
        DiskError,
    }
    assert all(c.__doc__ and len(c.__doc__) > 60 for c in families)


_PROBE = """
import json, sys
from memcurate.curator.cli import main
rc = main(["hook"])
sys.stdout.write("\\n" + json.dumps({"rc": rc, "modules": sorted(sys.modules)}))
"""


def test_the_hook_path_still_loads_no_ui_no_sdk_and_no_yaml(tmp_path, project):
    """A real Stop hook, twice (the second with the config cache warm): curator.errors is loaded, the heavy
    packages are not."""
    path = claude_transcripts() / "s.jsonl"
    t = (
        Transcript(stamp="2025-07-14T22:59")
        .user(
            "We decided to go with postgres because it is simpler to operate than the alternatives."
        )
        .assistant(
            text("Understood: we will use postgres."), tool("toolu_a1", "Bash", command="ls")
        )
        .result("toolu_a1", "README.md\nsrc")
        .assistant(text("Done."))
    )
    path.write_bytes(t.bytes())
    event = {
        "session_id": "0b5e6a34-1111-4222-8333-444455556666",
        "transcript_path": str(path),
        "cwd": str(project),
        "hook_event_name": "Stop",
    }
    for round_ in range(2):
        p = subprocess.run(
            [sys.executable, "-c", _PROBE],
            input=json.dumps(event).encode(),
            cwd=project,
            capture_output=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(ROOT / "dev")},
        )
        assert p.returncode == 0, p.stderr
        report = json.loads(p.stdout.decode().rpartition("\n")[2])
        assert report["rc"] == 0
        loaded = report["modules"]
        assert "memcurate.curator.errors" in loaded
        heavy = ("textual", "rich", "anthropic", "widgets") + (("yaml",) if round_ else ())
        assert not [m for m in loaded if m.split(".")[0] in heavy], f"round {round_}"
