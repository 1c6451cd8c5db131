"""A session summary's "files changed" (issue 24, Build §4): the files the session really wrote, inside the
project, relative to it; what `memcurate check` then finds in the project.

tests/data/claude_2_1_328_writes.jsonl is a transcript the real `claude` 2.1.328 wrote in print mode (private
config dir, a scripted Messages API on 127.0.0.1, `--permission-mode bypassPermissions`, a PreToolUse hook
that answers Claude Code's deny JSON, as memcurate's guard does, for any `denied.py`). The session started in
/home/dev/calc-app (the folder it ran in, renamed) and, in order: ran `cd src/pkg` in Bash (so later records'
`cwd` is that subfolder); wrote src/pkg/after_cd.py and calc.py; had a Write of denied.py denied by the hook
(an is_error result "PreToolUse:Write hook error: …"); had an Edit of calc.py fail ("String to replace not
found"); wrote /home/dev/scratch/notes.py, outside the project; wrote src/pkg/util.py; edited calc.py; wrote
viabash.txt through Bash (no write tool: not listed). Only the two prompts' words were changed, and the
records of the API calls, tool lists and system prompt left out.

Files outside the project are left out of the list (no `../` paths: `check` could not verify them and a
project memory does not need them)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli, run_hook

from memcurate.curator import config
from memcurate.curator.capture.digest import digest
from memcurate.curator.capture.transcript import TranscriptReader
from memcurate.curator.capture.triage import Rules, triage_entries
from memcurate.curator.util.paths import project_key

REAL = Path(__file__).parents[1] / "data" / "claude_2_1_328_writes.jsonl"
PROJECT, OUTSIDE = "/home/dev/calc-app", "/home/dev/scratch"
SESSION = "8be629f7-48a5-4c3b-9180-d13012619beb"
WRITTEN = [
    "src/pkg/after_cd.py",
    "calc.py",
    "src/pkg/util.py",
]  # in the order the session wrote them


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True, timeout=60)


def session_in(folder: Path, project: Path, outside: Path) -> Path:
    """The real transcript, as if the session had run in `project`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SESSION}.jsonl"
    path.write_text(REAL.read_text().replace(PROJECT, str(project)).replace(OUTSIDE, str(outside)))
    return path


@pytest.fixture(scope="module")
def cfg(tmp_path_factory) -> dict:
    return config.load(tmp_path_factory.mktemp("p"))


def summary_files(cfg: dict, path: Path) -> list[str]:
    result, _ = triage_entries(TranscriptReader(str(path)), Rules(cfg), path=str(path))
    excerpt = result["session_summary"]["excerpt"]
    [line] = [x for x in excerpt.split("\n\n") if x.startswith("[files changed] ")]
    return line.removeprefix("[files changed] ").split(", ")


def test_the_summary_lists_the_writes_that_happened_relative_to_the_project(cfg):
    # not /home/dev/calc-app/calc.py nor calc-app/calc.py; not denied.py (the hook denied it), the failed Edit
    # changes nothing new, scratch/notes.py is outside; after the `cd`, paths are still from the project
    assert summary_files(cfg, REAL) == WRITTEN


def test_the_digest_lists_the_same_files_for_the_session_and_for_a_look_after_the_cd(cfg):
    d = digest(str(REAL), cfg)
    assert d.files_changed == WRITTEN
    assert [f for s in d.segments for f in s.files] == WRITTEN
    assert f"files changed here: {', '.join(WRITTEN)}" in "\n".join(s.text for s in d.segments)
    # the second look digests a range: its first record's cwd is src/pkg, the project is still the start folder
    raw = REAL.read_bytes()
    start = raw.index(b'"name":"Write","input":{"file_path":"/home/dev/calc-app/src/pkg/util.py"')
    start = raw.rindex(b"\n", 0, start) + 1
    assert json.loads(raw[start : raw.index(b"\n", start)])["cwd"] == PROJECT + "/src/pkg"
    assert digest(str(REAL), cfg, (start, None)).files_changed == ["src/pkg/util.py", "calc.py"]


def test_a_project_behind_a_symbolic_link_and_dot_dot_paths(cfg, tmp_path):
    real = tmp_path / "real" / "calc-app"
    real.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real.parent)
    text = REAL.read_text().replace(f"{PROJECT}/src/pkg/util.py", f"{real}/src/pkg/util.py")
    text = text.replace(f"{PROJECT}/calc.py", f"{PROJECT}/src/../calc.py").replace(
        PROJECT, str(link / "calc-app")
    )
    path = tmp_path / "s.jsonl"
    path.write_text(text)
    assert summary_files(cfg, path) == WRITTEN


def test_check_finds_every_file_the_summary_names(tmp_path):
    """End to end: the hooks stage the session, the offline drafter saves its summary, and `check` reports
    none of its files as gone (before, it named `calc-app/calc.py` and the denied `denied.py`)."""
    project, outside = tmp_path / "calc-app", tmp_path / "scratch"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "memcurate.yaml").write_text("backend: offline\n")
    for rel in WRITTEN:  # what the session left on disk
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("x = 1\n")
    outside.mkdir()
    (outside / "notes.py").write_text("z = 2\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(
        project,
        "-c",
        "user.email=t@example.com",
        "-c",
        "user.name=t",
        "commit",
        "-qm",
        "the session's work",
    )
    transcript = session_in(
        Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / project_key(project), project, outside
    )
    for event in ("Stop", "SessionEnd"):
        doc = {
            "session_id": SESSION,
            "transcript_path": str(transcript),
            "cwd": str(project),
            "hook_event_name": event,
        }
        p = run_hook(doc, cwd=project)
        assert p.returncode == 0 and p.stderr == b"", p.stderr
    p = run_cli("--auto-approve", "--json", "--min-confidence", "0", cwd=project)
    assert p.returncode == 0, p.stderr
    saved = [i["path"] for i in json.loads(p.stdout)["created"] if i.get("path")]
    [summary] = [Path(s) for s in saved if "session" in Path(s).parent.name]
    body = summary.read_text()
    for rel in WRITTEN:
        assert f"`{rel}`" in body or f"`{rel.rsplit('/', 1)[-1]}`" in body
    assert "denied.py" not in body and "notes.py" not in body and "calc-app/" not in body
    p = run_cli("check", "--json", cwd=project)
    assert p.returncode in (0, 1), p.stderr
    findings = json.loads(p.stdout)["findings"]
    assert not [f for f in findings if f["code"] == "stale-file"], findings
