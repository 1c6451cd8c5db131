"""The session digest (issue 23): what a drafter reads of a session, in the record shapes Claude Code writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import needs_shared
from synthetic import Transcript, text, tool

from memcurate.curator import config
from memcurate.curator.capture.digest import Digest, digest, prose
from memcurate.curator.capture.transcript import TranscriptReader

SHARED = Path(__file__).resolve().parents[3] / "shared"
PROJECT = "/home/dev/app"  # the cwd synthetic records carry
REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
    "edit, the new_string was NOT written to the file). "
)


@pytest.fixture
def cfg(project):
    return config.load(project)


def record(t: Transcript, rtype: str, **fields) -> Transcript:
    """A record of any type, with the fields Claude Code adds to every one."""
    r = t._base(rtype)
    r.update(fields)
    t.records.append(r)
    return t


def answer(t: Transcript, tid: str, content: str, result, *, is_error: bool = False) -> Transcript:
    """A tool result the way Claude Code writes one: the model's text, and the structured `toolUseResult`."""
    return record(
        t,
        "user",
        message={
            "role": "user",
            "content": [
                {
                    "tool_use_id": tid,
                    "type": "tool_result",
                    "content": content,
                    "is_error": is_error,
                }
            ],
        },
        toolUseResult=result,
    )


def queue(t: Transcript, operation: str, content: str | None = None) -> Transcript:
    r = {
        "type": "queue-operation",
        "operation": operation,
        "timestamp": "2025-07-14T22:59:30.000Z",
        "sessionId": t.session,
    }
    if content is not None:
        r["content"] = content
    t.records.append(r)
    return t


def write(t: Transcript, tmp_path: Path, name: str = "s.jsonl") -> Path:
    return t.write(tmp_path / name)


def lines_of(d: Digest) -> list[str]:
    return d.text.splitlines()


def test_every_user_message_is_numbered_and_the_turn_report_is_marked(cfg, tmp_path):
    t = (
        Transcript()
        .user("Use SQLite for the cache, the deploy box has no database server.")
        .assistant(
            text("Now let me look at the cache module."),
            tool("t1", "Read", file_path=f"{PROJECT}/cache.py"),
        )
        .result("t1", "1\timport sqlite3")
        .assistant(text("The cache now lives in SQLite, so nothing else has to run on the box."))
        .user("Good, and keep the old JSON reader for one release.")
    )
    d = digest(write(t, tmp_path), cfg)
    assert lines_of(d) == [
        "[1] user: Use SQLite for the cache, the deploy box has no database server.",
        "[2] assistant (end of turn): The cache now lives in SQLite, so nothing else has to run on the box.",
        "[3] user: Good, and keep the old JSON reader for one release.",
    ]
    assert [(e.n, e.turn, e.kind, e.who, e.line) for e in d.entries] == [
        (1, 1, "user", "user", 1),
        (2, 1, "report", "assistant", 5),
        (3, 2, "user", "user", 6),
    ]


def test_the_turns_report_has_more_room_than_the_replies_before_it(cfg, tmp_path):
    # ~4,800 chars
    long = "The parser keeps blank lines inside code fences since the renderer needs them. " * 60
    t = (
        Transcript()
        .user("Review the parser.")
        .assistant(text("Midway: " + long))
        .assistant(text("Summary: " + long))
        .user("Thanks.")
    )
    d = digest(write(t, tmp_path), cfg)
    middle, report = d.entries[1], d.entries[2]
    assert (middle.kind, report.kind) == ("assistant", "report")
    assert len(middle.text) <= 2500 and " […] " in middle.text
    assert report.text == ("Summary: " + long).strip()


