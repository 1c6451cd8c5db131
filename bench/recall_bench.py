#!/usr/bin/env python3
"""The recall hook (UserPromptSubmit) with 5,000 saved memories, against a bare interpreter start.

    python bench/recall_bench.py            # 40 rounds (about a minute, plus the install the first time)
    python bench/recall_bench.py --quick    # 15 rounds

Builds a throwaway project whose memory root holds N synthetic memories (default 5,000; word-varied
with index_bench's generator: a Zipf-spread vocabulary and a long tail of project names, across the
six categories) and a MEMORY.md (Claude's own lines, then each category's newest entries within its
budget). Then runs the hook command `memcurate install` writes (hook_bench.hook_command) from the
non-editable bench install (bench/.venv, as hook_bench.py installs it), as Claude Code runs it: a new process, the hook JSON on
stdin, its own peak RSS read with wait4 (hook_bench's spawner). One interleaved loop, order shuffled
per round, so machine drift hits every scenario alike:

  bare        `python -c pass` with the hook's interpreter
  recall      a prompt about one saved memory (its title's words), in a new session: it is given
  nothing     a prompt no memory is about: nothing given
  trivial     "yes": skipped before any search
  after save  the first call after memcurate saved a memory: the file renamed into its category folder
              and indexed, as a save does (curator/review/actions.py); the folder stamp changed, so
              the hook compares that folder with the index's signatures, finds nothing it has not
              seen, and answers from the index. The prompt is about the new memory, which must be given.
  after hand  the first call after a memory file appeared that the index has not seen (written by
              hand, or by another tool): the hook reads that file itself (folders.open_for_reading),
              without loading the indexer. The index is then brought up to date, as the engine's next
              look does.
              After each of the two, the folder's mtime is set 3 s back and one untimed call records
              its stamp (a save is rarely followed by a prompt within the 2 s a fresh stamp is not
              trusted; those calls compare the folder each time).
The first call ever (the index built from scratch) is timed once, before the loop. Every call's
output is checked: JSON with the expected memory, or nothing. Target: every scenario <= 4 x bare.
Prints a table and writes bench/results/recall.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

TARGET = 4.0
RESULTS = os.path.join(bl.RESULTS, "recall.json")
BUDGETS = {
    "decision": 40,
    "constraint": 30,
    "runbook": 20,
    "tech_debt": 15,
    "preference": 15,
    "session_summary": 10,
}
QUOTED = re.compile(r"\n<<<END MEMORIES-[0-9a-f]{16}>>>\Z")  # what is given ends with its END line
NOTHING = "write a haiku about autumn leaves falling into the quiet northern sea"


def build_root(root: str, n: int, seed: int) -> list:
    """N memory files across the categories (index_bench's generator) and a MEMORY.md; returns the docs."""
    from index_bench import SHARE, Gen

    from memcurate.curator.memory import memfile
    from memcurate.curator.memory.memory_md import IndexLine, render_section

    gen = Gen(seed)
    cats = list(SHARE)
    docs = []
    for i in range(n):
        c = gen.r.choices(cats, weights=[SHARE[x] for x in cats])[0]
        d = gen.doc(c, f"{c.replace('_', '-')}-{i:05d}")
        d.updated = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T08:00:00Z"
        folder = os.path.join(root, c)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{d.id}.md"), "w", encoding="utf-8") as f:
            f.write(memfile.render(d))
        docs.append(d)
    parts = ["# Project notes\n", "- Claude's own line: run the tests with `make test`.\n", "\n"]
    for c in cats:
        newest = [d for d in reversed(docs) if d.category == c][: BUDGETS[c]]
        parts.append(
            render_section(c, BUDGETS[c], [IndexLine.from_doc(d).normalized() for d in newest])
        )
        parts.append("\n")
    with open(os.path.join(root, "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write("".join(parts))
    return docs


def distinctive(docs: list):
    """A memory from the middle of the list whose title holds two of the generator's long-tail names (a
    service, a table): a prompt made of its title is about it. Titles of common words only are not
    specific enough to recall anything among 5,000 memories, by design (see the README's Recall)."""
    from index_bench import VERBS, WORDS

    common = set(WORDS) | set(VERBS)
    for d in docs[len(docs) // 2 :] + docs:
        if sum(w not in common for w in d.title.lower().split()) >= 2:
            return d
    bl.die("recall_bench", "no memory with a distinctive title")


def save_memory(root: str, doc) -> str:
    """Write `doc` the way memcurate saves: a temporary file renamed into its category folder."""
    from memcurate.curator.memory import memfile

    path = os.path.join(root, doc.category, f"{doc.id}.md")
    tmp = os.path.join(root, doc.category, f".{doc.id}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(memfile.render(doc))
    os.replace(tmp, path)
    return path


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=5000)
    ap.add_argument(
        "--rounds", type=int, default=0, help="rounds of the loop (default 40, --quick 15)"
    )
    ap.add_argument("--quick", action="store_true")
    bl.common_args(ap, RESULTS, "exit 1 when a scenario is over 4 x bare")
    args = ap.parse_args(argv)
    if not bl.in_bench_venv():
        bl.reexec_in_venv(__file__, argv, reinstall=args.reinstall)
    info = bl.check_engine("recall_bench")
    from hook_bench import (
        MIB,
        Runner,
        _runs_python,
        hook_command,
        interleave,
        interpreter_of,
        summarize,
    )

    rounds = args.rounds or (15 if args.quick else 40)
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="memcurate-recall-bench-", dir=args.workdir)
    try:
        dirs = bl.isolate_home(work)
        project, root = os.path.join(work, "project"), os.path.join(work, "memory")
        bl.make_project(project, root)
        t0 = time.perf_counter()
        docs = build_root(root, args.memories, args.seed)
        bl.say(
            f"{len(docs)} memories and a MEMORY.md written in {time.perf_counter() - t0:.1f} s ({root})"
        )
        exe = bl.venv_memcurate()
        env = bl.clean_env(**dirs)
        runner = Runner(env, work)
        # what `memcurate install` writes, as Claude Code runs it; the bare start: its interpreter's
        hook_argv = hook_command(exe, env, work)
        interp = [hook_argv[0]] if _runs_python(hook_argv) else interpreter_of(exe)
        bare_argv = [*interp, "-c", "pass"]
        payloads = os.path.join(work, "payloads")
        os.makedirs(payloads)
        calls = 0

        def hook(prompt: str, expect: str | None, label: str):
            """One hook call with `prompt` in a new session; `expect`: a path the context must name, or
            None for no output."""
            nonlocal calls
            calls += 1
            path = os.path.join(payloads, f"{calls}.json")
            with open(path, "w") as f:
                json.dump(
                    {
                        "session_id": f"bench-{calls}",
                        "transcript_path": os.path.join(project, "t.jsonl"),
                        "cwd": project,
                        "hook_event_name": "UserPromptSubmit",
                        "prompt": prompt,
                    },
                    f,
                )
            s = runner.run(hook_argv, path, project)
            if s.code != 0 or s.stderr:
                bl.die(
                    "recall_bench",
                    f"{label}: exit {s.code}: {s.stderr.decode(errors='replace')[:300]}",
                )
            if expect is None:
                if s.stdout:
                    bl.die("recall_bench", f"{label}: expected no output, got {s.stdout[:300]!r}")
            else:
                ctx = json.loads(s.stdout)["hookSpecificOutput"]["additionalContext"]
                if expect not in ctx:
                    bl.die("recall_bench", f"{label}: {expect} not recalled")
                if not QUOTED.search(ctx):
                    bl.die(
                        "recall_bench",
                        f"{label}: the memories are not quoted (no END line): {ctx[-200:]!r}",
                    )
            os.unlink(path)
            return s

        target = distinctive(docs)
        target_path = os.path.join(root, target.category, f"{target.id}.md")
        cold = hook(target.title, target_path, "first call (index built)")
        bl.say(f"first call ever (index of {len(docs)} memories built): {cold.wall:.2f} s")
        for _ in range(2):  # warm: the stamps recorded, the page cache holding the database
            hook(target.title, target_path, "warm-up")

        added = 0
        data = os.path.join(project, ".memcurate")

        def index_runbooks():
            """What the engine does after a save, or on its next look: the category indexed."""
            from memcurate.curator.memory.index import MemoryIndex
            from memcurate.curator.memory.store import MemoryStore

            with MemoryIndex(
                os.path.join(data, "index.sqlite"), MemoryStore(root), watch=False
            ) as index:
                index.refresh("runbook")

        def add(indexed: bool):
            nonlocal added
            added += 1
            from memcurate.curator.memory import memfile

            # each added memory its own word: the prompt is about it alone
            word = bl.code_word(added)
            d = memfile.MemoryDoc(
                id=f"bench-added-{added}",
                category="runbook",
                title=f"Zephyrine gateway {word} drops quorum heartbeats",
                description="When the zephyrine gateway loses quorum heartbeats",
                tags=["bench"],
                created="2026-11-01T08:00:00Z",
                updated="2026-11-01T08:00:00Z",
                body=f"## Symptom\nZephyrine gateway {word} drops quorum heartbeats.\n\n"
                "## Steps\n1. Restart the gateway.\n\n## Verification\nHeartbeats resume.",
            )
            path = save_memory(root, d)
            if indexed:
                index_runbooks()
            s = hook(f"zephyrine gateway {word} drops quorum heartbeats again", path, "after add")
            if not indexed:
                index_runbooks()
            # as if the prompt came a little later: the stamp is kept
            past = time.time_ns() - 3 * 10**9
            os.utime(os.path.join(root, "runbook"), ns=(past, past))
            hook(target.title, target_path, "settle")
            return s

        jobs = [
            ("bare", lambda: runner.run(bare_argv, None, work)),
            ("recall", lambda: hook(target.title, target_path, "recall")),
            ("nothing", lambda: hook(NOTHING, None, "nothing")),
            ("trivial", lambda: hook("yes", None, "trivial")),
            ("after_save", lambda: add(indexed=True)),
            ("after_hand", lambda: add(indexed=False)),
        ]
        scen = interleave(jobs, rounds, rng)
        runner.close()
    finally:
        if args.keep:
            bl.say(f"kept the work folder: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    bare = statistics.median(s.wall for s in scen["bare"])
    results = {name: summarize(samples, bare) for name, samples in scen.items()}
    results["cold_index_build"] = {
        "wall_s": round(cold.wall, 2),
        "peak_rss_mib": round(cold.rss / MIB, 1),
    }
    labels = {
        "bare": "bare `python -c pass`",
        "recall": "a prompt that recalls",
        "nothing": "a prompt that finds nothing",
        "trivial": 'a trivial prompt ("yes")',
        "after_save": "first call after a save",
        "after_hand": "first call after a hand-added file",
    }
    bl.say()
    bl.say(
        f"recall hook — memcurate {info['version']}, Python {info['python']}, {args.memories} memories, "
        f"{os.cpu_count()} CPUs"
    )
    head = f"{'scenario':<38} {'n':>3} {'median':>9} {'p10..p90 ms':>13} {'x bare':>7} {'peak RSS':>9}  target"
    bl.say(head)
    bl.say("-" * (len(head) + 12))
    verdicts = []
    for name in scen:
        r = results[name]
        target_s = ""
        if name != "bare":
            r["pass"] = r["ratio_to_bare"] <= TARGET
            verdicts.append(r["pass"])
            target_s = f"<= {TARGET} x bare  {'PASS' if r['pass'] else 'FAIL'}"
        bl.say(
            f"{labels[name]:<38} {r['n']:>3} {r['median_ms']:>6.1f} ms {r['p10_ms']:>5.0f}..{r['p90_ms']:<5.0f} "
            f"{r['ratio_to_bare']:>7.2f} {r['peak_rss_mib']:>5.1f} MiB  {target_s}"
        )
    bl.say(
        f"first call ever (index built from {args.memories} files): {cold.wall:.2f} s, "
        f"{cold.rss / MIB:.1f} MiB peak RSS (once per project, or after the index is lost)"
    )
    overall = all(verdicts)
    bl.say(
        f"overall: {'PASS' if overall else 'FAIL'} ({sum(verdicts)}/{len(verdicts)} targets met)"
    )
    doc = {
        "bench": "recall",
        "created": bl.now_utc(),
        "args": vars(args),
        "machine": bl.machine(),
        "memcurate": {**info, "git_commit": bl.git_commit(), "source_hash": bl.source_hash()},
        "commands": {"bare": bare_argv, "hook": hook_argv},
        "target_x_bare": TARGET,
        "results": results,
        "pass": overall,
    }
    bl.say(f"figures written to {bl.write_results(args.json_out, doc)}")
    return 1 if args.strict and not overall else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
