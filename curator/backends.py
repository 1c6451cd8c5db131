"""Which backend drafts here: what `backend:` resolves to, decided without building a drafter.

Standard library `os` only. The Stop hook asks it when a second look may be due (a session's segment, a
SessionEnd): importing the drafting package there (dataclasses, typing, shutil and its compressors) cost
40-55 ms before a long pass's reader could start.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs the hook milliseconds at import
    from collections.abc import Mapping

BACKENDS = ("auto", "anthropic", "claude-cli", "offline")
CLAUDE_BACKENDS = ("anthropic", "claude-cli")  # the ones that call a model


class Choice:
    """What `backend:` resolves to here, and why: `drafting.get_drafter` builds from it,
    `drafting.describe` says it.

    `backend` is what drafts (anthropic, claude-cli, offline), or the configured one when
    `unavailable` says why it cannot be used; `why` is the facts that decided it.
    """

    __slots__ = ("configured", "backend", "why", "executable", "unavailable")

    def __init__(
        self, configured: str, backend: str, why: str, executable: str = "", unavailable: str = ""
    ) -> None:
        self.configured = configured
        self.backend = backend
        self.why = why
        self.executable = executable
        self.unavailable = unavailable

    def _fields(self) -> tuple[str, ...]:
        return (self.configured, self.backend, self.why, self.executable, self.unavailable)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Choice) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return "Choice(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"

    @property
    def reason(self) -> str:
        """One phrase: the configured backend and the facts that decided it."""
        return f"backend: {self.configured}" + (f", {self.why}" if self.why else "")


def which(name: str, path: str) -> str:
    """shutil.which(name, path=path) or "": the first executable file `name` in `path`'s folders, without
    importing shutil (on POSIX; elsewhere shutil's own)."""
    if os.name != "posix":
        import shutil

        return shutil.which(name, path=path) or ""
    if not path:
        return ""
    seen = set()
    for folder in path.split(os.pathsep):
        if folder in seen:
            continue
        seen.add(folder)
        candidate = os.path.join(folder, name)
        if (
            os.path.exists(candidate)
            and os.access(candidate, os.X_OK)
            and not os.path.isdir(candidate)
        ):
            return candidate
    return ""


def choose(cfg: Mapping, env: Mapping[str, str] = os.environ) -> Choice:
    """The backend `backend:` asks for (docs/design.md §10): auto is anthropic when ANTHROPIC_API_KEY is set,
    else the `claude` CLI when it is on the PATH, else offline. `anthropic` without a key, and
    `claude-cli` with no `claude` on the PATH, are unavailable (the message says what to do)."""
    configured = str(cfg.get("backend", "auto") or "auto")
    if configured == "offline":
        return Choice(configured, "offline", "")
    key = bool(env.get("ANTHROPIC_API_KEY", "").strip())
    via = ", ANTHROPIC_BASE_URL set" if env.get("ANTHROPIC_BASE_URL", "").strip() else ""
    if configured == "anthropic":
        if not key:
            return Choice(
                configured,
                "anthropic",
                "no ANTHROPIC_API_KEY",
                unavailable=(
                    "backend: anthropic, but ANTHROPIC_API_KEY is not set; export your API key (and "
                    "ANTHROPIC_BASE_URL for a gateway), or use backend: claude-cli or offline"
                ),
            )
        return Choice(configured, "anthropic", "ANTHROPIC_API_KEY set" + via)
    claude = which("claude", env.get("PATH", ""))
    if configured == "claude-cli":
        if not claude:
            return Choice(
                configured,
                "claude-cli",
                "no claude on the PATH",
                unavailable=(
                    "backend: claude-cli, but no `claude` executable is on the PATH; install Claude Code "
                    "(and log in), or use backend: offline"
                ),
            )
        return Choice(configured, "claude-cli", "claude on the PATH", executable=claude)
    if configured != "auto":
        return Choice(
            configured,
            configured,
            "",
            unavailable=(f"unknown backend {configured!r}; expected one of {', '.join(BACKENDS)}"),
        )
    if key:
        return Choice(configured, "anthropic", "ANTHROPIC_API_KEY set" + via)
    if claude:
        return Choice(
            configured, "claude-cli", "no ANTHROPIC_API_KEY, claude on the PATH", executable=claude
        )
    return Choice(configured, "offline", "no ANTHROPIC_API_KEY, no claude on the PATH")
