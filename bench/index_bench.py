"""Candidate search over 10,000 memories: index build, lookup medians, lookups right after hand edits.

    python bench/index_bench.py [--memories N] [--lookups N] [--edits N] [--seed N] [--keep] [--json-out PATH]

Builds N memory files (default 10,000) across the six categories in a
temporary memory root (decisions the most, session summaries the least),
from a fixed vocabulary with a Zipf-like spread of word frequencies and a
long tail of project-specific names (deterministic seed), then times the
real `curator.memory.index.MemoryIndex`:

- the initial index build (`refresh()` of an empty index),
- a full `refresh()` when nothing changed,
- the first lookup of a new index object on the existing database (what a
  new process pays: signatures loaded, the category checked whole),
- in each freshness mode, inotify (the default on Linux) and "stat every
  call" (`watch=False`, what runs where inotify does not exist), after the
  index has warmed up as a long-running TUI or runner would:
  - the median and p90 of >= 200 `candidates()` lookups of drafts (half are
    rewordings of an existing memory, which must come back first),
  - the median and p90 of lookups right after a hand edit of one file of the
    queried category (in place, the way an editor that truncates and writes
    does; the edit adds a word the lookup searches for, so the bench checks
    the edit was noticed).

Target: lookup median <= 20 ms, in both modes, every hand edit noticed,
identical drafts first. Prints a table and PASS/FAIL, writes
bench/results/index.json. Exits 0 whatever the verdict (`--strict`: 1 on FAIL).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "dev"))

from memcurate.curator.categories import CATEGORIES  # noqa: E402
from memcurate.curator.memory import memfile  # noqa: E402
from memcurate.curator.memory.index import MemoryIndex  # noqa: E402
from memcurate.curator.memory.store import MemoryStore  # noqa: E402

TARGET_MEDIAN_MS = 20.0
SHARE = {
    "decision": 0.28,
    "constraint": 0.20,
    "runbook": 0.20,
    "tech_debt": 0.14,
    "preference": 0.10,
    "session_summary": 0.08,
}

WORDS = """
api auth token session cache redis postgres sqlite migration schema index query latency timeout retry backoff
queue worker job scheduler cron deploy release rollback canary staging production cluster node pod container
docker image registry build pipeline ci lint test fixture mock snapshot coverage flaky parallel shard
config env secret vault key rotation certificate tls proxy gateway router endpoint handler middleware
request response header cookie cors csrf jwt oauth login logout user account role permission policy audit
log metric trace span alert dashboard oncall incident outage postmortem runbook symptom restart memory leak
cpu disk quota limit rate throttle burst budget cost billing invoice payment refund webhook event stream
kafka topic partition consumer producer offset lag backpressure batch bulk import export csv json yaml
parser serializer encoding utf unicode locale timezone clock drift ntp date format version semver
dependency upgrade pin lockfile package wheel venv python typescript node rust go java kotlin swift
frontend backend mobile desktop browser render component state store reducer hook effect layout css
theme dark mode accessibility keyboard shortcut screen reader contrast font icon asset bundle webpack vite
terraform ansible helm kubernetes namespace ingress service mesh sidecar dns cdn edge region zone replica
failover backup restore snapshot retention archive compliance gdpr privacy consent encryption hash salt
password reset email smtp template notification push sms queue dedupe idempotency key lock mutex race
deadlock transaction isolation commit rollback savepoint wal vacuum analyze explain plan join filter sort
pagination cursor offset search fulltext ranking bm25 embedding vector similarity threshold score label
model prompt context window budget truncate summary review approve reject edit draft verify block advisory
refactor cleanup debt todo hack workaround shim adapter interface protocol contract boundary module package
monorepo workspace branch merge rebase squash commit hook precommit format black ruff mypy pytest tox nox
benchmark profile flamegraph hotpath allocation gc pause throughput concurrency thread async await future
signal handler shutdown graceful drain healthcheck readiness liveness probe startup warmup coldstart
feature flag rollout experiment cohort metric funnel retention churn growth onboarding tutorial docs readme
""".split()

VERBS = """use prefer avoid keep move split merge replace drop add remove cache retry pin upgrade document
measure limit batch stream validate reject sanitize escape encode decode rotate rename migrate deprecate
guard wrap inline extract isolate mock stub seed warm flush compact index shard""".split()

GLUE = """because so that since when unless after before while instead of until every each only always never
the a for with in on at from into over under between across per via and or but""".split()


def zipf_weights(n: int, s: float = 1.05) -> list[float]:
    return [1.0 / (i + 1) ** s for i in range(n)]


class Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        syll = [
            "ka",
            "lo",
            "mi",
            "ne",
            "ru",
            "ta",
            "vi",
            "zo",
            "pe",
            "qua",
            "dri",
            "sten",
            "bor",
            "fel",
            "gar",
            "hux",
            "jin",
            "plo",
            "trem",
            "wex",
        ]
        # a long tail of project-specific names (services, tables, modules) that make memories distinct
        self.names = sorted(
            {"".join(self.r.choice(syll) for _ in range(self.r.randint(2, 3))) for _ in range(4000)}
        )
        self.r.shuffle(self.names)
        self.vocab = WORDS + self.names
        self.w = zipf_weights(len(self.vocab))

    def words(self, n: int) -> list[str]:
        return self.r.choices(self.vocab, weights=self.w, k=n)

    def sentence(self, lo: int = 8, hi: int = 18) -> str:
        n = self.r.randint(lo, hi)
        out = []
        for w in self.words(n):
            out.append(w)
            if self.r.random() < 0.25:
                out.append(self.r.choice(GLUE))
        if self.r.random() < 0.5:
            out.insert(0, self.r.choice(VERBS))
        s = " ".join(out)
        return s[0].upper() + s[1:] + "."

    def doc(self, category: str, id: str) -> memfile.MemoryDoc:
        cat = CATEGORIES[category]
        title_words = [self.r.choice(VERBS)] + self.words(self.r.randint(4, 8))
        title = " ".join(title_words).capitalize()[: memfile.TITLE_MAX]
        description = self.sentence(10, 18)[: memfile.DESCRIPTION_MAX]
        tags = sorted({w for w in self.words(self.r.randint(1, 4))})[:12]
        sections = {}
        for name in cat.required + tuple(o for o in cat.optional if self.r.random() < 0.4):
            sections[name] = " ".join(self.sentence() for _ in range(self.r.randint(1, 4)))
        return memfile.MemoryDoc(
            id=id,
            category=category,
            title=title,
            description=description,
            tags=tags,
            created="2026-01-02T03:04:05Z",
            updated="2026-01-02T03:04:05Z",
            sources=[{"session": f"s{self.r.randint(1, 500)}", "turns": [1, 2]}],
            body=memfile.join_sections(sections),
        )

    def reword(self, doc: memfile.MemoryDoc, new_id: str) -> memfile.MemoryDoc:
        """A draft saying mostly the same thing: a third of the body words dropped, a few new ones added."""

        def mangle(text: str) -> str:
            out = [w for w in text.split() if self.r.random() > 0.33]
            for _ in range(max(1, len(out) // 8)):
                out.insert(self.r.randrange(len(out) + 1), self.words(1)[0])
            return " ".join(out)

        sections = {k: mangle(v) for k, v in doc.sections.items() if k}
        return memfile.MemoryDoc(
            id=new_id,
            category=doc.category,
            title=mangle(doc.title) or doc.title,
            description=mangle(doc.description) or doc.description,
            tags=doc.tags,
            created=doc.created,
            updated=doc.updated,
            body=memfile.join_sections(sections),
        )


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    k = (len(xs) - 1) * p
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def ms(x: float) -> float:
    return round(x * 1000, 3)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--lookups", type=int, default=240)
    ap.add_argument("--edits", type=int, default=60)
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--workdir", default=None, help="parent of the temporary work folder")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--json-out", default=str(ROOT / "bench" / "results" / "index.json"))
    args = ap.parse_args()

    gen = Gen(args.seed)
    work = Path(tempfile.mkdtemp(prefix="memcurate-index-bench-", dir=args.workdir))
    root = work / "memory"
    db = work / "data" / "index.sqlite"
    try:
        # -- the memory root ------------------------------------------------------------
        t0 = time.perf_counter()
        cats = list(SHARE)
        weights = [SHARE[c] for c in cats]
        by_cat: dict[str, list[memfile.MemoryDoc]] = {c: [] for c in cats}
        for i in range(args.memories):
            c = gen.r.choices(cats, weights=weights)[0]
            d = gen.doc(c, f"{c.replace('_', '-')}-{i:05d}")
            by_cat[c].append(d)
            folder = root / c
            folder.mkdir(parents=True, exist_ok=True)
            # plain writes: the store's fsync per file would only slow the setup down
            (folder / f"{d.id}.md").write_text(memfile.render(d), encoding="utf-8")
        setup_s = time.perf_counter() - t0
        sizes = [p.stat().st_size for p in root.rglob("*.md")]
        store = MemoryStore(root)

        # -- build ------------------------------------------------------------------------
        index = MemoryIndex(db, store)
        t0 = time.perf_counter()
        build = index.refresh()
        build_s = time.perf_counter() - t0
        assert build.indexed == args.memories and not build.broken, build
        time.sleep(2.1)  # let every signature leave the racy window, as on a real disk hours later
        t0 = time.perf_counter()
        again = index.refresh()
        refresh_s = time.perf_counter() - t0
        index.close()

        # -- first lookup of a fresh index object on the existing database --------------------
        probe = gen.doc("decision", "probe")
        reopen = []
        for _ in range(5):
            ix = MemoryIndex(db, store)
            t0 = time.perf_counter()
            ix.candidates("decision", probe)
            reopen.append(time.perf_counter() - t0)
            ix.close()

        # -- lookups, in both freshness modes ----------------------------------------------------
        drafts = []
        for i in range(args.lookups):
            c = gen.r.choices(cats, weights=weights)[0]
            if i % 2 == 0:
                src = gen.r.choice(by_cat[c])
                drafts.append((c, gen.reword(src, f"draft-{i}"), src.id))
            else:
                drafts.append((c, gen.doc(c, f"draft-{i}"), None))
        modes = {}
        edit_no = 0
        for mode, watch in (("watch", None), ("stat", False)):
            index = MemoryIndex(db, store, watch=watch)
            # warm: as a long-running TUI or runner is (the second check starts watching)
            for c in cats:
                index.candidates(c, probe)
                index.candidates(c, probe)
            watching = index._freshness.watcher is not None
            lookups, hits, dup_total = [], 0, 0
            for c, d, src in drafts:
                t0 = time.perf_counter()
                found = index.candidates(c, d)
                lookups.append(time.perf_counter() - t0)
                if src is not None:
                    dup_total += 1
                    hits += bool(found) and found[0].id == src
            exact = []
            for c in cats:  # an identical draft is found first
                d = by_cat[c][len(by_cat[c]) // 2]
                found = index.candidates(c, d)
                exact.append(bool(found) and found[0].id == d.id and found[0].identical)
            after_edit, noticed = [], 0
            for _ in range(args.edits):
                c = gen.r.choices(cats, weights=weights)[0]
                d = gen.r.choice(by_cat[c])
                path = root / c / f"{d.id}.md"
                marker = f"handedit{edit_no}zq"
                edit_no += 1
                text = path.read_text(encoding="utf-8").rstrip("\n") + f" Also {marker} now.\n"
                # in place, as an editor that truncates and writes
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
                t0 = time.perf_counter()
                found = index.candidates(c, f"{marker}\n\n{d.title}")
                after_edit.append(time.perf_counter() - t0)
                noticed += bool(found) and found[0].id == d.id
            index.close()
            modes[mode] = {
                "watching": watching,
                "lookups": lookups,
                "hits": hits,
                "dup_total": dup_total,
                "exact": exact,
                "after_edit": after_edit,
                "noticed": noticed,
            }

        # -- report ------------------------------------------------------------------------------
        per_cat = {c: len(v) for c, v in by_cat.items()}
        db_mib = (
            sum(os.path.getsize(str(db) + s) for s in ("", "-wal") if os.path.exists(str(db) + s))
            / 2**20
        )
        print(
            f"memcurate index bench: {args.memories} memories ({', '.join(f'{c} {n}' for c, n in per_cat.items())}),"
            f" {statistics.median(sizes)} B median file, seed {args.seed}"
        )
        print(
            f"python {platform.python_version()}, sqlite {sqlite3.sqlite_version}, {platform.machine()}, "
            f"{os.cpu_count()} cpus; setup (plain writes) {setup_s:.1f} s; database {db_mib:.1f} MiB"
        )
        print()
        print(f"{'figure':52} {'median ms':>10} {'p90 ms':>9} {'n':>5}")
        rows = [
            ("initial build (refresh of an empty index)", build_s, None, 1),
            ("full refresh, nothing changed", refresh_s, None, 1),
            (
                "first lookup, new index object",
                statistics.median(reopen),
                pct(reopen, 0.9),
                len(reopen),
            ),
        ]
        labels = {"watch": "inotify", "stat": "stat every call"}
        for mode, m in modes.items():
            label = labels[mode] if mode == "stat" or m["watching"] else "inotify unavailable: stat"
            rows.append(
                (
                    f"lookup, {label}",
                    statistics.median(m["lookups"]),
                    pct(m["lookups"], 0.9),
                    len(m["lookups"]),
                )
            )
            rows.append(
                (
                    f"lookup right after a hand edit, {label}",
                    statistics.median(m["after_edit"]),
                    pct(m["after_edit"], 0.9),
                    len(m["after_edit"]),
                )
            )
        for name, med_s, p, n in rows:
            print(
                f"{name:52} {med_s * 1000:10.2f} {'' if p is None else f'{p * 1000:9.2f}':>9} {n:5}"
            )
        print()
        ok = True
        verdicts = []
        for mode, m in modes.items():
            med, emed = statistics.median(m["lookups"]), statistics.median(m["after_edit"])
            good = (
                med * 1000 <= TARGET_MEDIAN_MS
                and emed * 1000 <= TARGET_MEDIAN_MS
                and m["noticed"] == args.edits
                and all(m["exact"])
            )
            ok = ok and good
            verdicts.append(
                f"{labels[mode]}: lookup {med * 1000:.2f} ms, after an edit {emed * 1000:.2f} ms"
            )
            print(
                f"{labels[mode]:16} rewordings found first {m['hits']}/{m['dup_total']}; identical drafts first "
                f"and marked {sum(m['exact'])}/{len(m['exact'])}; hand edits noticed {m['noticed']}/{args.edits}"
            )
        verdict = "PASS" if ok else "FAIL"
        print(
            f"{verdict}: medians {'; '.join(verdicts)} (target <= {TARGET_MEDIAN_MS:.0f} ms in both modes; "
            f"every hand edit noticed; identical drafts first)"
        )

        def fig(xs):
            return {
                "n": len(xs),
                "median": ms(statistics.median(xs)),
                "p90": ms(pct(xs, 0.9)),
                "min": ms(min(xs)),
                "max": ms(max(xs)),
                "samples": [ms(x) for x in xs],
            }

        out = {
            "bench": "index",
            "verdict": verdict,
            "target_median_ms": TARGET_MEDIAN_MS,
            "machine": {
                "python": platform.python_version(),
                "sqlite": sqlite3.sqlite_version,
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
            },
            "command": " ".join(["python bench/index_bench.py", *sys.argv[1:]]),
            "memories": args.memories,
            "per_category": per_cat,
            "seed": args.seed,
            "median_file_bytes": statistics.median(sizes),
            "database_mib": round(db_mib, 2),
            "build_ms": ms(build_s),
            "build_stats": {"indexed": build.indexed, "files": build.files},
            "refresh_unchanged_ms": ms(refresh_s),
            "refresh_unchanged_stats": {"unchanged": again.unchanged},
            "first_lookup_new_index_ms": fig(reopen),
            "modes": {
                mode: {
                    "watching": m["watching"],
                    "lookup_ms": fig(m["lookups"]),
                    "after_edit_ms": fig(m["after_edit"]),
                    "rewordings_found_first": [m["hits"], m["dup_total"]],
                    "identical_found_first": [sum(m["exact"]), len(m["exact"])],
                    "hand_edits_noticed": [m["noticed"], args.edits],
                }
                for mode, m in modes.items()
            },
        }
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {args.json_out}")
        return 1 if args.strict and not ok else 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
