"""The hygiene check's detectors (curator/hygiene) and MEMORY.md as Claude Code loads it (load_view):
each finding names the memory, says what and where, and only proposes; nothing under the memory root
changes until a proposal is approved."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memcurate.curator.engine import Engine
from memcurate.curator.hygiene import Finding
from memcurate.curator.library.entries import line_ref
from memcurate.curator.memory.memory_md.loading import load_view
from memcurate.curator.util.stamps import content_hash


def section(cat: str, ids: list[str], budget: int = 40) -> list[str]:
    heading = {"decision": "Key Decisions", "runbook": "Runbooks"}[cat]
    return (
        [f"<!-- memcurate:begin section={cat} budget={budget} -->", f"## {heading}"]
        + [f"- [Memory {i}]({cat}/{i}.md) — about {i}" for i in ids]
        + [f"<!-- memcurate:end section={cat} -->"]
    )


# -- load_view ----------------------------------------------------------------------------


def test_load_view_marks_owners_and_the_line_cut():
    lines = (
        ["# Claude's notes", "- a note of Claude's", ""]
        + section("decision", ["a", "b"])
        + [f"- later note {i}" for i in range(10)]
    )
    view = load_view("\n".join(lines) + "\n", max_lines=8, max_chars=25000)
    owners = [ln.owner for ln in view.lines]
    assert (
        owners[:3] == ["claude"] * 3
        and owners[3:8] == ["decision"] * 5
        and set(owners[8:]) == {"claude"}
    )
    # the marker lines (4 and 8) are dropped by Claude Code, not counted: the 8 loaded lines end at line 10
    assert [ln.number for ln in view.lines if ln.dropped] == [4, 8]
    assert (
        view.cut == 11
        and [ln.loaded for ln in view.lines]
        == [True] * 3 + [False] + [True] * 3 + [False] + [True] * 2 + [False] * 8
    )
    assert [ln.number for ln in view.past_cut()] == list(range(11, 19))
    assert view.sections["decision"] == {"used": 2, "budget": 40, "loaded": 2, "line": 4}
    assert view.total_lines == 16 and not view.error


def test_load_view_cuts_at_the_character_limit_and_a_cut_line_is_not_loaded():
    text = "aaaa\nbbbb\ncccc\n"  # 5 characters a line
    assert load_view(text, 200, 10).cut == 3  # the first two lines end at byte 10
    assert load_view(text, 200, 12).cut == 3  # line 3 would be cut in two: not loaded
    assert load_view(text, 200, 15).cut is None
    assert load_view("x\ny", 200, 3).cut is None and load_view("x\ny", 200, 3).total_lines == 2


def test_load_view_of_a_file_its_parser_refuses_still_shows_every_line():
    text = "<!-- memcurate:begin section=decision budget=40 -->\n## Key Decisions\nhand edit\n"
    view = load_view(text, 200, 25000, {"decision": 12})
    assert "line 1" in view.error or "line 3" in view.error
    assert [ln.owner for ln in view.lines] == ["claude"] * 3 and view.cut is None


def test_engine_memory_md_view_uses_the_config_limits(project_with_root):
    project, root = project_with_root
    (root / "MEMORY.md").write_text("\n".join(f"- line {i}" for i in range(205)) + "\n")
    view = engine_of(project).memory_md_view()
    assert view.cut == 201 and view.max_lines == 200 and view.max_chars == 25000


# -- the check ------------------------------------------------------------------------------


@pytest.fixture
def project_with_root(tmp_path) -> tuple[Path, Path]:
    """A git project whose memory root is a folder beside it (config memory.root)."""
    project = tmp_path / "project"
    root = tmp_path / "memory"
    (project / ".claude").mkdir(parents=True)
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {root}\n"
    )
    return project, root


def engine_of(project: Path) -> Engine:
    return Engine(project)


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def by_code(findings: list[Finding], code: str) -> list[Finding]:
    return [f for f in findings if f.code == code]


def test_over_limit_names_the_lines_past_the_cut_and_proposes_only(project_with_root):
    project, root = project_with_root
    for i in ("old", "new"):
        (root / "decision").mkdir(exist_ok=True)
        (root / "decision" / f"{i}.md").write_text(f"memory {i}\n")
    claude = [f"- Claude's note {i}" for i in range(215)]
    (root / "MEMORY.md").write_text("\n".join(section("decision", ["new", "old"]) + claude) + "\n")
    before = snapshot(root)
    [f] = by_code(engine_of(project).check(stage=False), "over-limit")
    assert f.severity == "high" and "load limit of 200 lines" in f.message
    # the two marker lines are not loaded lines: 200 loaded lines end at line 202
    assert (
        "lines 203-220 are never loaded (0 of memcurate's entries, 18 of Claude's lines)"
        in f.message
    )
    assert f.detail["past_cut"] == list(range(203, 221))
    # memcurate's own entries go first, then Claude's lines still past the cut once those are archived
    assert set(f.refs[:2]) == {"decision/old", "decision/new"}
    assert [
        op["op"] for op in f.detail.get("fix", {}).get("ops", [])
    ] == []  # not staged: no fix kept
    assert line_ref("- Claude's note 214") in f.refs and line_ref("- Claude's note 0") not in f.refs
    assert snapshot(root) == before


def test_the_over_limit_fix_moves_memcurates_oldest_lines_first_and_drops_claudes_lines_only_when_needed(
    project_with_root,
):
    from memcurate.curator.hygiene import memory_md_checks

    project, root = project_with_root
    (root / "decision").mkdir()
    for i in range(5):
        (root / "decision" / f"m{i}.md").write_text(f"memory {i}\n")
    claude = [f"- Claude's note {i}" for i in range(197)]
    (root / "MEMORY.md").write_text(
        "\n".join(claude + section("decision", [f"m{i}" for i in range(5)])) + "\n"
    )
    [f] = memory_md_checks.detect(engine_of(project))
    ops = f.detail["fix"]["ops"]
    assert f.detail["fix"]["kind"] == "archive"
    # 203 loaded lines (the markers are not loaded): the three oldest entries' lines make room; the memories
    # themselves stay active
    assert ops == [{"op": "archive_line", "ref": f"decision/m{i}"} for i in (2, 3, 4)]


def test_missing_links_of_both_owners(project_with_root):
    from memcurate.curator.hygiene import memory_md_checks

    project, root = project_with_root
    (root / "decision").mkdir()
    (root / "decision" / "here.md").write_text("x\n")
    (root / "debugging.md").write_text("# notes\n")
    lines = [
        "- [Debugging](debugging.md) — fine",
        "- [Old notes](old%20notes.md#top) — gone",
        "- see [docs](https://example.com/x.md)",
    ] + section("decision", ["here", "gone"])
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n")
    found = by_code(memory_md_checks.detect(engine_of(project)), "missing-link")
    assert [f.refs for f in found] == [
        ("decision/gone",),
        (line_ref("- [Old notes](old%20notes.md#top) — gone"),),
    ]
    assert found[0].message == "MEMORY.md line 7 links decision/gone.md, which does not exist"
    assert "line 2 (Claude's) links old notes.md" in found[1].message
    assert found[1].detail["fix"]["ops"] == [
        {"op": "drop_line", "ref": found[1].refs[0], "base_hash": content_hash(lines[1])}
    ]


def test_check_caches_its_findings_for_the_flags(project_with_root):
    project, root = project_with_root
    (root / "MEMORY.md").write_text("- [Gone](gone.md) — x\n")
    engine = engine_of(project)
    assert engine.flags() == {}
    findings = engine.check(stage=False)
    flags = engine.flags()
    ref = line_ref("- [Gone](gone.md) — x")
    assert [f.code for f in flags[ref]] == ["missing-link"] and flags[ref] == by_code(
        findings, "missing-link"
    )
    assert "fix" not in flags[ref][0].detail
    Path(engine.data, "check.json").write_text("{not json")
    assert engine.flags() == {}


# -- the SessionEnd pass ---------------------------------------------------------------------


def test_session_end_starts_one_background_check_per_interval(tmp_path):
    from memcurate.curator.hook_entries import interpreter_entry
    from memcurate.hooks import hygiene

    data = str(tmp_path)
    started: list[list[str]] = []
    cfg = {"hygiene": {"interval_minutes": 60}}
    assert hygiene.start_check("/p", data, cfg, spawn=started.append)
    assert not hygiene.start_check("/p", data, cfg, spawn=started.append)  # within the hour
    assert started == [[*interpreter_entry(started[0][0]), "check", "--quiet", "--project", "/p"]]
    old = os.path.getmtime(os.path.join(data, hygiene.STAMP)) - 3601
    os.utime(os.path.join(data, hygiene.STAMP), (old, old))
    assert hygiene.start_check("/p", data, cfg, spawn=started.append) and len(started) == 2
    assert not hygiene.start_check(
        "/p", data, {"hygiene": {"interval_minutes": 0}}, spawn=started.append
    )


def test_the_background_check_never_runs_a_memcurate_planted_in_the_project(project, tmp_path):
    """The check runs with the hook's cwd, the project, where Claude can write: a `memcurate/` package
    planted there must not be what the check imports (with `-m`, the cwd came first on sys.path)."""
    from memcurate.hooks import hygiene

    marker = tmp_path / "planted-code-ran"
    planted = project / "memcurate"
    planted.mkdir()
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    started: list[list[str]] = []
    data = str(tmp_path / "data")
    os.makedirs(data)
    assert hygiene.start_check(str(project), data, {}, spawn=started.append)
    r = subprocess.run(started[0], cwd=project, capture_output=True, text=True, timeout=120)
    assert not marker.exists(), "the check imported the memcurate planted in the project"
    assert r.returncode == 0, r.stderr
