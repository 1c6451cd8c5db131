"""The real `memcurate hook` process (DESIGN §1, §3): hostile input, incremental
passes, shrunk and replaced transcripts, concurrent hooks, guards, every real
transcript, and what the hook path imports."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import (
    ROOT,
    claude_transcripts,
    memcurate_exe,
    needs_shared,
    run_hook,
    shared,
    shared_config_env,
    shared_transcripts,
)
from synthetic import Transcript, text, tool

from memcurate.curator.categories import NAMES

REAL = "-Users-dain-workspace-claude-code-log-sample/37f83ec9-f2ea-42a9-925e-0d5c105cb6e8.jsonl"


def decision_session(tag: str = "postgres", stamp: str = "2025-07-14T22:59") -> Transcript:
    """A short session that triggers `decision` (and mentions `tag` in it)."""
    return (
        Transcript(stamp=stamp)
        .user(
            f"We decided to go with {tag} because it is simpler to operate than the alternatives."
        )
        .assistant(
            text(f"Understood: we will use {tag}, since it keeps the deployment simpler."),
            tool("toolu_a1", "Bash", command="ls"),
        )
        .result("toolu_a1", "README.md\nsrc")
        .assistant(text("Done."))
    )


def busy_session(tag: str = "cache", stamp: str = "2025-07-14T22:59") -> Transcript:
    """A session with enough activity for a session summary, and a decision."""
    t = Transcript(stamp=stamp)
    t.user(f"Please refactor the {tag} layer; we decided to switch to Redis because it is faster.")
    t.assistant(
        text("I'll read the code first."),
        tool("toolu_r1", "Read", file_path="/home/dev/app/cache.py"),
        tool("toolu_g1", "Grep", pattern="cache"),
    )
    t.result("toolu_r1", "class Cache: ...").result("toolu_g1", "cache.py:1")
    t.assistant(
        tool(
            "toolu_e1", "Edit", file_path="/home/dev/app/cache.py", old_string="a", new_string="b"
        ),
        tool("toolu_b1", "Bash", command="pytest -q"),
    )
    t.result("toolu_e1", "ok").result("toolu_b1", "3 passed")
    t.user("Great, now also update the docs for the new cache please.")
    t.assistant(
        tool("toolu_w1", "Write", file_path="/home/dev/app/docs/cache.md", content="# Cache")
    )
    t.result("toolu_w1", "ok")
    t.assistant(text(f"The {tag} layer now uses Redis and the docs describe it."))
    return t


# -- looking at the project's data dir ------------------------------------------


def data_of(project: Path) -> Path:
    return project / ".memcurate"


def log_lines(project: Path) -> list[str]:
    p = data_of(project) / "log" / "memcurate.log"
    return p.read_text().splitlines() if p.exists() else []


def staged(project: Path) -> list[str]:
    d = data_of(project) / "staging"
    return sorted(n for n in os.listdir(d) if not n.startswith(".")) if d.is_dir() else []


def triage_doc(project: Path, tid: str) -> dict:
    return json.loads((data_of(project) / "staging" / tid / "triage.json").read_text())


def half_written(project: Path) -> list[str]:
    """Temp files of atomic writes, and triages left half-assembled in .incoming."""
    d = data_of(project)
    out = [str(p) for p in d.rglob(".*.tmp")] if d.exists() else []
    incoming = d / "staging" / ".incoming"
    if incoming.is_dir():
        out += [str(p) for p in incoming.iterdir()]
    return out


def offset_states(project: Path) -> list[dict]:
    d = data_of(project) / "offsets"
    return [json.loads(p.read_text()) for p in sorted(d.glob("*.json"))] if d.is_dir() else []


def offset_state(project: Path) -> dict:
    states = offset_states(project)
    assert len(states) == 1, states
    return states[0]


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file()
    }


def payload(event: str, transcript, project: Path, **extra) -> dict:
    doc = {
        "session_id": "0b5e6a34-1111-4222-8333-444455556666",
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": event,
    }
    doc.update(extra)
    return doc


def probe(script: str, project: Path, doc: dict) -> str:
    """One hook process running `script` (Python that calls the CLI's `main(["hook"])` and writes a
    report on the last line of its output) on the payload `doc`: that report. The hook itself printed
    nothing and the process ended well."""
    p = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(doc).encode(),
        cwd=project,
        capture_output=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    hook_out, _, report = p.stdout.decode().rpartition("\n")
    assert hook_out == ""
    return report


def hook(event: str, transcript, project: Path, **extra) -> subprocess.CompletedProcess:
    """Run one hook call; assert the invariants every call keeps; return the process."""
    before = len(log_lines(project))
    p = run_hook(payload(event, transcript, project, **extra), cwd=project)
    assert p.returncode == 0, p.stderr
    assert p.stdout == b""
    assert p.stderr == b"", p.stderr
    assert len(log_lines(project)) == before + 1
    return p


def claude_dir(tmp_path: Path) -> Path:
    """Where Claude Code keeps a project's transcripts (under the isolated $CLAUDE_CONFIG_DIR)."""
    return claude_transcripts()


