"""The subcommands behind `memcurate` (argument parsing lives in cli.py)."""

from __future__ import annotations

import json
import os
import sys

from . import config, staging
from .capture import CaptureSkipped, capture
from .locks import LockBusy
from .paths import data_dir, memory_root, project_root
from .textsafe import one_line


class UserError(Exception):
    """An error the user must act on: one clear line, exit 1."""


def project_dir(args) -> str:
    """The project a command works on: --project, else the git root of the current folder."""
    if args.project:
        path = os.path.abspath(os.path.expanduser(args.project))
        if not os.path.isdir(path):
            raise UserError(f"--project {args.project}: not a folder")
        return path
    return project_root()


def _config(project: str, data: str) -> dict:
    try:
        return config.load(project, data)
    except config.ConfigError as e:
        raise UserError(f"config error: {e}") from None


def _print_json(doc) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def triage(args) -> int:
    project = project_dir(args)
    data = data_dir(project)
    cfg = _config(project, data)
    staging.clean_incoming(data)
    reports = []
    failed = 0
    for path in args.paths:
        try:
            report = capture(data, cfg, path, event="backfill", summary=True)
        except (CaptureSkipped, LockBusy) as e:
            failed += 1
            msg = one_line(str(e) if isinstance(e, CaptureSkipped) else f"another process is triaging {path}; try again",
                           1000)  # a file name can hold escape sequences: never echo them raw
            reports.append({"transcript": os.path.abspath(path), "status": "error", "error": msg, "categories": []})
            print(f"memcurate: {msg}", file=sys.stderr)  # with --json too: stdout is the document, stderr the reason
            continue
        reports.append(report)
        if not args.json:
            _print_triage(report)
    if args.json:
        _print_json({"project": project, "triages": reports})
    return 1 if failed else 0


def _print_triage(report: dict) -> None:
    start, end = report["byte_range"]
    print(one_line(report["transcript"], 500))
    if report["status"] == "nothing-new":
        print(f"  nothing new since byte {start}")
        return
    where = f"staged as {report['triage']}" if report["triage"] else "nothing triggered"
    print(f"  bytes {start}..{end}: {where}")
    for c in report["categories"]:
        mark = "●" if c["triggered"] else "·"
        print(f"  {mark} {c['category']:<16} {c['score']:.2f}")
    for note in report["notes"]:
        print(f"  note: {one_line(note, 300)}")
    if report["stats"] and report["stats"]["bad_lines"]:
        print(f"  skipped lines: {report['stats']['bad_lines']}")


def status(args) -> int:
    project = project_dir(args)
    data = data_dir(project, create=False)
    doc = {"project": project, "data_dir": data, **staging.counts(data)}
    try:
        cfg = config.load(project, data if os.path.isdir(data) else None)
        doc["memory_root"] = memory_root(project, cfg, data)
        try:
            from . import memory_md

            doc["memory_md"] = memory_md.usage(doc["memory_root"], cfg)
        except Exception as e:  # a damaged MEMORY.md is reported, not fatal to status
            doc["memory_md_error"] = str(e)
    except config.ConfigError as e:
        doc["config_error"] = str(e)
    if args.json:
        _print_json(doc)
        return 0
    print(f"project      {one_line(project, 500)}")
    print(f"data dir     {one_line(data, 500)}")
    if "memory_root" in doc:
        print(f"memory root  {one_line(doc['memory_root'], 500)}")
    else:
        print(f"config error {one_line(doc['config_error'], 500)}")
    print(f"triages      {doc['triages']}" + (f" ({doc['unreadable']} unreadable)" if doc["unreadable"] else ""))
    if doc["by_state"]:
        for state, n in doc["by_state"].items():
            print(f"  {state:<11}{n}")
    print(f"pending      {doc['pending']}")
    usage = doc.get("memory_md")
    if usage:
        print(f"MEMORY.md    {usage['total']['lines']}/{usage['total']['max_lines']} lines, "
              f"{usage['total']['bytes']}/{usage['total']['max_bytes']} bytes")
        for name, u in usage["sections"].items():
            print(f"  {name:<16}{u['used']:>3}/{u['budget']}")
    elif doc.get("memory_md_error"):
        print(f"MEMORY.md    {one_line(doc['memory_md_error'], 300)}")
    return 0


def auto_approve(args) -> int:
    from .engine import Engine
    from .headless import auto_approve as run

    project = project_dir(args)
    try:
        engine = Engine(project)
    except config.ConfigError as e:
        raise UserError(f"config error: {e}") from None
    try:
        summary = run(engine)
    finally:
        engine.close()
    summary = {"project": project, "memory_root": engine.root, **summary}
    if args.json:
        _print_json(summary)
        return 0
    print_summary(summary)
    return 0


def print_summary(summary: dict) -> None:
    print(f"memory root  {one_line(summary['memory_root'], 500)}")
    for key in ("created", "updated", "deleted", "noop"):
        items = summary[key]
        print(f"{key:<9} {len(items)}")
        for item in items:
            if item.get("path"):
                print(f"  {one_line(item['path'], 500)}")
    for key, hint in (("blocked", "left for review"), ("held", "a person must approve them"),
                      ("conflicts", "left for review"), ("failed", "retry in the TUI"),
                      ("busy", "another process holds them")):
        items = summary[key]
        print(f"{key:<9} {len(items)}" + (f"  ({hint})" if items else ""))
        for item in items:
            if isinstance(item, dict):
                why = "; ".join(item.get("issues", [])) or item.get("error", "")
                print(f"  {item['triage']}/{item['category']}: {one_line(why, 300)}")
            else:
                print(f"  {item}")
    for note in summary.get("notes", []):
        print(f"note: {one_line(note, 300)}")


def demo(args, review=None) -> int:
    from .demo import run_demo

    return run_demo(json_out=getattr(args, "json", False), auto_approve=getattr(args, "auto_approve", False),
                    review=review)

