#!/usr/bin/env python3
"""How often the same fact is saved twice: backfill real sessions offline, save them, count same-fact pairs.

    python bench/duplicates_bench.py                 # ../shared/transcripts and ../shared/transcripts-more
    python bench/duplicates_bench.py --examples 20   # more example pairs
    python bench/duplicates_bench.py --quick         # for CI: backfill mode, the first 4 project folders
    python bench/duplicates_bench.py --memcurate PATH

For each project folder of the shared transcripts, a throwaway project (HOME,
CLAUDE_CONFIG_DIR and XDG_CONFIG_HOME pointed at throwaway folders, `backend:
offline`, its own memory root) is filled twice, the way a user fills it:

  backfill   every main session of the project, one `memcurate triage PATH --json`
             each, oldest first, each followed by `memcurate --auto-approve --json --min-confidence 0` (every draft saved: the gate is gate_bench.py's)
             (the hook saves a session before the next one starts);
  split      the same, but each session is triaged in two passes, as the Stop hook
             does: its first half, a save, then the whole file (the second triage
             reads only the new bytes, and may find the same statement again).

Then every pair of saved memories of one project is judged by a reviewer-like
measure kept apart from the engine's own similarity (so the bench does not grade
the engine by its own rule): two memories state the same fact when their titles
are the same words, or when one first section's statement (its first sentence
of at least six words) appears in the other's (a first section's first paragraph: a
session summary's goal, not its list of later turns), or when their
titles and first sections share most of their telling words (Jaccard >= 0.6 over
words of three letters or more, at least four shared). Each pair is labelled
within a category or across categories. Also counted: sessions summarised by more
than one memory, and `sources` entries that name one session twice (DESIGN §6:
one entry per session).

Prints, per mode: memories saved, same-fact pairs (within / across categories),
malformed sources, and example pairs. Figures: bench/results/duplicates.json.
Standard library only; it runs the `memcurate` beside this interpreter unless
--memcurate names another.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BENCH = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(os.path.dirname(os.path.dirname(BENCH)), "shared")
FOLDERS = ("transcripts", "transcripts-more")
RESULTS = os.path.join(BENCH, "results", "duplicates.json")
FIRST_SECTION = {
    "decision": "Decision",
    "constraint": "Rule",
    "runbook": "Symptom",
    "tech_debt": "Description",
    "preference": "Preference",
    "session_summary": "Goal",
}
_WORD = re.compile(r"[a-z0-9][a-z0-9_.-]{2,}")
_STOP = frozenset(
    """the and for with that this from have has had was were are not but you your our their they
them then than into when what which while will would should could can may also only just more most such very
been being over under about after before there here its does did done use used using make made all any each
other some same both now out off per via yet how why who let lets we're it's i'm user assistant turn""".split()
)
_ATTRIBUTION = re.compile(r"\((?:the )?(?:user|assistant)[^)]*turn[^)]*\)", re.I)


def say(msg: str = "") -> None:
    print(msg, flush=True)


# -- a memory, as the reviewer reads it ------------------------------------------------


