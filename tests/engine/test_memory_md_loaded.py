"""What Claude Code loads of MEMORY.md (curator/memory/memory_md/loaded.py) and every user of it agreeing:
budgets, `check`'s over-limit, the library's "as loaded" view, recall's "already loaded", status.

The expected texts below are what Claude Code 2.1.328 itself put in its request for each file (run in
print mode against a scripted Messages API on 127.0.0.1), not what the model says."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memcurate.curator.engine import Engine
from memcurate.curator.hygiene import memory_md_checks
from memcurate.curator.library.entries import line_ref
from memcurate.curator.memory.memory_md import IndexLine, plan
from memcurate.curator.memory.memory_md.loading import load_view
from memcurate.curator.memory.memory_md.writing import usage
from memcurate.curator.memory.recall.loaded import loaded_entries

EMOJI = "\U0001f600"  # two UTF-16 code units, four UTF-8 bytes
UNITS_200 = "x" * 197 + EMOJI + "\n"  # a line of 200 UTF-16 units, its line break included
BUDGETS = {
    "decision": 40,
    "constraint": 25,
    "runbook": 20,
    "tech_debt": 20,
    "preference": 15,
    "session_summary": 10,
}


def model():
    from memcurate.curator.memory.memory_md import (
        loaded,  # the module: imported here so the users' tests stand alone
    )

    return loaded


def section(cat: str, ids: list[str]) -> list[str]:
    return (
        [f"<!-- memcurate:begin section={cat} budget=40 -->", "## Key Decisions"]
        + [f"- [Memory {i}]({cat}/{i}.md) — about {i}" for i in ids]
        + [f"<!-- memcurate:end section={cat} -->"]
    )


def real_lines_with_markers(real: int = 200) -> str:
    """`real` lines Claude loads and 40 comment lines it drops: memcurate's six empty sections (12 marker
    lines; their headings are real lines) and 28 comments of Claude's own."""
    out: list[str] = []
    for cat in BUDGETS:
        out += [
            f"<!-- memcurate:begin section={cat} budget={BUDGETS[cat]} -->",
            f"## {cat}",
            f"<!-- memcurate:end section={cat} -->",
        ]
    for i in range(real - len(BUDGETS)):
        out += ([f"<!-- a comment of Claude's before note {i} -->"] if i < 28 else []) + [
            f"note {i}"
        ]
    return "\n".join(out) + "\n"


# -- the model against Claude Code 2.1.328 --------------------------------------------------------------

CLAUDE_CODE_2_1_328 = [  # (MEMORY.md, what Claude Code loaded of it)
    (
        "# Mem\n<!-- memcurate:begin section=decision budget=40 -->\n## Key Decisions\n- [A](decision/a.md) — x\n"
        "<!-- memcurate:end section=decision -->\n\nLine after\n",
        "# Mem\n## Key Decisions\n- [A](decision/a.md) — x\nLine after",
    ),  # markers go, and the blank line after one
    ("a\n\n<!--\nhidden\nlines\n-->\n\nb\n", "a\n\nb"),  # a comment over several lines
    ("a\n\n<!--\nhidden\n--> tail\nb\n", "a\n\n tail\nb"),  # what follows its end on the line stays
    ("a\n<!-- c --> text\nb\n", "a\n text\nb"),
    ("a\ntext <!-- c -->\nb\n", "a\ntext <!-- c -->\nb"),  # not on a line of its own
    ("para line\n<!-- c -->\nmore\n", "para line\nmore"),
    ("- item\n<!-- c -->\n- item2\n", "- item\n- item2"),
    ("- item\n  <!-- c -->\n- item2\n", "- item\n  <!-- c -->\n- item2"),  # inside a list item
    ("a\n\n    <!-- c -->\n\nb\n", "a\n\n    <!-- c -->\n\nb"),  # indented code
    ("a\n```\n<!-- c -->\n```\nb\n", "a\n```\n<!-- c -->\n```\nb"),  # fenced code
    ("a\n<!-- c -->\n  \n\nb\n", "a\n  \n\nb"),  # a line of spaces is not swallowed
    ("a\n<!-- c\nb\n", "a\n<!-- c\nb"),  # never closed
    ("\n\n  \n<!-- c -->\n\nfirst\n", "first"),  # trimmed
    ("---\nname: x\n---\nbody\n<!-- c -->\nz\n", "body\nz"),  # front matter
]


