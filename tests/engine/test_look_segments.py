"""A long session is looked at in segments as it goes (issue 23, Build §2): at the hook's pass after each
turn (Stop), once `second_look.segment_bytes` of the transcript were not looked at yet, the triage asks
for a look over them; each byte is looked at once, and the session's end asks only for the rest.

The session is built turn by turn in Claude Code's format, with the shapes a working session has: a
request, a failing test run and its output, a file read, an edit, a question answered through
AskUserQuestion, the report. The transcript grows between the passes as it does under the hook.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import claude_transcripts, run_cli, run_hook
from synthetic import Transcript, pytest_failure, text, tool

from memcurate.curator import config
from memcurate.curator.candidates import staging
from memcurate.curator.candidates.incremental import capture
from memcurate.curator.drafting import DraftResult, LookResult
from memcurate.curator.engine import Engine

NOW = "2026-11-27T10:00:00Z"
SEGMENT = 1 << 16  # the least segment_bytes the config takes: a few dozen turns


class Looking:
    """A Claude drafter as far as the engine can tell: each second look it is asked is kept, and finds
    nothing; a draft is skipped."""

    name = "claude-cli"
    reason = "test"

    def __init__(self) -> None:
        self.looks: list = []

    def draft(self, request):
        return DraftResult(doc=None, text="", model="fake", skipped="nothing durable")

    def second_look(self, request):
        self.looks.append(request)
        return LookResult(model="fake-sonnet", tokens_in=1000, tokens_out=20)


def turn(t: Transcript, i: int) -> None:
    """One turn of work: the user's request, a failing run, a read, an edit, a question answered, a report."""
    t.user(f"Step {i}: make the store create its folder before saving record batch {i}")
    t.assistant(
        text("Running the store tests first."),
        tool(f"toolu_{i}a", "Bash", command="pytest tests/test_store.py"),
    )
    t.result(f"toolu_{i}a", pytest_failure(i), is_error=True)
    t.assistant(tool(f"toolu_{i}b", "Read", file_path="/home/dev/app/app/store.py"))
    t.result(
        f"toolu_{i}b",
        "".join(f"{n:>4}\tdef save_{n}(self, doc):  # writes one batch\n" for n in range(12)),
    )
    t.assistant(
        tool(
            f"toolu_{i}c",
            "Edit",
            file_path="/home/dev/app/app/store.py",
            old_string="    def save(self, doc):",
            new_string="    def save(self, doc):\n        os.makedirs(self.root, exist_ok=True)",
        )
    )
    t.result(f"toolu_{i}c", "The file /home/dev/app/app/store.py has been updated.")
    ask = f"Keep batch {i} in the same folder?"
    questions = [
        {
            "question": ask,
            "header": "Folder",
            "multiSelect": False,
            "options": [{"label": "Yes", "description": "One folder per store"}, {"label": "No"}],
        }
    ]
    t.assistant(tool(f"toolu_{i}d", "AskUserQuestion", questions=questions))
    t.result(
        f"toolu_{i}d",
        f'Your questions have been answered: "{ask}"="Yes". You can now continue with these '
        "answers in mind.",
    )
    t.records[-1]["toolUseResult"] = {
        "questions": questions,
        "answers": {ask: "Yes"},
        "annotations": {},
    }
    t.assistant(text(f"Batch {i} is saved; the store creates its folder first and the tests pass."))


def setup(
    project: Path, tmp_path: Path, extra: str = "", backend: str = "claude-cli", drafter=None
) -> Engine:
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: {backend}\nmemory:\n  root: {tmp_path / 'memory'}\ndrafting:\n  retries: 0\n"
        f"second_look:\n  segment_bytes: {SEGMENT}\n{extra}"
    )
    return Engine(project, drafter=drafter or Looking(), clock=lambda: NOW)