def read_memory(path: str) -> dict | None:
    """Front matter fields this bench needs, and the sections, parsed by hand (no yaml: stdlib only)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if not text.startswith("---\n"):
        return None
    fm, _, body = text[4:].partition("\n---\n")
    fields, sessions = {}, []
    for line in fm.splitlines():
        m = re.match(r"([a-z_]+):\s*(.*)", line)
        if m:
            fields[m.group(1)] = m.group(2).strip().strip('"')
        m = re.match(r"\s*-\s*session:\s*(\S+)", line)
        if m:
            sessions.append(m.group(1).strip('"'))
    sections, name = {}, ""
    for line in body.splitlines():
        if line.startswith("## "):
            name = line[3:].strip()
            sections[name] = ""
        elif name:
            sections[name] += line + "\n"
    if fields.get("status") == "archived":
        return None
    cat = fields.get("category", "")
    # what the memory states: its first section's first paragraph (a summary's goal, not its list of later turns)
    first = sections.get(FIRST_SECTION.get(cat, ""), "").strip().split("\n\n")[0]
    first = _ATTRIBUTION.sub(" ", first)
    return {
        "path": path,
        "id": fields.get("id", ""),
        "category": cat,
        "title": fields.get("title", ""),
        "first": first,
        "sessions": sessions,
    }


def words(text: str) -> set[str]:
    return {w.strip(".-") for w in _WORD.findall(text.lower())} - _STOP


def statement(text: str) -> str:
    """The first sentence of at least six words, normalised: what a section states."""
    for s in re.split(r"(?<=[.!?])\s+|\n+", text):
        s = " ".join(re.sub(r"[^\w\s]", " ", s.lower()).split())
        if len(s.split()) >= 6:
            return s
    return ""


def same_fact(a: dict, b: dict) -> str | None:
    """Why a reviewer would call `a` and `b` the same fact, or None."""
    ta, tb = " ".join(sorted(words(a["title"]))), " ".join(sorted(words(b["title"])))
    if ta and ta == tb:
        return "same title"
    sa, sb = statement(a["first"]), statement(b["first"])
    norm_a = " ".join(re.sub(r"[^\w\s]", " ", a["first"].lower()).split())
    norm_b = " ".join(re.sub(r"[^\w\s]", " ", b["first"].lower()).split())
    if (sa and sa in norm_b) or (sb and sb in norm_a):
        return "same statement"
    wa, wb = words(f"{a['title']} {a['first']}"), words(f"{b['title']} {b['first']}")
    shared = wa & wb
    if len(shared) >= 4 and len(shared) / len(wa | wb) >= 0.6:
        return f"{len(shared) / len(wa | wb):.0%} of their words"
    return None


def judge(memories: list[dict]) -> dict:
    pairs = []
    for i, a in enumerate(memories):
        for b in memories[i + 1 :]:
            why = same_fact(a, b)
            if why:
                pairs.append(
                    {
                        "a": f"{a['category']}/{a['id']}",
                        "b": f"{b['category']}/{b['id']}",
                        "why": why,
                        "across": a["category"] != b["category"],
                        "titles": [a["title"], b["title"]],
                    }
                )
    bad_sources = [m["id"] for m in memories if len(m["sessions"]) != len(set(m["sessions"]))]
    summaries: dict[str, int] = {}
    for m in memories:
        if m["category"] == "session_summary":
            for s in set(m["sessions"]):
                summaries[s] = summaries.get(s, 0) + 1
    return {
        "summaries_twice": sum(n > 1 for n in summaries.values()),
        "memories": len(memories),
        "pairs": pairs,
        "within": sum(not p["across"] for p in pairs),
        "across": sum(p["across"] for p in pairs),
        "bad_sources": bad_sources,
    }


# -- filling a throwaway project -----------------------------------------------------------


def sessions_of(folder: str) -> list[str]:
    """Main sessions (no subagents), oldest first (by their first time stamp, then name)."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "subagents")
        found += [
            os.path.join(root, f)
            for f in files
            if f.endswith(".jsonl") and not f.startswith("agent-")
        ]

    def first_stamp(path: str) -> str:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.search(r'"timestamp":"([^"]+)"', line)
                if m:
                    return m.group(1)
        return ""

    return sorted(found, key=lambda p: (first_stamp(p), p))


class Project:
    def __init__(self, work: str, memcurate: str) -> None:
        self.work, self.memcurate = work, memcurate
        self.proj, self.memory = os.path.join(work, "proj"), os.path.join(work, "memory")
        home = os.path.join(work, "home")
        self.env = {
            k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "MEMCURATE_CHILD")
        }
        self.env.update(
            HOME=home,
            CLAUDE_CONFIG_DIR=os.path.join(home, ".claude"),
            XDG_CONFIG_HOME=os.path.join(home, ".config"),
        )
        for d in (
            self.env["CLAUDE_CONFIG_DIR"],
            self.env["XDG_CONFIG_HOME"],
            os.path.join(self.proj, ".git"),
            os.path.join(self.proj, ".claude"),
        ):
            os.makedirs(d, exist_ok=True)
        with open(os.path.join(self.proj, ".claude", "memcurate.yaml"), "w") as f:
            # offline drafts are evidence cards, held from --auto-approve unless offline_cards (as SAVE_EVERY_DRAFT)
            f.write(
                f"backend: offline\nmemory:\n  root: {json.dumps(self.memory)}\n"
                "auto_approve:\n  offline_cards: true\n"
            )

    def run(self, *args: str) -> dict:
        p = subprocess.run(
            [self.memcurate, "--project", self.proj, *args],
            env=self.env,
            capture_output=True,
            text=True,
        )
        if p.returncode not in (0, 1):
            raise RuntimeError(
                f"memcurate {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}"
            )
        return json.loads(p.stdout) if "--json" in args else {}

    def save(self) -> dict:
        # every draft: duplicates, not the gate
        return self.run("--auto-approve", "--json", "--min-confidence", "0")

    def memories(self) -> list[dict]:
        out = []
        for root, _dirs, files in os.walk(self.memory):
            if os.path.basename(root) == "archive" or root == self.memory:
                continue
            out += [
                m
                for f in sorted(files)
                if f.endswith(".md") and (m := read_memory(os.path.join(root, f)))
            ]
        return out