def test_a_question_answered_through_askuserquestion_is_the_users_decision(cfg, tmp_path):
    questions = [
        {
            "question": "Which queue backend?",
            "header": "Queue",
            "multiSelect": False,
            "options": [
                {
                    "label": "Redis",
                    "description": "Already runs in production; no new service to operate",
                },
                {"label": "RabbitMQ", "description": "Durable, but one more service"},
            ],
        }
    ]
    t = (
        Transcript()
        .user("Add a job queue.")
        .assistant(tool("q1", "AskUserQuestion", questions=questions))
    )
    answer(
        t,
        "q1",
        'Your questions have been answered: "Which queue backend?"="Redis". You can now continue with '
        "these answers in mind.",
        {"questions": questions, "answers": {"Which queue backend?": "Redis"}, "annotations": {}},
    )
    d = digest(write(t, tmp_path), cfg)
    e = next(e for e in d.entries if e.kind == "answer")
    assert e.render() == (
        '[2] user answered: "Which queue backend?"="Redis" (chosen: Redis: Already runs in '
        "production; no new service to operate)"
    )
    assert e.line == 3 and e.who == "user"


def test_an_approved_plan_is_kept_whole_and_a_rejected_one_with_what_the_user_said(cfg, tmp_path):
    plan = "# Plan\n\n1. Move sessions to Redis because the app runs on three hosts.\n2. Drop the file store."
    t = (
        Transcript()
        .user("Plan the session store change.")
        .assistant(tool("p1", "ExitPlanMode", plan=plan))
    )
    answer(
        t,
        "p1",
        "User has approved your plan. You can now start coding.\n\n## Approved Plan:\n" + plan[:20],
        {"plan": plan, "isAgent": False},
    )
    t.assistant(tool("p2", "ExitPlanMode", plan="# Plan B\n\nRewrite it in Go."))
    answer(
        t,
        "p2",
        REJECTED
        + "To tell you how to proceed, the user said:\nNo rewrite: we stay on Python, the team "
        "knows it.\n\nNote: The user's next message may contain a correction or preference.",
        "Error: " + REJECTED,
        is_error=True,
    )
    d = digest(write(t, tmp_path), cfg)
    kinds = {e.kind: e for e in d.entries}
    assert kinds["plan"].text == plan
    assert kinds["plan_rejected"].render() == (
        '[3] plan rejected: (user said: "No rewrite: we stay on Python, the team '
        'knows it.")\n# Plan B\n\nRewrite it in Go.'
    )


def test_a_rejected_tool_call_carries_the_persons_reason_and_the_file_relative_to_the_project(
    cfg, tmp_path
):
    t = (
        Transcript()
        .user("Tidy the config loader.")
        .assistant(
            tool("e1", "Edit", file_path=f"{PROJECT}/src/config.py", old_string="a", new_string="b")
        )
    )
    answer(
        t,
        "e1",
        REJECTED
        + "To tell you how to proceed, the user said:\nkeep the YAML loader, ops edit it by hand"
        "\n\nNote: The user's next message may contain a correction or preference.",
        "Error: rejected",
        is_error=True,
    )
    t.assistant(tool("b1", "Bash", command="rm -rf build"))
    answer(
        t,
        "b1",
        REJECTED + "STOP what you are doing and wait for the user to tell you how to proceed.",
        "Error: rejected",
        is_error=True,
    )
    d = digest(write(t, tmp_path), cfg)
    assert [e.render() for e in d.entries if e.kind == "rejection"] == [
        '[2] user rejected Edit of src/config.py: "keep the YAML loader, ops edit it by hand"',
        "[3] user rejected Bash: rm -rf build",
    ]
    assert d.files_changed == []  # a rejected edit never happened


