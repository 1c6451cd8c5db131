"""CLI friction a new user hits (issue 26): a pipe closed early, uninstall after an install that created
the settings file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import claude_transcripts, run_cli
from test_proposals import claude, proj  # noqa: F401 (fixtures)

from memcurate.curator import install as installer


def _memcurate(*args: str, cwd, stdout) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from memcurate.curator.cli import main; sys.exit(main())",
            *args,
        ],
        cwd=cwd,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )


def test_a_reader_that_leaves_early_gets_no_traceback_and_no_internal_error(tmp_path):
    (tmp_path / ".git").mkdir()
    read, write = os.pipe()
    os.close(read)  # `| head -1` that already left: every write to the pipe fails with EPIPE
    try:
        done = _memcurate("status", cwd=tmp_path, stdout=write)
    finally:
        os.close(write)
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 141  # as a Unix tool killed by SIGPIPE


def test_uninstall_after_an_install_that_created_the_file_says_it_removed_it(tmp_path):
    (tmp_path / ".git").mkdir()
    installer.install(tmp_path, "local")
    settings = tmp_path / ".claude" / "settings.local.json"
    assert settings.exists()
    done = _memcurate("uninstall", "--json", cwd=tmp_path, stdout=subprocess.PIPE)
    report = json.loads(done.stdout)
    assert not settings.exists()
    assert report["deleted"] is True and report["changed"] is True, report
    said = _memcurate("uninstall", cwd=tmp_path, stdout=subprocess.PIPE).stdout
    assert "nothing to remove" in said  # the second time only


def test_uninstall_in_words_says_the_file_went(tmp_path):
    (tmp_path / ".git").mkdir()
    installer.install(tmp_path, "local")
    said = _memcurate("uninstall", cwd=tmp_path, stdout=subprocess.PIPE).stdout
    assert "nothing to remove" not in said and "removed the file" in said, said


@pytest.fixture
def transcripts() -> Path:
    return claude_transcripts()


def test_triage_takes_a_claude_code_project_folder(project, transcripts):
    from test_cli import session

    a = session("postgres").write(transcripts / "a.jsonl")
    b = session("kafka", stamp="2025-07-15T09:00").write(transcripts / "b.jsonl")
    os.utime(a, (1_700_000_000, 1_700_000_000))  # a is the older session: triaged first
    (transcripts / "a").mkdir()  # a session's own folder (subagents): not entered
    (transcripts / "notes.txt").write_text("not a transcript\n")
    p = run_cli("triage", str(transcripts), "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    assert [t["transcript"] for t in json.loads(p.stdout)["triages"]] == [str(a), str(b)]


def test_triage_of_a_folder_without_transcripts_says_so(project, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    p = run_cli("triage", str(empty), cwd=project)
    assert p.returncode == 1 and "no .jsonl transcript in this folder" in p.stderr, p.stderr


def test_project_option_resolves_like_cd(project, transcripts):
    from test_cli import session

    sub = project / "src" / "app"
    sub.mkdir(parents=True)
    a = session("postgres").write(transcripts / "a.jsonl")
    assert run_cli("triage", str(a), cwd=project).returncode == 0
    by_option = json.loads(run_cli("status", "--json", "--project", str(sub), cwd=project).stdout)
    by_cd = json.loads(run_cli("status", "--json", cwd=sub).stdout)
    assert by_option["project"] == by_cd["project"] == str(project)
    assert not (sub / ".memcurate").exists()  # no second data dir with an empty queue


def test_help_says_bare_memcurate_opens_the_tui_and_what_auto_approve_saves(project):
    said = run_cli("--help", cwd=project).stdout
    flat = " ".join(said.split())
    assert "Without a command, `memcurate` opens the live review TUI" in flat
    assert "save the drafts at or above the confidence gate, hold the rest" in flat
    assert "save everything pending" not in flat


@pytest.mark.parametrize(
    "command",
    [
        "triage",
        "status",
        "install",
        "uninstall",
        "demo",
        "check",
        "tidy",
        "list",
        "show",
        "approve",
        "reject",
    ],
)
def test_each_command_help_has_a_description_and_an_example(project, command):
    said = run_cli(command, "--help", cwd=project).stdout
    usage, description = said.split("\n\n")[:2]
    assert usage.startswith(f"usage: memcurate {command}")
    assert description.strip() and not description.startswith(("positional", "options")), said
    assert "examples:\n  memcurate " in said or "examples:\nClaude Code runs it" in said, said


def test_an_unknown_option_is_reported_by_its_command(project):
    p = run_cli("list", "--bogus", cwd=project)
    assert p.returncode == 2
    assert (
        "usage: memcurate list" in p.stderr
        and "memcurate list: error: unrecognized arguments: --bogus" in p.stderr
    ), p.stderr


def test_auto_approve_says_what_waits_that_it_never_saves(claude, capsys):  # noqa: F811 (the fixture)
    from test_proposals import cli, cli_json

    code, doc = cli_json(capsys, "--auto-approve", "--project", claude["project"])
    assert doc["waiting"] == {"proposals": 1, "claude_writes": 0}, doc.get("waiting")
    code, out, _ = cli(capsys, "--auto-approve", "--project", claude["project"])
    assert (
        "waiting   1 proposal(s) of changes to saved memories for your review, never saved headless"
        in out
    )


def test_the_demo_removes_its_own_folders_of_earlier_days_and_nothing_else(tmp_path):
    from memcurate.curator import demo

    old = demo.make_project(str(tmp_path / "memcurate-demo-old"))["root"]
    fresh = demo.make_project(str(tmp_path / "memcurate-demo-fresh"))["root"]
    stranger = tmp_path / "memcurate-demo-stranger"  # the name, no mark: not ours
    stranger.mkdir()
    (tmp_path / "memcurate-demo-link").symlink_to(old)
    day_ago = os.stat(os.path.join(old, demo.MARK)).st_mtime - 25 * 3600
    os.utime(os.path.join(old, demo.MARK), (day_ago, day_ago))
    os.utime(stranger, (day_ago, day_ago))
    assert demo.tidy_old(str(tmp_path)) == [old]
    assert not os.path.exists(old) and os.path.isdir(fresh) and stranger.is_dir()
    assert os.path.islink(tmp_path / "memcurate-demo-link")


def test_a_project_without_git_is_not_called_a_repository(tmp_path):
    from memcurate.curator import config
    from memcurate.curator.util.paths import data_dir, resolve_memory_root

    folder = tmp_path / "plain"
    folder.mkdir()
    data = data_dir(folder)
    said = resolve_memory_root(folder, config.load(folder, data), data)["from"]
    assert said == f"derived from the folder {folder} (not a git repository)", said


def test_the_archive_files_header_says_where_the_memories_are():
    from memcurate.curator.memory.memory_md import IndexLine
    from memcurate.curator.memory.memory_md.archive import archive_add

    head = archive_add(
        None, "decision", [IndexLine("use-jwt", "decision", "Use JWT", "stateless")]
    ).splitlines()[0]
    assert (
        "unchanged in decision/" in head
        and "archived memories, their files in .archive/decision/" in head
    ), head
    assert "the memory files themselves are unchanged" not in head
