"""What the repository says, for the reference checks: which files exist (and ever existed, in git
history), which symbols appear in the tracked files, how much a file changed since a date, and the
targets of its Makefile, justfile and package.json scripts.

Everything is read lazily and once per check. With git, symbols are looked up with `git grep -F`
(batched: one call per SYMBOL_BATCH symbols); without git, with a bounded walk (WALK_FILES files of at
most WALK_FILE_BYTES each) that skips dependency and hidden folders. Every git call has a timeout and
a failure reads as "unknown", never as "missing".
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from functools import cached_property

GIT_TIMEOUT = 30.0
SYMBOL_BATCH = 200
WALK_FILES = 5000
WALK_FILE_BYTES = 1 << 20
SKIP_DIRS = frozenset({"node_modules", ".git", ".memcurate", "__pycache__", ".venv", "venv", "dist", "build",
                       "target", ".tox", ".mypy_cache", ".pytest_cache"})
_MAKE_TARGET = re.compile(r"^([^\s:=#%][^:=#%]*?)\s*::?(?!=)", re.M)
_JUST_RECIPE = re.compile(r"^@?([A-Za-z0-9_][A-Za-z0-9_-]*)(?:\s[^:=\n]*)?:(?!=)", re.M)


class ProjectFacts:
    def __init__(self, project: str) -> None:
        self.project = os.path.abspath(project)

    def _git(self, *args: str, text: str | None = None) -> str | None:
        """git's stdout, None when git is missing, fails or times out."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        try:
            done = subprocess.run(["git", "-C", self.project, *args], capture_output=True, timeout=GIT_TIMEOUT,
                                  input=text.encode() if text is not None else None, env=env)
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode not in (0, 1):  # 1: git grep found nothing
            return None
        return done.stdout.decode("utf-8", "replace")

    @cached_property
    def git(self) -> bool:
        out = self._git("rev-parse", "--show-toplevel")
        return bool(out) and os.path.realpath(out.strip()) == os.path.realpath(self.project)

    @cached_property
    def tracked(self) -> frozenset[str]:
        out = self._git("ls-files", "-z") if self.git else None
        return frozenset(p for p in (out or "").split("\0") if p)

    @cached_property
    def ever(self) -> frozenset[str] | None:
        """Every path git history ever held (None without git)."""
        if not self.git:
            return None
        out = self._git("log", "--all", "--pretty=format:", "--name-only", "-z")
        return frozenset(p.strip("\n") for p in (out or "").split("\0") if p.strip("\n")) | self.tracked

    @cached_property
    def has_files(self) -> bool:
        """Whether there is anything to check a memory against (an empty project proves nothing)."""
        if self.git:
            return bool(self.tracked)
        return any(True for _ in self._walk(1))

    def exists(self, rel: str) -> bool:
        return os.path.lexists(os.path.join(self.project, rel))

    def _walk(self, limit: int = WALK_FILES):
        n = 0
        for top, dirs, files in os.walk(self.project):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
            for name in files:
                path = os.path.join(top, name)
                if top == self.project and name.startswith("."):
                    continue
                yield path
                n += 1
                if n >= limit:
                    return

    def symbols_found(self, symbols) -> set[str]:
        """The `symbols` that appear somewhere in the project's files (tracked ones, with git)."""
        want = sorted(set(symbols))
        found: set[str] = set()
        if not want:
            return found
        if self.git:
            for i in range(0, len(want), SYMBOL_BATCH):
                batch = want[i:i + SYMBOL_BATCH]
                args = ["grep", "-I", "-F", "-o", "-h", "--no-color"]
                for s in batch:
                    args += ["-e", s]
                out = self._git(*args)
                if out is None:
                    return set(want)  # unknown: never reported missing
                found.update(line for line in out.splitlines() if line in batch)
            return found
        left = set(want)
        for path in self._walk():
            try:
                if os.path.getsize(path) > WALK_FILE_BYTES:
                    continue
                with open(path, "rb") as f:
                    data = f.read().decode("utf-8", "replace")
            except OSError:
                continue
            hits = {s for s in left if s in data}
            found |= hits
            left -= hits
            if not left:
                break
        return found

    def changed_lines(self, rel: str, since: str) -> int | None:
        """Lines added plus deleted in `rel` by commits since `since` (ISO), None without git."""
        if not self.git or rel not in self.tracked:
            return None
        out = self._git("log", f"--since={since}", "--numstat", "--format=", "--", rel)
        if out is None:
            return None
        total = 0
        for line in out.splitlines():
            parts = line.split("\t")
            if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit():
                total += int(parts[0]) + int(parts[1])
        return total

    def line_count(self, rel: str) -> int:
        try:
            with open(os.path.join(self.project, rel), "rb") as f:
                return f.read().count(b"\n")
        except OSError:
            return 0

    def _read(self, *names: str) -> tuple[str, str] | None:
        for name in names:
            try:
                with open(os.path.join(self.project, name), encoding="utf-8", errors="replace") as f:
                    return name, f.read(WALK_FILE_BYTES)
            except OSError:
                continue
        return None

    @cached_property
    def make_targets(self) -> tuple[str | None, frozenset[str] | None]:
        """(the Makefile's name, its targets); (None, None) without one; targets None when it has pattern
        rules or includes (a target may come from anywhere: unknown)."""
        found = self._read("GNUmakefile", "makefile", "Makefile")
        if found is None:
            return None, None
        name, text = found
        if re.search(r"^\s*-?include\s|^[^#\n]*%[^:\n]*:", text, re.M):
            return name, None
        targets = {t for m in _MAKE_TARGET.finditer(text) for t in m.group(1).split()}
        return name, frozenset(targets)

    @cached_property
    def just_recipes(self) -> tuple[str | None, frozenset[str] | None]:
        found = self._read("justfile", "Justfile", ".justfile")
        if found is None:
            return None, None
        name, text = found
        if re.search(r"^\s*(?:import|mod)\s", text, re.M):
            return name, None
        return name, frozenset(m.group(1) for m in _JUST_RECIPE.finditer(text))

    @cached_property
    def npm_scripts(self) -> tuple[str | None, frozenset[str] | None]:
        found = self._read("package.json")
        if found is None:
            return None, None
        try:
            scripts = json.loads(found[1]).get("scripts") or {}
            return found[0], frozenset(scripts) if isinstance(scripts, dict) else None
        except (ValueError, AttributeError):
            return found[0], None

    def module_exists(self, module: str) -> bool:
        """Whether `python -m module` could find it: in the project (or its src/), or installed."""
        rel = module.replace(".", "/")
        for base in ("", "src"):
            for tail in (".py", "/__init__.py", "/__main__.py"):
                if self.exists(os.path.join(base, rel + tail)):
                    return True
        from importlib.util import find_spec

        try:
            return find_spec(module.split(".")[0]) is not None  # the top level: imports nothing
        except (ImportError, ValueError):
            return False