def test_a_prompt_queued_while_claude_worked_is_kept_once_however_it_was_delivered(cfg, tmp_path):
    said = "while it builds: never push to main directly, open a PR"
    t = (
        Transcript()
        .user("Build the release.")
        .assistant(tool("b1", "Bash", command="make release"))
    )
    queue(t, "enqueue", said)
    t.result("b1", "built")
    queue(t, "remove")
    record(
        t,
        "attachment",
        attachment={"type": "queued_command", "prompt": said, "commandMode": "prompt"},
    )
    queue(t, "enqueue", "and tag it v2")
    queue(t, "dequeue")
    t.user("and tag it v2")
    queue(t, "enqueue", "/permissions")  # a command, not words
    d = digest(write(t, tmp_path), cfg)
    assert [e.render() for e in d.entries] == [
        "[1] user: Build the release.",
        f"[2] user (queued): {said}",
        "[3] user (queued): and tag it v2",
    ]
    # the enqueue, and the attachment that repeated it
    assert d.entries[1].line == 3 and d.entries[1].also == (6,)
    # the enqueue, and the user message it became
    assert d.entries[2].line == 7 and d.entries[2].also == (9,)
    assert d.at_line(6) == d.at_line(3) == [d.entries[1]] and d.at_line(5) == []
    assert d.holding("NEVER push to main   directly") == [d.entries[1]]


def test_task_notifications_reminders_meta_and_interrupts_are_not_the_users_words(cfg, tmp_path):
    t = Transcript().user("Run the migration in the background.")
    t.user(
        "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n<summary>Background command "
        "finished</summary>\n</task-notification>"
    )
    record(
        t,
        "user",
        isMeta=True,
        message={"role": "user", "content": "Base directory for this skill: /x\n\nDo it."},
    )
    t.user("[Request interrupted by user for tool use]")
    t.user("<local-command-stdout>Compacted</local-command-stdout>")
    t.user(
        "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>"
    )
    t.user(
        "<command-name>/review</command-name>\n<command-message>review</command-message>\n"
        "<command-args>only the auth module</command-args>"
    )
    t.user(
        "Looks fine.<system-reminder>The TodoWrite tool hasn't been used recently.</system-reminder>"
    )
    d = digest(write(t, tmp_path), cfg)
    assert lines_of(d) == [
        "[1] user: Run the migration in the background.",
        "[2] user command: /review only the auth module",
        "[3] user: Looks fine.",
    ]


def test_a_failing_command_is_paired_with_the_change_and_the_run_that_passed(cfg, tmp_path):
    t = (
        Transcript()
        .user("Run the tests.")
        .assistant(tool("r1", "Bash", command=f"cd {PROJECT} && uv run pytest -x tests/test_db.py"))
        .result("r1", "E   ModuleNotFoundError: No module named 'psycopg'\n1 failed", is_error=True)
        .assistant(tool("r2", "Bash", command=f"cd {PROJECT} && uv run pytest -x tests/test_db.py"))
        .result("r2", "E   ModuleNotFoundError: No module named 'psycopg'\n1 failed", is_error=True)
        .assistant(
            text("The driver is missing: the project pins psycopg 3 in its extras."),
            tool(
                "w1", "Edit", file_path=f"{PROJECT}/pyproject.toml", old_string="a", new_string="b"
            ),
        )
        .result("w1", "The file has been updated.")
        .assistant(tool("r3", "Bash", command="uv sync --extra db"))
        .result("r3", "Installed 1 package")
        .assistant(tool("r4", "Bash", command="uv run pytest -x tests/test_db.py"))
        .result("r4", "3 passed")
    )
    d = digest(write(t, tmp_path), cfg)
    assert [e.render() for e in d.entries if e.kind in ("failed", "fixed")] == [
        "[2] failed: uv run pytest -x tests/test_db.py -> E ModuleNotFoundError: No module named 'psycopg'",
        "[4] fixed [2] by: Edit pyproject.toml; ran `uv sync --extra db`; passed: uv run pytest -x tests/test_db.py",
    ]
    fixed = d.entries[3]
    assert (fixed.line, fixed.end_line) == (3, 12)  # from the failure through the run that passed
    assert d.files_changed == ["pyproject.toml"]


