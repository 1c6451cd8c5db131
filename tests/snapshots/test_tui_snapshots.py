"""Snapshots of the review TUI (pytest-textual-snapshot's `snap_compare`).

Every screen is deterministic: a fixed terminal size and theme, no animation, the fixed
clock of tests/tui_helpers.py, no watcher, no pipeline worker (drafts are made beforehand
with `process`). What staging records from the real world is pinned before the app starts:

- triage ids (a checksum of the transcript's *absolute path*) are renamed to fixed ids;
- `created` (real time: the queue's age column) is set relative to the app's fixed clock;
- the drafter's elapsed time (measured: the progress panel's time column) is fixed;
- stamps in state.log and review/*.json (`updated`, `started`, `verified`) are fixed.

Regenerate with `pytest tests/snapshots/test_tui_snapshots.py --snapshot-update`, then look at the
SVGs in tests/snapshots/__snapshots__/test_tui_snapshots/.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tui_helpers import FIXED_NOW, engine_factory, settle, tui

from memcurate.curator.candidates import claude_writes, staging
from memcurate.curator.candidates.incremental import capture
from memcurate.curator.drafting.offline import OfflineDrafter
from memcurate.curator.memory import memory_md
from memcurate.curator.rules import ledger
from memcurate.curator.util.assets import asset
from memcurate.widgets.queue import QueueTable

SIZE = (160, 45)
THEME = "textual-dark"
DEMO = asset(os.path.join("demo", "session.jsonl"))
DEMO_SESSION = "5e55a1d0-de70-4c1a-9a5e-000000000001"
T1 = "20261120T090148Z-00000001"  # the demo session
T2 = "20261120T090148Z-00000002"  # the same session, resumed elsewhere with a light edit
BROKEN = "20261119T120000Z-0000000e"  # a triage that cannot be read
STAMP = "2026-11-18T11:00:00Z"  # over every real-time stamp staging records
STAMPS = ("updated", "started", "verified", "resumed")
W1 = "20261118T105500Z-0000c1a1"  # Claude's Edit of a memory file of its own, held for review
W2 = "20261118T105800Z-0000c1a2"  # Claude's Write of a secret


def iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class Timed:
    """The offline drafter, with a fixed elapsed time (the real one is measured and shows in the
    progress panel to a tenth of a second)."""

    name = "offline"
    reason = "test"

    def __init__(self) -> None:
        self.inner = OfflineDrafter()

    def draft(self, request):
        result = self.inner.draft(request)
        result.elapsed = 0.4
        return result


# -- staging, pinned ------------------------------------------------------------------


def stage(engine, transcript: str, tid: str, age_seconds: int) -> str:
    """Capture `transcript` and move the triage to the fixed id `tid`, staged `age_seconds` before
    the app's fixed clock. The id capture derives covers the transcript's absolute path, which is
    not the same in another checkout or tmp dir."""
    report = capture(engine.data, engine.cfg, transcript, event="backfill", summary=True)
    assert report["status"] == "staged", report
    src, dst = (
        staging.triage_dir(engine.data, report["triage"]),
        staging.triage_dir(engine.data, tid),
    )
    os.rename(src, dst)
    path = Path(dst) / "triage.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["id"], doc["created"] = tid, iso(FIXED_NOW - age_seconds)
    doc["source"]["transcript"] = os.path.basename(transcript)
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    return tid


def pin(engine, tid: str) -> None:
    """Fix the real-time stamps a triage's state log and review records carry, and make an
    UPDATE's target path relative to the memory root (DocumentView shows it above the diff)."""
    folder = Path(staging.triage_dir(engine.data, tid))
    log = folder / staging.STATE_LOG
    if log.exists():
        lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        for rec in lines:
            rec.update({k: STAMP for k in STAMPS if k in rec})
        log.write_text(
            "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in lines),
            encoding="utf-8",
        )
    for path in sorted((folder / "review").glob("*.json")):
        rec = json.loads(path.read_text(encoding="utf-8"))
        rec["verified"] = STAMP
        path.write_text(json.dumps(rec, indent=1, ensure_ascii=False), encoding="utf-8")


