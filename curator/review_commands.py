"""Review from a script: `memcurate list / show / approve / reject` (argument parsing lives in cli.py).

Each builds the project's Engine and calls its review methods (curator/review/kinds.py behind
them): the same calls the TUI makes. With --json, exactly one JSON document on stdout, also when the
exit status is 1 (its `errors` say why; stderr has one line each as well).
"""

from __future__ import annotations

import os
import sys

from memcurate.curator.commands import UserError, _print_json, open_engine, project_dir
from memcurate.curator.drafting import DrafterUnavailable
from memcurate.curator.review.items import APPROVE, REJECT, Unresolved
from memcurate.curator.util.paths import ARCHIVE_DIR, AutoMemoryOff, data_dir
from memcurate.curator.util.redact import redact_all
from memcurate.curator.util.textsafe import clean, one_line


def list_items(args) -> int:
    def body(engine, doc: dict) -> int:
        if args.draft:
            doc["drafting"] = engine.drafting_status().line
            doc["drafted"] = engine.draft_pending()
        # masked as printed: a title, an issue or an error may quote a secret a file holds
        doc["items"] = redact_all(
            [i.as_dict() for i in (engine.review_items(every=args.all) if engine else [])]
        )
        if not args.json:
            _print_list(doc)
        return 1 if doc.get("drafted", {}).get("failed") else 0

    # Read-only: a project memcurate never staged anything in gets no data dir from a listing.
    return _run(args, body, need_data=not args.draft)


def show(args) -> int:
    def body(engine, doc: dict) -> int:
        if engine is None:
            raise Unresolved(
                [{"id": args.id, "error": f"{args.id}: no such item (nothing staged here)"}]
            )
        [item] = engine.find_items([args.id])
        # masked as printed, whatever a file holds
        doc.update(redact_all({"item": item.as_dict(), **engine.detail(item).as_dict()}))
        if not args.json:
            _print_show(doc)
        return 0

    return _run(args, body, need_data=True)


def approve(args) -> int:
    def body(engine, doc: dict) -> int:
        outcomes = (
            engine.approve_items(engine.find_items(args.ids, APPROVE))
            if engine
            else _nothing_staged(args.ids)
        )
        doc["saved"] = [o.as_dict() for o in outcomes if o.done]
        doc["refused"] = [{"id": o.id, "error": o.error} for o in outcomes if not o.done]
        if not args.json:
            for o in outcomes:
                if o.done:
                    # a proposal names the files it changed, relative to the root
                    wrote = o.path or o.where
                    print(
                        f"saved    {o.id}  {o.action}  "
                        + (one_line(wrote, 500) if wrote else "(nothing written)")
                    )
            for cat, ids in _archived(outcomes).items():
                print(
                    f"archived {cat}: {', '.join(ids)} (moved from MEMORY.md to {ARCHIVE_DIR}/{cat}.md)"
                )
        return _refused(doc)

    return _run(args, body, need_data=True)


def reject(args) -> int:
    def body(engine, doc: dict) -> int:
        outcomes = (
            engine.reject_items(engine.find_items(args.ids, REJECT), args.reason or "")
            if engine
            else _nothing_staged(args.ids)
        )
        doc["rejected"] = [o.id for o in outcomes if o.done]
        doc["refused"] = [{"id": o.id, "error": o.error} for o in outcomes if not o.done]
        if not args.json:
            for o in outcomes:
                if o.done:
                    print(f"rejected {o.id}")
        return _refused(doc)

    return _run(args, body, need_data=True)


# -- the frame: engine, errors, the JSON document -------------------------------------------


