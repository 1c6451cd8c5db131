"""MEMORY.md (DESIGN §7): memcurate's sections, Claude's own lines, budgets, limits, the archive."""

from __future__ import annotations

import random
import re

import pytest

from memcurate.curator import config
from memcurate.curator.categories import CATEGORIES, NAMES
from memcurate.curator.memory import memory_md
from memcurate.curator.memory.memory_md import (
    IndexLine,
    MemoryMdError,
    apply,
    parse,
    plan,
    read_archive,
    usage,
)
from memcurate.curator.memory.memory_md.loaded import loaded

BUDGETS = {
    "decision": 40,
    "constraint": 30,
    "runbook": 20,
    "tech_debt": 15,
    "preference": 15,
    "session_summary": 10,
}


def cfg_with(budgets=None, max_lines=200, max_bytes=25000) -> dict:
    b = {**BUDGETS, **(budgets or {})}
    return {
        "categories": {n: {"budget": b[n]} for n in NAMES},
        "memory_md": {"max_lines": max_lines, "max_bytes": max_bytes},
    }


def entry(id_, cat="decision", title=None, desc=None) -> IndexLine:
    return IndexLine(
        id_, cat, title or f"Title of {id_}", desc if desc is not None else f"Why {id_} matters"
    )


def up(*entries):
    return [("upsert", e) for e in entries]


def ids(text, cat="decision"):
    return [e.id for e in parse(text).sections[cat].entries] if cat in parse(text).sections else []


def archive_ids(root, cat="decision"):
    return [e.id for e in read_archive(root, cat)]


def non_memcurate(text: str) -> str:
    return parse(text).outside()


# -- format ----------------------------------------------------------------------------------------


def test_a_new_section_has_the_contract_format():
    p = plan(
        "",
        up(
            IndexLine(
                "use-jwt-for-api-auth",
                "decision",
                "Use JWT for API authentication",
                "Stateless JWT chosen over server sessions",
            )
        ),
        BUDGETS,
    )
    assert p.text == (
        "<!-- memcurate:begin section=decision budget=40 -->\n"
        "## Key Decisions\n"
        "- [Use JWT for API authentication](decision/use-jwt-for-api-auth.md) — Stateless JWT chosen over server sessions\n"
        "<!-- memcurate:end section=decision -->\n"
    )
    assert (
        p.archived == {}
        and p.notes == []
        and p.changed
        and (p.lines, p.chars) == memory_md.measure(p.text)
    )


def test_every_category_gets_its_heading_and_budget():
    p = plan("", [("upsert", entry(f"{n.replace('_', '-')}-one", n)) for n in NAMES], BUDGETS)
    for n in NAMES:
        assert (
            f"<!-- memcurate:begin section={n} budget={BUDGETS[n]} -->\n## {CATEGORIES[n].section}\n"
            in p.text
        )
    assert list(parse(p.text).sections) == list(NAMES)


@pytest.mark.parametrize(
    "before, separator",
    [
        ("", ""),
        ("# My notes\n", "\n"),
        ("# My notes\n\n", ""),
        ("# My notes\n  \n", ""),
        ("# My notes", "\n\n"),  # no final newline: end the line, then one blank line
        ("# My notes\r\nsecond\r\n", "\r\n"),  # a CRLF file gets CRLF sections
    ],
)
def test_a_missing_section_is_appended_after_one_blank_line(before, separator):
    p = plan(before, up(entry("a")), BUDGETS)
    assert p.text.startswith(before + separator + "<!-- memcurate:begin section=decision")
    nl = "\r\n" if "\r\n" in before else "\n"
    assert p.text.endswith(f"<!-- memcurate:end section=decision -->{nl}")
    if nl == "\r\n":
        assert "\n" not in p.text.replace("\r\n", "")


def test_newest_first_upsert_moves_to_top_and_remove_drops():
    text = plan("", up(entry("a"), entry("b"), entry("c")), BUDGETS).text
    assert ids(text) == ["c", "b", "a"]
    text = plan(text, up(entry("a", title="A, revised", desc="new words")), BUDGETS).text
    assert ids(text) == ["a", "c", "b"]
    assert text.count("decision/a.md") == 1 and "A, revised" in text and "Title of a" not in text
    text = plan(text, [("remove", "decision", "c")], BUDGETS).text
    assert ids(text) == ["a", "b"]
    text = plan(text, [("remove", "decision", "nope"), ("remove", "constraint", "a")], BUDGETS).text
    assert ids(text) == ["a", "b"] and "section=constraint" not in text  # removing creates nothing


