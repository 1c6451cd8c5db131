#!/usr/bin/env python3
"""The write guard as Claude Code runs it: a new process of the hook command `memcurate install` writes
(hook_bench.hook_command) per PreToolUse call.

    python bench/guard_bench.py [--rounds N] [--reinstall] [--strict]

memcurate runs from bench/.venv, a non-editable install of this checkout
(hook_bench.py's helper), each call forked from the same small spawner
(hook_bench.Runner). Interleaved, in a shuffled order per round, with a bare
`python -c pass` of the same interpreter:

  pass     a Write of a source file of the project (prints nothing)
  deny     a Write into a category folder of the memory root (the deny JSON)
  memory   an Edit of Claude's own line in MEMORY.md, which passes (the file is read, its sections compared)
  staged   review mode (`hook --review-auto-memory`): an Edit of a topic file in the auto-memory folder,
           denied and staged (the record updated at each call)
  broken   a Write of a source file in a project whose config has an error (the guard fails closed where it
           guards, and passes this write: the error is cached, the YAML not parsed at each call)

Prints medians and ratios to the bare interpreter; writes bench/results/guard.json.
Target: pass, deny and broken ≤ 2.5 × bare.
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

TARGET = 2.5  # × bare, pass, deny and broken
RESULTS = os.path.join(hb.BENCH, "results", "guard.json")


def project_key(path: str) -> str:
    """Claude Code's folder name for a project: the engine's one home of the rule."""
    from memcurate.curator.util.paths import project_key as key

    return key(path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    hb.hook_args(ap, RESULTS)
    args = ap.parse_args(argv)

    exe = hb.ensure_install(os.path.abspath(args.venv), args.reinstall)
    interp = hb.interpreter_of(exe)
    work = tempfile.mkdtemp(prefix="guard-bench-")
    try:
        env = hb.isolated_env(work)
        claude = env["CLAUDE_CONFIG_DIR"]
        project = os.path.join(work, "project")
        os.makedirs(os.path.join(project, ".git"))
        os.makedirs(os.path.join(project, "src"))
        env["CLAUDE_PROJECT_DIR"] = project
        root = os.path.join(claude, "projects", project_key(project), "memory")
        os.makedirs(root)
        with open(os.path.join(root, "MEMORY.md"), "w") as f:
            f.write(
                "# Notes\n- build with make\n\n<!-- memcurate:begin section=decision budget=40 -->\n"
                "## Key Decisions\n- [Use JWT](decision/use-jwt.md) \u2014 stateless\n"
                "<!-- memcurate:end section=decision -->\n"
            )
        with open(os.path.join(root, "topic.md"), "w") as f:
            f.write("counter 0\n")
        broken = os.path.join(work, "broken")
        os.makedirs(os.path.join(broken, ".git"))
        os.makedirs(os.path.join(broken, ".claude"))
        with open(os.path.join(broken, ".claude", "memcurate.yaml"), "w") as f:
            f.write("recall:\n  max_chars: 99999\n")
        # what `memcurate install` writes, as Claude Code runs it (hook_bench.hook_command)
        hook = hb.hook_command(exe, env, work)
        if hb._runs_python(hook):  # the bare start: that interpreter's
            interp = [hook[0]]
        runner = hb.Runner(env, work)
        broken_runner = hb.Runner({**env, "CLAUDE_PROJECT_DIR": broken}, work)

        def payload(name: str, tool: str, tool_input: dict, cwd: str = project) -> str:
            path = os.path.join(work, f"{name}.json")
            with open(path, "w") as f:
                json.dump(
                    {
                        "hook_event_name": "PreToolUse",
                        "session_id": "bench",
                        "cwd": cwd,
                        "tool_name": tool,
                        "tool_input": tool_input,
                    },
                    f,
                )
            return path

        cases = {
            "pass": (
                hook,
                payload(
                    "pass",
                    "Write",
                    {
                        "file_path": os.path.join(project, "src", "app.py"),
                        "content": "print('hi')\n",
                    },
                ),
                False,
            ),
            "deny": (
                hook,
                payload(
                    "deny",
                    "Write",
                    {"file_path": os.path.join(root, "decision", "x.md"), "content": "x\n"},
                ),
                True,
            ),
            "memory": (
                hook,
                payload(
                    "memory",
                    "Edit",
                    {
                        "file_path": os.path.join(root, "MEMORY.md"),
                        "old_string": "build with make",
                        "new_string": "build with make all",
                    },
                ),
                False,
            ),
            "staged": (
                [*hook, "--review-auto-memory"],
                payload(
                    "staged",
                    "Edit",
                    {
                        "file_path": os.path.join(root, "topic.md"),
                        "old_string": "counter",
                        "new_string": "counter",
                    },
                ),
                True,
            ),
            "broken": (
                hook,
                payload(
                    "broken",
                    "Write",
                    {"file_path": os.path.join(broken, "app.py"), "content": "x\n"},
                    broken,
                ),
                False,
            ),
        }
        # the staged Edit must change the text each call: alternate between two spellings
        flip = {"n": 0}

        def staged_input() -> str:
            flip["n"] += 1
            old, new = ("counter", "Counter") if flip["n"] % 2 else ("Counter", "counter")
            return payload(
                "staged",
                "Edit",
                {"file_path": os.path.join(root, "topic.md"), "old_string": old, "new_string": new},
            )

        def call(name: str) -> hb.Sample:
            argv, stdin, denies = cases[name]
            if name == "staged":
                stdin = staged_input()
            s = (
                broken_runner.run(argv, stdin, broken)
                if name == "broken"
                else runner.run(argv, stdin, project)
            )
            problems = []
            if s.code != 0 or (s.stderr and not (name == "broken" and b"config error" in s.stderr)):
                problems.append(f"exit {s.code}, stderr {s.stderr[:300]!r}")
            if denies:
                try:
                    decision = json.loads(s.stdout)["hookSpecificOutput"]["permissionDecision"]
                except (ValueError, KeyError, TypeError):
                    decision = None
                if decision != "deny":
                    problems.append(f"expected the deny JSON, got {s.stdout[:300]!r}")
            elif s.stdout:
                problems.append(f"expected no output, got {s.stdout[:300]!r}")
            if problems:
                hb.die(f"{name}: " + "; ".join(problems))
            return s

        def bare() -> hb.Sample:
            return runner.run([*interp, "-c", "pass"], None, project)

        jobs = [("bare", bare)] + [(n, (lambda n=n: call(n))) for n in cases]
        for _ in range(3):  # warm: page cache, the config cache in the data dir, the staged record
            for _, job in jobs:
                job()
        samples = hb.interleave(jobs, args.rounds, random.Random(args.seed))
        runner.close()
        broken_runner.close()
        return hb.report(
            samples,
            {"pass": TARGET, "deny": TARGET, "broken": TARGET},
            exe=" ".join(hook),
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
