"""The queue reads a triage's state log from its end (staging.category_states with history=False): each
category's last line only, so 2,000 rows do not parse the 10,000 moves before them. It must say what the
full parse says, line for line: on the real logs the shared transcripts leave, cut after any line or in
the middle of one, and on the lines Claude could forge (the staging dir is writable from its session).
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import needs_shared, run_cli, shared_config_env, shared_transcripts
from scenarios import offline_config

from memcurate.curator.candidates import staging
from memcurate.curator.candidates.queue import Board
from memcurate.curator.util import fastjson

CATEGORIES = ("decision", "constraint", "runbook")
DOC = {
    "created": "2026-01-01T00:00:00Z",
    "categories": {
        **{c: {"triggered": True} for c in CATEGORIES},
        "preference": {"triggered": True, "found_by": "look"},
        "tech_debt": {"triggered": False},
    },
}


def line(category: str, state: str, **extra) -> bytes:
    """A line as set_state writes it."""
    rec = {"category": category, "state": state, "updated": "2026-01-01T00:01:00Z", **extra}
    return (fastjson.dumps_compact(rec) + "\n").encode()


def both(data: str, tid: str, doc: dict) -> tuple[dict, dict]:
    """(the full parse without its histories, the queue's read)."""
    full = staging.category_states(data, tid, doc)
    for rec in full.values():
        del rec["history"]
    return full, staging.category_states(data, tid, doc, history=False)


def assert_agree_at_every_cut(data: str, tid: str, doc: dict) -> int:
    """Both reads agree on the log cut after each of its lines and in the middle of each; the lines."""
    log = Path(staging.triage_dir(data, tid)) / staging.STATE_LOG
    whole = log.read_bytes()
    lines = whole.splitlines(keepends=True)
    try:
        done = b""
        for ln in lines:
            for cut in (done + ln[: len(ln) // 2], done + ln):
                log.write_bytes(cut)
                full, fast = both(data, tid, doc)
                assert fast == full, cut[-300:]
            done += ln
    finally:
        log.write_bytes(whole)
    return len(lines)


@needs_shared
def test_on_the_logs_of_the_shared_transcripts_the_queue_reads_what_the_full_parse_reads(
    project, tmp_path
):
    memory = tmp_path / "memory"
    offline_config(project, memory)
    env = shared_config_env(tmp_path)
    paths = [str(p) for p in shared_transcripts()]
    assert run_cli("triage", *paths, cwd=project, env=env).returncode == 0
    # saves some, holds some as ready, skips some: logs with every kind of move
    p = run_cli("--auto-approve", "--json", cwd=project, env=env)
    assert p.returncode == 0, p.stderr
    data = str(project / ".memcurate")
    states, lines = set(), 0
    for tid in staging.triage_ids(data):
        doc = staging.load_triage(data, tid)
        lines += assert_agree_at_every_cut(data, tid, doc)
        states |= {r["state"] for r in staging.category_states(data, tid, doc).values()}
    assert lines > 50 and {"ready", "saved"} <= states, (lines, states)


def test_forged_and_torn_lines_get_the_same_verdict_from_both_reads(tmp_path):
    data, tid = str(tmp_path), "t1"
    log = Path(staging.triage_dir(data, tid)) / staging.STATE_LOG
    log.parent.mkdir(parents=True)
    honest = [
        line(c, s, title=f"{c} {s}", blocks=1)
        for s in ("drafting", "drafted", "verifying", "ready")
        for c in CATEGORIES
    ]
    forged = [
        # a second category key: json keeps the last one
        b'{"category":"decision","state":"rejected","updated":"x","category":"runbook"}\n',
        # the second key spelled with an escape
        b'{"category":"decision","state":"saved","updated":"x","c\\u0061tegory":"constraint"}\n',
        # the category itself spelled with an escape
        b'{"category":"d\\u0065cision","state":"approved","updated":"x"}\n',
        # a category key nested in a value
        b'{"category":"runbook","state":"failed","updated":"x","x":{"category":"decision"}}\n',
        b'{"category":"decision","state":"no-such-state","updated":"x"}\n',
        b'{"category":"decision","state":"saved"}\n',
        b'{"category":["decision"],"state":"saved","updated":"x"}\n',
        b'{"category":"decision","state":"saved","updated":3}\n',
        b'["decision","saved"]\n',
        b'{"category":"decision","state":"saved","updated":"x",\n',
        b'\xef\xbb\xbf{"category":"constraint","state":"rejected","updated":"x"}\n',
        b'{"category":"constraint","state":"saved","updated":"x","t":"\xff"}\n',
        b'  {"category":"runbook","state":"rejected","updated":"x"}\n',
        b'{"category":"runbook","state":"ready","updated":"x","history":[["saved","x"]]}\n',
        b'{"category" :"decision","state":"skipped","updated":"x"}\n',
        line("preference", "drafting", found_by="look"),
        line("tech_debt", "ready"),
        line("not_a_category", "ready"),
        b'{"category":"constraint","state":"saved","updated":"x"',  # torn: no line break
    ]
    doc = json.loads(json.dumps(DOC))
    # each forged line after the honest log, then all of them in turn, then honest lines after them
    for extra in [[f] for f in forged] + [forged, forged[:-1] + honest[-3:]]:
        log.write_bytes(b"".join(honest) + b"".join(extra))
        full, fast = both(data, tid, doc)
        assert fast == full, extra
    # and on that last log cut anywhere
    assert assert_agree_at_every_cut(data, tid, doc) == len(honest) + len(forged) - 1 + 3


def test_the_queue_parses_one_line_a_category_not_every_move(tmp_path, monkeypatch):
    data, tid = str(tmp_path), "t1"
    log = Path(staging.triage_dir(data, tid)) / staging.STATE_LOG
    log.parent.mkdir(parents=True)
    moves = (
        "drafting",
        "drafted",
        "verifying",
        "ready",
        "drafting",
        "drafted",
        "verifying",
        "ready",
    )
    log.write_bytes(b"".join(line(c, s) for s in moves for c in CATEGORIES))
    parsed = []
    loads = fastjson.loads
    monkeypatch.setattr(fastjson, "loads", lambda s: parsed.append(s) or loads(s))
    (tmp_path / "staging" / tid / "triage.json").write_text(json.dumps({"id": tid, **DOC}))
    items = Board(data).load()[tid]
    assert sorted(i.category for i in items) == sorted([*CATEGORIES, "preference"])
    assert {i.state for i in items} == {"ready", "triaged"}
    # triage.json, then the log's last line of each category
    assert len(parsed) == 1 + len(CATEGORIES), parsed
