"""Claude Code's folder key of a project (issue 24, Build §4): memcurate saves memories and finds
transcripts in `<config dir>/projects/<key>/`, so a key Claude Code does not make is a folder it never reads.

The expected keys below are data from the real binary, not from memcurate: `claude` 2.1.328
(`@anthropic-ai/claude-code-linux-x64` from npm) run in print mode (`-p`) in each of these project folders,
with a private HOME and CLAUDE_CONFIG_DIR, against a scripted Messages API on 127.0.0.1; each key is the
folder it wrote the session's transcript into, and the folder of the memory directory its system prompt
named. Its bundled JS makes them so: every UTF-16 code unit that is not an ASCII letter or digit becomes
`-`; a key over 200 units is cut at 200 and gets `-` and Math.abs(javaStringHash(path)).toString(36)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_cli, run_hook

from memcurate.curator.util.assets import asset
from memcurate.curator.util.paths import project_key

DEMO_SESSION = "5e55a1d0-de70-4c1a-9a5e-000000000001"

OBSERVED = [  # (project folder, the folder under projects/ that claude 2.1.328 wrote)
    pytest.param("/tmp/ccpaths/run/p/short.proj", "-tmp-ccpaths-run-p-short-proj", id="short"),
    pytest.param(
        "/tmp/ccpaths/run/p/b200/seg00.name_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/seg0"
        "1.name_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/seg02.name_xxxxxxxxxxxxxxxxxxxxx",
        "-tmp-ccpaths-run-p-b200-seg00-name-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-seg0"
        "1-name-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-seg02-name-xxxxxxxxxxxxxxxxxxxxx",
        id="len200",
    ),
    pytest.param(
        "/tmp/ccpaths/run/p/b201/seg00.name_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/seg0"
        "1.name_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/seg02.name_xxxxxxxxxxxxxxxxxxxxx"
        "x",
        "-tmp-ccpaths-run-p-b201-seg00-name-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-seg0"
        "1-name-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-seg02-name-xxxxxxxxxxxxxxxxxxxxx"
        "-tbbtz7",
        id="len201",
    ),
    pytest.param(
        "/tmp/ccpaths/run/p/long_Proj/seg00.name_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "/seg01.name_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/seg02.name_xxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/seg03.name_xxxx",
        "-tmp-ccpaths-run-p-long-Proj-seg00-name-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "-seg01-name-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-seg02-name-xxxxxxxxxxxxxxxx"
        "-tdijzf",
        id="long",
    ),
    pytest.param(
        "/tmp/ccpaths/run/p/caf\u00e9-\U0001f600-\u4e2d/seg00.name_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/"
        "seg01.name_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/seg02.name_xxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "-tmp-ccpaths-run-p-caf-------seg00-name-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "-seg01-name-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-seg02-name-xxxxxxxxxxxxxxxx"
        "-bse74l",
        id="unicode",
    ),
]


@pytest.mark.parametrize("project, key", OBSERVED)
def test_the_key_is_the_folder_claude_code_wrote(project, key):
    # short and exactly 200 units: unchanged; 201 and more: cut at 200 and hashed; an accented letter and a
    # CJK character are one unit each, an emoji two (two dashes), each counted so before the cut.
    assert project_key(project) == key


def test_a_long_projects_memories_go_to_the_folder_claude_code_reads(tmp_path):
    """A project whose key is over 200 characters: the hook proves the config dir from the transcript in
    the shortened folder, and memories are saved there (before, memcurate derived the full key: a folder
    Claude Code never reads, with a name over the 255 bytes most file systems allow)."""
    project = tmp_path.joinpath(*[f"a-rather-long-folder-name-{i:02d}" for i in range(8)])
    project.mkdir(parents=True)
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text("backend: offline\n")
    flat = "".join(c if c.isascii() and c.isalnum() else "-" for c in str(project))
    assert len(flat) > 200
    key = project_key(project)
    assert key.startswith(flat[:200] + "-") and len(key) <= 208
    alt = tmp_path / "claude-config"
    folder = alt / "projects" / key
    folder.mkdir(parents=True)
    demo = Path(asset(os.path.join("demo", "session.jsonl")))
    transcript = folder / f"{DEMO_SESSION}.jsonl"
    transcript.write_bytes(demo.read_bytes())
    env = {"CLAUDE_CONFIG_DIR": str(alt)}
    for event in ("Stop", "SessionEnd"):
        doc = {
            "session_id": DEMO_SESSION,
            "transcript_path": str(transcript),
            "cwd": str(project),
            "hook_event_name": event,
        }
        p = run_hook(doc, cwd=project, env=env)
        assert p.returncode == 0 and p.stderr == b"", p.stderr
    # without CLAUDE_CONFIG_DIR: the hook's record names it
    p = run_cli("status", "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["memory_root"] == str(folder / "memory")
    p = run_cli("--auto-approve", "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    saved = [
        i["path"] for k in ("created", "updated") for i in json.loads(p.stdout)[k] if i.get("path")
    ]
    assert saved and all(s.startswith(str(folder / "memory") + os.sep) for s in saved)