def _run(args, body, *, need_data: bool) -> int:
    """Run `body(engine, doc)` (engine None when the project has no data dir and `need_data` allows
    reading none); errors the user must act on become exit 1, one stderr line each, and with --json
    the `errors` of the one document."""
    doc: dict = {"project": None}
    engine = None
    try:
        doc["project"] = project = project_dir(args)
        if os.path.isdir(data_dir(project, create=False)) or not need_data:
            engine = open_engine(project)
        try:
            code = body(engine, doc)
        except Unresolved as e:
            doc["errors"] = e.problems
        except (AutoMemoryOff, DrafterUnavailable) as e:
            raise UserError(str(e)) from None
        finally:
            if engine is not None:
                engine.close()
    except UserError as e:
        if not args.json:
            raise
        doc["errors"] = [{"id": None, "error": str(e)}]
    if doc.get("errors"):
        for p in doc["errors"]:
            print(f"memcurate: {one_line(p['error'], 1000)}", file=sys.stderr)
        code = 1
        if args.command in _NOTHING_DONE and not args.json:
            print(_NOTHING_DONE[args.command])  # all or none: the problems above stopped every one
    if args.json:
        _print_json(doc)
    return code


_NOTHING_DONE = {"approve": "nothing approved", "reject": "nothing rejected"}


def _nothing_staged(ids: list[str]):
    raise Unresolved([{"id": i, "error": f"{i}: no such item (nothing staged here)"} for i in ids])


def _refused(doc: dict) -> int:
    for r in doc["refused"]:
        print(f"memcurate: {r['id']}: {one_line(r['error'], 1000)}", file=sys.stderr)
    return 1 if doc["refused"] else 0


def _archived(outcomes) -> dict[str, list[str]]:
    """What the approvals moved from MEMORY.md to the archive (the same for the items of one save)."""
    moved: dict[str, list[str]] = {}
    for o in outcomes:
        for cat, ids in o.archived.items():
            moved.setdefault(cat, [])
            moved[cat] += [i for i in ids if i not in moved[cat]]
    return moved


# -- text ------------------------------------------------------------------------------------


def _print_list(doc: dict) -> None:
    drafted = doc.get("drafted")
    if drafted is not None:
        done = drafted.get("drafted", [])
        rules = sum(1 for d in done if d.startswith("rule/"))
        print(
            f"drafted  {len(done) - rules} triage(s)"
            + (f" and {rules} rule(s)" if rules else "")
            + f" with {one_line(doc['drafting'], 300)}"
        )
        for tid in drafted.get("busy", []):
            print(f"  busy   {tid}: another process is working on it; try again")
        for f in drafted.get("failed", []):
            print(f"  failed {f['triage']}: {one_line(f['error'], 300)}")
    items = doc["items"]
    if not items:
        print("nothing waits for review")
        return
    rows = [
        (
            i["id"],
            i["kind"],
            _state(i),
            f"{i['category']} {i['action']}" if i["kind"] == "proposal" else i["category"],
            "  -" if i["confidence"] is None else f"{i['confidence']:.2f}",
            one_line(i["title"] or i["error"] or i["reason"], 100),
        )
        for i in items
    ]
    widths = [max(len(r[c]) for r in rows + [_HEAD]) for c in range(5)]
    line = "  ".join(f"{{:<{w}}}" for w in widths) + "  {}"
    print(line.format(*_HEAD).rstrip())
    for item, row in zip(items, rows):
        print(line.format(*(one_line(c, 200) for c in row)))
        if item.get("rule"):
            print("    " + _rule_line(item))
        for issue in item["issues"]:
            print(
                f"    {issue['severity']:<8} {one_line(issue['where'], 60)}: {one_line(issue['message'], 200)}"
            )
        # a damaged record's whole why
        if item["error"] and (item["title"] or len(item["error"]) > 100):
            print(f"    error    {one_line(item['error'], 200 if item['title'] else 600)}")
        if item.get("reason") and item["title"] and item["state"] in ("rejected", "skipped"):
            # why it was rejected or skipped
            print(f"    {'why':<8} {one_line(item['reason'], 300)}")
    counts: dict[str, int] = {}
    for i in items:
        counts[_state(i)] = counts.get(_state(i), 0) + 1
    print(
        "\n"
        + ", ".join(f"{n} {s}" for s, n in counts.items())
        + (
            "; approve with: memcurate approve ID...  (any unique prefix of an ID will do)"
            if counts.get("ready")
            else ""
        )
    )