def test_an_unchanged_upsert_changes_nothing_and_an_emptied_section_stays():
    text = plan("", up(entry("a")), BUDGETS).text
    assert not plan(text, up(entry("a")), BUDGETS).changed
    text = plan(text, [("remove", "decision", "a")], BUDGETS).text
    assert (
        text == "<!-- memcurate:begin section=decision budget=40 -->\n## Key Decisions\n"
        "<!-- memcurate:end section=decision -->\n"
    )
    assert parse(text).sections["decision"].entries == []


def test_untouched_sections_keep_their_bytes():
    decision = (
        "<!-- memcurate:begin section=decision budget=40 -->\r\n## Key Decisions   \r\n\r\n"
        "- [Keep](decision/keep.md) — kept  \r\n<!-- memcurate:end section=decision -->"
    )
    text = "top\n" + decision + "\nmiddle\n"
    p = plan(text, up(entry("x", "runbook")), BUDGETS)
    assert p.text.startswith(text) and "section=runbook" in p.text
    # touched: re-rendered, keeping its CRLF and its missing tail
    p = plan(text, up(entry("y")), BUDGETS)
    sec = p.text[len("top\n") : -len("\nmiddle\n")]
    assert sec == (
        "<!-- memcurate:begin section=decision budget=40 -->\r\n## Key Decisions\r\n"
        "- [Title of y](decision/y.md) — Why y matters\r\n- [Keep](decision/keep.md) — kept\r\n"
        "<!-- memcurate:end section=decision -->"
    )


@pytest.mark.parametrize(
    "title, description",
    [
        ("a | b with `code` and (parens)", "x — y | `z`"),
        (r"back\slash \[already] escaped", r"C:\path\[x]"),
        (
            "<!-- memcurate:end section=decision -->",
            "<!-- memcurate:begin section=decision budget=1 -->",
        ),
        ("日本語のタイトル 🚀", "naïve café"),
    ],
)
def test_titles_and_descriptions_round_trip(title, description):
    p = plan("", up(IndexLine("t", "decision", title, description)), BUDGETS)
    (got,) = parse(p.text).sections["decision"].entries
    assert (got.title, got.description) == (title, description)
    assert p.text.count("\n") == 4


def test_hostile_titles_cannot_add_a_line_or_a_link_target():
    hostile = IndexLine(
        "ok",
        "decision",
        "]]](evil)\n- [x](../../etc/passwd)",
        "desc\r\n<!-- memcurate:end section=decision -->\n- [y](/etc/shadow)\x1b[31m\u2028z",
    )
    p = plan("# mine\n", up(hostile), BUDGETS)
    lines = p.text.split("\n")
    entry_lines = [ln for ln in lines if ln.startswith("- ")]
    assert len(entry_lines) == 1 and len(lines) == len(
        plan("# mine\n", up(entry("ok")), BUDGETS).text.split("\n")
    )
    line = entry_lines[0]
    assert "\x1b" not in line and "\u2028" not in line and "\r" not in line
    # Every bracket but the link's own is escaped, so Markdown sees one link, to decision/ok.md.
    unescaped = re.sub(r"\\.", "", line)
    assert unescaped.count("[") == 1 and unescaped.count("]") == 1
    assert re.findall(r"\]\(([^)]*)\)", unescaped) == ["decision/ok.md"]
    assert "<!--" not in unescaped
    (got,) = parse(p.text).sections["decision"].entries
    assert got.id == "ok" and got.title == "]]](evil) - [x](../../etc/passwd)"


@pytest.mark.parametrize(
    "bad",
    [
        IndexLine("../../etc/passwd", "decision", "t", "d"),
        IndexLine("Upper", "decision", "t", "d"),
        IndexLine("ok", "../decision", "t", "d"),
        IndexLine("ok", "nonsense", "t", "d"),
    ],
)
def test_ids_and_categories_that_are_not_safe_are_refused(bad):
    with pytest.raises(MemoryMdError, match="change 1"):
        plan("", up(bad), BUDGETS)


def test_bad_change_shapes_are_refused():
    for bad in [("upsert", "a"), ("delete", "decision", "a"), ("remove", "decision", "../x"), ()]:
        with pytest.raises(MemoryMdError, match="change 1"):
            plan("", [bad], BUDGETS)


