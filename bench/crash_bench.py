#!/usr/bin/env python3
"""Crash safety of `memcurate --auto-approve` under SIGKILL: nothing truncated, nothing lost, nothing twice.

    python bench/crash_bench.py              # >= 200 kills, about 10 minutes on a 2-core VM
    python bench/crash_bench.py --kills 30   # a quicker look
    python bench/crash_bench.py --quick      # for CI: 12 kills over 8 copies, well under a minute

Stages a lot of work (demo copies with distinct session ids and varied text,
staged by the real `memcurate triage`) in a throwaway project, then loops:
start the real `memcurate --auto-approve` (bench/.venv's console script),
SIGKILL it at a random moment spread over the time the run would take, and
check the invariants on disk:

  - every memory file parses (curator.memory.memfile.parse) with no problems (memfile.problems == [])
  - MEMORY.md parses (curator.memory.memory_md.parse), within its budgets and limits; no entry twice
  - every archive parses, no entry twice; no MEMORY.md entry points at a missing file
  - every staged state record reads; a `saved` category's file exists
  - left-over temp files (`.*.tmp`) are counted and reported

When a run finishes before its kill (the staged work is all done), the epoch
ends: a last `memcurate --auto-approve` runs to completion, `memcurate status
--json` must show pending 0 and every category saved, and the memory root must
equal what one clean uninterrupted run made of the same staged work (same ids
per category, same files apart from created/updated stamps, same MEMORY.md and
archives); then the project is reset to a fresh copy of the staged work and the
kills go on until `--kills` kills have landed mid-run.

The bench re-executes itself with bench/.venv's interpreter to import the
installed engine for the checks. Figures: bench/results/crash.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

PROG = "crash_bench"
RESULTS = os.path.join(B.RESULTS, "crash.json")
_STAMP = re.compile(r"^(created|updated): .*$", re.M)
IN_FLIGHT = ("drafting", "drafted", "verifying", "approved")
TAIL = 0.05  # an epoch with less than this share of its work left is run to completion


class Live:
    """The project under test, its memory root, and the fresh copy of the staged work to reset to."""

    def __init__(self, work: str) -> None:
        self.work = work
        self.project = os.path.join(work, "live", "project")
        self.memory = os.path.join(work, "live", "memory")
        self.data = os.path.join(self.project, ".memcurate")
        self.template = os.path.join(work, "template-data")
        self.exe = B.venv_memcurate()
        self.log = os.path.join(work, "run.stderr")
        B.make_project(self.project, self.memory, B.SAVE_EVERY_DRAFT)

    def reset(self) -> None:
        for d in (self.data, self.memory):
            shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(self.template, self.data, symlinks=True)
        os.makedirs(self.memory)

    def start(self, *args: str) -> subprocess.Popen:
        err = open(self.log, "wb")
        try:
            return subprocess.Popen(
                [self.exe, *args],
                cwd=self.project,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        finally:
            err.close()

    def run(self, *args: str, timeout: float = 600) -> tuple[int, str, str, float]:
        """(exit status, stdout, stderr, seconds) of a run to its end; a run that hangs is killed (status 124)."""
        t = time.monotonic()
        try:
            p = subprocess.run(
                [self.exe, *args],
                cwd=self.project,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return (
                124,
                "",
                f"`memcurate {' '.join(args)}` still running after {timeout:g} s: killed",
                timeout,
            )
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t

    def time_to_first_state(self) -> float:
        """From spawn to the first state record a fresh run writes: its start-up (imports, engine,
        index, staging). The run is then killed (not counted)."""
        staging = os.path.join(self.data, "staging")
        tids = [t for t in os.listdir(staging) if not t.startswith(".")]
        t0 = time.monotonic()
        p = self.start("--auto-approve")
        try:
            while p.poll() is None:
                if any(os.path.exists(os.path.join(staging, t, "state.log")) for t in tids):
                    return time.monotonic() - t0
                time.sleep(0.002)
            return time.monotonic() - t0
        finally:
            if p.poll() is None:
                p.kill()
            p.wait()

    def stderr_tail(self) -> str:
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                return f.read()[-1500:]
        except OSError:
            return ""


class Checker:
    """The invariants, read from disk with the installed engine's own parsers. Parsed memory files are
    cached by (inode, size, mtime): every write is a new file renamed into place."""

    def __init__(self, live: Live, cfg: dict) -> None:
        self.live = live
        self.cfg = cfg
        self.cache: dict[str, tuple[tuple, list[str]]] = {}

    def _memory_file(self, path: str, category: str) -> list[str]:
        from memcurate.curator.memory import memfile

        st = os.stat(path)
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        hit = self.cache.get(path)
        if hit and hit[0] == key:
            return hit[1]
        problems = []
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            doc = memfile.parse(text)
            found = memfile.problems(doc, file_name=os.path.basename(path))
            if found:
                problems.append(f"{path}: memfile.problems: {found}")
            if doc.category != category:
                problems.append(f"{path}: category {doc.category!r} in folder {category}/")
        except Exception as e:  # a truncated or broken file
            problems.append(f"{path}: does not parse: {e.__class__.__name__}: {e}")
        self.cache[path] = (key, problems)
        return problems

    def check(self, final: bool = False) -> tuple[list[str], dict]:
        """(violations, facts). `final`: the work is done, so transient states are violations too."""
        from memcurate.curator.candidates import staging
        from memcurate.curator.categories import CATEGORIES
        from memcurate.curator.memory import memory_md

        v: list[str] = []
        mem = self.live.memory
        files: dict[tuple[str, str], str] = {}
        for cat in CATEGORIES:
            folder = os.path.join(mem, cat)
            try:
                names = os.listdir(folder)
            except FileNotFoundError:
                continue
            for name in names:
                if name.startswith(".") or not name.endswith(".md"):
                    continue
                path = os.path.join(folder, name)
                files[(cat, name[:-3])] = path
                v += self._memory_file(path, cat)
        listed: list[tuple[str, str]] = []
        md = memory_md.memory_md_path(mem)
        if os.path.exists(md):
            try:
                with open(md, encoding="utf-8") as f:
                    parsed = memory_md.parse(f.read())
                listed = [(e.category, e.id) for s in parsed.sections.values() for e in s.entries]
                usage = memory_md.usage(mem, self.cfg).as_dict()
                for name, u in usage["sections"].items():
                    if u["used"] > u["budget"]:
                        v.append(
                            f"MEMORY.md: section {name} holds {u['used']} entries, budget {u['budget']}"
                        )
                t = usage["total"]
                if t["lines"] > t["max_lines"] or t["chars"] > t["max_chars"]:
                    v.append(
                        f"MEMORY.md: {t['lines']} lines, {t['chars']} characters: over its limits"
                    )
            except Exception as e:
                v.append(f"MEMORY.md: does not parse: {e.__class__.__name__}: {e}")
        if len(listed) != len(set(listed)):
            v.append("MEMORY.md: an entry is listed twice")
        archived: list[tuple[str, str]] = []
        for cat in CATEGORIES:
            try:
                entries = [(cat, e.id) for e in memory_md.read_archive(mem, cat)]
            except Exception as e:
                v.append(f"archive/{cat}.md: unreadable: {e.__class__.__name__}: {e}")
                continue
            if len(entries) != len(set(entries)):
                v.append(f"archive/{cat}.md: an entry is listed twice")
            archived += entries
        for key in listed:
            if key not in files:
                v.append(f"MEMORY.md lists {key[0]}/{key[1]}.md, which does not exist")
        both = set(listed) & set(archived)
        unlisted = [k for k in files if k not in set(listed) and k not in set(archived)]
        # Transient by design between the two writes of a save (memory file, archive, MEMORY.md):
        # a resumed save finishes them. When the work is done, they are violations.
        if final and both:
            v.append(
                f"{len(both)} entries both in MEMORY.md and in an archive after the work is done"
            )
        if final and unlisted:
            v.append(
                f"{len(unlisted)} memory files listed neither in MEMORY.md nor in an archive: "
                f"{sorted(unlisted)[:3]}"
            )
        states: dict[tuple[str, str], str] = {}
        for tid in staging.triage_ids(self.live.data):
            try:
                for cat, rec in staging.category_states(self.live.data, tid).items():
                    states[(tid, cat)] = rec["state"]
                    if (
                        rec["state"] == "saved"
                        and rec.get("path")
                        and not os.path.exists(rec["path"])
                    ):
                        v.append(f"{tid}/{cat} is saved, but its file {rec['path']} does not exist")
            except staging.StagingError as e:
                v.append(f"staging: {e}")
        tmp = {
            where: [
                os.path.relpath(os.path.join(r, f), top)
                for r, _, fs in os.walk(top)
                for f in fs
                if f.startswith(".") and f.endswith(".tmp")
            ]
            for where, top in (("memory", mem), ("data", self.live.data))
        }
        tmp_mem, tmp_data = len(tmp["memory"]), len(tmp["data"])
        facts = {
            "files": len(files),
            "listed": len(listed),
            "archived": len(archived),
            "both": len(both),
            "unlisted": len(unlisted),
            "tmp_memory": tmp_mem,
            "tmp_data": tmp_data,
            "tmp_names": tmp,
            "states": states,
            "pending": sum(1 for s in states.values() if s in staging.PENDING),
        }
        return v, facts

    def snapshot(self) -> dict:
        """What a run made: memory files without their created/updated stamps, MEMORY.md, archives."""
        mem = self.live.memory
        out: dict[str, str] = {}
        for root, dirs, fs in os.walk(mem):
            dirs.sort()
            for f in sorted(fs):
                if f.startswith("."):
                    continue
                path = os.path.join(root, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    out[os.path.relpath(path, mem)] = _STAMP.sub(r"\1: -", fh.read())
        return out


def ids_by_category(snap: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for rel in snap:
        parts = rel.split(os.sep)
        if len(parts) == 2 and parts[0] != "archive":
            out.setdefault(parts[0], []).append(parts[1][:-3])
    return {k: sorted(v) for k, v in sorted(out.items())}


def compare(ref: dict, got: dict) -> list[str]:
    out = []
    ri, gi = ids_by_category(ref), ids_by_category(got)
    for cat in sorted(set(ri) | set(gi)):
        a, b = set(ri.get(cat, [])), set(gi.get(cat, []))
        if a != b:
            out.append(
                f"{cat}: ids differ from the clean run: missing {sorted(a - b)[:3]}, extra {sorted(b - a)[:3]}"
            )
    for rel in sorted(set(ref) | set(got)):
        if rel in ref and rel in got and ref[rel] != got[rel]:
            out.append(f"{rel}: content differs from the clean run")
    return out


def stage_work(live: Live, copies: int, seed: int) -> dict:
    """`copies` demo transcripts (new topics, light edits, repeats), staged by the real `memcurate triage`."""
    raw = open(B.DEMO, encoding="utf-8").read()
    folder = os.path.join(live.work, "transcripts")
    os.makedirs(folder, exist_ok=True)
    rng = random.Random(seed)
    paths, kinds = [], {"new topic": 0, "light edit": 0, "repeat": 0}
    codes: list[str] = []
    for i in range(copies):
        r = rng.random()
        if i < 2 or r < 0.6:
            code, light, kind = B.code_word(500 + i), False, "new topic"
            codes.append(code)
        elif r < 0.8:
            code, light, kind = rng.choice(codes), True, "light edit"
        else:
            code, light, kind = rng.choice(codes), False, "repeat"
        kinds[kind] += 1
        sid = B.session_id(i, seed)
        path = os.path.join(folder, f"{sid}.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.write(B.vary_demo(raw, sid, code, light=light, hours=i))
        paths.append(path)
    code, out, err, _ = live.run("triage", "--json", *paths)
    if code != 0:
        B.die(PROG, f"memcurate triage failed ({code}): {err.strip()[:800]}")
    reports = json.loads(out)["triages"]
    staged = sum(1 for r in reports if r["status"] == "staged")
    cats = sum(1 for r in reports for c in r["categories"] if c["triggered"])
    if staged != copies:
        B.die(PROG, f"only {staged} of {copies} copies were staged")
    return {"copies": copies, "kinds": kinds, "categories": cats}


def status(live: Live) -> dict:
    code, out, err, _ = live.run("status", "--json")
    if code != 0:
        B.die(PROG, f"memcurate status failed ({code}): {err.strip()[:500]}")
    return json.loads(out)


def child(args) -> int:
    info = B.check_engine(PROG)
    from memcurate.curator import config

    t_start = time.perf_counter()
    work = tempfile.mkdtemp(prefix="memcurate-crash-bench-", dir=args.workdir)
    B.isolate_home(work)
    rng = random.Random(args.seed)
    say = B.say
    violations: list[dict] = []
    try:
        live = Live(work)
        say(f"memcurate: {live.exe} (memcurate {info['version']}, engine in {info['engine']})")
        work_info = stage_work(live, args.copies, args.seed)
        kinds = ", ".join(f"{v} {k}" for k, v in work_info["kinds"].items())
        say(
            f"staged {work_info['copies']} demo copies ({kinds}):"
            f" {work_info['categories']} categories to draft and save"
        )
        shutil.copytree(live.data, live.template, symlinks=True)
        checker = Checker(live, config.load(live.project, live.data))

        # -- the clean reference: uninterrupted runs of the same staged work ------------------
        ref = None
        ref_summary = None
        durations = []
        for _k in range(args.clean_runs):
            live.reset()
            code, out, err, wall = live.run("--auto-approve", "--json")
            if code != 0:
                B.die(PROG, f"a clean run failed ({code}): {err.strip()[:800]}")
            durations.append(wall)
            snap = checker.snapshot()
            if ref is None:
                ref, ref_summary = snap, json.loads(out)
                ref_status = status(live)
                v, ref_facts = checker.check(final=True)
                if v:
                    B.die(
                        PROG,
                        "the clean run itself breaks the invariants:\n  " + "\n  ".join(v[:10]),
                    )
            elif compare(ref, snap):
                say(
                    "warning: two clean runs of the same work differ: "
                    + "; ".join(compare(ref, snap)[:3])
                )
        # a run with nothing left to do: the floor of every run (start, imports, a look at staging)
        idle = [live.run("--auto-approve")[3] for _ in range(3)]
        firsts = []
        for _ in range(3):
            live.reset()
            firsts.append(live.time_to_first_state())
        t_full, t_idle, t_first = B.median(durations), B.median(idle), B.median(firsts)
        counts = {k: len(ref_summary[k]) for k in ("created", "updated", "noop", "deleted")}
        ref_ids = ids_by_category(ref)
        say(
            f"clean run: {t_full:.2f} s (median of {len(durations)}); idle run {t_idle:.2f} s; "
            f"first state written after {t_first:.2f} s; "
            + ", ".join(f"{k} {v}" for k, v in counts.items())
            + f"; {sum(len(v) for v in ref_ids.values())} "
            f"memory files, by state {ref_status['by_state']}"
        )
        ref_states = ref_facts["states"]
        ref_left = [
            f"{x['triage']}/{x['category']} ({k}): "
            + (x.get("error") or "; ".join(x.get("issues", []))).replace(
                live.memory, "<memory root>"
            )
            for k in ("conflicts", "blocked", "failed")
            for x in ref_summary[k]
        ]
        if ref_status["pending"]:
            say(
                f"ENGINE PROBLEM: the clean run leaves {ref_status['pending']} categories pending, so does every "
                "run after it (the kills are judged against this end state):"
            )
            for x in ref_left[:10]:
                say(f"  {x[:300]}")

        # -- the kills ------------------------------------------------------------------------
        total = work_info["categories"]
        kills = completed = epochs = 0
        phases = {"startup": 0, "mid-work": 0, "after-work": 0}
        left_in_flight = {s: 0 for s in IN_FLIGHT}
        tmp_max = {"memory": 0, "data": 0}
        tmp_total = {"memory": 0, "data": 0}
        tmp_kinds: dict[str, int] = {}  # where the temp files were left (seen after a kill)
        epoch_reports = []
        delays = []

        def end_epoch(reason: str) -> None:
            nonlocal epochs
            epochs += 1
            code, out, err, wall = live.run("--auto-approve", "--json")
            problems = []
            if code != 0:
                problems.append(f"the run to completion failed ({code}): {err.strip()[:500]}")
            st = status(live)
            if st["pending"] != ref_status["pending"]:
                problems.append(
                    f"status: pending {st['pending']} after the run to completion, "
                    f"the clean run {ref_status['pending']}"
                )
            if st["by_state"] != ref_status["by_state"]:
                problems.append(
                    f"status: by state {st['by_state']}, the clean run {ref_status['by_state']}"
                )
            if st.get("memory_md_error"):
                problems.append(f"status: {st['memory_md_error']}")
            v, facts = checker.check(final=True)
            problems += v + compare(ref, checker.snapshot())
            if facts["states"] != ref_states:
                diff = [
                    k
                    for k in set(facts["states"]) | set(ref_states)
                    if facts["states"].get(k) != ref_states.get(k)
                ]
                problems.append(
                    f"{len(diff)} categories end in another state than in the clean run, e.g. "
                    f"{diff[0]}: {facts['states'].get(diff[0])} vs {ref_states.get(diff[0])}"
                )
            for p in problems:
                violations.append({"epoch": epochs, "when": "end of epoch", "what": p})
            tmp_total["memory"] += facts["tmp_memory"]
            tmp_total["data"] += facts["tmp_data"]
            epoch_reports.append(
                {
                    "epoch": epochs,
                    "ended_by": reason,
                    "violations": len(problems),
                    "tmp_memory": facts["tmp_memory"],
                    "tmp_data": facts["tmp_data"],
                }
            )
            say(
                f"  epoch {epochs} ({reason}): run to completion {wall:.1f} s, pending {st['pending']}, "
                f"same memories as the clean run: {not problems}; kills so far {kills}"
                + (f"; VIOLATIONS: {problems[:3]}" if problems else "")
            )

        live.reset()
        _, facts = checker.check()
        say(
            f"killing `memcurate --auto-approve` at random moments until {args.kills} kills landed mid-run "
            f"(delay uniform in 0..{args.window:g} x the expected length of the run)"
        )
        t_loop = time.perf_counter()
        while kills < args.kills:
            left = sum(1 for k, st in ref_states.items() if facts["states"].get(k) != st)
            if 0 < left < TAIL * total and kills:
                end_epoch(f"{left} of {total} categories left")
                live.reset()
                _, facts = checker.check()
                continue
            expected = t_first + max(0.0, t_full - t_first) * left / max(total, 1)
            delay = rng.uniform(0.0, args.window * expected)
            before = facts["states"]
            p = live.start("--auto-approve")
            try:
                p.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
                p.wait()
            if p.returncode == -signal.SIGKILL:
                kills += 1
                delays.append(delay)
                v, facts = checker.check()
                for x in v:
                    violations.append(
                        {"epoch": epochs + 1, "when": f"kill {kills} at {delay:.2f} s", "what": x}
                    )
                after = facts["states"]
                changed = sum(1 for k, s in after.items() if before.get(k) != s)
                done = facts["states"] == ref_states
                phase = "after-work" if done else ("mid-work" if changed else "startup")
                phases[phase] += 1
                for s in set(after.values()) & set(IN_FLIGHT):
                    left_in_flight[s] += 1
                tmp_max["memory"] = max(tmp_max["memory"], facts["tmp_memory"])
                tmp_max["data"] = max(tmp_max["data"], facts["tmp_data"])
                for where, names in facts["tmp_names"].items():
                    for n in names:
                        kind = re.sub(r"[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}", "<triage>", n)
                        kind = re.sub(r"\.\d+\.\d+\.tmp$", ".<pid>.<n>.tmp", kind)
                        tmp_kinds[f"{where}: {kind}"] = tmp_kinds.get(f"{where}: {kind}", 0) + 1
                if v:
                    say(f"  kill {kills}: VIOLATIONS: {v[:3]}")
                if kills % 20 == 0:
                    say(
                        f"  {kills} kills ({time.perf_counter() - t_loop:.0f} s): {phases['mid-work']} mid-work, "
                        f"{phases['startup']} before any work, {phases['after-work']} after the work; "
                        f"{len(violations)} violations"
                    )
                if done:
                    end_epoch("all work saved before a kill")
                    live.reset()
                    _, facts = checker.check()
            elif p.returncode == 0:
                completed += 1
                end_epoch("a run finished")
                live.reset()
                _, facts = checker.check()
            else:
                violations.append(
                    {
                        "epoch": epochs + 1,
                        "when": "a run",
                        "what": f"exit status {p.returncode}: {live.stderr_tail().strip()[:800]}",
                    }
                )
                say(f"  a run exited {p.returncode}: {live.stderr_tail().strip()[:300]}")
                _, facts = checker.check()
        if facts["files"] or facts["states"] != {k: "triaged" for k in ref_states}:
            end_epoch("kills done")
        elapsed = time.perf_counter() - t_start
        loop_s = time.perf_counter() - t_loop
    finally:
        if args.keep:
            say(f"kept the work folder: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    clean_ok = ref_status["pending"] == 0
    ok = not violations and kills >= args.kills
    say()
    say(
        f"memcurate crash benchmark — memcurate {info['version']}, Python {info['python']}, "
        f"{B.machine()['system']} {B.machine()['machine']}, {os.cpu_count()} CPUs, {elapsed:.0f} s"
    )
    say()
    rows = [
        ("staged work", f"{work_info['copies']} demo copies, {work_info['categories']} categories"),
        (
            "clean run",
            f"{t_full:.2f} s (first state after {t_first:.2f} s); "
            f"{', '.join(f'{k} {v}' for k, v in counts.items())}; "
            f"{sum(len(v) for v in ref_ids.values())} memory files",
        ),
        ("SIGKILLs that landed mid-run", f"{kills} (target >= {args.kills})"),
        ("  ... before any state changed", str(phases["startup"])),
        ("  ... with work done and work left", str(phases["mid-work"])),
        ("  ... after the last save", str(phases["after-work"])),
        ("kills leaving a category mid-draft", str(sum(left_in_flight[s] for s in IN_FLIGHT[:3]))),
        ("kills leaving a save half-done (approved)", str(left_in_flight["approved"])),
        ("runs that finished before their kill", str(completed)),
        ("epochs (fresh copies of the staged work)", str(epochs)),
        (
            "kill delay median (range)",
            f"{B.median(delays):.2f} s ({min(delays):.2f}..{max(delays):.2f})" if delays else "-",
        ),
        (
            "temp files left (.*.tmp), max after a kill",
            f"memory root {tmp_max['memory']}, data dir {tmp_max['data']}",
        ),
        (
            "temp files left at epoch ends, total",
            f"memory root {tmp_total['memory']}, data dir {tmp_total['data']}",
        ),
        ("violations", f"{len(violations)} (must be 0)  {'PASS' if ok else 'FAIL'}"),
        (
            "clean run leaves pending",
            f"{ref_status['pending']} (must be 0)  {'PASS' if clean_ok else 'FAIL'}",
        ),
        ("time", f"{loop_s:.0f} s in the kill loop, {elapsed:.0f} s in all"),
    ]
    w = max(len(a) for a, _ in rows)
    for a, b in rows:
        say(f"{a:<{w}}  {b}")
    if tmp_kinds:
        top = sorted(tmp_kinds.items(), key=lambda kv: -kv[1])
        say(
            "temp files seen after kills (name pattern: times seen): "
            + "; ".join(f"{k}: {v}" for k, v in top[:8])
        )
    for x in violations[:20]:
        say(f"  violation (epoch {x['epoch']}, {x['when']}): {x['what'][:400]}")
    for x in ref_left[:10]:
        say(f"  left pending by the clean run: {x[:300]}")
    say(
        f"crash safety: {'PASS' if ok else 'FAIL'}; clean run finishes the work: {'PASS' if clean_ok else 'FAIL'}; "
        f"overall: {'PASS' if ok and clean_ok else 'FAIL'}"
    )
    doc = {
        "bench": "crash",
        "created": B.now_utc(),
        "args": vars(args),
        "machine": B.machine(),
        "memcurate": {**info, "source_hash": B.source_hash(), "git_commit": B.git_commit()},
        "work": work_info,
        "clean_run_s": round(t_full, 3),
        "idle_run_s": round(t_idle, 3),
        "first_state_s": round(t_first, 3),
        "clean": {"summary_counts": counts, "by_state": ref_status["by_state"], "ids": ref_ids},
        "kills": kills,
        "phases": phases,
        "left_in_flight": left_in_flight,
        "completed_runs": completed,
        "epochs": epoch_reports,
        "delays_s": [round(d, 3) for d in delays],
        "tmp_max": tmp_max,
        "tmp_at_epoch_ends": tmp_total,
        "tmp_kinds": tmp_kinds,
        "violations": violations,
        "crash_safety_pass": ok,
        "clean_run_pending": ref_status["pending"],
        "clean_run_left": ref_left,
        "pass": ok and clean_ok,
        "elapsed_s": round(elapsed, 1),
        "kill_loop_s": round(loop_s, 1),
    }
    say(f"figures written to {B.write_results(args.json_out, doc)}")
    return 0 if (ok and clean_ok) or not args.strict else 1


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(
        description="SIGKILL `memcurate --auto-approve` and check nothing breaks "
        "(see bench/README.md)."
    )
    ap.add_argument(
        "--quick", action="store_true", help="for CI: 12 kills over 8 demo copies, one clean run"
    )
    ap.add_argument(
        "--kills", type=int, default=0, help="SIGKILLs that must land mid-run (default 200)"
    )
    ap.add_argument("--copies", type=int, default=0, help="demo copies staged (default 30)")
    ap.add_argument(
        "--window",
        type=float,
        default=1.1,
        help="kill delay: uniform in 0..WINDOW x the expected length of the run (default 1.1)",
    )
    ap.add_argument(
        "--clean-runs", type=int, default=0, help="uninterrupted reference runs (default 2)"
    )
    B.common_args(ap, RESULTS, strict="exit 1 on a violation (default: exit 0, print FAIL)")
    args = ap.parse_args(argv)
    args.kills = args.kills or (12 if args.quick else 200)
    args.copies = args.copies or (8 if args.quick else 30)
    args.clean_runs = args.clean_runs or (1 if args.quick else 2)
    if args.kills < 1 or args.copies < 2 or args.clean_runs < 1 or args.window <= 0:
        ap.error("--kills >= 1, --copies >= 2, --clean-runs >= 1, --window > 0")
    if not B.in_bench_venv():
        B.reexec_in_venv(__file__, argv, reinstall=args.reinstall)
    return child(args)


if __name__ == "__main__":
    sys.exit(main())
