"""The transcript reader: the real format, streaming from offsets, bad lines skipped and counted."""

from __future__ import annotations

import json
import os

import pytest
from conftest import needs_shared, shared, shared_transcripts

from memcurate.curator.capture.transcript import TranscriptReader, read_entries

SAMPLE = "-Users-dain-workspace-claude-code-log-sample/"


def rec(kind: str, **fields) -> dict:
    base = {
        "type": kind,
        "sessionId": "s-1",
        "uuid": fields.pop("uuid", "u"),
        "timestamp": "2026-11-20T10:00:00Z",
    }
    return {**base, **fields}


def user(text, **kw) -> dict:
    return rec("user", message={"role": "user", "content": text}, **kw)


def assistant(mid: str, *blocks) -> list[dict]:
    return [
        rec("assistant", message={"id": mid, "role": "assistant", "content": [b]}) for b in blocks
    ]


def result(tool_id: str, text: str, error: bool = False) -> dict:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": text, "is_error": error}
    return rec("user", message={"role": "user", "content": [block]}, toolUseResult={"stdout": text})


def write(path, records) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


@needs_shared
def test_every_shared_transcript_reads_without_error():
    files = shared_transcripts()
    assert len(files) >= 30
    for path in files:
        entries, stats = read_entries(path)
        assert stats.bad == 0, (path, stats.bad_lines)
        assert stats.end == os.path.getsize(path)  # every byte consumed


@needs_shared
def test_real_session_records_by_kind_and_reply_grouping():
    entries, stats = read_entries(shared(SAMPLE + "0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl"))
    assert dict(stats.records) == {"user": 28, "assistant": 32, "system": 8}
    # 32 assistant records are 15 replies: the blocks of one reply share message.id.
    assert stats.entries["assistant"] == 15
    assert stats.entries["tool_result"] == 14
    assert stats.entries["interrupt"] == 3
    assert stats.entries["command"] == 3 and stats.entries["command_output"] == 3
    assert stats.entries["meta"] == 1  # the "Caveat:" isMeta record
    assert stats.user_turns == 4
    replies = [e for e in entries if e.kind == "assistant"]
    assert len({e.message_id for e in replies}) == 15
    first = replies[0]
    assert first.text.startswith("I'll help you fix both issues")
    assert [t.name for t in first.tool_uses] == ["TodoWrite"]
    # Rejected tool uses are errors, told apart from real failures.
    rejected = [e for e in entries if e.kind == "tool_result" and e.rejected]
    assert len(rejected) == 3 and all(e.is_error for e in rejected)
    # Turn numbers count real user prompts only.
    assert [e.turn for e in entries if e.kind == "user"] == [1, 2, 3, 4]


@needs_shared
def test_system_reminders_are_stripped_from_tool_results():
    entries, _ = read_entries(shared(SAMPLE + "0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl"))
    raw = shared(SAMPLE + "0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl").read_text()
    assert "<system-reminder>" in raw
    assert not any("<system-reminder>" in e.text for e in entries)


@needs_shared
def test_bookkeeping_records_carry_no_conversation():
    _, stats = read_entries(
        shared("-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl")
    )
    bookkeeping = sum(
        stats.records[k]
        for k in ("permission-mode", "attachment", "file-history-snapshot", "last-prompt", "system")
    )
    assert stats.entries["bookkeeping"] == bookkeeping == 73
    assert stats.user_turns == 2


@needs_shared
def test_subagent_transcript_and_summary_only_file():
    _, stats = read_entries(
        shared(
            "-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl"
        )
    )
    assert (
        stats.entries["assistant"] == 10
        and stats.entries["tool_result"] == 24
        and stats.user_turns == 1
    )
    entries, stats = read_entries(shared(SAMPLE + "4e27c414-a885-46a0-b5c8-d58e1417377d.jsonl"))
    assert [e.kind for e in entries] == ["bookkeeping"] and stats.user_turns == 0


