"""The key registry (widgets/actions.py): every key a person can press in the queue or the library is bound
to an action that exists, named verb_noun, and is listed by ? with what it does, so no key goes
undocumented and no help row names a key that does nothing."""

from __future__ import annotations

import asyncio
import re

import pytest
from tui_helpers import settle, tui

from memcurate.widgets.actions import (
    LIBRARY_ACTIONS,
    LIBRARY_HELP_EXTRA,
    QUEUE_ACTIONS,
    QUEUE_HELP_EXTRA,
    WHERE,
    help_rows,
)
from memcurate.widgets.app import MemcurateApp
from memcurate.widgets.dialogs import HelpScreen
from memcurate.widgets.library import LibraryScreen

VERB_NOUN = re.compile(r"[a-z]+(_[a-z]+)+")
# textual's own action, bound under its own name
TEXTUALS = {"quit"}
TABLES = [(MemcurateApp, QUEUE_ACTIONS), (LibraryScreen, LIBRARY_ACTIONS)]


@pytest.mark.parametrize(("owner", "actions"), TABLES, ids=["queue", "library"])
def test_every_binding_is_a_registered_verb_noun_action_that_exists(owner, actions):
    bound = [(b.key, b.action) for b in owner.BINDINGS]
    assert bound == [(a.keys, a.action) for a in actions]
    for a in actions:
        assert a.action in TEXTUALS or VERB_NOUN.fullmatch(a.action), a.action
        assert callable(getattr(owner, f"action_{a.action}", None)), f"{owner.__name__}: {a.action}"
        assert a.where in WHERE, a
        assert a.label and a.description, a


@pytest.mark.parametrize(("owner", "actions"), TABLES, ids=["queue", "library"])
def test_no_key_is_bound_twice_and_each_says_what_it_does(owner, actions):
    keys = [b.key for b in owner.BINDINGS]
    assert len(keys) == len(set(keys))
    for binding, a in zip(owner.BINDINGS, actions, strict=True):
        assert (binding.description, binding.tooltip) == (a.label, a.description)
        assert binding.key_display and binding.key_display != "slash"


@pytest.fixture
def memory(tmp_path):
    return tmp_path / "memory"


def test_help_in_the_queue_and_in_the_library_lists_every_binding(project, memory):
    app = tui(project, memory, run_pipeline=False)
    shown: dict[type, list[tuple[str, str]]] = {}

    async def main() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            for opens, owner in (((), MemcurateApp), (("l",), LibraryScreen)):
                for key in opens:
                    await pilot.press(key)
                    await settle(pilot)
                await pilot.press("question_mark")
                await settle(pilot)
                assert isinstance(app.screen, HelpScreen)
                shown[owner] = list(app.screen.rows)
                await pilot.press("escape")
                await settle(pilot)

    asyncio.run(main())
    for owner, actions, extra in (
        (MemcurateApp, QUEUE_ACTIONS, QUEUE_HELP_EXTRA),
        (LibraryScreen, LIBRARY_ACTIONS, LIBRARY_HELP_EXTRA),
    ):
        for binding in owner.BINDINGS:
            assert (binding.key_display, binding.tooltip) in shown[owner], binding.key
        assert shown[owner] == help_rows(actions, extra)
