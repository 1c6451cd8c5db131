"""The subcommands behind `memcurate` (argument parsing lives in cli.py)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from memcurate.curator import config
from memcurate.curator.candidates import staging, usage
from memcurate.curator.project_arg import UserError, project_dir
from memcurate.curator.util.locks import LockBusy
from memcurate.curator.util.paths import AutoMemoryOff, data_dir, resolve_memory_root
from memcurate.curator.util.textsafe import one_line


def _config(project: str, data: str) -> dict:
    try:
        cfg = config.load(project, data)
    except config.ConfigError as e:
        raise UserError(f"config error: {e}") from None
    _warn(cfg)
    return cfg


def open_engine(project: str):
    """The project's Engine (the caller closes it); a config it cannot read is the user's to fix: one line."""
    from memcurate.curator.engine import Engine

    try:
        engine = Engine(project)
    except config.ConfigError as e:
        raise UserError(f"config error: {e}") from None
    _warn(engine.cfg)
    return engine


def _warn(cfg: dict) -> None:
    """What the config loaded with but the user should fix (a retired key), on stderr: stdout may be JSON."""
    for warning in config.warnings(cfg):
        print(f"memcurate: config warning: {one_line(warning, 500)}", file=sys.stderr)


# What `check` and `tidy` say after listing what they staged
PROPOSAL_HINT = "Review one with `memcurate show proposal/<id>`, apply it with `memcurate approve proposal/<id>`."


def _print_json(doc) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def triage(args) -> int:
    from memcurate.curator.candidates.incremental import (  # triage's alone: not on the TUI's start
        CaptureSkipped,
        capture,
    )

    project = project_dir(args)
    data = data_dir(project)
    cfg = _config(project, data)
    staging.clean_incoming(data)
    reports = []
    failed = 0
    for path, empty in _transcripts(args.paths):
        try:
            if empty:
                raise CaptureSkipped(empty)
            report = capture(data, cfg, path, event="backfill", summary=True)
        except (CaptureSkipped, LockBusy) as e:
            failed += 1
            # a file name can hold escape sequences: never echo them raw
            msg = one_line(
                str(e)
                if isinstance(e, CaptureSkipped)
                else f"another process is triaging {path}; try again",
                1000,
            )
            reports.append(
                {
                    "transcript": os.path.abspath(path),
                    "status": "error",
                    "error": msg,
                    "categories": [],
                }
            )
            # with --json too: stdout is the document, stderr the reason
            print(f"memcurate: {msg}", file=sys.stderr)
            continue
        reports.append(report)
        if not args.json:
            _print_triage(report)
    if args.json:
        _print_json({"project": project, "triages": reports})
    return 1 if failed else 0


def _transcripts(paths: list[str]) -> list[tuple[str, str]]:
    """The files `triage` reads, each with why it cannot be read ("" when it can): each path as given, a
    folder's `*.jsonl` (a Claude Code project folder's sessions, oldest first; its sessions' subagent
    folders are not entered)."""
    out: list[tuple[str, str]] = []
    for path in paths:
        if not os.path.isdir(path):
            out.append((path, ""))
            continue
        try:
            found = [e for e in os.scandir(path) if e.name.endswith(".jsonl") and e.is_file()]
            found.sort(key=lambda e: (e.stat().st_mtime, e.name))
        except OSError as e:
            out.append((path, f"{path}: {e.strerror or e}"))
            continue
        out += [(e.path, "") for e in found] or [
            (path, f"{path}: no .jsonl transcript in this folder")
        ]
    return out


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
    try:  # records are checked against the config (Claude's memory folder, the rule threshold) when it loads
        checked = config.load(project, data if os.path.isdir(data) else None)
    except config.ConfigError:
        checked = None  # said below
    doc = {
        "project": project,
        "data_dir": data,
        **staging.counts(data),
        "usage": usage.totals(data),
        "drafts": _drafts(data),
        "claude_writes": _claude_writes(data, project, checked),
        "rules": _rules(data, checked),
        "proposals": _proposals(data),
    }
    try:
        cfg = config.load(project, data if os.path.isdir(data) else None)
        location = resolve_memory_root(project, cfg, data)
        doc["config_warnings"] = config.warnings(cfg)
        doc["memory_root"] = location["path"]
        doc["memory_root_source"] = location["source"]  # config | autoMemoryDirectory | derived
        doc["memory_root_from"] = location["from"]
        doc["memory_root_notes"] = location["notes"]
        doc["claude_config_dir"] = location["claude_config_dir"]
        doc["claude_config_dir_from"] = location["claude_config_dir_from"]
        doc["auto_memory"] = location["auto_memory"]
        from memcurate.curator.drafting import (
            describe,  # not on the TUI's start path (its dataclasses cost ~10 ms)
        )

        doc["drafting"] = describe(cfg).as_dict()  # which backend and models, and why; no SDK
        try:
            from memcurate.curator.memory import memory_md

            doc["memory_md"] = memory_md.usage(doc["memory_root"], cfg).as_dict()
        except Exception as e:  # a damaged MEMORY.md is reported, not fatal to status
            doc["memory_md_error"] = str(e)
    except config.ConfigError as e:
        doc["config_error"] = str(e)
    from memcurate.curator.install import installed

    # where Claude Code runs memcurate's hooks: scopes, review mode
    doc["hooks_installed"] = installed(project)
    if args.json:
        _print_json(doc)
        return 0
    print(f"project      {one_line(project, 500)}")
    print(f"data dir     {one_line(data, 500)}")
    if "memory_root" in doc:
        _print_location(doc)
    else:
        print(f"config error {one_line(doc['config_error'], 500)}")
    for warning in doc.get("config_warnings", ()):
        print(f"config warning {one_line(warning, 500)}")
    _print_installed(doc["hooks_installed"])
    if "drafting" in doc:
        _print_drafting(doc["drafting"])
    categories = sum(doc["by_state"].values())
    print(
        f"triages      {doc['triages']} staged (a session, or a stretch of one), {categories} "
        f"{'category' if categories == 1 else 'categories'} in them"
        + (f" ({doc['unreadable']} unreadable)" if doc["unreadable"] else "")
    )
    for state, n in doc["by_state"].items():
        print(f"  {n:>4}  {state:<10} {staging.STATE_MEANING.get(state, '')}")
    print(
        f"pending      {doc['pending']} {'category' if doc['pending'] == 1 else 'categories'} not yet saved, "
        "rejected or skipped"
    )
    if doc["drafts"]:
        print(
            f"drafts       {len(doc['drafts'])} ready for review (confidence, triage/category, title)"
        )
        for d in doc["drafts"]:
            conf = "  ?  " if d["confidence"] is None else f"{d['confidence']:.2f} "
            mark = " BLOCK" if d["blocked"] else ""
            print(f"  {conf} {d['triage']}/{d['category']}{mark}  {one_line(d['title'], 100)}")
    cw = doc["claude_writes"]
    if any(cw.values()):
        print(
            f"Claude's memory writes  {cw['pending']} pending review (claude/<id>), {cw['saved']} saved, "
            f"{cw['rejected']} rejected"
            + (f", {cw['unreadable']} unreadable" if cw["unreadable"] else "")
        )
    _print_rules(doc["rules"])
    pr = doc["proposals"]
    if any(pr.values()):
        print(
            f"proposals    {pr['pending']} pending review (proposal/<id>), {pr['approved']} approved, "
            f"{pr['rejected']} rejected"
            + (f", {pr['damaged']} unreadable" if pr["damaged"] else "")
        )
    print(f"model use    {usage.describe(doc['usage']['overall'])}")
    md = doc.get("memory_md")
    if md:
        print(
            f"MEMORY.md    {md['total']['lines']}/{md['total']['max_lines']} lines, "
            f"{md['total']['chars']}/{md['total']['max_chars']} characters as Claude Code loads it"
            + (" (Claude Code cuts it)" if md["total"]["cut"] else "")
        )
        for name, u in md["sections"].items():
            print(f"  {name:<16}{u['used']:>3}/{u['budget']}")
        # by someone else, e.g. Claude Code's consolidation: memcurate does not re-add it
        if md.get("removed"):
            print(
                f"  removed by someone else: {', '.join(md['removed'])} (new memories saved, not listed; "
                "`memcurate check` shows the marker lines to paste back)"
            )
    elif doc.get("memory_md_error"):
        print(f"MEMORY.md    {one_line(doc['memory_md_error'], 300)}")
    return 0


def _claude_writes(data: str, project: str, cfg: dict | None) -> dict:
    """Claude's own memory writes staged in review mode, by state (`unreadable`: those that cannot be read
    or, given the config, do not check out against Claude's memory folder)."""
    from memcurate.curator.candidates import claude_writes

    counts = {"pending": 0, "saved": 0, "rejected": 0}
    good, bad = claude_writes.scan(
        data, claude_writes.memory_folder(project, cfg, data) if cfg else None
    )
    for record in good:
        counts[record["state"]] = counts.get(record["state"], 0) + 1
    return {**counts, "unreadable": len(bad)}


