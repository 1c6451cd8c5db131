"""Python's checkers: pytest, unittest, and the interpreter's own traceback."""

from __future__ import annotations

from memcurate.curator.util.lazyre import LazyRegex

from . import Found, Output

# pytest's short summary: `FAILED tests/x.py::test_y[p-1] - TypeError: msg`, `ERROR tests/x.py - ...`
_SUMMARY = LazyRegex(r"^(FAILED|ERROR) (\S+?)(?: - (.*))?$", needles=("FAILED ", "ERROR "))
# A section header: `______ TestX.test_y ______`, `____ ERROR collecting tests/x.py ____`
_SECTION = LazyRegex(r"^_{2,} (.+?) _{2,}$", needles=("__",))
# Where a failure surfaced: `tests/x.py:32: TypeError` (the last one is the innermost)
_WHERE = LazyRegex(r"^(\S+?\.py):(\d+): ([A-Za-z_][\w.]*)$", needles=(".py:",))
_EXC = LazyRegex(
    r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Iteration|Timeout)"
    r"|[A-Za-z_][\w.]*\.[A-Z]\w*)(?::\s?(.*))?$"
)
_FRAME = LazyRegex(r'^\s*File "([^"]+)", line (\d+)', needles=('File "',))
_NOT_FOUND = LazyRegex(
    r"^ERROR: (file or directory not found|not found|usage): ?(.*)$", needles=("ERROR: ",)
)
_CLOSING = LazyRegex(
    r"^=+ (.*\b(?:no tests ran|deselected|errors?|failed)\b.*?) =+$",
    needles=("no tests ran", "deselected", "error", "failed"),
)
_CONFTEST = LazyRegex(
    r"^ImportError while loading conftest '([^']+)'",
    needles=("ImportError while loading conftest",),
)
_UNITTEST = LazyRegex(r"^(FAIL|ERROR): (\w+) \(([\w.]+)\)", needles=(" (",))


def _sections(lines: list[str], text: str) -> list[dict]:
    out: list[dict] = []
    cur = None
    section, where = _SECTION.matcher(text), _WHERE.matcher(text)
    for line in lines:
        m = section(line)
        if m:
            name = m.group(1).strip()
            for prefix in ("ERROR at setup of ", "ERROR at teardown of ", "ERROR collecting "):
                if name.startswith(prefix):
                    name = name[len(prefix) :]
            cur = {"name": name, "e": [], "where": [], "lines": []}
            out.append(cur)
            continue
        if cur is None:
            continue
        if line.startswith("====="):
            cur = None
            continue
        if line.startswith("E ") or line == "E":
            cur["e"].append(line[1:].strip())
            cur["lines"].append(line)
            continue
        w = where(line)
        if w:
            cur["where"].append((w.group(1), w.group(3)))
            cur["lines"].append(line)
    return out


def _error(section: dict) -> tuple[str, str]:
    """(error type, message) of a section: the innermost location names the type, the E lines say it."""
    etype = section["where"][-1][1] if section["where"] else ""
    msg = ""
    for text in section["e"]:
        if not text:
            continue
        m = _EXC.match(text)
        if m and (not etype or m.group(1).rsplit(".", 1)[-1] == etype.rsplit(".", 1)[-1]):
            etype = etype or m.group(1)
            msg = m.group(2) or ""
            break
        if not msg:
            msg = text
    if not etype and msg.startswith("assert"):
        etype = "AssertionError"
    return etype, msg


def _split(summary_msg: str) -> tuple[str, str]:
    m = _EXC.match(summary_msg.strip())
    if m:
        return m.group(1), m.group(2) or ""
    return "", summary_msg