def test_long_text_is_cut_and_empty_title_falls_back_to_the_id():
    p = plan(
        "",
        up(
            IndexLine("a", "decision", "T" * 500, "D" * 500), IndexLine("b", "decision", " \n ", "")
        ),
        BUDGETS,
    )
    a, b = sorted(parse(p.text).sections["decision"].entries, key=lambda e: e.id)
    assert len(a.title) == 120 and a.title.endswith("…") and len(a.description) == 200
    assert b.title == "b" and "- [b](decision/b.md)\n" in p.text  # no dangling dash


# -- Claude's own lines --------------------------------------------------------------------------

ODD_CLAUDE = {
    "head": "\ufeff# Claude's memory  \r\n- user prefers tabs\t\r\n\r\nunicode: ünïcødé — 日本 🚀\n",
    "fence": (
        "```markdown\n<!-- memcurate:begin section=<name> budget=<n> -->\n"
        "<!-- memcurate: an example, not a marker -->\n```\n"
        "<!-- a plain comment -->\n<!--memcurate is nice-->\n"
    ),
    "between": "\n  between sections, CRLF\r\n\n",
    "tail": "\n~~~\nnot closed until here\n~~~\nno final newline, trailing spaces   ",
}


def odd_memory_md(cats=NAMES) -> str:
    parts = [ODD_CLAUDE["head"], ODD_CLAUDE["fence"]]
    for i, cat in enumerate(cats):
        parts.append(memory_md.render_section(cat, BUDGETS[cat], [], "\r\n" if i % 2 else "\n"))
        parts.append(ODD_CLAUDE["between"] if i < len(cats) - 1 else "")
    parts.append(ODD_CLAUDE["tail"])
    return "".join(parts)


# 36: 28 loaded lines with empty sections (markers are not
@pytest.mark.parametrize("max_lines", [200, 36])
# loaded), so the limit shrinks too
def test_claude_lines_survive_many_changes_with_overflows_byte_for_byte(tmp_path, max_lines):
    root = tmp_path / "memory"
    root.mkdir()
    original = odd_memory_md()
    (root / "MEMORY.md").write_bytes(original.encode())
    outside = non_memcurate(original)
    budgets = {
        "decision": 5,
        "constraint": 4,
        "runbook": 3,
        "tech_debt": 2,
        "preference": 2,
        "session_summary": 1,
    }
    cfg = cfg_with(budgets, max_lines=max_lines)
    rng = random.Random(7)
    alive: dict[str, set[str]] = {n: set() for n in NAMES}
    archived_any, shrank = 0, False
    for step in range(100):
        cat = rng.choice(NAMES)
        if alive[cat] and rng.random() < 0.25:
            victim = rng.choice(sorted(alive[cat]))
            changes = [("remove", cat, victim)]
            alive[cat].discard(victim)
        else:
            new_id = f"m{rng.randrange(40)}"  # some ids come back: re-upserts and re-archives
            changes = up(entry(new_id, cat, title=f"T{step} ]x[ `|`", desc=f"step {step}\nline"))
            alive[cat].add(new_id)
        result = apply(root, cfg, changes)
        archived_any += sum(len(v) for v in result.archived.values())
        shrank = shrank or any(note.startswith("shrank ") for note in result.notes)
        text = (root / "MEMORY.md").read_bytes().decode()
        assert memory_md.measure(text)[0] <= max_lines and not result.over_limit
        assert non_memcurate(text) == outside
        for n in NAMES:
            in_md, in_archive = set(ids(text, n)), archive_ids(root, n)
            assert len(in_archive) == len(set(in_archive))  # an id is archived at most once
            assert not in_md & set(in_archive)  # after a complete apply, never in both places
            assert in_md | set(in_archive) == alive[n]  # nothing lost, nothing removed comes back
            assert len(in_md) <= budgets[n]
    assert archived_any > 20
    if max_lines < 200:
        assert shrank
    assert text.endswith("no final newline, trailing spaces   ") and text.startswith(
        "\ufeff# Claude's memory  \r\n"
    )


