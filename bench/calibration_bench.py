#!/usr/bin/env python3
"""Does a draft's confidence mean something? Labelled drafts (keep / edit / delete) through the real confidence path.

    python bench/calibration_bench.py                  # every draft of bench/calibration_labels.json
    python bench/calibration_bench.py --quick          # the drafts of two sessions per split, for CI (seconds)
    python bench/calibration_bench.py --labels FILE --json-out FILE [-v] [--strict]
    python bench/calibration_bench.py --check          # only check the labels against the transcripts

The labels (bench/calibration_labels.json) are drafts as the model's answer gives them (title, description,
tags, and the fact, why and how to apply, or a runbook's sections; its confidence), each with the
transcript lines it cites, for the facts of bench/evidence_labels.json and for some non-facts, and a careful
reviewer's label: keep (saved as written), edit (worth keeping once edited) or delete, with a one-line why.
Each draft goes through what the pipeline does with it: the transcript is digested
(curator/capture/digest.py), the cited lines are mapped to digest entries (Digest.at_line), the triage
entry is built as the second look builds it (`look`, `snippets` with their kind, the cited entries as the
excerpt), the document rendered (the fact as the first required section, "**Why:** …" and "**How to
apply:** …" as the second), verified (curator/verify/checks.py, with the entry) and assessed
(curator/verify/confidence.py), as pipeline.settle does.

Figures per split (tune, held_out), after (the confidence as it is) and before (the same drafts scored the
way memcurate scored them before the grounding factor: the entry without its look, so agreement and the
user's words come from counting snippets and the model weighs ±0.20, and support checked by word overlap):
- keep rate at the gate: of the drafts at or above auto_approve.min_confidence, the share labelled keep;
  and how many keep drafts the gate lets through (of all keep drafts);
- AUC: the chance a keep draft's confidence is above a delete draft's (ties half), edit drafts aside; once
  more with edit counted as keep (keep+edit vs delete); and the edit drafts' own row (how many pass the gate);
- per kind of flaw (quote, guess, chatter, stale, general, invented; none), how many drafts pass the gate.
Targets, on held_out: AUC keep vs delete >= 0.80, keep rate at the gate >= 0.85. Weights are tuned on the
tune split only. Exits 0 whatever the verdict (`--strict`: 1 below the targets; 2 for labels that do not
check out). Figures in bench/results/calibration.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT / "dev"))  # the checkout's engine, as the other benches run it

from memcurate.curator import config  # noqa: E402
from memcurate.curator.capture.digest import Digest, digest  # noqa: E402
from memcurate.curator.categories import CATEGORIES  # noqa: E402
from memcurate.curator.memory import memfile  # noqa: E402
from memcurate.curator.util.textsafe import one_line  # noqa: E402
from memcurate.curator.verify import confidence  # noqa: E402
from memcurate.curator.verify.checks import verify  # noqa: E402

SHARED = ROOT.parent / "shared"
LABELS = BENCH / "calibration_labels.json"
EVIDENCE = BENCH / "evidence_labels.json"
RESULTS = BENCH / "results" / "calibration.json"
SPLITS = ("tune", "held_out")
LABEL_VALUES = ("keep", "edit", "delete")
FLAWS = (None, "quote", "guess", "chatter", "stale", "general", "invented")
TARGETS = {"auc": 0.80, "keep_rate": 0.85}
QUICK_SESSIONS = 2  # per split: the drafts of its two smallest sessions
STAMP = "2026-11-27T00:00:00Z"
# The weights memcurate had before the grounding factor, where they differ from confidence.WEIGHTS now.
BEFORE_WEIGHTS = {"second_look": 0.05}


class LabelError(ValueError):
    """A label file that is not in the format, or whose citations do not check out."""


# -- the labels --------------------------------------------------------------------------------


def load_labels(path: Path) -> list[dict]:
    """The sessions of a labels file (format: version 1, see the module's docstring). LabelError saying what
    is wrong with a file that is not in that format."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise LabelError(f"{path}: unreadable ({e})") from None
    if (
        not isinstance(doc, dict)
        or doc.get("version") != 1
        or not isinstance(doc.get("sessions"), list)
    ):
        raise LabelError(f"{path}: not a calibration labels file (version 1 with a sessions list)")
    seen: set[str] = set()
    for s in doc["sessions"]:
        if (
            not isinstance(s, dict)
            or s.get("split") not in SPLITS
            or not isinstance(s.get("transcript"), str)
        ):
            raise LabelError(f"{path}: a session needs a transcript and a split of {SPLITS}")
        for d in s.get("drafts") or []:
            where = f"{path}: draft {d.get('id')!r}"
            if not isinstance(d.get("id"), str) or d["id"] in seen:
                raise LabelError(f"{where}: needs an id of its own")
            seen.add(d["id"])
            if d.get("category") not in CATEGORIES or d["category"] == "session_summary":
                raise LabelError(f"{where}: unknown category {d.get('category')!r}")
            if d.get("label") not in LABEL_VALUES or not str(d.get("label_why") or "").strip():
                raise LabelError(f"{where}: needs a label of {LABEL_VALUES} and its why")
            if d.get("flaw") not in FLAWS:
                raise LabelError(f"{where}: flaw must be one of {FLAWS}")
            cites = d.get("cites")
            if (
                not isinstance(cites, list)
                or not cites
                or not all(isinstance(n, int) and n >= 1 for n in cites)
            ):
                raise LabelError(f"{where}: cites must be a list of 1-based transcript lines")
            a = d.get("answer")
            if not isinstance(a, dict) or not all(
                isinstance(a.get(k), str) and a[k].strip() for k in ("title", "description")
            ):
                raise LabelError(f"{where}: the answer needs a title and a description")
            conf = a.get("confidence")
            if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 <= conf <= 1:
                raise LabelError(f"{where}: the answer's confidence must be a number from 0 to 1")
            required = CATEGORIES[d["category"]].required
            if d["category"] == "runbook":
                sections = a.get("sections")
                if not isinstance(sections, dict) or not all(
                    str(sections.get(r) or "").strip() for r in required
                ):
                    raise LabelError(f"{where}: a runbook's answer needs sections {required}")
            elif not all(str(a.get(k) or "").strip() for k in ("fact", "why", "how_to_apply")):
                raise LabelError(f"{where}: the answer needs a fact, a why and a how_to_apply")
    return doc["sessions"]


def problems(sessions: list[dict], shared: Path = SHARED, evidence: Path = EVIDENCE) -> list[str]:
    """What does not check out against the transcripts: a transcript missing, a cited line past its end or
    holding no digest entry, a draft of a labelled fact whose id or category differs from
    bench/evidence_labels.json. Empty when every label checks out."""
    facts = (
        {
            f["id"]: f
            for s in json.loads(Path(evidence).read_text(encoding="utf-8"))["sessions"]
            for f in s["facts"]
        }
        if Path(evidence).is_file()
        else {}
    )
    out = []
    for s in sessions:
        path = shared / s["transcript"]
        if not path.is_file():
            out.append(f"{s['transcript']}: no such transcript under {shared}")
            continue
        lines = sum(1 for _ in open(path, "rb"))
        d = _digest(path)
        for draft in s.get("drafts") or []:
            for line in draft["cites"]:
                if line > lines:
                    out.append(
                        f"{draft['id']}: cites line {line}, past the transcript's {lines} lines"
                    )
                elif not d.at_line(line):
                    out.append(f"{draft['id']}: cites line {line}, which holds no digest entry")
            fact = draft.get("fact")
            if fact is not None and facts:
                if fact not in facts:
                    out.append(f"{draft['id']}: fact {fact!r} is not in {evidence.name}")
                elif facts[fact]["category"] != draft["category"]:
                    out.append(
                        f"{draft['id']}: fact {fact!r} is a {facts[fact]['category']}, "
                        f"not a {draft['category']}"
                    )
    return out


# -- one draft through the confidence path -----------------------------------------------------

_CFG: dict = {}
_DIGESTS: dict[Path, Digest] = {}


def _config() -> dict:
    if not _CFG:
        _CFG.update(config.load(tempfile.mkdtemp(prefix="calibration-bench-")))
    return _CFG


def _digest(path: Path) -> Digest:
    if path not in _DIGESTS:
        _DIGESTS[path] = digest(str(path), _config())
    return _DIGESTS[path]


def entry_of(draft: dict, d: Digest) -> dict:
    """The triage entry the second look gives this draft's fact: its cited entries, in the order cited."""
    from memcurate.curator.candidates import second_look

    cfg = _config()
    cited = list(dict.fromkeys(e.n for line in draft["cites"] for e in d.at_line(line)))
    a = draft["answer"]
    statement = a.get("fact") or a["title"]
    entry = second_look._entry(
        {"category": draft["category"], "entries": cited, "statement": statement},
        {e.n: e for e in d.entries},
        cfg,
    )
    entry["look"] = {
        **entry.get("look", {}),
        "statement": statement,
        "why": a.get("why", ""),
        "how_to_apply": a.get("how_to_apply", ""),
        "confidence": a["confidence"],
    }
    by_n = {e.n: e for e in d.entries}
    snips = entry.get("snippets") or []
    for n, s in zip(entry["look"]["entries"], snips):
        # the lead adds it to the look's snippets; until then, here
        s.setdefault("kind", by_n[n].kind)
        if "text" not in s:
            s["text"] = one_line(by_n[n].text, int(cfg["triage"]["snippet_chars"]))
    return entry


def document(draft: dict) -> str:
    """The memory the answer renders to: the fact, then **Why:** and **How to apply:** (a runbook: its sections)."""
    a, category = draft["answer"], draft["category"]
    required = CATEGORIES[category].required
    if category == "runbook":
        sections = {k: v for k, v in a["sections"].items() if str(v).strip()}
    else:
        sections = {
            required[0]: a["fact"],
            required[1]: f"**Why:** {a['why']}\n**How to apply:** {a['how_to_apply']}",
            **{k: v for k, v in (a.get("sections") or {}).items() if str(v).strip()},
        }
    doc = memfile.MemoryDoc(
        id=memfile.slugify(a["title"]) or "draft",
        category=category,
        title=a["title"],
        description=a["description"],
        tags=[str(t) for t in a.get("tags") or []],
        created=STAMP,
        updated=STAMP,
        sources=[{"session": "calibration", "turns": [1]}],
        body=memfile.join_sections(sections),
    )
    return memfile.render(doc)


def score(draft: dict, d: Digest, *, before: bool = False) -> dict:
    """{value, factors, issues} of a draft, as pipeline.settle gets them; `before`: as memcurate scored it
    before the grounding factor (the entry without its look, support by word overlap)."""
    cfg = _config()
    entry = entry_of(draft, d)
    if before:  # the entry as memcurate had it: no look, snippets without their kind
        entry = {
            **{k: v for k, v in entry.items() if k != "look"},
            "snippets": [
                {k: v for k, v in s.items() if k != "kind"} for s in entry.get("snippets", [])
            ],
        }
    text = document(draft)
    evidence = "\n".join(
        [entry.get("excerpt", "")] + [s.get("text", "") for s in entry.get("snippets", [])]
    )
    issues = verify(
        text,
        category=draft["category"],
        evidence=evidence,
        action="create",
        near=[],
        cfg=cfg,
        score=entry.get("score"),
        threshold=entry.get("threshold"),
        entry=None if before else entry,
    )
    doc = memfile.parse(text)
    now = dict(confidence.WEIGHTS)
    if before:
        confidence.WEIGHTS.update(BEFORE_WEIGHTS)
    try:
        conf = confidence.assess(
            category=draft["category"],
            entry=entry,
            body=doc.body,
            action="create",
            sources=len(doc.sources),
            issues=issues,
            weak=[],
            model_confidence=draft["answer"]["confidence"],
            **({} if before else {"title": doc.title, "description": doc.description}),
        )
    finally:
        confidence.WEIGHTS.update(now)
    return {**conf, "issues": [f"{i.severity} {i.code}: {i.message}" for i in issues]}


# -- figures -----------------------------------------------------------------------------------


def auc(pos: list[float], neg: list[float]) -> float | None:
    """The chance a positive's value is above a negative's, ties counted half (None without both)."""
    if not pos or not neg:
        return None
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 3)


