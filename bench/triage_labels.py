"""The hand labels of tests/data/triage_labels.json: reading them, and folding a reviewer's file in.

    python bench/triage_labels.py FILE --part tune|holdout [--source transcripts-more]

Each label's key is a path under ../shared/ ("transcripts/<folder>/<file>" or
"transcripts-more/<folder>/<file>"); its `part` says whether the cues may be
tuned on it. Folding reads a reviewer's {"labels": {"<folder>/<file>": {...}}},
checks every category is labelled, and adds each label (with `why`, `turns`,
`notes`) under its shared path and part; a key already there is replaced.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "dev"))

from memcurate.curator.categories import NAMES  # noqa: E402

LABELS = ROOT / "tests" / "data" / "triage_labels.json"
SHARED = ROOT.parent / "shared"
PARTS = ("tune", "holdout")


def load(path: Path = LABELS) -> dict[str, dict]:
    """key -> label, every label checked: a part, a boolean per category."""
    labels = json.loads(path.read_text())["labels"]
    for key, label in labels.items():
        if label.get("part") not in PARTS:
            raise ValueError(f"{key}: part must be one of {PARTS}")
        missing = [n for n in NAMES if not isinstance(label.get(n), bool)]
        if missing:
            raise ValueError(f"{key}: no true/false label for {', '.join(missing)}")
    return labels


def fold(src: Path, part: str, source: str, path: Path = LABELS) -> int:
    """Add the labels of a reviewer's file to the labels file; returns how many."""
    doc = json.loads(path.read_text())
    new = json.loads(src.read_text())["labels"]
    for rel, label in new.items():
        missing = [n for n in NAMES if not isinstance(label.get(n), bool)]
        if missing:
            raise ValueError(f"{src}: {rel} has no true/false label for {', '.join(missing)}")
        doc["labels"][f"{source}/{rel}"] = {"part": part, **label}
    doc["labels"] = dict(sorted(doc["labels"].items()))
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return len(new)


def main() -> int:
    ap = argparse.ArgumentParser(
        description="Fold a reviewer's label file into tests/data/triage_labels.json."
    )
    ap.add_argument("file", type=Path)
    ap.add_argument("--part", choices=PARTS, required=True)
    ap.add_argument(
        "--source",
        default="transcripts-more",
        help="the folder under ../shared/ the sessions are in",
    )
    a = ap.parse_args()
    n = fold(a.file, a.part, a.source)
    print(f"{n} labels folded into {LABELS} as {a.part}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
