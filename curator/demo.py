"""`memcurate demo`: a throwaway project seeded from the bundled demo session.

Everything lives in one new temporary folder that the demo names: the
project, its data dir, a stand-in Claude config dir and the memory root. The
person's real Claude folders are never touched.
"""

from __future__ import annotations

import json
import os
import tempfile

from . import staging
from .assets import asset
from .atomic import write_text
from .paths import project_key

DEMO_TRANSCRIPT = os.path.join("demo", "session.jsonl")
DEMO_SESSION = "5e55a1d0-de70-4c1a-9a5e-000000000001"
PARTS = 3  # the transcript is fed to the hook in growing parts, as Claude Code writes it


def make_project(root: str) -> dict:
    """Lay out the throwaway folders; return their paths."""
    project = os.path.join(root, "project")
    claude = os.path.join(root, "claude")
    os.makedirs(os.path.join(project, ".git"))  # a git root, so the hook finds the project
    os.makedirs(os.path.join(project, ".claude"))
    write_text(os.path.join(project, ".claude", "memcurate.yaml"), "backend: offline\n")
    transcript_dir = os.path.join(claude, "projects", project_key(os.path.realpath(project)))
    os.makedirs(transcript_dir)
    return {"root": root, "project": project, "claude_config_dir": claude,
            "transcript": os.path.join(transcript_dir, f"{DEMO_SESSION}.jsonl"),
            "memory_root": os.path.join(transcript_dir, "memory")}


def _hook(payload: dict, layout: dict) -> None:
    from hooks.dispatch import run  # the real hook code, in-process

    # The environment Claude Code gives its hooks: the session's folder and config dir.
    env = {**os.environ, "CLAUDE_PROJECT_DIR": layout["project"], "CLAUDE_CONFIG_DIR": layout["claude_config_dir"]}
    run(json.dumps(payload).encode(), env)


def play_session(layout: dict) -> None:
    """Write the demo transcript in growing parts, calling the hooks as Claude Code would."""
    with open(asset(DEMO_TRANSCRIPT), "rb") as f:
        lines = f.read().splitlines(keepends=True)
    cut = [round(len(lines) * (i + 1) / PARTS) for i in range(PARTS)]
    base = {"session_id": DEMO_SESSION, "transcript_path": layout["transcript"], "cwd": layout["project"]}
    start = 0
    for end in cut:
        with open(layout["transcript"], "ab") as out:
            out.writelines(lines[start:end])
        start = end
        _hook({**base, "hook_event_name": "Stop", "stop_hook_active": False}, layout)
    _hook({**base, "hook_event_name": "SessionEnd", "reason": "exit"}, layout)


def run_demo(*, json_out: bool = False, auto_approve: bool = False, review=None) -> int:
    """Seed a throwaway demo project; then save headless (`auto_approve`), or hand the project to
    `review` (the TUI, injected by the command line: the engine knows nothing of the UI)."""
    root = tempfile.mkdtemp(prefix="memcurate-demo-")
    layout = make_project(root)
    play_session(layout)
    data = os.path.join(layout["project"], ".memcurate")
    triages = []
    for tid in staging.triage_ids(data):
        doc = staging.load_triage(data, tid)
        triages.append({"id": tid, "byte_range": doc["source"]["byte_range"],
                        "categories": {n: c["score"] for n, c in doc["categories"].items() if c["triggered"]}})
    if json_out and not auto_approve:
        print(json.dumps({**layout, "data_dir": data, "triages": triages, "counts": staging.counts(data)}, indent=2))
    elif not json_out:
        print(f"demo folder   {root}")
        print(f"project       {layout['project']}")
        print(f"transcript    {layout['transcript']}  (fed to the hook in {PARTS} parts, then SessionEnd)")
        print(f"memory root   {layout['memory_root']}")
        print(f"staged        {len(triages)} triages in {data}/staging")
        for t in triages:
            cats = ", ".join(f"{n} {s:.2f}" for n, s in t["categories"].items())
            print(f"  {t['id']}  bytes {t['byte_range'][0]}..{t['byte_range'][1]}  {cats}")
        print(f"\nSee them with: memcurate --project {layout['project']} status")
    if auto_approve:
        return _auto_approve(layout, json_out)
    if review is not None and not json_out:
        return review(layout["project"])
    return 0


def _auto_approve(layout: dict, json_out: bool) -> int:
    from .commands import print_summary, report_status
    from .engine import Engine
    from .headless import auto_approve

    engine = Engine(layout["project"])
    try:
        summary = auto_approve(engine)
    finally:
        engine.close()
    summary = {"project": layout["project"], "memory_root": engine.root, **summary}
    if json_out:
        print(json.dumps(summary, indent=2))
    else:
        print()
        print_summary(summary)
        print(f"\nMEMORY.md: {os.path.join(engine.root, 'MEMORY.md')}")
    return report_status(summary)
