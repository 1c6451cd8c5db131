#!/usr/bin/env python3
"""Every bench in its quick mode, one after the other: a bench that crashes fails the run, so none rots.

    python bench/quick.py              # all of them: about 6 minutes on 2 shared cores (+ bench/.venv's install)
    python bench/quick.py engine crash # only these (a script's name without .py, or without _bench.py)
    python bench/quick.py --list       # the commands, and nothing run

Each bench runs with the interpreter that runs this script, from the checkout's root, with the
checkout's dev/ (its `memcurate` package) first on PYTHONPATH (the benches that need the non-editable bench/.venv install it and
re-execute themselves there). Its output goes to bench/results/quick/<name>.log; one line per bench
says its exit status, wall time, and how many PASS and FAIL lines it printed, with the FAIL lines.

The run fails (exit 1) when a bench exits non-zero or times out: a crash, or one of the correctness
checks a bench makes itself (crash_bench's violations with --strict, engine_bench's unsaved candidates,
duplicates_bench saving nothing). A missed speed target is printed, never fatal: the figures of a CI
machine shared by other jobs are reported, not enforced. It fails too when a bench script in bench/ is
not in BENCHES below: a bench nothing runs is a bench that rots.
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LOGS = os.path.join(HERE, "results", "quick")
TIMEOUT = 900.0  # seconds one bench may take before it counts as hung

# (script, arguments): each bench's quick mode, cheapest first where it matters little.
BENCHES: list[tuple[str, list[str]]] = [
    ("triage_accuracy", []),
    ("check_evidence_labels", []),
    ("digest_bench", ["--quick"]),
    ("calibration_bench", ["--quick"]),
    ("evidence_bench", ["--quick"]),
    ("gate_bench", []),
    ("index_bench", ["--memories", "1000", "--lookups", "50", "--edits", "5"]),
    ("library_bench", ["--memories", "1000", "--runs", "2"]),
    ("tidy_bench", ["--memories", "1000", "--rounds", "1"]),
    ("check_bench", ["--quick"]),
    ("duplicates_bench", ["--quick"]),
    ("hook_bench", ["--quick", "--rounds", "10"]),
    ("guard_bench", ["--rounds", "10"]),
    ("failure_hook_bench", ["--rounds", "10"]),
    ("recall_bench", ["--quick", "--rounds", "5"]),
    ("engine_bench", ["--quick"]),
    ("draft_bench", ["--quick"]),
    ("crash_bench", ["--quick", "--strict"]),
    ("tui_bench", ["--quick"]),
    ("library_tui_bench", ["--memories", "1000", "--opens", "1", "--presses", "10"]),
]
NOT_BENCHES = {"benchlib", "quick", "triage_labels"}  # helpers and a label tool: nothing to measure


def unlisted() -> list[str]:
    """Scripts of bench/ that are neither in BENCHES nor helpers."""
    names = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(HERE, "*.py"))}
    return sorted(names - NOT_BENCHES - {name for name, _ in BENCHES})


def run_one(name: str, args: list[str]) -> dict:
    os.makedirs(LOGS, exist_ok=True)
    log = os.path.join(LOGS, f"{name}.log")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            p for p in (os.path.join(REPO, "dev"), os.environ.get("PYTHONPATH")) if p
        ),
    }
    cmd = [sys.executable, os.path.join("bench", f"{name}.py"), *args]
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as out:
        try:
            code = subprocess.run(
                cmd,
                cwd=REPO,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                timeout=TIMEOUT,
            ).returncode
        except subprocess.TimeoutExpired:
            code = None
    wall = time.perf_counter() - t0
    with open(log, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    return {
        "name": name,
        "cmd": " ".join(cmd[1:]),
        "code": code,
        "wall": wall,
        "log": log,
        "pass": sum("PASS" in x for x in lines),
        "fails": [x.strip() for x in lines if "FAIL" in x],
        "tail": lines[-3:],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "only", nargs="*", help="run only these benches (script names without .py or _bench.py)"
    )
    ap.add_argument("--list", action="store_true", help="print the commands and run nothing")
    args = ap.parse_args(argv)
    known = {name for name, _ in BENCHES}
    args.only = [n if n in known else f"{n}_bench" for n in args.only]  # "engine" for engine_bench
    if set(args.only) - known:
        ap.error(
            f"unknown bench {sorted(set(args.only) - known)}; known: {', '.join(sorted(known))}"
        )
    plan = [(n, a) for n, a in BENCHES if not args.only or n in args.only]
    if args.list:
        for name, a in plan:
            print(f"python bench/{name}.py {' '.join(a)}".rstrip())
        return 0
    missing = unlisted()
    t0 = time.perf_counter()
    results = []
    for name, a in plan:
        r = run_one(name, a)
        results.append(r)
        status = "timeout" if r["code"] is None else f"exit {r['code']}"
        print(
            f"{name:<22} {status:<8} {r['wall']:6.1f} s  PASS lines {r['pass']:<3} FAIL lines {len(r['fails'])}",
            flush=True,
        )
        for line in r["fails"][:4]:
            print(f"    {line[:150]}")
        if r["code"] != 0:
            print(f"    the bench failed; its last lines ({r['log']}):")
            for line in r["tail"]:
                print(f"      {line[:200]}")
    broken = [r["name"] for r in results if r["code"] != 0]
    print(
        f"{len(results)} benches in {time.perf_counter() - t0:.0f} s; "
        f"{len(broken)} failed{': ' + ', '.join(broken) if broken else ''}; "
        f"{sum(bool(r['fails']) for r in results)} printed a FAIL (reported, not fatal)"
    )
    if missing:
        print(
            f"bench scripts not in bench/quick.py's BENCHES (nothing runs them): {', '.join(missing)}"
        )
    return 1 if broken or missing else 0


if __name__ == "__main__":
    sys.exit(main())
