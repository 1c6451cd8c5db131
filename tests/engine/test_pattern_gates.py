"""The failure parsers' gates (util/lazyre.py's needles): a pattern whose needles a text lacks is neither
compiled nor run on it, so each needle must be in every text its pattern matches. Held here to every sample
the parser tests use (the stored outputs, the tests' own strings, line by line and whole, LF and CRLF) and
to a line of each gated pattern's own form, and checked end to end: the failures read are the same with
the gates taken off."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from memcurate.curator.rules import ledger, normalise, signature
from memcurate.curator.rules.parsers import generic, go, js, pycheck, python, rust
from memcurate.curator.util.lazyre import IGNORECASE, LazyRegex

ENGINE = Path(__file__).parent
DATA = ENGINE.parent / "data" / "failures"
MODULES = (signature, normalise, generic, go, js, pycheck, python, rust)
GATED = {
    f"{m.__name__.rsplit('.', 1)[-1]}.{name}": v
    for m in MODULES
    for name, v in vars(m).items()
    if isinstance(v, LazyRegex) and v.needles
}
# One line in each gated pattern's form (as the parsers' comments show them): no pattern is left untested
# for want of a sample that it matches.
OWN_FORMS = [
    "FAILED tests/x.py::test_y[p-1] - TypeError: msg",
    "ERROR tests/x.py - ImportError",
    "______ TestX.test_y ______",
    "tests/x.py:32: TypeError",
    '  File "/app/main.py", line 3, in <module>',
    "ERROR: file or directory not found: tests/nope.py",
    "============ no tests ran in 0.01s ============",
    "ImportError while loading conftest '/app/tests/conftest.py'.",
    "FAIL: test_x (pkg.TestX)",
    "ERROR: test_y (pkg.tests.TestY.test_y)",
    "error[E0308]: mismatched types",
    "error: this if has identical blocks",
    "  --> src/lib.rs:12:9",
    "   = help: https://rust-lang.github.io/rust-clippy/master/index.html#if_same_then_else",
    "   = note: `#[deny(clippy::if_same_then_else)]` on by default",
    "test tests::adds ... FAILED",
    "---- tests::adds stdout ----",
    "thread 'tests::adds' panicked at src/lib.rs:12:9:",
    "thread 'main' panicked at 'boom', src/main.rs:2:5",
    "FAIL src/x.test.ts",
    "  ● Suite › nested › test name",
    " FAIL  test/x.test.ts > Suite > test name",
    " FAIL  test/x.test.mjs [ test/x.test.mjs ]",
    "   × adds numbers 12ms",
    "   ✕ adds numbers (3 ms)",
    "     → expected 2 to be 3",
    "TypeError: x is not a function",
    "Uncaught Error [ERR_X]: boom",
    "    at Object.<anonymous> (/app/src/x.js:3:5)",
    "    at file:///app/src/x.mjs:3:5",
    " ❯ test/x.test.ts:322:37",
    "src/x.ts(87,28): error TS2722: Cannot invoke an object which is possibly 'undefined'.",
    "src/x.ts:505:27 - error TS2722: Cannot invoke an object which is possibly 'undefined'.",
    "  3:10  error  'x' is defined but never used  no-unused-vars",
    "src/a.js:3:10: 'x' is defined but never used. [Error/no-unused-vars]",
    "npm ERR! code E404",
    'npm error Missing script: "build"',
    "--- FAIL: TestAdd (0.00s)",
    "    --- FAIL: TestAdd/negative (0.00s)",
    "FAIL\texample.com/pkg\t0.003s",
    "=== RUN   TestAdd",
    "    add_test.go:12: got 3, want 4",
    "        \tError:      \tNot equal: ",
    "./x.go:3:2: undefined: y",
    "vet: internal/a/b.go:375:6: f redeclared in this block",
    "panic: runtime error: index out of range [3] with length 3",
    "\t/app/main.go:12 +0x1d",
    'x.py:3: error: Argument 1 has incompatible type "str"; expected "int"  [arg-type]',
    '  /abs/x.py:184:17 - error: Type of "v" is unknown (reportUnknownVariableType)',
    "      Type of parameter is partially unknown (reportUnknownParameterType)",
    "x.py:1:1: E902 No such file or directory (os error 2)",
    "x.pyi:1:0: C0114: Missing module docstring (missing-module-docstring)",
    "  --> x.py:3:89",
    "make: *** [Makefile:3: build] Error 2",
    "make[1]: *** No rule to make target 'x'.  Stop.",
    "npm error code ELIFECYCLE",
    "> app@1.0.0 build",
    "ELIFECYCLE  Command failed with exit code 1.",
    "error Command failed with exit code 1.",
    " ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL  app@1.0.0 test: `vitest run`",
    "Exit code 1",
    "stderr | tests/x.test.ts > logs",
    "✓ src/a.test.ts (3 tests) 4ms",
    "✔ passes",
]


def _strings(test_file: str) -> list[str]:
    tree = ast.parse((ENGINE / test_file).read_text(encoding="utf-8"))
    return [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _samples() -> list[str]:
    outputs = [p.read_text(encoding="utf-8").split("\n", 2)[2] for p in sorted(DATA.glob("*.txt"))]
    outputs += _strings("test_signatures.py") + _strings("test_attack_failures.py")
    outputs += _strings("test_triage_failures.py") + OWN_FORMS
    texts = []
    for output in outputs:
        for variant in (output, output.replace("\n", "\r\n")):
            lines = signature._lines(variant) if variant.strip() else [variant]
            texts += [variant, "\n".join(lines), *lines, *(x.strip() for x in lines)]
    return texts


SAMPLES = _samples()


def test_every_parser_pattern_with_a_cheap_test_is_gated():
    # the patterns matched line by line; a new one should say what every line it matches holds
    assert len(GATED) >= 40, sorted(GATED)


@pytest.mark.parametrize("name", sorted(GATED))
def test_a_gate_lets_through_every_sample_its_pattern_matches(name):
    rx = GATED[name]
    assert not rx.flags & IGNORECASE  # needles are matched as they are written
    matched = [s for s in SAMPLES if rx.rx.search(s)]
    assert matched, f"{name}: no sample matches it; add a line of its form to OWN_FORMS"
    missed = [s for s in matched if not rx.could_match(s)]
    assert not missed, f"{name}: the gate {rx.needles} turns away {missed[:3]!r}"


def test_a_case_blind_pattern_takes_no_needles():
    with pytest.raises(ValueError):
        LazyRegex("error", IGNORECASE, needles=("error",))


def test_a_gated_pattern_is_not_compiled_for_a_text_without_its_needles():
    rx = LazyRegex(r"^test (\S+) \.\.\. FAILED\s*$", needles=(" ... FAILED",))
    assert rx.match("test a ... ok") is None
    assert rx.search("nothing") is None and list(rx.finditer("nothing")) == []
    assert rx.sub("x", "nothing") == "nothing"
    assert rx._compiled is None
    assert rx.match("test a ... FAILED").group(1) == "a"


def test_normalising_lets_every_address_through_its_gate():
    for text in (
        "connect to 10.0.0.5 refused",
        "no route to fe80::1%en0",
        "host 2001:db8:0:0:0:0:2:1 down",
        "nic 00:1a:2b:3c:4d:5e and 00-1A-2B-3C-4D-5E",
        "mac a1:bb-cc:dd-ee:ff",
    ):
        assert normalise._may_hold_address(text)
        assert "<ip>" in normalise.message(text)
    matched = [s for s in SAMPLES if normalise._IP.rx.search(s)]
    assert matched and all(normalise._may_hold_address(s) for s in matched)


def test_normalising_lets_every_time_and_uuid_through_its_gate():
    for text in (
        "at 2025-07-14T22:59:01.123Z",
        "took 1:02:03",
        "on Mon, 14 Jul 2025",
        "Date: Tue 3 Jun 2025",
    ):
        assert normalise._may_hold_time(text) and "<time>" in normalise.message(text)
    uuid = "id 123e4567-e89b-12d3-a456-426614174000 gone"
    assert "<uuid>" in normalise.message(uuid)
    assert [s for s in SAMPLES if normalise._TIME.rx.search(s)]
    for s in SAMPLES:
        assert not normalise._TIME.rx.search(s) or normalise._may_hold_time(s)
        assert not normalise._UUID.rx.search(s) or s.count("-") >= 4


def test_a_session_id_is_used_as_a_file_name_as_the_pattern_said():
    import re

    safe = re.compile(r"[A-Za-z0-9_-]{1,%d}" % ledger.MAX_SESSION)
    for session in (
        "37f83ec9-f2ea-42a9-925e-0d5c105cb6e8",
        "a" * 80,
        "a" * 81,
        "a.b",
        "a_b",
        "x/y",
        "١٢٣",  # other digits: \d would take them, [0-9] does not
        "Ünïcode",
        "tab\there",
        "failure",
        "s1",
    ):
        as_is = ledger.session_name(session) == session
        assert as_is == bool(safe.fullmatch(session) and session != "failure"), session


def test_the_failures_read_are_the_same_without_the_gates(monkeypatch):
    cases = [
        (p.read_text(encoding="utf-8").split("\n", 2)[1][2:], None) for p in DATA.glob("*.txt")
    ]
    commands = sorted({c for c, _ in cases} | {"", "uv run pytest", "npx vitest run", "cargo test"})
    outputs = [p.read_text(encoding="utf-8").split("\n", 2)[2] for p in sorted(DATA.glob("*.txt"))]
    outputs += _strings("test_signatures.py") + OWN_FORMS + ["\n".join(OWN_FORMS)]
    outputs += [o.replace("\n", "\r\n") for o in outputs]

    def read_all():
        return [signature.failures(c, o, limit=5) for c in commands for o in outputs]

    gated = read_all()
    for rx in GATED.values():
        monkeypatch.setattr(rx, "needles", ())
    monkeypatch.setattr(normalise, "_may_hold_address", lambda text: True)
    monkeypatch.setattr(normalise, "_may_hold_time", lambda text: True)
    assert read_all() == gated


def test_a_matcher_matches_each_line_as_match_does_and_compiles_nothing_for_a_text_without_needles():
    """`matcher(text)`: the needles looked for once in the whole output, then each line matched."""
    rx = LazyRegex(r"^(\S+?\.py):(\d+): ([A-Za-z_]\w*)$", needles=(".py:",))
    lines = ["tests/x.py:32: TypeError", "E   assert 1 == 2", "app.py:3: ValueError", ""]
    match = rx.matcher("\n".join(lines))
    assert [bool(match(x)) for x in lines] == [bool(rx.match(x)) for x in lines] == [1, 0, 1, 0]
    cold = LazyRegex(r"^(\S+?\.py):(\d+)$", needles=(".py:",))
    none = cold.matcher("E   assert 1 == 2\nok")
    assert none("E   assert 1 == 2") is None and cold._compiled is None
