"""The plugin as Claude Code 2.1 runs it (issue 24 §6): its command is a skill (`/memcurate:memcurate`), its
permission rules use the current syntax, its hook matchers name only tools that exist, compaction's SubagentStop
for an agent transcript never written is no error, and SessionEnd fits the 1.5 s budget a plugin's SessionEnd
hooks share (a long untriaged tail goes to a background pass that stages it all the same)."""

from __future__ import annotations

import json
import os
import re
import select
from pathlib import Path

from conftest import ROOT, claude_transcripts, run_hook
from synthetic import Transcript, text

from memcurate.curator import hook_entries

SESSION = "0b5e6a34-1111-4222-8333-444455556666"
LEGACY_RULE = re.compile(r"\w+\([^)]*:\*\)")  # `Bash(memcurate list:*)`: the deprecated prefix form


def front_matter(path: Path) -> tuple[dict, str]:
    front, body = re.fullmatch(r"---\n(.*?)\n---\n(.*)", path.read_text(), re.S).groups()
    return dict(line.split(": ", 1) for line in front.splitlines()), body


def log_lines(project: Path) -> list[str]:
    p = project / ".memcurate" / "log" / "memcurate.log"
    return p.read_text().splitlines() if p.exists() else []


def staged_ranges(project: Path) -> list[list[int]]:
    d = project / ".memcurate" / "staging"
    docs = [
        json.loads((d / n / "triage.json").read_text())
        for n in sorted(os.listdir(d))
        if not n.startswith(".")
    ]
    return [doc["source"]["byte_range"] for doc in docs]


def call(event: str, transcript: Path, project: Path, **extra):
    doc = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": event,
    }
    p = run_hook({**doc, **extra}, cwd=project)
    assert (p.returncode, p.stdout, p.stderr) == (0, b"", b""), p.stderr
    return p


def session(words: int = 0) -> Transcript:
    """A session that triggers a decision; `words` more words of the person's at the end."""
    t = (
        Transcript(stamp="2025-07-14T22:59")
        .user(
            "We decided to go with postgres because it is simpler to operate than the alternatives."
        )
        .assistant(text("Understood: we will use postgres, since it keeps the deployment simpler."))
    )
    if words:
        t.user(" ".join(f"word{i % 977}" for i in range(words)))
        t.assistant(text("Noted."))
    return t


# -- the skill ----------------------------------------------------------------------------------------------


def test_the_command_is_a_skill_named_for_its_folder():
    assert not (ROOT / "commands").exists(), "commands/ is the legacy form of skills/"
    fields, body = front_matter(ROOT / "skills" / "memcurate" / "SKILL.md")
    assert fields["name"] == "memcurate" and fields["description"]
    # the person's list, not Claude's to run on its own
    assert fields["disable-model-invocation"] == "true"
    assert fields["allowed-tools"] == "Bash(memcurate list *)"
    assert "!`memcurate list`" in body


def test_no_permission_rule_uses_the_deprecated_suffix():
    shipped = [
        *ROOT.joinpath("skills").rglob("*.md"),
        *ROOT.joinpath("commands").rglob("*.md"),
        ROOT / "hooks" / "hooks.json",
        *ROOT.joinpath("curator").rglob("*.py"),
        *ROOT.joinpath("hooks").rglob("*.py"),
    ]
    found = {str(p.relative_to(ROOT)): LEGACY_RULE.findall(p.read_text()) for p in shipped}
    assert {k: v for k, v in found.items() if v} == {}


# -- the hook matchers --------------------------------------------------------------------------------------


def test_hook_matchers_name_only_tools_claude_code_has():
    tools = {t for _e, matcher, _t in hook_entries.ENTRIES if matcher for t in matcher.split("|")}
    assert tools == {"Write", "Edit", "Bash"}
    plugin = json.loads((ROOT / "hooks" / "hooks.json").read_text())
    assert "MultiEdit" not in json.dumps(plugin) and "MultiEdit" not in json.dumps(
        hook_entries.groups("x")
    )


# -- SubagentStop after a compaction -----------------------------------------------------------------------


def test_subagent_stop_for_an_agent_transcript_never_written_is_a_quiet_note(project):
    folder = claude_transcripts()
    main = session().write(folder / f"{SESSION}.jsonl")
    never = folder / SESSION / "subagents" / "agent-acompact1.jsonl"
    call("SubagentStop", main, project, agent_transcript_path=str(never), stop_hook_active=False)
    [line] = log_lines(project)
    assert "SubagentStop:" in line and "nothing to triage" in line
    assert not re.search(r"not found|error|unreadable", line, re.I)
    # the main transcript waits for its own Stop
    assert not (project / ".memcurate" / "offsets").exists()


# -- SessionEnd within the plugin's 1.5 s budget ------------------------------------------------------------


def test_session_end_triages_a_turns_bytes_itself(project):
    path = session().write(claude_transcripts() / "s.jsonl")
    call("SessionEnd", path, project, reason="exit")
    [line] = log_lines(project)
    assert "SessionEnd: staged bytes 0.." in line and "background" not in line
    assert staged_ranges(project) == [[0, path.stat().st_size]]


def wait_for_exit(pid: int, seconds: float = 60) -> None:
    """Block until the process `pid` (not this one's child) has exited: a pidfd is readable then."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        assert select.select([fd], [], [], seconds)[0], f"the background pass {pid} did not end"
    finally:
        os.close(fd)


def test_session_end_hands_a_long_untriaged_tail_to_a_background_pass(project):
    path = session(words=120_000).write(claude_transcripts() / "s.jsonl")
    size = path.stat().st_size
    assert size > 600_000
    call("SessionEnd", path, project, reason="exit")
    [line] = log_lines(project)
    assert f"{size} bytes not triaged yet" in line and "handed to a background pass" in line
    wait_for_exit(int(re.search(r"\(pid (\d+)\)", line).group(1)))
    done = log_lines(project)[1:]
    assert len(done) == 1 and f"SessionEnd: staged bytes 0..{size}" in done[0], done
    assert staged_ranges(project) == [[0, size]]
    # nothing left: the next pass is an ordinary one
    call("SessionEnd", path, project, reason="exit")
    assert "background" not in log_lines(project)[-1]