def edited_demo(folder: Path) -> str:
    """The demo session under another session id, its decision given one more reason."""
    text = Path(DEMO).read_text(encoding="utf-8")
    text = text.replace(DEMO_SESSION, DEMO_SESSION[:-1] + "2")
    text = text.replace(
        "verify a token on its own.",
        "verify a token on its own, and rotating the secret logs everyone out at once.",
    )
    assert text.count("rotating the secret") == 1
    path = folder / "resumed.jsonl"
    path.write_text(text, encoding="utf-8")
    return str(path)


def review_queue(project: Path, memory: Path) -> None:
    """The demo drafted: six candidates, the runbook BLOCKed (a required section renamed) and the
    tech debt with an ADVISORY (claims the session does not hold)."""
    engine = engine_factory(project, memory, Timed())()
    try:
        stage(engine, DEMO, T1, age_seconds=2 * 3600 + 600)
        engine.process(T1)
        runbook = engine.review(T1, "runbook")["text"]
        assert engine.edit(T1, "runbook", runbook.replace("## Verification", "## Checked"))[
            "blocked"
        ]
        debt = engine.review(T1, "tech_debt")["text"]
        rewritten = debt[
            : debt.index("## Description")
        ] + (  # the reviewer's own words, not the session's
            "## Description\nThe mailer retries with a fixed pause and no jitter; bursts hammer the relay.\n\n"
            "## Why deferred\nNobody owns the relay configuration until procurement signs the vendor contract.\n\n"
            "## Suggested fix\nExponential backoff with jitter, capped at five attempts, then a dead-letter queue. "
            "Grafana alerts page the on-call engineer twice nightly.\n"
        )
        record = engine.edit(T1, "tech_debt", rewritten)
        # the description still names the retry subject the new body no longer shares a word with
        assert not record["blocked"] and [i["code"] for i in record["issues"]] == [
            "description-unselectable",
            "unsupported",
        ]
        pin(engine, T1)
    finally:
        engine.close()


def app_for(project: Path, memory: Path, **kw):
    app = tui(project, memory, run_pipeline=False, **kw)
    return themed(app)


def themed(app):
    app.theme = THEME
    app.animation_level = "none"
    return app


def no_tmp_paths(app, tmp_path: Path) -> None:
    screen = app.export_screenshot()
    assert str(tmp_path) not in screen and "pytest-of-" not in screen


async def select(pilot, tid: str, category: str) -> None:
    """Move the queue's cursor to a candidate, with the keys a person would press."""
    await settle(pilot)
    table = pilot.app.query_one(QueueTable)
    rows = [(i.tid, i.category) for i in table.shown]
    target = rows.index((tid, category))
    await pilot.press(*(["down"] * (target - table.cursor_row)))
    await settle(pilot)
    assert (pilot.app.selected().tid, pilot.app.selected().category) == (tid, category)


# -- the snapshots ----------------------------------------------------------------------


