"""Contract: the memory root memcurate derives is the folder the real Claude Code names in its system prompt
(also for a project path over 200 characters), and MEMORY.md as memcurate models its loading
(curator/memory/memory_md/loaded.py) is exactly what reaches the model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from contract.api import Turn
from contract.conftest import make_project
from memcurate.curator import config
from memcurate.curator.memory.memory_md.loaded import loaded
from memcurate.curator.util.paths import data_dir, memory_root, project_key

NAMED = re.compile(r"You have a persistent file-based memory at `([^`]+)`")
LOADED_FROM = re.compile(
    r"Contents of (\S+MEMORY\.md) \(user's auto-memory, persists across conversations\):\n\n"
)


def derived_root(project: Path) -> str:
    return memory_root(project, config.load(project, data_dir(project)), data_dir(project))


def system_text(request) -> str:
    system = request.body.get("system")
    if isinstance(system, list):
        return "\n".join(block.get("text", "") for block in system if isinstance(block, dict))
    return str(system or "")


def named_root(run) -> str:
    found = NAMED.search(system_text(run.api.conversation[0]))
    assert found, (
        "Claude Code's system prompt no longer names its memory folder as 'You have a persistent "
        f"file-based memory at `...`'\n{run.explain()}"
    )
    return found.group(1)


@pytest.mark.parametrize("deep", [False, True], ids=["short-path", "path-over-200-characters"])
def test_the_memory_root_is_the_folder_claude_code_names(tmp_path, claude_home, run_claude, deep):
    base = tmp_path / ("a-rather-long-folder-name-" * 3 if deep else "")
    project = make_project((base / ("b" * 70) / ("c" * 70) if deep else base) / "notes-app")
    # Claude Code's limit on the key, not memcurate's constant
    assert (len(str(project)) > 200) == deep
    run = run_claude("hello there", [Turn("Hello.")], cwd=project)
    assert run.returncode == 0, run.explain()
    named = named_root(run).rstrip("/")
    assert named == derived_root(project), (
        f"Claude Code names {named} as its memory folder; memcurate derives "
        f"{derived_root(project)} (project key {project_key(project)})"
    )
    init = next(
        (e for e in run.events if e.get("type") == "system" and e.get("subtype") == "init"), {}
    )
    assert init.get("memory_paths", {}).get("auto", "").rstrip("/") == named, init.get(
        "memory_paths"
    )


def memory_md_with_comments_and_230_lines() -> str:
    """memcurate's section markers, Claude's own comments (one over several lines, one in a fenced block) and
    230 real lines: what Claude Code drops, keeps and cuts all show."""
    out = [
        "# Memory",
        "<!-- memcurate:begin section=decision budget=40 -->",
        "## Key Decisions",
        "- [Use SQLite](decision/use-sqlite.md) — one machine, no server",
        "<!-- memcurate:end section=decision -->",
        "",
        "<!--",
        "a comment of Claude's",
        "over three lines",
        "-->",
        "```",
        "<!-- in a fence: kept -->",
        "```",
        "- note <!-- not on a line of its own: kept -->",
    ]
    out += [f"- note {i}" for i in range(230)]
    return "\n".join(out) + "\n"


def memory_md_over_25000_characters() -> str:
    """150 lines of 180 UTF-16 units (an emoji counts two): under 200 lines, over 25,000 characters."""
    return "".join(f"- {i:03d} " + "\U0001f600" * 20 + "x" * 132 + "\n" for i in range(150))


# Over an emoji line Claude Code shortens the line its warning quotes in UTF-16 units (found by this suite).


@pytest.mark.parametrize(
    "text",
    [memory_md_with_comments_and_230_lines(), memory_md_over_25000_characters()],
    ids=["comments-and-230-lines", "over-25000-characters"],
)
def test_memory_md_as_memcurate_models_it_is_what_reaches_the_model(installed, run_claude, text):
    root = Path(derived_root(installed))
    root.mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text(text)
    run = run_claude("hello there", [Turn("Hello.")], cwd=installed)
    assert run.returncode == 0, run.explain()
    first = run.api.conversation[0]
    blocks = [
        b.get("text", "")
        for m in first.body["messages"]
        for b in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}])
    ]
    block = next((b for b in blocks if LOADED_FROM.search(b)), None)
    assert block, (
        "MEMORY.md did not reach the first request as 'Contents of .../MEMORY.md (user's auto-memory...'"
    )
    found = LOADED_FROM.search(block)
    assert found.group(1) == str(root / "MEMORY.md"), found.group(1)
    seen = block[found.end() :].split("\n</system-reminder>", 1)[0]
    seen = re.split(r"\n\nContents of \S+ \(", seen, maxsplit=1)[0]
    model = loaded(text)
    assert model.cut, "the case was meant to be cut"
    assert seen == model.text, (
        f"Claude Code loaded {len(seen)} characters, {seen.count(chr(10)) + 1} lines; "
        f"memcurate's model says {len(model.text)}, {model.text.count(chr(10)) + 1} lines.\n"
        f"Claude's tail: {seen[-400:]!r}\nmodel's tail: {model.text[-400:]!r}"
    )
