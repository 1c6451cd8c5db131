#!/usr/bin/env python3
"""Benchmark the real `memcurate hook` process against a bare interpreter start.

    python bench/hook_bench.py            # full run (< 3 minutes)
    python bench/hook_bench.py --quick    # fewer rounds, one 100 MB call (< 40 s)

Runs the hook command `memcurate install` writes (asked of the install itself: `memcurate install
--json` in a throwaway project) as Claude Code would (a new process, hook JSON on stdin) and measures,
in one interleaved loop so that machine drift hits every scenario alike:

  bare          `python -c pass` with the interpreter of the hook command
  empty entry   the hook command with nothing to run: its interpreter with `-c pass` (the command install
                writes), or the console script with an entry point that does nothing (pip's wrapper
                imports `re`)
  imports only  the same, importing what an incremental pass loads: the floor under the pass itself
  no-op         a Stop call with no new transcript bytes
  incremental   the transcript grew by one turn (4-10 new records) since the last call
  incremental, console script   the same through `memcurate hook` (the plugin's command), when install
                writes another
  first call    a transcript the data dir has never seen (the largest shared ones, ~1.2 MB)

then the first call on the largest of those transcripts with one ~10 MB user
message appended (median of 9, 5 with --quick: time and peak RSS stay bounded
whatever one message holds, compared with the plain first call), the first
call on a synthetic ~100 MB transcript (median of 3, each paired with a process that only reads the file
and json-parses each line: the unit of its ratio), and the "cold config"
call (a fresh data dir: the merged YAML config is built once).
Each figure is the median wall time from spawn to reap, its ratio to the bare
start, and the peak RSS of that very child (os.wait4), next to the targets.

By default the hook runs from a non-editable install with compiled .pyc
files, as a user has it: bench/.venv, reinstalled when the sources change
(a hash of curator/ hooks/ widgets/ assets/ pyproject.toml kept in a stamp file).
Beside the .pyc files the hook keeps the patterns it compiled (util/lazyre.py): a
scenario's first round compiles and stores them, the later ones find them, as a
user's hooks do after their first calls.
`--memcurate PATH` uses an existing executable instead.

Results are printed as a table and written to bench/results/hook.json.
Standard library only; Unix only (os.wait4).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import marshal
import os
import platform
import random
import re
import select
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(REPO, "bench")
DEFAULT_TRANSCRIPTS = os.path.join(os.path.dirname(REPO), "shared", "transcripts")
DEFAULT_VENV = os.path.join(BENCH, ".venv")
RESULTS = os.path.join(BENCH, "results", "hook.json")
STAMP_NAME = "memcurate-bench.stamp"

# a change here means: reinstall
HASHED = (
    "curator",
    "hooks",
    "widgets",
    "assets",
    "pyproject.toml",
)
BUILD_ITEMS = ("pyproject.toml", "README.md", "LICENSE", "curator", "hooks", "widgets", "assets")

# Engine names the bench relies on (it never imports the engine: it only runs it).
DATA_DIR = ".memcurate"
CONFIG_CACHE = "config.cache.json"
LOG = os.path.join("log", "memcurate.log")
KEEP_IN_FRESH_DATA_DIR = {CONFIG_CACHE, ".gitignore"}

TARGET_INCREMENTAL = 1.8  # × bare (issue 25: it was 2.5)
TARGET_FIRST = 4.0  # × bare, ~1 MB transcript
TARGET_BIG_S = 2.0
# the 100 MB first call: × a process that reads the transcript and json-parses each line
TARGET_BIG_X_PARSE = 1.3
TARGET_BIG_RSS_MIB = 60.0
TARGET_HUGE_X_FIRST = 2.0  # one 10 MB message: × the first call of the same transcript without it
TARGET_HUGE_RSS_MIB = 60.0

MIB = 1 << 20
# The floor of any pass over a transcript: read it once and parse every line (the big scenario's unit).
PARSE_SCRIPT = "import json, sys\nwith open(sys.argv[1], 'rb') as f:\n    for line in f:\n        json.loads(line)"


def say(msg: str = "") -> None:
    print(msg, flush=True)


def die(msg: str, code: int = 1) -> None:
    print(f"hook_bench: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


# -- install ------------------------------------------------------------------


def _source_files(item: str) -> list[str]:
    p = os.path.join(REPO, item)
    if os.path.isfile(p):
        return [p]
    out = []
    for root, dirs, files in os.walk(p):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        out += [os.path.join(root, f) for f in sorted(files) if not f.endswith((".pyc", ".pyo"))]
    return out


def source_hash() -> str:
    h = hashlib.sha256()
    for item in HASHED:
        for f in _source_files(item):
            h.update(os.path.relpath(f, REPO).encode() + b"\0")
            with open(f, "rb") as fh:
                h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()


def _clean_env(**extra: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "PYTHONPATH",
            "PYTHONHOME",
            "PYTHONSTARTUP",
            "PYTHONINSPECT",
            "PYTHONDEVMODE",
            "PYTHONPROFILEIMPORTTIME",
            "PYTHONTRACEMALLOC",
            "PYTHONMALLOC",
            "VIRTUAL_ENV",
            "MEMCURATE_CHILD",
            "PYTHONWARNINGS",
        )
    }
    env.update(extra)
    return env


def isolated_env(work: str) -> dict:
    """The clean environment of a hook bench's children, its HOME, Claude Code's config dir and the XDG
    config dir inside `work` (the person's own are never read)."""
    home = os.path.join(work, "home")
    return _clean_env(
        HOME=home,
        CLAUDE_CONFIG_DIR=os.path.join(home, ".claude"),
        XDG_CONFIG_HOME=os.path.join(home, ".config"),
    )


def _pip(py: str, args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [py, "-m", "pip", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def ensure_install(venv: str, force: bool) -> str:
    """A non-editable install of this checkout in `venv`, current with the sources. Returns its `memcurate`."""
    bindir = os.path.join(venv, "bin")
    py, exe = os.path.join(bindir, "python"), os.path.join(bindir, "memcurate")
    stamp = os.path.join(venv, STAMP_NAME)
    digest = source_hash()
    try:
        with open(stamp) as f:
            current = f.read().strip() == digest
    except OSError:
        current = False
    if current and not force and os.path.exists(exe):
        return exe
    t0 = time.perf_counter()
    fresh = not os.path.exists(py)
    rel = os.path.relpath(venv)
    say(
        f"installing memcurate (non-editable) into {rel} ... "
        + ("new venv" if fresh else "sources changed")
    )
    if fresh:
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    # pip compiles .pyc at install; make sure nothing tells it (or compileall) not to write bytecode.
    env = _clean_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory(prefix="memcurate-bench-build-") as build:
        # Build from a copy: nothing (build/, egg-info) can land in the checkout.
        for item in BUILD_ITEMS:
            src = os.path.join(REPO, item)
            if os.path.isdir(src):
                shutil.copytree(
                    src,
                    os.path.join(build, item),
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
                )
            elif os.path.isfile(src):
                shutil.copy2(src, os.path.join(build, item))
        if fresh or not os.path.exists(exe):
            r = _pip(py, ["install", "--quiet", "--compile", build], env)
        else:
            r = _pip(
                py,
                ["install", "--quiet", "--compile", "--no-deps", "--force-reinstall", build],
                env,
            )
            if r.returncode == 0 and _pip(py, ["check"], env).returncode != 0:
                # the dependencies changed
                r = _pip(py, ["install", "--quiet", "--compile", build], env)
        if r.returncode != 0:
            say(r.stdout)
            die(f"pip install into {rel} failed (see above)")
    # Belt and braces: the engine's own modules must have their .pyc (a no-op when pip wrote them).
    subprocess.run(
        [py, "-m", "compileall", "-q", "-j", "0", *_package_dirs(py, env)],
        env=env,
        check=False,
        stdout=subprocess.DEVNULL,
    )
    with open(stamp, "w") as f:
        f.write(digest + "\n")
    say(f"  installed in {time.perf_counter() - t0:.1f} s")
    return exe


def _package_dirs(py: str, env: dict) -> list[str]:
    code = "from memcurate import curator, hooks; import os; print(os.path.dirname(curator.__file__)); print(os.path.dirname(hooks.__file__))"
    r = subprocess.run(
        [py, "-c", code],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tempfile.gettempdir(),
    )
    return r.stdout.split() if r.returncode == 0 else []


def interpreter_of(exe: str) -> list[str]:
    """The interpreter (and its flags) a console script starts with: its shebang, as the kernel reads it."""
    try:
        with open(exe, "rb") as f:
            head = f.read(1024)
    except OSError as e:
        die(f"cannot read {exe}: {e.strerror}")
    if head.startswith(b"#!"):
        first, _, rest = head[2:].partition(b"\n")
        parts = first.decode(errors="replace").split()
        if parts and os.path.basename(parts[0]) == "sh":
            # pip's form for long paths: #!/bin/sh + '''exec' "/path/python" "$0" "$@"
            m = re.search(rb"'''exec' \"?([^\"\s]+)\"?", rest)
            if m:
                return [m.group(1).decode()]
        elif parts and os.path.basename(parts[0]) == "env" and len(parts) > 1:
            found = shutil.which(parts[1])
            if found:
                return [found, *parts[2:]]
        elif parts:
            return parts
    sibling = os.path.join(os.path.dirname(os.path.abspath(exe)), "python")
    if os.path.exists(sibling):
        return [sibling]
    say(f"warning: cannot tell the interpreter of {exe}; the bare start uses {sys.executable}")
    return [sys.executable]


def hook_command(exe: str, env: dict, work: str) -> list[str]:
    """The hook command `exe install` writes into Claude Code's settings (its argv, `hook` included), asked
    of the install itself in a throwaway project: what Claude Code runs is what is measured."""
    project = os.path.join(work, "install-probe")
    os.makedirs(os.path.join(project, ".git"))
    r = subprocess.run(
        [exe, "install", "--project", project, "--scope", "project", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=project,
    )
    try:
        command = json.loads(r.stdout)["command"]
    except (ValueError, KeyError, TypeError):
        die(
            f"`{exe} install --json` did not say its command (exit {r.returncode}): {r.stderr[:500]}"
        )
    shutil.rmtree(project)
    return shlex.split(command)


def _runs_python(argv: list[str]) -> bool:
    """Whether a hook command is an interpreter with its flags (`python -P -c …`), not a script."""
    return len(argv) > 2 and argv[1].startswith("-")


def describe_install(interp: list[str], env: dict) -> dict:
    """Where the hook's engine is imported from, and whether its .pyc files exist (an editable checkout
    under PYTHONDONTWRITEBYTECODE=1 recompiles every module on every run)."""
    code = (
        "import importlib.util, json, os, sys\nfrom memcurate import curator, hooks\n"
        "mods = []\n"
        "for pkg in (curator, hooks):\n"
        "    d = os.path.dirname(pkg.__file__)\n"
        "    mods += [os.path.join(d, f) for f in os.listdir(d) if f.endswith('.py')]\n"
        "missing = [m for m in mods if not os.path.exists(importlib.util.cache_from_source(m))]\n"
        "print(json.dumps({'version': curator.__version__, 'engine': os.path.dirname(curator.__file__),\n"
        "    'python': sys.version.split()[0], 'modules': len(mods), 'missing_pyc': len(missing),\n"
        "    'dont_write_bytecode': sys.dont_write_bytecode}))\n"
    )
    r = subprocess.run(
        [*interp, "-c", code],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tempfile.gettempdir(),
    )
    if r.returncode != 0:
        die(f"the hook's interpreter cannot import the engine:\n{r.stderr.strip()}")
    info = json.loads(r.stdout)
    info["editable"] = os.path.realpath(info["engine"]) == os.path.realpath(
        os.path.join(REPO, "curator")
    )
    return info


# -- processes ------------------------------------------------------------------


class Sample:
    __slots__ = ("wall", "rss", "code", "stdout", "stderr", "cpu")

    def __init__(
        self, wall: float, rss: int, code: int, stdout: bytes, stderr: bytes, cpu: float = 0.0
    ) -> None:
        self.wall, self.rss, self.code, self.stdout, self.stderr = wall, rss, code, stdout, stderr
        self.cpu = cpu  # the child's user + system time: what other processes' load moves least


# A tiny process that forks and execs every measured child. Linux charges a child's ru_maxrss with
# the memory it had before exec: a child forked (or vforked, as subprocess does) from the bench
# itself, which holds transcripts in memory, would report the bench's RSS, not its own. Forked
# from this spawner (python -I -S, a few MB), a child starts near `rss_floor` and its peak is its own.
SPAWNER = r"""
import marshal, os, sys, time
rd, wr = sys.stdin.fileno(), sys.stdout.fileno()
def read_exact(n):
    buf = b""
    while len(buf) < n:
        chunk = os.read(rd, n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf
def send(obj):
    data = marshal.dumps(obj)
    os.write(wr, len(data).to_bytes(4, "big") + data)
while True:
    try:
        argv, env, cwd, fin, fout, ferr = marshal.loads(read_exact(int.from_bytes(read_exact(4), "big")))
    except EOFError:
        break
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            for fd, path, flags in ((0, fin, os.O_RDONLY), (1, fout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                    (2, ferr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
                f = os.open(path, flags, 0o600)
                os.dup2(f, fd)
                os.close(f)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    send(pid)
    _, status, usage = os.wait4(pid, 0)
    t1 = time.perf_counter()
    send((t1 - t0, status, usage.ru_maxrss, usage.ru_utime + usage.ru_stime))
"""


class Runner:
    """Run one child through the spawner: wall time from fork to reap, and that child's own peak RSS
    (os.wait4 on its pid, not RUSAGE_CHILDREN)."""

    RSS_UNIT = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB elsewhere

    def __init__(self, env: dict, scratch: str) -> None:
        self.env = env
        self.out = os.path.join(scratch, "child.stdout")
        self.err = os.path.join(scratch, "child.stderr")
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", SPAWNER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
            cwd=scratch,
        )
        self.rd, self.wr = self.proc.stdout.fileno(), self.proc.stdin.fileno()
        true = shutil.which("true") or "/bin/true"
        self.rss_floor = self.run([true], None, scratch).rss if os.path.exists(true) else 0

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()

    def _read(self, timeout: float | None = None):
        if timeout is not None and not select.select([self.rd], [], [], timeout)[0]:
            return TimeoutError
        head = self._exact(4)
        return marshal.loads(self._exact(int.from_bytes(head, "big")))

    def _exact(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = os.read(self.rd, n - len(buf))
            if not chunk:
                die("the spawner process died")
            buf += chunk
        return buf

    def run(
        self, argv: list[str], stdin_path: str | None, cwd: str, timeout: float = 120.0
    ) -> Sample:
        argv = [os.path.abspath(argv[0]), *argv[1:]]
        req = marshal.dumps((argv, self.env, cwd, stdin_path or os.devnull, self.out, self.err))
        os.write(self.wr, len(req).to_bytes(4, "big") + req)
        pid = self._read()
        result = self._read(timeout)
        if result is TimeoutError:
            os.kill(pid, signal.SIGKILL)
            self._read()
            die(f"`{' '.join(argv)}` timed out after {timeout:.0f} s")
        wall, status, maxrss, cpu = result
        code = os.waitstatus_to_exitcode(status)
        with open(self.out, "rb") as f:
            out = f.read()
        with open(self.err, "rb") as f:
            err = f.read()
        if code == 127 and not out and not err:
            die(f"could not run `{' '.join(argv)}`")
        return Sample(wall, maxrss * self.RSS_UNIT, code, out, err, cpu)


# -- transcripts ------------------------------------------------------------------

_ID = re.compile(
    r'"timestamp":"[^"]*"'
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|\b(?:msg|req|toolu)_[0-9A-Za-z]{12,}"
)
_OWN_UUID = re.compile(r'"uuid":"([0-9a-f-]{36})"')
_ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def main_session_files(folder: str) -> list[str]:
    """Main-session transcripts (not subagents), largest first."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "subagents")
        found += [
            os.path.join(root, f)
            for f in files
            if f.endswith(".jsonl") and not f.startswith("agent-")
        ]
    return sorted(found, key=lambda p: (-os.path.getsize(p), p))


class Synth:
    """Transcript lines made from the real shared ones: new uuids, message, request and tool ids
    (consistent within a copy, so blocks of one message still group), one constant sessionId,
    increasing timestamps, and now and then a much larger tool result."""

    def __init__(
        self,
        sources: list[str],
        session_id: str,
        rng: random.Random,
        start: dt.datetime,
        big_result_rate: float = 0.01,
    ) -> None:
        self.files: list[list[str]] = []
        self.source_sessions: set[str] = set()
        for path in sorted(sources):
            lines = []
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                for line in f:
                    line = line.rstrip("\n")
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(rec, dict):
                        lines.append(line)
                        if isinstance(rec.get("sessionId"), str):
                            self.source_sessions.add(rec["sessionId"])
            if lines:
                self.files.append(lines)
        if not self.files:
            die("no transcript records found to build synthetic transcripts from")
        self.session_id = session_id
        self.rng = rng
        self.clock = start
        self.big_result_rate = big_result_rate
        self.last_uuid = None
        self.cursor = (0, 0)
        self.ids: dict[str, str] = {}
        self.new_copy()

    def new_copy(self) -> None:
        self.ids = dict.fromkeys(self.source_sessions, self.session_id)

    def _fresh(self, old: str) -> str:
        r = self.rng
        if old.startswith(("msg_", "req_", "toolu_")):
            prefix, _, body = old.partition("_")
            return f"{prefix}_{''.join(r.choice(_ALNUM) for _ in range(len(body)))}"
        h = f"{r.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[r.getrandbits(2)]}{h[17:20]}-{h[20:32]}"

    def _sub(self, m: re.Match) -> str:
        s = m.group(0)
        if s[0] == '"':
            self.clock += dt.timedelta(milliseconds=self.rng.randint(50, 6000))
            return f'"timestamp":"{self.clock.strftime("%Y-%m-%dT%H:%M:%S.")}{self.clock.microsecond // 1000:03d}Z"'
        new = self.ids.get(s)
        if new is None:
            new = self.ids[s] = self._fresh(s)
        return new

    def line(self, src: str) -> str:
        if '"tool_result"' in src and self.rng.random() < self.big_result_rate:
            src = self._enlarge(src)
        m = _OWN_UUID.search(src)
        if self.last_uuid and '"parentUuid":null' in src:
            # one long session
            src = src.replace('"parentUuid":null', f'"parentUuid":"{self.last_uuid}"', 1)
        out = _ID.sub(self._sub, src)
        if m:
            self.last_uuid = self.ids.get(m.group(1), self.last_uuid)
        return out

    def _enlarge(self, src: str) -> str:
        """A tool result 20 KB..400 KB long (a big file read, a long test log)."""
        rec = json.loads(src)
        content = rec.get("message", {}).get("content")
        if not isinstance(content, list):
            return src
        size = int(20_000 * 20 ** self.rng.random())
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                text = block.get("content")
                if isinstance(text, list):
                    text = "\n".join(b.get("text", "") for b in text if isinstance(b, dict))
                if not isinstance(text, str) or not text.strip():
                    text = "line of tool output: nothing to see here\n"
                big = (text + "\n") * (size // (len(text) + 1) + 1)
                block["content"] = big[:size]
                if isinstance(rec.get("toolUseResult"), dict) and isinstance(
                    rec["toolUseResult"].get("stdout"), str
                ):
                    rec["toolUseResult"]["stdout"] = block["content"]
                return json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
        return src

    def records(self, n: int) -> list[str]:
        """The next `n` consecutive records of the pool (a turn's worth), walking it copy after copy."""
        out = []
        fi, li = self.cursor
        for _ in range(n):
            out.append(self.line(self.files[fi][li]))
            li += 1
            if li == len(self.files[fi]):
                fi, li = fi + 1, 0
                if fi == len(self.files):
                    fi = 0
                    self.new_copy()
        self.cursor = (fi, li)
        return out

    def write_big(self, path: str, target_bytes: int) -> int:
        """Whole copies of the pool, one after the other, until `target_bytes` are written."""
        written = 0
        with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as f:
            while written < target_bytes:
                for lines in self.files:
                    chunk = "\n".join(self.line(s) for s in lines) + "\n"
                    f.write(chunk)
                    written += len(chunk.encode("utf-8", "surrogateescape"))
                    if written >= target_bytes:
                        break
                self.new_copy()
        return os.path.getsize(path)


def conversation_lines(sources: list[str]) -> list[str]:
    """The non-blank lines that people and the assistant wrote in the shared transcripts (no tool output)."""
    out = []
    for path in sources:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                    content = rec["message"]["content"]
                except (ValueError, TypeError, KeyError):
                    continue
                if isinstance(content, str):
                    texts = [content] if rec.get("type") == "user" else []
                elif isinstance(content, list):
                    texts = [
                        b["text"]
                        for b in content
                        if isinstance(b, dict)
                        and b.get("type") == "text"
                        and isinstance(b.get("text"), str)
                    ]
                else:
                    texts = []
                out += [x for t in texts for x in t.splitlines() if x.strip()]
    return out or ["a line of a long pasted message"]


def append_huge_message(path: str, lines: list[str], chars: int, rng: random.Random) -> int:
    """Append one user message of about `chars` characters (conversation lines drawn at random, so
    keywords are as dense as in real turns) and a short reply, continuing the transcript's session."""
    tail = last_record(path)
    clock = parse_time(tail.get("timestamp", ""))
    parts, n = [], 0
    while n < chars:
        parts.append(rng.choice(lines))
        n += len(parts[-1]) + 1
    base = {
        "isSidechain": False,
        "userType": "external",
        "cwd": tail.get("cwd", ""),
        "sessionId": tail.get("sessionId", ""),
        "version": tail.get("version", ""),
    }
    uuids = [f"{rng.getrandbits(128):032x}" for _ in range(2)]
    uuids = [f"{u[:8]}-{u[8:12]}-4{u[13:16]}-8{u[17:20]}-{u[20:32]}" for u in uuids]
    stamp = [
        (clock + dt.timedelta(seconds=k + 1)).strftime("%Y-%m-%dT%H:%M:%S.000Z") for k in range(2)
    ]
    user = {
        **base,
        "parentUuid": tail.get("uuid"),
        "type": "user",
        "uuid": uuids[0],
        "timestamp": stamp[0],
        "message": {"role": "user", "content": "\n".join(parts)},
    }
    reply = {
        **base,
        "parentUuid": uuids[0],
        "type": "assistant",
        "uuid": uuids[1],
        "timestamp": stamp[1],
        "message": {
            "id": "msg_bench_huge",
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "content": [{"type": "text", "text": "Noted."}],
        },
    }
    with open(path, "a", encoding="utf-8", errors="surrogateescape", newline="\n") as f:
        for rec in (user, reply):
            f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
    return n


def last_record(path: str) -> dict:
    with open(path, "rb") as f:
        f.seek(max(0, os.path.getsize(path) - (4 << 20)))
        lines = f.read().splitlines()
    for line in reversed(lines):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            return rec
    return {}


def parse_time(s: str) -> dt.datetime:
    try:
        return dt.datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S")
    except (TypeError, ValueError):
        return dt.datetime(2025, 1, 6, 9, 0, 0)


# -- the bench ------------------------------------------------------------------


def project_key(path: str) -> str:
    """Claude Code's folder name for a project: the engine's one home of the rule."""
    from memcurate.curator.util.paths import project_key as key

    return key(path)


class Project:
    """A throwaway project (with a .git folder) and its Claude Code transcript folder."""

    def __init__(self, work: str, name: str, claude_dir: str) -> None:
        self.dir = os.path.join(work, "projects", name)
        os.makedirs(os.path.join(self.dir, ".git"))
        self.transcripts = os.path.join(claude_dir, "projects", project_key(self.dir))
        os.makedirs(self.transcripts, exist_ok=True)
        self.data = os.path.join(self.dir, DATA_DIR)
        self.payloads: dict[str, str] = {}

    def payload(self, transcript: str, session_id: str, event: str = "Stop") -> str:
        """A file holding the hook JSON for `transcript` (the child's stdin)."""
        key = f"{event}:{transcript}"
        if key not in self.payloads:
            path = os.path.join(self.dir, ".git", f"payload-{len(self.payloads)}.json")
            doc = {
                "session_id": session_id,
                "transcript_path": transcript,
                "cwd": self.dir,
                "permission_mode": "default",
                "hook_event_name": event,
                "stop_hook_active": False,
            }
            with open(path, "w") as f:
                json.dump(doc, f)
            self.payloads[key] = path
        return self.payloads[key]

    def fresh_data_dir(self, keep_config_cache: bool = True) -> None:
        """Forget every transcript: offsets, staging, locks, log, config-dir record."""
        if not os.path.isdir(self.data):
            return
        if not keep_config_cache:
            shutil.rmtree(self.data)
            return
        for name in os.listdir(self.data):
            if name in KEEP_IN_FRESH_DATA_DIR:
                continue
            p = os.path.join(self.data, name)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p)
            else:
                os.unlink(p)

    def last_log_line(self) -> str:
        try:
            with open(os.path.join(self.data, LOG), "rb") as f:
                f.seek(max(0, os.path.getsize(f.name) - 8192))
                lines = f.read().decode("utf-8", "replace").splitlines()
            return lines[-1] if lines else ""
        except OSError:
            return ""


_LOG_STATUS = re.compile(r"\b(staged|no-trigger|nothing-new) bytes (\d+)\.\.(\d+) of ")


class Bench:
    def __init__(self, args, exe: str, work: str) -> None:
        self.args = args
        self.exe = exe
        self.work = work
        home, claude, xdg = (os.path.join(work, d) for d in ("home", "claude", "xdg"))
        for d in (home, claude, xdg):
            os.makedirs(d)
        self.claude = claude
        # Nothing may touch the real home: HOME, CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME are throwaway folders.
        self.env = _clean_env(HOME=home, CLAUDE_CONFIG_DIR=claude, XDG_CONFIG_HOME=xdg)
        self.hook_argv = hook_command(exe, self.env, work)
        interp = [self.hook_argv[0]] if _runs_python(self.hook_argv) else interpreter_of(exe)
        self.interp = interp
        self.bare_argv = [*interp, "-c", "pass"]
        self.runner = Runner(self.env, work)
        self.log_warned = False
        self.statuses: dict[str, dict[str, int]] = {}

    def bare(self) -> Sample:
        s = self.runner.run(self.bare_argv, None, self.work)
        if s.code != 0 or s.stdout:
            die(
                f"`{' '.join(self.bare_argv)}` failed (exit {s.code}): {s.stderr.decode(errors='replace')[:500]}"
            )
        return s

    def plain(self, argv: list[str], label: str) -> Sample:
        s = self.runner.run(argv, None, self.work)
        if s.code != 0 or s.stdout or s.stderr:
            die(
                f"{label} failed (exit {s.code}): {(s.stdout + s.stderr).decode(errors='replace')[:500]}"
            )
        return s

    def hook(
        self,
        project: Project,
        transcript: str,
        session: str,
        label: str,
        expect: tuple[str, ...],
        timeout: float = 120.0,
        argv: list[str] | None = None,
    ) -> Sample:
        s = self.runner.run(
            argv or self.hook_argv, project.payload(transcript, session), project.dir, timeout
        )
        problems = []
        if s.code != 0:
            problems.append(f"exit status {s.code}")
        if s.stdout:
            problems.append(f"stdout not empty: {s.stdout[:300]!r}")
        if s.stderr:
            problems.append(f"stderr: {s.stderr.decode(errors='replace').strip()[:500]}")
        if problems:
            die(
                f"hook call '{label}' misbehaved: "
                + "; ".join(problems)
                + f"\n  last log line: {project.last_log_line()}"
            )
        self._check_log(project, transcript, label, expect)
        return s

    def _check_log(
        self, project: Project, transcript: str, label: str, expect: tuple[str, ...]
    ) -> None:
        """The hook's one log line says what it did: the expected status, up to the end of the file."""
        line = project.last_log_line()
        m = _LOG_STATUS.search(line)
        if not m:
            if not self.log_warned:
                say(
                    f"warning: cannot read the hook's status from its log line ({line[:160]!r}); not checked"
                )
                self.log_warned = True
            return
        status, end = m.group(1), int(m.group(3))
        self.statuses.setdefault(label, {}).setdefault(status, 0)
        self.statuses[label][status] += 1
        if status not in expect:
            die(f"hook call '{label}': expected {' or '.join(expect)}, the log says: {line}")
        size = os.path.getsize(transcript)
        if end != size:
            die(f"hook call '{label}' stopped at byte {end} of {size}: {line}")


# What an incremental Stop pass imports (tests/test_hook_cost.py's STOP_MODULES, staging aside): the
# "imports only" row is the console script importing them and returning, the floor under a pass.
PASS_IMPORTS = (
    "from memcurate.curator import cli",
    "from memcurate.hooks import capture, dispatch",
    "from memcurate.curator.capture import transcript, triage",
)


def empty_console_script(exe: str, work: str, imports: tuple[str, ...] = ()) -> str | None:
    """The executable's own console-script wrapper with an entry point that does nothing (but run
    `imports`): what any console script costs before memcurate's code runs (the wrapper itself
    imports `re`), and with `imports`, what loading a pass's modules adds."""
    try:
        with open(exe, encoding="utf-8") as f:
            text = f.read(1 << 16)
    except (OSError, UnicodeDecodeError):
        return None
    m = re.search(r"^from ([\w.]+) import (\w+)$", text, re.M)
    if not text.startswith("#!") or not m:
        return None
    path = os.path.join(work, "imports-console-script" if imports else "empty-console-script")
    body = "".join(f"    {line}\n" for line in imports)
    with open(path, "w", encoding="utf-8") as f:
        f.write(
            text[: m.start()] + f"def {m.group(2)}():\n{body}    return 0\n" + text[m.end() + 1 :]
        )
    os.chmod(path, 0o755)
    return path


def interleave(jobs: list, rounds: int, rng: random.Random) -> dict[str, list]:
    """Run every (name, job) once a round, in an order shuffled per round, so that machine drift hits
    every scenario alike; name -> the results, in round order. Says how far it got every 10 rounds."""
    results: dict[str, list] = {name: [] for name, _ in jobs}
    say(
        f"interleaved loop: {rounds} rounds of {', '.join(n.removesuffix('.jsonl') for n, _ in jobs)} "
        "(order shuffled per round)"
    )
    t0 = time.perf_counter()
    for r in range(rounds):
        order = jobs[:]
        rng.shuffle(order)
        for name, job in order:
            results[name].append(job())
        if (r + 1) % 10 == 0:
            say(f"  {r + 1}/{rounds} rounds  ({time.perf_counter() - t0:.1f} s)")
    return results


def hook_args(ap, results: str, rounds: int = 60) -> None:
    """The options of a bench that times one hook against the bare interpreter."""
    ap.add_argument("--rounds", type=int, default=rounds)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--venv", default=DEFAULT_VENV)
    ap.add_argument("--reinstall", action="store_true")
    ap.add_argument("--json-out", default=results)
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")


def report(
    samples: dict[str, list],
    targets: dict[str, float],
    *,
    exe: str,
    interp: list[str],
    rounds: int,
    json_out: str,
    strict: bool,
    extra: dict | None = None,
) -> int:
    """The end of a hook bench: one row per case (median, p10, p90, ratio to the bare interpreter, its
    target and PASS/FAIL), the figures written to `json_out`; exit status 1 when `strict` and a target
    was missed. `samples` holds a "bare" case."""
    bare_med = statistics.median(s.wall for s in samples["bare"])
    rows = {n: summarize(s, bare_med) for n, s in samples.items()}
    say(f"memcurate: {exe}   rounds: {rounds}   interleaved with `{' '.join(interp)} -c pass`")
    width = max(len(n) for n in rows) + 1
    say(f"{'case':<{width}} {'median ms':>10} {'p10':>8} {'p90':>8} {'× bare':>7} {'target':>7}")
    missed = []
    for name, r in rows.items():
        target = targets.get(name)
        ok = target is None or r["ratio_to_bare"] <= target
        if not ok:
            missed.append(name)
        say(
            f"{name:<{width}} {r['median_ms']:>10.2f} {r['p10_ms']:>8.2f} {r['p90_ms']:>8.2f} "
            f"{r['ratio_to_bare']:>7.2f} {('≤ %.1f' % target) if target else '':>7}"
            + ("" if target is None else ("  PASS" if ok else "  FAIL"))
        )
    doc = {
        "rounds": rounds,
        "targets": targets,
        "executable": exe,
        **(extra or {}),
        "cases": {n: {k: v for k, v in r.items() if k != "samples_ms"} for n, r in rows.items()},
        "missed": missed,
        "commit": _git_commit(),
    }
    out = os.path.abspath(json_out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    say(f"wrote {os.path.relpath(out)}")
    return 1 if missed and strict else 0


def summarize(
    samples: list[Sample], bare_median: float | None, bare_cpu: float | None = None
) -> dict:
    walls = sorted(s.wall for s in samples)
    cpu = statistics.median(s.cpu for s in samples)
    rss = [s.rss for s in samples]
    med = statistics.median(walls)
    q = statistics.quantiles(walls, n=10) if len(walls) >= 2 else [walls[0]] * 9
    return {
        "n": len(walls),
        "median_ms": round(med * 1e3, 2),
        "min_ms": round(walls[0] * 1e3, 2),
        "p10_ms": round(q[0] * 1e3, 2),
        "p90_ms": round(q[-1] * 1e3, 2),
        "ratio_to_bare": round(med / bare_median, 2) if bare_median else None,
        "cpu_median_ms": round(cpu * 1e3, 2),
        "cpu_ratio_to_bare": round(cpu / bare_cpu, 2) if bare_cpu else None,
        "peak_rss_mib": round(max(rss) / MIB, 1),
        "median_rss_mib": round(statistics.median(rss) / MIB, 1),
        "samples_ms": [round(s.wall * 1e3, 2) for s in samples],
    }


def run(args) -> int:
    transcripts_dir = os.path.abspath(args.transcripts)
    if not os.path.isdir(transcripts_dir):
        say(
            f"SKIPPED: the shared transcripts folder is absent ({transcripts_dir}); "
            "the hook bench replays them. Put it beside the checkout or pass --transcripts DIR."
        )
        return 0
    sources = main_session_files(transcripts_dir)
    if not sources:
        say(f"SKIPPED: no main-session transcripts (*.jsonl) in {transcripts_dir}")
        return 0

    if args.memcurate:
        exe = shutil.which(args.memcurate) or args.memcurate
        if not os.access(exe, os.X_OK):
            die(f"--memcurate {args.memcurate}: not an executable")
        exe = os.path.abspath(exe)
    else:
        exe = ensure_install(os.path.abspath(args.venv), args.reinstall)
    rounds = args.rounds or (30 if args.quick else 100)
    big_runs = args.big_runs or (1 if args.quick else 3)
    big_mb = args.big_mb
    huge_runs = args.huge_runs or (5 if args.quick else 9)
    huge_mb = args.huge_mb
    cold_runs = 3 if args.quick else 5
    firsts = sources[: args.first_files]
    rng = random.Random(args.seed)

    t_start = time.perf_counter()
    work = tempfile.mkdtemp(prefix="memcurate-bench-", dir=args.workdir)
    try:
        bench = Bench(args, exe, work)
        interp = bench.interp
        info = describe_install(interp, bench.env)
        say(
            f"hook:   {shlex.join(bench.hook_argv)}   (as `memcurate install` writes it; memcurate "
            f"{info['version']}, engine in {info['engine']})"
        )
        say(f"bare:   {' '.join(bench.bare_argv)}   (Python {info['python']})")
        if info["editable"]:
            say(
                "warning: the engine is imported from this checkout (an editable install?): not what users run"
            )
        if info["missing_pyc"]:
            say(
                f"warning: {info['missing_pyc']} of {info['modules']} engine modules have no .pyc"
                + (
                    " and PYTHONDONTWRITEBYTECODE is set: every run recompiles them"
                    if info["dont_write_bytecode"]
                    else ""
                )
            )

        # Projects: cold-config calls, first calls, the growing transcript, the 100 MB one.
        cold = Project(work, "cold", bench.claude)
        first = Project(work, "first", bench.claude)
        # the same first calls with rule graduation off: what counting the failures adds to them
        rules_off = Project(work, "first-rules-off", bench.claude)
        os.makedirs(os.path.join(rules_off.dir, ".claude"))
        with open(os.path.join(rules_off.dir, ".claude", "memcurate.yaml"), "w") as f:
            f.write("rules:\n  enabled: false\n")
        grow = Project(work, "grow", bench.claude)
        session_tiny = "00000000-0000-4000-8000-00000000b0b0"
        tiny_synth = Synth(
            sources, session_tiny, random.Random(args.seed + 1), dt.datetime(2025, 1, 6, 9, 0, 0)
        )

        def tiny_transcript(p: Project) -> str:
            path = os.path.join(p.transcripts, f"{session_tiny}.jsonl")
            with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write("\n".join(tiny_synth.records(8)) + "\n")
            return path

        # Warm the page cache, the interpreter's files, and each project's config cache.
        for _ in range(3):
            bench.bare()
        tiny = {p: tiny_transcript(p) for p in (cold, first, rules_off, grow)}
        for p in (first, rules_off, grow):
            bench.hook(p, tiny[p], session_tiny, "warm-up", ("staged", "no-trigger"))
            if not os.path.exists(os.path.join(p.data, CONFIG_CACHE)):
                say(
                    f"warning: no {DATA_DIR}/{CONFIG_CACHE} after a call: every call below builds the config"
                )

        # The cold-config call: a fresh data dir, so the merged YAML config is built (once per project).
        cold_samples = []
        for _ in range(cold_runs):
            cold.fresh_data_dir(keep_config_cache=False)
            cold_samples.append(
                bench.hook(cold, tiny[cold], session_tiny, "cold config", ("staged", "no-trigger"))
            )

        # First-call transcripts, placed where Claude Code keeps them.
        first_paths, off_paths = [], []
        for src in firsts:
            for p, paths in ((first, first_paths), (rules_off, off_paths)):
                dst = os.path.join(p.transcripts, os.path.basename(src))
                shutil.copyfile(src, dst)
                paths.append((dst, os.path.basename(src).removesuffix(".jsonl")))

        # The growing transcript: the largest one, already triaged once, then one turn at a time.
        grow_src = firsts[0]
        grow_path = os.path.join(grow.transcripts, os.path.basename(grow_src))
        shutil.copyfile(grow_src, grow_path)
        tail = last_record(grow_path)
        grow_session = tail.get("sessionId") or os.path.basename(grow_src).removesuffix(".jsonl")
        turns = Synth(
            sources,
            grow_session,
            random.Random(args.seed + 2),
            parse_time(tail.get("timestamp", "")),
            big_result_rate=0.01,
        )
        turns.last_uuid = tail.get("uuid")
        bench.hook(grow, grow_path, grow_session, "initial pass", ("staged", "no-trigger"))
        appended = []

        def incremental() -> Sample:
            n = rng.randint(4, 10)
            lines = turns.records(n)
            with open(
                grow_path, "a", encoding="utf-8", errors="surrogateescape", newline="\n"
            ) as f:
                f.write("\n".join(lines) + "\n")
            appended.append(sum(len(x.encode("utf-8", "surrogateescape")) + 1 for x in lines))
            return bench.hook(
                grow, grow_path, grow_session, "incremental", ("staged", "no-trigger")
            )

        def first_call(path: str, session: str, p: Project = first) -> Sample:
            p.fresh_data_dir()
            return bench.hook(p, path, session, "first call", ("staged", "no-trigger"))

        # The same growth, run through the console script (the plugin's `memcurate hook`): each call
        # appends its own turn, so either command's call reads only the records it appended.
        console = [exe, "hook"] if bench.hook_argv != [exe, "hook"] else None

        def incremental_console() -> Sample:
            lines = turns.records(rng.randint(4, 10))
            with open(
                grow_path, "a", encoding="utf-8", errors="surrogateescape", newline="\n"
            ) as f:
                f.write("\n".join(lines) + "\n")
            return bench.hook(
                grow, grow_path, grow_session, "incremental", ("staged", "no-trigger"), argv=console
            )

        first_names = [f"first:{os.path.basename(path)}" for path, _ in first_paths]
        jobs = [("bare", bench.bare)]
        if _runs_python(bench.hook_argv):
            # the command with nothing to run (-c pass), then with a pass's imports only
            flags, rest = bench.hook_argv[:2], bench.hook_argv[bench.hook_argv.index("-c") + 2 :]
            empty_argv = [*flags, "-c", "pass", *rest]
            imports_argv = [*flags, "-c", "; ".join(PASS_IMPORTS), *rest]
        else:
            empty = empty_console_script(exe, work)
            imports = empty_console_script(exe, work, PASS_IMPORTS) if empty else None
            empty_argv = [empty, "hook"] if empty else None
            imports_argv = [imports, "hook"] if imports else None
            if empty is None:
                say(
                    "note: cannot derive an empty console script from the executable; that row is left out"
                )
        if empty_argv:
            jobs.append(("empty_script", lambda: bench.plain(empty_argv, "empty entry")))
        if imports_argv:
            jobs.append(("imports", lambda: bench.plain(imports_argv, "imports only")))
        jobs += [
            ("noop", lambda: bench.hook(grow, grow_path, grow_session, "no-op", ("nothing-new",))),
            ("incremental", incremental),
        ]
        if console:
            jobs.append(("incremental_console", incremental_console))
        jobs += [
            (n, (lambda p=p, s=s: first_call(p, s)))
            for n, (p, s) in zip(first_names, first_paths, strict=True)
        ]
        jobs += [
            (f"rules_off:{n}", (lambda p=p, s=s: first_call(p, s, rules_off)))
            for n, (p, s) in zip(first_names, off_paths, strict=True)
        ]

        scen = interleave(jobs, rounds, rng)
        bare_med = statistics.median(s.wall for s in scen["bare"])

        huge = None
        huge_samples: list[Sample] = []
        huge_pairs: list[Sample] = []
        if huge_mb > 0:
            hugep = Project(work, "huge", bench.claude)
            huge_path = os.path.join(hugep.transcripts, os.path.basename(firsts[0]))
            shutil.copyfile(firsts[0], huge_path)
            chars = append_huge_message(
                huge_path,
                conversation_lines(sources),
                int(huge_mb * 1e6),
                random.Random(args.seed + 4),
            )
            huge_session = last_record(huge_path).get("sessionId") or "huge"
            say(
                f"one huge message: {chars / 1e6:.1f} M characters appended to {os.path.basename(firsts[0])}"
            )
            bench.hook(
                hugep, tiny_transcript(hugep), session_tiny, "warm-up", ("staged", "no-trigger")
            )
            noted = 0
            for i in range(huge_runs):
                # Paired with a first call on the same transcript without the message, in turns: the
                # ratio of the two medians holds however the machine drifts meanwhile.
                hugep.fresh_data_dir()
                plain = None if i % 2 else first_call(*first_paths[0])
                s = bench.hook(
                    hugep,
                    huge_path,
                    huge_session,
                    "one huge message",
                    ("staged", "no-trigger"),
                    timeout=args.big_timeout,
                )
                plain = plain or first_call(*first_paths[0])
                huge_samples.append(s)
                huge_pairs.append(plain)
                noted += "scored the first and last" in hugep.last_log_line()
                say(
                    f"  run {i + 1}/{huge_runs}: {s.wall:.2f} s, peak RSS {s.rss / MIB:.1f} MiB "
                    f"(without the message: {plain.wall:.2f} s, {plain.rss / MIB:.1f} MiB)"
                )
            huge = {
                "bytes": os.path.getsize(huge_path),
                "message_chars": chars,
                "noted_in_log": noted,
            }

        big = None
        big_samples: list[Sample] = []
        parse_samples: list[Sample] = []
        if big_mb > 0:
            bigp = Project(work, "big", bench.claude)
            big_session = "00000000-0000-4000-8000-0000000b16b1"
            big_path = os.path.join(bigp.transcripts, f"{big_session}.jsonl")
            t0 = time.perf_counter()
            synth = Synth(
                sources,
                big_session,
                random.Random(args.seed + 3),
                dt.datetime(2025, 3, 3, 8, 0, 0),
                big_result_rate=0.01,
            )
            size = synth.write_big(big_path, int(big_mb * 1e6))
            with open(big_path, "rb") as f:  # into the page cache, as a file Claude Code just wrote
                while f.read(8 << 20):
                    pass
            lines = sum(1 for _ in open(big_path, "rb"))
            say(
                f"synthetic transcript: {size / 1e6:.1f} MB, {lines} records, built in "
                f"{time.perf_counter() - t0:.1f} s"
            )
            bench.hook(
                bigp, tiny_transcript(bigp), session_tiny, "warm-up", ("staged", "no-trigger")
            )
            parse_argv = [*bench.bare_argv[:-2], "-c", PARSE_SCRIPT, big_path]
            for i in range(big_runs):
                # Paired with a process that only reads and parses the same file, in turns (see the huge message).
                parse = None if i % 2 else bench.plain(parse_argv, "read and parse")
                bigp.fresh_data_dir()
                s = bench.hook(
                    bigp,
                    big_path,
                    big_session,
                    "first call 100 MB",
                    ("staged", "no-trigger"),
                    timeout=args.big_timeout,
                )
                parse = parse or bench.plain(parse_argv, "read and parse")
                big_samples.append(s)
                parse_samples.append(parse)
                say(
                    f"  run {i + 1}/{big_runs}: {s.wall:.2f} s, peak RSS {s.rss / MIB:.1f} MiB "
                    f"(reading and parsing it: {parse.wall:.2f} s)"
                )
            big = {"bytes": size, "records": lines}
        elapsed = time.perf_counter() - t_start
    finally:
        if "bench" in locals():
            bench.runner.close()
        if args.keep:
            say(f"kept the work folder: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    # -- report ----------------------------------------------------------------
    # the same ratios in CPU time (user + system of each child): steadier while other work shares the machine
    bare_cpu = statistics.median(s.cpu for s in scen["bare"])
    results: dict = {"bare": summarize(scen["bare"], bare_med, bare_cpu)}
    rows = [("bare `python -c pass`", "bare", None)]
    if "empty_script" in scen:
        results["empty_script"] = summarize(scen["empty_script"], bare_med, bare_cpu)
        rows.append(("empty entry (the hook command's floor)", "empty_script", None))
    if "imports" in scen:
        results["imports"] = summarize(scen["imports"], bare_med, bare_cpu)
        rows.append(("entry + a pass's imports only", "imports", None))
    results["cold_config"] = summarize(cold_samples, bare_med, bare_cpu)
    rows.append(("cold config (fresh data dir, 8 records)", "cold_config", None))
    results["noop"] = summarize(scen["noop"], bare_med, bare_cpu)
    rows.append(("no-op (no new bytes)", "noop", None))
    inc = results["incremental"] = summarize(scen["incremental"], bare_med, bare_cpu)
    inc["appended_bytes_median"] = int(statistics.median(appended))
    inc["target"] = f"<= {TARGET_INCREMENTAL} x bare"
    inc["pass"] = inc["ratio_to_bare"] <= TARGET_INCREMENTAL
    rows.append(("incremental (+4-10 records)", "incremental", inc["pass"]))
    if "incremental_console" in scen:
        results["incremental_console"] = summarize(scen["incremental_console"], bare_med, bare_cpu)
        rows.append(("  the same via `memcurate hook` (console)", "incremental_console", None))
    for name, src in zip(first_names, firsts, strict=True):
        r = results[name] = summarize(scen[name], bare_med, bare_cpu)
        r["bytes"] = os.path.getsize(src)
        r["target"] = f"<= {TARGET_FIRST} x bare"
        r["pass"] = r["ratio_to_bare"] <= TARGET_FIRST
        rows.append(
            (f"first call {os.path.basename(src)[:8]} ({r['bytes'] / 1e6:.2f} MB)", name, r["pass"])
        )
        off = results[f"rules_off:{name}"] = summarize(
            scen[f"rules_off:{name}"], bare_med, bare_cpu
        )
        r["ratio_to_rules_off"] = round(r["median_ms"] / off["median_ms"], 2)
        label = f"  the same, rules off (on = {r['ratio_to_rules_off']:.2f} x off)"
        rows.append((label, f"rules_off:{name}", None))
    if huge:
        first = results["huge_message_paired_first_call"] = summarize(
            huge_pairs, bare_med, bare_cpu
        )
        r = results["huge_message"] = summarize(huge_samples, bare_med, bare_cpu)
        r.update(huge)
        r["ratio_to_first_call"] = round(r["median_ms"] / first["median_ms"], 2)
        r["rss_ratio_to_first_call"] = round(r["peak_rss_mib"] / first["peak_rss_mib"], 2)
        r["target"] = (
            f"<= {TARGET_HUGE_X_FIRST} x first call and <= {TARGET_HUGE_RSS_MIB:.0f} MiB peak RSS"
        )
        r["pass_time"] = r["ratio_to_first_call"] <= TARGET_HUGE_X_FIRST
        r["pass_rss"] = r["peak_rss_mib"] <= TARGET_HUGE_RSS_MIB
        r["pass"] = r["pass_time"] and r["pass_rss"]
        rows.append(
            (
                f"first call {os.path.basename(firsts[0])[:8]} + one {huge['message_chars'] / 1e6:.0f} MB "
                "message",
                "huge_message",
                r["pass"],
            )
        )
    if big:
        parse = results["synthetic_read_and_parse"] = summarize(parse_samples, bare_med, bare_cpu)
        rows.append(("  read and json-parse each line of it", "synthetic_read_and_parse", None))
        r = results["first:synthetic"] = summarize(big_samples, bare_med, bare_cpu)
        r.update(big)
        r["ratio_to_parse"] = round(r["median_ms"] / parse["median_ms"], 2)
        r["cpu_ratio_to_parse"] = round(r["cpu_median_ms"] / parse["cpu_median_ms"], 2)
        r["target"] = (
            f"<= {TARGET_BIG_S} s, <= {TARGET_BIG_X_PARSE} x reading and parsing it and "
            f"<= {TARGET_BIG_RSS_MIB:.0f} MiB peak RSS"
        )
        r["pass_time"] = r["median_ms"] <= TARGET_BIG_S * 1e3
        r["pass_parse"] = r["ratio_to_parse"] <= TARGET_BIG_X_PARSE
        r["pass_rss"] = r["peak_rss_mib"] <= TARGET_BIG_RSS_MIB
        r["pass"] = r["pass_time"] and r["pass_parse"] and r["pass_rss"]
        rows.insert(
            -1,
            (f"first call synthetic ({big['bytes'] / 1e6:.0f} MB)", "first:synthetic", r["pass"]),
        )

    say()
    say(
        f"memcurate hook benchmark — memcurate {info['version']}, Python {info['python']}, "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, {elapsed:.0f} s"
    )
    say(
        f"bare interpreter start: median {results['bare']['median_ms']:.1f} ms (n={results['bare']['n']}); "
        f"peak RSS floor of a spawned `true`: {bench.runner.rss_floor / MIB:.1f} MiB"
    )
    say()
    head = f"{'scenario':<42} {'n':>3} {'median':>10} {'p10..p90 ms':>15} {'x bare':>7} {'CPU x':>6} {'peak RSS':>10}  target"
    lines = []
    for label, key, ok in rows:
        r = results[key]
        med = r["median_ms"]
        med_s = f"{med / 1e3:.2f} s" if med >= 10_000 else f"{med:.1f} ms"
        spread = f"{r['p10_ms']:.0f}..{r['p90_ms']:.0f}" if r["n"] >= 5 else "-"
        target = ""
        if key == "huge_message":
            t_ok = "PASS" if r["pass_time"] else "FAIL"
            m_ok = "PASS" if r["pass_rss"] else "FAIL"
            target = (
                f"{r['ratio_to_first_call']:.2f} x first call <= {TARGET_HUGE_X_FIRST} {t_ok}, "
                f"<= {TARGET_HUGE_RSS_MIB:.0f} MiB {m_ok}"
            )
        elif key == "incremental" or key.startswith("first:"):
            if key == "first:synthetic":
                t_ok = "PASS" if r["pass_time"] else "FAIL"
                p_ok = "PASS" if r["pass_parse"] else "FAIL"
                m_ok = "PASS" if r["pass_rss"] else "FAIL"
                target = (
                    f"<= {TARGET_BIG_S:.0f} s {t_ok}, {r['ratio_to_parse']:.2f} x parse <= {TARGET_BIG_X_PARSE} "
                    f"{p_ok} (CPU {r['cpu_ratio_to_parse']:.2f} x), <= {TARGET_BIG_RSS_MIB:.0f} MiB {m_ok}"
                )
            else:
                limit = TARGET_INCREMENTAL if key == "incremental" else TARGET_FIRST
                target = f"<= {limit} x bare  {'PASS' if ok else 'FAIL'}"
        lines.append(
            f"{label:<42} {r['n']:>3} {med_s:>10} {spread:>15} {r['ratio_to_bare']:>7.2f} "
            f"{r['cpu_ratio_to_bare'] or 0:>6.2f} {r['peak_rss_mib']:>6.1f} MiB  {target}".rstrip()
        )
    say(head)
    say("-" * max(len(x) for x in [head, *lines]))
    for x in lines:
        say(x)
    say()
    b = results["bare"]
    if b["n"] >= 10 and b["p90_ms"] > 1.5 * b["p10_ms"]:
        say(
            f"note: the machine is noisy (bare p90/p10 = {b['p90_ms'] / b['p10_ms']:.1f}); the runs are interleaved, "
            "so the ratios of medians stay comparable, but absolute times move"
        )
    if huge:
        r = results["huge_message"]
        say(
            f"one huge message: {r['median_ms']:.0f} ms and {r['peak_rss_mib']:.1f} MiB peak RSS, "
            f"{r['ratio_to_first_call']:.2f} x the time and {r['rss_ratio_to_first_call']:.2f} x the peak RSS of "
            f"the first call without it; {r['noted_in_log']}/{r['n']} log lines say what was not scored"
        )
    verdicts = [ok for _, _, ok in rows if ok is not None]
    overall = all(verdicts)
    say(f"overall: {'PASS' if overall else 'FAIL'} ({sum(verdicts)}/{len(verdicts)} targets met)")
    if bench.statuses:
        counts = "; ".join(
            f"{k}: " + ", ".join(f"{n} {s}" for s, n in v.items())
            for k, v in bench.statuses.items()
            if k not in ("warm-up",)
        )
        say(f"hook outcomes (from its log): {counts}")

    doc = {
        "bench": "hook",
        "created": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "args": {k: v for k, v in vars(args).items()},
        "machine": {
            "system": platform.system(),
            "release": platform.release(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "python": info["python"],
        },
        "memcurate": {
            "version": info["version"],
            "executable": exe,
            "engine": info["engine"],
            "editable": info["editable"],
            "missing_pyc": info["missing_pyc"],
            "source_hash": source_hash(),
            "git_commit": _git_commit(),
        },
        "commands": {"bare": bench.bare_argv, "hook": bench.hook_argv},
        "rss_floor_mib": round(bench.runner.rss_floor / MIB, 1),
        "targets": {
            "incremental_x_bare": TARGET_INCREMENTAL,
            "first_call_1mb_x_bare": TARGET_FIRST,
            "synthetic_s": TARGET_BIG_S,
            "synthetic_x_read_and_parse": TARGET_BIG_X_PARSE,
            "synthetic_peak_rss_mib": TARGET_BIG_RSS_MIB,
            "huge_message_x_first_call": TARGET_HUGE_X_FIRST,
            "huge_message_peak_rss_mib": TARGET_HUGE_RSS_MIB,
        },
        "results": results,
        "hook_outcomes": bench.statuses,
        "pass": overall,
        "elapsed_s": round(elapsed, 1),
    }
    out = os.path.abspath(args.json_out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    say(f"figures written to {os.path.relpath(out)}")
    return 1 if (args.strict and not overall) else 0


def _git_commit() -> str | None:
    try:
        r = subprocess.run(
            ["git", "-C", REPO, "rev-parse", "HEAD"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            timeout=10,
        )
        return r.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def main(argv: list[str] | None = None) -> int:
    if not hasattr(os, "wait4"):
        die("needs os.wait4 (Linux, macOS, BSD)")
    ap = argparse.ArgumentParser(
        description="Benchmark the real `memcurate hook` process (see bench/README.md)."
    )
    ap.add_argument("--quick", action="store_true", help="30 rounds and one 100 MB call (< 40 s)")
    ap.add_argument(
        "--memcurate", metavar="PATH", help="use this memcurate executable instead of bench/.venv"
    )
    ap.add_argument(
        "--venv",
        default=DEFAULT_VENV,
        help="where the bench installs memcurate (default: bench/.venv)",
    )
    ap.add_argument(
        "--reinstall", action="store_true", help="reinstall even if the sources look unchanged"
    )
    ap.add_argument(
        "--transcripts", default=DEFAULT_TRANSCRIPTS, help="the shared transcripts folder"
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="rounds of the interleaved loop (default 100, --quick 30)",
    )
    ap.add_argument(
        "--first-files",
        type=int,
        default=2,
        help="how many of the largest transcripts get a first call",
    )
    ap.add_argument(
        "--big-mb",
        type=float,
        default=100.0,
        help="size of the synthetic transcript in MB (0: skip)",
    )
    ap.add_argument(
        "--big-runs", type=int, default=0, help="first calls on it (default 3, --quick 1)"
    )
    ap.add_argument(
        "--big-timeout", type=float, default=120.0, help="seconds before a call on it is killed"
    )
    ap.add_argument(
        "--huge-mb",
        type=float,
        default=10.0,
        help="size in MB of the one huge message appended to the largest transcript (0: skip)",
    )
    ap.add_argument(
        "--huge-runs", type=int, default=0, help="first calls on it (default 9, --quick 5)"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--workdir", help="parent of the throwaway work folder (default: the system temp dir)"
    )
    ap.add_argument(
        "--keep",
        action="store_true",
        help="keep the work folder (projects, transcripts, data dirs)",
    )
    ap.add_argument(
        "--json-out",
        default=RESULTS,
        help="where to write the figures (default: bench/results/hook.json)",
    )
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args(argv)
    if args.rounds and args.rounds < 1 or args.first_files < 1:
        ap.error("--rounds and --first-files must be at least 1")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