def assert_passes_tile(project: Path, size: int) -> list[list]:
    """The recorded passes, in order, cover [0, size) exactly once; each staged
    triage is the one its pass names, with the pass's byte range."""
    state = offset_state(project)
    passes = state["passes"]
    pos = 0
    for start, end, _tid, _event in passes:
        assert start == pos, f"gap or overlap at {pos}: {passes}"
        assert end >= start
        pos = end
    assert pos == size == state["offset"]
    tids = [p[2] for p in passes if p[2]]
    assert len(tids) == len(set(tids))
    assert sorted(tids) == staged(project)
    for start, end, tid, event in passes:
        if tid:
            doc = triage_doc(project, tid)
            assert doc["source"]["byte_range"] == [start, end]
            assert doc["event"] == event
    return passes


# -- 1. hostile input ------------------------------------------------------------


def _huge_line(path: Path, size: int = 50 * 1024 * 1024) -> None:
    head = b'{"type":"user","message":{"role":"user","content":"'
    tail = b'"}}\n'
    chunk = b"decided because " * (1 << 16)  # 1 MiB
    with open(path, "wb") as f:
        f.write(head)
        left = size - len(head) - len(tail)
        while left > 0:
            piece = chunk[:left]
            f.write(piece)
            left -= len(piece)
        f.write(tail)


def _complete_end(data: bytes) -> int:
    """Where a reader that keeps an unfinished last line for later stops."""
    cut = data.rfind(b"\n") + 1
    try:
        json.loads(data[cut:])
    except ValueError:
        return cut
    return len(data)


BAD_CONTENT = {
    "random-binary": lambda p: p.write_bytes(os.urandom(64 * 1024)),
    "invalid-utf8": lambda p: p.write_bytes(
        b'{"type":"user","message":{"role":"user","content":"caf\xe9 \xff\xfe we decided"}}\n'
        b"\xff\xfe\xfd not utf-8 at all\n"
        b"\xc3\x28\xa0\xa1\n"
    ),
    "arrays-and-numbers": lambda p: p.write_bytes(
        b'[1, 2, 3]\n42\n-1.5e3\n"a string"\nnull\ntrue\n[{"type": "user"}]\n'
    ),
}


def _input_for(case: str, tmp_path: Path, project: Path):
    """(payload, raw stdin) for the hostile cases that are about the hook input itself."""
    folder = claude_dir(tmp_path)
    if case == "empty-stdin":
        return None, b""
    if case == "not-json":
        return None, b'{"hook_event_name": "Stop", "transcript_path": '
    if case == "stdin-not-utf8":
        return None, b'{"hook_event_name": "Stop\xff\xfe"}'
    if case == "json-array":
        return None, json.dumps([payload("Stop", folder / "s.jsonl", project)]).encode()
    if case == "json-number":
        return None, b"17"
    if case == "no-transcript-path":
        p = payload("Stop", "", project)
        del p["transcript_path"]
        return p, None
    if case == "transcript-path-not-a-string":
        return {**payload("Stop", "", project), "transcript_path": ["a.jsonl"]}, None
    if case == "missing-file":
        return payload("Stop", folder / "no-such-session.jsonl", project), None
    if case == "directory":
        return payload("Stop", folder, project), None
    if case == "zero-byte-file":
        (folder / "empty.jsonl").write_bytes(b"")
        return payload("Stop", folder / "empty.jsonl", project), None
    if case == "unknown-event":
        decision_session().write(folder / "s.jsonl")
        return payload("Notification", folder / "s.jsonl", project), None
    raise AssertionError(case)


