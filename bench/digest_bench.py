"""The session digest (curator/capture/digest.py) over the shared transcripts: its size, make-up and speed.

    python bench/digest_bench.py [--quick] [--max-chars N] [-v]

Digests every transcript under ../shared/transcripts and ../shared/transcripts-more whole (as a first
pass over a session would), in this process, from this checkout (run it with PYTHONPATH=dev). Prints:
digest characters per MB of transcript and the token estimate (characters / 4) against the issue's
budget of 10,000 input tokens per MB for a whole request (the digest alone must stay well under it);
the share of entries, and of characters, by kind; segments and the largest one against `--max-chars`;
the time per MB (the best of 3 passes; 1 with --quick, which also reads only the 12 largest sessions).
Figures go to bench/results/digest_bench.json. Without the shared folder it prints SKIPPED and exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
RESULTS = REPO / "bench" / "results"
TOKEN_BUDGET = 10000  # input tokens per MB of transcript, for a whole request (issue 23)
sys.path.insert(0, str(REPO / "dev"))

from memcurate.curator import config  # noqa: E402
from memcurate.curator.capture.digest import digest  # noqa: E402


def transcripts() -> list[Path]:
    return sorted(
        p
        for folder in ("transcripts", "transcripts-more")
        for p in (SHARED / folder).rglob("*.jsonl")
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the 12 largest sessions, one pass")
    ap.add_argument(
        "--max-chars", type=int, default=60000, help="the segment bound (default 60000)"
    )
    ap.add_argument("-v", "--verbose", action="store_true", help="a row per transcript")
    args = ap.parse_args()
    files = transcripts()
    if not files:
        print(f"SKIPPED: no transcripts under {SHARED}")
        return 0
    if args.quick:
        files = sorted(files, key=lambda p: p.stat().st_size)[-12:]
    cfg = config.load(tempfile.mkdtemp(prefix="digest-bench-"))
    passes = 1 if args.quick else 3
    size = sum(p.stat().st_size for p in files)
    mb = size / 1e6
    kinds: Counter = Counter()
    kind_chars: Counter = Counter()
    chars = segments = largest = 0
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        results = [(p, digest(str(p), cfg, max_chars=args.max_chars)) for p in files]
        best = min(best, time.perf_counter() - start)
    for p, d in results:
        chars += sum(len(s.text) for s in d.segments)
        segments += len(d.segments)
        largest = max([largest, *(len(s.text) for s in d.segments)])
        kinds.update(d.kinds())
        for e in d.entries:
            kind_chars[e.kind] += len(e.render())
        if args.verbose:
            per = len(d.text) / (p.stat().st_size / 1e6) if p.stat().st_size else 0
            print(
                f"{p.stat().st_size / 1e6:7.2f} MB {p.parent.name[-24:]:>24}/{p.stem[:12]:12} {len(d.entries):5} "
                f"entries {len(d.segments):3} seg {per:9,.0f} chars/MB"
            )
    per_mb = chars / mb
    total = sum(kinds.values()) or 1
    total_chars = sum(kind_chars.values()) or 1
    print(f"{len(files)} transcripts, {mb:.1f} MB, max_chars {args.max_chars:,}")
    print(
        f"digest: {per_mb:,.0f} chars per MB, ~{per_mb / 4:,.0f} tokens per MB "
        f"({'PASS' if per_mb / 4 <= TOKEN_BUDGET else 'FAIL'}: the digest alone within {TOKEN_BUDGET:,})"
    )
    print(
        f"segments: {segments}, largest {largest:,} chars "
        f"({'PASS' if largest <= args.max_chars else 'FAIL'}: within the bound)"
    )
    print(f"time: {best / mb * 1000:.0f} ms per MB (best of {passes})")
    print("entries by kind:      share of entries   share of characters")
    for kind, n in kinds.most_common():
        print(
            f"  {kind:14} {n:6}   {n / total:6.1%}            {kind_chars[kind] / total_chars:6.1%}"
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = {
        "transcripts": len(files),
        "mb": round(mb, 3),
        "max_chars": args.max_chars,
        "chars_per_mb": round(per_mb),
        "tokens_per_mb": round(per_mb / 4),
        "segments": segments,
        "largest_segment": largest,
        "ms_per_mb": round(best / mb * 1000, 1),
        "entries": dict(kinds),
        "chars_by_kind": dict(kind_chars),
        "quick": args.quick,
    }
    (RESULTS / "digest_bench.json").write_text(json.dumps(out, indent=2) + "\n")
    return 0 if per_mb / 4 <= TOKEN_BUDGET and largest <= args.max_chars else 1


if __name__ == "__main__":
    sys.exit(main())
