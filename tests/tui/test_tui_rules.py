"""Rule graduation in the review TUI: a failure that recurred in three sessions (counted by the real
ledger, from real pytest output with other temp paths each time) is a row of category `rule` and a
line of the graduation panel; selected, it shows the rule file to be and the evidence as data; `a`
writes the rule file, `e` edits its text, topic and paths (refused with the reason when invalid), `r`
rejects it for good; the keys that do not apply are greyed out and say why.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from scenarios import COMMAND, PYTEST, proj_files, recurring, seen, seen_output  # noqa: F401
from test_tui import press, row_text, run, select, shown, table, text_of, type_text
from test_tui_claude_writes import document, said
from textual.widgets import Input, TextArea
from tui_helpers import engine_factory, tui, until, watching

from memcurate.curator.review import rule_actions
from memcurate.curator.rules import candidates
from memcurate.curator.util.paths import data_dir
from memcurate.widgets.app import NOT_FOR_RULE
from memcurate.widgets.dialogs import HelpScreen, ReasonDialog, RuleEditScreen
from memcurate.widgets.panels import GraduationView, IssuesView


@pytest.fixture
def proj(project, tmp_path) -> tuple[Path, Path]:
    """A project with the files the failure names, and its memory root."""
    proj_files(project)
    memory = tmp_path / "memory"
    engine_factory(project, memory)  # writes the offline config
    return project, memory


def rule_files(project: Path) -> dict[str, str]:
    folder = project / ".claude" / "rules"
    return {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*") if p.is_file()}


def graduation(app) -> str:
    """The graduation panel's text as shown."""
    console = Console(width=200, record=True, color_system=None, file=io.StringIO())
    console.print(app.query_one(GraduationView).content)
    return console.export_text()


def with_candidate(proj) -> tuple[Path, str, object, list]:
    """The failure recurred in three sessions, and the app over the project: (project, key, app, what it said)."""
    project, memory = proj
    key = recurring(project)
    app = tui(project, memory)
    return project, key, app, said(app)


def candidate(project: Path, key: str):
    return candidates.load(data_dir(project), key)


# -- the row, the panel and the evidence ---------------------------------------------------------


def test_a_failure_seen_in_three_sessions_is_a_rule_row_with_its_evidence_and_in_the_panel(proj):
    project, memory = proj
    seen(project, 1)
    seen(project, 2)
    app = tui(project, memory)

    async def before(pilot):  # two sessions: below the threshold, nothing to review
        assert shown(app) == []
        assert "Nothing recurring yet." in graduation(app)

    run(app, before)
    key = recurring(project)
    app = tui(project, memory)

    async def scenario(pilot):
        assert shown(app) == ["rule"]
        [item] = table(app).shown
        assert item.tid == f"rule/{key}"  # the id memcurate approve takes
        rule = rule_actions.view(app.engine, key)["rule"]
        cells = row_text(app, 0)
        # the rule text is the title (fitted)
        assert rule and rule.startswith(cells["title"].rstrip("…"))
        assert cells["action"] == "seen 3×"
        panel = graduation(app)
        assert "Rule graduation 1" in panel and "3× " + rule[:10] in panel

        await select(pilot, "rule")
        text = document(app)
        topic_file = rule_actions.view(app.engine, key)["plan"]["file"]
        assert f"Approving writes {topic_file} (a new file)" in text and topic_file.startswith(
            ".claude/rules/memcurate/"
        )
        assert "applies to: tests/" in text
        assert f"<!-- memcurate:rule/{key} -->" in text  # the file as approving writes it
        assert "failed the same way in 3 sessions" in text
        assert "kind test  tool pytest" in text and "tests/test_store.py::test_save" in text
        assert text.count(f"$ {COMMAND}") == 3
        assert "2026-11-13 09:33 session session-3" in text
        # terminal output is data: its markup is shown, not applied; its escapes are gone
        assert "[bold red]no data dir[/bold red]" in text and "\x1b" not in text
        assert "fixed by: create the data dir in a fixture first (tests/test_store.py)" in text
        assert text_of(app.query_one(IssuesView)) == "No issues."

    run(app, scenario)


# -- a, e, r -----------------------------------------------------------------------------------


