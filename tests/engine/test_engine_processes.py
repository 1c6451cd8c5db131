"""The engine as real processes: every shared session end to end, 8 processes at once, SIGKILL."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import (
    claude_transcripts,
    memcurate_exe,
    needs_shared,
    run_cli,
    run_hook,
    shared_config_env,
    shared_transcripts,
)

from memcurate.curator import config
from memcurate.curator.capture.transcript import TranscriptReader
from memcurate.curator.drafting.offline import NOT_STATED
from memcurate.curator.memory import memfile, memory_md
from memcurate.curator.util.assets import asset

DEMO = Path(asset(os.path.join("demo", "session.jsonl")))


def setup_project(project: Path, memory: Path) -> None:
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {memory}\n"
    )


def feed(project: Path, transcript: Path, session: str, env: dict | None = None) -> None:
    """What Claude Code does: Stop at the end of the turn, SessionEnd at the end of the session."""
    for event in ("Stop", "SessionEnd"):
        p = run_hook(
            {
                "hook_event_name": event,
                "session_id": session,
                "transcript_path": str(transcript),
                "cwd": str(project),
            },
            cwd=project,
            env=env,
        )
        assert p.returncode == 0 and p.stdout == b"", p.stderr


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def session_text(path: Path) -> str:
    """What was said and done in a session: prompts, replies, tool calls and their output."""
    parts = []
    for e in TranscriptReader(path):
        parts.append(e.text)
        parts.extend(t.target for t in e.tool_uses)
    return "\n".join(parts)


def memory_files(memory: Path) -> list[Path]:
    # the archive entry files
    return sorted(p for p in memory.glob("*/*.md") if p.parent.name != ".archive")


def snapshot(memory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(memory)): p.read_bytes()
        for p in sorted(memory.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


def check_memory(memory: Path, *, complete: bool = True) -> None:
    """Every memory file parses and is valid; MEMORY.md parses, within its budgets, lists each file once.

    `complete=False` after a kill: a file may be written and not listed yet (its save is `approved`,
    and the next run lists it)."""
    cfg = config.load(memory)
    text = (memory / "MEMORY.md").read_text()
    parsed = memory_md.parse(text)
    listed = [(e.category, e.id) for s in parsed.sections.values() for e in s.entries]
    assert len(listed) == len(set(listed))
    usage = memory_md.usage(str(memory), cfg)
    assert all(u.used <= u.budget for u in usage.sections.values())
    assert usage.total.lines <= 200 and usage.total.chars <= 25000 and not usage.total.cut
    archived = {
        (c, e.id) for c in memfile.CATEGORIES for e in memory_md.read_archive(str(memory), c)
    }
    files = memory_files(memory)
    assert files or not complete, "no memory file to check"
    for path in files:
        doc = memfile.parse(path.read_text())
        assert memfile.problems(doc, file_name=path.name) == [], path
        assert (
            not complete
            or (doc.category, doc.id) in listed
            or (doc.category, doc.id) in archived
            or doc.status == "archived"
        )


@needs_shared
def test_every_shared_main_session_end_to_end(project, tmp_path):
    memory = tmp_path / "memory"
    setup_project(project, memory)
    sessions = [
        p
        for p in shared_transcripts()
        if not p.name.startswith("agent-") and "subagents" not in p.parts
    ]
    texts = {}
    # the hook reads transcripts only from Claude's projects folder
    env = shared_config_env(tmp_path)
    for path in sessions:
        feed(project, path, path.stem, env)
        texts[path.stem] = " " + " ".join(words(session_text(path))) + " "
    # every draft the gate would hold is saved too, so that all of them are checked against their sessions
    p = run_cli("--auto-approve", "--json", "--min-confidence", "0", cwd=project)
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert summary["created"] and not summary["failed"]
    files = memory_files(memory)
    assert len(files) >= 20
    for path in files:
        doc = memfile.parse(path.read_text())
        # an UPDATE merges sessions: the text comes from the sessions it names
        source = "".join(texts[s["session"]] for s in doc.sources)
        for name in memfile.CATEGORIES[doc.category].required:
            # the drafter says the session did not state it
            if doc.sections[name].startswith(NOT_STATED):
                continue
            text = re.sub(r"\((?:the )?(?:user|assistant|parent)[^)]*\)", " ", doc.sections[name])
            quoted = []
            for part in [text, *re.findall(r"“([^”]+)”", text)]:  # the section, and what it quotes
                w = words(part)
                n = min(4, len(w))
                quoted += [" ".join(w[i : i + n]) for i in range(len(w) - n + 1)]
            assert any(f" {q} " in source for q in quoted), (
                path.name,
                name,
                doc.sections[name][:200],
            )
    check_memory(memory)
    before = snapshot(memory)
    again = json.loads(
        run_cli("--auto-approve", "--json", "--min-confidence", "0", cwd=project).stdout
    )
    assert not again["created"] and not again["updated"]
    assert snapshot(memory) == before


def stage_work(project: Path, memory: Path, tmp_path: Path, copies: int) -> None:
    """`copies` sessions: the demo with a different session id each, staged by the real hook."""
    setup_project(project, memory)
    raw = DEMO.read_bytes()
    for i in range(copies):
        session = f"5e55a1d0-de70-4c1a-9a5e-{i:012d}"
        path = claude_transcripts() / f"{session}.jsonl"
        path.write_bytes(
            raw.replace(b"5e55a1d0-de70-4c1a-9a5e-000000000001", session.encode()).replace(
                b"JWT", f"JWT{i}".encode()
            )
        )
        feed(project, path, session)


def test_eight_processes_at_once_save_each_memory_exactly_once(project, tmp_path):
    memory = tmp_path / "memory"
    stage_work(project, memory, tmp_path, copies=3)
    # the gate open (--min-confidence 0): these are about processes at once, not what is sure enough
    procs = [
        subprocess.Popen(
            memcurate_exe() + ["--auto-approve", "--json", "--min-confidence", "0"],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(8)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [e for _, e in outs]
    summaries = [json.loads(o) for o, _ in outs]
    created = [c["path"] for s in summaries for c in s["created"]]
    assert created and len(created) == len(set(created))  # no memory saved twice
    files = memory_files(memory)
    assert sorted(created) == [str(p) for p in files]
    check_memory(memory)
    status = json.loads(run_cli("status", "--json", cwd=project).stdout)
    assert status["pending"] == 0
    # status shows MEMORY.md's budgets: what is listed, against each section's limit
    listed = sum(
        len(s.entries)
        for s in memory_md.parse((memory / "MEMORY.md").read_text()).sections.values()
    )
    assert sum(u["used"] for u in status["memory_md"]["sections"].values()) == listed
    assert status["memory_md"]["sections"]["decision"]["budget"] == 40
    text = run_cli("status", cwd=project).stdout
    assert "MEMORY.md" in text and "decision" in text and "/40" in text


def test_killed_at_random_moments_never_leaves_a_truncated_file(project, tmp_path):
    """A smaller run of bench/crash_bench.py (which does ≥ 200 kills)."""
    memory = tmp_path / "memory"
    stage_work(project, memory, tmp_path, copies=4)
    rng = random.Random(7)
    for _ in range(12):
        p = subprocess.Popen(
            memcurate_exe() + ["--auto-approve", "--min-confidence", "0"],
            cwd=project,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            p.wait(timeout=rng.uniform(0.05, 1.5))
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGKILL)
            p.wait()
        if (memory / "MEMORY.md").exists():
            check_memory(memory, complete=False)
    final = run_cli("--auto-approve", "--json", "--min-confidence", "0", cwd=project)
    assert final.returncode == 0, final.stderr
    check_memory(memory)
    assert json.loads(run_cli("status", "--json", cwd=project).stdout)["pending"] == 0
    assert len(memory_files(memory)) >= 6


@pytest.mark.parametrize(
    "title", ["../../etc/passwd", "/abs/path", "a\x00b", "line\nbreak", "---\nid: evil"]
)
def test_hostile_titles_in_a_session_cannot_write_outside_the_memory_root(project, tmp_path, title):
    memory = tmp_path / "memory"
    setup_project(project, memory)
    raw = DEMO.read_text().replace(
        "Let's go with JWT", json.dumps(title)[1:-1] + " Let's go with JWT"
    )
    path = claude_transcripts() / "hostile.jsonl"
    path.write_text(raw)
    feed(project, path, "hostile")
    p = run_cli("--auto-approve", "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    written = {q for q in tmp_path.rglob("*") if q.is_file()}
    assert all(
        str(q).startswith((str(memory), str(project), str(tmp_path / "home"))) for q in written
    )
    check_memory(memory)
    assert time.time()  # the run finished