def figures(rows: list[dict], key: str, gate: float) -> dict:
    by = {lab: [r[key] for r in rows if r["label"] == lab] for lab in LABEL_VALUES}
    through = [r for r in rows if r[key] >= gate]
    kept = [r for r in through if r["label"] == "keep"]
    return {
        "drafts": len(rows),
        "keep": len(by["keep"]),
        "edit": len(by["edit"]),
        "delete": len(by["delete"]),
        "through_gate": len(through),
        "keep_through": len(kept),
        "keep_rate": round(len(kept) / len(through), 3) if through else None,
        "keep_recall": round(len(kept) / len(by["keep"]), 3) if by["keep"] else None,
        "edit_through": sum(1 for v in by["edit"] if v >= gate),
        "delete_through": sum(1 for v in by["delete"] if v >= gate),
        "auc_keep_delete": auc(by["keep"], by["delete"]),
        "auc_keepedit_delete": auc(by["keep"] + by["edit"], by["delete"]),
        "auc_keep_edit": auc(by["keep"], by["edit"]),
    }


def _fmt(v) -> str:
    return "  -  " if v is None else f"{v:.2f}" if isinstance(v, float) else str(v)


def report(split: str, before: dict, after: dict, gate: float) -> list[str]:
    out = [
        f"{split}: {after['drafts']} drafts ({after['keep']} keep, {after['edit']} edit, {after['delete']} delete), "
        f"gate {gate:.2f}",
        f"  {'':34} {'before':>8} {'after':>8}",
    ]
    rows = [
        ("keep rate at the gate", "keep_rate"),
        ("keep drafts through the gate", None),
        ("edit drafts through the gate", "edit_through"),
        ("delete drafts through the gate", "delete_through"),
        ("AUC keep vs delete", "auc_keep_delete"),
        ("AUC keep+edit vs delete", "auc_keepedit_delete"),
        ("AUC keep vs edit", "auc_keep_edit"),
    ]
    for name, key in rows:
        if key is None:
            b, a = (f"{f['keep_through']}/{f['keep']}" for f in (before, after))
        else:
            b, a = _fmt(before[key]), _fmt(after[key])
        out.append(f"  {name:34} {b:>8} {a:>8}")
    return out


