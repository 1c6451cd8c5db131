"""`memcurate check [--json] [--quiet]`: the hygiene findings, grouped by severity, each with the
proposal to review (argument parsing lives in cli.py).

Findings are not errors: exit 0 whatever was found; 1 only when the check could not run (a config
error, a damaged file a detector needs: the other detectors still run and their findings are kept).
--quiet prints nothing (the SessionEnd hook's background run only stages proposals).
"""

from __future__ import annotations

from memcurate.curator.commands import PROPOSAL_HINT, _print_json, open_engine, project_dir
from memcurate.curator.hygiene import SEVERITIES
from memcurate.curator.util.textsafe import one_line


def check(args) -> int:
    engine = open_engine(project_dir(args))
    summary: dict = {}
    try:
        findings = engine.check(stage=True, summary=summary)
    finally:
        engine.close()
    counts = {s: sum(f.severity == s for f in findings) for s in SEVERITIES}
    if args.json:
        _print_json(
            {
                "findings": [f.to_dict() for f in findings],
                "counts": counts,
                "checked": summary["checked"],
                "errors": summary["errors"],
            }
        )
    elif not args.quiet:
        _print(findings, counts, summary)
    return 1 if summary["errors"] and not findings else 0


def _print(findings, counts: dict, summary: dict) -> None:
    for err in summary["errors"]:
        print(f"memcurate: check: {one_line(err, 1000)}")
    if not findings:
        print(f"no findings ({summary['checked']} memories checked)")
        return
    total = ", ".join(f"{counts[s]} {s}" for s in SEVERITIES if counts[s])
    print(
        f"{len(findings)} finding{'s' if len(findings) != 1 else ''} ({total}); {summary['checked']} memories checked"
    )
    for severity in SEVERITIES:
        group = [f for f in findings if f.severity == severity]
        if not group:
            continue
        print(f"\n{severity.upper()}")
        for f in group:
            print(f"  {f.code:<14} {one_line(f.message, 300)}")
            if f.proposal:
                print(f"  {'':<14} proposal/{f.proposal}")
    if any(f.proposal for f in findings):
        print("\n" + PROPOSAL_HINT)
