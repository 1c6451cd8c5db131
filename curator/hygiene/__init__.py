"""Hygiene: what is wrong with the memory already saved, each finding a reviewable proposal.

A detector is `detect(engine) -> list[Finding]`; DETECTORS lists them, and
check.run calls each, stages one proposal per finding (Engine.stage_proposal)
and caches the findings for the library's flags. Nothing here writes a memory:
a finding only proposes, and the person approves.

A detector says what its proposal would do in `detail["fix"]`:
{"kind": "update"|"merge"|"archive"|"unlink"|..., "title", "reason", "ops": [change ops]}
(ops as curator/library/changes.py takes them). check.run stages it, puts the
proposal's id in `proposal` and drops "fix" from the detail it reports and caches
(the ops may hold a whole file's text). A finding without "fix" proposes nothing
(the message says what the person can do).

Families, one module each: memory_md_checks (over-limit, missing-link,
unlinked, damaged, section-removed), secrets (secret), references (stale-file, stale-command,
stale-symbol, churn; repository facts in project_facts.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

CODES = (
    "stale-file",
    "stale-command",
    "stale-symbol",
    "churn",
    "contradiction",
    "duplicate",
    "secret",
    "over-limit",
    "missing-link",
    "unlinked",
    "damaged",
    "section-removed",
)
SEVERITIES = ("high", "medium", "low")  # most urgent first: the order findings are shown in


@dataclass(frozen=True)
class Finding:
    code: str  # one of CODES
    severity: str  # one of SEVERITIES
    refs: tuple[str, ...]  # the memories it is about (library refs)
    message: str  # one line: what, and where
    detail: dict = field(default_factory=dict, compare=False)
    proposal: str | None = None  # the staged proposal's id

    def to_dict(self) -> dict:
        d = asdict(self)
        d["refs"] = list(self.refs)
        d["detail"] = {k: v for k, v in self.detail.items() if k != "fix"}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Finding:
        return cls(
            str(d["code"]),
            str(d["severity"]),
            tuple(d.get("refs") or ()),
            str(d.get("message", "")),
            dict(d.get("detail") or {}),
            d.get("proposal"),
        )


def fix(kind: str, title: str, reason: str, ops: list[dict]) -> dict:
    """A finding's proposal, as Engine.stage_proposal takes it (see the module's docstring)."""
    return {"kind": kind, "title": title, "reason": reason, "ops": ops}


from memcurate.curator.hygiene import duplicates, memory_md_checks, references, secrets  # noqa: E402 (they import Finding)

DETECTORS = (
    memory_md_checks.detect,
    secrets.detect,
    references.detect,
    duplicates.detect,
)