def _proposals(data: str) -> dict:
    """Proposals of changes to existing memories, by state (and how many cannot be read)."""
    from memcurate.curator.proposals import store

    return store.counts(data)


def _rules(data: str, cfg: dict | None) -> dict:
    """Rule graduation: signatures counted, candidates by state (given the config, a pending one the failure
    ledger does not back is not one), each pending one (id, sessions, kind, the rule's first words), and the
    approved ones whose failure came back after the rule was written."""
    from memcurate.curator.review import rule_actions
    from memcurate.curator.rules import candidates, ledger

    doc: dict[str, Any] = {
        "tracked": len(ledger.keys(data)),
        "pending": 0,
        "approved": 0,
        "rejected": 0,
        "candidates": [],
        "recurring": [],
    }
    for cand in candidates.all(
        data, every=True, threshold=cfg["rules"]["threshold"] if cfg else None
    ):
        doc[cand.state] = doc.get(cand.state, 0) + 1
        rid = rule_actions.PREFIX + cand.id
        kind = (cand.failure or {}).get("kind", "")
        if cand.state == rule_actions.PENDING:
            doc["candidates"].append(
                {
                    "id": rid,
                    "sessions": cand.sessions,
                    "kind": kind,
                    "rule": one_line(rule_actions.text(cand)["rule"], 80),
                }
            )
        elif rule_actions.since_written(cand):
            doc["recurring"].append(
                {
                    "id": rid,
                    "file": (cand.decision or {}).get("file", ""),
                    "sessions": cand.sessions,
                    "since": rule_actions.since_written(cand),
                }
            )
    return doc