def verdict(held: dict) -> list[str]:
    """The failures of the held-out figures against TARGETS (empty: PASS)."""
    fails = []
    if held["auc_keep_delete"] is None or held["auc_keep_delete"] < TARGETS["auc"]:
        fails.append(f"AUC keep vs delete {_fmt(held['auc_keep_delete'])} < {TARGETS['auc']}")
    if held["keep_rate"] is None or held["keep_rate"] < TARGETS["keep_rate"]:
        fails.append(f"keep rate at the gate {_fmt(held['keep_rate'])} < {TARGETS['keep_rate']}")
    return fails


def run(
    sessions: list[dict], *, quick: bool = False, verbose: bool = False, shared: Path = SHARED
) -> dict:
    """Score every draft (before and after); the figures per split."""
    if quick:
        chosen = []
        for split in SPLITS:
            mine = sorted(
                (s for s in sessions if s["split"] == split),
                key=lambda s: (shared / s["transcript"]).stat().st_size,
            )
            chosen += mine[:QUICK_SESSIONS]
        sessions = chosen
    gate = float(_config()["auto_approve"]["min_confidence"])
    rows = []
    for s in sessions:
        d = _digest(shared / s["transcript"])
        for draft in s.get("drafts") or []:
            after, before = score(draft, d), score(draft, d, before=True)
            rows.append(
                {
                    "id": draft["id"],
                    "split": s["split"],
                    "category": draft["category"],
                    "label": draft["label"],
                    "flaw": draft.get("flaw"),
                    "model": draft["answer"]["confidence"],
                    "before": before["value"],
                    "after": after["value"],
                    "factors": after["factors"],
                    "issues": after["issues"],
                }
            )
            if verbose:
                shown = "; ".join(f"{f['name']} {f['effect']:+.2f}" for f in after["factors"])
                print(
                    f"  {draft['id']:22} {draft['label']:6} model {draft['answer']['confidence']:.2f} "
                    f"before {before['value']:.2f} after {after['value']:.2f}  {shown}"
                )
    out = {"gate": gate, "quick": quick, "targets": TARGETS, "splits": {}, "drafts": rows}
    for split in SPLITS:
        mine = [r for r in rows if r["split"] == split]
        if mine:
            out["splits"][split] = {
                "before": figures(mine, "before", gate),
                "after": figures(mine, "after", gate),
                "by_flaw": by_flaw(mine, gate),
            }
    return out


