"""The rule files memcurate writes (curator/rules/rulefile.py): `.claude/rules/memcurate/<topic>.md`,
read by Claude Code. Created, extended, never written twice, never widened, other files untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from memcurate.curator.rules import rulefile
from memcurate.curator.rules.rulefile import RuleFileError, plan, write

K1, K2, K3 = "3f2a9c01d4e5", "0b1c2d3e4f50", "aaaabbbbcccc"
TESTS = ["tests/**/*.py"]


def rules(project: Path) -> Path:
    return project / ".claude" / "rules" / "memcurate"


def approve(
    project: Path, key: str, rule: str, topic: str = "testing", paths=TESTS
) -> rulefile.RulePlan:
    p = plan(project, key, rule, topic, paths)
    assert p.error == "", p.error
    write(p)
    return p


def front_matter_paths(text: str):
    assert text.startswith("---\n")
    inside = text[4 : text.index("\n---\n", 4) + 1]
    return yaml.safe_load(inside)


def test_a_new_rule_creates_its_topic_file_with_paths_claude_code_reads(project):
    p = approve(
        project,
        K1,
        "Use the `tmp_path` fixture for files a test writes.",
        paths=["tests/**/*.py", "src/**/*.{ts,tsx}", 'odd "quoted" #glob: x'],
    )
    text = (rules(project) / "testing.md").read_text()
    assert (
        p.action == "create"
        and p.before is None
        and p.rel == os.path.join(".claude", "rules", "memcurate", "testing.md")
    )
    assert front_matter_paths(text) == {
        "paths": ["tests/**/*.py", "src/**/*.{ts,tsx}", 'odd "quoted" #glob: x']
    }
    assert (
        "- Use the `tmp_path` fixture for files a test writes. <!-- memcurate:rule/3f2a9c01d4e5 -->\n"
        in text
    )
    assert p.after == text and "+# Testing" in p.diff


def test_a_project_wide_rule_has_no_front_matter(project):
    approve(project, K1, "Run `make lint` before committing.", "lint", [])
    text = (rules(project) / "lint.md").read_text()
    assert text.startswith("# Lint\n") and "---" not in text


def test_the_same_topic_and_paths_is_extended_and_nothing_else_changes(project):
    approve(project, K1, "Use the `tmp_path` fixture.")
    before = (rules(project) / "testing.md").read_bytes()
    p = approve(project, K2, "Run `pytest -x tests/test_store.py` after changing the store.")
    after = (rules(project) / "testing.md").read_bytes()
    assert p.action == "extend" and after.startswith(before)
    assert (
        after[len(before) :] == b"- Run `pytest -x tests/test_store.py` after changing the store. "
        b"<!-- memcurate:rule/0b1c2d3e4f50 -->\n"
    )
    assert sorted(os.listdir(rules(project))) == ["testing.md"]


def test_a_file_whose_paths_include_the_rules_is_extended(project):
    approve(project, K1, "One.", paths=["tests/**/*.py", "src/**/*.py"])
    assert approve(project, K2, "Two.", paths=["src/**/*.py"]).action == "extend"


def test_other_paths_go_to_a_sibling_file_and_never_widen_the_existing_one(project):
    approve(project, K1, "One.", paths=["tests/**/*.py"])
    before = (rules(project) / "testing.md").read_bytes()
    p = approve(project, K2, "Two.", paths=["tests/**/*.py", "src/**/*.py"])
    assert p.rel.endswith("testing-2.md") and p.action == "create"
    p = approve(project, K3, "Three.", paths=[])  # project-wide: neither scoped file
    assert p.rel.endswith("testing-3.md")
    assert (rules(project) / "testing.md").read_bytes() == before
    assert front_matter_paths((rules(project) / "testing-2.md").read_text()) == {
        "paths": ["tests/**/*.py", "src/**/*.py"]
    }


def test_the_same_key_twice_is_a_noop(project):
    approve(project, K1, "Use the `tmp_path` fixture.")
    before = (rules(project) / "testing.md").read_bytes()
    p = plan(project, K1, "Something worded otherwise.", "other-topic", ["lib/**"])
    assert (p.action, p.error, p.rel) == (
        "noop",
        "",
        os.path.join(".claude", "rules", "memcurate", "testing.md"),
    )
    assert write(p) == str(rules(project) / "testing.md")
    assert (rules(project) / "testing.md").read_bytes() == before and sorted(
        os.listdir(rules(project))
    ) == ["testing.md"]


def test_the_same_text_under_another_key_is_a_noop(project):
    approve(project, K1, "Use the `tmp_path` fixture.")
    p = plan(project, K2, "  use the `TMP_PATH`   fixture ", "testing", TESTS)
    assert p.action == "noop"


def test_a_hand_broken_front_matter_is_never_rewritten(project):
    folder = rules(project)
    folder.mkdir(parents=True)
    broken = b'---\npaths: ["tests/**/*.py"\n---\n# Testing\n\n- x <!-- memcurate:rule/0b1c2d3e4f50 -->\n'
    (folder / "testing.md").write_bytes(broken)
    p = plan(project, K1, "Use the `tmp_path` fixture.", "testing", TESTS)
    assert p.error and "testing.md" in p.error and "front matter" in p.error
    with pytest.raises(RuleFileError):
        write(p)
    assert (folder / "testing.md").read_bytes() == broken and os.listdir(folder) == ["testing.md"]


@pytest.mark.parametrize(
    "text",
    [
        '---\npaths:\n  - "tests/**"\ndescription: mine\n---\n- x <!-- memcurate:rule/0b1c2d3e4f50 -->\n',  # other keys
        "# My own notes on testing\n\nWrite tests first.\n",  # not memcurate's (no marker)
        '---\npaths:\n  - "tests/**"\n',  # never closed
        "# T\n\n- x <!-- memcurate:rule/0b1c2d3e4f50 -->\n```\ncode\n",  # ends in a code block
    ],
)
def test_a_topic_file_not_of_memcurate_shape_is_left_alone_with_the_reason(project, text):
    folder = rules(project)
    folder.mkdir(parents=True)
    (folder / "testing.md").write_text(text)
    p = plan(project, K1, "Use the `tmp_path` fixture.", "testing", ["tests/**"])
    assert p.error.startswith(
        os.path.join(".claude", "rules", "memcurate", "testing.md") + " is left alone: "
    )
    assert (folder / "testing.md").read_text() == text


def test_other_rules_files_stay_byte_identical(project):
    claude_rules = project / ".claude" / "rules"
    (claude_rules / "team").mkdir(parents=True)
    theirs = {
        claude_rules / "style.md": b"---\npaths: src/**\n---\nbroken on purpose: [\n",
        claude_rules / "team" / "testing.md": b"# Testing\n- our own rule\n",
        rules(project) / "notes.txt": b"a person's note\n",
        rules(project) / "mine.md": b"# Mine\n\nno marker here\n",
    }
    (rules(project)).mkdir(parents=True)
    for path, data in theirs.items():
        path.write_bytes(data)
    approve(project, K1, "One.", "testing")
    approve(project, K2, "Two.", "testing")
    approve(project, K3, "Three.", "mine-too")
    assert {p: p.read_bytes() for p in theirs} == theirs


@pytest.mark.parametrize(
    "paths,why",
    [
        (["/etc/**"], "not relative"),
        (["~/x/**"], "not relative"),
        (["C:/x"], "not relative"),
        (["src/../../etc/*"], "`..`"),
        (["./src/**"], "`.`"),
        (["src//x"], "empty"),
        ([""], "empty"),
        (["src/\n- evil"], "control"),
        (["src/\x00"], "control"),
        (["src/\u2028x"], "control"),
        ([" src/**"], "blanks"),
        (["x" * 201], "longer than 200"),
        ([f"d{i}/**" for i in range(21)], "at most 20"),
        ("src/**", "a list"),
        ([3], "empty"),
    ],
)
def test_invalid_globs_are_refused_before_anything_is_written(project, paths, why):
    p = plan(project, K1, "A rule.", "testing", paths)
    assert why in p.error
    with pytest.raises(RuleFileError):
        write(p)
    assert not (project / ".claude").exists()


@pytest.mark.parametrize(
    "rule,why",
    [
        ("", "empty"),
        ("two\nlines", "one line"),
        ("x" * 301, "at most 300"),
        ("sneaky <!-- memcurate:rule/aaaabbbbcccc -->", "comment"),
        ("Export ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 first.", "secret"),
        ("bell\x07", "control"),
    ],
)
def test_a_rule_text_that_cannot_go_in_a_file_is_refused(project, rule, why):
    assert why in plan(project, K1, rule, "testing", TESTS).error
    assert not (project / ".claude").exists()


@pytest.mark.parametrize(
    "topic,name",
    [
        ("Testing", "testing"),
        ("../../etc/passwd", "etc-passwd"),
        ("CON", "con-rules"),
        ("lpt1", "lpt1-rules"),
        ("ünïcödé", "unicode"),
        ("", "rules"),
        (".hidden", "hidden"),
        ("..", "rules"),
        ("a/b\\c", "a-b-c"),
        ("日本語", "rules"),
        ("x" * 60, "x" * 40),
        ("Type checks (mypy)!", "type-checks-mypy"),
        (None, "rules"),
    ],
)
def test_topics_become_safe_file_names(project, topic, name):
    assert rulefile.topic_name(topic) == name
    p = plan(project, K1, "A rule.", topic, TESTS)
    assert p.error == "" and os.path.basename(p.path) == f"{name}.md"
    assert os.path.dirname(p.path) == str(rules(project))


def test_a_change_between_plan_and_write_is_refused(project):
    approve(project, K1, "One.")
    p = plan(project, K2, "Two.", "testing", TESTS)
    with open(rules(project) / "testing.md", "a") as f:
        f.write("- a person's line\n")
    changed = (rules(project) / "testing.md").read_bytes()
    with pytest.raises(RuleFileError, match="changed since"):
        write(p)
    assert (rules(project) / "testing.md").read_bytes() == changed


def test_a_file_created_between_plan_and_write_is_not_overwritten(project):
    p = plan(project, K1, "One.", "testing", TESTS)
    rules(project).mkdir(parents=True)
    (rules(project) / "testing.md").write_text("theirs\n")
    with pytest.raises(RuleFileError, match="changed since"):
        write(p)
    assert (rules(project) / "testing.md").read_text() == "theirs\n"


def test_a_rules_folder_linked_out_of_the_project_is_refused(project, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (project / ".claude" / "rules").mkdir(parents=True)
    rules(project).symlink_to(outside, target_is_directory=True)
    p = plan(project, K1, "One.", "testing", TESTS)
    assert "outside the project" in p.error
    with pytest.raises(RuleFileError):
        write(p)
    assert os.listdir(outside) == []


def test_a_topic_file_that_is_a_symlink_is_never_written_through(project, tmp_path):
    target = tmp_path / "target.md"
    target.write_text("# T\n\n- x <!-- memcurate:rule/0b1c2d3e4f50 -->\n")
    rules(project).mkdir(parents=True)
    (rules(project) / "testing.md").symlink_to(target)
    p = plan(project, K1, "One.", "testing", TESTS)
    assert "testing.md is left alone" in p.error
    assert target.read_text() == "# T\n\n- x <!-- memcurate:rule/0b1c2d3e4f50 -->\n"


def test_the_guard_and_the_writer_share_one_folder_name():
    from memcurate.curator.util import paths
    from memcurate.hooks import guard

    assert paths.RULES_DIR == os.path.join(".claude", "rules", "memcurate")
    assert "RULES_DIR" in vars(guard) and not hasattr(guard, "RULES")


@pytest.mark.parametrize(
    "glob", ["{src,lib}/**/*.ts", "*.py", "*: x", "- y", "#notes/**", "[ab]/**", "yes"]
)
def test_front_matter_is_parsed_back_before_writing(project, monkeypatch, glob):
    """Emitted unquoted, these globs would read back as something else (a mapping, a comment...): the
    read-back refuses them rather than write a rule Claude Code would load everywhere."""
    assert plan(project, K1, "One.", "testing", [glob]).error == ""  # quoted: fine
    monkeypatch.setattr(
        rulefile,
        "front_matter",
        lambda paths: "---\npaths:\n" + "".join(f"  - {g}\n" for g in paths) + "---\n",
    )
    assert "would not read back" in plan(project, K1, "One.", "testing", [glob]).error


def test_two_approvals_racing_for_one_file_lose_nothing(project):
    approve(project, K1, "One.")
    first, second = (
        plan(project, K2, "Two.", "testing", TESTS),
        plan(project, K3, "Three.", "testing", TESTS),
    )
    write(first)
    with pytest.raises(RuleFileError, match="changed since"):
        write(second)
    write(plan(project, K3, "Three.", "testing", TESTS))  # planned again: on top of the first
    text = (rules(project) / "testing.md").read_text()
    assert [line.split(" <!--")[0] for line in text.splitlines() if line.startswith("- ")] == [
        "- One.",
        "- Two.",
        "- Three.",
    ]


def test_a_full_disk_is_a_clear_error_and_the_file_stays_as_it_was(project, monkeypatch):
    import errno

    from memcurate.curator.util import atomic

    approve(project, K1, "One.")
    before = (rules(project) / "testing.md").read_bytes()
    p = plan(project, K2, "Two.", "testing", TESTS)

    def full(path, *a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)

    monkeypatch.setattr(atomic, "_temp_file", full)
    with pytest.raises(RuleFileError, match="testing.md not written: .*No space left on device"):
        write(p)
    assert (rules(project) / "testing.md").read_bytes() == before
    assert os.listdir(rules(project)) == ["testing.md"]


def test_an_extended_file_keeps_its_permissions_and_its_crlf_line_endings(project):
    """A memcurate-shaped file someone made 0600 and saved with CRLF: the bullet appended is CRLF too
    and the file stays 0600 (every byte before the new bullet kept)."""
    approve(project, K1, "Use the `tmp_path` fixture.")
    path = rules(project) / "testing.md"
    crlf = path.read_bytes().replace(b"\n", b"\r\n")
    path.write_bytes(crlf)
    path.chmod(0o600)
    p = approve(project, K2, "Run `pytest -x tests/test_store.py` after changing the store.")
    assert p.action == "extend"
    after = path.read_bytes()
    assert (
        after == crlf + b"- Run `pytest -x tests/test_store.py` after changing the store. "
        b"<!-- memcurate:rule/0b1c2d3e4f50 -->\r\n"
    )
    assert os.stat(path).st_mode & 0o777 == 0o600


def test_a_crlf_file_without_a_final_newline_gets_one_of_its_own_style(project):
    approve(project, K1, "Use the `tmp_path` fixture.")
    path = rules(project) / "testing.md"
    crlf = path.read_bytes().replace(b"\n", b"\r\n").removesuffix(b"\r\n")
    path.write_bytes(crlf)
    approve(project, K2, "Check the data folder exists first.")
    assert (
        path.read_bytes()
        == crlf
        + b"\r\n- Check the data folder exists first. <!-- memcurate:rule/0b1c2d3e4f50 -->\r\n"
    )


def test_the_diff_of_a_file_without_a_final_newline_says_so(project):
    """Without `\\ No newline at end of file` the old last line and the next line of the diff run together."""
    approve(project, K1, "Use the `tmp_path` fixture.")
    path = rules(project) / "testing.md"
    text = path.read_text().removesuffix("\n")
    path.write_text(text)
    p = plan(project, K2, "Check the data folder exists first.", "testing", TESTS)
    last = text.rsplit("\n", 1)[1]
    assert (
        f"-{last}\n\\ No newline at end of file\n+{last}\n+- Check the data folder exists first."
        in p.diff
    )
    assert all(line[:1] in "-+ @\\" for line in p.diff.splitlines()), p.diff
