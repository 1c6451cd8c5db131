"""JavaScript and TypeScript: jest, vitest, tsc, eslint, npm's own errors, Node's uncaught exceptions."""

from __future__ import annotations

from memcurate.curator.util.lazyre import LazyRegex

from . import Found, Output

# jest: `FAIL src/x.test.ts` then `  ● Suite › nested › test name` blocks
_JEST_FILE = LazyRegex(r"^\s*FAIL (\S+)\s*$", needles=("FAIL ",))
_JEST_HEAD = LazyRegex(r"^\s*● (.+?)\s*$", needles=("● ",))
# vitest: ` FAIL  test/x.test.ts > Suite > test name` then the error line and ` ❯ test/x.test.ts:322:37`
# (the needles: the file's extension, `\.[cm]?[jt]sx?`)
_VITEST_HEAD = LazyRegex(
    r"^\s*FAIL\s{1,2}(\S+\.[cm]?[jt]sx?) (?:> (.+?)|\[ .* \])\s*$",
    needles=(".js", ".ts", ".cjs", ".cts", ".mjs", ".mts"),
)
_CROSS = LazyRegex(r"^\s*[×✕✗] (.+?)(?: \(?\d+(?:\.\d+)? ?m?s\)?)?\s*$", needles=("× ", "✕ ", "✗ "))
_ARROW_MSG = LazyRegex(r"^\s*→ (.+)$", needles=("→ ",))
_ERROR_LINE = LazyRegex(
    r"^\s*(?:Uncaught )?([A-Z][\w.]*(?:Error|Exception)|Error)(?: \[(\w+)\])?:\s?(.*)$",
    needles=("Error", "Exception"),
)
_AT = LazyRegex(r"^\s*at (?:.*? \()?((?:file://)?[^\s()]+?):\d+(?::\d+)?\)?\s*$", needles=("at ",))
_LOC = LazyRegex(r"^\s*❯ (\S+?):\d+(?::\d+)?", needles=("❯ ",))
# tsc: `src/x.ts(87,28): error TS2722: msg`, pretty `src/x.ts:505:27 - error TS2722: msg`
_TSC = LazyRegex(
    r"^\s*(\S+?)(?:\((\d+),(\d+)\)|:(\d+):(\d+)) ?[:-] error (TS\d+): (.*?)\s*$",
    needles=(" error TS",),
)
# eslint stylish: a file line, then `  3:10  error  'x' is defined but never used  no-unused-vars`
_ESLINT = LazyRegex(
    r"^\s+(\d+):(\d+)\s+(error|warning)\s+(.+?)(?:\s{2,}(@?[\w/-]+))?\s*$",
    needles=("error", "warning"),
)
_ESLINT_UNIX = LazyRegex(
    r"^(\S+?):(\d+):(\d+): (.+?) \[(Error|Warning)/(@?[\w/-]+)\]\s*$",
    needles=("[Error/", "[Warning/"),
)
_NPM = LazyRegex(r"^npm (?:ERR!|error) (.*)$", needles=("npm ERR! ", "npm error "))


def _block(lines: list[str], start: int, stop) -> list[str]:
    out = []
    for line in lines[start : start + 60]:
        if stop(line):
            break
        out.append(line)
    return out


def _error_of(block: list[str]) -> tuple[str, str, list[str]]:
    """(error type, message, files from the stack) of a test's block of output."""
    etype, msg, files = "", "", []
    for i, line in enumerate(block):
        text = line.strip()
        if not text:
            continue
        if not msg:
            m = _ERROR_LINE.match(text)
            if m:
                etype, msg = (m.group(2) or m.group(1)), m.group(3)
            elif (
                not text.startswith(("at ", "❯", ">"))
                and not text[:1].isdigit()
                and "|" not in text[:8]
            ):
                msg = text
                # jest's `expect(received).toBe(expected)`: what was expected and received tells them apart
                extra = [
                    x.strip()
                    for x in block[i + 1 : i + 5]
                    if x.strip().startswith(("Expected", "Received"))
                ]
                if extra:
                    msg = " ".join([msg] + extra)
            continue
        a = _AT.match(line) or _LOC.match(line)
        if a:
            path = a.group(1)
            files.append(path[7:] if path.startswith("file://") else path)
    return etype, msg, files


def jest(out: Output) -> list[Found]:
    if "●" not in out.text:
        return []
    lines, found, current = out.lines, [], ""
    for i, line in enumerate(lines):
        f = _JEST_FILE.match(line)
        if f:
            current = f.group(1)
            continue
        h = _JEST_HEAD.match(line)
        if not h:
            continue
        title = h.group(1)
        block = _block(
            lines,
            i + 1,
            lambda x: bool(
                _JEST_HEAD.match(x)
                or _JEST_FILE.match(x)
                or x.startswith(("Test Suites:", "Tests:"))
            ),
        )
        if title == "Test suite failed to run":
            if "error TS" in "\n".join(block):
                continue  # the type errors inside are the failure: the tsc parser reads them
            title = ""
        etype, msg, files = _error_of(block)
        test = f"{current}::{title}" if current and title else (title or current)
        found.append(
            Found(
                "test",
                "jest",
                test=test,
                error_type=etype,
                message=msg,
                files=([current] if current else []) + files,
                excerpt=[line] + [x for x in block if x.strip()][:5],
            )
        )
    return found


