"""The fallback for a failed command no parser knows: its program and its first error line."""

from __future__ import annotations

from memcurate.curator.util.lazyre import LazyRegex

from . import Found, Output

# re.IGNORECASE
_ERRORISH = LazyRegex(
    r"\b(?:error|errors|fatal|failed|failure|fail|cannot|can't|could not|couldn't|not found|no such|denied|refused"
    r"|invalid|unknown|unable|exception|panic|timed out|not allowed|permission|missing|syntax|blocked|rejected"
    r"|no matches|bad|unmatched|not a|does not|doesn't|did not|already exists|undefined|unrecognized)\b",
    2,
)
_SEGMENTS = LazyRegex(r"\s*(?:&&|\|\||;|\||\n)\s*")
# Words in front of the program that do not name it.
_PREFIX = frozenset({"sudo", "time", "env", "command", "exec", "nohup", "builtin", "nice"})
# Prefixes that run another program: what follows is the program.
_RUNNERS = {
    "uv": "run",
    "poetry": "run",
    "pipx": "run",
    "pnpm": "exec",
    "hatch": "run",
    "pdm": "run",
    "rye": "run",
    "bundle": "exec",
    "nix": "-c",
}
_LAUNCHERS = frozenset({"npx", "bunx", "pnpx"})
# Programs whose second word is a subcommand worth keeping (`git checkout`, `npm run build`).
_SUBCOMMANDS = frozenset(
    {
        "git",
        "npm",
        "pnpm",
        "yarn",
        "bun",
        "cargo",
        "go",
        "docker",
        "gh",
        "kubectl",
        "uv",
        "pip",
        "pip3",
        "poetry",
        "make",
        "brew",
        "apt",
        "apt-get",
        "helm",
        "terraform",
        "dotnet",
        "deno",
        "rustup",
        "conda",
        "systemctl",
        "gcloud",
        "aws",
        "az",
        "mix",
        "gradle",
        "mvn",
        "ssh",
        "tmux",
        "claude",
        "nix",
    }
)
_NOT_FAILURE = (
    "The user doesn't want to proceed",
    "[Request interrupted by user",
    "This command requires approval",
    "requires approval",
    "User rejected",
    # Claude Code's sandbox and a broken hook of the user's: nothing the project's code did
    "For security, Claude Code may only",
    "PreToolUse:Bash hook error",
    # a hook of the user's refused the command: its policy, not the command failing
    "blocked by hook",
)
# A wrapper's line that only says the real error is elsewhere (above it, in the script's own output).
# the last two: a test runner's console output, a pass
_WRAPPER = LazyRegex(
    r"^(?:make(?:\[\d+\])?: \*\*\* \[.*\] Error \d+|npm (?:ERR!|error) |> |ELIFECYCLE"
    r"|error Command failed with exit code|\s*ERR_PNPM_\w+|Exit code \d+$"
    r"|(?:stderr|stdout) \| |[✓✔] )",
    needles=(
        "make",
        "npm ",
        "> ",
        "ELIFECYCLE",
        "error Command",
        "ERR_PNPM_",
        "Exit code ",
        " | ",
        "✓ ",
        "✔ ",
    ),
)
_MAKE = LazyRegex(r"^make(?:\[\d+\])?: \*\*\* (?!\[)(.*?)\.?\s*(?:Stop\.)?\s*$", needles=("make",))
_WORD = LazyRegex(r"^[a-z][a-z0-9:_-]*$")


def is_refusal(lines: list[str]) -> bool:
    """Claude Code's own answers that are not the command failing: the user said no, or was asked."""
    head = next((x for x in lines if x.strip()), "")
    return any(head.startswith(mark) or mark in head[:200] for mark in _NOT_FAILURE)


def _words(segment: str) -> list[str]:
    words = [w for w in segment.split() if w]
    while words and ("=" in words[0] and not words[0].startswith("-") or words[0] in _PREFIX):
        words.pop(0)
    while words:
        first = words[0].rsplit("/", 1)[-1]
        if first in _RUNNERS and len(words) > 2 and _RUNNERS[first] in words[1:3]:
            words = words[words.index(_RUNNERS[first], 1) + 1 :]
            if words and words[0] == "--":
                words.pop(0)
            continue
        if first in _LAUNCHERS and len(words) > 1:
            words = [w for w in words[1:] if not w.startswith("-")] or words[1:]
            continue
        break
    return words