def pytest(out: Output) -> list[Found]:
    if "pytest" not in out.command and not any(
        mark in out.text
        for mark in (
            "FAILED",
            "ERROR",
            "test session starts",
            "no tests ran",
            "while loading conftest",
        )
    ):
        return []  # (pytest's own command may show only a failure's section: `pytest -x | head`)
    lines, command = out.lines, out.command
    summary = [m for m in map(_SUMMARY.matcher(out.text), lines) if m]
    is_pytest = bool(summary) and any(
        "::" in m.group(2) or m.group(2).endswith(".py") for m in summary
    )
    if not (
        is_pytest
        or "pytest" in command
        or "while loading conftest" in out.text
        or any(("test session starts" in x or "short test summary" in x) for x in lines[:400])
    ):
        return []
    found: list[Found] = []
    sections = _sections(lines, out.text)
    by_name = {s["name"]: s for s in sections}
    for m in summary:
        test = m.group(2)
        tail = test.split("::", 1)[1].replace("::", ".") if "::" in test else test
        sec = by_name.get(tail) or by_name.get(tail.rsplit(".", 1)[-1])
        etype, msg = _error(sec) if sec else ("", "")
        if m.group(3) and not msg:
            etype2, msg = _split(m.group(3))
            etype = etype or etype2
        files = [test.split("::", 1)[0]] + ([w[0] for w in reversed(sec["where"])] if sec else [])
        excerpt = [m.group(0)] + (sec["lines"][:6] if sec else [])
        found.append(
            Found(
                "test",
                "pytest",
                test=test,
                error_type=etype,
                message=msg,
                files=files,
                excerpt=excerpt,
            )
        )
    if not found:
        for sec in sections:
            if not (sec["e"] or sec["where"]):
                continue
            etype, msg = _error(sec)
            files = [w[0] for w in reversed(sec["where"])]
            found.append(
                Found(
                    "test",
                    "pytest",
                    test=sec["name"],
                    error_type=etype,
                    message=msg,
                    files=files,
                    excerpt=sec["lines"][:6],
                )
            )
    if not found:
        for i, line in enumerate(lines):
            c = _CONFTEST.match(line)
            if c:  # a conftest that does not import stops the whole run
                e = next((x[1:].strip() for x in lines[i + 1 : i + 30] if x.startswith("E ")), "")
                etype, msg = _split(e)
                found.append(
                    Found(
                        "test",
                        "pytest",
                        test=c.group(1),
                        error_type=etype,
                        message=msg,
                        files=[c.group(1)],
                        excerpt=[line, "E   " + e],
                    )
                )
                break
    if not found:
        for line in lines:
            m = _NOT_FOUND.match(line)
            if m:
                found.append(
                    Found(
                        "test",
                        "pytest",
                        message=f"{m.group(1)}: {m.group(2)}".strip(": "),
                        excerpt=[line],
                    )
                )
                break
    if not found:
        # the closing line: "no tests ran", "205 deselected in 0.58s"
        for line in reversed(lines[-50:]):
            m = _CLOSING.match(line)
            if m:
                found.append(Found("test", "pytest", message=m.group(1), excerpt=[line]))
                break
    return found


def unittest(out: Output) -> list[Found]:
    """`FAIL: test_x (pkg.TestX)` blocks: the traceback's last line is the error."""
    if "FAIL: " not in out.text and "ERROR: " not in out.text:
        return []
    lines = out.lines
    found: list[Found] = []
    for i, line in enumerate(lines):
        m = _UNITTEST.match(line)
        if not m:
            continue
        block: list[str] = []
        for nxt in lines[i + 1 : i + 80]:
            if nxt.startswith(("=====", "-----")) and block:
                if nxt.startswith("=====") or len(block) > 2:
                    break
            if _UNITTEST.match(nxt):
                break
            block.append(nxt)
        tb = traceback_parts(block)
        etype, msg, files = tb if tb else ("", "", [])
        # Python 3.11+ prints the full id in the parentheses: `test_x (pkg.TestX.test_x)`
        test = m.group(3) if m.group(3).endswith("." + m.group(2)) else f"{m.group(3)}.{m.group(2)}"
        found.append(
            Found(
                "test",
                "unittest",
                test=test,
                error_type=etype,
                message=msg,
                files=files,
                excerpt=[line] + [b for b in block if b.strip() and not b.startswith("---")][-3:],
            )
        )
    return found


def traceback_parts(lines: list[str]) -> tuple[str, str, list[str]] | None:
    """(error type, message, frame files innermost first) of the last traceback in `lines`."""
    start = None
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith("Traceback (most recent call last)"):
            start = i
            break
    if start is None:
        return None
    frames: list[str] = []
    for line in lines[start + 1 :]:
        f = _FRAME.match(line)
        if f:
            frames.append(f.group(1))
            continue
        if line and not line[0].isspace():
            m = _EXC.match(line.strip())
            if m:
                return m.group(1), m.group(2) or "", frames[::-1]
            if ":" in line and " " not in line.split(":", 1)[0]:
                etype, _, msg = line.partition(":")
                return etype, msg.strip(), frames[::-1]
    return ("", "", frames[::-1]) if frames else None


def traceback(out: Output) -> list[Found]:
    if "Traceback (most recent call last)" not in out.text:
        return []
    lines = out.lines
    tb = traceback_parts(lines)
    if not tb or not (tb[0] or tb[1]):
        return []
    etype, msg, files = tb
    last = next(
        (i for i in range(len(lines) - 1, -1, -1) if lines[i].startswith(etype or msg)),
        len(lines) - 1,
    )
    return [
        Found(
            "runtime",
            "python",
            error_type=etype,
            message=msg,
            files=files,
            excerpt=lines[max(0, last - 4) : last + 1],
        )
    ]
