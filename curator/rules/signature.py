"""Failure output → normalised signatures: what makes a failure "the same one again".

A failing test, lint run, type check, build or command is reduced to a
`Failure`: its kind, the tool, and a one-line `signature` in which everything
that changes from one session to the next (temp paths, addresses, hashes,
timestamps, durations, line and column numbers, other numbers) is replaced by
a placeholder. The ledger counts signatures across sessions; the rule id is
`rule/<key>`, `key` being a hash of kind and signature.

What collapses together (the design call):

- test:    tool + test id + error type + message. One failing test is one
           lesson; the same error in five tests gives five failures (up to
           `limit`), each its own test id.
- lint:    tool + rule code. The same rule broken in another file IS the
           recurring lesson; the files go to `files`, the message is kept
           for the reader but not in the signature.
- type:    tool + code + message (quoted names kept): `TS2339 Property 'x'
           does not exist` on another type is another mistake.
- build:   tool + code + message, as for types.
- runtime: tool + error type + message + the innermost project frame's file:
           one exception raised from two places is two lessons.
- command: the program (`git checkout`, `npm run build`, `cd`) + its first
           error line, normalised.

Nothing secret reaches a signature: the message is redacted
(curator/util/redact.py) before it is normalised, and the signature once
more at the end; the excerpt is redacted as well.

Cost: `classify` and `looks_failed` run on every Bash call (PostToolUse), so
each is one regex compiled once per process; `failures` reads at most the
first 8 KB and the last 64 KB of an output. A failure's key is hashed by the
interpreter's own SHA-256 (`sha256_hex`), never through `hashlib`, whose import
loads OpenSSL: ~5 ms of every hook that counts a failure.
"""

from __future__ import annotations

from memcurate.curator.util.fieldtuple import FieldTuple
from memcurate.curator.util.lazyre import LazyRegex
from memcurate.curator.util.textsafe import clean, one_line

from . import normalise
from .parsers import Found, Output, generic, go, js, pycheck, python, rust

KINDS = ("test", "lint", "type", "build", "runtime", "command")
SIGNATURE_LIMIT = 300
EXCERPT_LIMIT = 600
HEAD_BYTES = 8 * 1024
TAIL_BYTES = 64 * 1024
LOOK_HEAD, LOOK_TAIL = 8 * 1024, 16 * 1024  # what looks_failed reads of a long output

# A checker at a command's position (start, after && || ; | ( or a runner such as `uv run`, `npx`,
# `python -m`), and what follows it up to the next operator.
_CLASSIFY = LazyRegex(
    r"(?:^|[;&|(`\n]|\$\()\s*(?:[A-Za-z_]\w*=\S*\s+)*(?:(?:sudo|time|env|nice|nohup|command)\s+)*"
    r"(?:(?:uv|poetry|pdm|hatch|rye|pipx)\s+run\s+(?:--?[\w-]+(?:=\S+)?\s+)*|(?:npx|bunx|pnpx)\s+(?:--?[\w-]+\s+)*"
    r"|(?:pnpm|yarn)\s+(?:exec|dlx)\s+|(?:python[\d.]*|py)\s+-m\s+|nix\s+develop\s+(?:\S+\s+)?-c\s+"
    r"|bundle\s+exec\s+)?"
    r"(?:[\w.~-]*/)*"
    r"(?P<tool>pytest|py\.test|jest|vitest|mocha|tox|nox|rspec|phpunit|ctest|mypy|dmypy|basedpyright|pyright|tsc"
    r"|vue-tsc|ruff|flake8|pylint|eslint|golangci-lint|staticcheck|shellcheck|stylelint|rubocop|unittest|go|cargo"
    r"|npm|pnpm|yarn|bun|make|deno|ty|biome|black|prettier|dotnet|swift|gradlew|gradle|mvnw|mvn)(?![\w.-])"
    r"(?P<rest>[^;&|\n)]*)"
)
_SIMPLE = {
    "pytest": "test",
    "py.test": "test",
    "jest": "test",
    "vitest": "test",
    "mocha": "test",
    "tox": "test",
    "nox": "test",
    "rspec": "test",
    "phpunit": "test",
    "ctest": "test",
    "unittest": "test",
    "mypy": "type",
    "dmypy": "type",
    "pyright": "type",
    "basedpyright": "type",
    "tsc": "type",
    "vue-tsc": "type",
    "ruff": "lint",
    "flake8": "lint",
    "pylint": "lint",
    "eslint": "lint",
    "golangci-lint": "lint",
    "staticcheck": "lint",
    "shellcheck": "lint",
    "stylelint": "lint",
    "rubocop": "lint",
}
_SUB = {
    "go": {"test": "test", "vet": "lint", "build": "build", "install": "build"},
    "cargo": {
        "test": "test",
        "nextest": "test",
        "t": "test",
        "clippy": "lint",
        "fmt": "lint",
        "build": "build",
        "b": "build",
        "check": "build",
        "c": "build",
    },
    "deno": {"test": "test", "lint": "lint", "check": "type", "fmt": "lint"},
    "ty": {"check": "type"},
    "biome": {"check": "lint", "lint": "lint", "ci": "lint"},
    "dotnet": {"test": "test", "build": "build"},
    "swift": {"test": "test", "build": "build"},
    "gradle": {"test": "test", "check": "test", "build": "build"},
    "mvn": {
        "test": "test",
        "verify": "test",
        "compile": "build",
        "package": "build",
        "install": "build",
    },
}
_ALIASES = {
    "py.test": "pytest",
    "gradlew": "gradle",
    "mvnw": "mvn",
    "dmypy": "mypy",
    "basedpyright": "pyright",
}
_SCRIPT_KINDS = (
    ("test", "test"),
    ("spec", "test"),
    ("lint", "lint"),
    ("format", "lint"),
    ("fmt", "lint"),
    ("prettier", "lint"),
    ("eslint", "lint"),
    ("typecheck", "type"),
    ("type-check", "type"),
    ("types", "type"),
    ("tsc", "type"),
    ("check-types", "type"),
    ("mypy", "type"),
    ("build", "build"),
    ("compile", "build"),
    ("check", "lint"),
    ("ci", "test"),
    ("verify", "test"),
)

