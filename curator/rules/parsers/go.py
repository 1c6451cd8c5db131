"""Go: `go test` failures, compiler and vet errors, panics."""

from __future__ import annotations

from memcurate.curator.util.lazyre import LazyRegex

from . import Found, Output

_FAIL = LazyRegex(r"^\s*--- FAIL: (\S+)", needles=("--- FAIL: ",))
_PKG = LazyRegex(r"^FAIL\s+(\S+)\s", needles=("FAIL",))
_RUN = LazyRegex(r"^=== (?:RUN|CONT|PAUSE|NAME)\s+(\S+)", needles=("=== ",))
_SAID = LazyRegex(r"^\s+(\w[\w.-]*\.go):\d+: ?(.*)$", needles=(".go:",))
_TESTIFY = LazyRegex(r"^\s+Error:\s+(.*)$", needles=("Error:",))
# `./x.go:3:2: undefined: y`, `internal/a/b.go:375:6: f redeclared in this block`, `vet: ./x.go:…`
_COMPILE = LazyRegex(
    r"^(?:vet: )?(\.?[\w./-]+\.go):(\d+)(?::(\d+))?: (.*?)(?: \((\w+)\))?\s*$", needles=(".go:",)
)
_PANIC = LazyRegex(r"^panic: (.*?)\s*$", needles=("panic: ",))
_FRAME = LazyRegex(r"^\t(\S+?\.go):\d+", needles=(".go:",))


def _said(lines: list[str], start: int) -> tuple[str, list[str], list[str]]:
    """What a test said (its `file_test.go:12: message`, testify's `Error:`) from `start` on, the lines
    that say it, and the files they name."""
    msg, excerpt, files = "", [], []
    for line in lines[start : start + 30]:
        if (
            _RUN.match(line)
            or _FAIL.match(line)
            or line.startswith(("--- PASS", "--- SKIP", "FAIL", "ok "))
        ):
            break
        s = _SAID.match(line)
        if s and not msg:
            excerpt.append(line.strip())
            files.append(s.group(1))
            if s.group(2).strip():
                msg = s.group(2).strip()
            continue
        t = _TESTIFY.match(line)
        if t and (not msg or msg == "Error Trace:"):
            msg = t.group(1).strip()
            excerpt.append(line.strip())
            break
        p = _PANIC.match(line)
        if p and not msg:
            msg = "panic: " + p.group(1)
            excerpt.append(line)
    return msg, excerpt, files


def test(out: Output) -> list[Found]:
    if "--- FAIL" not in out.text:
        return []
    lines = out.lines
    failed = [(i, m.group(1)) for i, m in ((i, _FAIL.match(x)) for i, x in enumerate(lines)) if m]
    names = [n for _, n in failed]
    pkg = next((m.group(1) for m in map(_PKG.match, lines) if m), "")
    found = []
    for i, name in failed:
        if any(other.startswith(name + "/") for other in names):
            continue  # a parent fails because its subtest did: the subtest is the lesson
        run = next(
            (j for j, x in enumerate(lines) if (r := _RUN.match(x)) and r.group(1) == name), None
        )
        msg, excerpt, files = _said(lines, run + 1) if run is not None else ("", [], [])
        if not msg:
            msg, excerpt, files = _said(lines, i + 1)
        found.append(
            Found(
                "test",
                "go",
                test=f"{pkg}.{name}" if pkg else name,
                message=msg,
                files=files,
                excerpt=[lines[i].strip()] + excerpt[:3],
            )
        )
    return found


def compile_errors(out: Output) -> list[Found]:
    if ".go:" not in out.text:
        return []
    golangci = "golangci-lint" in out.command
    kind = "lint" if out.kind == "lint" or golangci else "build"
    found = []
    for line in out.lines:
        m = _COMPILE.match(line)
        if not m or m.group(4) in ("too many errors",) or m.group(4).lstrip(": ").startswith("#"):
            continue
        code = m.group(5) or "" if golangci else ""
        msg = m.group(4) if golangci or not m.group(5) else f"{m.group(4)} ({m.group(5)})"
        found.append(
            Found(
                kind,
                "golangci-lint" if golangci else "go",
                error_type=code,
                message=msg,
                files=[m.group(1)],
                excerpt=[line],
            )
        )
    return found


def panic(out: Output) -> list[Found]:
    if "panic: " not in out.text or "goroutine " not in out.text:
        return []
    lines = out.lines
    for i, line in enumerate(lines):
        m = _PANIC.match(line)
        if m:
            files = [f.group(1) for f in map(_FRAME.match, lines[i + 1 : i + 80]) if f]
            return [
                Found(
                    "runtime",
                    "go",
                    error_type="panic",
                    message=m.group(1),
                    files=files,
                    excerpt=lines[i : i + 4],
                )
            ]
    return []