def test_narration_and_status_chatter_are_dropped_and_reasons_kept():
    said = (
        "Perfect! Now let me check the store:\n"
        "All 84 tests pass.\n"
        "I'll keep the lock file because two hooks write at once.\n"
        "The store writes atomically; a crash leaves the old file.\n"
        "Let me run the linter.\n"
        "```python\n" + "x = 1\n" * 10 + "```"
    )
    assert prose(said) == (
        "I'll keep the lock file because two hooks write at once.\n"
        "The store writes atomically; a crash leaves the old file.\n[code, 10 lines]"
    )
    listed = (
        "🎉\n## Summary\n1. **Cache in SQLite** so restarts keep it. Now let me check it:\n"
        "- Let me use the test data instead:\n- Never write the lock file by hand.\n   - nested item\n"
        "Perfect! All tests pass.\n```sh\nuv sync --extra db\n```"
    )
    assert prose(listed) == (
        "## Summary\n1. **Cache in SQLite** so restarts keep it.\n- Never write the lock file by "
        "hand.\n   - nested item\n```sh\nuv sync --extra db\n```"
    )


def test_a_secret_is_redacted_wherever_it_was_said(cfg, tmp_path):
    key = "sk-ant-api03-" + "A" * 40
    t = (
        Transcript()
        .user(f"the staging key is {key}, use it for the smoke test")
        .assistant(tool("r1", "Bash", command=f"ANTHROPIC_API_KEY={key} make smoke"))
        .result("r1", f"auth failed for {key}", is_error=True)
    )
    d = digest(write(t, tmp_path), cfg)
    assert key not in d.text and "sk-ant" not in d.text
    assert d.text.count("[REDACTED:") == 3


def test_a_password_pasted_bare_when_the_assistant_asked_for_it_is_redacted(cfg, tmp_path):
    """A real session: "Can you paste the password here?" answered (queued, then delivered) with the password
    alone, which no pattern tells from a word; a short answer to another question stays as said."""
    pasted = "@@MrCheddy" + "Eddie99.55"
    t = (
        Transcript()
        .user("Hardcode the WiFi into the firmware.")
        .assistant(
            text("I need your WiFi password for the IoT network. Can you paste the password here?")
        )
    )
    queue(t, "enqueue", pasted)
    queue(t, "dequeue")
    t.user(pasted)
    t.assistant(text("Which firmware version should I flash?"))
    t.user("v0.9.5 please")
    d = digest(write(t, tmp_path), cfg)
    assert pasted not in d.text and "Cheddy" not in d.text
    assert "user (queued): [REDACTED:password]" in d.text
    assert "user: v0.9.5 please" in d.text


def test_control_characters_never_reach_the_digest(cfg, tmp_path):
    t = Transcript().user("colour \x1b[31mred\x1b[0m and a bell\x07 please")
    assert lines_of(digest(write(t, tmp_path), cfg)) == ["[1] user: colour red and a bell please"]


def test_a_long_session_is_cut_in_segments_at_turns_that_cover_each_byte_once(cfg, tmp_path):
    t = Transcript()
    for i in range(40):
        t.user(f"Turn {i}: " + "please look at the parser again " * 10)
        t.assistant(text(f"Report {i}: the parser skips blank lines since version {i}. " * 5))
    path = write(t, tmp_path)
    d = digest(path, cfg, max_chars=3000)
    assert len(d.segments) > 3
    assert [s.start for s in d.segments[1:]] == [s.end for s in d.segments[:-1]]
    assert d.segments[0].start == 0 and d.segments[-1].end == path.stat().st_size == d.end
    for s in d.segments:
        assert len(s.text) <= 3000
        assert s.entries[0].kind == "user"  # every segment starts a turn
        assert all(s.start <= e.offset < s.end for e in s.entries)
    assert [e.n for s in d.segments for e in s.entries] == list(range(1, 81))
    # A range read from where another ended digests the rest, numbering its own entries.
    half = d.segments[2].start
    rest = digest(
        path, cfg, (half, None), turn_base=d.segments[2].entries[0].turn - 1, max_chars=3000
    )
    first = d.segments[2].entries[0]
    assert (
        rest.entries[0].n,
        rest.entries[0].text,
        rest.entries[0].turn,
        rest.entries[0].line,
    ) == (1, first.text, first.turn, first.line)
    assert len(rest.entries) == 80 - first.n + 1