def grow(engine: Engine, path: Path, turns: range, t: Transcript) -> list[int]:
    """Append `turns` to the transcript one at a time, with a Stop pass after each, as the hook runs;
    the transcript's size at each pass."""
    sizes = []
    for i in turns:
        before = len(t.records)
        turn(t, i)
        with path.open("ab") as f:
            f.write(b"".join(t.lines()[before:]))
        capture(engine.data, engine.cfg, str(path), event="Stop")
        sizes.append(path.stat().st_size)
    return sizes


def asked(engine: Engine) -> list[list[int]]:
    """The byte ranges of the looks the staged triages ask for, in order."""
    docs = [staging.load_triage(engine.data, tid) for tid in staging.triage_ids(engine.data)]
    return sorted(d["second_look"]["byte_range"] for d in docs if "second_look" in d)


def test_a_session_grown_past_a_segment_gets_a_look_per_segment_each_byte_once(project, tmp_path):
    fake = Looking()
    engine = setup(project, tmp_path, drafter=fake)
    path, t = tmp_path / "s.jsonl", Transcript()
    sizes = grow(engine, path, range(60), t)
    size = sizes[-1]
    ranges = asked(engine)
    # A look asked at the pass of each turn that completed a segment (not a turn later), from where the
    # last one ended: no gap, no overlap, and none for the bytes short of a segment at the end.
    expected, start = [], 0
    for s in sizes:
        if s - start >= SEGMENT:
            expected.append([start, s])
            start = s
    assert ranges == expected and len(ranges) >= 5 and ranges[-1][1] < size

    for tid in engine.pending():
        engine.process(tid)
    assert len(fake.looks) == len(ranges) and all(
        "user answered" in ask.activity for ask in fake.looks
    )
    seen = [n for ask in fake.looks for n in range(60) if f"Step {n}:" in ask.activity]
    # each turn looked at once
    assert len(seen) == len(set(seen)) and sorted(seen) == list(range(len(seen)))
    turns = [n for ask in fake.looks for n in ask.turns]
    assert len(turns) == len(set(turns))  # no turn in two looks

    # The session's end asks only for what the segments left.
    end = capture(engine.data, engine.cfg, str(path), event="SessionEnd")
    assert any(f"second look asked for bytes {ranges[-1][1]}..{size}" == n for n in end["notes"])
    assert asked(engine)[-1] == [ranges[-1][1], size]
    (tid,) = engine.pending()
    engine.process(tid)
    rest = [n for n in range(60) if f"Step {n}:" in fake.looks[-1].activity]
    assert sorted(seen + rest) == list(range(60))  # every turn of the session, once


def test_below_a_segment_stop_asks_for_none_and_the_end_asks_for_all(project, tmp_path):
    engine = setup(project, tmp_path)
    path, t = tmp_path / "s.jsonl", Transcript()
    grow(engine, path, range(5), t)
    assert path.stat().st_size < SEGMENT and asked(engine) == []
    capture(engine.data, engine.cfg, str(path), event="SessionEnd")
    assert asked(engine) == [[0, path.stat().st_size]]


def test_segment_bytes_0_looks_only_at_the_configured_events(project, tmp_path):
    engine = setup(project, tmp_path)
    (project / ".claude" / "memcurate.yaml").write_text(
        (project / ".claude" / "memcurate.yaml")
        .read_text()
        .replace(f"segment_bytes: {SEGMENT}", "segment_bytes: 0")
    )
    engine = Engine(project, drafter=Looking(), clock=lambda: NOW)
    path = tmp_path / "s.jsonl"
    grow(engine, path, range(30), Transcript())
    assert path.stat().st_size > SEGMENT and asked(engine) == []


