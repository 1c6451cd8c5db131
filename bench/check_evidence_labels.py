"""Check bench/evidence_labels.json, the ground truth of bench/evidence_bench.py, against its transcripts.

The labels are hand-made: a line number off by one or a quote retyped instead of copied would make the
bench measure the labeller, not memcurate. So every fact is checked where it claims to be: its quote,
normalised as the bench normalises it (lowercase, each run of white space one space), must be a substring
of the text of that kind of record on that 1-based line of the JSONL, a record of the main session (not a
subagent's sidechain record); a `tool` named on a tool record must
be the tool of that call; a quote must hold no secret (curator.util.redact finds none). Also checked:
ids unique, categories, splits and record kinds valid, quotes 20 to 120 characters.

Prints one line per failure and exits 1 on any, else a one-line summary and 0.

    python bench/check_evidence_labels.py [labels.json] [--shared DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
LABELS = os.path.join(BENCH, "evidence_labels.json")
SHARED = os.path.join(os.path.dirname(REPO), "shared")

CATEGORIES = {"decision", "constraint", "runbook", "tech_debt", "preference"}
SPLITS = {"tune", "held_out"}
RECORDS = {"user", "assistant", "tool_result", "tool_use", "queue"}
QUOTE_MIN, QUOTE_MAX = 20, 120
_REJECTED = "doesn't want to proceed with this tool use"
_WS = re.compile(r"\s+")


def normalise(text: str) -> str:
    """The bench's comparison form: lowercase, each run of white space one space."""
    return _WS.sub(" ", text.lower()).strip()


