#!/usr/bin/env python3
"""Benchmark the draft phase of one triage with the Claude backends, every model call taking 1 s.

    python bench/draft_bench.py            # 5 runs of each scenario: about 1.5 minutes
    python bench/draft_bench.py --quick    # one run, for CI: about 30 s

Both Claude backends run for real against stand-ins that take `--delay` (1 s) per call:

  anthropic   the real SDK (AnthropicDrafter) against a local Messages API server on 127.0.0.1
              (ANTHROPIC_BASE_URL), which answers each request after the delay with a valid
              `record_memory` tool_use for the category the prompt names, and usage;
  claude-cli  the real ClaudeCliDrafter running a fake `claude` executable first on the PATH,
              which reads the prompt on stdin, sleeps the delay and prints the CLI's JSON
              (`structured_output`, `usage`).

The triage is a copy of the bundled demo session, staged by the real capture (`triage` as
a backfill): all six categories triggered. Scenarios, per backend:

  one call        the decision category alone: the unit of every ratio (the delay plus what
                  one call costs around it: a request through the SDK, or a process started);
  6 at default    the six categories at the shipped `drafting.concurrency`.
                  Target: <= 1.3 x one call (one round of calls, not six);
  6 at 2          `drafting.concurrency: 2`. Target: about 3 x one call (three rounds):
                  between 2.9 x and 3.45 x.
  6 at 4          the default before it was 6: two rounds. No target: the reason for the default.

Time: the draft phase is from the first category's `drafting` to the last one's `drafted` (each
draft is verified as soon as it exists); before it, `Engine.process(tid)` makes the triage's second
look at the session (a backfill asks for one: one more call, reported apart as "look"); "process" is
the whole call, look, drafts, verification and the decisions against existing memories included. The drafter is built before the clock starts (the SDK's
import costs ~3 s once per process, as in the TUI). Every category must end `ready`.

Tokens per triage are read back from staging (each category's state line: tokens_in, tokens_out,
cache_read_tokens, cache_write_tokens, cost_usd, calls) and summed. The stand-ins count a token
per 4 characters of what was actually sent; the server reports the system prompt as a cache
write the first time it sees it within 5 minutes and as a cache read after, as the API does.

The engine runs from the interpreter that runs this script (it needs the checkout installed,
with the anthropic SDK): what is measured is waiting on 1 s calls, which the install does not
change. Medians over runs, scenarios interleaved run by run; figures in bench/results/draft.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

PROG = "draft_bench"
RESULTS = os.path.join(B.RESULTS, "draft.json")
TARGET_ONE_ROUND = 1.3  # x one call: six categories at the default concurrency
TARGET_THREE_ROUNDS = (2.9, 3.45)  # x one call: six categories, concurrency 2
BACKENDS = ("anthropic", "claude-cli")
# the first line of every draft prompt (prompt.user_prompt)
CATEGORY = re.compile(r"^Category: (\w+)", re.M)
# prompt.look_prompt
LOOK_HINTS = re.compile(r"^Keyword hints for this stretch \(unconfirmed\): (.*)\.$", re.M)
DIGEST_ENTRY = re.compile(r"^\[(\d+)\] ", re.M)  # an entry of the digest (capture/digest.py)
CACHE_TTL = 300.0  # seconds a cached prompt prefix lives (the API's ephemeral cache)
USAGE_KEYS = (
    "tokens_in",
    "tokens_out",
    "cache_read_tokens",
    "cache_write_tokens",
    "cost_usd",
    "calls",
)

FAKE_CLAUDE = r"""#!{python}
# A stand-in for `claude -p`: the prompt on stdin, the CLI's JSON result after a delay.
import json, os, re, sys, time
prompt = sys.stdin.read()
system = sys.argv[sys.argv.index("--system-prompt") + 1] if "--system-prompt" in sys.argv else ""
schema = sys.argv[sys.argv.index("--json-schema") + 1]
if '"facts"' in schema:  # the second look at the session
    sys.path.insert(0, {bench!r})
    from draft_bench import look_answer
    answer = look_answer(prompt)