def _print_rules(r: dict) -> None:
    from memcurate.curator.review.rule_actions import recurred

    if not (r["tracked"] or r["pending"] or r["approved"] or r["rejected"]):
        return
    print(
        f"rules        {r['tracked']} failure signature(s) tracked; candidates: {r['pending']} pending, "
        f"{r['approved']} approved, {r['rejected']} rejected"
    )
    for c in r["candidates"]:
        print(f"  {c['id']}  {c['sessions']} sessions  {c['kind']:<8} {c['rule']}")
    for c in r["recurring"]:
        print(f"  {c['id']}  approved ({one_line(c['file'], 200)}): {recurred(c['since'])}")


def install(args) -> int:
    """`memcurate install` and `memcurate uninstall`."""
    from memcurate.curator import install as setup

    # the user scope's file is not the project's; its --project is unused
    project = project_dir(args)
    try:
        if args.command == "install":
            report = setup.install(project, args.scope, review_auto_memory=args.review_auto_memory)
        else:
            report = setup.uninstall(project, args.scope)
    except setup.InstallError as e:
        raise UserError(one_line(str(e), 1000)) from None
    for note in report["notes"]:
        print(f"memcurate: note: {one_line(note, 1000)}", file=sys.stderr)
    if args.json:
        _print_json(report)
    else:
        _print_install(report)
    return 0


def _print_install(r: dict) -> None:
    where = f"{one_line(r['settings'], 500)} ({r['scope']} scope)"
    if r["target"]:
        where += f", a link to {one_line(r['target'], 500)}"
    if not r["changed"]:
        print(
            f"memcurate's hooks are already installed in {where}"
            if r["action"] == "install"
            else f"memcurate's hooks are not installed in {where}: nothing to remove"
        )
        return
    if r["action"] == "install":
        print(f"{'created' if r['created'] else 'updated'} {where}")
        print(
            f"  command  {one_line(r['command'], 500)}"
            + (
                "  (review mode: Claude's own memory writes wait for you)"
                if r["review_auto_memory"]
                else ""
            )
        )
    else:
        how = (
            "removed the file (install had created it)"
            if r.get("deleted")
            else "gave back its bytes from before install"
            if r["restored"]
            else "removed memcurate's entries"
        )
        print(f"updated {where}: {how}")
    for key in ("added", "updated", "removed"):
        if r[key]:
            print(f"  {key:<8} {', '.join(r[key])}")
    print(
        f"  backup   {one_line(r['backup'], 500)}"
        if r["backup"]
        else "  backup   none (there was no file before)"
    )


