"""Make docs/images/tui.svg, the README's screenshot: the review TUI on the demo project.

    python docs/make_screenshot.py [--out docs/images/tui.svg] [--size 160x48]

It seeds the demo as `memcurate demo` does (the bundled session fed through the real hook, drafted
offline), opens the app under Textual's Pilot, waits until every row is drafted, selects the first
ready row and saves the screen as SVG. Everything lives in one temporary folder, removed afterwards;
your own Claude and memcurate folders are never read (CLAUDE_CONFIG_DIR and XDG_CONFIG_HOME point
into it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "images", "tui.svg"))
    ap.add_argument("--size", default="160x48", help="columns x rows")
    args = ap.parse_args()
    cols, rows = (int(n) for n in args.size.split("x"))
    home = tempfile.mkdtemp(prefix="memcurate-shot-")
    os.environ["XDG_CONFIG_HOME"] = os.path.join(home, "config")
    os.environ["XDG_STATE_HOME"] = os.path.join(home, "state")
    os.environ.pop("ANTHROPIC_API_KEY", None)
    layout = None
    try:
        from memcurate.curator import demo
        from memcurate.curator.cli import _hook

        layout = demo.seed(_hook)
        os.environ["CLAUDE_CONFIG_DIR"] = layout["claude_config_dir"]
        asyncio.run(shoot(layout["project"], (cols, rows), args.out))
    finally:
        shutil.rmtree(home, ignore_errors=True)
        if layout:
            shutil.rmtree(layout["root"], ignore_errors=True)
    print(args.out)
    return 0


async def shoot(project: str, size: tuple[int, int], out: str) -> None:
    """Drive the app until the demo's rows are drafted, select the first one, save the SVG."""
    from memcurate.widgets.app import make_app
    from memcurate.widgets.queue import QueueTable

    app = make_app(project, watch=False, subtitle="demo project")
    async with app.run_test(size=size) as pilot:
        await app.ready()
        queue = app.query_one(QueueTable)
        for _ in range(600):  # at most a minute: the offline drafter takes a few seconds
            await pilot.pause(0.1)
            counts = re.match(r"Pending (\d+) — (\d+) ready", str(queue.border_title or ""))
            if counts and counts[1] == counts[2]:
                break
        queue.focus()
        queue.move_cursor(row=0)
        await pilot.pause(1.0)  # the detail worker fills the document panel
        os.makedirs(os.path.dirname(out), exist_ok=True)
        app.save_screenshot(filename=os.path.basename(out), path=os.path.dirname(out))


if __name__ == "__main__":
    sys.exit(main())
