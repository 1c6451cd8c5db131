#!/usr/bin/env python3
"""The write guard as Claude Code runs it: a new `memcurate hook` process per PreToolUse call.

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

Prints medians and ratios to the bare interpreter; writes bench/results/guard.json.
Target: pass and deny ≤ 2.5 × bare.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile

import hook_bench as hb

TARGET = 2.5  # × bare, pass and deny
RESULTS = os.path.join(hb.BENCH, "results", "guard.json")


def project_key(path: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in os.path.abspath(path))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--venv", default=hb.DEFAULT_VENV)
    ap.add_argument("--reinstall", action="store_true")
    ap.add_argument("--json-out", default=RESULTS)
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args(argv)

    exe = hb.ensure_install(os.path.abspath(args.venv), args.reinstall)
    interp = hb.interpreter_of(exe)
    work = tempfile.mkdtemp(prefix="guard-bench-")
    try:
        home = os.path.join(work, "home")
        claude = os.path.join(home, ".claude")
        env = hb._clean_env(HOME=home, CLAUDE_CONFIG_DIR=claude, XDG_CONFIG_HOME=os.path.join(home, ".config"))
        project = os.path.join(work, "project")
        os.makedirs(os.path.join(project, ".git"))
        os.makedirs(os.path.join(project, "src"))
        env["CLAUDE_PROJECT_DIR"] = project
        root = os.path.join(claude, "projects", project_key(project), "memory")
        os.makedirs(root)
        with open(os.path.join(root, "MEMORY.md"), "w") as f:
            f.write("# Notes\n- build with make\n\n<!-- memcurate:begin section=decision budget=40 -->\n"
                    "## Key Decisions\n- [Use JWT](decision/use-jwt.md) \u2014 stateless\n"
                    "<!-- memcurate:end section=decision -->\n")
        with open(os.path.join(root, "topic.md"), "w") as f:
            f.write("counter 0\n")
        runner = hb.Runner(env, work)

        def payload(name: str, tool: str, tool_input: dict) -> str:
            path = os.path.join(work, f"{name}.json")
            with open(path, "w") as f:
                json.dump({"hook_event_name": "PreToolUse", "session_id": "bench", "cwd": project,
                           "tool_name": tool, "tool_input": tool_input}, f)
            return path

        cases = {
            "pass": ([exe, "hook"], payload("pass", "Write", {"file_path": os.path.join(project, "src", "app.py"),
                                                              "content": "print('hi')\n"}), False),
            "deny": ([exe, "hook"], payload("deny", "Write", {"file_path": os.path.join(root, "decision", "x.md"),
                                                              "content": "x\n"}), True),
            "memory": ([exe, "hook"], payload("memory", "Edit", {"file_path": os.path.join(root, "MEMORY.md"),
                                                                 "old_string": "build with make",
                                                                 "new_string": "build with make all"}), False),
            "staged": ([exe, "hook", "--review-auto-memory"],
                       payload("staged", "Edit", {"file_path": os.path.join(root, "topic.md"), "old_string": "counter",
                                                  "new_string": "counter"}), True),
        }
        # the staged Edit must change the text each call: alternate between two spellings
        flip = {"n": 0}

        def staged_input() -> str:
            flip["n"] += 1
            old, new = ("counter", "Counter") if flip["n"] % 2 else ("Counter", "counter")
            return payload("staged", "Edit", {"file_path": os.path.join(root, "topic.md"), "old_string": old,
                                              "new_string": new})

        def call(name: str) -> hb.Sample:
            argv, stdin, denies = cases[name]
            if name == "staged":
                stdin = staged_input()
            s = runner.run(argv, stdin, project)
            problems = []
            if s.code != 0 or s.stderr:
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
        bare_med = statistics.median(s.wall for s in samples["bare"])
        rows = {n: hb.summarize(s, bare_med) for n, s in samples.items()}
        hb.say(f"memcurate: {exe}   rounds: {args.rounds}   interleaved with `{' '.join(interp)} -c pass`")
        hb.say(f"{'case':<8} {'median ms':>10} {'p10':>8} {'p90':>8} {'× bare':>7} {'target':>7}")
        missed = []
        for name, r in rows.items():
            target = TARGET if name in ("pass", "deny") else None
            ok = target is None or r["ratio_to_bare"] <= target
            if not ok:
                missed.append(name)
            hb.say(f"{name:<8} {r['median_ms']:>10.2f} {r['p10_ms']:>8.2f} {r['p90_ms']:>8.2f} "
                   f"{r['ratio_to_bare']:>7.2f} {('≤ %.1f' % target) if target else '':>7}"
                   + ("" if ok else "  MISSED"))
        doc = {"rounds": args.rounds, "target_ratio": TARGET, "executable": exe,
               "cases": {n: {k: v for k, v in r.items() if k != "samples_ms"} for n, r in rows.items()},
               "missed": missed, "commit": hb._git_commit()}
        out = os.path.abspath(args.json_out)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        hb.say(f"wrote {os.path.relpath(out)}")
        return 1 if missed and args.strict else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, hb.BENCH)
    sys.exit(main())