_HEAD = ("ID", "KIND", "STATE", "CATEGORY", "CONF", "TITLE")


def _state(item: dict) -> str:
    """The state as the list shows it: a ready item with a BLOCK issue is `BLOCKED` (not approvable)."""
    return "BLOCKED" if item["state"] == "ready" and item["blocked"] else item["state"]


def _rule_line(item: dict) -> str:
    """A rule candidate under its row: how often it failed, what kind, the file it writes (or wrote)."""
    from memcurate.curator.review.rule_actions import recurred

    r = item["rule"]
    verb = {"saved": "wrote", "rejected": "would have written"}.get(item["state"], "writes")
    since = f"; {recurred(r['since_written'])}" if r.get("since_written") else ""
    where = f"{verb} {one_line(r['file'], 200)}" if r["file"] else "no file"
    return f"{r['count']} sessions · {one_line(r['kind'], 20)} ({one_line(r['tool'], 20)}) · {where}{since}"


def _print_head(item: dict, kind: str) -> None:
    print(f"id          {item['id']}")
    print(f"kind        {kind}")
    print(f"state       {_state(item)}")
    if item.get("reason") and item["state"] in ("rejected", "skipped"):
        print(f"why         {one_line(item['reason'], 500)}")


def _print_show(doc: dict) -> None:
    if doc["item"]["kind"] == "rule":
        return _print_rule_show(doc)
    if doc["item"]["kind"] == "proposal":
        return _print_proposal_show(doc)
    item, decision = doc["item"], doc["decision"]
    _print_head(item, item["kind"])
    print(f"category    {item['category']}")
    print(f"title       {one_line(item['title'], 200)}")
    print(f"decision    {_decision(item, decision)}")
    for reason in decision.get("reasons") or []:
        print(f"            {one_line(reason, 200)}")
    conf = doc.get("confidence") or {}
    if conf.get("value") is not None:
        print(f"confidence  {conf['value']:.2f}")
        for f in conf.get("factors", []):
            print(f"  {f['effect']:+.2f} {one_line(f['name'], 40)}: {one_line(f['why'], 200)}")
    print(f"issues      {len(item['issues']) or 'none'}")
    for issue in item["issues"]:
        print(
            f"  {issue['severity']:<8} {one_line(issue['code'], 40)} {one_line(issue['where'], 60)}: "
            f"{one_line(issue['message'], 300)}"
        )
    moved = doc.get("archive") or {}
    if moved:
        print(
            "MEMORY.md   approving moves to the archive: "
            + "; ".join(f"{c}: {', '.join(ids)}" for c, ids in moved.items())
        )
    elif doc.get("note"):
        print(f"MEMORY.md   {one_line(doc['note'], 300)}")
    # a write of Claude's archives nothing
    elif item["state"] == "ready" and item["kind"] == "memory":
        print("MEMORY.md   approving moves nothing to the archive")
    if decision.get("action") == "noop" and not decision.get("source_only"):
        print("\n--- the draft (a noop: approving writes nothing) ---")
    else:
        where = f" ({item['where']})" if item["where"] else ""
        print(f"\n--- the file to be written{where} ---")
    sys.stdout.write(_block(doc["text"]))
    if doc.get("diff"):
        print(f"\n--- diff against {item['where'] or 'the memory it updates'} ---")
        sys.stdout.write(_block(doc["diff"]))


