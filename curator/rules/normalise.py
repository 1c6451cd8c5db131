"""What makes one failure look the same in every session: its message and paths normalised.

A failure recurs across sessions with other temp folders, addresses, ids,
timestamps, durations and line numbers; normalising strips exactly those and
keeps what names the failure (quoted names, error codes, identifiers with
digits in them such as `TS2339`, `E501`, `test_v2`, `[arg-type]`).

Paths become project-relative: under `project` when it is known, else a home
path (`/Users/<u>/…`, `/home/<u>/…`) is cut at the first folder that usually
starts a project's tree (`src/`, `tests/`, `internal/`, …), so the same failure
in another clone still collapses.

Stdlib only, and every pattern compiled on first use: the hook imports this.
"""

from __future__ import annotations

from memcurate.curator.util.lazyre import LazyRegex

MESSAGE_LIMIT = 200
FILES_LIMIT = 10

# A temp location, up to the end of the path: pytest's tmp_path, macOS's per-user temp, Windows %TEMP%.
_TEMP = LazyRegex(
    r"(?:[A-Za-z]:\\(?:Users\\[^\\\s]+\\AppData\\Local\\Temp|Windows\\Temp)(?:\\[^\s'\"`:,;)\]}>]*)?"
    r"|(?:/private)?/var/folders(?:/[^\s'\"`:,;)\]}>]*)?"
    r"|(?:/private)?/tmp(?:/[^\s'\"`:,;)\]}>]*)?"
    r"|(?:/private)?/var/tmp(?:/[^\s'\"`:,;)\]}>]*)?"
    r"|[^\s'\"`(\[{<]*pytest-of-[^/\s]+/pytest-\d+(?:/[^\s'\"`:,;)\]}>]*)?"
    r"|%TEMP%(?:\\[^\s'\"`:,;)\]}>]*)?)"
)
# A home folder's path: /Users/<u>/…, /home/<u>/…, C:\Users\<u>\…
_HOME = LazyRegex(
    r"(?:/Users|/home|[A-Za-z]:\\Users)[/\\][^/\\\s'\"`]+(?:[/\\][^\s'\"`:,;()\[\]{}<>]*)?"
)
# The folders a project's tree usually starts with: a home path is cut in front of the first one.
_TAIL_DIRS = (
    "src",
    "lib",
    "libs",
    "test",
    "tests",
    "spec",
    "specs",
    "internal",
    "cmd",
    "pkg",
    "app",
    "apps",
    "packages",
    "crates",
    "scripts",
    "examples",
    "docs",
    "bin",
    "components",
    "pages",
    "public",
)
# Places that are never the project's own files.
_FOREIGN = (
    "site-packages/",
    "dist-packages/",
    "node_modules/",
    "/usr/",
    "/opt/homebrew/",
    "/.cargo/registry/",
    "/go/pkg/mod/",
    "/rustc/",
    "/.rustup/",
    "/lib/python",
    "<frozen ",
    "<string>",
    "<stdin>",
    "node:",
)

_OBJECT_AT = LazyRegex(r"<([\w.]+) object at 0x[0-9a-fA-F]+>")
_UUID = LazyRegex(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
_ADDR = LazyRegex(r"\b0x[0-9a-fA-F]+\b")
# A network address: IPv4, IPv6 (with a "::" or all eight groups, and a digit), a MAC. Replaced before the
# numbers, which would leave `(<n>.0.5)` of `(10.0.0.5)`: another host is the same failure.
_IP = LazyRegex(
    r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]*\w)"
    r"|(?<![\w:])(?:[0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}(?![\w:])"
    r"|(?<![\w:])(?=[0-9a-fA-F:]*\d)(?=[0-9a-fA-F:]*::|(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F])"
    r"(?:[0-9a-fA-F]{1,4}|:)(?:[0-9a-fA-F]{0,4}:){1,7}[0-9a-fA-F]{0,4}(?![\w:])"
)
# A hash or id: 7+ hex characters with at least one digit (a word of only letters, `deadbeef`-like, stays).
_HEX = LazyRegex(
    r"(?<![\w-])(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{7,}(?![\w-])|(?<![\w.])\d{9,}(?![\w.])"
)
_TIME = LazyRegex(
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
    r"|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"
    r"|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),? \d{1,2} \w{3} \d{4}\b"
)
_DURATION = LazyRegex(
    r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|msec|s|sec|secs|seconds?|m|min|mins|minutes?|h|µs|us|ns)\b"
    r"(?:\s?\d+(?:\.\d+)?\s?(?:ms|s|sec))?"
)
# file:line[:col] and file(line,col), and "line N[, column M]": where in the file is not what failed.
_LINE_COL = LazyRegex(
    r"(?<=[\w\]\)])(?::\d+){1,2}(?=\b|$)|(?<=\w)\(\d+(?:,\s?\d+)?\)|\b(line|column|col)\s+\d+", 0
)
# Any other number standing alone (not inside an identifier, a code or a parametrize id).
_NUMBER = LazyRegex(r"(?<![\w.\-\[])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?%?(?![\w\]])")
_SPACE = LazyRegex(r"\s+")


