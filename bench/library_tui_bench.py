"""The library screen of the TUI over 10,000 memories: opening it, and a search keypress to the frame.

    python bench/library_tui_bench.py [--memories N] [--opens N] [--presses N] [--seed N] [--json-out PATH]

The project is library_bench.build_project's (n memcurate memories, Claude's topic files and lines). The
real app runs in-process with tui_bench's instrumented app and its driver that renders every frame as it
would for a terminal (tui_bench.bench_app_class); then:

- open: key `l` sent as the terminal driver sends it, to the first frame whose table holds every memory
  (the library read through the Engine in a worker, the rows laid out, the frame rendered);
- search: letters typed one at a time into the search (queries typed whole, then cleared), each keypress
  to the first frame that shows the rows found for the query so far (the search worker's answer
  applied and drawn); the median over --presses keypresses, p90 and max;
- for scale, the Engine's own library_search per keypress and library() measured in the same run.

Target (issue 14): keypress to render ≤ 50 ms median. Prints a table; writes bench/results/library_tui.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "dev"))
sys.path.insert(0, str(ROOT / "bench"))

import benchlib as B  # noqa: E402
import tui_bench as T  # noqa: E402
from library_bench import build_project  # noqa: E402

from memcurate.widgets.library import SEARCH_LIMIT  # noqa: E402

RESULTS = str(ROOT / "bench" / "results" / "library_tui.json")
TARGET_KEY_MS = T.TARGET_KEY_MS
# What a person types: common words (thousands of rows found), rarer ones (a few), none at all.
QUERIES = [
    "auth token",
    "postgres",
    "retry",
    "deploy rollback",
    "cache",
    "flaky",
    "kafka lag",
    "jwt",
    "timeout",
    "secret",
    "docker",
    "zzqx",
]


async def measure(project: str, opens: int, presses: int, say) -> dict:
    from textual import events

    from memcurate.curator.engine import Engine
    from memcurate.widgets.library import LibraryScreen

    out = {"open": [], "key": [], "found": [], "engine_search": [], "engine_library": []}
    engine = Engine(project)
    try:
        for _ in range(5):
            out["engine_library"].append(T.now())
            entries = engine.library()
            out["engine_library"][-1] = (T.now() - out["engine_library"][-1]) * 1e3
        expected = len(entries)
    finally:
        engine.close()
    app = T.bench_app_class()(lambda: Engine(project), watch=False, run_pipeline=False)

    def send(key: str, char: str | None) -> float:
        event = events.Key(key, char)
        event.set_sender(app)
        t0 = T.now()
        app._driver.send_message(event)  # what the terminal driver's input thread does
        return t0

    async with app.run_test(headless=False, size=(T.COLS, T.ROWS)):
        await T.wait_quiet(app, 0.2)
        for k in range(opens):
            done, got = asyncio.Event(), {}

            def opened(t: float, got=got, done=done) -> bool:
                screen = app.screen
                if not isinstance(screen, LibraryScreen) or len(screen.table.rows) < expected:
                    return False
                got["t"] = t
                done.set()
                return True

            app.on_frame = opened
            t0 = send("l", "l")
            await T.wait_event(done, "the library with every row", timeout=120)
            out["open"].append((got["t"] - t0) * 1e3)
            screen = app.screen
            if k < opens - 1:
                await T.wait_quiet(app, 0.1)
                screen.dismiss()
                await T.wait_quiet(app, 0.1)
        screen.action_focus_search()
        await T.wait_quiet(app, 0.1)
        measured = 0
        while measured < presses:
            for query in QUERIES:
                for i in range(1, len(query) + 1):
                    typed, char = query[:i], query[i - 1]
                    done, got = asyncio.Event(), {}

                    def narrowed(t: float, got=got, done=done, typed=typed) -> bool:
                        if screen.narrowed != typed.strip():
                            return False
                        got["t"] = t
                        done.set()
                        return True

                    app.on_frame = narrowed
                    t0 = send("space" if char == " " else char, char)
                    await T.wait_event(done, f"the rows found for {typed!r}")
                    if char != " ":  # a space searches nothing new: the frame is the input's alone
                        out["key"].append((got["t"] - t0) * 1e3)
                        out["found"].append(len(screen.table.entries))
                        measured += 1
                    await T.wait_quiet(app, 0.05)
                screen.query_one("#library-search").value = ""
                await T.wait_quiet(app, 0.1)
        say(
            f"  {measured} keypresses over {len(QUERIES)} queries; rows found per keypress: "
            f"median {B.median(out['found']):.0f}, max {max(out['found'])}"
        )
        for query in QUERIES:
            for i in range(1, len(query) + 1):
                t0 = T.now()
                screen.engine.library_search(query[:i], limit=SEARCH_LIMIT)
                out["engine_search"].append((T.now() - t0) * 1e3)
    out["entries"] = expected
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--opens", type=int, default=5)
    ap.add_argument("--presses", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--json-out", default=RESULTS)
    args = ap.parse_args(argv)
    work = tempfile.mkdtemp(prefix="library-tui-bench-")
    try:
        B.isolate_home(work)
        os.environ.update(T.TERM_ENV)
        project, _memory = build_project(work, args.memories, args.seed)
        from memcurate.curator.engine import Engine

        Engine(project).library()  # the index built once, as a project that has been used has it
        out = asyncio.run(measure(project, args.opens, args.presses, B.say))
        key, opened = T.stats(out["key"]), T.stats(out["open"])
        engine_search, engine_library = (
            T.stats(out["engine_search"]),
            T.stats(out["engine_library"]),
        )
        ok = key["median"] <= TARGET_KEY_MS
        B.say(f"library of {out['entries']} memories ({args.memories} memcurate's + Claude's own)")
        B.say(
            f"  open (l to the first frame with every row)  median {opened['median']:8.1f} ms  p90 {opened['p90']:8.1f}"
            f"  (n={opened['n']})"
        )
        B.say(
            f"  search keypress to the narrowed frame       median {key['median']:8.1f} ms  p90 {key['p90']:8.1f}"
            f"  max {key['max']:.1f}  (n={key['n']}; target ≤ {TARGET_KEY_MS:.0f} ms: {'ok' if ok else 'MISSED'})"
        )
        B.say(
            f"  for scale: Engine.library_search per key    median {engine_search['median']:8.1f} ms;"
            f"  Engine.library() {engine_library['median']:.1f} ms"
        )
        doc = {
            "when": B.now_utc(),
            "machine": B.machine(),
            "memories": args.memories,
            "entries": out["entries"],
            "open_ms": opened,
            "keypress_ms": key,
            "engine_search_ms": engine_search,
            "engine_library_ms": engine_library,
            "target_key_ms": TARGET_KEY_MS,
            "ok": ok,
        }
        B.say(f"wrote {B.write_results(args.json_out, doc)}")
        return 0
    finally:
        if args.keep:
            B.say(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