def test_appending_new_sections_adds_only_line_breaks_outside_the_markers():
    original = odd_memory_md(cats=("decision",))
    outside = non_memcurate(original)
    p = plan(original, up(entry("a", "runbook"), entry("b", "preference")), BUDGETS)
    after = non_memcurate(p.text)
    # end the last line, a blank line, a blank line between the two sections; in the line break of the
    # file's first line (CRLF here)
    assert after == outside + "\r\n\r\n\r\n"


def test_a_byte_order_mark_before_a_section_stays():
    text = "\ufeff" + memory_md.render_section("decision", 40, [entry("a")])
    p = plan(text, up(entry("b")), BUDGETS)
    assert p.text.startswith("\ufeff<!-- memcurate:begin") and ids(p.text) == ["b", "a"]


def test_a_marker_looking_line_inside_a_code_fence_is_claude_text():
    text = "```\n<!-- memcurate:end section=<name> -->\n<!-- memcurate:begin whatever -->\n```\n"
    p = plan(text, up(entry("a")), BUDGETS)
    assert p.text.startswith(text) and ids(p.text) == ["a"]


def test_a_real_marker_inside_a_code_fence_is_not_guessed():
    text = "intro\n````md\n<!-- memcurate:begin section=decision budget=40 -->\n````\n"
    with pytest.raises(MemoryMdError, match=r"line 3: .*inside a code fence opened at line 2"):
        parse(text)


def test_no_section_is_appended_inside_a_fence_left_open():
    text = "notes\n```python\nprint('never closed')\n"
    assert parse(text).open_fence == 2
    with pytest.raises(MemoryMdError, match=r"line 2: a code fence opened here is never closed"):
        plan(text, up(entry("a")), BUDGETS)
    # an existing section before the open fence is still updated
    text = plan("", up(entry("a")), BUDGETS).text + "```\nopen\n"
    assert ids(plan(text, up(entry("b")), BUDGETS).text) == ["b", "a"]


# -- damaged markers -------------------------------------------------------------------------------

B = "<!-- memcurate:begin section=decision budget=40 -->"
E = "<!-- memcurate:end section=decision -->"
EC = "<!-- memcurate:end section=constraint -->"
BC = "<!-- memcurate:begin section=constraint budget=30 -->"
ROW = "- [A](decision/a.md) — d"


@pytest.mark.parametrize(
    "lines, line, what",
    [
        (["x", B, "## Key Decisions", ROW], 2, "has no end marker"),
        (["x", ROW, E], 3, "without a begin marker"),
        ([B, BC, EC, E], 2, "inside section 'decision'"),
        ([B, E, "", B, E], 4, "appears twice (first at line 1)"),
        ([B, EC], 2, "closes section 'decision' opened at line 1"),
        (
            ["<!-- memcurate:begin section=decisions budget=40 -->", E],
            1,
            "unknown section 'decisions'",
        ),
        (["<!-- memcurate:begin section=decision -->", E], 1, "without budget"),
        (
            ["<!-- memcurate:begin section=decision budget=40 --> trailing", E],
            1,
            "not a valid memcurate marker",
        ),
        (["<!-- memcurate:start section=decision -->"], 1, "unknown marker kind"),
        (["<!-- memcurate:end section=decision budget=4 -->"], 1, "unexpected budget="),
        (["<!-- memcurate: -->"], 1, "unknown marker kind"),
        (["<!-- memcurate:begin section=decision budget=40", E], 1, "not a valid memcurate marker"),
        ([B, "## Key Decisions", "a note of Claude's", E], 3, "a line memcurate does not own"),
        ([B, "- [A](decision/a.md — d", E], 2, "not an index entry"),
        ([B, "- [A](constraint/a.md) — d", E], 2, "another category"),
        ([B, ROW, ROW, E], 3, "appears twice (first at line 2)"),
        ([B, "## Key Decisions", "## Again", E], 3, "a line memcurate does not own"),
    ],
)
def test_damaged_markers_raise_naming_the_line_and_apply_writes_nothing(
    tmp_path, lines, line, what
):
    text = "\n".join(lines) + "\n"
    with pytest.raises(MemoryMdError) as info:
        parse(text)
    msg = str(info.value)
    assert msg.startswith(f"line {line}: ") and what in msg
    root = tmp_path / "memory"
    root.mkdir()
    (root / "MEMORY.md").write_bytes(text.encode())
    before = sorted(p.name for p in root.rglob("*"))
    with pytest.raises(MemoryMdError, match=rf"MEMORY\.md: line {line}: "):
        apply(root, cfg_with({"decision": 1}), up(entry("b"), entry("c")))
    with pytest.raises(MemoryMdError, match=rf"line {line}: "):
        usage(root, cfg_with())
    assert (root / "MEMORY.md").read_bytes() == text.encode()
    assert sorted(p.name for p in root.rglob("*")) == before