def _print_installed(found: list[dict]) -> None:
    if not found:
        print("hooks        not installed in Claude Code's settings (run `memcurate install`)")
    for i, f in enumerate(found):
        head = "hooks        " if i == 0 else "             "
        where = f"{f['scope']}: {one_line(f['settings'], 500)}"
        if "error" in f:
            print(f"{head}{f['scope']}: unreadable: {one_line(f['error'], 500)}")
        elif "plugin" in f:
            print(f"{head}{where}: plugin {one_line(f['plugin'], 100)} enabled")
        else:
            review = ", review mode" if f["review_auto_memory"] else ""
            print(f"{head}{where} ({len(f['events'])} events{review})")
            if f.get("outdated"):
                print(
                    "             written by an older memcurate (`-m curator.cli`), which this one no "
                    f"longer answers: run `memcurate install --scope {f['scope']}` again"
                )


def _drafts(data: str) -> list[dict]:
    """The drafts ready for review, each with its confidence: from the state logs alone (one file a triage)."""
    from memcurate.curator.candidates.queue import Board
    from memcurate.curator.util.redact import redact_text

    if not os.path.isdir(data):
        return []
    return [
        {
            "triage": i.tid,
            "category": i.category,
            "title": redact_text(i.title),
            "action": i.action,
            "confidence": i.confidence,
            "blocked": bool(i.blocks),
        }
        for items in Board(data).load().values()
        for i in items
        if i.state == "ready"
    ]


def _print_location(doc: dict) -> None:
    print(f"memory root  {one_line(doc['memory_root'], 500)}")
    print(f"  from       {one_line(doc['memory_root_from'], 500)}")
    print(
        f"  config dir {one_line(doc['claude_config_dir'], 500)} ({one_line(doc['claude_config_dir_from'], 500)})"
    )
    auto = doc["auto_memory"]
    print(f"auto memory  {'on' if auto['enabled'] else 'OFF'} ({one_line(auto['why'], 300)})")
    for note in doc["memory_root_notes"]:
        print(f"  note: {one_line(note, 300)}")


def _drafting_row(line: str) -> str:
    """The drafting line as a row of status and the --auto-approve summary."""
    return f"drafting     {one_line(line.removeprefix('drafting: '), 500)}"


def _print_drafting(d: dict) -> None:
    print(_drafting_row(d["line"]))
    for warning in d["warnings"]:
        print(f"  warning: {one_line(warning, 300)}")
    if d["deprecation_table"] != "available":
        print(f"  note: {d['deprecation_table']}")


def auto_approve(args) -> int:
    return run_headless(project_dir(args), args.json, min_confidence=args.min_confidence)


def run_headless(
    project: str,
    json_out: bool,
    *,
    show_memory_md: bool = False,
    min_confidence: float | None = None,
) -> int:
    """`--auto-approve` on `project`: the summary (one JSON document, or text; `show_memory_md` adds
    where MEMORY.md is) and the exit status. `min_confidence` overrides the config's gate."""
    from memcurate.curator.drafting import DrafterUnavailable
    from memcurate.curator.headless import auto_approve as run

    engine = open_engine(project)
    try:
        engine.check_saving()
        summary = run(engine, min_confidence=min_confidence)
    except (AutoMemoryOff, DrafterUnavailable) as e:  # one line to act on, not an internal error
        raise UserError(str(e)) from None
    finally:
        engine.close()
    summary = {
        "project": project,
        "memory_root": engine.root,
        "drafting": engine.drafting_status().line,
        **summary,
    }
    # What --auto-approve never saves, so a person knows it waits: proposals and Claude's own writes.
    summary["waiting"] = {
        "proposals": _proposals(engine.data).get("pending", 0),
        "claude_writes": _claude_writes(engine.data, project, engine.cfg).get("pending", 0),
    }
    if json_out:
        _print_json(summary)
    else:
        print_summary(summary)
        if show_memory_md:
            print(f"\nMEMORY.md: {one_line(os.path.join(engine.root, 'MEMORY.md'), 500)}")
    return report_status(summary)


def report_status(summary: dict) -> int:
    """The exit status of an --auto-approve run, with its one line on stderr when it is 1."""
    from memcurate.curator.headless import exit_status

    code = exit_status(summary)
    if code:
        said = [
            f"{n} {what}"
            for n, what in (
                (len(summary["failed"]), "failed"),
                (len(summary["unreadable"]), "staged triage(s) unreadable"),
                (len(summary.get("rules", {}).get("failed", [])), "rule(s) not written"),
            )
            if n
        ]
        line = ", ".join(said)
        if summary.get("stopped"):
            line += ("; " if line else "") + "stopped: " + one_line(summary["stopped"], 300)
        print(f"memcurate: {line} (see the summary)", file=sys.stderr)
    return code


