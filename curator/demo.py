"""`memcurate demo`: a throwaway project seeded from the bundled demo session.

Everything lives in one new temporary folder that the demo names: the
project, its data dir, a stand-in Claude config dir and the memory root. The
person's real Claude folders are never touched.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import time

from memcurate.curator.candidates import staging
from memcurate.curator.util.assets import asset
from memcurate.curator.util.atomic import write_text
from memcurate.curator.util.paths import project_key

DEMO_TRANSCRIPT = os.path.join("demo", "session.jsonl")
DEMO_SESSION = "5e55a1d0-de70-4c1a-9a5e-000000000001"
PARTS = 3  # the transcript is fed to the hook in growing parts, as Claude Code writes it
# What the demo says of its drafts: it runs offline, and offline drafts are evidence cards (curator/candidates/cards.py).
OFFLINE_CARDS = (
    "offline       the demo drafts with no model: each draft is an evidence card (the session's lines, the",
    "              category they suggest, a runbook's error → fix) for you to write as a memory in the TUI:",
    "              e opens it pre-filled, with the evidence beside it",
    "              --auto-approve holds every card you have not written (set auto_approve.offline_cards: true",
    "              to save them as drafted)",
)


MARK = ".memcurate-demo"  # in a demo folder's root: what `tidy_old` may remove
KEEP_HOURS = 24


def tidy_old(parent: str, now: float | None = None, keep_hours: float = KEEP_HOURS) -> list[str]:
    """Remove the demo folders earlier runs left in `parent` (the temp folder) over `keep_hours` old: only
    folders named memcurate-demo-* that hold the demo's mark, are owned by this user and are not links.
    The ones removed; a folder that cannot be removed is left as it is."""
    now = time.time() if now is None else now
    removed: list[str] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for e in entries:
        if not e.name.startswith("memcurate-demo-"):
            continue
        try:
            st = e.stat(follow_symlinks=False)
            mark = os.lstat(os.path.join(e.path, MARK))
        except OSError:
            continue
        if (
            not e.is_dir(follow_symlinks=False)
            or st.st_uid != os.getuid()
            or not stat.S_ISREG(mark.st_mode)
            or now - mark.st_mtime < keep_hours * 3600
        ):
            continue
        shutil.rmtree(e.path, ignore_errors=True)
        if not os.path.exists(e.path):
            removed.append(e.path)
    return removed


def make_project(root: str) -> dict:
    """Lay out the throwaway folders; return their paths."""
    write_text(
        os.path.join(root, MARK),
        "a memcurate demo: removed by a later `memcurate demo` after a day\n",
    )
    project = os.path.join(root, "project")
    claude = os.path.join(root, "claude")
    os.makedirs(os.path.join(project, ".git"))  # a git root, so the hook finds the project
    os.makedirs(os.path.join(project, ".claude"))
    write_text(os.path.join(project, ".claude", "memcurate.yaml"), "backend: offline\n")
    transcript_dir = os.path.join(claude, "projects", project_key(os.path.realpath(project)))
    os.makedirs(transcript_dir)
    return {
        "root": root,
        "project": project,
        "claude_config_dir": claude,
        "transcript": os.path.join(transcript_dir, f"{DEMO_SESSION}.jsonl"),
        "memory_root": os.path.join(transcript_dir, "memory"),
    }


def claude_env(layout: dict) -> dict:
    """The environment Claude Code gives its hooks in the demo: the session's folder and config dir."""
    return {
        **os.environ,
        "CLAUDE_PROJECT_DIR": layout["project"],
        "CLAUDE_CONFIG_DIR": layout["claude_config_dir"],
    }


def play_session(layout: dict, hook) -> None:
    """Write the demo transcript in growing parts, calling `hook(stdin bytes, env)` (the real hook,
    handed in by the command line: the engine does not import hooks/) as Claude Code would."""
    with open(asset(DEMO_TRANSCRIPT), "rb") as f:
        lines = f.read().splitlines(keepends=True)
    cut = [round(len(lines) * (i + 1) / PARTS) for i in range(PARTS)]
    base = {
        "session_id": DEMO_SESSION,
        "transcript_path": layout["transcript"],
        "cwd": layout["project"],
    }
    env = claude_env(layout)
    start = 0
    for end in cut:
        with open(layout["transcript"], "ab") as out:
            out.writelines(lines[start:end])
        start = end
        hook(
            json.dumps({**base, "hook_event_name": "Stop", "stop_hook_active": False}).encode(), env
        )
    hook(json.dumps({**base, "hook_event_name": "SessionEnd", "reason": "exit"}).encode(), env)


def seed(hook) -> dict:
    """A new throwaway demo project with the demo session played through `hook`; returns its layout
    (folders, and `triages`: what was staged)."""
    removed = tidy_old(tempfile.gettempdir())
    layout = make_project(tempfile.mkdtemp(prefix="memcurate-demo-"))
    layout["removed_old"] = removed
    play_session(layout, hook)
    data = layout["data_dir"] = os.path.join(layout["project"], ".memcurate")
    triages = layout["triages"] = []
    for tid in staging.triage_ids(data):
        doc = staging.load_triage(data, tid)
        triages.append(
            {
                "id": tid,
                "byte_range": doc["source"]["byte_range"],
                "categories": {
                    n: c["score"] for n, c in doc["categories"].items() if c["triggered"]
                },
            }
        )
    return layout


def describe(layout: dict) -> None:
    """Say where the demo's folders are and what was staged."""
    data = layout["data_dir"]
    print(f"demo folder   {layout['root']}")
    if layout.get("removed_old"):
        n = len(layout["removed_old"])
        print(f"              (removed {n} demo folder{'s' if n > 1 else ''} of earlier days)")
    print(f"project       {layout['project']}")
    print(
        f"transcript    {layout['transcript']}  (fed to the hook in {PARTS} parts, then SessionEnd)"
    )
    print(f"memory root   {layout['memory_root']}")
    print(f"staged        {len(layout['triages'])} triages in {data}/staging")
    for t in layout["triages"]:
        cats = ", ".join(f"{n} {s:.2f}" for n, s in t["categories"].items())
        print(f"  {t['id']}  bytes {t['byte_range'][0]}..{t['byte_range'][1]}  {cats}")
    for line in OFFLINE_CARDS:
        print(line)
    print(f"\nSee them with: memcurate --project {layout['project']} status")
    print(f"Write them in the TUI: memcurate --project {layout['project']}")