def test_a_fix_in_another_segment_says_what_failed(cfg, tmp_path):
    t = (
        Transcript()
        .user("Build it.")
        .assistant(tool("r1", "Bash", command="go build ./..."))
        .result(
            "r1", "internal/config/validation.go:376:15: undefined: ValidationError", is_error=True
        )
    )
    for i in range(6):  # one long turn: it is cut between its entries
        t.assistant(text(f"Finding {i}: the validation package moved in the refactor. " * 3))
    t.assistant(
        tool(
            "w1",
            "Edit",
            file_path=f"{PROJECT}/internal/config/validation.go",
            old_string="a",
            new_string="b",
        )
    ).result("w1", "ok")
    t.assistant(tool("r2", "Bash", command="go build ./...")).result("r2", "")
    d = digest(write(t, tmp_path), cfg, max_chars=1000)
    assert (
        len(d.segments) > 1
        and d.entries[1].kind == "failed"
        and d.entries[1] not in d.segments[-1].entries
    )
    assert d.segments[-1].text.splitlines()[-2] == (
        "[9] fixed [2] (it failed with: internal/config/validation.go:376:15: undefined: ValidationError) by: Edit "
        "internal/config/validation.go; passed: go build ./..."
    )
    # in one segment, [2] says it
    assert "(it failed with" not in digest(write(t, tmp_path), cfg).text


def test_a_run_that_passes_turns_later_is_no_fix_and_a_banner_is_not_the_error(cfg, tmp_path):
    banner = (
        "*" * 40
        + "\nAUTHORIZED ACCESS ONLY\n"
        + "*" * 40
        + "\nbash: line 1: docker: command not found"
    )
    t = (
        Transcript()
        .user("Deploy.")
        .assistant(tool("r1", "Bash", command="ssh prod 'docker ps'"))
        .result("r1", banner, is_error=True)
    )
    for i in range(3):
        t.user(f"Something else {i}, unrelated to the deploy.")
        t.assistant(tool(f"w{i}", "Write", file_path=f"{PROJECT}/notes{i}.md", content="x")).result(
            f"w{i}", "ok"
        )
    t.assistant(tool("r2", "Bash", command="ssh prod 'docker ps'")).result("r2", "CONTAINER ID")
    d = digest(write(t, tmp_path), cfg)
    assert [e.render() for e in d.entries if e.kind in ("failed", "fixed")] == [
        "[2] failed: ssh prod 'docker ps' -> bash: line 1: docker: command not found"
    ]


def test_one_entry_longer_than_the_bound_is_cut_to_fit(cfg, tmp_path):
    t = (
        Transcript()
        .user("Here is the log:\n" + "line of a long pasted log\n" * 400)
        .user("Thanks, fix it.")
    )
    d = digest(write(t, tmp_path), cfg, max_chars=600)
    assert all(len(s.text) <= 600 for s in d.segments) and len(d.segments) == 2
    assert (
        d.segments[0].text.startswith("[1] user: Here is the log:")
        and " […] " in d.segments[0].text
    )


def test_files_changed_are_project_relative_writes_that_succeeded(cfg, tmp_path):
    t = (
        Transcript()
        .user("Write the docs.")
        .assistant(tool("w1", "Write", file_path=f"{PROJECT}/docs/a.md", content="x"))
        .result("w1", "ok")
        .assistant(tool("w2", "Write", file_path="/tmp/scratch.md", content="x"))
        .result("w2", "ok")
        .assistant(tool("w3", "Edit", file_path=f"{PROJECT}/b.py", old_string="a", new_string="b"))
        .result(
            "w3",
            "<tool_use_error>String to replace not found in file.</tool_use_error>",
            is_error=True,
        )
        .assistant(
            tool("w4", "Edit", file_path=f"{PROJECT}/docs/a.md", old_string="a", new_string="b")
        )
        .result("w4", "ok")
    )
    d = digest(write(t, tmp_path), cfg)
    assert d.files_changed == ["docs/a.md"]
    assert d.segments[0].text.endswith("files changed here: docs/a.md")