@pytest.mark.parametrize(
    "case",
    [
        "empty-stdin",
        "not-json",
        "stdin-not-utf8",
        "json-array",
        "json-number",
        "no-transcript-path",
        "transcript-path-not-a-string",
        "missing-file",
        "directory",
        "zero-byte-file",
        "unknown-event",
    ],
)
def test_hostile_hook_input_is_logged_and_ignored(case, tmp_path, project):
    doc, raw = _input_for(case, tmp_path, project)
    p = run_hook(doc, cwd=project, raw=raw)
    assert p.returncode == 0
    assert p.stdout == b""
    assert p.stderr == b"", p.stderr  # bad input is not an internal error
    lines = log_lines(project)
    assert len(lines) == 1, lines
    assert "internal error" not in lines[0]
    assert staged(project) == []
    assert half_written(project) == []
    assert offset_states(project) == []  # nothing was read, so no offset moved
    if case == "unknown-event":
        assert "Notification" in lines[0]
    if case == "zero-byte-file":
        assert "nothing-new" in lines[0]


@pytest.mark.parametrize("case", sorted(BAD_CONTENT))
def test_bad_transcript_bytes_are_consumed_once(case, tmp_path, project):
    path = claude_dir(tmp_path) / f"{case}.jsonl"
    BAD_CONTENT[case](path)
    # Every complete line is consumed, bad or not; a last line without its newline
    # (random bytes end in one) waits, as a record still being written would.
    end = _complete_end(path.read_bytes())
    hook("Stop", path, project)
    lines = log_lines(project)
    assert len(lines) == 1
    assert "internal error" not in lines[0]
    assert f"0..{end}" in lines[0]
    assert staged(project) == []
    assert half_written(project) == []
    # The bad bytes are behind the offset: they are not read again on every turn.
    state = offset_state(project)
    assert state["offset"] == end
    before = snapshot(data_of(project) / "offsets")

    hook("Stop", path, project)
    lines = log_lines(project)
    assert len(lines) == 2
    assert "nothing-new" in lines[1]
    assert snapshot(data_of(project) / "offsets") == before
    assert staged(project) == []


