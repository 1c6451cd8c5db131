"""The fallback for a failed command no parser knows: its program and its first error line."""

from __future__ import annotations

from curator.util.lazyre import LazyRegex

from . import Found

_ERRORISH = LazyRegex(
    r"\b(?:error|errors|fatal|failed|failure|fail|cannot|can't|could not|couldn't|not found|no such|denied|refused"
    r"|invalid|unknown|unable|exception|panic|timed out|not allowed|permission|missing|syntax|blocked|rejected"
    r"|no matches|bad|unmatched|not a|does not|doesn't|did not|already exists|undefined|unrecognized)\b",
    2)  # re.IGNORECASE
_SEGMENTS = LazyRegex(r"\s*(?:&&|\|\||;|\||\n)\s*")
# Words in front of the program that do not name it.
_PREFIX = frozenset({"sudo", "time", "env", "command", "exec", "nohup", "builtin", "nice"})
# Prefixes that run another program: what follows is the program.
_RUNNERS = {"uv": "run", "poetry": "run", "pipx": "run", "pnpm": "exec", "hatch": "run", "pdm": "run",
            "rye": "run", "bundle": "exec", "nix": "-c"}
_LAUNCHERS = frozenset({"npx", "bunx", "pnpx"})
# Programs whose second word is a subcommand worth keeping (`git checkout`, `npm run build`).
_SUBCOMMANDS = frozenset({"git", "npm", "pnpm", "yarn", "bun", "cargo", "go", "docker", "gh", "kubectl", "uv",
                          "pip", "pip3", "poetry", "make", "brew", "apt", "apt-get", "helm", "terraform", "dotnet",
                          "deno", "rustup", "conda", "systemctl", "gcloud", "aws", "az", "mix", "gradle", "mvn",
                          "ssh", "tmux", "claude", "nix"})
_NOT_FAILURE = ("The user doesn't want to proceed", "[Request interrupted by user", "This command requires approval",
                "requires approval", "User rejected")
_WORD = LazyRegex(r"^[a-z][a-z0-9:_.-]*$")


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
            words = words[words.index(_RUNNERS[first], 1) + 1:]
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
    candidates = [c for c in candidates if c]
    low = error_line.lower()
    for words in candidates:  # the segment the error line names
        name = words[0].rsplit("/", 1)[-1].lower()
        if name and (low.startswith(name + ":") or f":{name}:" in low or f" {name}:" in low or f"{name}: " in low):
            chosen = words
            break
    if not chosen:
        useful = [c for c in candidates if c[0] not in ("cd", "echo", "export", "set", "source", ".", "mkdir")]
        chosen = (useful or candidates or [[]])[0]
    if not chosen:
        return "sh"
    name = chosen[0].rsplit("/", 1)[-1].lower()
    out = [name]
    if name in _SUBCOMMANDS and len(chosen) > 1 and _WORD.match(chosen[1]):
        out.append(chosen[1])
        if chosen[1] in ("run", "exec", "run-script") and len(chosen) > 2 and _WORD.match(chosen[2]):
            out.append(chosen[2])
    return " ".join(out)[:60]


def first_error(lines: list[str]) -> tuple[int, str]:
    """The first line that reads like an error, else the first non-blank line."""
    first = -1
    for i, line in enumerate(lines[:400]):
        text = line.strip()
        if not text:
            continue
        if first < 0:
            first = i
        if _ERRORISH.search(text):
            return i, text
    return (first, lines[first].strip()) if first >= 0 else (-1, "")


def command(lines: list[str], command_text: str) -> list[Found]:
    i, line = first_error(lines)
    if i < 0:
        return []
    return [Found("command", program(command_text, line), message=line, excerpt=lines[i:i + 3])]