def test_reading_from_an_offset_continues_turn_numbers(tmp_path):
    path = tmp_path / "t.jsonl"
    records = [
        user("first question about the parser"),
        *assistant("m1", {"type": "text", "text": "Answer one."}),
        user("second question about the cache"),
        *assistant("m2", {"type": "text", "text": "Answer two."}),
    ]
    write(path, records)
    whole, stats = read_entries(path)
    assert [e.turn for e in whole] == [1, 1, 2, 2]
    cut = whole[2].start  # the second prompt
    rest, rest_stats = read_entries(path, cut, turn_base=1)
    assert [(e.kind, e.turn, e.text) for e in rest] == [(e.kind, e.turn, e.text) for e in whole[2:]]
    assert rest_stats.end == stats.end == os.path.getsize(path)


def test_tool_results_arriving_inside_a_reply_follow_it(tmp_path):
    path = tmp_path / "t.jsonl"
    records = [
        user("run the tests please"),
        *assistant(
            "m1",
            {"type": "text", "text": "Running them."},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}},
        ),
        result("t1", "1 failed", error=True),
        *assistant(
            "m1",
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "pytest -x"}},
        ),
        result("t2", "ok"),
    ]
    write(path, records)
    entries, _ = read_entries(path)
    assert [e.kind for e in entries] == ["user", "assistant", "tool_result", "tool_result"]
    reply = entries[1]
    assert [(t.name, t.target) for t in reply.tool_uses] == [
        ("Bash", "pytest"),
        ("Bash", "pytest -x"),
    ]
    assert entries[2].is_error and not entries[3].is_error


def test_partial_last_line_waits_for_the_rest(tmp_path):
    path = tmp_path / "t.jsonl"
    line1 = json.dumps(user("a complete first prompt")) + "\n"
    line2 = json.dumps(user("a second prompt being written"))
    path.write_text(line1 + line2[:20])
    entries, stats = read_entries(path)
    assert len(entries) == 1 and stats.end == len(line1.encode())
    path.write_text(line1 + line2)  # finished, even without a trailing newline
    entries, stats = read_entries(path)
    assert len(entries) == 2 and stats.end == os.path.getsize(path)


@pytest.mark.parametrize(
    "line, reason",
    [
        (b"{not json\n", "not_json"),
        (b"\xff\xfe\xfd garbage\n", "not_utf8"),
        (b"[1, 2, 3]\n", "not_object"),
        (b"42\n", "not_object"),
        (b'{"no": "type"}\n', "no_type"),
        (b'{"type": "assistant", "message": "a string"}\n', "bad_shape"),
        (b'{"type": "user", "message": {"content": 7}}\n', "bad_shape"),
    ],
)
def test_bad_lines_are_skipped_and_counted(tmp_path, line, reason):
    path = tmp_path / "t.jsonl"
    good = (json.dumps(user("a fine prompt here")) + "\n").encode()
    path.write_bytes(good + line + good)
    entries, stats = read_entries(path)
    assert [e.kind for e in entries] == ["user", "user"]
    assert stats.bad_lines == {reason: 1}
    assert stats.end == os.path.getsize(path)


def test_overlong_line_is_skipped_without_loading_it(tmp_path):
    path = tmp_path / "t.jsonl"
    good = (json.dumps(user("before the long line")) + "\n").encode()
    with open(path, "wb") as f:
        f.write(good)
        f.write(b'{"type": "user", "message": {"content": "' + b"x" * 3_000_000 + b'"}}\n')
        f.write(good)
    reader = TranscriptReader(path, max_line_bytes=1_000_000)
    entries = list(reader)
    assert len(entries) == 2
    assert reader.stats.bad_lines == {"too_long": 1}
    assert reader.stats.end == os.path.getsize(path)


def _long(head: str, tail: str, lines: int) -> str:
    middle = "\n".join(f"middle line {i} of a pasted log" for i in range(lines))
    return f"{head}\n{middle}\n{tail}"


