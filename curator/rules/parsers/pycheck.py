"""Python's type checkers and linters: mypy, pyright, ruff, flake8, pylint."""

from __future__ import annotations

from memcurate.curator.util.lazyre import LazyRegex

from . import Found, Output

# what mypy prints: `x.py:3: error: Argument 1 has incompatible type "str"; expected "int"  [arg-type]`
_MYPY = LazyRegex(
    r"^(\S+?\.pyi?):(\d+)(?::\d+)?: error: (.*?)(?:\s+\[([\w-]+)\])?\s*$", needles=(": error: ",)
)
# pyright: `  /abs/x.py:184:17 - error: Type of "v" is unknown (reportUnknownVariableType)`
_PYRIGHT = LazyRegex(
    r"^\s*(\S+?\.pyi?):(\d+):(\d+) - error: (.*?)(?: \((report\w+)\))?\s*$", needles=(" - error: ",)
)
_PYRIGHT_RULE = LazyRegex(r"\((report\w+)\)\s*$", needles=("(report",))
# ruff / flake8 / pylint, one line each: `x.py:1:1: E902 msg`, `x.py:1:0: C0114: msg (missing-module-docstring)`
_LINE = LazyRegex(
    r"^(\S+?\.pyi?):(\d+):(\d+): ([A-Z]{1,4}\d{2,4}):? (?:\[\*\] )?(.*?)\s*$",
    needles=(".py:", ".pyi:"),
)
# ruff's newer full format: `E501 [*] Line too long (96 > 88)` then `  --> x.py:3:89`
_RUFF_HEAD = LazyRegex(r"^([A-Z]{1,4}\d{2,4}) (?:\[\*\] )?(.+?)\s*$")
_ARROW = LazyRegex(r"^\s*-->\s*(\S+?):(\d+):(\d+)", needles=("-->",))


def mypy(out: Output) -> list[Found]:
    if ": error: " not in out.text:
        return []
    found = []
    for line in out.lines:
        m = _MYPY.match(line)
        if m:
            found.append(
                Found(
                    "type",
                    "mypy",
                    error_type=m.group(4) or "",
                    message=m.group(3),
                    files=[m.group(1)],
                    excerpt=[line],
                )
            )
    return found


def pyright(out: Output) -> list[Found]:
    if " - error: " not in out.text:
        return []
    tool = "basedpyright" if "basedpyright" in out.command else "pyright"
    lines, found = out.lines, []
    for i, line in enumerate(lines):
        m = _PYRIGHT.match(line)
        if not m:
            continue
        rule, msg, excerpt = m.group(5) or "", m.group(4), [line]
        if not rule:  # a long message goes on over indented lines; the rule ends the last one
            for nxt in lines[i + 1 : i + 6]:
                # pyright indents with no-break spaces
                if _PYRIGHT.match(nxt) or not nxt[:1].isspace():
                    break
                excerpt.append(nxt)
                r = _PYRIGHT_RULE.search(nxt)
                if r:
                    rule = r.group(1)
                    break
        found.append(
            Found("type", tool, error_type=rule, message=msg, files=[m.group(1)], excerpt=excerpt)
        )
    return found


def lint(out: Output) -> list[Found]:
    """ruff, flake8, pylint: the tool is the command's when it names one of them."""
    if ".py" not in out.text:
        return []
    tool = (
        out.tool
        if out.tool in ("ruff", "flake8", "pylint")
        else (
            "ruff"
            if "ruff" in out.command
            else "flake8"
            if "flake8" in out.command
            else "pylint"
            if "pylint" in out.command
            else ""
        )
    )
    lines, found = out.lines, []
    full_format = tool == "ruff" or "-->" in out.text
    match = _LINE.matcher(out.text)
    for i, line in enumerate(lines):
        m = match(line)
        if m:
            msg = m.group(5)
            if tool == "pylint" or (
                msg.endswith(")") and m.group(4)[0] in "CRWEF" and len(m.group(4)) == 5
            ):
                msg = msg.rsplit(" (", 1)[0] if msg.endswith(")") else msg
            found.append(
                Found(
                    "lint",
                    tool or "flake8",
                    error_type=m.group(4),
                    message=msg,
                    files=[m.group(1)],
                    excerpt=[line],
                )
            )
            continue
        if full_format and i + 1 < len(lines):
            # the arrow first: its needle spares the head's pattern every line that has no arrow below
            a = next((_ARROW.match(x) for x in lines[i + 1 : i + 3] if _ARROW.match(x)), None)
            h = _RUFF_HEAD.match(line) if a else None
            if h and a and a.group(1).endswith((".py", ".pyi", ".ipynb")):
                found.append(
                    Found(
                        "lint",
                        "ruff",
                        error_type=h.group(1),
                        message=h.group(2),
                        files=[a.group(1)],
                        excerpt=[line, a.group(0)],
                    )
                )
    return found