def by_flaw(rows: list[dict], gate: float) -> dict:
    """Per kind of flawed draft (and the drafts of no flaw): how many, and how many the gate lets through."""
    out = {}
    for flaw in FLAWS:
        mine = [r for r in rows if r["flaw"] == flaw]
        if mine:
            out[flaw or "none"] = {
                "drafts": len(mine),
                "before": sum(r["before"] >= gate for r in mine),
                "after": sum(r["after"] >= gate for r in mine),
            }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument(
        "--shared", type=Path, default=SHARED, help="the folder the labels' transcripts are under"
    )
    ap.add_argument("--json-out", type=Path, default=RESULTS)
    ap.add_argument("--quick", action="store_true", help="the drafts of two sessions per split")
    ap.add_argument("--check", action="store_true", help="only check the labels")
    ap.add_argument(
        "--strict", action="store_true", help="exit 1 when the held-out figures miss a target"
    )
    ap.add_argument("-v", "--verbose", action="store_true", help="a row per draft")
    args = ap.parse_args(argv)
    try:
        sessions = load_labels(args.labels)
    except LabelError as e:
        print(f"calibration_bench: {e}", file=sys.stderr)
        return 2
    if not all((args.shared / s["transcript"]).is_file() for s in sessions) and not args.check:
        print(f"SKIPPED: the labelled transcripts are not under {args.shared}")
        return 0
    wrong = problems(sessions, args.shared)
    if wrong:
        for w in wrong:
            print(f"calibration_bench: {args.labels}: {w}", file=sys.stderr)
        return 2
    if args.check:
        print(
            f"{sum(len(s.get('drafts') or []) for s in sessions)} drafts: every cited line checks out"
        )
        return 0
    result = run(sessions, quick=args.quick, verbose=args.verbose, shared=args.shared)
    for split, f in result["splits"].items():
        print("\n".join(report(split, f["before"], f["after"], result["gate"])))
        print(
            "  through the gate by flaw (before -> after): "
            + ", ".join(
                f"{k} {v['before']}->{v['after']}/{v['drafts']}" for k, v in f["by_flaw"].items()
            )
        )
    held = result["splits"].get("held_out", {}).get("after")
    fails = verdict(held) if held else ["no held-out drafts"]
    result["verdict"] = "PASS" if not fails else "FAIL"
    result["failures"] = fails
    print(
        f"{result['verdict']}: held out, AUC keep vs delete >= {TARGETS['auc']}, keep rate at the gate >= "
        f"{TARGETS['keep_rate']}" + ("" if not fails else " (" + "; ".join(fails) + ")")
    )
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(
        json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return 1 if args.strict and fails else 0


if __name__ == "__main__":
    sys.exit(main())
