#!/usr/bin/env python3
"""Failure capture as Claude Code runs it: a new process of the hook command `memcurate install` writes
(hook_bench.hook_command) per PostToolUse / PostToolUseFailure of a Bash call.

    python bench/failure_hook_bench.py [--rounds N] [--reinstall] [--strict]

memcurate runs from bench/.venv, a non-editable install of this checkout
(hook_bench.py's helper), each call forked from the same small spawner
(hook_bench.Runner). Interleaved, in a shuffled order per round, with a bare
`python -c pass` of the same interpreter:

  plain      PostToolUse of `ls -la` (the fast path every Bash call takes)
  passed     PostToolUse of `uv run pytest -q` that passed
  first      PostToolUseFailure of a pytest failure first seen in its session (recorded)
  retry      the same failure again in the same session (not counted twice)
  threshold  a failure whose third session reaches rules.threshold (its candidate staged);
             the two sessions before it are recorded untimed

Prints medians and ratios to the bare interpreter, PASS or FAIL against the targets
(fast path ≤ 2.5 × bare, recording ≤ 4 × bare); writes bench/results/failure_hook.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile

import hook_bench as hb

TARGETS = {"plain": 2.5, "passed": 2.5, "first": 4.0, "retry": 4.0, "threshold": 4.0}
RESULTS = os.path.join(hb.BENCH, "results", "failure_hook.json")


def pytest_failure(test: str, n: int) -> str:
    tmp = f"/tmp/pytest-of-dev/pytest-{n}/{test}0"
    return (
        f"Exit code 1\n============================= test session starts ==============================\n"
        f"collected 12 items\n\ntests/test_store.py F...........                [100%]\n\n"
        f"=================================== FAILURES ===================================\n"
        f"__________________________________ {test} ___________________________________\n\n"
        f"    def {test}(tmp_path):\n>       Store(tmp_path / 'cache').save({{'a': 1}})\n\n"
        f"tests/test_store.py:{10 + n % 7}: \n"
        f"E       FileNotFoundError: [Errno 2] No such file or directory: '{tmp}/cache/data.json'\n\n"
        f"app/store.py:22: FileNotFoundError\n"
        f"=========================== short test summary info ============================\n"
        f"FAILED tests/test_store.py::{test} - FileNotFoundError: [Errno 2] No such file or directory: "
        f"'{tmp}/cache/data.json'\n========================= 1 failed, 11 passed in 0.{n % 90 + 10}s "
        f"=========================\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    hb.hook_args(ap, RESULTS)
    args = ap.parse_args(argv)

    exe = hb.ensure_install(os.path.abspath(args.venv), args.reinstall)
    interp = hb.interpreter_of(exe)
    work = tempfile.mkdtemp(prefix="failure-hook-bench-")
    try:
        env = hb.isolated_env(work)
        project = os.path.join(work, "project")
        os.makedirs(os.path.join(project, ".git"))
        env["CLAUDE_PROJECT_DIR"] = project
        data = os.path.join(project, ".memcurate")
        # what `memcurate install` writes, as Claude Code runs it (hook_bench.hook_command)
        hook_argv = hb.hook_command(exe, env, work)
        if hb._runs_python(hook_argv):  # the bare start: that interpreter's
            interp = [hook_argv[0]]
        runner = hb.Runner(env, work)
        count = {"n": 0}

        def payload(event: str, session: str, command: str, **extra) -> str:
            count["n"] += 1
            path = os.path.join(work, f"payload-{count['n'] % 4}.json")
            with open(path, "w") as f:
                json.dump(
                    {
                        "hook_event_name": event,
                        "session_id": session,
                        "cwd": project,
                        "tool_name": "Bash",
                        "transcript_path": os.path.join(
                            env["CLAUDE_CONFIG_DIR"], "projects", "p", f"{session}.jsonl"
                        ),
                        "tool_input": {"command": command},
                        "tool_use_id": f"toolu_{count['n']}",
                        **extra,
                    },
                    f,
                )
            return path

        def failure(session: str, test: str) -> str:
            return payload(
                "PostToolUseFailure",
                session,
                "uv run pytest -x",
                error=pytest_failure(test, count["n"]),
                is_interrupt=False,
            )

        def hook(stdin: str, name: str) -> hb.Sample:
            s = runner.run(hook_argv, stdin, project)
            if s.code != 0 or s.stderr or s.stdout:
                hb.die(
                    f"{name}: exit {s.code}, stdout {s.stdout[:200]!r}, stderr {s.stderr[:300]!r}"
                )
            return s

        def threshold() -> hb.Sample:
            # a new signature each call
            test = "test_" + "".join(chr(97 + int(d)) for d in str(count["n"]))
            for session in ("earlier-a", "earlier-b"):
                hook(failure(session, test), "threshold (before)")
            return hook(failure("third", test), "threshold")

        cases = {
            "plain": lambda: hook(
                payload(
                    "PostToolUse",
                    "s",
                    "ls -la",
                    tool_response={
                        "stdout": "total 8\ndrwxr-xr-x 2 dev dev 4096 app\n-rw-r--r-- 1 dev dev 120 README.md\n",
                        "stderr": "",
                        "interrupted": False,
                    },
                ),
                "plain",
            ),
            "passed": lambda: hook(
                payload(
                    "PostToolUse",
                    "s",
                    "uv run pytest -q",
                    tool_response={
                        "stdout": "............ [100%]\n12 passed in 0.31s\n",
                        "stderr": "",
                        "interrupted": False,
                    },
                ),
                "passed",
            ),
            "first": lambda: hook(failure(f"session-{count['n']}", "test_save"), "first"),
            "retry": lambda: hook(failure("retrying", "test_save"), "retry"),
            "threshold": threshold,
        }

        def bare() -> hb.Sample:
            return runner.run([*interp, "-c", "pass"], None, project)

        jobs = [("bare", bare)] + list(cases.items())
        for _ in range(3):  # warm: page cache, the config cache in the data dir
            for _, job in jobs:
                job()
        samples = hb.interleave(jobs, args.rounds, random.Random(args.seed))
        runner.close()
        staged = len(os.listdir(os.path.join(data, "rules")))
        expected = args.rounds + 3 + 1  # one per threshold call, and `first`'s signature once
        if staged != expected:
            hb.die(f"expected {expected} candidate records, found {staged}")
        hb.say(f"candidates staged: {staged} (one per threshold call, as expected)")
        return hb.report(
            samples,
            TARGETS,
            exe=" ".join(hook_argv),
            interp=interp,
            rounds=args.rounds,
            json_out=args.json_out,
            strict=args.strict,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, hb.BENCH)
    sys.exit(main())