def test_queue_with_block_and_advisory_badges(snap_compare, project, tmp_path):
    memory = tmp_path / "memory"
    review_queue(project, memory)
    app = app_for(project, memory)

    async def run_before(pilot):
        await settle(pilot)
        assert pilot.app.selected().category == "decision"
        no_tmp_paths(pilot.app, tmp_path)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_update_shows_its_diff(snap_compare, project, tmp_path):
    memory = tmp_path / "memory"
    engine = engine_factory(project, memory, Timed())()
    try:
        stage(engine, DEMO, T1, age_seconds=26 * 3600)
        engine.process(T1)
        engine.approve(T1, "decision")  # saved: the next session's decision updates it
        stage(engine, edited_demo(tmp_path), T2, age_seconds=25 * 60)
        engine.process(T2)
        assert engine.review(T2, "decision")["decision"]["action"] == "update"
        pin(engine, T1)
        pin(engine, T2)
    finally:
        engine.close()
    app = app_for(project, memory)

    async def run_before(pilot):
        await select(pilot, T2, "decision")
        no_tmp_paths(pilot.app, tmp_path)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_issues_of_a_blocked_candidate(snap_compare, project, tmp_path):
    memory = tmp_path / "memory"
    review_queue(project, memory)
    app = app_for(project, memory)

    async def run_before(pilot):
        await select(pilot, T1, "runbook")
        assert pilot.app.review and pilot.app.review["blocked"]
        no_tmp_paths(pilot.app, tmp_path)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def write_log(engine, tid: str, lines: list[dict]) -> None:
    """A state log as a pipeline mid-run leaves it (one compact JSON line per move)."""
    path = Path(staging.triage_dir(engine.data, tid)) / staging.STATE_LOG
    path.write_text(
        "".join(
            json.dumps({"updated": STAMP, **line}, separators=(",", ":")) + "\n" for line in lines
        ),
        encoding="utf-8",
    )


