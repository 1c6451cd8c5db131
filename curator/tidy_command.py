"""`memcurate tidy [--json]`: stage merge proposals for near-duplicate memories and archive proposals
for contradicted ones (curator/hygiene/tidy.py); argument parsing lives in cli.py. Nothing under the
memory root changes until a proposal is approved."""

from __future__ import annotations

from memcurate.curator.commands import PROPOSAL_HINT, _print_json, open_engine, project_dir
from memcurate.curator.util.textsafe import one_line


def tidy(args) -> int:
    engine = open_engine(project_dir(args))
    notes: list[str] = []
    try:
        staged = engine.tidy(notes=notes)
        records = {r["id"]: r for r in engine.proposals(every=True) if r.get("id") in staged}
    finally:
        engine.close()
    rows = [
        {
            "id": pid,
            "kind": records.get(pid, {}).get("kind", ""),
            "title": records.get(pid, {}).get("title", ""),
            "reason": records.get(pid, {}).get("reason", ""),
        }
        for pid in staged
    ]
    if args.json:
        _print_json({"staged": rows, "notes": notes})
        return 0
    for note in notes:
        print(f"note: {one_line(note, 400)}")
    if not rows:
        print("nothing new to tidy")
        return 0
    print(f"{len(rows)} proposal{'s' if len(rows) != 1 else ''} staged:")
    for row in rows:
        print(f"  proposal/{row['id']}  {row['kind']:<8} {one_line(row['title'], 200)}")
    print("\n" + PROPOSAL_HINT)
    return 0
