"""Failure signatures (curator/rules/signature.py): real outputs in, what recurs out."""

from __future__ import annotations

import pytest

from memcurate.curator.rules import signature
from memcurate.curator.rules.signature import KINDS, classify, failures, looks_failed

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
    assert isinstance(f, signature.Failure)
    assert set(f.as_dict()) == {
        "kind",
        "tool",
        "signature",
        "test",
        "error_type",
        "message",
        "files",
        "excerpt",
    }
    with pytest.raises(AttributeError):  # frozen: a failure read from an output is what it is
        f.kind = "lint"
    assert len(f.key) == 12 and int(f.key, 16) >= 0


def test_a_pytest_failure_keeps_test_id_error_type_and_message():
    [f] = failures("uv run pytest -x", PYTEST_OUT, project="/Users/dain/workspace/claude-code-log")
    assert (f.kind, f.tool, f.test, f.error_type) == (
        "test",
        "pytest",
        "test/test_cache.py::TestCache::test_save",
        "TypeError",
    )
    assert (
        f.message
        == "CacheManager.__init__() missing <n> required positional argument: 'library_version'"
    )
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
    [f] = failures(
        "git checkout nope", "error: pathspec 'nope' did not match any file(s) known to git"
    )
    assert (f.kind, f.tool) == ("command", "git checkout")
    assert failures("git checkout nope", "") == []


# ---- the table: real outputs (tests/data/failures/, each with a note of its source) ----------------------------

DATA = __import__("pathlib").Path(__file__).parents[1] / "data" / "failures"
PROJECT = "/Users/dain/workspace/claude-code-log"


def _case(name: str) -> tuple[str, str]:
    """(command, output) of a stored output: line 1 its source, line 2 `$ command`, then the output."""
    text = (DATA / f"{name}.txt").read_text(encoding="utf-8")
    _note, command, output = text.split("\n", 2)
    return command[2:], output


# name: (kind, tool, test id or "", error type / code, files of the first failure, how many failures)
TABLE = {
    "pytest_typeerror": (
        "test",
        "pytest",
        "test/test_combined_transcript_link.py::TestCombinedTranscriptLink::"
        "test_no_combined_link_with_empty_cache",
        "TypeError",
        ("test/test_combined_transcript_link.py",),
        2,
    ),
    "pytest_not_found": ("test", "pytest", "", "", (), 1),
    "make_wrapper": (
        "test",
        "pytest",
        "tests/conftest.py",
        "ModuleNotFoundError",
        ("tests/conftest.py",),
        1,
    ),
    "unittest": (
        "test",
        "unittest",
        "tests.test_strings.TestStringMethods.test_upper",
        "AssertionError",
        ("tests/test_strings.py",),
        1,
    ),
    "jest_fail": (
        "test",
        "jest",
        "src/__tests__/features/cycle.service.test.ts::CycleService › create › "
        "should create a new cycle with valid data",
        "ValidationError",
        ("src/__tests__/features/cycle.service.test.ts", "src/features/cycle/service.ts"),
        3,
    ),
    "vitest_fail": (
        "test",
        "vitest",
        "src/math.test.ts::adds > adds two numbers",
        "AssertionError",
        ("src/math.test.ts",),
        1,
    ),
    "vitest_tail": (
        "test",
        "vitest",
        "test/performance/regression.test.ts::Performance Regression Tests > "
        "CRUD Operation Performance > should create record within budget",
        "AssertionError",
        ("test/performance/regression.test.ts",),
        1,
    ),
    "go_test_v": (
        "test",
        "go",
        "github.com/conneroisu/templar/internal/config.TestValidateBuildConfig_Security/"
        "path_traversal_in_cache_dir",
        "",
        ("security_test.go",),
        2,
    ),
    "cargo_test": ("test", "cargo", "tests::another", "panic", ("src/lib.rs",), 1),
    "jest_ts_suite": ("type", "tsc", "", "TS2339", ("src/__tests__/utils/mocks.ts",), 2),
    "tsc_build": ("type", "tsc", "", "TS2322", ("src/objects/people-write.ts",), 2),
    "mypy": ("type", "mypy", "", "arg-type", ("src/store.py",), 2),
    "pyright": (
        "type",
        "pyright",
        "",
        "reportUnknownVariableType",
        ("claude_code_log/converter.py",),
        2,
    ),
    "ruff_e902": ("lint", "ruff", "", "E902", ("claude_code_log/renderer.py",), 1),
    "ruff_full": ("lint", "ruff", "", "F401", ("src/app/views.py",), 1),
    "flake8": ("lint", "flake8", "", "F401", ("src/app/views.py",), 2),
    "eslint_stylish": ("lint", "eslint", "", "no-unused-vars", ("src/fullOfProblems.js",), 3),
    "cargo_clippy": ("lint", "cargo", "", "clippy::needless_return", ("src/lib.rs",), 1),
    "cargo_build": ("build", "cargo", "", "E0308", ("src/main.rs",), 1),
    "go_build": ("build", "go", "", "", ("internal/config/validation.go",), 3),
    "npm_missing_script": ("command", "npm", "", "", (), 1),
    "npm_elifecycle": ("runtime", "node", "", "Error", ("scripts/build.js",), 1),
    "python_traceback": ("runtime", "python", "", "ImportError", (), 1),
    "node_esm": ("runtime", "node", "", "ReferenceError", (), 1),
    "go_panic": ("runtime", "go", "", "panic", ("cmd/root.go",), 1),
    "git_pathspec": ("command", "git checkout", "", "", (), 1),
    "zsh_cd": ("command", "cd", "", "", (), 1),
}