def test_markers_tolerate_surrounding_whitespace_and_crlf():
    text = (
        "  <!--   memcurate:begin   section=decision  budget=7 -->  \r\n## Key Decisions\r\n"
        "- [A](decision/a.md) — d  \r\n\t<!-- memcurate:end section=decision -->\r\n"
    )
    sec = parse(text).sections["decision"]
    assert (sec.budget, sec.line, sec.end_line, [e.id for e in sec.entries]) == (7, 1, 4, ["a"])


def test_non_utf8_memory_md_is_an_error_and_nothing_is_written(tmp_path):
    (tmp_path / "MEMORY.md").write_bytes(b"caf\xe9\n")
    with pytest.raises(MemoryMdError, match="not UTF-8"):
        apply(tmp_path, cfg_with(), up(entry("a")))
    assert (tmp_path / "MEMORY.md").read_bytes() == b"caf\xe9\n"


# -- budgets and the archive ---------------------------------------------------------------------


def test_overflow_moves_the_oldest_to_the_archive_newest_first_and_dedupes(tmp_path):
    cfg = cfg_with({"decision": 3})
    assert apply(tmp_path, cfg, up(entry("a"), entry("b"), entry("c"))).archived == {}
    result = apply(tmp_path, cfg, up(entry("d")))
    assert [e.id for e in result.archived["decision"]] == ["a"]
    assert result.notes == [
        "decision: 1 entry over its budget of 3 lines; moved the oldest to .archive/decision.md"
    ]
    assert not (tmp_path / ".archive" / "runbook.md").exists()
    md = (tmp_path / "MEMORY.md").read_text()
    assert ids(md) == ["d", "c", "b"]
    archive = (tmp_path / ".archive" / "decision.md").read_text()
    assert archive.startswith("# ") and archive.count("\n") == 3
    assert "- [Title of a](../decision/a.md) — Why a matters\n" in archive
    apply(tmp_path, cfg, up(entry("e")))
    assert archive_ids(tmp_path) == ["b", "a"]  # the newest archived on top
    # back into MEMORY.md: leaves the archive
    apply(tmp_path, cfg, up(entry("a", title="A is back")))
    assert ids((tmp_path / "MEMORY.md").read_text()) == ["a", "e", "d"]
    assert archive_ids(tmp_path) == ["c", "b"]
    apply(tmp_path, cfg, up(entry("f"), entry("g"), entry("h")))
    assert archive_ids(tmp_path) == ["a", "e", "d", "c", "b"]
    assert read_archive(tmp_path, "decision")[0].title == "A is back"
    apply(tmp_path, cfg, up(entry("c", title="C again")) + up(*[entry(f"z{i}") for i in range(3)]))
    # c comes back, then three newer entries push it (and h, g, f) out again: its old archive line is replaced
    assert archive_ids(tmp_path) == ["c", "h", "g", "f", "a", "e", "d", "b"]
    assert read_archive(tmp_path, "decision")[0].title == "C again"
    apply(tmp_path, cfg, [("remove", "decision", "b")])  # a removed memory leaves the archive too
    assert "b" not in archive_ids(tmp_path)


def test_the_archive_keeps_lines_that_are_not_entries(tmp_path):
    (tmp_path / ".archive").mkdir()
    (tmp_path / ".archive" / "decision.md").write_text(
        "# my header\nsome prose\n\n- [Old](../decision/old.md) — o\na trailing note"
    )
    apply(tmp_path, cfg_with({"decision": 1}), up(entry("a"), entry("b")))
    assert (tmp_path / ".archive" / "decision.md").read_text() == (
        "# my header\nsome prose\n\n- [Title of a](../decision/a.md) — Why a matters\n"
        "- [Old](../decision/old.md) — o\na trailing note\n"
    )


def test_plan_shows_what_an_approval_would_archive_and_writes_nothing(tmp_path):
    text = plan("", up(*[entry(f"e{i}", "tech_debt") for i in range(15)]), BUDGETS).text
    (tmp_path / "MEMORY.md").write_text(text)
    p = plan(text, up(entry("new", "tech_debt")), BUDGETS)
    assert [e.id for e in p.archived["tech_debt"]] == ["e0"]
    assert (tmp_path / "MEMORY.md").read_text() == text and not (tmp_path / ".archive").exists()


