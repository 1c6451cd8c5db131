"""Shared helpers of the engine benches (engine_bench.py, crash_bench.py). Standard library only.

- The install: the engine runs from bench/.venv, a non-editable install of this
  checkout with compiled .pyc files, reinstalled when the sources change
  (`ensure_install` is hook_bench.py's, imported, not copied). A bench that
  imports the engine re-executes itself with that venv's interpreter
  (`reexec_in_venv`), so `import curator` finds the installed copy, never the
  checkout.
- Throwaway projects: HOME, CLAUDE_CONFIG_DIR and XDG_CONFIG_HOME pointed at
  folders of the work dir (nothing touches the real home), a `.git` folder, and
  `.claude/memcurate.yaml` with `backend: offline` and an explicit memory root.
- Demo copies: the bundled demo session with its own session id and its topic
  words renamed after a per-copy code word ("JWT" -> "JWT-kavo", "acme" ->
  "kavo", ...), so each copy drafts memories with ids of its own.
- Reporting: medians, the figures JSON under bench/results/.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import re
import statistics
import subprocess
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
VENV = os.path.join(BENCH, ".venv")
RESULTS = os.path.join(BENCH, "results")
SHARED_TRANSCRIPTS = os.path.join(os.path.dirname(REPO), "shared", "transcripts")
DEMO = os.path.join(REPO, "assets", "demo", "session.jsonl")
CHILD_FLAG = "MEMCURATE_BENCH_IN_VENV"

if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

import hook_bench as _hb  # noqa: E402  (the install helper; importing it runs nothing)

clean_env = _hb._clean_env
source_hash = _hb.source_hash
git_commit = _hb._git_commit
main_session_files = _hb.main_session_files


def say(msg: str = "") -> None:
    print(msg, flush=True)


def die(prog: str, msg: str, code: int = 1) -> None:
    print(f"{prog}: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


# -- the install -----------------------------------------------------------------


def venv_python(venv: str = VENV) -> str:
    return os.path.join(venv, "bin", "python")


def venv_memcurate(venv: str = VENV) -> str:
    return os.path.join(venv, "bin", "memcurate")


def ensure_install(venv: str = VENV, force: bool = False) -> str:
    """bench/.venv current with the sources (hook_bench's helper); returns its `memcurate`."""
    return _hb.ensure_install(os.path.abspath(venv), force)


def in_bench_venv() -> bool:
    return os.environ.get(CHILD_FLAG) == "1"


def reexec_in_venv(
    script: str, argv: list[str], *, venv: str = VENV, reinstall: bool = False
) -> None:
    """Make sure the venv is current, then replace this process with `script argv` run by the venv's
    interpreter (-I: no PYTHONPATH, no user site, no script folder on sys.path; -B: write no .pyc into
    the checkout). The installed engine keeps its own .pyc files."""
    ensure_install(venv, reinstall)
    py = venv_python(venv)
    env = clean_env(**{CHILD_FLAG: "1"})
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(py, [py, "-I", "-B", os.path.abspath(script), *argv], env)


def engine_info() -> dict:
    """Where `curator` is imported from (must be the venv, not the checkout) and whether its .pyc exist.
    Only in the venv child."""
    import importlib.util

    from memcurate import curator

    d = os.path.dirname(curator.__file__)
    mods = [
        os.path.join(root, f) for root, _, files in os.walk(d) for f in files if f.endswith(".py")
    ]
    missing = [m for m in mods if not os.path.exists(importlib.util.cache_from_source(m))]
    return {
        "version": curator.__version__,
        "engine": d,
        "python": sys.version.split()[0],
        "editable": os.path.realpath(d).startswith(os.path.realpath(REPO) + os.sep)
        and not os.path.realpath(d).startswith(os.path.realpath(VENV) + os.sep),
        "modules": len(mods),
        "missing_pyc": len(missing),
    }


def check_engine(prog: str) -> dict:
    info = engine_info()
    if info["editable"]:
        die(
            prog,
            f"the engine is imported from the checkout ({info['engine']}), not from bench/.venv",
        )
    if info["missing_pyc"]:
        say(f"warning: {info['missing_pyc']} of {info['modules']} engine modules have no .pyc")
    return info


# -- throwaway projects ---------------------------------------------------------------


def isolate_home(work: str) -> dict:
    """Point HOME, CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME at folders of `work` (this process and its children)."""
    dirs = {
        "HOME": os.path.join(work, "home"),
        "CLAUDE_CONFIG_DIR": os.path.join(work, "home", ".claude"),
        "XDG_CONFIG_HOME": os.path.join(work, "home", ".config"),
    }
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
    os.environ.update(dirs)
    for k in ("MEMCURATE_CHILD", "ANTHROPIC_API_KEY"):
        os.environ.pop(k, None)
    return dirs


# `--auto-approve` saves every draft: offline drafts are evidence cards, held by default, and their
# confidence sits below the default gate since issue 23. The benches that time or kill saves need them
# saved; what the gate lets through is gate_bench.py's question.
SAVE_EVERY_DRAFT = "auto_approve:\n  offline_cards: true\n  min_confidence: 0\n"


def make_project(path: str, memory: str, extra_yaml: str = "") -> None:
    """A project folder (with .git) whose config says: offline backend, memories in `memory`."""
    os.makedirs(os.path.join(path, ".git"), exist_ok=True)
    os.makedirs(os.path.join(path, ".claude"), exist_ok=True)
    with open(os.path.join(path, ".claude", "memcurate.yaml"), "w") as f:
        f.write(
            f"backend: offline\nmemory:\n  root: {json.dumps(os.path.abspath(memory))}\n{extra_yaml}"
        )


# -- demo copies ------------------------------------------------------------------------

_CONS, _VOWELS = "bdfgklmnprstvz", "aeiou"
_SYL = [c + v for c in _CONS for v in _VOWELS]  # 70 syllables


def code_word(i: int) -> str:
    """A distinct pronounceable lowercase word per i ("kavo", "miru", ...): two syllables for the
    first 4900, then a third (i -> i*37+11 mod 4900 is a bijection: 37 is co-prime with 4900)."""
    n = (i * 37 + 11) % 4900
    out = _SYL[n % 70] + _SYL[n // 70]
    return out if i < 4900 else out + _SYL[(i // 4900) % 70]


# The demo's topic words, renamed per copy: each category's title holds one of them, so each
# copy drafts memories with ids of its own (decision: JWT, constraint: summarizer, runbook:
# db.internal, tech_debt: refresh tokens, preference: dependencies, session_summary: acme-api).
# Each rename brings a few words of its own ("{g}": the code word and words made from it), so
# two copies' drafts share too few words to be near duplicates (the engine's `near_duplicate`,
# 0.6 Jaccard): every new topic is a CREATE, a light edit of a topic an UPDATE, a repeat a NOOP.
_TOPICS = [
    (re.compile(r"\bJWT\b"), "JWT-{c} {g}"),
    (re.compile(r"\b([Ss])ummarizer\b"), r"{c}-\1ummarizer {g}"),
    (re.compile(r"\bdb\.internal\b"), "db-{c}.internal {g}"),
    (re.compile(r"\b(refresh tokens?)\b"), r"{c} {g} \1"),
    (re.compile(r"\b(new dependencies|dependencies)\b"), r"{c} {g} \1"),
    (re.compile(r"\bacme\b"), "{c}"),
    (re.compile(r"\b(login|token|routes)\b"), r"\1 {c}"),
    (
        re.compile(r"\bCI runners\b"),
        "{c} {g} CI runners",
    ),  # the demo's constraint (keywords see it)
    (
        re.compile(r"\b(connection to server)\b"),
        r"{c} {c}.db {g} \1",
    ),  # the runbook's failing command (title, symptom)
    (re.compile(r"\b(the test setup)\b"), r"\1 of {c}"),  # a runbook's title
]
_GROUP = ("ro", "ni", "sa", "ke", "la", "ve")


def _group(code: str) -> str:
    return " ".join(code + s for s in _GROUP)


# A light edit: same topic, a few different facts, so the drafts differ a little from the original's.
_LIGHT = [
    (re.compile(r"\b15 minutes\b"), "20 minutes"),
    (re.compile(r"\bHS256\b"), "HS384"),
    (re.compile(r"\bsix commits\b"), "seven commits"),
]
_SESSION = re.compile(r'"sessionId":"([0-9a-f-]{36})"')
_TIMESTAMP = re.compile(r'"timestamp":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)')


def demo_session_id(raw: str) -> str:
    m = _SESSION.search(raw)
    if not m:
        raise ValueError("no sessionId in the demo transcript")
    return m.group(1)


def vary_demo(
    raw: str, session: str, code: str | None, *, light: bool = False, hours: int = 0
) -> str:
    """The demo transcript with session id `session`, its topic words renamed after `code` (None: kept),
    with `light` a few facts changed, and its time stamps `hours` later. Replacements are letters, digits,
    '-', '.' and spaces only, so every JSON line stays valid.

    Shift each copy's time (copy n: `hours=n`): a triage id starts with the time of its first record,
    so the copies are then processed in their order, the same from one bench run to the next (with
    equal stamps the order would follow a checksum of each transcript's path)."""
    out = raw.replace(demo_session_id(raw), session)
    if hours:

        def later(m: re.Match) -> str:
            t = dt.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S") + dt.timedelta(hours=hours)
            return f'"timestamp":"{t.strftime("%Y-%m-%dT%H:%M:%S")}'

        out = _TIMESTAMP.sub(later, out)
    if code:
        for rx, rep in _TOPICS:
            out = rx.sub(rep.replace("{g}", _group(code)).replace("{c}", code), out)
    if light:
        for rx, rep in _LIGHT:
            out = rx.sub(rep, out)
    return out


def session_id(n: int, salt: int = 0) -> str:
    return f"5e55a1d0-{salt:04x}-4c1a-9a5e-{n:012d}"


# -- figures ------------------------------------------------------------------------------


def median(xs) -> float:
    xs = list(xs)
    return statistics.median(xs) if xs else float("nan")


def spread(xs) -> tuple[float, float]:
    xs = sorted(xs)
    if len(xs) < 2:
        return (xs[0], xs[0]) if xs else (float("nan"), float("nan"))
    return xs[0], xs[-1]


def machine() -> dict:
    return {
        "system": platform.system(),
        "release": platform.release(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
    }


def now_utc() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def common_args(ap, results: str, strict: str = "exit 1 when a target is missed") -> None:
    """The options every engine bench takes: --seed --workdir --keep --json-out --reinstall --strict."""
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--workdir", help="parent of the throwaway work folder (default: the system temp dir)"
    )
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument(
        "--json-out", default=results, help=f"default: {os.path.relpath(results, REPO)}"
    )
    ap.add_argument(
        "--reinstall", action="store_true", help="reinstall bench/.venv even if current"
    )
    ap.add_argument("--strict", action="store_true", help=strict)


def write_results(path: str, doc: dict) -> str:
    out = os.path.abspath(path)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    return os.path.relpath(out)


def run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