@pytest.mark.parametrize("text,seen", CLAUDE_CODE_2_1_328)
def test_comment_only_lines_are_dropped_as_claude_code_drops_them(text, seen):
    got = model().loaded(text)
    assert got.text == seen and not got.cut and got.total_lines == seen.count("\n") + 1


def test_comment_lines_are_not_counted_200_real_lines_and_40_marker_lines_fit():
    text = real_lines_with_markers()
    assert text.count("\n") == 240
    got = model().loaded(text)
    assert not got.cut and got.why == "" and got.lines_kept == 200 and got.total_lines == 200
    assert got.lines.count(model().DROPPED) == 40 and got.lines.count(model().CUT) == 0
    one_more = model().loaded(text + "note 200\n")
    assert one_more.cut and one_more.first_cut() == 241 and one_more.lines_kept == 200


def test_25000_utf16_units_fit_one_more_cuts_at_the_line_break_before():
    m = model()
    # 25,000 units (the last line break is trimmed)
    fits = UNITS_200 * 124 + "y" * 100 + EMOJI * 50 + "\n"
    # an emoji: 4 bytes, 1 character, 2 units
    assert len(fits.encode("utf-8")) > 25_300 and len(fits) < 24_900
    got = m.loaded(fits)
    assert not got.cut and got.total_chars == 25_000
    over = UNITS_200 * 124 + "y" * 101 + EMOJI * 50 + "\n"  # 25,001
    got = m.loaded(over)
    assert (
        got.cut and got.total_chars == 25_001 and got.lines_kept == 124 and got.first_cut() == 125
    )
    assert got.text.startswith(UNITS_200 * 123 + UNITS_200[:-1] + "\n\n> WARNING: ")
    assert got.lines == (m.LOADED,) * 124 + (m.CUT,)
    # a line break at unit 25,000: the line before it stays
    at_break = UNITS_200 * 124 + "y" * 200 + "\ntail\n"
    assert m.loaded(at_break).lines_kept == 125 and m.loaded(at_break).first_cut() == 126


def test_the_warning_claude_code_appends():
    m = model()
    text = "".join(f"line {i}\n" for i in range(1, 202))
    got = m.loaded(text)
    assert got.text == "".join(f"line {i}\n" for i in range(1, 201)) + (
        "\n> WARNING: MEMORY.md is 201 lines (limit: 200). Only part of it was loaded: 1 of 201 lines were cut "
        'off, starting at line 201 ("line 201"). Keep index entries to one line under ~200 chars; move detail '
        "into topic files."
    )
    assert got.why.startswith("MEMORY.md is 201 lines (limit: 200).")
    long = m.loaded("z" * 25_010 + "\nnext\n")
    assert (
        long.lines_kept == 0
        and long.first_cut() == 1
        and long.text
        == "z" * 25_000
        + (
            "\n\n> WARNING: MEMORY.md is 24.4KB (limit: 24.4KB) \u2014 index entries are too long. Only part of it was "
            "loaded: everything after the first 25000 characters of line 1 was cut off. Keep index entries to one "
            "line under ~200 chars; move detail into topic files."
        )
    )
    assert m.CHECKED_AGAINST == "2.1.328"


# -- every user agrees ------------------------------------------------------------------------------


@pytest.fixture
def project_with_root(tmp_path) -> tuple[Path, Path]:
    project, root = tmp_path / "project", tmp_path / "memory"
    (project / ".claude").mkdir(parents=True)
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {root}\n"
    )
    return project, root


def over_limit(project: Path) -> list:
    return [f for f in memory_md_checks.detect(Engine(project)) if f.code == "over-limit"]


