"""The memory library over 10,000 memories: Engine.library() and Engine.library_search() medians.

    python bench/library_bench.py [--memories N] [--runs N] [--seed N] [--keep] [--json-out PATH]

`build_project(path, n)` makes a project whose memory root holds n memcurate memories (index_bench's
generator: the six categories, a Zipf-like vocabulary), 40 of Claude's topic files and a MEMORY.md
with Claude's lines; the TUI bench of the library (part F) reuses it. Then, on the real Engine:

- the first library() of a new project (the index built from the files),
- the first library() of a new Engine on the built index (what opening the library costs),
- library() warm: median of --runs calls,
- library_search() as a person types: every prefix of a dozen queries (one call per keypress), median,
- the ratio of library() to the bare index read it is made from (index.rows()), measured in the same run.

Target (issue 14): what the engine does for a keypress well inside the 50 ms a render may take. Prints
a table; writes bench/results/library.json.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "dev"))
sys.path.insert(0, str(ROOT / "bench"))

from benchlib import isolate_home, machine, make_project, median, now_utc, write_results  # noqa: E402
from index_bench import SHARE, Gen  # noqa: E402

from memcurate.curator.memory import memfile  # noqa: E402

RESULTS = str(ROOT / "bench" / "results" / "library.json")
QUERIES = [
    "auth token",
    "postgres migration",
    "retry backoff",
    "deploy rollback",
    "cache",
    "flaky test",
    "kafka consumer lag",
    "jwt",
    "timeout",
    "secret rotation",
    "docker image",
    "lint",
]
TOPIC_FILES = 40


def build_project(path: str, n: int, seed: int = 1) -> tuple[str, str]:
    """(project, memory root) under `path`: n memcurate memories, Claude's topic files and MEMORY.md lines."""
    project, memory = os.path.join(path, "project"), os.path.join(path, "memory")
    make_project(project, memory)
    gen = Gen(seed)
    cats = list(SHARE)
    counts = {c: int(n * SHARE[c]) for c in cats}
    counts[cats[0]] += n - sum(counts.values())
    for category, count in counts.items():
        os.makedirs(os.path.join(memory, category), exist_ok=True)
        for i in range(count):
            id = f"{category.replace('_', '-')}-{i:05d}"
            with open(os.path.join(memory, category, f"{id}.md"), "w", encoding="utf-8") as f:
                f.write(memfile.render(gen.doc(category, id)))
    lines = ["# Project memory", ""]
    os.makedirs(os.path.join(memory, "notes"), exist_ok=True)
    for i in range(TOPIC_FILES):
        where = f"topic-{i:02d}.md" if i % 2 else f"notes/topic-{i:02d}.md"
        title = " ".join(gen.words(4)).capitalize()
        with open(os.path.join(memory, where), "w", encoding="utf-8") as f:
            f.write(
                f"---\nname: {title}\ndescription: {gen.sentence(6, 10)}\ntype: project\n---\n\n"
                + "\n".join(gen.sentence() for _ in range(5))
                + "\n"
            )
        lines.append(f"- [{title}]({where}) \u2014 {gen.sentence(4, 8)}")
    lines += [f"- {gen.sentence(6, 12)}" for _ in range(30)]
    with open(os.path.join(memory, "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return project, memory


def timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1000, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--json-out", default=RESULTS)
    args = ap.parse_args(argv)
    work = tempfile.mkdtemp(prefix="library-bench-")
    try:
        isolate_home(work)
        from memcurate.curator.engine import Engine

        t0 = time.perf_counter()
        project, _memory = build_project(work, args.memories, args.seed)
        print(
            f"built {args.memories} memories + {TOPIC_FILES} topic files in {time.perf_counter() - t0:.1f} s"
        )
        engine = Engine(project)
        build_ms, entries = timed(engine.library)
        engine.close()
        engine = Engine(project)
        open_ms, _ = timed(engine.library)
        warm = [timed(engine.library)[0] for _ in range(args.runs)]
        rows = [timed(engine.index.rows)[0] for _ in range(args.runs)]
        keys = []
        found = 0
        for q in QUERIES:
            for i in range(1, len(q) + 1):
                ms, refs = timed(lambda q=q, i=i: engine.library_search(q[:i]))
                keys.append(ms)
            found += len(refs)
        engine.close()
        figures = {
            "memories": args.memories,
            "entries": len(entries),
            "first_library_ms (index built)": round(build_ms, 1),
            "open_library_ms (new Engine, built index)": round(open_ms, 1),
            "library_median_ms": round(median(warm), 2),
            "index_rows_median_ms": round(median(rows), 2),
            "library_over_rows_ratio": round(median(warm) / median(rows), 2),
            "search_keypress_median_ms": round(median(keys), 2),
            "search_keypress_max_ms": round(max(keys), 2),
            "keypresses": len(keys),
            "refs_found_by_full_queries": found,
        }
        for k, v in figures.items():
            print(f"  {k:44} {v}")
        out = write_results(
            args.json_out, {"when": now_utc(), "machine": machine(), "figures": figures}
        )
        print(f"wrote {out}")
        return 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
