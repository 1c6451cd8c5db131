"""Triage precision, recall and F1 per category against the hand labels, tune and holdout parts side by side.

    python bench/triage_accuracy.py [-v]

Runs the real reader and triage (no hook process) on every labelled transcript
under ../shared/ (whole file, as `memcurate triage` would). The labels
(tests/data/triage_labels.json, see bench/triage_labels.py) each say their
part: `tune`, the sessions the cues were tuned on, and `holdout`, sessions of
other projects never tuned on. A part with no labels, or whose transcripts are
absent, is skipped and says so. `-v` prints a row per session.
"""

from __future__ import annotations

import sys
import tempfile

from triage_labels import PARTS, SHARED, load

from memcurate.curator import config
from memcurate.curator.capture.transcript import TranscriptReader
from memcurate.curator.capture.triage import Rules, triage_entries
from memcurate.curator.categories import NAMES


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def score_part(labels: dict[str, dict], rules: Rules, verbose: bool) -> dict[str, list[int]]:
    """Per category [tp, fp, fn] over the labelled sessions given."""
    counts = {n: [0, 0, 0] for n in NAMES}
    for key, truth in sorted(labels.items()):
        path = SHARED / key
        res, _ = triage_entries(
            TranscriptReader(path),
            rules,
            path=str(path),
            summary=True,
            subagent=path.name.startswith("agent-"),
        )
        marks = []
        for n in NAMES:
            got, want = res[n]["triggered"], truth[n]
            counts[n][0] += got and want
            counts[n][1] += got and not want
            counts[n][2] += want and not got
            mark = "TP" if got and want else "FP" if got else "FN" if want else "  "
            marks.append(f"{n[:5]} {res[n]['score']:.2f}{mark}")
        if verbose:
            print(
                f"{truth['part']:7} {path.parent.name[-22:]:>22}/{path.stem[:16]:16}  "
                + "  ".join(marks)
            )
    return counts


def main() -> int:
    verbose = "-v" in sys.argv
    rules = Rules(config.load(tempfile.mkdtemp()))
    labels = load()
    results: dict[str, tuple[dict, int]] = {}
    for part in PARTS:
        mine = {k: v for k, v in labels.items() if v["part"] == part}
        present = {k: v for k, v in mine.items() if (SHARED / k).is_file()}
        if not mine:
            print(f"{part}: SKIPPED, no labels")
        elif not present:
            print(f"{part}: SKIPPED, its {len(mine)} transcripts are not under {SHARED}")
        else:
            if len(present) < len(mine):
                print(
                    f"{part}: {len(mine) - len(present)} of {len(mine)} labelled transcripts not found, left out"
                )
            results[part] = (score_part(present, rules, verbose), len(present))
    if not results:
        return 0
    parts = list(results)
    head = f"{'':16}" + "".join(f" | {p + f' ({results[p][1]} sessions)':^29}" for p in parts)
    print(head)
    print(f"{'category':16}" + " | prec  rec   F1    tp  fp  fn" * len(parts))
    totals = {p: [0, 0, 0] for p in parts}
    for n in NAMES:
        row = f"{n:16}"
        for p in parts:
            c = results[p][0][n]
            totals[p] = [a + b for a, b in zip(totals[p], c, strict=True)]
            row += " | {:.2f} {:.2f} {:.2f}  {:3} {:3} {:3}".format(*prf(*c), *c)
        print(row)
    print(
        f"{'micro':16}"
        + "".join(
            " | {:.2f} {:.2f} {:.2f}  {:3} {:3} {:3}".format(*prf(*totals[p]), *totals[p])
            for p in parts
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
