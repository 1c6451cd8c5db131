"""How well the --auto-approve gate keeps what is real: offline drafts of every labelled session, their
confidence, and for each gate how many are saved and how many of those a reviewer labelled real.

    python bench/gate_bench.py [--labels FILE] [-v]

For each project folder of ../shared/transcripts and ../shared/transcripts-more that has hand labels
(tests/data/triage_labels.json), a throwaway project backfills its labelled sessions and drafts them
offline, as `memcurate triage` then `memcurate --auto-approve` would, without saving. Each ready draft
is (session, category, confidence); it is "real" when the reviewer labelled that category true for that
session. A draft of a real category can still be a poor memory (the form checks and `weak` lines
lower its confidence for that); a draft of a category the reviewer found no memory of is always one
a reviewer deletes. Printed per part (tune: the sessions the cues were tuned on; holdout: the rest):
for each gate, the drafts saved, the share of them that are real (precision) and the share of real
drafts saved (recall); the config's default gate is marked.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "dev"))

from memcurate.curator import config  # noqa: E402
from memcurate.curator.candidates.incremental import capture  # noqa: E402

SHARED = ROOT.parent / "shared"
LABELS = ROOT / "tests" / "data" / "triage_labels.json"
GATES = (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)


def drafts_of(project_files: list[tuple[str, Path]], work: Path) -> list[dict]:
    """Draft a project's labelled sessions offline in a throwaway project; one row per ready draft."""
    from memcurate.curator.engine import Engine

    home = work / "home"
    os.environ.update(
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        XDG_CONFIG_HOME=str(home / ".config"),
    )
    project = work / "project"
    (project / ".git").mkdir(parents=True)
    cfg = config.load(str(project / ".memcurate"))
    cfg["drafting"]["backend"] = "offline"
    engine = Engine(str(project), cfg=cfg)
    rows = []
    try:
        for key, path in project_files:
            report = capture(
                engine.data,
                engine.cfg,
                str(path),
                event="backfill",
                summary=True,
                subagent=path.name.startswith("agent-"),
            )
            tid = report.get("triage")
            if report.get("status") != "staged" or not tid:
                continue
            for cat, state in engine.process(tid).items():
                if state != "ready":
                    rows.append({"key": key, "category": cat, "state": state})
                    continue
                review = engine.review(tid, cat)
                rows.append(
                    {
                        "key": key,
                        "category": cat,
                        "state": state,
                        "title": review.get("title", ""),
                        "confidence": (review.get("confidence") or {}).get("value", 0.0),
                    }
                )
    finally:
        engine.close()
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument(
        "-v", action="store_true", help="list every draft with its confidence and label"
    )
    a = ap.parse_args()
    labels = json.loads(a.labels.read_text())["labels"]
    by_project: dict[str, list[tuple[str, Path]]] = defaultdict(list)
    for key in sorted(labels):
        path = SHARED / key
        if path.is_file():
            by_project[str(Path(key).parent)].append((key, path))
    if not by_project:
        print(f"SKIPPED: no labelled transcript found under {SHARED}")
        return 0
    default = config.load(tempfile.mkdtemp())["auto_approve"]["min_confidence"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        saved_env = dict(os.environ)
        try:
            for n, (_, files) in enumerate(sorted(by_project.items())):
                rows += drafts_of(files, Path(tmp) / str(n))
        finally:
            os.environ.clear()
            os.environ.update(saved_env)
    ready = [r for r in rows if r["state"] == "ready"]
    for r in ready:
        r["real"] = bool(labels[r["key"]][r["category"]])
        r["part"] = labels[r["key"]]["part"]
    if a.v:
        for r in sorted(ready, key=lambda r: -r["confidence"]):
            print(
                f"{r['confidence']:.2f} {'REAL' if r['real'] else '    '} {r['part']:7} {r['category']:15} "
                f"{r['title'][:70]}"
            )
        print()
    others = defaultdict(int)
    for r in rows:
        if r["state"] != "ready":
            others[r["state"]] += 1
    print(
        f"{len(ready)} ready drafts from {len(by_project)} projects"
        + (f" (and {', '.join(f'{v} {k}' for k, v in sorted(others.items()))})" if others else "")
        + f"; default gate auto_approve.min_confidence = {default}"
    )
    parts = [p for p in ("tune", "holdout") if any(r["part"] == p for r in ready)]
    print(f"{'gate':>6}  " + "  ".join(f"{p + ': saved  real%  recall':>30}" for p in parts))
    for gate in sorted({*GATES, default}):
        cells = []
        for p in parts:
            mine = [r for r in ready if r["part"] == p]
            saved = [r for r in mine if r["confidence"] >= gate]
            real = sum(r["real"] for r in mine)
            prec = sum(r["real"] for r in saved) / len(saved) if saved else 1.0
            rec = sum(r["real"] for r in saved) / real if real else 1.0
            cells.append(f"{len(saved):>3}/{len(mine):<3} {prec:6.0%} {rec:7.0%}")
        mark = " *" if gate == default else "  "
        print(f"{gate:>6}{mark}" + "  ".join(f"{c:>30}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