else:
    category = re.search(r"^Category: (\w+)", prompt, re.M).group(1)
    answer = json.load(open(os.environ["DRAFT_BENCH_ANSWERS"]))[category]
time.sleep(float(os.environ["DRAFT_BENCH_DELAY"]))
sys.stdout.write(json.dumps({{
    "type": "result", "subtype": "success", "is_error": False, "num_turns": 1, "result": "",
    "structured_output": answer, "session_id": "00000000-0000-4000-8000-000000000000",
    "usage": {{"input_tokens": len(prompt) // 4, "cache_creation_input_tokens": 0,
               "cache_read_input_tokens": len(system) // 4, "output_tokens": len(json.dumps(answer)) // 4}}}}))
"""


# Words of its own per category: one triage's drafts that say alike are folded into one (the same fact).
TOPICS = {
    "decision": "gateway tokens chosen over sessions",
    "constraint": "quota limits of hosted runners",
    "runbook": "flaky socket timeouts fixed by retrying",
    "tech_debt": "legacy importer left unported",
    "preference": "terse commit messages wanted",
    "session_summary": "migration finished, docs next",
}


def answers() -> dict[str, dict]:
    """A valid answer for each category, in the shape its draft asks (a fact, or every required section)."""
    from memcurate.curator.categories import CATEGORIES
    from memcurate.curator.drafting.prompt import FACT_CATEGORIES

    out = {}
    for name, cat in CATEGORIES.items():
        words = TOPICS.get(name, name.replace("_", " "))
        answer = {
            "skip": False,
            "title": f"{words.capitalize()} (benchmark {name.replace('_', ' ')})",
            "description": f"Read when {words} matter",
            "tags": ["bench", name.replace("_", "-")],
        }
        if name in FACT_CATEGORIES:
            answer.update(
                fact=f"Fact: {words}, as a model would write it in one or two sentences.",
                why=f"Why: {words}.",
                how_to_apply="When it matters.",
            )
        else:
            answer["sections"] = {s: f"{s}: {words}, {n + 1}." for n, s in enumerate(cat.required)}
        out[name] = answer
    return out


def look_answer(prompt: str) -> dict:
    """The second look's answer: one fact per category the keywords flagged, citing the digest's first entry.
    It confirms them, so the triage keeps its six (since issue 23 a look that read the whole session and
    did not confirm a keyword category skips it) and no category more is found."""
    hints = LOOK_HINTS.search(prompt).group(1)
    first = int(DIGEST_ENTRY.search(prompt).group(1))
    return {
        "facts": [
            {
                "category": c,
                "statement": f"The {c.replace('_', ' ')} this session establishes, in the "
                "words of a model stand-in.",
                "entries": [first],
                "confidence": 0.9,
            }
            for c in hints.split(", ")
            if c != "none"
        ]
    }


# -- the stand-ins --------------------------------------------------------------------------


class MessagesServer:
    """The Messages API on 127.0.0.1: each POST answered after `delay` with a record_memory tool_use."""

    def __init__(self, delay: float, replies: dict[str, dict]) -> None:
        self.delay, self.replies = delay, replies
        self.lock = threading.Lock()
        self.in_flight = self.peak = self.requests = 0
        self.cached: dict[str, float] = {}  # hash of a system prompt -> when it was last sent
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                with server.lock:
                    server.requests += 1
                    server.in_flight += 1
                    server.peak = max(server.peak, server.in_flight)
                try:
                    time.sleep(server.delay)  # the model thinking
                    data = json.dumps(server.reply(body)).encode()
                finally:
                    with server.lock:
                        server.in_flight -= 1
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def reply(self, body: dict) -> dict:
        prompt = body["messages"][0]["content"]
        system = "".join(b.get("text", "") for b in body.get("system") or [])
        tool = body["tools"][0]["name"]
        answer = (
            look_answer(prompt)
            if tool == "record_findings"
            else self.replies[CATEGORY.search(prompt).group(1)]
        )
        key, now = hashlib.sha256(system.encode()).hexdigest(), time.monotonic()
        with self.lock:
            hit = now - self.cached.get(key, -CACHE_TTL) < CACHE_TTL
            self.cached[key] = now
        cached = len(system) // 4
        usage = {
            "input_tokens": len(prompt) // 4,
            "cache_creation_input_tokens": 0 if hit else cached,
            "cache_read_input_tokens": cached if hit else 0,
            "output_tokens": len(json.dumps(answer)) // 4,
        }
        return {
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [{"type": "tool_use", "id": "toolu_bench", "name": tool, "input": answer}],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": usage,
        }

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def install_fake_claude(folder: str, delay: float, replies: dict) -> str:
    os.makedirs(folder, exist_ok=True)
    exe = os.path.join(folder, "claude")
    with open(exe, "w") as f:
        f.write(
            FAKE_CLAUDE.format(
                python=sys.executable, bench=os.path.dirname(os.path.abspath(__file__))
            )
        )
    os.chmod(exe, 0o755)
    path = os.path.join(folder, "answers.json")
    with open(path, "w") as f:
        json.dump(replies, f)
    os.environ.update(
        DRAFT_BENCH_ANSWERS=path,
        DRAFT_BENCH_DELAY=str(delay),
        PATH=f"{folder}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    return exe


# -- one run ----------------------------------------------------------------------------------


class Runner:
    """Fresh projects (one per run: nothing decided against the last run's memories), each staging a
    new demo copy with all six categories triggered."""

    def __init__(self, work: str) -> None:
        self.work = work
        with open(B.DEMO, encoding="utf-8") as f:
            self.demo = f.read()
        self.n = 0

    def stage(self, backend: str, concurrency: int | None):
        from memcurate.curator.candidates.incremental import capture
        from memcurate.curator.engine import Engine

        self.n += 1
        site = os.path.join(self.work, f"run-{self.n:03d}")
        project, memory = os.path.join(site, "project"), os.path.join(site, "memory")
        extra = "drafting:\n  retries: 0\n  timeout_seconds: 60.0\n" + (
            f"  concurrency: {concurrency}\n" if concurrency else ""
        )
        B.make_project(project, memory, extra)
        cfg_path = os.path.join(project, ".claude", "memcurate.yaml")
        with open(cfg_path) as f:
            text = f.read()
        with open(cfg_path, "w") as f:
            f.write(text.replace("backend: offline", f"backend: {backend}", 1))
        transcript = os.path.join(site, "session.jsonl")
        with open(transcript, "w", encoding="utf-8") as f:
            f.write(
                B.vary_demo(
                    self.demo, B.session_id(self.n, 0xD7), B.code_word(self.n), hours=self.n
                )
            )
        engine = Engine(project)
        report = capture(engine.data, engine.cfg, transcript, event="backfill", summary=True)
        triggered = [c["category"] for c in report["categories"] if c["triggered"]]
        if report["status"] != "staged" or len(triggered) != 6:
            B.die(
                PROG, f"the demo copy should trigger all six categories; it triggered {triggered}"
            )
        # Built before the clock: the SDK's import is paid once per process, not per triage.
        if engine.drafter.name != backend:
            B.die(
                PROG,
                f"expected the {backend} drafter, got {engine.drafter.name} ({engine.drafter.reason})",
            )
        return engine, report["triage"]

    def run(self, backend: str, concurrency: int | None, only: list[str] | None) -> dict:
        from memcurate.curator.candidates import staging

        engine, tid = self.stage(backend, concurrency)
        done: dict[str, float] = {}
        started: list[
            float
        ] = []  # when the first draft started: after the second look at the session
        t0 = time.perf_counter()

        def on_event(e) -> None:
            if e.state == "drafting" and not started:
                started.append(time.perf_counter() - t0)
            if e.state in ("drafted", "failed"):
                done[e.category] = time.perf_counter() - t0

        try:
            states = engine.process(tid, only=only, on_event=on_event)
            total = time.perf_counter() - t0
            records = staging.category_states(engine.data, tid)
        finally:
            engine.close()
        wanted = only or list(states)
        bad = {c: (states[c], records[c].get("error")) for c in wanted if states[c] != "ready"}
        if bad:
            B.die(PROG, f"{backend}: categories did not end ready: {bad}")
        usage = {k: 0 for k in USAGE_KEYS}
        for c in wanted:
            for k in USAGE_KEYS:
                usage[k] += records[c].get(k) or 0
            if not records[c].get("calls"):  # a state line without `calls`: one call made the draft
                usage["calls"] += 1
        look = usage_of(staging.read_second_look(engine.data, tid) or {}) if only is None else None
        return {
            "draft": max(done.values()) - started[0],
            "look": started[0],
            "total": total,
            "usage": usage,
            "look_usage": look,
            "drafted": len(done),
        }


def usage_of(record: dict) -> dict:
    return {k: record.get(k) or 0 for k in USAGE_KEYS}


# -- the bench --------------------------------------------------------------------------------


def scenarios(default_concurrency: int) -> list[tuple[str, str, int | None, list[str] | None]]:
    """(key, label, concurrency (None: the shipped default), only)."""
    return [
        ("one", "one call (decision alone)", None, ["decision"]),
        ("six", f"6 categories, concurrency {default_concurrency} (default)", None, None),
        ("six@2", "6 categories, concurrency 2", 2, None),
        ("six@4", "6 categories, concurrency 4 (old default)", 4, None),
    ]


def verdict(key: str, ratio: float) -> tuple[str, str]:
    if key == "six":
        return f"<= {TARGET_ONE_ROUND:g} x", "PASS" if ratio <= TARGET_ONE_ROUND else "FAIL"
    if key == "six@2":
        lo, hi = TARGET_THREE_ROUNDS
        return f"{lo:g}-{hi:g} x", "PASS" if lo <= ratio <= hi else "FAIL"
    return ("unit", "") if key == "one" else ("none", "")


def main() -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="one run of each scenario instead of 5 (for CI)"
    )
    ap.add_argument("--runs", type=int, help="runs of each scenario")
    ap.add_argument(
        "--delay", type=float, default=1.0, help="seconds every model call takes (default 1)"
    )
    ap.add_argument(
        "--workdir", help="parent of the throwaway work folder (default: the system temp dir)"
    )
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument(
        "--json-out", default=RESULTS, help=f"default: {os.path.relpath(RESULTS, B.REPO)}"
    )
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args()
    runs = args.runs or (1 if args.quick else 5)
    try:
        import anthropic  # noqa: F401  (the anthropic scenarios run the real SDK)

        from memcurate.curator import config
        from memcurate.curator.util.assets import asset
    except ImportError as e:
        B.die(PROG, f"needs memcurate and the anthropic SDK importable by {sys.executable}: {e}")

    work = tempfile.mkdtemp(prefix="memcurate-draft-bench-", dir=args.workdir)
    B.isolate_home(work)
    replies = answers()
    server = MessagesServer(args.delay, replies)
    os.environ.update(ANTHROPIC_API_KEY="sk-ant-bench", ANTHROPIC_BASE_URL=server.url)
    install_fake_claude(os.path.join(work, "bin"), args.delay, replies)
    default_concurrency = config.build([asset("config.default.yaml")])["drafting"]["concurrency"]
    plan = scenarios(default_concurrency)
    runner = Runner(work)
    results: dict[tuple[str, str], list[dict]] = {}
    try:
        B.say(
            f"{PROG}: {runs} runs of {len(plan)} scenarios x {len(BACKENDS)} backends, each call {args.delay:g} s "
            f"(Messages API server at {server.url}, fake claude on the PATH)"
        )
        for _ in range(runs):  # interleaved: drift of the machine hits every scenario alike
            for backend in BACKENDS:
                for key, _, concurrency, only in plan:
                    server.peak = 0
                    r = runner.run(backend, concurrency, only)
                    if backend == "anthropic":
                        r["peak_in_flight"] = server.peak
                    results.setdefault((backend, key), []).append(r)
    finally:
        server.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    figures, failed = report(results, plan, args.delay, runs)
    doc = {
        "bench": PROG,
        "when": B.now_utc(),
        "commit": B.git_commit(),
        "machine": B.machine(),
        "delay_s": args.delay,
        "runs": runs,
        "default_concurrency": default_concurrency,
        "targets": {
            "six_x_one_call_max": TARGET_ONE_ROUND,
            "six_at_2_x_one_call": list(TARGET_THREE_ROUNDS),
        },
        "figures": figures,
        "pass": not failed,
    }
    B.say(
        f"figures: {B.write_results(args.json_out, doc)}" + (f"; kept {work}" if args.keep else "")
    )
    return 1 if failed and args.strict else 0


def report(results: dict, plan: list, delay: float, runs: int) -> tuple[dict, list[str]]:
    figures: dict = {}
    failed: list[str] = []
    B.say("")
    B.say(
        f"{'backend':<11} {'scenario':<42} {'draft phase':>11} {'min..max':>13} {'x one call':>10} "
        f"{'x delay':>8} {'look':>6} {'process':>8}  target"
    )
    for backend in BACKENDS:
        unit = B.median(r["draft"] for r in results[(backend, "one")])
        for key, label, _, _ in plan:
            rs = results[(backend, key)]
            draft, total = B.median(r["draft"] for r in rs), B.median(r["total"] for r in rs)
            lo, hi = B.spread([r["draft"] for r in rs])
            ratio = draft / unit
            target, mark = verdict(key, ratio)
            if mark == "FAIL":
                failed.append(f"{backend} {label}")
            look = B.median(r["look"] for r in rs)
            B.say(
                f"{backend:<11} {label:<42} {draft:>9.3f} s {lo:>6.2f}..{hi:<5.2f} {ratio:>8.2f} x "
                f"{draft / delay:>6.2f} x {look:>4.2f} s {total:>6.2f} s  {target} {mark}".rstrip()
            )
            fig = {
                "draft_s": round(draft, 4),
                "look_s": round(look, 4),
                "process_s": round(total, 4),
                "min_s": round(lo, 4),
                "max_s": round(hi, 4),
                "x_one_call": round(ratio, 3),
                "x_delay": round(draft / delay, 3),
                "target": target,
                "result": mark or None,
            }
            if "peak_in_flight" in rs[0]:
                fig["peak_requests_in_flight"] = max(r["peak_in_flight"] for r in rs)
            fig["usage_per_triage"] = {k: B.median(r["usage"][k] for r in rs) for k in USAGE_KEYS}
            if rs[0]["look_usage"] is not None:
                fig["second_look_usage"] = {
                    k: B.median(r["look_usage"][k] for r in rs) for k in USAGE_KEYS
                }
            figures[f"{backend}/{key}"] = fig
    B.say("")
    B.say(
        "tokens per triage, 6 categories (read back from staging, median; the stand-ins count 4 characters a token):"
    )
    for backend in BACKENDS:
        u = figures[f"{backend}/six"]["usage_per_triage"]
        cost = f", cost ${u['cost_usd']:.4f}" if u["cost_usd"] else ""
        B.say(
            f"  {backend:<11} in {u['tokens_in']:>7,.0f} (cache read {u['cache_read_tokens']:,.0f}, "
            f"cache write {u['cache_write_tokens']:,.0f})  out {u['tokens_out']:>6,.0f}  calls {u['calls']:.0f}{cost}"
        )
        look = figures[f"{backend}/six"].get("second_look_usage")
        if look:
            B.say(
                f"  {'':<11} and the second look: in {look['tokens_in']:,.0f}, out {look['tokens_out']:,.0f}, "
                f"calls {look['calls']:.0f}"
                + (f", cost ${look['cost_usd']:.4f}" if look["cost_usd"] else "")
            )
    peak = figures["anthropic/six"].get("peak_requests_in_flight")
    if peak is not None:
        B.say(
            f"  the server saw at most {peak} requests in flight at the default concurrency, "
            f"{figures['anthropic/six@2'].get('peak_requests_in_flight')} at concurrency 2"
        )
    B.say("")
    B.say("FAIL: " + "; ".join(failed) if failed else f"PASS: every target met ({runs} runs each)")
    return figures, failed


if __name__ == "__main__":
    sys.exit(main())
