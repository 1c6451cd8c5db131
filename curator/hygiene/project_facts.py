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
SKIP_DIRS = frozenset(
    {
        "node_modules",
        ".git",
        ".memcurate",
        "__pycache__",
        ".venv",
        "venv",
        "dist",
        "build",
        "target",
        ".tox",
        ".mypy_cache",
        ".pytest_cache",
    }
)
_MAKE_TARGET = re.compile(r"^([^\s:=#%][^:=#%]*?)\s*::?(?!=)", re.M)
_REQ_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_JUST_RECIPE = re.compile(r"^@?([A-Za-z0-9_][A-Za-z0-9_-]*)(?:\s[^:=\n]*)?:(?!=)", re.M)


def _norm_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class ProjectFacts:
    def __init__(self, project: str) -> None:
        self.project = os.path.abspath(project)

    def _git(self, *args: str, text: str | None = None) -> str | None:
        """git's stdout, None when git is missing, fails or times out."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        try:
            done = subprocess.run(
                ["git", "-C", self.project, *args],
                capture_output=True,
                timeout=GIT_TIMEOUT,
                input=text.encode() if text is not None else None,
                env=env,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode not in (0, 1):  # 1: git grep found nothing
            return None
        return done.stdout.decode("utf-8", "replace")

    @cached_property
    def git(self) -> bool:
        out = self._git("rev-parse", "--show-toplevel")
        if not out:
            return False
        return os.path.realpath(out.strip()) == os.path.realpath(self.project)

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
        return (
            frozenset(p.strip("\n") for p in (out or "").split("\0") if p.strip("\n"))
            | self.tracked
        )

    @cached_property
    def has_files(self) -> bool:
        """Whether there is anything to check a memory against (an empty project proves nothing)."""
        if self.git:
            return bool(self.tracked)
        return any(True for _ in self._walk(1))

    def exists(self, rel: str) -> bool:
        return os.path.lexists(os.path.join(self.project, rel))

    @cached_property
    def files(self) -> frozenset[str]:
        """The project's files, relative: the tracked ones with git, else a bounded walk."""
        if self.git:
            return self.tracked
        return frozenset(
            os.path.relpath(p, self.project).replace(os.sep, "/") for p in self._walk()
        )

    def ends_with(self, rel: str, paths=None) -> bool:
        """Whether some file of the project (of `paths`, when given) is `rel` or ends with `/rel`: a path
        said relative to a subfolder (`src/x.py` of `pkg/src/x.py`)."""
        paths = self.files if paths is None else paths
        cache = self.__dict__.setdefault("_suffixes", {})
        # every tail at a `/` of every file, once: one look-up per path asked
        if id(paths) not in cache:
            cache[id(paths)] = (
                paths,
                {
                    "/".join(parts[i:])
                    for p in paths
                    for parts in [p.split("/")]
                    for i in range(len(parts))
                },
            )
        return rel in cache[id(paths)][1]

    def _module_roots(self, root: str) -> list[str]:
        """The folders (relative; "" for the project's) holding module `root` as `root.py` or `root/`:
        the project itself, its src/ or a package folder one level down (once per root: a memory's
        every dotted name asks)."""
        cache = self.__dict__.setdefault("_roots", {})
        if root not in cache:
            cache[root] = self._find_module_roots(root)
        return cache[root]

    def _find_module_roots(self, root: str) -> list[str]:
        bases = []
        for f in self.files:
            parts = f.split("/")
            for i in range(min(len(parts), 3)):
                if (
                    parts[i] == root + ".py"
                    and i == len(parts) - 1
                    or parts[i] == root
                    and i < len(parts) - 1
                ):
                    base = "/".join(parts[:i])
                    if base not in bases:
                        bases.append(base)
                    break
        return bases

    def is_module(self, root: str) -> bool:
        """Whether `root` is a module of the project's own (not a dependency's, not the standard library's)."""
        return bool(self._module_roots(root))

    @cached_property
    def dependencies(self) -> frozenset[str]:
        """The names the project depends on, lowercase with `-` for `_` and `.`: pyproject.toml's,
        requirements*.txt's and package.json's (a name found there is a library's, not the project's)."""
        names: set[str] = set()
        found = self._read("pyproject.toml")
        if found:
            try:
                import tomllib

                data = tomllib.loads(found[1])
            except (ValueError, ImportError):
                data = {}
            project = data.get("project") or {}
            specs = list(project.get("dependencies") or [])
            for group in (project.get("optional-dependencies") or {}).values():
                specs += list(group or [])
            for group in (data.get("dependency-groups") or {}).values():
                specs += [g for g in group or [] if isinstance(g, str)]
            poetry = (data.get("tool") or {}).get("poetry") or {}
            specs += list(poetry.get("dependencies") or {}) + list(
                poetry.get("dev-dependencies") or {}
            )
            names |= {
                m.group(0)
                for s in specs
                if isinstance(s, str) and (m := _REQ_NAME.match(s.strip()))
            }
        for f in sorted(self.files):
            if "/" not in f and f.startswith("requirements") and f.endswith(".txt"):
                text = (self._read(f) or ("", ""))[1]
                names |= {
                    m.group(0) for line in text.splitlines() if (m := _REQ_NAME.match(line.strip()))
                }
        found = self._read("package.json")
        if found:
            try:
                data = json.loads(found[1])
                for key in (
                    "dependencies",
                    "devDependencies",
                    "peerDependencies",
                    "optionalDependencies",
                ):
                    if isinstance(data.get(key), dict):
                        names |= {n.rsplit("/", 1)[-1] for n in data[key]}
            except (ValueError, AttributeError):
                pass
        return frozenset(_norm_name(n) for n in names)

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
                batch = want[i : i + SYMBOL_BATCH]
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
                with open(
                    os.path.join(self.project, name), encoding="utf-8", errors="replace"
                ) as f:
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

    def module_exists(self, module: str) -> bool | None:
        """Whether `python -m module` finds it in the project: True when it is there, False when its top
        package is the project's but the module is not (or git once tracked it as the project's), None
        (unknown) for a module that is not the project's: an installed tool (`mypy`) is not ours to judge,
        and memcurate's own interpreter is not the project's."""
        parts = module.split(".")
        rel = "/".join(parts)
        bases = self._module_roots(parts[0])
        for base in bases:
            at = f"{base}/{rel}" if base else rel
            if self.exists(at + ".py") or os.path.isdir(os.path.join(self.project, at)):
                return True
        if bases:
            return False
        ever = self.ever or frozenset()
        if any(
            p == rel + ".py"
            or p.endswith("/" + rel + ".py")
            or p.startswith(rel + "/")
            or ("/" + rel + "/") in p
            for p in ever
        ):
            return False
        return None