def _strings(value) -> list[str]:
    """Every string inside a tool call's input, in order (a question, its options, a plan, a command)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _result_text(block: dict) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return "" if content is None else str(content)


def record_texts(
    record: dict, tool_names: dict[str, str]
) -> dict[str, list[tuple[str | None, str]]]:
    """The decoded text of one JSONL record by kind: kind -> [(tool name or None, text)]."""
    out: dict[str, list[tuple[str | None, str]]] = {kind: [] for kind in RECORDS}
    kind = record.get("type")
    if kind == "queue-operation":
        if isinstance(record.get("content"), str):
            out["queue"].append((None, record["content"]))
        return out
    if kind == "attachment":  # a queued prompt delivered while Claude worked
        att = record.get("attachment")
        if (
            isinstance(att, dict)
            and att.get("type") == "queued_command"
            and isinstance(att.get("prompt"), str)
        ):
            out["queue"].append((None, att["prompt"]))
        return out
    if kind not in ("user", "assistant"):
        return out
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        out[kind].append((None, content))
        return out
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            out[kind].append((None, str(block.get("text", ""))))
        elif btype == "tool_use":
            name = str(block.get("name", ""))
            out["tool_use"].append((name, "\n".join(_strings(block.get("input")))))
        elif btype == "tool_result":
            out["tool_result"].append(
                (tool_names.get(str(block.get("tool_use_id")), "?"), _result_text(block))
            )
    return out


def read_lines(path: str, wanted: set[int]) -> tuple[dict[int, dict], dict[str, str], int]:
    """The records on the wanted lines, every tool call's name by id, and the file's line count."""
    records: dict[int, dict] = {}
    names: dict[str, str] = {}
    n = 0
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if '"tool_use"' not in line and n not in wanted:
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            if n in wanted:
                records[n] = record
            content = (
                (record.get("message") or {}).get("content")
                if isinstance(record.get("message"), dict)
                else None
            )
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    names[str(block.get("id"))] = str(block.get("name", ""))
    return records, names, n


def check_fact(fact: dict, record: dict | None, names: dict[str, str], find_secrets) -> list[str]:
    """What is wrong with one fact, given the record on its line."""
    problems = []
    if fact.get("category") not in CATEGORIES:
        problems.append(f"category {fact.get('category')!r} is not one of {sorted(CATEGORIES)}")
    for key in ("statement", "quote"):
        if not isinstance(fact.get(key), str) or not fact[key].strip():
            problems.append(f"{key} missing")
    quote = fact.get("quote") if isinstance(fact.get("quote"), str) else ""
    if quote and not QUOTE_MIN <= len(quote) <= QUOTE_MAX:
        problems.append(f"quote is {len(quote)} characters, not {QUOTE_MIN} to {QUOTE_MAX}")
    if quote and find_secrets is not None and find_secrets(quote):
        problems.append("quote holds a secret")
    kind = fact.get("record")
    if kind not in RECORDS:
        problems.append(f"record {kind!r} is not one of {sorted(RECORDS)}")
        return problems
    if record is None:
        problems.append(f"line {fact.get('line')!r} is not a JSON record of the transcript")
        return problems
    if record.get("isSidechain") is True:
        problems.append(
            f"line {fact['line']} is a subagent (sidechain) record, not the main session's"
        )
    tool = fact.get("tool")
    texts = record_texts(record, names)[kind]
    if not texts:
        problems.append(f"line {fact['line']} holds no {kind} text")
        return problems
    if kind in ("tool_use", "tool_result"):
        if not tool:
            problems.append(f"a {kind} fact names no tool")
        elif tool == "rejection":
            texts = [(n, t) for n, t in texts if _REJECTED in t]
            if not texts:
                problems.append(f"line {fact['line']} is not a rejected tool call")
        else:
            texts = [(n, t) for n, t in texts if n == tool]
            if not texts:
                problems.append(f"line {fact['line']} holds no {kind} of {tool}")
            elif kind == "tool_result" and all(_REJECTED in t for _, t in texts):
                problems.append(
                    f"line {fact['line']} is a rejected call: its tool is 'rejection', not {tool}"
                )
    elif tool:
        problems.append(f"a {kind} fact names a tool ({tool})")
    if quote and texts and not any(normalise(quote) in normalise(t) for _, t in texts):
        problems.append(f"quote not in the {kind} text of line {fact['line']}: {quote[:60]!r}")
    return problems


def check(labels: dict, shared: str, find_secrets=None) -> tuple[list[str], Counter]:
    """Every failure as one line, and counts for the summary."""
    failures: list[str] = []
    counts: Counter = Counter()
    if labels.get("version") != 1:
        failures.append(f"version {labels.get('version')!r}, expected 1")
    seen: set[str] = set()
    for s_index, session in enumerate(labels.get("sessions") or []):
        where = session.get("transcript", f"session #{s_index}")
        if session.get("split") not in SPLITS:
            failures.append(
                f"{where}: split {session.get('split')!r} is not one of {sorted(SPLITS)}"
            )
        if not str(session.get("project", "")).strip():
            failures.append(f"{where}: project missing")
        facts = session.get("facts") or []
        if not facts:
            failures.append(f"{where}: no facts")
        for fact in facts:
            fid = fact.get("id")
            if not fid or fid in seen:
                failures.append(f"{where}: fact id {fid!r} missing or not unique")
            seen.add(fid)
        path = os.path.join(shared, str(session.get("transcript", "")))
        if not os.path.isfile(path):
            failures.append(f"{where}: no such transcript under {shared}")
            continue
        wanted = {f["line"] for f in facts if isinstance(f.get("line"), int)}
        records, names, _ = read_lines(path, wanted)
        counts["sessions"] += 1
        for fact in facts:
            counts["facts"] += 1
            line = fact.get("line")
            record = records.get(line) if isinstance(line, int) else None
            for problem in check_fact(fact, record, names, find_secrets):
                failures.append(f"{where}: {fact.get('id')}: {problem}")
    return failures, counts


def _secret_finder():
    """memcurate.curator.util.redact.find_secrets from this checkout, or None when it cannot be imported."""
    dev = os.path.join(REPO, "dev")  # the checkout's `memcurate` package
    if dev not in sys.path:
        sys.path.insert(0, dev)
    try:
        from memcurate.curator.util.redact import find_secrets
    except ImportError:
        return None
    return find_secrets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labels", nargs="?", default=LABELS)
    parser.add_argument(
        "--shared", default=SHARED, help="the folder holding transcripts/ and transcripts-more/"
    )
    args = parser.parse_args(argv)
    with open(args.labels, encoding="utf-8") as f:
        labels = json.load(f)
    find_secrets = _secret_finder()
    failures, counts = check(labels, args.shared, find_secrets)
    for failure in failures:
        print(failure)
    if find_secrets is None:
        print(
            "warning: curator.util.redact not importable, quotes not checked for secrets",
            file=sys.stderr,
        )
    if failures:
        return 1
    print(f"ok: {counts['facts']} facts in {counts['sessions']} sessions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