def program(command: str, error_line: str = "") -> str:
    """The program that failed, in one to three words: `git checkout`, `npm run build`, `cd`."""
    segments = [s for s in _SEGMENTS.rx.split(command.strip()) if s.strip()] if command else []
    chosen: list[str] = []
    candidates = [_words(s) for s in segments[:12]]
    candidates = [c for c in candidates if c and (c[0][:1].isalnum() or c[0][:1] in "./~_")]
    low = error_line.lower()
    for words in candidates:  # the segment the error line names
        name = words[0].rsplit("/", 1)[-1].lower()
        if name and (
            low.startswith(name + ":")
            or f":{name}:" in low
            or f" {name}:" in low
            or f"{name}: " in low
        ):
            chosen = words
            break
    if not chosen:
        useful = [
            c
            for c in candidates
            if c[0] not in ("cd", "echo", "export", "set", "source", ".", "mkdir")
        ]
        chosen = (useful or candidates or [[]])[0]
    if not chosen:
        return "sh"
    name = chosen[0].rsplit("/", 1)[-1].lower()
    out = [name]
    if name in _SUBCOMMANDS and len(chosen) > 1 and _WORD.match(chosen[1]):
        out.append(chosen[1])
        if (
            chosen[1] in ("run", "exec", "run-script")
            and len(chosen) > 2
            and _WORD.match(chosen[2])
        ):
            out.append(chosen[2])
    return " ".join(out)[:60]


# Words that say something failed but not what: a line of only these (and numbers) names no lesson.
_BARE = frozenset(
    {
        "error",
        "errors",
        "fail",
        "failed",
        "failure",
        "fatal",
        "exit",
        "code",
        "status",
        "warning",
        "the",
        "and",
        "with",
        "see",
        "above",
        "details",
        "for",
        "more",
    }
)
_WORDS = LazyRegex(r"[A-Za-z_]{3,}")


def says_what(line: str) -> bool:
    """Whether an error line names what failed ("unknown flag: --version"), not only that something did
    ("Error", "FAIL", "Exit code 2"): counted across sessions, a bare line would make every failure of
    the program one signature."""
    return sum(1 for m in _WORDS.finditer(line) if m.group(0).lower() not in _BARE) >= 2


def first_error(lines: list[str]) -> tuple[int, str]:
    """The first line that reads like an error, else the first non-blank line."""
    first = wrapper = -1
    for i, line in enumerate(lines[:400]):
        text = line.strip()
        if not text:
            continue
        if _WRAPPER.match(text):
            wrapper = i if wrapper < 0 else wrapper
            continue
        if first < 0:
            first = i
        if _ERRORISH.search(text):
            # "Bash operation blocked by hook:" says why on the next line; a list of files (indented) does not
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if text.endswith(":") and nxt.strip() and not nxt[:1].isspace():
                return i, f"{text} {nxt.strip()}"
            return i, text
    first = first if first >= 0 else wrapper
    return (first, lines[first].strip()) if first >= 0 else (-1, "")


def command(out: Output) -> list[Found]:
    """The failed command's first error line; nothing when no line reads like an error or the one that
    does says only that it failed (a listing, a banner, a bare "FAIL" is no lesson to count)."""
    i, line = first_error(out.lines)
    if i < 0 or not _ERRORISH.search(line) or not says_what(line):
        return []
    return [
        Found("command", program(out.command, line), message=line, excerpt=out.lines[i : i + 3])
    ]


def make(out: Output) -> list[Found]:
    """make's own error (`No rule to make target 'x'`); `*** [target] Error 2` only says the recipe failed,
    and the recipe's output above it is the failure."""
    if "make" not in out.text:
        return []
    for line in out.lines:
        m = _MAKE.match(line.strip())
        if m:
            return [Found("command", "make", message=m.group(1), excerpt=[line])]
    return []