def test_a_subagents_user_is_its_parent(cfg, tmp_path):
    t = Transcript().user("Find every caller of save() and report them.")
    d = digest(write(t, tmp_path, "agent-a1b2.jsonl"), cfg)
    assert lines_of(d) == ["[1] parent: Find every caller of save() and report them."]


def test_an_open_file_is_read_from_its_descriptor_and_left_open(cfg, tmp_path):
    path = write(Transcript().user("Hello there, start the server."), tmp_path)
    with open(path, "rb") as f:
        d = digest(f, cfg)
        assert not f.closed
    assert lines_of(d) == ["[1] user: Hello there, start the server."]


def test_odd_records_are_skipped_never_fatal(cfg, tmp_path):
    t = Transcript().user("Start.")
    queue(t, "enqueue", None)
    t.records.append(
        {"type": "queue-operation", "operation": "enqueue", "content": ["not", "text"]}
    )
    record(t, "attachment", attachment={"type": "queued_command", "prompt": {"text": "x"}})
    record(t, "attachment", attachment="queued_command")
    answer(t, "nobody-called-me", "Your questions have been answered: nothing", {"answers": "none"})
    t.assistant(tool("q1", "AskUserQuestion", questions="not a list"))
    answer(
        t, "q1", 'Your questions have been answered: "Go on?"="yes, but keep the v1 API"', ["odd"]
    )
    t.assistant(tool("p1", "ExitPlanMode"))
    answer(t, "p1", "User has approved your plan.", None)
    path = write(t, tmp_path)
    with open(path, "ab") as f:
        f.write(b'{"type": "user", "message": {"content": "not finished')
    d = digest(path, cfg)
    assert lines_of(d) == [
        "[1] user: Start.",
        '[2] user answered: "Go on?"="yes, but keep the v1 API"',
    ]
    assert d.end < path.stat().st_size  # the unfinished record waits for the next read


# -- the real transcripts ------------------------------------------------------------


def shared_files() -> list[Path]:
    return sorted(
        p
        for folder in ("transcripts", "transcripts-more")
        for p in (SHARED / folder).rglob("*.jsonl")
    )


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


@needs_shared
def test_every_shared_transcript_digests_within_its_bound_and_keeps_the_real_prompts(cfg):
    files = shared_files()
    assert files
    for path in files:
        d = digest(str(path), cfg, max_chars=20000)
        assert d.end == path.stat().st_size or d.bad_lines, path
        assert all(len(s.text) <= 20000 for s in d.segments), path
        assert [e.n for e in d.entries] == list(range(1, len(d.entries) + 1))
        assert "<task-notification>" not in d.text and "<system-reminder>" not in d.text, path
    # A sample session: every prompt a person typed is in the digest, word for word...
    sample = (
        SHARED
        / "transcripts-more/-Users-jh-Development-Shrooms/04c2be8b-aa6b-4b11-b2f4-26623c099ab1.jsonl"
    )
    if not sample.exists():
        pytest.skip(f"the sample session is not in {SHARED}")
    d = digest(str(sample), cfg, max_chars=20000)
    whole = _norm(d.text)
    prompts = [
        e.text
        for e in TranscriptReader(str(sample))
        if e.kind == "user" and not e.text.startswith(("<task-notification>", "[Image #"))
    ]
    assert len(prompts) > 20
    missing = [p for p in prompts if _norm(p)[:200] not in whole]
    # ...but the three that hold a password (pasted when the assistant asked for it, or a router's login),
    # which reach it redacted
    assert sorted(p[:4] for p in missing) == ["@@Mr", "Buks", "i ha"]
    assert "Cheddy" not in d.text and "Gizmo" not in d.text