@pytest.mark.parametrize("backend", ["offline", "auto"])
def test_an_offline_backend_never_asks_and_checks_once_a_segment(
    project, tmp_path, monkeypatch, backend
):
    """`auto` with neither ANTHROPIC_API_KEY nor `claude` here drafts offline; finding that out is asked
    once a segment, not after every turn (it imports the drafting module: milliseconds the hook saves)."""
    import memcurate.curator.drafting

    empty = tmp_path / "no-claude-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    calls = []
    choose = memcurate.curator.drafting.choose
    monkeypatch.setattr(
        memcurate.curator.drafting, "choose", lambda cfg, *a: calls.append(1) or choose(cfg, *a)
    )
    engine = setup(project, tmp_path, backend=backend)
    path = tmp_path / "s.jsonl"
    grow(engine, path, range(40), Transcript())
    size = path.stat().st_size
    assert size > 2 * SEGMENT and asked(engine) == []
    assert len(calls) <= (size // SEGMENT if backend == "auto" else 0)


def test_a_subagent_transcript_never_asks(project, tmp_path):
    engine = setup(project, tmp_path)
    path, t = tmp_path / "agent-a1b2c3.jsonl", Transcript()
    for i in range(30):
        turn(t, i)
    t.write(path)
    capture(engine.data, engine.cfg, str(path), event="SubagentStop", subagent=True)
    assert path.stat().st_size > SEGMENT and asked(engine) == []


def test_through_the_hook_a_stop_past_a_segment_asks_and_the_end_asks_for_the_rest(
    project, tmp_path
):
    """The real hook process reads segment_bytes from its cached config."""
    setup(project, tmp_path)
    path, t = claude_transcripts() / "0b5e6a34-1111-4222-8333-444455556666.jsonl", Transcript()
    for i in range(5):
        turn(t, i)
    t.write(path)

    def hook(event: str) -> None:
        p = run_hook(
            {
                "session_id": t.session,
                "transcript_path": str(path),
                "cwd": str(project),
                "hook_event_name": event,
            },
            cwd=project,
        )
        assert p.returncode == 0 and p.stderr == b"", p.stderr

    hook("Stop")
    engine = Engine(project, drafter=Looking(), clock=lambda: NOW)
    assert asked(engine) == []
    first = path.stat().st_size
    for i in range(5, 30):
        turn(t, i)
    t.write(path)
    hook("Stop")
    segment = path.stat().st_size
    assert segment > SEGMENT and asked(engine) == [[0, segment]]
    turn(t, 30)
    t.write(path)
    hook("Stop")
    assert asked(engine) == [[0, segment]] and first < segment
    hook("SessionEnd")
    assert asked(engine) == [[0, segment], [segment, path.stat().st_size]]


# -- the config: the new key's bounds, and the retired turns_per_category -----------------------------------


def write_config(project: Path, text: str) -> None:
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(text)


@pytest.mark.parametrize(
    "value,ok", [(0, True), (65536, True), (2_000_000, True), (65535, False), (-1, False)]
)
def test_segment_bytes_is_0_or_at_least_64_kib(project, value, ok):
    write_config(project, f"second_look:\n  segment_bytes: {value}\n")
    if ok:
        assert config.load(project)["second_look"]["segment_bytes"] == value
    else:
        with pytest.raises(
            config.ConfigError, match=r"memcurate\.yaml: second_look\.segment_bytes: expected 0 "
        ):
            config.load(project)


def test_a_config_still_setting_turns_per_category_loads_with_a_warning(project):
    write_config(project, "second_look:\n  turns_per_category: 3\n  max_chars: 5000\n")
    cfg = config.load(project)
    assert (
        cfg["second_look"]["max_chars"] == 5000 and "turns_per_category" not in cfg["second_look"]
    )
    (warning,) = config.warnings(cfg)
    assert "memcurate.yaml: second_look.turns_per_category: unused" in warning
    p = run_cli("status", cwd=project)
    assert p.returncode == 0 and "config warning" in p.stdout and "turns_per_category" in p.stdout
    p = run_cli("status", "--json", cwd=project)
    assert "turns_per_category" in json.loads(p.stdout)["config_warnings"][0]
    # Any other unknown key stays an error: a typo must not pass silently.
    write_config(project, "second_look:\n  turns_per_categroy: 3\n")
    with pytest.raises(config.ConfigError, match="second_look.turns_per_categroy: unknown key"):
        config.load(project)