def test_the_archive_is_written_before_memory_md(tmp_path, monkeypatch):
    cfg = cfg_with({"decision": 1})
    apply(tmp_path, cfg, up(entry("a")))
    order = []
    real = memory_md.writing.write_text

    def recording(path, text, **kw):
        order.append(str(path))
        real(path, text, **kw)

    def crashing(path, render, **kw):
        # what is written to MEMORY.md is rendered first
        render((tmp_path / "MEMORY.md").read_bytes())
        order.append(str(path))
        raise OSError("disk full")  # a crash between the two writes

    monkeypatch.setattr(memory_md.writing, "write_text", recording)
    monkeypatch.setattr(memory_md.writing, "replace_if_unchanged", crashing)
    with pytest.raises(OSError):
        apply(tmp_path, cfg, up(entry("b")))
    assert order[0].endswith("archive/decision.md") and order[1].endswith("MEMORY.md")
    # the entry is in both places, never in neither; the next apply settles it
    assert ids((tmp_path / "MEMORY.md").read_text()) == ["a"] and archive_ids(tmp_path) == ["a"]
    monkeypatch.undo()
    apply(tmp_path, cfg, up(entry("b")))
    assert ids((tmp_path / "MEMORY.md").read_text()) == ["b"] and archive_ids(tmp_path) == ["a"]


def test_a_lowered_budget_applies_at_the_next_write():
    text = plan("", up(*[entry(f"e{i}") for i in range(10)]), BUDGETS).text
    p = plan(text, [], {**BUDGETS, "decision": 4})
    assert ids(p.text) == ["e9", "e8", "e7", "e6"] and "budget=4 " in p.text
    assert [e.id for e in p.archived["decision"]] == ["e5", "e4", "e3", "e2", "e1", "e0"]


# -- the 200-line / 25,000-character limits -------------------------------------------------------------------


def full_sections(text="") -> str:
    changes = [
        ("upsert", entry(f"{n.replace('_', '-')}-{i}", n)) for n in NAMES for i in range(BUDGETS[n])
    ]
    return plan(text, changes, BUDGETS, 10_000, 10_000_000).text


def test_claude_lines_leave_too_little_room_so_memcurate_shrinks_its_own_sections():
    claude = "".join(f"- Claude's own note {i}\n" for i in range(100))
    text = full_sections(claude)
    assert memory_md.measure(text)[0] > 200
    p = plan(text, up(entry("fresh")), BUDGETS)
    assert p.lines <= 200 and memory_md.measure(p.text) == (p.lines, p.chars)
    assert p.text.startswith(claude) and non_memcurate(p.text) == non_memcurate(text)
    after = parse(p.text).sections
    assert ids(p.text)[0] == "fresh"
    shrunk = [n for n in NAMES if len(after[n].entries) < BUDGETS[n]]
    assert shrunk and all(
        any(note.startswith(f"shrank {n} from ") and "200 lines" in note for note in p.notes)
        for n in shrunk
    )
    # fairly: every section keeps about the same share of its budget
    shares = [len(after[n].entries) / BUDGETS[n] for n in NAMES]
    assert max(shares) - min(shares) <= 0.15
    # nothing is lost: all that left MEMORY.md is in the plan's archive
    for n in NAMES:
        before = {e.id for e in parse(text).sections[n].entries} | (
            {"fresh"} if n == "decision" else set()
        )
        assert {e.id for e in after[n].entries} | {e.id for e in p.archived.get(n, [])} == before
        assert [e.id for e in after[n].entries] + [e.id for e in p.archived.get(n, [])] == ids(
            p.text, n
        ) + [e.id for e in p.archived.get(n, [])]


def test_the_character_limit_shrinks_too():
    claude = "".join(f"{i:03d} " + "x" * 595 + "\n" for i in range(30))  # 18 KB in 30 lines
    text = full_sections(claude)
    p = plan(text, up(entry("fresh")), BUDGETS)
    assert p.chars <= 25000 and p.lines < 200 and not loaded(p.text).cut
    assert any("25000 characters" in note and note.startswith("shrank ") for note in p.notes)
    assert p.text.startswith(claude)