def test_huge_line_is_not_held_in_memory(tmp_path, project):
    """A 50 MB line is skipped in bounded chunks: the hook's peak memory stays far below the line."""
    if not hasattr(os, "wait4"):
        pytest.skip("os.wait4 is not available here")
    path = claude_dir(tmp_path) / "huge.jsonl"
    _huge_line(path)
    size = path.stat().st_size
    with open(tmp_path / "stdin.json", "wb") as f:
        f.write(json.dumps(payload("Stop", path, project)).encode())
    # Measured from a small launcher: a child forked straight from pytest would count
    # pytest's own pages (RSS before exec) in its peak.
    launcher = (
        "import os, subprocess, sys\n"
        "with open(sys.argv[1], 'rb') as i, open(sys.argv[2], 'wb') as o:\n"
        "    p = subprocess.Popen(sys.argv[3:], stdin=i, stdout=o, stderr=subprocess.DEVNULL)\n"
        "    _, status, usage = os.wait4(p.pid, 0)\n"
        "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)\n"
    )
    res = subprocess.run(
        [
            sys.executable,
            "-c",
            launcher,
            str(tmp_path / "stdin.json"),
            str(tmp_path / "out"),
            *memcurate_exe(),
            "hook",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    code, maxrss = map(int, res.stdout.split())
    assert code == 0
    assert (tmp_path / "out").read_bytes() == b""
    peak = maxrss * (1 if sys.platform == "darwin" else 1024)  # bytes on macOS, KiB on Linux
    assert peak < 1.5 * size, f"peak RSS {peak / 2**20:.0f} MiB for a {size / 2**20:.0f} MiB line"
    assert offset_state(project)["offset"] == size
    assert "too_long" in log_lines(project)[-1]
    assert staged(project) == [] and half_written(project) == []
    hook("Stop", path, project)  # the line is behind the offset now: never read again
    assert "nothing-new" in log_lines(project)[-1]


HUGE_HEAD = "We decided to go with postgres because it is simpler to operate than the alternatives."
HUGE_TAIL = "Please always use pytest fixtures for scratch files; I prefer them because they clean up after us."


def huge_message_session(size: int = 10_000_000) -> Transcript:
    """A session whose one user message is `size` characters: a decision at its start, a preference at
    its end, a pasted log in between (with one emoji: decoded whole, it would take 4 bytes a character)."""
    lines, n = ["2025-07-14 10:00:00 INFO import started 🚀"], 0
    while n < size:
        lines.append(
            f"2025-07-14 10:00:{n % 60:02d} INFO worker {n % 7} imported batch {n} in {n % 97} ms"
        )
        n += len(lines[-1]) + 1
    return (
        Transcript()
        .user("\n".join([HUGE_HEAD, *lines, HUGE_TAIL]))
        .assistant(text("Noted: postgres, and fixtures for scratch files."))
    )


def test_a_huge_message_is_scored_from_its_ends_and_the_log_says_what_was_skipped(
    tmp_path, project
):
    """One 10 MB message: what its (bounded) head and tail state still triggers, and the hook's log line
    and the triage's stats say which message was scored only in part."""
    path = huge_message_session().write(claude_dir(tmp_path) / "huge-message.jsonl")
    hook("Stop", path, project)
    line = log_lines(project)[-1]
    assert re.search(
        r"; user message at turn 1: 10\.\d MB, scored the first and last 8,192 characters", line
    ), line
    assert offset_state(project)["offset"] == path.stat().st_size
    (tid,) = staged(project)
    doc = triage_doc(project, tid)
    assert {n for n, c in doc["categories"].items() if c["triggered"]} == {"decision", "preference"}
    assert "decided to go with postgres" in doc["categories"]["decision"]["excerpt"]
    assert "I prefer them because" in doc["categories"]["preference"]["excerpt"]
    (cut,) = doc["stats"]["cut_messages"]
    assert (cut["turn"], cut["kind"], cut["kept"]) == (1, "user", 8192) and cut[
        "chars"
    ] > 10_000_000


def test_capturing_a_huge_message_keeps_memory_bounded(tmp_path, project):
    """The peak of Python allocations while a 10 MB message is captured stays near the size of its line
    (read once, never decoded whole), not a multiple of it (the decoded line and the parsed text at 4
    bytes a character, copies, lowercased text, word and line lists, redaction of the whole). Before
    the bound it was over 200 MB."""
    import tracemalloc

    from memcurate.curator import config
    from memcurate.curator.candidates.incremental import capture

    path = huge_message_session().write(claude_dir(tmp_path) / "huge-message.jsonl")
    data = data_of(project)
    data.mkdir()
    cfg = config.load(project, data)
    tracemalloc.start()
    try:
        report = capture(str(data), cfg, str(path), event="Stop")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report["status"] == "staged"
    assert peak < 30e6, f"peak of Python allocations {peak / 1e6:.0f} MB for a 10 MB message"


def test_deeply_nested_line_is_a_bad_line_not_an_internal_error(tmp_path, project):
    path = claude_dir(tmp_path) / "deep.jsonl"
    good = decision_session().bytes()
    path.write_bytes(b"[" * 200_000 + b"]" * 200_000 + b"\n" + good)
    p = run_hook(payload("Stop", path, project), cwd=project)
    assert p.returncode == 0 and p.stdout == b""
    assert "internal error" not in log_lines(project)[-1]
    assert offset_state(project)["offset"] == path.stat().st_size
    assert len(staged(project)) == 1


# -- 2. a growing transcript -------------------------------------------------------


def _grow_and_check(project: Path, path: Path, data: bytes, cuts: list[int]) -> None:
    """Write `data` up to each cut, Stop after each, SessionEnd at the end."""
    for cut in cuts + [len(data)]:
        with open(path, "ab") as f:
            f.write(data[path.stat().st_size if path.exists() else 0 : cut])
        hook("Stop", path, project)
        state = offset_state(project)
        done = data[:cut]
        # Only complete lines are consumed: an unfinished last line waits.
        assert state["offset"] == done.rfind(b"\n") + 1
    hook("SessionEnd", path, project)
    passes = assert_passes_tile(project, len(data))
    assert [p[3] for p in passes] == ["Stop"] * (len(cuts) + 1) + ["SessionEnd"]
    assert passes[-1][:2] == [len(data), len(data)]  # the summary pass reads no new byte

    # Nothing new: nothing staged, no file changed, one log line more.
    before = snapshot(data_of(project))
    for event in ("Stop", "SessionEnd"):
        hook(event, path, project)
        after = snapshot(data_of(project))
        log = "log/memcurate.log"
        assert set(after) == set(before)
        assert {k: v for k, v in after.items() if k != log} == {
            k: v for k, v in before.items() if k != log
        }
        assert after[log][0].startswith(before[log][0])
        assert after[log][0][len(before[log][0]) :].count(b"\n") == 1
        assert b"nothing-new" in after[log][0][len(before[log][0]) :]
        before = after


@needs_shared
@pytest.mark.parametrize("mid_line", [False, True], ids=["line-cuts", "mid-line-cuts"])
def test_growing_real_transcript_is_triaged_once(mid_line, tmp_path, project):
    data = shared(REAL).read_bytes()
    starts = [i + 1 for i, b in enumerate(data) if b == 0x0A][:-1]
    a, b = starts[len(starts) // 3], starts[2 * len(starts) // 3]
    if mid_line:  # end each part half-way through the line that follows
        a = (a + data.index(b"\n", a)) // 2
        b = (b + data.index(b"\n", b)) // 2
        assert data[a - 1 : a] != b"\n" and data[b - 1 : b] != b"\n"
    path = claude_dir(tmp_path) / os.path.basename(REAL)
    _grow_and_check(project, path, data, [a, b])
    assert staged(project), "the real session triggers at least one category"
    summary = [t for t in staged(project) if triage_doc(project, t)["event"] == "SessionEnd"]
    assert summary and triage_doc(project, summary[0])["categories"]["session_summary"]["triggered"]


def test_growing_synthetic_transcript_waits_for_an_unfinished_line(tmp_path, project):
    data = busy_session().bytes()
    lines = busy_session().lines()
    first = len(lines[0])
    path = claude_dir(tmp_path) / "grow.jsonl"
    # Part one ends three bytes into the second record: only the first is read.
    _grow_and_check(project, path, data, [first + 3, first + len(lines[1]) + 10])


# -- 3. shrunk / replaced transcript ----------------------------------------------------


@pytest.mark.parametrize("how", ["shrunk", "replaced"])
def test_rewritten_transcript_is_triaged_anew(how, tmp_path, project):
    path = claude_dir(tmp_path) / "s.jsonl"
    old = busy_session("kafka")
    old.write(path)
    hook("Stop", path, project)
    assert len(staged(project)) == 1
    if how == "shrunk":
        new = decision_session("sqlite", stamp="2025-08-01T10:00")
        assert len(new.bytes()) < path.stat().st_size
    else:
        new = busy_session("mongodb", stamp="2025-08-01T10:00")
        new.user("One more thing: we decided to keep mongodb because it is simpler for the team.")
        assert len(new.bytes()) > path.stat().st_size
    with open(path, "r+b") as f:  # truncate and rewrite the same file
        f.truncate(0)
        f.write(new.bytes())
    hook("Stop", path, project)
    note = "shrank" if how == "shrunk" else "replaced"
    assert note in log_lines(project)[-1]
    state = offset_state(project)
    assert state["offset"] == len(new.bytes())
    assert state["passes"][0][:2] == [0, len(new.bytes())]
    assert len(staged(project)) == 2
    tid = state["passes"][0][2]
    doc = triage_doc(project, tid)
    assert doc["source"]["byte_range"] == [0, len(new.bytes())]
    tag = "sqlite" if how == "shrunk" else "mongodb"
    assert tag in json.dumps(doc["categories"]["decision"])


def test_rewritten_transcript_with_same_first_timestamp_is_not_lost(tmp_path, project):
    path = claude_dir(tmp_path) / "s.jsonl"
    decision_session("kafka").write(path)
    hook("Stop", path, project)
    new = decision_session("sqlite")
    new.user(
        "Also: please never push to main directly, it is a protected branch and must not be touched."
    )
    with open(path, "r+b") as f:
        f.truncate(0)
        f.write(new.bytes())
    hook("Stop", path, project)
    assert len(staged(project)) == 2
    tid = offset_state(project)["passes"][-1][2]
    assert "sqlite" in json.dumps(triage_doc(project, tid))


# -- 4. concurrency ------------------------------------------------------------------------


def test_concurrent_hooks_triage_each_byte_once(tmp_path, project):
    # Parts of a few hundred KB, so that the six passes really contend for the lock.
    parts = [
        busy_session().bytes() * 60,
        decision_session("kafka").bytes() * 80,
        busy_session("queue").bytes() * 60,
    ]
    data = b"".join(parts)
    cuts = [len(parts[0]), len(parts[0]) + len(parts[1]), len(data)]
    path = claude_dir(tmp_path) / "race.jsonl"
    path.write_bytes(b"")
    for cut in cuts:
        with open(path, "ab") as f:
            f.write(data[path.stat().st_size : cut])
        before = len(log_lines(project))
        body = json.dumps(payload("Stop", path, project)).encode()
        procs = [
            subprocess.Popen(
                memcurate_exe() + ["hook"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=project,
            )
            for _ in range(6)
        ]
        outs = [p.communicate(body, timeout=120) for p in procs]
        assert [p.returncode for p in procs] == [0] * 6
        assert all(o == (b"", b"") for o in outs), outs
        new = log_lines(project)[before:]
        assert len(new) == 6
        assert sum(("staged bytes" in ln or "no-trigger bytes" in ln) for ln in new) == 1, new
        assert offset_state(project)["offset"] == cut
    passes = assert_passes_tile(project, len(data))
    assert len(passes) == 3
    assert half_written(project) == []


# -- 5. guards -----------------------------------------------------------------------------


def test_stop_hook_active_leaves_the_bytes_for_later(tmp_path, project):
    path = decision_session().write(claude_dir(tmp_path) / "s.jsonl")
    hook("Stop", path, project, stop_hook_active=True)
    assert "stop_hook_active" in log_lines(project)[0]
    assert staged(project) == []
    assert offset_states(project) == []
    hook("Stop", path, project)  # the next ordinary pass gets every byte
    assert offset_state(project)["passes"][0][:2] == [0, path.stat().st_size]
    assert len(staged(project)) == 1


def test_calls_from_memcurate_children_are_ignored(tmp_path, project):
    path = decision_session().write(claude_dir(tmp_path) / "s.jsonl")
    p = run_hook(payload("Stop", path, project), cwd=project, env={"MEMCURATE_CHILD": "1"})
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b""
    lines = log_lines(project)
    assert len(lines) == 1 and "child" in lines[0]
    assert staged(project) == []
    assert offset_states(project) == []


def test_subagent_stop_reads_the_agent_transcript(tmp_path, project):
    folder = claude_dir(tmp_path)
    main = decision_session("kafka").write(folder / "0b5e6a34-1111-4222-8333-444455556666.jsonl")
    agent = decision_session("sqlite").write(
        folder / "0b5e6a34-1111-4222-8333-444455556666" / "subagents" / "agent-a1b2c3.jsonl"
    )
    hook("SubagentStop", main, project, agent_transcript_path=str(agent), stop_hook_active=False)
    [tid] = staged(project)
    doc = triage_doc(project, tid)
    assert doc["source"]["transcript"] == str(agent)
    assert doc["source"]["subagent"] is True
    assert doc["source"]["byte_range"] == [0, agent.stat().st_size]
    assert "sqlite" in json.dumps(doc["categories"])
    assert offset_state(project)["transcript"] == str(agent)  # the main transcript was not read


@pytest.mark.parametrize("event", ["PreCompact", "SessionEnd"])
def test_precompact_and_session_end_stage_a_summary(event, tmp_path, project):
    path = busy_session().write(claude_dir(tmp_path) / "s.jsonl")
    hook("Stop", path, project)
    [first] = staged(project)
    assert triage_doc(project, first)["categories"]["session_summary"]["triggered"] is False
    hook(event, path, project)
    ids = staged(project)
    assert len(ids) == 2
    doc = triage_doc(project, [t for t in ids if t != first][0])
    assert doc["event"] == event
    assert set(doc["categories"]) == set(NAMES)
    summary = doc["categories"]["session_summary"]
    assert summary["triggered"] is True
    assert "Redis" in summary["excerpt"] or "cache" in summary["excerpt"]
    assert_passes_tile(project, path.stat().st_size)


def test_unknown_event_is_logged_by_name(tmp_path, project):
    path = decision_session().write(claude_dir(tmp_path) / "s.jsonl")
    hook("UserPromptSubmit_v9", path, project)
    assert "UserPromptSubmit_v9" in log_lines(project)[0]
    assert staged(project) == [] and offset_states(project) == []


# -- 6. every real transcript ------------------------------------------------------------------


def _rel(p: Path) -> str:
    return str(p.relative_to(shared(".")))


@needs_shared
@pytest.mark.parametrize("path", shared_transcripts(), ids=_rel)
def test_every_real_transcript_goes_through_the_hook(path, project, tmp_path):
    env = shared_config_env(tmp_path)
    if path.name.startswith("agent-"):
        main = path.parent / "session.jsonl"
        calls = [("SubagentStop", {"agent_transcript_path": str(path)})]
    else:
        main = path
        calls = [("Stop", {}), ("SessionEnd", {})]
    for event, extra in calls:
        before = len(log_lines(project))
        p = run_hook(payload(event, main, project, **extra), cwd=project, env=env)
        assert p.returncode == 0
        assert p.stdout == b""
        assert p.stderr == b"", p.stderr
        new = log_lines(project)[before:]
        assert len(new) == 1
        assert "internal error" not in new[0] and "config error" not in new[0]
    assert half_written(project) == []
    if path.stat().st_size:
        assert offset_state(project)["offset"] == path.stat().st_size


# -- 7. what the hook path imports --------------------------------------------------------------

_PROBE = """
import json, sys
from memcurate.curator.cli import main
rc = main(["hook"])
sys.stdout.write("\\n" + json.dumps({"rc": rc, "modules": sorted(sys.modules)}))
"""

HEAVY = ("textual", "rich", "anthropic", "widgets", "yaml")


def _loaded(modules: list[str], name: str) -> bool:
    return any(m == name or m.startswith(name + ".") for m in modules)


def test_hook_path_imports_stay_light(tmp_path, project):
    path = claude_dir(tmp_path) / "s.jsonl"
    t = busy_session()
    path.write_bytes(t.bytes())
    seen = []
    for round_ in range(2):
        if round_:
            with open(path, "ab") as f:
                f.write(decision_session("kafka").bytes())
        p = subprocess.run(
            [sys.executable, "-c", _PROBE],
            input=json.dumps(payload("Stop", path, project)).encode(),
            cwd=project,
            capture_output=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(ROOT / "dev")},
        )
        assert p.returncode == 0, p.stderr
        hook_out, _, probe = p.stdout.decode().rpartition("\n")
        assert hook_out == ""  # the hook itself printed nothing
        report = json.loads(probe)
        assert report["rc"] == 0
        # the whole path ran: read, triage, redact, stage
        assert "staged bytes" in log_lines(project)[-1]
        seen.append(report["modules"])
    assert (data_of(project) / "config.cache.json").is_file()
    # memcurate.curator.settings: the typed config view is the engine's; the hook reads the dict
    for name in ("textual", "rich", "anthropic", "widgets", "memcurate.curator.settings"):
        assert not _loaded(seen[0], name), f"{name} loaded on the hook path"
    for name in HEAVY:
        assert not _loaded(seen[1], name), (
            f"{name} loaded on the hook path with a warm config cache"
        )