@pytest.mark.parametrize("name", sorted(TABLE))
def test_real_outputs_give_kind_tool_test_code_and_files(name):
    command, output = _case(name)
    kind, tool, test, code, files, count = TABLE[name]
    found = failures(command, output, project=PROJECT)
    assert len(found) == count
    first = found[0]
    assert (first.kind, first.tool, first.test, first.error_type, first.files) == (
        kind,
        tool,
        test,
        code,
        files,
    )
    for f in found:
        assert (
            f.kind in KINDS and f.signature and "\n" not in f.signature and len(f.signature) <= 300
        )
        assert len(f.excerpt) <= 600 and "\x1b" not in f.excerpt and f.excerpt.strip()
        assert all(not p.startswith(("/", "..")) and "node_modules" not in p for p in f.files)


def test_every_stored_output_is_in_the_table_and_names_its_source():
    stored = {p.stem for p in DATA.glob("*.txt")}
    assert stored == set(TABLE)
    for p in DATA.glob("*.txt"):
        note, command = p.read_text(encoding="utf-8").split("\n", 2)[:2]
        assert note.startswith("# source: ") and command.startswith("$ ")


def test_a_checker_piped_through_tail_still_looks_failed():
    for name in (
        "vitest_tail",
        "pytest_typeerror",
        "mypy",
        "tsc_build",
        "cargo_test",
        "go_test_v",
        "eslint_stylish",
        "jest_fail",
        "cargo_build",
    ):
        assert looks_failed(_case(name)[1]), name


def test_the_lesson_of_a_lint_rule_is_the_rule_not_the_file():
    [a] = failures("ruff check", "src/a.py:3:89: E501 Line too long (97 > 88)\nFound 1 error.")
    [b] = failures("ruff check", "lib/b.py:40:89: E501 Line too long (120 > 88)\nFound 1 error.")
    assert a.key == b.key and a.files == ("src/a.py",) and b.files == ("lib/b.py",)


def test_one_error_in_many_tests_gives_one_failure_per_test_up_to_the_limit():
    command, output = _case("pytest_typeerror")
    assert [f.test.rsplit("::", 1)[1] for f in failures(command, output, limit=1)] == [
        "test_no_combined_link_with_empty_cache"
    ]
    out = "\n".join(f"FAILED tests/test_x.py::test_{i} - KeyError: 'user'" for i in range(6))
    found = failures("pytest", out, limit=4)
    assert len(found) == 4 and len({f.key for f in found}) == 4


# ---- what must collapse, what must stay apart ------------------------------------------------------------------


def _one(command: str, output: str, project: str = PROJECT):
    return failures(command, output, project=project)[0]


