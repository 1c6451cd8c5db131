"""Rust (cargo build / test / clippy) and ty, which prints its diagnostics the way rustc does."""

from __future__ import annotations

from memcurate.curator.util.lazyre import LazyRegex

from . import Found, Output

# `error[E0308]: mismatched types`, `error: this if has identical blocks`, ty's `error[call-non-callable]: …`
_HEAD = LazyRegex(r"^error(?:\[([\w-]+)\])?: (.*?)\s*$", needles=("error[", "error: "))
_ARROW = LazyRegex(r"^\s*--> (\S+?):\d+(?::\d+)?", needles=("--> ",))
_CLIPPY = LazyRegex(r"clippy::([\w-]+)|rust-clippy/\w+/index\.html#([\w-]+)", needles=("clippy",))
_NOISE = (
    "could not compile",
    "aborting due to",
    "test failed, to rerun",
    "build failed",
    "Could not compile",
    "could not find",
    "linking with",
)
_TEST = LazyRegex(r"^test (\S+) \.\.\. FAILED\s*$", needles=(" ... FAILED",))
_STDOUT = LazyRegex(r"^---- (\S+) stdout ----\s*$", needles=(" stdout ----",))
# `thread 'tests::t' panicked at src/lib.rs:12:9:` (1.73+) or `… panicked at 'msg', src/lib.rs:12:9` (older)
_PANICKED = LazyRegex(
    r"^thread '([^']*)' panicked at (?:'(.*)', )?(\S+?):\d+:\d+:?\s*$", needles=("' panicked at ",)
)


def _panic(lines: list[str], i: int) -> tuple[str, str, list[str]]:
    """(message, file, excerpt) of the panic on line i."""
    m = _PANICKED.match(lines[i])
    if not m:
        return "", "", []
    if m.group(2) is not None:
        msg = m.group(2)
    else:
        follow = [
            x.strip() for x in lines[i + 1 : i + 4] if x.strip() and not x.startswith("note:")
        ]
        msg = follow[0] if follow else ""
        # assert_eq!: the values that differed tell one failure from another
        msg = " ".join([msg] + [x for x in follow[1:3] if x.startswith(("left:", "right:"))])
    return msg, m.group(3), lines[i : i + 4]


def cargo(out: Output) -> list[Found]:
    text = out.text
    if "error" not in text and "panicked at" not in text:
        return []
    lines, found = out.lines, []
    ty = out.tool == "ty" or "ty check" in out.command
    failed = [m.group(1) for m in map(_TEST.match, lines) if m]
    for name in failed:
        start = next(
            (i for i, x in enumerate(lines) if (s := _STDOUT.match(x)) and s.group(1) == name), None
        )
        msg, path = "", ""
        excerpt: list[str] = []
        if start is not None:
            p = next(
                (
                    j
                    for j in range(start + 1, min(start + 40, len(lines)))
                    if _PANICKED.match(lines[j])
                ),
                None,
            )
            if p is not None:
                msg, path, excerpt = _panic(lines, p)
        found.append(
            Found(
                "test",
                "cargo",
                test=name,
                error_type="panic" if path else "",
                message=msg,
                files=[path] if path else [],
                excerpt=[f"test {name} ... FAILED"] + excerpt,
            )
        )
    for i, line in enumerate(lines):
        h = _HEAD.match(line)
        if not h or any(n in h.group(2) for n in _NOISE):
            continue
        block = lines[i + 1 : i + 40]
        end = next(
            (
                j
                for j, x in enumerate(block)
                if x.startswith(("error", "warning")) or _TEST.match(x)
            ),
            len(block),
        )
        block = block[:end]
        arrow = next((a for a in map(_ARROW.match, block) if a), None)
        files = [arrow.group(1)] if arrow else []
        if ty:
            found.append(
                Found(
                    "type",
                    "ty",
                    error_type=h.group(1) or "",
                    message=h.group(2),
                    files=files,
                    excerpt=[line] + ([arrow.group(0)] if arrow else []),
                )
            )
            continue
        lint = next((c for c in map(_CLIPPY.search, block) if c), None)
        if lint:
            code = "clippy::" + (lint.group(1) or lint.group(2)).replace("-", "_")
            found.append(
                Found(
                    "lint",
                    "cargo",
                    error_type=code,
                    message=h.group(2),
                    files=files,
                    excerpt=[line] + ([arrow.group(0)] if arrow else []),
                )
            )
        elif arrow or h.group(1):
            found.append(
                Found(
                    "build",
                    "cargo",
                    error_type=h.group(1) or "",
                    message=h.group(2),
                    files=files,
                    excerpt=[line] + ([arrow.group(0)] if arrow else []),
                )
            )
    if not found:
        for i, line in enumerate(lines):  # a program that panicked (cargo run, a binary)
            if _PANICKED.match(line):
                msg, path, excerpt = _panic(lines, i)
                found.append(
                    Found(
                        "runtime",
                        "rust",
                        error_type="panic",
                        message=msg,
                        files=[path],
                        excerpt=excerpt,
                    )
                )
                break
    return found