def test_pipeline_progress_mid_run(snap_compare, project, tmp_path):
    memory = tmp_path / "memory"
    engine = engine_factory(project, memory)()
    try:
        stage(engine, DEMO, T1, age_seconds=90)
        stage(engine, edited_demo(tmp_path), T2, age_seconds=20)
        sonnet, haiku = engine.cfg["models"]["sonnet"], engine.cfg["models"]["haiku"]
    finally:
        engine.close()
    drafted = {
        "model": haiku,
        "elapsed": 3.418,
        "tokens_in": 2140,
        "tokens_out": 512,
        "retries": 0,
        "calls": 1,
        "cost_usd": 0.004700,
    }
    write_log(
        engine,
        T1,
        [
            {"category": "decision", "state": "drafting", "started": STAMP},
            {"category": "constraint", "state": "drafting", "started": STAMP},
            {"category": "runbook", "state": "drafting", "started": STAMP},
            {"category": "tech_debt", "state": "drafting", "started": STAMP},
            {"category": "preference", "state": "drafting", "started": STAMP},
            {"category": "session_summary", "state": "drafting", "started": STAMP},
            {"category": "runbook", "state": "drafted", "started": STAMP, **drafted},
            {
                "category": "tech_debt",
                "state": "drafted",
                "started": STAMP,
                **drafted,
                "elapsed": 2.93,
                "tokens_in": 1877,
                "tokens_out": 406,
                "retries": 1,
            },
            {
                "category": "tech_debt",
                "state": "verifying",
                "started": STAMP,
                **drafted,
                "elapsed": 2.93,
                "tokens_in": 1877,
                "tokens_out": 406,
                "retries": 1,
            },
            {
                "category": "preference",
                "state": "failed",
                "started": STAMP,
                "model": haiku,
                "elapsed": 61.2,
                "tokens_in": 0,
                "tokens_out": 0,
                "retries": 2,
                "error": "anthropic: 529 overloaded_error: Overloaded (after 3 attempts)",
            },
            {
                "category": "session_summary",
                "state": "skipped",
                "started": STAMP,
                "model": haiku,
                "elapsed": 1.2,
                "tokens_in": 1650,
                "tokens_out": 38,
                "retries": 0,
                "calls": 1,
                "cost_usd": 0.00184,
                "reason": "only task chatter, nothing durable",
            },
        ],
    )
    write_log(engine, T2, [{"category": "decision", "state": "drafting", "started": STAMP}])
    # the decision drafts with sonnet: its drafting line has no model yet, as in the pipeline
    assert sonnet
    app = app_for(project, memory)

    async def run_before(pilot):
        await select(pilot, T1, "preference")
        no_tmp_paths(pilot.app, tmp_path)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_budgets_with_archive_preview(snap_compare, project, tmp_path):
    memory = tmp_path / "memory"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {memory}\ndrafting:\n  backoff_seconds: 0.0\n"
        "categories:\n"
        "  decision: {budget: 2}\n  constraint: {budget: 4}\n  runbook: {budget: 2}\n"
        "  tech_debt: {budget: 3}\n  preference: {budget: 5}\n  session_summary: {budget: 3}\n"
    )
    engine = engine_factory(project, memory, Timed())()
    try:
        entries = [
            (
                "decision",
                "use-postgres-for-the-job-queue",
                "Use Postgres for the job queue",
                "One database to run",
            ),
            (
                "decision",
                "keep-the-monolith-for-now",
                "Keep the monolith for now",
                "Two people cannot run ten services",
            ),
            (
                "constraint",
                "ci-has-no-network",
                "CI has no network",
                "The runners sit in a locked-down VPC",
            ),
            (
                "runbook",
                "fix-flaky-migrations",
                "Fix flaky migrations",
                "Run them under one advisory lock",
            ),
            (
                "runbook",
                "rotate-the-signing-key",
                "Rotate the signing key",
                "Two keys valid for one hour",
            ),
            (
                "tech_debt",
                "retry-loop-in-the-mailer",
                "Retry loop in the mailer",
                "Fixed backoff, no jitter",
            ),
            (
                "session_summary",
                "set-up-the-repository",
                "Set up the repository",
                "Skeleton, CI and docs",
            ),
        ]
        with engine.root_lock():
            memory_md.apply(
                engine.root,
                engine.cfg,
                [("upsert", memory_md.IndexLine(i, c, t, d)) for c, i, t, d in reversed(entries)],
            )
        stage(engine, DEMO, T1, age_seconds=3 * 86400)
        engine.process(T1)
        pin(engine, T1)
    finally:
        engine.close()
    app = app_for(project, memory)

    async def run_before(pilot):
        await select(pilot, T1, "decision")
        no_tmp_paths(pilot.app, tmp_path)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_help_screen(snap_compare, project, tmp_path):
    memory = tmp_path / "memory"
    review_queue(project, memory)
    app = app_for(project, memory)

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert type(pilot.app.screen).__name__ == "HelpScreen"

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_error_row_for_a_malformed_triage(snap_compare, project, tmp_path):
    memory = tmp_path / "memory"
    review_queue(project, memory)
    broken = Path(staging.triage_dir(project / ".memcurate", BROKEN))
    broken.mkdir()
    (broken / "triage.json").write_text(
        '{"format": 1, "id": "someone else\'s"}\n', encoding="utf-8"
    )
    app = themed(tui(project, memory, run_pipeline=False))

    async def run_before(pilot):
        await settle(pilot)
        item = pilot.app.selected()
        assert item.is_error and item.tid == BROKEN
        no_tmp_paths(pilot.app, tmp_path)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_confirm_approve_clean(snap_compare, project, tmp_path):
    memory = tmp_path / "memory"
    review_queue(project, memory)
    engine = engine_factory(project, memory, Timed())()
    try:  # offline cards are never clean: the ones a person wrote are what approve-all saves
        for cat in ("decision", "constraint", "preference"):
            text = engine.review(T1, cat)["text"]
            assert not engine.edit(T1, cat, text.rstrip("\n") + " Checked by hand.\n")["issues"]
        pin(engine, T1)
    finally:
        engine.close()
    app = app_for(project, memory)

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("A")
        await settle(pilot)
        assert type(pilot.app.screen).__name__ == "ConfirmDialog"

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def stage_claude_write(engine, wid: str, age_seconds: int, **kw) -> None:
    """Stage a write of Claude's as the hook does in review mode, under the fixed id `wid`, staged
    `age_seconds` before the app's fixed clock (the id and stamps the hook records are real time)."""
    record = claude_writes.stage(engine.data, **kw)
    os.unlink(claude_writes.record_path(engine.data, record["id"]))
    stamp = iso(FIXED_NOW - age_seconds)
    record.update(
        id=wid,
        created=stamp,
        updated=stamp,
        history=[{**h, "at": stamp} for h in record["history"]],
    )
    Path(claude_writes.record_path(engine.data, wid)).write_text(
        json.dumps(record), encoding="utf-8"
    )