PYTEST_TMP = """\
FAILED tests/test_store.py::test_save - FileNotFoundError: [Errno 2] No such file or directory: '{tmp}/data.json'
{footer}
"""

MUST_COLLAPSE = [
    (
        "network addresses: IPv4, IPv6, MAC",
        (
            "python a.py",
            'Traceback (most recent call last):\n  File "src/a.py", line 3, in f\nConnectionError: '
            "cannot reach (10.0.0.5) via fe80::1ff:fe23:4567:890a, nic 00:1A:2B:3C:4D:5E",
        ),
        (
            "python a.py",
            'Traceback (most recent call last):\n  File "src/a.py", line 3, in f\nConnectionError: '
            "cannot reach (192.168.31.200) via ::1, nic aa-bb-cc-dd-ee-01",
        ),
    ),
    (
        "pytest: temp dir, pytest-<n>, duration",
        (
            "uv run pytest",
            PYTEST_TMP.format(
                tmp="/tmp/pytest-of-dain/pytest-12/test_save0", footer="==== 1 failed in 0.48s ===="
            ),
        ),
        (
            "pytest -x",
            PYTEST_TMP.format(
                tmp="/private/var/folders/x1/abc123/T/pytest-of-jo/pytest-301/test_save0",
                footer="==== 1 failed, 3 passed in 12.07s ====",
            ),
        ),
    ),
    (
        "pytest: address and line numbers",
        (
            "pytest",
            "_____ test_repr _____\n\n>       assert render(obj) == 'x'\nE       AssertionError: "
            "<app.Node object at 0x1067e41a0> is not renderable\n\ntests/test_render.py:32: AssertionError\n",
        ),
        (
            "pytest",
            "_____ test_repr _____\n\n>       assert render(obj) == 'x'\nE       AssertionError: "
            "<app.Node object at 0x7f11aa90> is not renderable\n\ntests/test_render.py:57: AssertionError\n",
        ),
    ),
    (
        "pytest: ANSI colours vs plain, absolute vs relative path",
        (
            "pytest",
            "\x1b[31mFAILED\x1b[0m tests/test_a.py::test_b - ValueError: bad id 8f14e45fceea167a5a36dedd4bea2543",
        ),
        (
            "pytest",
            f"FAILED {PROJECT}/tests/test_a.py::test_b - ValueError: bad id 45c48cce2e2d7fbdea1afc51c7c6ad26",
        ),
    ),
    (
        "mypy: line numbers",
        (
            "mypy .",
            'src/a.py:12: error: Incompatible return value type (got "str", expected "int")  [return-value]',
        ),
        (
            "mypy .",
            'src/a.py:31: error: Incompatible return value type (got "str", expected "int")  [return-value]',
        ),
    ),
    (
        "ruff: file and position",
        ("ruff check", "src/a.py:3:1: F401 [*] `os` imported but unused"),
        ("ruff check", "src/other.py:9:8: F401 [*] `sys` imported but unused"),
    ),
    (
        "eslint: file and position",
        (
            "npx eslint .",
            "/home/u/web/src/a.js\n  1:10  error  'x' is defined but never used  no-unused-vars\n",
        ),
        (
            "npx eslint .",
            "/Users/v/web/src/b.js\n  7:3  error  'y' is defined but never used  no-unused-vars\n",
        ),
    ),
    (
        "tsc: both forms, ANSI, positions",
        (
            "npx tsc",
            "src/a.ts(87,28): error TS2722: Cannot invoke an object which is possibly 'undefined'.",
        ),
        (
            "npm run typecheck",
            "\x1b[96msrc/a.ts\x1b[0m:\x1b[93m505\x1b[0m:\x1b[93m27\x1b[0m - \x1b[91merror\x1b[0m"
            "\x1b[90m TS2722: \x1b[0mCannot invoke an object which is possibly 'undefined'.",
        ),
    ),
    (
        "cargo: position and the time it took",
        ("cargo build", "error[E0308]: mismatched types\n --> src/main.rs:4:5\n"),
        (
            "cargo build",
            "   Compiling x v0.1.0\nerror[E0308]: mismatched types\n  --> src/main.rs:40:17\n",
        ),
    ),
    (
        "go test: durations and line numbers",
        (
            "go test ./...",
            "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 3 items, want 4\nFAIL\n"
            "FAIL\texample.com/m/parse\t0.010s\n",
        ),
        (
            "go test ./parse",
            "--- FAIL: TestParse (1.73s)\n    parse_test.go:19: got 5 items, want 4\nFAIL\n"
            "FAIL\texample.com/m/parse\t2.113s\n",
        ),
    ),
    (
        "npm: the log file's timestamp",
        (
            "npm run build",
            'npm ERR! Missing script: "build"\nnpm ERR! A complete log of this run can be found in:\n'
            "npm ERR!     /home/u/.npm/_logs/2024-05-01T10_22_31_123Z-debug-0.log",
        ),
        (
            "npm run build",
            'npm error Missing script: "build"\nnpm error A complete log of this run can be found in:'
            " /Users/v/.npm/_logs/2025-01-09T08_00_00_001Z-debug-0.log",
        ),
    ),
    (
        "runtime: timestamp and uuid in the message",
        (
            "python app.py",
            'Traceback (most recent call last):\n  File "/Users/dain/workspace/claude-code-log/app.py", '
            "line 3, in <module>\nKeyError: 'session 0d3a8e6f-290f-4105-a327-a2496e5e2a83 at "
            "2025-06-15T00:46:15Z'",
        ),
        (
            "python app.py",
            'Traceback (most recent call last):\n  File "app.py", line 9, in <module>\n'
            "KeyError: 'session 1b2c3d4e-0000-4105-a327-a2496e5e2a83 at 2026-01-02T10:00:01Z'",
        ),
    ),
]

