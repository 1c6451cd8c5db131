#!/usr/bin/env python3
"""`memcurate check` over 10,000 memories: its wall time and peak memory, as a user runs it.

    python bench/check_bench.py             # 10,000 memories, three runs
    python bench/check_bench.py --quick     # for CI: 1,000 memories, one run

A throwaway project (HOME and Claude's folders pointed at a temporary folder, offline backend) gets N
memory files of five categories (tidy_bench's: each on a topic of its own, with planted near-duplicates
and contradictions), listed in MEMORY.md past each section's budget, the rest in the archives. Then
`memcurate check --quiet` runs in a child process, as a person (or the SessionEnd hook) starts it: the
first run builds the index and keeps each memory's words (memory/index/compared.py); the runs after it
find both, as a person's check finds them after the SessionEnd hook's. One more run after the words kept
are dropped (a new release, or every memory changed) parses every memory again: reported, no target.
Reported: each run's wall time and the child's peak RSS (getrusage's ru_maxrss). Target: under 3 s at
10,000 memories (index built, words kept).
Figures: bench/results/check.json. Runs in the interpreter that runs it (the engine as installed there).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import isolate_home, machine, make_project, median, now_utc, say, write_results  # noqa: E402
from tidy_bench import fill  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "check.json")
TARGET_S = 3.0  # at 10,000 memories, the index built


def list_in_memory_md(project: str, memory: str) -> None:
    """Every memory's line in MEMORY.md: each section keeps its budget's newest, the rest go to the archive."""
    from memcurate.curator.engine import Engine
    from memcurate.curator.memory import memfile, memory_md

    engine = Engine(project)
    try:
        lines = []
        for cat in sorted(os.listdir(memory)):
            folder = os.path.join(memory, cat)
            if cat.startswith(".") or not os.path.isdir(folder):
                continue
            for name in sorted(os.listdir(folder)):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    doc = memfile.parse(f.read())
                lines.append(
                    (
                        "upsert",
                        memory_md.IndexLine(doc.id, doc.category, doc.title, doc.description),
                    )
                )
        memory_md.apply(memory, engine.cfg, lines)
    finally:
        engine.close()


def forget_kept_words(project: str) -> None:
    from memcurate.curator.engine import Engine

    engine = Engine(project)
    try:
        engine.index.forget_kept_words()
    finally:
        engine.close()


def run_check(project: str) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS in MiB, exit status, CPU seconds) of one `memcurate check --quiet` in a
    child process. The CPU counts the check's own forked children (it reaps them); the peak RSS is the
    largest one process's (a forked child shares most of its pages with the check)."""
    code = (
        "import sys; from memcurate.curator.cli import main; sys.exit(main(['check', '--quiet']))"
    )
    # a user's install has its .pyc files: without them every run compiles the engine from source
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    t0 = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", code], cwd=project, stdin=subprocess.DEVNULL, env=env
    )
    _pid, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024, child.returncode, usage.ru_utime + usage.ru_stime


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="for CI: 1,000 memories, one run after the first"
    )
    ap.add_argument(
        "--memories", type=int, default=0, help="memories stored (default 10,000; quick: 1,000)"
    )
    ap.add_argument(
        "--runs", type=int, default=0, help="runs after the first, the index built (default 3)"
    )
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--json-out", default=RESULTS)
    args = ap.parse_args(argv)
    n = args.memories or (1000 if args.quick else 10_000)
    runs = args.runs or (1 if args.quick else 3)

    work = tempfile.mkdtemp(prefix="check-bench-")
    try:
        isolate_home(work)
        project, memory = os.path.join(work, "project"), os.path.join(work, "memory")
        make_project(project, memory)
        t0 = time.perf_counter()
        fill(memory, n, max(1, n // 200), max(1, n // 500))
        list_in_memory_md(project, memory)
        say(
            f"setup: {n} memories written and listed in MEMORY.md in {time.perf_counter() - t0:.1f} s"
        )
        first = run_check(project)
        say(
            f"  first run (index built, words kept): {first[0]:.2f} s, CPU {first[3]:.2f} s, peak RSS {first[1]:.0f} MiB, "
            f"exit {first[2]}"
        )
        after = []
        for r in range(runs):
            after.append(run_check(project))
            say(
                f"  run {r + 2} (index and words kept before): {after[-1][0]:.2f} s, CPU {after[-1][3]:.2f} s, "
                f"peak RSS {after[-1][1]:.0f} MiB, "
                f"exit {after[-1][2]}"
            )
        # every memory's words found again: the index built, nothing kept
        forget_kept_words(project)
        cold = run_check(project)
        say(
            f"  a run with no words kept: {cold[0]:.2f} s, CPU {cold[3]:.2f} s, "
            f"peak RSS {cold[1]:.0f} MiB, exit {cold[2]}"
        )
    finally:
        if args.keep:
            say(f"kept the work folder: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    wall = median([w for w, *_ in after])
    cpu = median([c for *_, c in after])
    rss = max(r for _, r, *_ in [first, *after])
    failed = [c for _, _, c, _ in [first, *after, cold] if c != 0]
    # the target is the 10,000's: a smaller store's time is mostly the start-up
    targeted = n >= 10_000
    ok = wall < TARGET_S and not failed
    verdict = (
        f"target < {TARGET_S:g} s: {'PASS' if ok else 'FAIL'}"
        if targeted
        else f"(target at 10,000: < {TARGET_S:g} s)"
    )
    say(
        f"memcurate check, {n} memories: median {wall:.2f} s (first run {first[0]:.2f} s, "
        f"no words kept {cold[0]:.2f} s), CPU {cpu:.2f} s, "
        f"peak RSS {rss:.0f} MiB, load {os.getloadavg()[0]:.1f}; " + verdict
    )
    doc = {
        "at": now_utc(),
        "machine": machine(),
        "memories": n,
        "runs": runs,
        "first_s": round(first[0], 3),
        "median_s": round(wall, 3),
        "walls_s": [round(w, 3) for w, *_ in after],
        "median_cpu_s": round(cpu, 3),
        "no_words_kept_s": round(cold[0], 3),
        "load_1min": round(os.getloadavg()[0], 2),
        "peak_rss_mib": round(rss, 1),
        "target_s": TARGET_S if targeted else None,
        "pass": ok if targeted else None,
    }
    say(f"figures: {write_results(args.json_out, doc)}")
    if failed:
        say(f"self-check: FAIL, memcurate check exited {failed}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