def _print_rule_show(doc: dict) -> None:
    """A rule candidate: the rule, where it goes, why (the failure and each session's evidence), then the
    rule file as approving would write it and the diff against the file as it is."""
    item, rule, failure = doc["item"], doc["rule"], doc.get("failure") or {}
    _print_head(item, "rule")
    print(f"rule        {one_line(rule['rule'], 300)}")
    print(f"topic       {one_line(rule['topic'], 60)}")
    print(
        f"paths       {', '.join(one_line(p, 200) for p in rule['paths']) or '(none: a project-wide rule)'}"
    )
    print(
        f"file        {one_line(rule['file'], 300) or '-'}  ({one_line(doc['decision']['action'] or '-', 20)})"
    )
    for reason in doc["decision"].get("reasons") or []:
        print(f"            {one_line(reason, 200)}")
    for issue in item["issues"]:
        print(
            f"  {issue['severity']:<8} {one_line(issue['where'], 60)}: {one_line(issue['message'], 300)}"
        )
    print(
        f"failure     {one_line(failure.get('kind', ''), 20)} ({one_line(failure.get('tool', ''), 20)}): "
        f"{one_line(failure.get('signature', ''), 300)}"
    )
    if failure.get("files"):
        print(f"  files     {', '.join(one_line(f, 200) for f in failure['files'])}")
    print(f"\n--- evidence: {len(doc['evidence'])} session(s) ---")
    for ev in doc["evidence"]:
        print(
            f"{one_line(ev.get('at') or '?', 30)}  session {one_line(ev.get('session') or '?', 80)}"
            f"  ({one_line(ev.get('source') or '', 20)})"
        )
        if ev.get("command"):
            print(f"  command  {one_line(ev['command'], 300)}")
        lines = [line for line in clean(ev.get("error") or "").splitlines() if line.strip()]
        for n, line in enumerate(lines[:8]):
            print(f"  {'error' if n == 0 else '':<8} {one_line(line, 200)}")
        fix = ev.get("fix") or {}
        if fix:
            files = (
                f" (edited {', '.join(one_line(f, 100) for f in fix.get('files') or [])})"
                if fix.get("files")
                else ""
            )
            print(f"  fix      {one_line(fix.get('text') or '', 300)}{files}")
    print(f"\n--- the rule file as approving would write it ({one_line(rule['file'], 300)}) ---")
    sys.stdout.write(_block(doc["text"]))
    # a new file's diff is the file again
    if doc.get("diff") and doc["decision"]["action"] == "extend":
        print(f"\n--- diff against {one_line(rule['file'], 300)} ---")
        sys.stdout.write(_block(doc["diff"]))


def _print_proposal_show(doc: dict) -> None:
    """A proposal: what and why, what stops it, then the diff of every file approving would change."""
    item, record = doc["item"], doc.get("proposal") or {}
    _print_head(item, f"proposal ({one_line(item['action'], 20)})")
    print(f"title       {one_line(item['title'], 200)}")
    for reason in doc["decision"].get("reasons") or []:
        print(f"            {one_line(reason, 300)}")
    for issue in item["issues"]:
        print(
            f"  {issue['severity']:<8} {one_line(issue['code'], 40)}: {one_line(issue['message'], 300)}"
        )
    if item["state"] != "ready":
        decided = record.get("decision") or {}
        print(
            f"decided     {one_line(decided.get('at') or '', 30)}  {one_line(item['where'] or item['reason'], 300)}"
        )
        return
    for f in doc.get("files") or []:
        print(f"\n--- {one_line(f.get('where') or '?', 300)} ---")
        sys.stdout.write(_block(f.get("diff") or "(unchanged)"))


def _decision(item: dict, decision: dict) -> str:
    action, where = (
        decision.get("action") or item["action"],
        item["where"] or decision.get("target") or "",
    )
    if action == "create":
        return f"create {where}".rstrip()
    if action == "noop":
        return (
            (
                f"noop: {where} already says it"
                + (" (its sources gain this session)" if decision.get("source_only") else "")
            )
            if where
            else "noop"
        )
    return f"{action} of {where}"


def _block(text: str) -> str:
    """Text from staging (transcript-derived) as printed: escapes and controls removed, lines kept."""
    text = clean(text)
    return text if text.endswith("\n") else text + "\n"