# A checker's output that still shows a failure after it was piped through tail or head (exit status 0).
# re.MULTILINE
_LOOKS_FAILED = LazyRegex(
    r"\b[1-9]\d* (?:failed|failing|failures?|errors?|problems?)\b|^FAILED\b|^FAIL\b|^ *FAIL |error TS\d|^--- FAIL"
    r"|Found [1-9]\d* errors?|[✕✗×] |^ *● |error\[E\d|^error(?:\[|:)|Traceback \(most recent call last\)"
    r"|npm ERR!|^npm error |\*\*\* \[|test result: FAILED|^E {3}|panicked at|^panic: |:\d+: error:| - error[ :]"
    r"|Tests?: +\d+ failed|[1-9]\d* tests? failed",
    8,
)


def classify(command: str) -> tuple[str, str] | None:
    """(kind, tool) when `command` runs a test, lint, type or build checker, else None."""
    if not command:
        return None
    for m in _CLASSIFY.finditer(command):
        tool = m.group("tool")
        words = m.group("rest").split()
        kind = _kind(tool, words)
        if kind:
            return kind, _ALIASES.get(tool, tool)
    return None


def _kind(tool: str, words: list[str]) -> str | None:
    if tool in _SIMPLE:
        return _SIMPLE[tool]
    sub = next((w for w in words if not w.startswith("-")), "")
    if tool in ("npm", "pnpm", "yarn", "bun"):
        if sub in ("run", "run-script") and len(words) > 1:
            sub = next((w for w in words[words.index(sub) + 1 :] if not w.startswith("-")), "")
        elif sub in ("t", "tst"):
            sub = "test"
        return next(
            (
                k
                for word, k in _SCRIPT_KINDS
                if sub == word or sub.startswith((word + ":", word + "-"))
            ),
            None,
        )
    if tool == "make":
        target = sub.lower()
        return next((k for word, k in _SCRIPT_KINDS if target.startswith(word)), "build")
    if tool in ("black", "prettier"):
        return "lint" if ("--check" in words or "-c" in words) else None
    if tool == "unittest":
        return "test"
    table = _SUB.get(_ALIASES.get(tool, tool))
    return table.get(sub) if table else None


def looks_failed(output: str) -> bool:
    """Whether a checker's output shows a failure even though the command exited 0 (piped through tail)."""
    if not output:
        return False
    # A summary ends the output and `| head` keeps the start: both ends are enough, and keep this cheap.
    if len(output) > LOOK_HEAD + LOOK_TAIL:
        output = output[:LOOK_HEAD] + "\n" + output[-LOOK_TAIL:]
    return _LOOKS_FAILED.search(output) is not None


class Failure(FieldTuple):
    """One distinct failure. `signature` is what recurs; `excerpt` is raw (redacted) output.

    A named tuple (util/fieldtuple.py), not a dataclass: `dataclasses` (with `inspect`) costs the hook ≈10 ms
    to import."""

    __slots__ = ()
    kind: str
    tool: str
    signature: str
    test: str
    error_type: str
    message: str
    files: tuple | list
    excerpt: str

    def __new__(
        cls,
        kind: str,
        tool: str,
        signature: str,
        test: str = "",
        error_type: str = "",
        message: str = "",
        files: tuple | list = (),
        excerpt: str = "",
    ) -> Failure:
        return super().__new__(
            cls, (kind, tool, signature, test, error_type, message, files, excerpt)
        )

    @property
    def key(self) -> str:
        """The first 12 hex digits of sha256(kind NUL signature): the rule id is `rule/<key>`."""
        return sha256_hex(f"{self.kind}\0{self.signature}".encode())[:12]

    def as_dict(self) -> dict:
        return self._asdict()