def test_a_huge_message_is_read_from_its_ends_and_the_stats_say_so(tmp_path):
    """Past max_message_chars a message keeps its head and tail: what its middle says is not held, and the
    stats name the message, its size and what was kept. A reply cut across several records counts as one."""
    path = tmp_path / "t.jsonl"
    prompt = _long("HEAD: we decided on postgres.", "TAIL: deploys wait for Monday.", 5000)
    blocks = [{"type": "text", "text": f"Part {i}: " + _long("", "", 100)} for i in range(20)]
    output = "<local-command-stdout>" + _long("", "", 5000) + "</local-command-stdout>"
    write(
        path,
        [
            user(prompt),
            *assistant("m1", *blocks),
            user("and a short one stays whole"),
            user(output),
        ],
    )
    entries, stats = read_entries(path, max_message_chars=2000)
    u, a, short, out = entries
    assert u.text.startswith("HEAD: we decided on postgres.\nmiddle line 0 ")
    assert u.text.endswith("\nmiddle line 4999 of a pasted log\nTAIL: deploys wait for Monday.")
    assert a.text.startswith("Part 0: \nmiddle line 0 ") and a.text.endswith(
        "middle line 99 of a pasted log"
    )
    for e in (u, a):
        assert len(e.text) <= 2100
        assert "middle line 2500 " not in e.text and "Part 10:" not in e.text
        assert "characters not scored …]" in e.text
    assert short.text == "and a short one stays whole"
    # bounded, and never scored: not noted
    assert out.kind == "command_output" and len(out.text) <= 2100
    assert [(c["turn"], c["kind"], c["kept"]) for c in stats.cut] == [
        (1, "user", 1000),
        (1, "assistant", 1000),
    ]
    # bytes of what was never decoded
    assert stats.cut[0]["chars"] == pytest.approx(len(prompt), rel=0.05)
    assert stats.cut[0]["bytes"] == u.end - u.start and stats.cut[1]["bytes"] == a.end - a.start
    assert (
        stats.as_dict()["cut_messages"] == stats.cut and stats.as_dict()["cut_message_count"] == 2
    )

    # A nonsensical bound still reads every record (only the message texts are cut).
    entries, _ = read_entries(path, max_message_chars=0)
    assert [e.kind for e in entries] == ["user", "assistant", "user", "command_output"]
    assert entries[2].text == "and a short one stays whole"

    # Within the limit, nothing changes.
    entries, stats = read_entries(path, max_message_chars=len(prompt) + 10_000)
    assert entries[0].text == prompt and stats.cut == []


KEY_LINES = [f"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC{i:03d}xyz" for i in range(40)]
KEY = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(KEY_LINES) + "\n-----END RSA PRIVATE KEY-----"
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2


