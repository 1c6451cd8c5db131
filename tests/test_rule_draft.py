"""A graduation candidate's rule text (curator/rules/draft.py): topic, paths globs and the rule, offline
and through the Claude backends."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from curator.capture.redact import find_secrets
from curator.rules import draft, rulefile

PYTEST = {"kind": "test", "tool": "pytest", "test": "tests/test_store.py::test_save", "error_type": "FileNotFoundError",
          "message": "[Errno 2] No such file or directory: '<tmp>/memory/x.json'",
          "signature": "pytest tests/test_store.py::test_save FileNotFoundError ...",
          "files": ["tests/test_store.py", "src/curator/store.py"]}


def occurrence(n: int, command: str = "uv run pytest -x tests/test_store.py", fix: dict | None = None) -> dict:
    return {"session": f"s{n}", "at": f"2026-11-2{n}T10:00:00Z", "source": "hook", "command": command,
            "error": "E   FileNotFoundError: ...", "files": [], "transcript": "", "fix": fix}


def candidate(failure: dict, commands=("uv run pytest -x",) * 3, fixes=()) -> SimpleNamespace:
    """A RuleCandidate stand-in: id, failure, occurrences (oldest first), sessions."""
    fixes = list(fixes) + [None] * (len(commands) - len(fixes))
    occ = [occurrence(i, c, f) for i, (c, f) in enumerate(zip(commands, fixes), 1)]
    return SimpleNamespace(id="3f2a9c01d4e5", failure=failure, occurrences=occ, sessions=len(occ))


# what each kind of candidate must say (regexes), and what it must not
CASES = {
    "test with a fix said as an instruction": (
        candidate(PYTEST, fixes=[None, None, {"text": "Fixed it by using the `tmp_path` fixture instead of a "
                                              "hard-coded folder. Then all passed.", "files": ["tests/test_store.py"]}]),
        [r"^Use the `tmp_path` fixture instead of a hard-coded folder\b", r"`test_save`", r"FileNotFoundError",
         r"3 sessions"], "testing", ["tests/**/*.py", "src/**/*.py"]),
    "test with a fix that only edited a file": (
        candidate(PYTEST, fixes=[{"text": "The folder was missing.", "files": ["src/curator/store.py"]}]),
        [r"`test_save` fails with FileNotFoundError", r"`store\.py`", r"3 sessions"], "testing",
        ["tests/**/*.py", "src/**/*.py"]),
    "test without a fix": (
        candidate(PYTEST),
        [r"^Run `pytest tests/test_store\.py` after changing `store\.py`: `test_save` has failed with "
         r"FileNotFoundError in 3 sessions\.$"], "testing", ["tests/**/*.py", "src/**/*.py"]),
    "lint rule": (
        candidate({"kind": "lint", "tool": "ruff", "error_type": "E501", "message": "Line too long (<n> > <n>)",
                   "files": ["curator/engine.py"]}, commands=["ruff check .", "uv run ruff check curator", "ruff check ."]),
        [r"`engine\.py`", r"`ruff` E501", r"`ruff check \.`", r"3 sessions"], "lint", ["curator/**/*.py"]),
    "type error": (
        candidate({"kind": "type", "tool": "tsc", "error_type": "TS2339",
                   "message": "Property 'id' does not exist on type 'User'",
                   "files": ["web/src/user.ts", "web/src/api.tsx"]}, commands=["npx tsc --noEmit"] * 3),
        [r"^Run `npx tsc --noEmit` after changing `user\.ts`", r"TS2339 \(Property 'id' does not exist"],
        "types", ["web/**/*.{ts,tsx}"]),
    "build": (
        candidate({"kind": "build", "tool": "cargo", "error_type": "E0308", "message": "mismatched types",
                   "files": ["src/main.rs"]}, commands=["cargo build --release", "cargo build"]),
        [r"^Run `cargo build` after changing `main\.rs`", r"E0308 \(mismatched types\)", r"2 sessions"], "build",
        ["src/**/*.rs"]),
    "runtime": (
        candidate({"kind": "runtime", "tool": "python", "error_type": "KeyError", "message": "'name'",
                   "files": ["app/main.py", "/usr/lib/python3.12/json/__init__.py"]},
                  commands=["python -m app /tmp/pytest-of-me/x.json"] * 3),
        [r"^Guard against KeyError \('name'\) in `main\.py`", r"`python`", r"3 sessions"], "runtime",
        ["app/**/*.py"]),
    "command": (
        candidate({"kind": "command", "tool": "git", "message": "fatal: not a git repository", "files": []},
                  commands=["git push origin main"] * 3),
        [r"^Check why `git push origin main` fails", r'"fatal: not a git repository"'], "commands", []),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_offline_rule_is_a_short_imperative_a_reviewer_keeps(name):
    c, musts, topic, paths = CASES[name]
    out = draft.offline(c)
    assert set(out) == {"rule", "topic", "paths"}
    for must in musts:
        assert re.search(must, out["rule"]), (must, out["rule"])
    assert (out["topic"], out["paths"]) == (topic, paths)
    assert rulefile.check_rule(out["rule"]) == out["rule"]  # one line, short, no marker, no secret
    assert out["rule"][0].isupper() and out["rule"].endswith(".")
    assert not re.search(r"/tmp|<tmp>|<n>|Traceback|\bI\b|Let me|0x[0-9a-f]", out["rule"]), out["rule"]
    assert rulefile.plan("/nonexistent/project", c.id, **out).error == ""


def test_a_secret_in_the_evidence_never_reaches_the_rule():
    key = "sk-ant-api03-" + "a1B2c3D4e5" * 4
    failure = {**PYTEST, "message": f"401 Unauthorized for key {key}"}
    c = candidate(failure, commands=[f"curl -H 'x-api-key: {key}' https://api.example.com"] * 3,
                  fixes=[{"text": f"Use the key {key} from the vault.", "files": []}])
    out = draft.offline(c)
    assert not find_secrets(out["rule"]) and "a1B2c3D4e5" not in out["rule"]


@pytest.mark.parametrize("fix,rule", [
    ("Use the tmp_path fixture for files a test writes.", "Use the tmp_path fixture for files a test writes"),
    ("I fixed it by pinning numpy below 2.", "Pin numpy below 2"),
    ("OK, fixed it by running `make proto` first. Tests pass now.", "Run `make proto` first"),
    ("The fix is to quote the glob in the shell", "Quote the glob in the shell"),
    ("We need to set TZ=UTC before the date tests.", "Set TZ=UTC before the date tests"),
    ("The store did not create its folder.", None),
    ("Should I use tmp_path?", None),
    ("Use /tmp/pytest-of-me/pytest-3/x as the folder.", None),
    ("", None),
    ("Use " + "the long way " * 30, None),
])
def test_a_fix_becomes_an_instruction_only_when_it_says_one(fix, rule):
    assert draft.fix_instruction(fix) == rule


@pytest.mark.parametrize("files,globs", [
    (["tests/test_store.py"], ["tests/**/*.py"]),
    (["tests/test_store.py", "tests/unit/test_x.py", "src/pkg/store.py"], ["tests/**/*.py", "src/**/*.py"]),
    (["web/a.ts", "web/b.tsx", "web/c.ts"], ["web/**/*.{ts,tsx}"]),
    (["Makefile", "scripts/run"], ["scripts/**", "Makefile"]),
    (["./pkg/a.go"], ["pkg/**/*.go"]),
    ([], []),
    (["/usr/lib/python3/x.py", "../other/x.py", "node_modules/a/index.js", ".venv/lib/x.py", "/tmp/abc/t.py"], []),
    (["src/a.py", "C:/x.py", "~/.bashrc", "a\nb.py"], ["src/**/*.py"]),
])
def test_paths_are_the_narrowest_globs_the_evidence_supports(files, globs):
    assert draft.suggest_paths(files) == globs


@pytest.mark.parametrize("failure,topic", [
    ({"kind": "test", "tool": "jest"}, "testing"), ({"kind": "lint", "tool": "eslint"}, "lint"),
    ({"kind": "type", "tool": "mypy"}, "types"), ({"kind": "build", "tool": "npm"}, "build"),
    ({"kind": "runtime", "tool": "node"}, "runtime"), ({"kind": "command", "tool": "git"}, "commands"),
    ({"tool": "pyright"}, "types"), ({}, "commands"),
])
def test_the_topic_follows_the_kind_of_failure(failure, topic):
    assert draft.topic_for(failure) == topic