MUST_NOT_COLLAPSE = [
    (
        "pytest: another test",
        ("pytest", "FAILED tests/test_a.py::test_save - KeyError: 'id'"),
        ("pytest", "FAILED tests/test_a.py::test_load - KeyError: 'id'"),
    ),
    (
        "pytest: another parametrize id",
        ("pytest", "FAILED tests/test_a.py::test_save[case-1] - KeyError: 'id'"),
        ("pytest", "FAILED tests/test_a.py::test_save[case-2] - KeyError: 'id'"),
    ),
    (
        "pytest: another error type",
        ("pytest", "FAILED tests/test_a.py::test_save - KeyError: 'id'"),
        ("pytest", "FAILED tests/test_a.py::test_save - IndexError: 'id'"),
    ),
    (
        "pytest: another message",
        ("pytest", "FAILED tests/test_a.py::test_save - KeyError: 'id'"),
        ("pytest", "FAILED tests/test_a.py::test_save - KeyError: 'name'"),
    ),
    (
        "mypy: another code",
        ("mypy .", 'src/a.py:1: error: Name "x" is not defined  [name-defined]'),
        ("mypy .", 'src/a.py:1: error: Name "x" is not defined  [attr-defined]'),
    ),
    (
        "mypy: another quoted name",
        ("mypy .", 'src/a.py:1: error: Name "x" is not defined  [name-defined]'),
        ("mypy .", 'src/a.py:1: error: Name "y" is not defined  [name-defined]'),
    ),
    (
        "ruff: another rule",
        ("ruff check", "src/a.py:3:1: F401 [*] `os` imported but unused"),
        ("ruff check", "src/a.py:3:1: F841 Local variable `os` is assigned to but never used"),
    ),
    (
        "eslint: another rule",
        (
            "npx eslint .",
            "/home/u/web/src/a.js\n  1:10  error  'x' is defined but never used  no-unused-vars\n",
        ),
        (
            "npx eslint .",
            "/home/u/web/src/a.js\n  1:10  error  Expected '===' and instead saw '=='  eqeqeq\n",
        ),
    ),
    (
        "tsc: another code",
        ("npx tsc", "src/a.ts(1,1): error TS2339: Property 'x' does not exist on type 'A'."),
        ("npx tsc", "src/a.ts(1,1): error TS2551: Property 'x' does not exist on type 'A'."),
    ),
    (
        "tsc: another property",
        ("npx tsc", "src/a.ts(1,1): error TS2339: Property 'x' does not exist on type 'A'."),
        ("npx tsc", "src/a.ts(1,1): error TS2339: Property 'y' does not exist on type 'A'."),
    ),
    (
        "cargo: another error code",
        ("cargo build", "error[E0308]: mismatched types\n --> src/main.rs:4:5\n"),
        ("cargo build", "error[E0382]: borrow of moved value: `v`\n --> src/main.rs:4:5\n"),
    ),
    (
        "go test: another test",
        (
            "go test ./...",
            "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 3, want 4\nFAIL\tm/p\t0.01s\n",
        ),
        (
            "go test ./...",
            "--- FAIL: TestFormat (0.00s)\n    parse_test.go:12: got 3, want 4\nFAIL\tm/p\t0.01s\n",
        ),
    ),
    (
        "npm: another missing script",
        ("npm run build", 'npm ERR! Missing script: "build"'),
        ("npm run lint", 'npm ERR! Missing script: "lint"'),
    ),
    (
        "command: another program",
        ("git checkout x", "error: pathspec 'x' did not match any file(s) known to git"),
        ("git stash push x", "error: pathspec 'x' did not match any file(s) known to git"),
    ),
    (
        "runtime: raised from another project file",
        (
            "python a.py",
            "Traceback (most recent call last):\n  File \"src/a.py\", line 3, in f\nKeyError: 'id'",
        ),
        (
            "python b.py",
            "Traceback (most recent call last):\n  File \"src/b.py\", line 3, in f\nKeyError: 'id'",
        ),
    ),
]


