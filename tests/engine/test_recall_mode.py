"""memcurate's recall hook beside Claude Code's own recall (issue 24, Build §2): in Claude Code's recall mode
MEMORY.md is not loaded, a memory Claude Code's selector is shown (it may pick it this very turn) is left to
it, and one Claude Code already surfaced in the session is not given again.

What Claude Code 2.1.328 does, read in its binary: the mode is on when `CLAUDE_MEMORY_STORES` holds anything
but blanks (`vhr(){return!!process.env.CLAUDE_MEMORY_STORES?.trim()}`) or a server switch is; MEMORY.md
(`AutoMem`) is then filtered out of what is loaded; the chosen files are written into the transcript as
`{"type":"attachment","attachment":{"type":"relevant_memories","memories":[{path,content,mtimeMs,header,limit}]}}`
with `path` the absolute file path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_hook
from test_recall import entry, hook_payload, make_project, memory_root, runbook_body, write_memory

from memcurate.curator.memory.recall import answer, claude_recall
from memcurate.curator.memory.recall.seen import Seen, file_name
from memcurate.curator.util.log import read_log

PROMPT = "the zorblat queue job fails with a timeout again"
SESSION = "0b5e6a34-1111-4222-8333-444455556666"


def attachment_line(paths: list[Path], session: str = SESSION) -> str:
    """A transcript line as Claude Code writes a relevant_memories attachment (the fields of tWs's result)."""
    memories = [
        {
            "path": str(p),
            "content": p.read_text(),
            "mtimeMs": os.stat(p).st_mtime * 1000,
            "header": f"Memory (saved today): {p}:",
        }
        for p in paths
    ]
    return json.dumps(
        {
            "parentUuid": "5d1c0f3e-0000-4000-8000-000000000001",
            "isSidechain": False,
            "attachment": {"type": "relevant_memories", "memories": memories},
            "type": "attachment",
            "uuid": "5d1c0f3e-0000-4000-8000-000000000002",
            "timestamp": "2026-11-27T10:00:00.000Z",
            "userType": "external",
            "entrypoint": "cli",
            "cwd": "/p",
            "sessionId": session,
            "version": "2.1.328",
        },
        separators=(",", ":"),
    )


def user_line(text: str) -> str:
    return json.dumps(
        {"type": "user", "message": {"role": "user", "content": text}, "sessionId": SESSION}
    )


@pytest.fixture
def two(tmp_path) -> Path:
    """Two zorblat runbooks, both listed in MEMORY.md with lines that say all their bodies say."""
    (tmp_path / "memory").mkdir()
    project = make_project(tmp_path)
    root = memory_root(project)
    write_memory(
        root, "runbook", "zorblat-a", "Zorblat queue stalls", runbook_body("zorblat queue")
    )
    write_memory(
        root,
        "runbook",
        "zorblat-b",
        "Zorblat queue restarts",
        runbook_body("zorblat queue restart"),
    )
    (root / "MEMORY.md").write_text(
        entry("runbook", "zorblat-a", "Zorblat queue stalls")
        + "\n"
        + entry("runbook", "zorblat-b", "Zorblat queue restarts")
        + "\n"
    )
    return project


def crowd(root: Path, old: list[str]) -> None:
    """200 newer memory files, so Claude Code's selector (200 newest) is not shown the memories `old`."""
    for i in range(claude_recall.OFFERED_MAX):
        f = root / "notes" / f"filler-{i:03d}.md"
        f.parent.mkdir(exist_ok=True)
        f.write_text(f"filler {i}\n")
    for name in old:
        os.utime(root / name, (1_000_000_000, 1_000_000_000))


def recall_in(
    project: Path, session: str, *, env: dict | None = None, transcript: Path | None = None
):
    from memcurate.curator import config

    data = str(project / ".memcurate")
    os.makedirs(data, exist_ok=True)
    return answer.recall(
        project,
        data,
        config.load(project, data),
        PROMPT,
        session,
        env=env or {},
        transcript=str(transcript) if transcript else "",
    )


def test_the_env_switch_is_any_value_but_blanks():
    assert not claude_recall.env_on({}) and not claude_recall.env_on(
        {"CLAUDE_MEMORY_STORES": " \t"}
    )
    assert claude_recall.env_on({"CLAUDE_MEMORY_STORES": "[]"})


def test_in_recall_mode_what_claude_codes_selector_is_shown_is_left_to_it(two):
    r = recall_in(two, "env", env={"CLAUDE_MEMORY_STORES": "1"})
    # both are among the 200 newest: its selector may pick them
    assert r.given == [] and r.context == ""
    assert (
        "2 its own recall is shown or surfaced not given (runbook/zorblat-a, runbook/zorblat-b)"
        in r.note
    )
    assert set(recall_in(two, "usual").given) == {
        "runbook/zorblat-a",
        "runbook/zorblat-b",
    }  # the usual mode


def test_offered_follows_claude_codes_scan(tmp_path):
    root = tmp_path / "memory"
    # what the real selector was shown of these (tests/contract/test_cc_recall_mode.py checks it live)
    for name in (
        "decision/a.md",
        "deep/er/b.md",
        "MEMORY.md",
        "c.md",
        "c.txt",
        ".archive/decision/d.md",
        "decision/.e.md",
        "logs/f.md",
        "Sessions/g.md",
        "logs./h.md",
        "proposals/i.md",
        "x/logs/j.md",
        "team/k.md",
        "sub/MEMORY.md",
        "l.MD",
    ):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")
    for age, name in enumerate(
        ("c.md", "decision/a.md", "deep/er/b.md", "x/logs/j.md", "team/k.md")
    ):
        os.utime(root / name, (2_000_000_000 - age, 2_000_000_000 - age))
    assert claude_recall.offered(str(root)) == [
        "c.md",
        "decision/a.md",
        "deep/er/b.md",
        "x/logs/j.md",
        "team/k.md",
    ]
    assert claude_recall.offered(str(root), limit=2) == ["c.md", "decision/a.md"]


def test_in_recall_mode_memory_md_is_not_taken_as_loaded(two):
    crowd(memory_root(two), ["runbook/zorblat-a.md", "runbook/zorblat-b.md"])
    usual = recall_in(two, "usual")
    # MEMORY.md loaded: bodies only
    assert "Its line in MEMORY.md is already loaded" in usual.context
    r = recall_in(two, "env", env={"CLAUDE_MEMORY_STORES": '["/srv/team"]'})
    assert set(r.given) == {"runbook/zorblat-a", "runbook/zorblat-b"}
    assert "already loaded" not in r.context and "When Zorblat queue stalls" in r.context  # in full
    assert "Claude Code recalls by itself (CLAUDE_MEMORY_STORES is set)" in r.note


def test_a_memory_claude_code_surfaced_itself_is_not_given_again(two, tmp_path):
    root = memory_root(two)
    crowd(root, ["runbook/zorblat-a.md", "runbook/zorblat-b.md"])
    t = tmp_path / "t.jsonl"
    t.write_text(
        user_line("what about zorblat?")
        + "\n"
        + attachment_line([root / "runbook" / "zorblat-a.md"])
        + "\n"
    )
    r = recall_in(two, SESSION, transcript=t)  # no env switch: the attachment says the mode is on
    assert r.given == ["runbook/zorblat-b"]
    # MEMORY.md is not loaded in this mode: in full
    assert "When Zorblat queue restarts" in r.context
    assert "1 its own recall is shown or surfaced not given (runbook/zorblat-a)" in r.note
    # another session whose transcript holds no attachment: the usual mode, MEMORY.md loaded
    plain = tmp_path / "plain.jsonl"
    plain.write_text(user_line("hello there") + "\n")
    r = recall_in(two, "other", transcript=plain)
    assert "already loaded" in r.context and "recalls by itself" not in r.note


def test_the_transcript_is_read_from_where_the_last_prompt_stopped(two, tmp_path, monkeypatch):
    root = memory_root(two)
    crowd(root, ["runbook/zorblat-a.md", "runbook/zorblat-b.md"])
    t = tmp_path / "t.jsonl"
    first = (
        user_line("x" * 5000) + "\n" + attachment_line([root / "runbook" / "zorblat-a.md"]) + "\n"
    )
    partial = attachment_line([root / "runbook" / "zorblat-b.md"])
    t.write_text(first + partial[:40])  # Claude Code is still writing its last line
    starts = []
    real = claude_recall.scan
    monkeypatch.setattr(
        claude_recall,
        "scan",
        lambda path, offset, *a: starts.append(offset) or real(path, offset, *a),
    )
    write_memory(
        root, "runbook", "zorblat-c", "Zorblat queue drains", runbook_body("zorblat queue drain")
    )
    crowd(root, ["runbook/zorblat-c.md"])
    r = recall_in(two, SESSION, transcript=t)
    assert set(r.given) == {"runbook/zorblat-b", "runbook/zorblat-c"}
    record = json.loads((two / ".memcurate" / "recall" / f"{file_name(SESSION)}.json").read_text())
    assert record["claude"]["offset"] == len(first.encode())  # whole lines only
    with open(t, "a") as f:
        f.write(partial[40:] + "\n")
    write_memory(
        root, "runbook", "zorblat-d", "Zorblat queue dies", runbook_body("zorblat queue dies")
    )
    crowd(root, ["runbook/zorblat-d.md"])
    r = recall_in(two, SESSION, transcript=t)
    assert starts == [0, len(first.encode())]  # never the whole file again
    assert Seen(str(two / ".memcurate"), SESSION).surfaced == [
        str(root / "runbook" / "zorblat-a.md"),
        str(root / "runbook" / "zorblat-b.md"),
    ]
    assert r.given == [
        "runbook/zorblat-d"
    ]  # a, b surfaced by Claude Code; c given by memcurate before


def test_the_hook_process_in_recall_mode(two, tmp_path):
    root = memory_root(two)
    crowd(root, ["runbook/zorblat-a.md", "runbook/zorblat-b.md"])
    t = tmp_path / "t.jsonl"
    t.write_text(attachment_line([root / "runbook" / "zorblat-a.md"]) + "\n")
    payload = {**hook_payload(PROMPT, two), "transcript_path": str(t)}
    p = run_hook(payload, cwd=two)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    context = json.loads(p.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "zorblat-b.md" in context and "zorblat-a.md" not in context
    assert any("surfaced not given (runbook/zorblat-a)" in x for x in read_log(two / ".memcurate"))


def test_scan_copes_with_a_rewritten_transcript_and_a_line_longer_than_a_chunk(
    tmp_path, monkeypatch
):
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    a.write_text("a")
    b.write_text("b")
    t = tmp_path / "t.jsonl"
    # an attachment holds at most 5 files of 4 KB: far within a chunk; a pasted log may not be
    monkeypatch.setattr(claude_recall, "CHUNK", 1024)
    t.write_text(user_line("y" * 3000) + "\n" + attachment_line([a]) + "\n")
    offset, paths, found = claude_recall.scan(str(t), 0)
    assert (offset, paths, found) == (t.stat().st_size, [str(a)], True)
    # shorter than the offset: rewritten, read from its start
    t.write_text(attachment_line([b]) + "\n")
    assert claude_recall.scan(str(t), offset)[1:] == ([str(b)], True)
    # past this call's share: next time
    assert claude_recall.scan(str(t), 0, read_max=10) == (
        0,
        [],
        False,
    )