def test_a_writes_the_rule_file_names_it_and_the_row_goes(proj):
    project, key, app, told = with_candidate(proj)

    async def scenario(pilot):
        await select(pilot, "rule")
        view = rule_actions.view(app.engine, key)
        await press(pilot, "a")
        assert rule_files(project) == {
            view["plan"]["file"].removeprefix(".claude/rules/"): view["plan"]["after"]
        }
        text = (project / view["plan"]["file"]).read_text()
        assert view["rule"] in text and "paths:" in text and "tests/" in text
        assert candidate(project, key).state == "approved"
        assert told[-1] == (f"rule written: {view['plan']['file']}", "information")
        assert shown(app) == [] and table(app).border_title.startswith("Pending 0")
        assert "Nothing recurring yet." in graduation(app)

    run(app, scenario)


def test_a_refuses_a_rule_drafted_after_it_was_shown_and_the_row_shows_the_draft(proj):
    """The person saw the offline text; a model's draft stored meanwhile (headless `list --draft`) is not
    written by their `a`: refused, nothing written, and the row reloads with the draft to look at."""
    project, key, app, told = with_candidate(proj)
    drafted = "Create the data folder in a fixture before a test saves into it"

    async def scenario(pilot):
        await select(pilot, "rule")
        offline = rule_actions.view(app.engine, key)["rule"]
        assert table(app).shown[0].title == offline and offline in document(app)
        candidates.set_draft(
            data_dir(project),
            key,
            {
                "rule": drafted,
                "topic": "testing",
                "paths": ["tests/**/*.py"],
                "by": "claude",
                "model": "m",
                "at": "2026-11-20T10:00:00Z",
            },
        )
        await press(pilot, "a")
        assert told[-1][1] == "error" and "changed since you looked: look again" in told[-1][0]
        assert (
            not (project / ".claude" / "rules").exists()
            and candidate(project, key).state == "pending"
        )
        assert table(app).shown[0].title == drafted and drafted in document(app)
        await press(pilot, "a")  # now seen: written
        assert (
            drafted in "".join(rule_files(project).values())
            and candidate(project, key).state == "approved"
        )

    run(app, scenario)


async def edit_dialog(
    pilot, rule: str | None = None, topic: str | None = None, paths: str | None = None
):
    """Open the rule edit dialog, change what is given, and save (Ctrl+S)."""
    await press(pilot, "e")
    screen = pilot.app.screen
    assert isinstance(screen, RuleEditScreen)
    if rule is not None:
        screen.query_one("#rule-text", TextArea).text = rule
    if topic is not None:
        screen.query_one("#rule-topic", Input).value = topic
    if paths is not None:
        screen.query_one("#rule-paths", TextArea).text = paths
    await press(pilot, "ctrl+s")
    return screen


def test_e_changes_the_text_topic_and_paths_and_a_writes_the_edited_rule(proj):
    project, key, app, _ = with_candidate(proj)

    async def scenario(pilot):
        await select(pilot, "rule")
        await press(pilot, "e")
        screen = app.screen
        assert isinstance(screen, RuleEditScreen)  # it opens on the text under review
        assert (
            screen.query_one("#rule-text", TextArea).text
            == rule_actions.view(app.engine, key)["rule"]
        )
        assert screen.query_one("#rule-paths", TextArea).text.startswith("tests/")
        await press(pilot, "escape")
        assert not isinstance(app.screen, RuleEditScreen) and candidate(project, key).edit is None

        new = "Create the data folder in a fixture before a test saves into it"
        await edit_dialog(pilot, rule=new, topic="Test Data", paths="tests/**/*.py\napp/store.py\n")
        assert not isinstance(app.screen, RuleEditScreen)
        assert candidate(project, key).edit == {
            "rule": new,
            "topic": "test-data",
            "paths": ["tests/**/*.py", "app/store.py"],
        }
        assert table(app).shown[0].title == new
        assert "Approving writes .claude/rules/memcurate/test-data.md" in document(app)

        await press(pilot, "a")
        assert list(rule_files(project)) == ["memcurate/test-data.md"]
        text = (project / ".claude" / "rules" / "memcurate" / "test-data.md").read_text()
        assert new in text and '"tests/**/*.py"' in text and '"app/store.py"' in text
        assert shown(app) == []

    run(app, scenario)


