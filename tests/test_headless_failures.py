"""`--auto-approve` when things go wrong: a memory file that is not UTF-8, a damaged MEMORY.md,
staged triages it cannot read, drafts and saves that fail, a disk that fills up mid-run.

The exit status says the truth (0: everything that could be saved was, or there was nothing;
1: a draft or a save failed, or a staged triage cannot be read), one bad item never stops the
others, and whatever happens the files on disk stay whole and the next run finishes the work.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from curator import staging
from curator.assets import asset
from curator.capture import capture
from curator.engine import Engine
from curator.pipeline import process, read_review

from conftest import run_cli

DEMO = Path(asset(os.path.join("demo", "session.jsonl")))
DEMO_SESSION = b"5e55a1d0-de70-4c1a-9a5e-000000000001"
CATEGORIES = {"decision", "constraint", "runbook", "tech_debt", "preference", "session_summary"}


def setup(project: Path, tmp_path: Path) -> Path:
    memory = tmp_path / "memory"
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {memory}\ndrafting:\n  backoff_seconds: 0.0\n")
    return memory


_WORDS = ("JWT PyJWT argon2 passlib tokens token sessions session Postgres SQLite trunk mobile summarizer refresh "
          "login dependencies dependency package packages commits commit tests test database network CI runners "
          "VPC secret environment cookies security team review email password hashes request requests service "
          "startup deploy docs emails account 401 routes projects OperationalError connection server internal db "
          "asking user first new add").split()
_WORD = re.compile(r"\b(" + "|".join(map(re.escape, _WORDS)) + r")\b")


def _reword(obj, n: int):
    """The words people and the assistant wrote, changed so that session `n` makes memories of its own."""
    if isinstance(obj, str):
        return _WORD.sub(lambda m: f"{m.group(1)[:3]}q{n}x", obj)
    if isinstance(obj, list):
        return [_reword(x, n) for x in obj]
    if isinstance(obj, dict):
        return {k: _reword(v, n) if k in ("content", "text", "input") else v for k, v in obj.items()}
    return obj


def stage(project: Path, tmp_path: Path, n: int, *, same: bool = False, replace: tuple = ()) -> str:
    """Stage session `n`: the demo session under its own id, its words changed (unless `same`) so that
    it makes six memories of its own, and `replace` (old, new) applied."""
    records = [json.loads(line) for line in DEMO.read_text().splitlines()]
    if not same:
        for r in records:
            if "message" in r:
                r["message"] = _reword(r["message"], n)
    raw = "".join(json.dumps(r) + "\n" for r in records).replace(
        DEMO_SESSION.decode(), f"5e55a1d0-de70-4c1a-9a5e-{n:012d}")
    for old, new in replace:
        raw = raw.replace(old, new)
    path = tmp_path / "sessions" / f"{n}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(raw)
    engine = Engine(project)
    try:
        report = capture(engine.data, engine.cfg, str(path), event="backfill", summary=True)
    finally:
        engine.close()
    assert report["status"] == "staged"
    return report["triage"]


def states(project: Path) -> dict[str, dict[str, str]]:
    data = os.path.join(project, ".memcurate")
    return {tid: {c: r["state"] for c, r in staging.category_states(data, tid).items()}
            for tid in staging.triage_ids(data)}


# -- defect 7: one bad byte ---------------------------------------------------------------

def corrupt(path: Path) -> int:
    """Put one byte that is not UTF-8 into a memory file's body, the way a bad hand edit does."""
    data = bytearray(path.read_bytes())
    at = data.index(b"## Rationale") + len(b"## Rationale\n") + 3
    data[at] = 0xFF
    path.write_bytes(bytes(data))
    return at


def test_a_memory_file_that_is_not_utf8_blocks_only_the_item_that_touches_it(project, tmp_path):
    memory = setup(project, tmp_path)
    stage(project, tmp_path, 1, same=True)
    first = run_cli("--auto-approve", "--json", cwd=project)
    assert first.returncode == 0, first.stderr
    (bad,) = memory.glob("decision/*.md")
    at = corrupt(bad)
    damaged = bad.read_bytes()
    # Pending now: the same session again (its decision names the damaged file), and a new one.
    again = stage(project, tmp_path, 2, same=True)
    other = stage(project, tmp_path, 3)
    p = run_cli("--auto-approve", "--json", cwd=project)
    assert p.returncode == 0, p.stderr  # a candidate left for review is not a failure
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr
    summary = json.loads(p.stdout)
    assert not summary["failed"]
    (blocked,) = summary["blocked"]
    assert (blocked["triage"], blocked["category"]) == (again, "decision")
    (issue,) = blocked["issues"]
    assert f"decision/{bad.name}" in issue and f"byte {at}" in issue and "fix or delete" in issue
    # Everything else was saved: the other categories of that triage, and the whole new triage.
    assert states(project)[other] == {c: "saved" for c in CATEGORIES}
    assert states(project)[again] == {**{c: "saved" for c in CATEGORIES}, "decision": "ready"}
    assert {c["category"] for c in summary["created"] if c["triage"] == other} == CATEGORIES
    assert bad.read_bytes() == damaged  # never rewritten
    text = run_cli("--auto-approve", cwd=project)
    assert text.returncode == 0 and f"byte {at}" in text.stdout


def test_an_update_whose_target_turned_to_bad_bytes_is_blocked_naming_it(project, tmp_path):
    """The file an UPDATE was decided against is damaged before the save: blocked, never a traceback."""
    memory = setup(project, tmp_path)
    stage(project, tmp_path, 1, same=True)
    assert run_cli("--auto-approve", cwd=project).returncode == 0
    engine = Engine(project)
    try:
        # the same decision from a second session, with more said: an UPDATE of the saved memory
        tid = stage(project, tmp_path, 2, same=True, replace=(("on its own", "on its own, and tokens rotate weekly"),))
        process(engine, tid)
        decision = read_review(engine.data, tid, "decision")["decision"]
    finally:
        engine.close()
    assert decision["action"] == "update"
    target = Path(decision["target_path"])
    at = corrupt(target)
    p = run_cli("--auto-approve", "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    (blocked,) = summary["blocked"]
    assert blocked["category"] == "decision"
    assert any(f"byte {at}" in i and target.name in i for i in blocked["issues"]), blocked
    assert target.parent == memory / "decision"


def test_verify_blocks_a_file_in_the_way_that_is_no_memory_for_any_action():
    from curator.verify import verify

    text = "not even a memory"  # the target's issue does not depend on the text
    target = {"exists": True, "hash_matches": False, "path": "/m/decision/x.md", "where": "decision/x.md",
              "unreadable": "is not UTF-8 text (byte 7)"}
    for action in ("create", "update", "delete"):
        issues = [i for i in verify(text, category="decision", action=action, target=target) if i.code == "unreadable"]
        assert [(i.severity, i.where, i.message) for i in issues] == [
            ("BLOCK", "decision/x.md", "is not UTF-8 text (byte 7): fix or delete the file")]