def test_check_says_over_limit_exactly_when_claude_code_would_cut(project_with_root):
    project, root = project_with_root
    md = root / "MEMORY.md"
    # 240 lines in the file, 200 loaded: Claude loads all of it
    md.write_text(real_lines_with_markers())
    assert over_limit(project) == []
    md.write_text(real_lines_with_markers() + "note 200\n")
    [f] = over_limit(project)
    assert (
        f.detail["past_cut"] == [241]
        and "line 241 is never loaded (0 of memcurate's entries, 1 of" in f.message
    )
    assert f.detail["warning"].startswith("MEMORY.md is 201 lines (limit: 200).")
    # only the line past the cut is proposed for removal, never a comment line Claude Code drops anyway
    assert [op["op"] for op in f.detail["fix"]["ops"]] == ["drop_line"] and f.refs == (
        line_ref("note 200"),
    )
    # 125 lines, 25,001 units
    md.write_text(UNITS_200 * 124 + "y" * 101 + EMOJI * 50 + "\n", encoding="utf-8")
    [f] = over_limit(project)
    assert f.detail["past_cut"] == [125] and f.detail["chars"] == 25_001
    # 25,000 units: all loaded
    md.write_text(UNITS_200 * 124 + "y" * 100 + EMOJI * 50 + "\n", encoding="utf-8")
    assert over_limit(project) == []


def test_the_library_view_cuts_where_claude_code_does():
    text = real_lines_with_markers() + "note 200\n"
    view = load_view(text)
    assert view.cut == 241 and [ln.number for ln in view.past_cut()] == [241]
    assert sum(ln.dropped for ln in view.lines) == 40 and not any(
        ln.loaded for ln in view.lines if ln.dropped
    )
    assert view.total_lines == 201 and view.warning.startswith("MEMORY.md is 201 lines")


def test_recalls_loaded_set_is_what_survives_the_cut(tmp_path):
    entries = [f"- [Memory m{i}](decision/m{i}.md) — about m{i}" for i in range(6)]
    # 196 lines of Claude's, then the section: its markers are not loaded lines, so 4 entries fit in 200
    lines = [f"- Claude's note {i}" for i in range(196)] + [
        "<!-- memcurate:begin section=decision budget=40 -->"
    ]
    lines += entries + ["<!-- memcurate:end section=decision -->"]
    (tmp_path / "MEMORY.md").write_text("\n".join(lines) + "\n")
    found, problem = loaded_entries(str(tmp_path), 200, 25_000)
    assert problem is None and sorted(found) == [f"decision/m{i}" for i in range(4)]
    # past the character cut: a line cut in two is not loaded
    text = UNITS_200 * 124 + "- [Memory late](decision/late.md) — " + "y" * 200 + "\n"
    (tmp_path / "MEMORY.md").write_text(text, encoding="utf-8")
    assert loaded_entries(str(tmp_path), 200, 25_000)[0] == {}
    (tmp_path / "MEMORY.md").write_text(
        UNITS_200 * 120 + "- [Memory late](decision/late.md) — ok\n", encoding="utf-8"
    )
    assert list(loaded_entries(str(tmp_path), 200, 25_000)[0]) == ["decision/late"]


def test_budgets_keep_memory_md_within_what_claude_code_loads():
    # Claude's lines: 150 lines of 150 UTF-16 units in multibyte text (22,500 units, 67,500 bytes)
    claude = "".join("\u00e9\u4e2d" * 74 + f"{i % 10}\n" for i in range(150))
    changes = [
        ("upsert", IndexLine(f"e{i}", "decision", f"Entry {i}", "why " * 8)) for i in range(40)
    ]
    p = plan(claude, changes, BUDGETS)
    seen = model().loaded(p.text)
    assert not seen.cut and p.text.startswith(claude)
    kept = p.text.count("](decision/")
    # shrank, not emptied (bytes do not count)
    assert 0 < kept < 40 and len(p.archived["decision"]) == 40 - kept
    # one more entry line than kept would be cut: the budget fills the room Claude Code gives
    one_more = plan(claude, changes[: kept + 1], BUDGETS, 200, 10**9).text
    assert model().loaded(one_more).cut


def test_status_reports_lines_and_characters_as_loaded(tmp_path):
    (tmp_path / "MEMORY.md").write_text(real_lines_with_markers())
    total = usage(
        tmp_path, {"categories": {}, "memory_md": {"max_lines": 200, "max_bytes": 25000}}
    ).total
    assert (total.lines, total.max_lines, total.max_chars, total.cut) == (
        200,
        200,
        25_000,
        False,
    )
