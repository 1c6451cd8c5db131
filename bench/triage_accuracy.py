"""Triage precision and recall per category against the hand labels in tests/data/triage_labels.json.

    python bench/triage_accuracy.py [-v]

Runs the real reader and triage (no hook process) on every labelled transcript
in ../shared/transcripts, whole file, as `memcurate triage` would.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from curator import config  # noqa: E402
from curator.capture.transcript import TranscriptReader  # noqa: E402
from curator.capture.triage import Rules, triage_entries  # noqa: E402
from curator.categories import NAMES  # noqa: E402

SHARED = ROOT.parent / "shared" / "transcripts"
LABELS = ROOT / "tests" / "data" / "triage_labels.json"


def main() -> int:
    if not SHARED.is_dir():
        print(f"SKIPPED: {SHARED} not found")
        return 0
    verbose = "-v" in sys.argv
    rules = Rules(config.load(tempfile.mkdtemp()))
    labels = json.loads(LABELS.read_text())["labels"]
    counts = {n: [0, 0, 0] for n in NAMES}  # tp, fp, fn
    for rel, truth in sorted(labels.items()):
        path = SHARED / rel
        res, _ = triage_entries(TranscriptReader(path), rules, path=str(path), summary=True,
                                subagent=path.name.startswith("agent-"))
        marks = []
        for n in NAMES:
            got, want = res[n]["triggered"], truth[n]
            counts[n][0] += got and want
            counts[n][1] += got and not want
            counts[n][2] += want and not got
            marks.append(f"{n[:5]} {res[n]['score']:.2f}{'TP' if got and want else 'FP' if got else 'FN' if want else '  '}")
        if verbose:
            print(f"{rel[-40:]:40}  " + "  ".join(marks))
    print(f"{'category':16} {'precision':>9} {'recall':>7}   tp  fp  fn")
    total = [0, 0, 0]
    for n, (tp, fp, fn) in counts.items():
        p = tp / (tp + fp) if tp + fp else 1.0
        r = tp / (tp + fn) if tp + fn else 1.0
        print(f"{n:16} {p:9.2f} {r:7.2f}  {tp:3} {fp:3} {fn:3}")
        total = [a + b for a, b in zip(total, (tp, fp, fn), strict=True)]
    tp, fp, fn = total
    p, r = tp / (tp + fp), tp / (tp + fn)
    print(f"{'micro':16} {p:9.2f} {r:7.2f}  {tp:3} {fp:3} {fn:3}   F1 {2 * p * r / (p + r):.2f}"
          f"   ({len(labels)} transcripts)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