def fill(project: Project, sessions: list[str], split: bool) -> dict:
    totals: dict = {"created": 0, "updated": 0, "noop": 0, "skipped": 0}
    for path in sessions:
        if split:  # the first half, then the whole: the Stop hook's two passes
            copy = os.path.join(project.work, "transcripts", os.path.basename(path))
            os.makedirs(os.path.dirname(copy), exist_ok=True)
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                lines = f.readlines()
            passes = [lines[: len(lines) // 2], lines]
        else:
            copy, passes = path, [None]
        for part in passes:
            if part is not None:
                with open(copy, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.writelines(part)
            project.run("triage", copy, "--json")
            summary = project.save()
            for k in totals:
                totals[k] += len(summary.get(k) or [])
    return totals


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--memcurate", default=os.path.join(os.path.dirname(sys.executable), "memcurate")
    )
    ap.add_argument(
        "--shared", default=SHARED, help="the folder holding transcripts/ and transcripts-more/"
    )
    ap.add_argument("--examples", type=int, default=8)
    ap.add_argument("--modes", default="backfill,split")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="for CI: backfill mode over the first 4 project folders",
    )
    args = ap.parse_args(argv)
    projects = [
        os.path.join(args.shared, d, p)
        for d in FOLDERS
        if os.path.isdir(os.path.join(args.shared, d))
        for p in sorted(os.listdir(os.path.join(args.shared, d)))
        if os.path.isdir(os.path.join(args.shared, d, p))
    ]
    projects = [p for p in projects if sessions_of(p)]
    if args.quick:
        projects, args.modes = projects[:4], "backfill"
    if not projects:
        say(f"SKIPPED: no transcripts under {args.shared}")
        return 0
    if not os.path.exists(args.memcurate):
        say(f"duplicates_bench: no memcurate at {args.memcurate} (--memcurate PATH)")
        return 2
    figures: dict = {}
    for mode in args.modes.split(","):
        judged = {
            "summaries_twice": 0,
            "memories": 0,
            "within": 0,
            "across": 0,
            "pairs": [],
            "bad_sources": [],
            "saves": {},
        }
        with tempfile.TemporaryDirectory(prefix="memcurate-dup-") as tmp:
            for n, folder in enumerate(projects):
                project = Project(os.path.join(tmp, str(n)), args.memcurate)
                saves = fill(project, sessions_of(folder), split=(mode == "split"))
                j = judge(project.memories())
                for k in ("memories", "within", "across", "summaries_twice"):
                    judged[k] += j[k]
                judged["pairs"] += [{**p, "project": os.path.basename(folder)} for p in j["pairs"]]
                judged["bad_sources"] += j["bad_sources"]
                for k, v in saves.items():
                    judged["saves"][k] = judged["saves"].get(k, 0) + v
                shutil.rmtree(project.work, ignore_errors=True)
        figures[mode] = judged
        s = judged["saves"]
        say(
            f"{mode:9} {len(projects)} projects: {judged['memories']} memories saved "
            f"(created {s['created']}, updated {s['updated']}, noop {s['noop']}, skipped {s['skipped']}); "
            f"same-fact pairs {len(judged['pairs'])} ({judged['within']} within a category, "
            f"{judged['across']} across); sessions with two summaries: {judged['summaries_twice']}; "
            f"sources naming a session twice: {len(judged['bad_sources'])}"
        )
        for p in judged["pairs"][: args.examples]:
            say(f"    {p['project'][:28]:28} {p['a']}  ~  {p['b']}  ({p['why']})")
    os.makedirs(os.path.dirname(RESULTS), exist_ok=True)
    with open(RESULTS, "w") as f:
        json.dump(figures, f, indent=1)
    say(f"figures: {RESULTS}")
    empty = [mode for mode, judged in figures.items() if not judged["memories"]]
    # nothing saved: no pair could be found, so the figures say nothing (a held or gated draft)
    if empty:
        say(f"duplicates_bench: no memory saved in {', '.join(empty)}: the bench measured nothing")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