def test_when_even_empty_sections_do_not_fit_they_stay_empty_and_claude_lines_stay(tmp_path):
    claude = "".join(f"line {i}\n" for i in range(199)) + "last line, no newline"
    text = plan(claude, up(entry("a"), entry("b", "runbook")), BUDGETS, 10_000, 10_000_000).text
    (tmp_path / "MEMORY.md").write_text(text)
    result = apply(tmp_path, cfg_with(), up(entry("c")))
    assert result.over_limit and result.lines > 200
    assert any(
        "even with memcurate's sections empty" in n and "200 lines" in n for n in result.notes
    )
    after = (tmp_path / "MEMORY.md").read_text()
    assert after.startswith(claude) and non_memcurate(after) == non_memcurate(text)
    assert {n: len(s.entries) for n, s in parse(after).sections.items()} == {
        "decision": 0,
        "runbook": 0,
    }
    assert archive_ids(tmp_path) == ["c", "a"] and archive_ids(tmp_path, "runbook") == ["b"]
    assert any("no room in MEMORY.md for c" in n for n in result.notes)


# -- files and numbers -----------------------------------------------------------------------------


def test_apply_on_a_missing_memory_md(tmp_path):
    root = tmp_path / "fresh-root"
    apply(root, cfg_with(), [("remove", "decision", "a")])
    assert not root.exists()  # nothing to write
    apply(root, cfg_with(), up(entry("a")))
    assert ids((root / "MEMORY.md").read_text()) == ["a"]


def test_usage_numbers(tmp_path, project):
    cfg = config.load(project)
    assert usage(tmp_path, cfg).as_dict() == {
        "sections": {n: {"used": 0, "budget": BUDGETS[n]} for n in NAMES},
        "removed": [],
        "total": {
            "lines": 0,
            "chars": 0,
            "max_lines": 200,
            "max_chars": 25000,
            "entries": 0,
            "cut": False,
            "bytes": 0,
        },
    }
    (tmp_path / "MEMORY.md").write_text("# Claude\nnote\n")
    apply(tmp_path, cfg, up(entry("a"), entry("b"), entry("r", "runbook")))
    u = usage(tmp_path, cfg).as_dict()
    assert u["sections"]["decision"] == {"used": 2, "budget": 40}
    assert u["sections"]["runbook"] == {"used": 1, "budget": 20}
    assert u["sections"]["preference"] == {"used": 0, "budget": 15}
    data = (tmp_path / "MEMORY.md").read_bytes()
    # Claude Code drops the 4 marker lines and the blank line after an end marker
    seen = loaded(data.decode())
    assert seen.total_lines == data.count(b"\n") - 5 and not seen.cut
    assert u["total"] == {
        "lines": seen.total_lines,
        "chars": seen.total_chars,
        "max_lines": 200,
        "max_chars": 25000,
        "entries": 3,
        "cut": False,
        "bytes": len(data),
    }


def test_budgets_come_from_the_config(tmp_path, project):
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text(
        "categories:\n  runbook:\n    budget: 2\nmemory_md:\n  max_lines: 150\n"
    )
    cfg = config.load(project)
    assert memory_md.budgets_from(cfg)["runbook"] == 2 and memory_md.limits_from(cfg) == (
        150,
        25000,
    )
    apply(tmp_path, cfg, up(*[entry(f"r{i}", "runbook") for i in range(3)]))
    assert usage(tmp_path, cfg).as_dict()["sections"]["runbook"] == {"used": 2, "budget": 2}
    assert archive_ids(tmp_path, "runbook") == ["r0"]


def test_a_plan_over_130_entries_parses_the_file_once_and_not_at_all_when_given_it(monkeypatch):
    """Its cost (bench/engine_bench.py times it) is one parse of MEMORY.md, none when the caller has
    parsed it already: every save of an --auto-approve run plans over the same text."""
    from memcurate.curator.memory.memory_md import planning

    text = full_sections("".join(f"note {i}\n" for i in range(40)))
    parsed = parse(text)
    change = up(entry("fresh"))
    calls = []
    real = planning.parse
    monkeypatch.setattr(planning, "parse", lambda t: calls.append(t) or real(t))
    fresh = plan(text, change, BUDGETS)
    assert len(calls) == 1
    calls.clear()
    given = plan(text, change, BUDGETS, parsed=parsed)
    assert calls == [] and given == fresh