def test_an_invalid_glob_is_refused_in_the_dialog_with_its_reason_and_nothing_is_saved(proj):
    project, key, app, _ = with_candidate(proj)

    async def scenario(pilot):
        await select(pilot, "rule")
        screen = await edit_dialog(
            pilot, rule="Something else entirely", paths="tests/**/*.py\n/etc/*.conf\n"
        )
        assert app.screen is screen  # still open, with the reason
        problem = text_of(screen.query_one("#rule-problems"))
        assert "'/etc/*.conf' is not relative to the project" in problem
        assert candidate(project, key).edit is None  # nothing saved
        assert table(app).shown[0].title != "Something else entirely"

        screen.query_one("#rule-paths", TextArea).text = "tests/**/*.py\n"  # corrected: saved
        await press(pilot, "ctrl+s")
        assert app.screen is not screen
        assert candidate(project, key).edit["paths"] == ["tests/**/*.py"]

    run(app, scenario)


def test_r_with_a_reason_rejects_it_and_the_failure_is_not_proposed_again(proj):
    project, key, app, told = with_candidate(proj)

    async def scenario(pilot):
        await select(pilot, "rule")
        await press(pilot, "r")
        assert isinstance(app.screen, ReasonDialog)
        await type_text(pilot, "flaky machine, not a lesson")
        await press(pilot, "enter")
        assert shown(app) == [] and "Nothing recurring yet." in graduation(app)
        assert told[-1][1] == "information" and "rejected the rule" in told[-1][0]
        rejected = candidate(project, key)
        assert (
            rejected.state == "rejected"
            and rejected.decision["reason"] == "flaky machine, not a lesson"
        )

    run(app, scenario)
    assert not seen(project, 4).staged  # a fourth session: counted, never proposed again
    app = tui(project, proj[1])

    async def later(pilot):
        assert shown(app) == [] and rule_files(project) == {}

    run(app, later)


# -- keys that do not apply ---------------------------------------------------------------------


def test_keys_that_do_not_apply_to_a_rule_are_greyed_out_and_say_why(proj):
    _, _, app, told = with_candidate(proj)

    async def scenario(pilot):
        await select(pilot, "rule")
        for key, action in (("E", "edit_external"), ("c", "change_action"), ("x", "retry_memory")):
            assert app.check_action(action, ()) is None, action
            await press(pilot, key)
            assert told[-1] == (NOT_FOR_RULE[action], "warning"), key
            assert app.screen is app.screen_stack[0]  # nothing opened
        assert app.check_action("approve_clean", ()) is None  # A approves memory drafts only
        for action in ("approve_memory", "edit_memory", "reject_memory"):
            assert app.check_action(action, ()), action
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        help_text = " ".join(text_of(w) for w in app.screen.query("Static"))
        assert "Rows of category rule" in help_text and "A leaves them to you" in help_text

    run(app, scenario)


def test_a_rule_whose_file_cannot_be_written_shows_why_and_a_is_greyed(proj):
    project, memory = proj
    key = recurring(project)
    (project / ".claude" / "rules").mkdir(parents=True)
    (project / ".claude" / "rules" / "memcurate").write_text("a file where the rules folder goes\n")
    app = tui(project, memory)
    told = said(app)

    async def scenario(pilot):
        assert "BLOCK" in row_text(app, 0)["issues"]
        await select(pilot, "rule")
        issues = text_of(app.query_one(IssuesView))
        assert issues.startswith("BLOCK") and "is not a folder" in issues
        assert "Cannot be written" in document(app)
        assert app.check_action("approve_memory", ()) is None
        await press(pilot, "a")
        assert told[-1][1] == "warning" and told[-1][0].startswith("this rule cannot be written:")
        assert "is not a folder" in told[-1][0]
        assert candidate(project, key).state == "pending"
        assert (
            project / ".claude" / "rules" / "memcurate"
        ).read_text() == "a file where the rules folder goes\n"

    run(app, scenario)


# -- live --------------------------------------------------------------------------------------


def test_a_candidate_staged_while_the_app_runs_appears_and_leaves_when_decided_elsewhere(proj):
    project, memory = proj
    seen(project, 1)
    seen(project, 2)
    app = tui(project, memory, watch=True)

    async def scenario(pilot):
        await watching(pilot)
        assert shown(app) == []
        key = seen(project, 3).key  # the third session, as the failure hook records it
        await until(pilot, lambda: shown(app) == ["rule"], "the candidate to appear")
        assert "3× " in graduation(app)
        # approved in another terminal (memcurate approve): the row goes
        engine = engine_factory(project, memory)()
        try:
            rule_actions.approve(engine, key)
        finally:
            engine.close()
        await until(pilot, lambda: shown(app) == [], "the approved candidate to leave")
        assert "Nothing recurring yet." in graduation(app)

    run(app, scenario)