def sha256_hex(data: bytes) -> str:
    """SHA-256 of `data` in hex, from CPython's own module (`_sha256`, `_sha2` since 3.12) when the build has
    it: the same digest as hashlib's, without loading OpenSSL into a hook process."""
    try:
        from _sha256 import sha256
    except ImportError:
        try:
            from _sha2 import sha256
        except ImportError:
            from hashlib import sha256
    return sha256(data).hexdigest()


# Parsers of known tools, tests first (the most telling), then types, builds, lints; each returns [] for an
# output it does not know. An output can hold several tools' (`npm run check`): all are asked.
_PARSERS = (
    python.pytest,
    python.unittest,
    js.jest,
    js.vitest,
    go.test,
    rust.cargo,
    js.tsc,
    pycheck.mypy,
    pycheck.pyright,
    go.compile_errors,
    pycheck.lint,
    js.eslint,
)
# Asked in turn when no tool's parser found anything: a wrapper's own error, then an uncaught exception.
_FALLBACKS = (js.npm, generic.make, python.traceback, js.node, go.panic)


def _bound(output: str) -> str:
    if len(output) <= HEAD_BYTES + TAIL_BYTES:
        return output
    head = output[:HEAD_BYTES]
    tail = output[-TAIL_BYTES:]
    # Cut at line ends so no half line is parsed as a whole one.
    head = head[: head.rfind("\n") + 1] or head
    nl = tail.find("\n")
    return head + "\n" + (tail[nl + 1 :] if nl >= 0 else tail)


def _lines(output: str) -> list[str]:
    lines = clean(_bound(output)).replace("\r", "\n").split("\n")
    # Claude Code puts "Exit code N" in front of a failed command's output; alone, it is all there is to go on.
    start = 0
    while start < len(lines) and (
        not lines[start].strip() or lines[start].startswith("Exit code ")
    ):
        start += 1
    return lines[start:] or [x for x in lines if x.strip()][:1]


def _signature(
    kind: str, tool: str, test: str, error_type: str, message: str, files: tuple[str, ...]
) -> str:
    if kind == "test":
        parts = [tool, test, f"{error_type}:" if error_type and message else error_type, message]
    elif kind == "lint" and error_type:
        parts = [tool, error_type]
    elif kind == "runtime":
        parts = [
            tool,
            f"{error_type}:" if error_type and message else error_type,
            message,
            f"@ {files[0]}" if files else "",
        ]
    else:  # type, build, command, and a lint finding without a code
        parts = [tool, f"{error_type}:" if error_type and message else error_type, message]
    return " ".join(p for p in parts if p)


def _finish(found: Found, project: str, redact) -> Failure:
    msg = normalise.message(redact(found.message), project)
    test = normalise.test_id(redact(found.test), project)
    error_type = one_line(redact(found.error_type), 80)
    files = normalise.project_files(found.files, project)
    tool = one_line(found.tool.lower(), 40) or "sh"
    signature = redact(_signature(found.kind, tool, test, error_type, msg, files))
    signature = one_line(signature, SIGNATURE_LIMIT)
    excerpt = redact(clean("\n".join(x.rstrip() for x in found.excerpt)).strip())
    if len(excerpt) > EXCERPT_LIMIT:
        excerpt = excerpt[: EXCERPT_LIMIT - 1] + "…"
    return Failure(
        kind=found.kind,
        tool=tool,
        signature=signature,
        test=test,
        error_type=error_type,
        message=msg,
        files=files,
        excerpt=excerpt,
    )


def failures(command: str, output: str, *, project: str = "", limit: int = 3) -> list[Failure]:
    """The distinct failures `output` shows, most telling first, at most `limit`.

    Output no parser knows gives one generic failure (kind runtime for an
    uncaught exception, else command) from its first error line; empty output
    and Claude Code's own refusals ("the user doesn't want to proceed") give [].
    """
    if not output or not output.strip() or limit <= 0:
        return []
    command = command if isinstance(command, str) else ""
    lines = _lines(output)
    if not any(x.strip() for x in lines) or generic.is_refusal(lines):
        return []
    out = Output(lines, command, classify(command))
    found: list[Found] = []
    for parse in _PARSERS:
        found.extend(parse(out))
    for parse in _FALLBACKS:
        if found:
            break
        found = parse(out)
    if not found:
        found = generic.command(out)
    from memcurate.curator.util.redact import (
        redact_text,  # only now: a passing command never pays for it
    )

    result: list[Failure] = []
    seen: set[tuple[str, str]] = set()
    for f in found:
        failure = _finish(f, project, redact_text)
        if (failure.kind, failure.signature) in seen:
            continue
        seen.add((failure.kind, failure.signature))
        result.append(failure)
        if len(result) >= limit:
            break
    return result
