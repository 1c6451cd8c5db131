#!/usr/bin/env python3
"""Near-duplicates and contradictions among 10,000 memories (curator/hygiene/duplicates.py, tidy.py).

    python bench/tidy_bench.py                 # 10,000 memories, about a minute
    python bench/tidy_bench.py --memories 2000 --rounds 1

A throwaway project (HOME and Claude's folders pointed at a temporary folder, offline backend) gets
N memory files of six categories, each on a topic of its own (distinct code words), among them
planted near-duplicate pairs (the same fact in other words, one more sentence) and planted
contradictions (the same rule, negated, newer). Measured in the same run:

  index    the first Engine.library(): the index built (every file parsed once), not tidy's own cost
  load     Engine.library() and every memory's text read and parsed (duplicates.memos), once
  pairs    duplicates.find_pairs over the loaded memories: median of --rounds
           with the candidate pairs scored: at most 2 x MAX_CANDIDATES a memory (n·k), never every pair
  tidy     Engine.tidy(): every proposal staged (structural merges, offline)

and how many planted pairs were found (recall) and how many pairs that were not planted (false).
Figures: bench/results/tidy.json. Runs in the interpreter that runs it (the engine as installed there).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (  # noqa: E402
    code_word,
    isolate_home,
    machine,
    make_project,
    median,
    now_utc,
    say,
    write_results,
)

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "tidy.json")
CATS = {
    "decision": ("Decision", "Rationale"),
    "constraint": ("Rule", "Impact"),
    "runbook": ("Symptom", "Steps"),
    "tech_debt": ("Description", "Why deferred"),
    "preference": ("Preference", "Reason"),
}
VERBS = (
    "routes",
    "caches",
    "signs",
    "batches",
    "retries",
    "validates",
    "compresses",
    "indexes",
    "mirrors",
)
NOUNS = (
    "service",
    "worker",
    "gateway",
    "job",
    "library",
    "script",
    "daemon",
    "pipeline",
    "plugin",
    "proxy",
)
POOL = 2000  # the shared vocabulary: each memory names 3 of its words (each word in ~15 of 10,000 memories)
RUNBOOK_VERIFY = "\n\n## Verification\nThe {a} check passes again."


def body(cat: str, first: str, second: str) -> str:
    one, two = CATS[cat]
    return f"## {one}\n{first}\n\n## {two}\n{second}" + (
        RUNBOOK_VERIFY.format(a=first.split()[1]) if cat == "runbook" else ""
    )


def write(root: str, mid: str, cat: str, title: str, text: str, stamp: str) -> None:
    from memcurate.curator.memory import memfile

    doc = memfile.MemoryDoc(
        id=mid,
        category=cat,
        title=title,
        description=title,
        tags=["bench"],
        created=stamp,
        updated=stamp,
        sources=[{"session": f"s-{mid}"}],
        body=text,
    )
    os.makedirs(os.path.join(root, cat), exist_ok=True)
    with open(os.path.join(root, cat, f"{mid}.md"), "w", encoding="utf-8") as f:
        f.write(memfile.render(doc))


def fill(root: str, n: int, dups: int, contras: int) -> tuple[set, set]:
    """n memories; the refs of the planted duplicate and contradiction pairs (older, newer)."""
    planted_dup, planted_con = set(), set()
    cats = list(CATS)
    i = 0
    while i < n:
        cat = cats[i % len(cats)]
        a, b, c, d, e, f, g, h = (code_word(8 * i + k) for k in range(8))
        # words that many memories share, as a project's vocabulary: candidates must be sorted out among them
        shared = " ".join(code_word(90_000 + (i * 7919 + k * 104729) % POOL) for k in range(3))
        verb, noun = VERBS[i % len(VERBS)], NOUNS[(i // len(VERBS)) % len(NOUNS)]
        title = f"The {a} {noun} {verb} {b} {c}"
        first = (
            f"{a.capitalize()} {verb} every {b} {c} through {d} before {e} answers; see {shared}."
        )
        second = f"Without it {f} broke {g} twice during {h}."
        write(root, f"m{i}", cat, title, body(cat, first, second), "2026-09-01T10:00:00Z")
        if len(planted_dup) < dups and i + 1 < n:
            i += 1
            write(
                root,
                f"m{i}",
                cat,
                f"{b.capitalize()} {c} go through the {a} {noun}",
                body(
                    cat,
                    f"Every {b} {c} {verb} by {a} passes {d} before {e} answers; see {shared}.",
                    second + f" {d.capitalize()} is replicated.",
                ),
                "2026-11-01T10:00:00Z",
            )
            planted_dup.add((f"{cat}/m{i - 1}", f"{cat}/m{i}"))
        elif len(planted_con) < contras and i + 1 < n:
            i += 1
            write(
                root,
                f"m{i}",
                cat,
                f"The {a} {noun} does not {verb.rstrip('s')} {b} {c}",
                body(
                    cat,
                    f"{a.capitalize()} does not {verb.rstrip('s')} every {b} {c} through {d} before {e} "
                    "answers.",
                    f"{d.capitalize()} was retired after {h}.",
                ),
                "2026-11-01T10:00:00Z",
            )
            planted_con.add((f"{cat}/m{i - 1}", f"{cat}/m{i}"))
        i += 1
    return planted_dup, planted_con


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--json-out", default=RESULTS)
    args = ap.parse_args(argv)

    work = tempfile.mkdtemp(prefix="tidy-bench-")
    try:
        isolate_home(work)
        project, memory = os.path.join(work, "project"), os.path.join(work, "memory")
        make_project(project, memory)
        dups, contras = max(1, args.memories // 200), max(1, args.memories // 500)
        planted_dup, planted_con = fill(memory, args.memories, dups, contras)

        from memcurate.curator.engine import Engine
        from memcurate.curator.hygiene import duplicates

        engine = Engine(project)
        try:
            t0 = time.perf_counter()
            engine.library()  # the index built (a first open): not the comparison's cost
            index_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            memos = duplicates.memos(engine)
            load = time.perf_counter() - t0
            times, found = [], []
            for _ in range(args.rounds):
                t0 = time.perf_counter()
                found = duplicates.find_pairs(memos)
                times.append(time.perf_counter() - t0)
            candidates = len(duplicates.candidates(memos))
            t0 = time.perf_counter()
            staged = engine.tidy()
            tidy_s = time.perf_counter() - t0
        finally:
            engine.close()
        got_dup = {(p.a, p.b) for p in found if p.kind == "duplicate"}
        got_con = {(p.a, p.b) for p in found if p.kind == "contradiction"}
        n = len(memos)
        doc = {
            "at": now_utc(),
            "machine": machine(),
            "memories": n,
            "index_s": round(index_s, 3),
            "load_s": round(load, 3),
            "pairs_median_s": round(median(times), 3),
            "pairs_ms_per_memory": round(1000 * median(times) / max(n, 1), 3),
            "candidate_pairs": candidates,
            "all_pairs": n * (n - 1) // 2,
            "tidy_s": round(tidy_s, 3),
            "proposals": len(staged),
            "duplicates": {
                "planted": len(planted_dup),
                "found": len(got_dup & planted_dup),
                "false": len(got_dup - planted_dup),
            },
            "contradictions": {
                "planted": len(planted_con),
                "found": len(got_con & planted_con),
                "false": len(got_con - planted_con),
            },
        }
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    say(
        f"{n} memories: index built in {doc['index_s']:.2f} s, then listed and read in {doc['load_s']:.2f} s; pairs median {doc['pairs_median_s']:.2f} s "
        f"({doc['pairs_ms_per_memory']:.2f} ms a memory); {doc['candidate_pairs']} candidate pairs of "
        f"{doc['all_pairs']} ({doc['candidate_pairs'] / max(n, 1):.1f} a memory, at most {2 * duplicates.MAX_CANDIDATES})"
    )
    say(
        f"duplicates: {doc['duplicates']['found']}/{doc['duplicates']['planted']} planted found, "
        f"{doc['duplicates']['false']} not planted; contradictions: {doc['contradictions']['found']}/"
        f"{doc['contradictions']['planted']} found, {doc['contradictions']['false']} not planted"
    )
    say(f"tidy: {doc['proposals']} proposals staged in {doc['tidy_s']:.2f} s")
    say(f"figures: {write_results(args.json_out, doc)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