@pytest.mark.parametrize("why,one,other", MUST_COLLAPSE, ids=[c[0] for c in MUST_COLLAPSE])
def test_the_same_failure_in_another_session_collapses(why, one, other):
    a, b = _one(*one), _one(*other)
    assert (a.kind, a.signature, a.key) == (b.kind, b.signature, b.key)


@pytest.mark.parametrize(
    "tmp",
    [
        "/tmp/pytest-of-dain/pytest-12/test_save0",
        "/private/var/folders/x1/abc123/T/pytest-of-jo/pytest-301/test_save0",
        "C:\\Users\\jo\\AppData\\Local\\Temp\\pytest-of-jo\\pytest-3\\test_save0",
    ],
)
def test_a_quoted_temp_path_becomes_one_placeholder_inside_its_quotes(tmp):
    # Linux, macOS and Windows runs of one test are one failure; the quotes around the path stay.
    found = _one("pytest", PYTEST_TMP.format(tmp=tmp, footer=""))
    assert found.message.endswith("No such file or directory: '<tmp>'")


@pytest.mark.parametrize("why,one,other", MUST_NOT_COLLAPSE, ids=[c[0] for c in MUST_NOT_COLLAPSE])
def test_different_failures_stay_apart(why, one, other):
    assert _one(*one).key != _one(*other).key


def test_normalising_keeps_codes_and_identifiers_with_digits():
    from memcurate.curator.rules.normalise import message

    text = message(
        "test_v2 failed: TS2339 E501 E0308 [arg-type] at 0x7f11 after 3.2s in /tmp/abc/x.json line 12"
    )
    assert (
        text
        == "test_v2 failed: TS2339 E501 E0308 [arg-type] at <addr> after <dur> in <tmp> line <n>"
    )


# ---- secrets, size, garbage ------------------------------------------------------------------------------------


def test_a_secret_in_an_error_never_reaches_the_signature_or_the_excerpt():
    key = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 3
    token = "ghp_" + "x7Y8z9" * 6
    outputs = [
        ("pytest", f"FAILED tests/test_api.py::test_call - AuthError: invalid key {key}"),
        (
            "curl -H 'Authorization: x' https://api",
            f"curl: (22) The requested URL returned error: 401 {token}",
        ),
        (
            "python app.py",
            f'Traceback (most recent call last):\n  File "app.py", line 1\nValueError: '
            f"password=hunter2hunter2 rejected for {key}",
        ),
    ]
    for command, output in outputs:
        [f] = failures(command, output)
        for text in (f.signature, f.message, f.excerpt, f.test):
            assert key not in text and token not in text and "hunter2hunter2" not in text
        assert "[REDACTED:" in f.signature