@pytest.mark.parametrize(
    "where", ["token-at-head-cut", "token-at-tail-cut", "key-at-head-cut", "key-at-tail-cut"]
)
@pytest.mark.parametrize("size", [10_000, 100_000], ids=["decoded", "cut-before-decoding"])
def test_a_cut_never_keeps_part_of_a_secret(tmp_path, where, size):
    """The head and tail of a huge message are cut at white space, and a tail never starts inside a key
    block, so redaction still recognises every secret they hold: none survives even in part. Either
    way: a line past 8 x max_message_chars has its huge strings cut before it is decoded."""
    from memcurate.curator.util.redact import redact_text

    secret, pad = (TOKEN, 490) if where.startswith("token") else (KEY, 200)
    words = "word " * (size // 5)  # the window keeps 1,000 characters at each end
    if where.endswith("head-cut"):  # the secret starts in the head and goes on past it
        text = "x " * pad + secret + " " + words
    else:  # the secret starts before the tail and ends in it
        text = words + secret + " " + "y " * pad
    path = tmp_path / "t.jsonl"
    write(path, [user(text)])
    (entry,), stats = read_entries(path, max_message_chars=2000)
    assert stats.cut and "\x00" not in entry.text
    assert ("about " in entry.text) == (size > 16_000)  # the gap was counted unread
    kept = redact_text(entry.text)
    for part in (TOKEN[:12], TOKEN[-12:], *(line[-10:] for line in KEY_LINES)):
        assert part not in kept, (part, kept[:2000])


PROSE = "word " * 40 + 'she said "ok" → fine 🚀\n'
CODE = 'x = "a\\\\b" + "\\"c\\"" → 🚀\n'


@pytest.mark.parametrize("unit", [PROSE, CODE], ids=["prose-few-quotes", "code-many-quotes"])
def test_a_huge_line_is_cut_before_decoding_and_keeps_its_ends_exactly(tmp_path, unit):
    """A line past 8 x max_message_chars has its huge strings cut in its bytes, never decoded whole: the
    message's head and tail still come out exactly as written (quotes, backslashes, emoji and all)."""
    text = "HEAD " + unit * 2000 + "TAIL"
    path = tmp_path / "t.jsonl"
    write(path, [user(text)])
    (entry,), stats = read_entries(path, max_message_chars=2000)
    assert stats.cut and stats.cut[0]["bytes"] > 16_000
    first, _, rest = entry.text.partition("\n\n[… about ")
    last = rest.partition(" characters not scored …]\n\n")[2]
    assert text.startswith(first) and first.startswith("HEAD ") and len(first) > 900
    assert text.endswith(last) and last.endswith("TAIL") and len(last) > 600


def test_a_huge_tool_output_keeps_its_head_and_no_trace_of_the_cut(tmp_path):
    path = tmp_path / "t.jsonl"
    output = "Error: the build failed\n" + "line of build output\n" * 20_000
    write(
        path,
        [
            *assistant(
                "m1", {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}
            ),
            result("t1", output, error=True),
        ],
    )
    (_, res), stats = read_entries(path, max_message_chars=2000)
    assert res.is_error and res.text.startswith("Error: the build failed\nline of build output\n")
    assert res.text.isprintable() or res.text.replace("\n", "").isprintable()
    assert stats.cut == []  # tool output is never scored: nothing to report


def test_user_text_kinds(tmp_path):
    path = tmp_path / "t.jsonl"
    records = [
        user(
            "Caveat: The messages below were generated by the user while running local commands.",
            isMeta=True,
        ),
        user("<command-name>/clear</command-name>\n<command-message>clear</command-message>"),
        user("<local-command-stdout></local-command-stdout>"),
        user("<bash-input>uv run pytest</bash-input>"),
        user("<bash-stdout>1 failed</bash-stdout>"),
        user([{"type": "text", "text": "[Request interrupted by user for tool use]"}]),
        user("<system-reminder>injected</system-reminder>Please keep functions small"),
        rec("summary", summary="A summary", leafUuid="x"),
    ]
    write(path, records)
    entries, stats = read_entries(path)
    assert [e.kind for e in entries] == [
        "meta",
        "command",
        "command_output",
        "command",
        "command_output",
        "interrupt",
        "user",
        "bookkeeping",
    ]
    assert entries[6].text == "Please keep functions small"
    assert stats.user_turns == 1


def test_control_characters_and_ansi_are_stripped(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path, [user("make it \x1b[31mred\x1b[0m\x07 and \u202eevil\u202c please")])
    entries, _ = read_entries(path)
    assert entries[0].text == "make it red and evil please"


@needs_shared
def test_skipping_other_tools_output_changes_nothing_else():
    """With outputs_of, big results of other tools are not decoded; every other entry is the same."""
    skipped_total = 0
    for path in shared_transcripts():
        full, full_stats = read_entries(path)
        lean, lean_stats = read_entries(path, outputs_of={"Bash"})
        key = lambda e: (e.kind, e.turn, e.start, e.end, e.tool_use_id)  # noqa: E731
        assert [key(e) for e in lean] == [key(e) for e in full], path
        for a, b in zip(full, lean, strict=True):
            # a result read without its output (undecoded, or looked at undecoded) has no text
            if a.kind != "tool_result" or b.text:
                assert (a.text, a.is_error, [t.name for t in a.tool_uses]) == (
                    b.text,
                    b.is_error,
                    [t.name for t in b.tool_uses],
                ), path
            elif b.timestamp:  # (the undecoded ones have none: their head only is looked at)
                assert (a.is_error, a.rejected, a.timestamp, a.session_id) == (
                    b.is_error,
                    b.rejected,
                    b.timestamp,
                    b.session_id,
                ), path
        assert lean_stats.user_turns == full_stats.user_turns and lean_stats.end == full_stats.end
        skipped_total += lean_stats.skipped
    assert skipped_total > 50  # it does skip: most bytes are file contents that Reads returned


@pytest.mark.parametrize(
    "raw, cleaned",
    [
        ("plain text\nwith\ttabs", "plain text\nwith\ttabs"),
        ("line\u2028separator", "lineseparator"),
        ("bell\x07 and del\x7f", "bell and del"),
        ("crlf\r\nline", "crlf\nline"),
        ("\x1b]8;;http://evil\x07link\x1b]8;;\x07", "link"),
    ],
)
def test_clean(raw, cleaned):
    from memcurate.curator.util.textsafe import clean

    assert clean(raw) == cleaned