def _may_hold_address(text: str) -> bool:
    """Whether `text` has the separators one of _IP's forms needs: an IPv4 address three dots, a MAC five
    of ':' and '-', an IPv6 address "::" or seven colons. Most messages have none: _IP is not compiled."""
    colons = text.count(":")
    return text.count(".") >= 3 or colons + text.count("-") >= 5 or "::" in text


def _may_hold_time(text: str) -> bool:
    """Whether `text` has what one of _TIME's forms needs: a date's two dashes, a time's two colons, a
    day's name."""
    return text.count("-") >= 2 or text.count(":") >= 2 or any(d in text for d in _DAYS)


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def strip_temp(text: str) -> str:
    if "tmp" in text or "temp" in text.lower() or "var/folders" in text or "pytest-of-" in text:
        return _TEMP.sub("<tmp>", text)
    return text


def _tail(path: str) -> str | None:
    """A home path cut to its project-relative tail, or None when no known tree folder is in it."""
    parts = path.replace("\\", "/").split("/")
    for i in range(3, len(parts) - 1):
        if parts[i] in _TAIL_DIRS:
            return "/".join(parts[i:])
    return None


def relative(path: str, project: str = "") -> str:
    """`path` relative to `project` when it is inside it; a home path cut to its tree; else as given."""
    p = path.replace("\\", "/") if "\\" in path and ":" in path[:3] else path
    if project:
        root = project.rstrip("/") + "/"
        for prefix in (root, "/private" + root):
            if p.startswith(prefix):
                return p[len(prefix) :]
        if p == project.rstrip("/"):
            return "."
    if p.startswith(("/Users/", "/home/")) or (
        len(p) > 3 and p[1:3] == ":/" and p[3:9] == "Users/"
    ):
        return _tail(p) or p
    if p.startswith("./"):
        return p[2:]
    return p


def _paths(text: str, project: str) -> str:
    if project and project in text:
        root = project.rstrip("/")
        text = text.replace(root + "/", "").replace(root, ".")
    if "/Users/" in text or "/home/" in text or ":\\Users\\" in text:
        text = _HOME.sub(lambda m: relative(m.group(0), project), text)
    return text


def message(text: str, project: str = "", limit: int = MESSAGE_LIMIT) -> str:
    """The message as it recurs: volatile parts replaced by placeholders, whitespace folded, capped."""
    text = _paths(strip_temp(text), project)
    if "object at 0x" in text:
        text = _OBJECT_AT.sub(r"<\1 object>", text)
    if text.count("-") >= 4:  # 8-4-4-4-12
        text = _UUID.sub("<uuid>", text)
    if "0x" in text:
        text = _ADDR.sub("<addr>", text)
    if any(c.isdigit() for c in text):
        if _may_hold_address(text):
            text = _IP.sub("<ip>", text)
        if _may_hold_time(text):
            text = _TIME.sub("<time>", text)
        text = _HEX.sub("<hex>", text)
        text = _DURATION.sub("<dur>", text)
        text = _LINE_COL.sub(lambda m: f"{m.group(1)} <n>" if m.group(1) else "", text)
        text = _NUMBER.sub("<n>", text)
    text = _SPACE.sub(" ", text).strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def test_id(test: str, project: str = "") -> str:
    """A test id as it recurs: its file project-relative, a temp path in a parametrize id replaced."""
    if not test:
        return ""
    test = _paths(strip_temp(test.strip()), project)
    if test.startswith("./"):
        test = test[2:]
    return " ".join(test.split())[:200]


def is_foreign(path: str) -> bool:
    return any(mark in path for mark in _FOREIGN)


def project_files(paths, project: str = "", limit: int = FILES_LIMIT) -> tuple[str, ...]:
    """The project's own files among `paths`, relative, in order, deduplicated: never a library, a
    system folder or a temp file."""
    out: list[str] = []
    for raw in paths:
        if not raw or is_foreign(raw):
            continue
        if strip_temp(raw) != raw:
            continue
        rel = relative(raw.strip(), project)
        if not rel or rel.startswith(("/", "../", "~")) or (len(rel) > 2 and rel[1] == ":"):
            continue
        if rel not in out:
            out.append(rel)
            if len(out) >= limit:
                break
    return tuple(out)