def vitest(out: Output) -> list[Found]:
    if "FAIL" not in out.text and "×" not in out.text:
        return []
    lines, found = out.lines, []
    head = _VITEST_HEAD.matcher(out.text)
    for i, line in enumerate(lines):
        h = head(line)
        if not h:
            continue
        path, title = h.group(1), (h.group(2) or "")
        block = _block(
            lines,
            i + 1,
            lambda x: bool(_VITEST_HEAD.match(x) or x.startswith(("⎯", " Test Files"))),
        )
        etype, msg, files = _error_of(block)
        test = f"{path}::{title}" if title else path
        found.append(
            Found(
                "test",
                "vitest",
                test=test,
                error_type=etype,
                message=msg,
                files=[path] + files,
                excerpt=[line] + [x for x in block if x.strip()][:4],
            )
        )
    if found or "vitest" not in out.text + out.command and "Test Files" not in out.text:
        return found
    for i, line in enumerate(lines):  # no "Failed Tests" section (the output was cut): the × lines
        c = _CROSS.match(line)
        if c:
            a = _ARROW_MSG.match(lines[i + 1]) if i + 1 < len(lines) else None
            found.append(
                Found(
                    "test",
                    "vitest",
                    test=c.group(1),
                    message=a.group(1) if a else "",
                    excerpt=[line] + ([lines[i + 1]] if a else []),
                )
            )
    return found


def tsc(out: Output) -> list[Found]:
    if "error TS" not in out.text:
        return []
    found = []
    for line in out.lines:
        m = _TSC.match(line)
        if m:
            found.append(
                Found(
                    "type",
                    "tsc",
                    error_type=m.group(6),
                    message=m.group(7),
                    files=[m.group(1)],
                    excerpt=[line.strip()],
                )
            )
    return found


def eslint(out: Output) -> list[Found]:
    text = out.text
    if (
        "  error  " not in text
        and "[Error/" not in text
        and "ESLint" not in text
        and "eslint" not in out.command
    ):
        return []
    lines, found, current = out.lines, [], ""
    for line in lines:
        u = _ESLINT_UNIX.match(line)
        if u:
            if u.group(5) == "Error":
                found.append(
                    Found(
                        "lint",
                        "eslint",
                        error_type=u.group(6),
                        message=u.group(4),
                        files=[u.group(1)],
                        excerpt=[line],
                    )
                )
            continue
        m = _ESLINT.match(line)
        if m:
            if m.group(3) == "error" and current:
                found.append(
                    Found(
                        "lint",
                        "eslint",
                        error_type=m.group(5) or "",
                        message=m.group(4),
                        files=[current],
                        excerpt=[current, line],
                    )
                )
            continue
        stripped = line.strip()
        if (
            stripped
            and not line[0].isspace()
            and ("/" in stripped or "." in stripped)
            and " " not in stripped
        ):
            current = stripped
    if not found and "ESLint" in text and "Oops! Something went wrong" in text:
        # eslint itself could not run (no config, a plugin missing): its first explaining line
        lines2 = [x.strip() for x in lines if x.strip() and not x.startswith(("Oops!", "ESLint:"))]
        if lines2:
            found.append(Found("lint", "eslint", message=lines2[0], excerpt=lines2[:2]))
    return found


def npm(out: Output) -> list[Found]:
    """npm's own errors (a missing script, a failed install); ELIFECYCLE is only its wrapper: the script's
    output above it is the failure, so it gives nothing here."""
    if "npm ERR!" not in out.text and "npm error" not in out.text:
        return []
    code, said = "", []
    for line in out.lines:
        m = _NPM.match(line)
        if not m:
            continue
        text = m.group(1).strip()
        if text.startswith("code "):
            code = code or text[5:].strip()
        elif text and not text.startswith(
            (
                "errno",
                "syscall",
                "path ",
                "A complete log",
                "Lifecycle script",
                "command ",
                "workspace",
                "location",
                "Failed at",
                "This is probably",
                "signal",
                "dest ",
                "A complete",
                "Log files",
                "     ",
            )
        ):
            said.append(text)
    if (
        code == "ELIFECYCLE"
        or code.isdigit()
        or (not code and not said)
        or (said and said[0].startswith("code ELIFECYCLE"))
    ):
        return []
    if not said:
        said = [code]
    return [
        Found(
            "command",
            "npm",
            error_type="" if code == "ELIFECYCLE" else code,
            message=said[0],
            excerpt=[f"npm error {x}" for x in ([f"code {code}"] if code else []) + said[:2]],
        )
    ]


def node(out: Output) -> list[Found]:
    """An uncaught exception: `TypeError: x is not a function` with `at … (file.js:3:5)` below it."""
    if "Error" not in out.text or "    at " not in out.text:
        return []
    lines = out.lines
    for i in range(len(lines) - 1, -1, -1):
        m = _ERROR_LINE.match(lines[i])
        if not m or lines[i].startswith(" "):
            continue
        stack = [x for x in lines[i + 1 : i + 40] if x.startswith("    at ")]
        if not stack:
            continue
        files = []
        for x in stack:
            a = _AT.match(x)
            if a:
                path = a.group(1)
                files.append(path[7:] if path.startswith("file://") else path)
        return [
            Found(
                "runtime",
                "node",
                error_type=m.group(2) or m.group(1),
                message=m.group(3),
                files=files,
                excerpt=[lines[i]] + stack[:3],
            )
        ]
    return []