def test_a_claude_write_selected(snap_compare, project, tmp_path):
    """The demo's drafts, then Claude's own writes in a group of their own: an Edit of its deploy notes
    (selected: its diff against the file and the text approving writes, an ADVISORY) and a BLOCKed Write."""
    memory = tmp_path / "memory"
    review_queue(project, memory)
    # Claude Code's auto-memory folder (memory.root puts memcurate's elsewhere)
    auto = tmp_path / "claude-memory"
    auto.mkdir()
    # where Claude Code's settings put it: a held write goes only to Claude's folder as resolved now
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps({"autoMemoryDirectory": str(auto)})
    )
    deploy = (
        "---\nname: deploy steps\ndescription: how a release reaches production\ntype: project\n---\n"
        "Tag the release, then run `make deploy ENV=prod`.\n"
    )
    (auto / "deploy.md").write_text(deploy, encoding="utf-8")
    engine = engine_factory(project, memory)()
    try:
        stage_claude_write(
            engine,
            W1,
            300,
            tool="Edit",
            path=str(auto / "deploy.md"),
            folder=str(auto),
            tool_input={
                "file_path": str(auto / "deploy.md"),
                "old_string": "`make deploy ENV=prod`.",
                "new_string": "`make deploy ENV=prod`;\nroll back with `make rollback`.",
            },
        )
        stage_claude_write(
            engine,
            W2,
            120,
            tool="Write",
            path=str(auto / "aws.md"),
            folder=str(auto),
            tool_input={
                "file_path": str(auto / "aws.md"),
                "content": "The deploy key is AKIA" + "ABCDEFGHIJKLMNOP\n",
            },
        )
    finally:
        engine.close()
    app = app_for(project, memory)

    async def run_before(pilot):
        await select(pilot, "claude/" + W1, "claude")
        assert pilot.app.review and pilot.app.review["where"] == "deploy.md"
        no_tmp_paths(pilot.app, tmp_path)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


MYPY = (
    'app/store.py:{n}: error: Incompatible return value type (got "int", expected "str")  [return-value]\n'
    "Found 1 error in 1 file (checked {n} source files)\n"
)


def test_a_rule_candidate_selected(snap_compare, project, tmp_path):
    """Two failures that recurred: a pytest error in three sessions (selected: the rule file approving writes,
    the evidence with a fix and an error holding markup) and a mypy error in four; the graduation panel
    lists both with their counts."""
    from test_tui_rules import proj_files, recurring, seen_output

    memory = tmp_path / "memory"
    proj_files(project)
    engine_factory(project, memory)  # the offline config
    keys = [recurring(project)]
    keys += [
        seen_output(project, n, "uv run mypy app", MYPY.format(n=n + 10)).key for n in range(1, 5)
    ]
    # the stamps the ledger gives a candidate are real time: pinned before the clock
    for key in keys:
        path = Path(ledger.candidate_path(project / ".memcurate", key))
        doc = json.loads(path.read_text(encoding="utf-8"))
        doc["created"] = doc["updated"] = iso(FIXED_NOW - 3600)
        path.write_text(json.dumps(doc), encoding="utf-8")
    app = app_for(project, memory)

    async def run_before(pilot):
        await select(pilot, "rule/" + keys[0], "rule")
        assert pilot.app.review and pilot.app.review["candidate"].sessions == 3
        no_tmp_paths(pilot.app, tmp_path)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