def test_a_megabyte_of_output_is_read_only_at_its_ends():
    command, output = _case("pytest_typeerror")
    # ~1.4 MB between the head and the summary
    noise = "PASSED tests/test_many.py::test_ok\n" * 40_000
    big = output.replace("=================================== FAILURES", noise + "=== FAILURES", 1)
    assert len(big) > 1_000_000
    found = failures(command, big, project=PROJECT)
    assert [f.test.rsplit("::", 1)[1] for f in found] == [
        "test_no_combined_link_with_empty_cache",
        "test_combined_link_with_valid_cache",
    ]
    assert signature._bound(big).count("\n") < 3000


@pytest.mark.parametrize(
    "output",
    [
        "",
        "   \n\n",
        "\x00\x01\x02\xff" * 1000,
        "\ud800 broken surrogate",
        "=" * 100_000,
        "Exit code 1\n",
        "FAILED",
        "E   ",
        "--- FAIL:",
        "error[",
        "Traceback (most recent call last):",
        '  File "x", line',
        "\x1b[31m\x1b[0m",
        bytes(range(256)).decode("latin-1") * 50,
    ],
)
def test_garbage_gives_nothing_or_one_generic_failure_never_an_exception(output):
    found = failures("some-tool --flag", output)
    assert len(found) <= 1
    for f in found:
        assert f.kind in KINDS and len(f.signature) <= 300


def test_claude_codes_own_refusals_are_not_failures():
    assert (
        failures(
            "rm -rf x",
            "The user doesn't want to proceed with this tool use. The tool use was rejected",
        )
        == []
    )
    assert failures("claude --version", "This command requires approval") == []
    # Claude Code's sandbox, and a user's broken hook: not the project failing (both seen in real sessions)
    assert (
        failures(
            "cd /tmp/x && ./templar init",
            "cd to '/tmp/x' was blocked. For security, Claude Code may only "
            "change directories to child directories of the allowed working directories",
        )
        == []
    )
    assert (
        failures(
            "git rm x",
            "PreToolUse:Bash hook error: [uv run .claude/hooks/pre_tool_use.py]: warning",
        )
        == []
    )
    # a user's hook refusing the command (real output): a policy, not a failure of `rm`
    assert (
        failures(
            "rm -rf dist",
            "Bash operation blocked by hook:\n- [uv run .claude/hooks/pre_tool_use.py]: "
            "BLOCKED: Dangerous rm command detected and prevented\n",
        )
        == []
    )


@pytest.mark.parametrize(
    "command,output",
    [
        (
            "go test ./internal/config -v",
            "FAIL\nFAIL\tgithub.com/acme/app/internal/config\t0.010s\nFAIL",
        ),
        ("git diff origin/main HEAD --name-only | grep -E ts", "Error"),
        ("ls ~/x/gen.sh 2>/dev/null && head -5 ~/x/gen.sh", "Exit code 2"),
        ("ls -la SPEC.md", "-rw-r--r--  1 jh  staff  11550 Apr  1 22:31 SPEC.md"),
        ("ssh box 'cat .runner'", "****************\n   AUTHORIZED ACCESS ONLY\n****************"),
        ("npm run test:coverage", "PASS src/a.test.ts\n  A\n    ✓ works (3 ms)\n"),
    ],
)
def test_an_output_that_does_not_say_what_failed_is_not_counted(command, output):
    # Counted across sessions, "FAIL" or "Exit code 2" would make every failure of the program one
    # signature: a rule about nothing. (Each seen in the shared transcripts.)
    assert failures(command, output) == []


def test_passing_commands_do_not_load_dataclasses_or_hashlib():
    import subprocess
    import sys

    code = (
        "import sys; from memcurate.curator.rules.signature import classify, looks_failed; "
        "classify('uv run pytest -x'); looks_failed('5 passed'); "
        "print(sorted(m for m in ('dataclasses', 'typing', 'hashlib', 'memcurate.curator.util.redact', 'yaml') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
