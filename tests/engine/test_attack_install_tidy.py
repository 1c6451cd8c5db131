"""What the attack run found in install, uninstall and tidy, through the real CLI: a read-only settings file
written anyway, an older install's memcurate entries lost by uninstall, `.claude/settings.local.json` left for
git to commit, and two memories that disagree in words merged into one that says both."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli
from test_claude_cli import envelope, fake  # noqa: F401 (fixture: the fake claude on the PATH)
from test_tidy import doc, files_of, save

from memcurate.curator.engine import Engine
from memcurate.curator.memory import memfile
from memcurate.curator.proposals import actions as proposal_actions

OLDER = "/old/venv/bin/memcurate hook"
SETTINGS = """{
  "model": "opus",
  "hooks": {
    "Stop": [
      {"hooks": [{"type": "command", "command": "notify-send done"}]},
      {"hooks": [{"type": "command", "command": "%s", "timeout": 30}]}
    ],
    "PreToolUse": [
      {"matcher": "Write|Edit|MultiEdit", "hooks": [{"type": "command", "command": "%s", "timeout": 10}]}
    ]
  }
}
""" % (OLDER, OLDER)


def local(project: Path) -> Path:
    return project / ".claude" / "settings.local.json"


def put(path: Path, text: str) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path.read_bytes()


def cli(project: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli(*args, "--project", str(project), cwd=project)


def commands(path: Path) -> list[str]:
    doc_ = json.loads(path.read_text())
    return [
        h["command"]
        for groups in doc_.get("hooks", {}).values()
        for g in groups
        for h in g["hooks"]
    ]


# -- 1. a read-only settings file ---------------------------------------------------------------------


@pytest.mark.parametrize("action", ["install", "uninstall"])
def test_a_settings_file_its_owner_made_read_only_is_refused_with_one_line_and_left_as_it_was(
    project, action
):
    path = local(project)
    data = put(path, SETTINGS)
    path.chmod(0o444)  # as root the system would let memcurate write it anyway
    try:
        res = cli(project, action)
        assert res.returncode == 1
        assert res.stderr.count("\n") == 1 and str(path) in res.stderr and "read-only" in res.stderr
        assert path.read_bytes() == data and stat.S_IMODE(path.stat().st_mode) == 0o444
        assert not list((project / ".memcurate").glob("backups/*.bak"))
    finally:
        path.chmod(0o644)


# -- 2. an older install's entries ------------------------------------------------------------------


def test_install_then_uninstall_gives_back_an_older_installs_entries_byte_for_byte(project):
    original = put(local(project), SETTINGS)
    assert cli(project, "install").returncode == 0
    # replaced while installed: never two memcurates at once
    assert OLDER not in commands(local(project))
    res = cli(project, "uninstall")
    assert res.returncode == 0, res.stderr
    assert local(project).read_bytes() == original


def test_uninstall_after_another_change_still_gives_back_the_older_entries(project):
    put(local(project), SETTINGS)
    assert cli(project, "install").returncode == 0
    local(project).write_text(
        local(project).read_text().replace('"model": "opus"', '"model": "sonnet"')
    )
    res = cli(project, "uninstall")
    assert res.returncode == 0, res.stderr
    assert json.loads(local(project).read_text()) == json.loads(
        SETTINGS.replace('"opus"', '"sonnet"')
    )
    assert (
        local(project)
        .read_text()
        .startswith(
            '{\n  "model": "sonnet",\n  "hooks": {\n    "Stop": [\n'
            '      {"hooks": [{"type": "command", "command": "notify-send done"}]},'
        )
    )


# -- 3. git ignores the local settings --------------------------------------------------------------


def git(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(project), *args], capture_output=True, text=True)


def excludes() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "git" / "ignore"  # conftest: the tests' own home


@pytest.fixture
def repo(project):
    assert git(project, "init", "-q").returncode == 0
    return project


def test_install_creating_the_local_settings_makes_git_ignore_it_as_claude_code_does(repo):
    excludes().parent.mkdir(parents=True)
    excludes().write_text("*.swp")  # the person's own, no newline at the end
    res = cli(repo, "install")
    assert res.returncode == 0, res.stderr
    assert git(repo, "check-ignore", "-q", ".claude/settings.local.json").returncode == 0
    assert excludes().read_text() == "*.swp\n**/.claude/settings.local.json\n"
    assert "git now ignores .claude/settings.local.json" in res.stderr
    for args in (["uninstall"], ["install"], ["install", "--review-auto-memory"]):
        assert cli(repo, *args).returncode == 0
    # never twice; uninstall keeps it
    assert excludes().read_text() == "*.swp\n**/.claude/settings.local.json\n"


def test_a_repository_that_already_ignores_it_leaves_gits_files_alone(repo):
    (repo / ".gitignore").write_text(".claude/settings.local.json\n")
    assert cli(repo, "install").returncode == 0
    assert local(repo).is_file() and not excludes().exists()
    assert (repo / ".gitignore").read_text() == ".claude/settings.local.json\n"


def test_the_excludes_file_git_is_configured_with_is_the_one_written(repo):
    mine = Path(os.environ["HOME"]) / "dotfiles" / "gitignore"
    assert (
        subprocess.run(
            ["git", "config", "--global", "core.excludesFile", "~/dotfiles/gitignore"]
        ).returncode
        == 0
    )
    assert cli(repo, "install").returncode == 0
    assert mine.read_text() == "**/.claude/settings.local.json\n" and not excludes().exists()
    assert git(repo, "check-ignore", "-q", ".claude/settings.local.json").returncode == 0


# -- 4. tidy never merges two values into one memory ----------------------------------------------------

SEVEN = doc(
    "keep-logs-seven-days",
    "Keep application logs for seven days",
    "Application logs are kept for seven days, then deleted by the log shipper.",
    "Disk on the log hosts is small and old logs were never read.",
    stamp="2026-09-01T10:00:00Z",
    session="s-old",
)
FOURTEEN = doc(
    "keep-logs-fourteen-days",
    "Keep application logs for fourteen days",
    "Application logs are kept for fourteen days, then deleted by the log shipper.",
    "Disk on the log hosts is small and old logs were never read.",
    stamp="2026-11-01T10:00:00Z",
    session="s-new",
)


@pytest.fixture
def tidy_project(project):
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text("backend: offline\n")
    engine = Engine(project)
    os.makedirs(engine.root, exist_ok=True)
    yield engine
    engine.close()


def staged(project: Path) -> list[dict]:
    res = cli(project, "tidy", "--json")
    assert res.returncode == 0, res.stderr
    engine = Engine(project)
    try:
        return [
            proposal_actions.view(engine, row["id"])["record"]
            for row in json.loads(res.stdout)["staged"]
        ]
    finally:
        engine.close()


def test_two_memories_giving_another_value_in_words_are_a_contradiction_never_a_merge(tidy_project):
    for d in (SEVEN, FOURTEEN):
        save(tidy_project, d)
    before = files_of(tidy_project.root)
    [record] = staged(Path(tidy_project.project))
    assert record["kind"] == "archive" and [op["op"] for op in record["ops"]] == ["archive"]
    assert (
        record["ops"][0]["ref"] == "decision/keep-logs-seven-days"
        and "fourteen" in record["reason"]
    )
    assert files_of(tidy_project.root) == before  # nothing changes until the person approves
    check = cli(Path(tidy_project.project), "check", "--json")
    codes = [f["code"] for f in json.loads(check.stdout)["findings"]]
    assert "contradiction" in codes and "duplicate" not in codes


def test_the_same_value_in_digits_and_in_words_still_merges(tidy_project):
    save(tidy_project, SEVEN)
    save(
        tidy_project,
        doc(
            "logs-kept-7-days",
            "Application logs are kept 7 days",
            "Application logs are kept for 7 days, then deleted by the log shipper.",
            "Disk on the log hosts is small and old logs were never read.",
            stamp="2026-11-01T10:00:00Z",
            session="s-new",
        ),
    )
    [record] = staged(Path(tidy_project.project))
    assert record["kind"] == "merge"


def detail(mid: str, days: str, stamp: str, session: str):
    return doc(
        mid,
        "Ship application logs to the central store",
        "Every service ships its application logs to the central log store through the shipper.\n"
        f"Shipped logs are compressed after {days} days.",
        "One place to search logs across services during incidents.",
        stamp=stamp,
        session=session,
    )


def test_a_detail_said_with_another_value_is_left_out_of_the_merge_not_said_twice(tidy_project):
    save(tidy_project, detail("ship-logs-centrally", "two", "2026-09-01T10:00:00Z", "s-old"))
    save(
        tidy_project,
        detail("logs-go-to-the-central-store", "three", "2026-11-01T10:00:00Z", "s-new"),
    )
    [record] = staged(Path(tidy_project.project))
    assert record["kind"] == "merge"
    [write] = [op for op in record["ops"] if op["op"] == "write"]
    body = memfile.parse(write["text"]).body
    assert "after three days" in body and "two days" not in body
    # said: left out, the newer says otherwise
    assert "compressed after two days" in record["reason"]


def test_a_models_merge_that_says_both_values_is_not_used(fake, tidy_project):  # noqa: F811
    (Path(tidy_project.project) / ".claude" / "memcurate.yaml").write_text(
        "backend: claude-cli\ndrafting:\n  retries: 0\n  backoff_seconds: 0.0\n  fallback: []\n"
    )
    save(tidy_project, detail("ship-logs-centrally", "two", "2026-09-01T10:00:00Z", "s-old"))
    save(
        tidy_project,
        detail("logs-go-to-the-central-store", "three", "2026-11-01T10:00:00Z", "s-new"),
    )
    fake.reply(
        envelope(
            structured_output={
                "skip": False,
                "title": "Ship application logs to the central store",
                "description": "Where logs go",
                "tags": ["logs"],
                "sections": {
                    "Decision": "Services ship logs to the central store; shipped logs are "
                    "compressed after two or three days.",
                    "Rationale": "One place to search logs across services.",
                },
            }
        )
    )
    [record] = staged(Path(tidy_project.project))
    [write] = [op for op in record["ops"] if op["op"] == "write"]
    body = memfile.parse(write["text"]).body
    assert "two" not in body and "after three days" in body, record["reason"]
    assert "Merged without a model" in record["reason"]