def print_summary(summary: dict) -> None:
    print(f"memory root  {one_line(summary['memory_root'], 500)}")
    if summary.get("drafting"):
        print(_drafting_row(summary["drafting"]))
    if "min_confidence" in summary:
        print(f"gate      saves drafts with confidence ≥ {summary['min_confidence']:.2f}")
    for key in ("created", "updated", "deleted", "noop"):
        items = summary[key]
        print(f"{key:<9} {len(items)}")
        for item in items:
            if item.get("path"):
                conf = (
                    f"  (confidence {item['confidence']:.2f})"
                    if item.get("confidence") is not None
                    else ""
                )
                print(f"  {one_line(item['path'], 500)}{conf}")
    for key, hint in (
        ("skipped", "nothing durable, or said by another memory"),
        ("blocked", "left for review"),
        ("held", "a person must approve them"),
        ("unsure", "below the confidence gate: review them in the TUI"),
        ("conflicts", "left for review"),
        ("failed", "retry in the TUI"),
        ("busy", "another process holds them"),
        ("unreadable", "fix or delete them"),
        ("left", "the next run does them"),
    ):
        items = summary.get(key, [])
        if key in ("skipped", "unreadable", "left") and not items:
            continue
        print(f"{key:<9} {len(items)}" + (f"  ({hint})" if items else ""))
        for item in items:
            if key == "unsure":
                _print_unsure(item)
            elif isinstance(item, dict):
                why = (
                    "; ".join(item.get("issues", []))
                    or item.get("error", "")
                    or item.get("reason", "")
                )
                name = item["triage"] + (f"/{item['category']}" if item.get("category") else "")
                print(f"  {name}" + (f": {one_line(why, 300)}" if why else ""))
            else:
                print(f"  {item}")
    cards = sum(
        1 for item in summary.get("held", []) if isinstance(item, dict) and item.get("card")
    )
    if cards:
        print(
            f"cards     {cards} offline card{'s' if cards > 1 else ''} held for you to write in the TUI "
            "(memcurate: e edits one, the evidence beside it)"
        )
    _print_headless_rules(summary.get("rules"))
    waiting = summary.get("waiting") or {}
    for key, what in (
        ("proposals", "proposal(s) of changes to saved memories"),
        ("claude_writes", "memory write(s) of Claude's own"),
    ):
        if waiting.get(key):
            print(
                f"waiting   {waiting[key]} {what} for your review, never saved headless "
                "(memcurate list; memcurate approve ID)"
            )
    if summary.get("stopped"):
        print(
            f"stopped   {one_line(summary['stopped'], 300)}: nothing more was written; "
            "what is left is done by the next run"
        )
    for note in summary.get("notes", []):
        print(f"note: {one_line(note, 300)}")


def _print_headless_rules(rules: dict | None) -> None:
    """The rule candidates of an --auto-approve run: written (rules.auto_approve), waiting, failed."""
    if not rules or not any(rules.values()):
        return
    if rules["written"]:
        print(f"rules     {len(rules['written'])} written")
        for r in rules["written"]:
            print(f"  {r['id']}  {one_line(r['file'], 300)}")
    if rules["waiting"]:
        print(
            f"rules     {len(rules['waiting'])} wait for review  (memcurate list; approve with memcurate approve ID)"
        )
        for r in rules["waiting"]:
            print(
                f"  {r['id']}  {r['sessions']} sessions"
                + (f": {one_line(r['error'], 300)}" if r["error"] else "")
            )
    for r in rules["failed"]:
        print(f"rules     failed {r['id']}: {one_line(r['error'], 300)}")


def _print_unsure(item: dict) -> None:
    """A draft held below the gate: its confidence, title, and the (at most three) factors that pulled it down."""
    conf = "?" if item.get("confidence") is None else f"{item['confidence']:.2f}"
    print(
        f"  {item['triage']}/{item['category']}  {conf}  {one_line(item.get('title') or '', 100)}"
    )
    for f in item.get("why", [])[:3]:
        print(f"      {f['effect']:+.2f} {f['name']}: {one_line(f['why'], 200)}")


def demo(args, *, hook, review=None) -> int:
    """A throwaway project seeded from the bundled session through the real `hook`; then the TUI
    (`review`, handed in by the command line) or, with --auto-approve, the headless run."""
    from memcurate.curator import demo as demo_project

    json_out, headless = getattr(args, "json", False), getattr(args, "auto_approve", False)
    layout = demo_project.seed(hook)
    if json_out and not headless:
        _print_json({**layout, "counts": staging.counts(layout["data_dir"])})
    elif not json_out:
        demo_project.describe(layout)
    if headless:
        if not json_out:
            print()
        return run_headless(layout["project"], json_out, show_memory_md=True)
    if review is not None and not json_out:
        return review(layout["project"])
    return 0
