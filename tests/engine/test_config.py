"""Layered config: defaults, user and project layers, errors that name file and key, the JSON cache."""

from __future__ import annotations

import os

import pytest

from memcurate.curator import config
from memcurate.curator.categories import NAMES


def write(path, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def test_defaults_cover_every_category(project):
    cfg = config.load(project)
    assert set(cfg["categories"]) == set(NAMES)
    budgets = {n: cfg["categories"][n]["budget"] for n in NAMES}
    assert budgets == {
        "decision": 40,
        "constraint": 30,
        "runbook": 20,
        "tech_debt": 15,
        "preference": 15,
        "session_summary": 10,
    }
    assert sum(budgets.values()) == 130
    assert cfg["backend"] == "auto" and cfg["memory"]["root"] == "auto"


def test_project_layer_wins_over_user_layer(project, isolated_home):
    write(config.user_config_path(), "backend: offline\ncategories:\n  decision:\n    budget: 25\n")
    write(config.project_config_path(project), "categories:\n  decision:\n    budget: 12\n")
    cfg = config.load(project)
    assert cfg["backend"] == "offline"  # from the user layer
    assert cfg["categories"]["decision"]["budget"] == 12  # the project layer wins
    assert cfg["categories"]["decision"]["model"] == "sonnet"  # untouched keys keep their defaults
    assert cfg["categories"]["constraint"]["budget"] == 30


def test_models_accept_new_aliases(project):
    write(
        config.project_config_path(project),
        "models:\n  fast: claude-haiku-9\ncategories:\n  runbook:\n    model: fast\n",
    )
    cfg = config.load(project)
    assert (
        cfg["models"]["fast"] == "claude-haiku-9"
        and cfg["categories"]["runbook"]["model"] == "fast"
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ("colour: blue\n", ["colour: unknown key"]),
        ("categories:\n  decision:\n    budgt: 3\n", ["categories.decision.budgt: unknown key"]),
        (
            "categories:\n  decision:\n    budget: lots\n",
            ["categories.decision.budget: expected a whole number, found a string"],
        ),
        (
            "triage:\n  reason_words: because\n",
            ["triage.reason_words: expected a list, found a string"],
        ),
        ("triage:\n  reason_words: [because, 3]\n", ["triage.reason_words[1]: expected a string"]),
        (
            "categories:\n  decision:\n    keywords: ['(unclosed']\n",
            ["categories.decision.keywords[0]: expected a regular expression"],
        ),
        (
            "backend: magic\n",
            ["backend: expected one of auto, anthropic, claude-cli, offline, found 'magic'"],
        ),
        (
            "categories:\n  runbook:\n    model: gpt\n",
            ["categories.runbook.model: expected one of"],
        ),
        (
            "categories:\n  runbook:\n    threshold: 2\n",
            ["categories.runbook.threshold: expected a number from 0 to 1"],
        ),
        ("hook: [1, 2]\n", ["hook: expected a mapping, found a list"]),
        ("second_look:\n  model: gpt\n", ["second_look.model: expected one of"]),
        (
            "second_look:\n  max_chars: 10\n",
            ["second_look.max_chars: expected at least 1000, found 10"],
        ),
        ("second_look:\n  enabled: yes please\n", ["second_look.enabled: expected true or false"]),
        ("backend: [unclosed\n", ["invalid YAML (line 2, column 1)"]),
        (
            "categories:\n  decision:\n    budget: true\n",
            ["expected a whole number, found true or false"],
        ),
        (
            "drafting:\n  fallback: [haiku, gpt]\n",
            ["drafting.fallback[1]: expected offline or one of haiku, sonnet, opus, found 'gpt'"],
        ),
        ("verify:\n  model: gpt\n", ["verify.model: expected one of"]),
        (
            "drafting:\n  deadline_seconds: 60\n",
            [
                "drafting.deadline_seconds: expected at least drafting.timeout_seconds "
                "(120), found 60"
            ],
        ),
    ],
)
def test_errors_name_the_file_the_key_what_was_expected_and_found(project, text, expected):
    path = config.project_config_path(project)
    write(path, text)
    with pytest.raises(config.ConfigError) as err:
        config.load(project)
    message = str(err.value)
    assert message.startswith(path)
    for part in expected:
        assert part in message


def test_not_utf8_config_is_a_clear_error(project):
    path = config.project_config_path(project)
    os.makedirs(os.path.dirname(path))
    with open(path, "wb") as f:
        f.write(b"backend: \xff\xfe\n")
    with pytest.raises(config.ConfigError, match="not UTF-8"):
        config.load(project)


def test_empty_layer_changes_nothing(project):
    write(config.project_config_path(project), "")
    assert config.load(project)["backend"] == "auto"


def test_cache_is_used_until_a_layer_changes(project, tmp_path, monkeypatch):
    data = tmp_path / "data"
    first = config.load(project, data)
    assert (data / config.CACHE_NAME).is_file()

    def no_yaml(path):
        raise AssertionError("YAML parsed although no layer changed")

    monkeypatch.setattr(config, "_read_yaml", no_yaml)
    cached = config.load(project, data)  # served from the JSON cache
    # its keyword index parsed only when a pass has text to score (config.CachedIndex)
    index = cached["_derived"]["triage"].load()
    assert index == first["_derived"]["triage"]
    assert {**cached, "_derived": {**cached["_derived"], "triage": index}} == first

    monkeypatch.undo()
    write(config.project_config_path(project), "backend: offline\n")
    assert config.load(project, data)["backend"] == "offline"  # a new layer invalidates the cache


def test_a_corrupt_cache_is_rebuilt(project, tmp_path):
    data = tmp_path / "data"
    config.load(project, data)
    (data / config.CACHE_NAME).write_text("{half a json")
    assert config.load(project, data)["backend"] == "auto"


def test_the_keyword_index_is_derived_into_the_cache(project, tmp_path):
    from memcurate.curator.capture.triage import Rules

    data = tmp_path / "data"
    config.load(project, data)
    cfg = config.load(project, data)  # from the cache, as the hook reads it
    rules = Rules(cfg)
    assert rules.keywords.keywords[0].pattern == cfg["categories"]["decision"]["keywords"][0]
    assert [kw.pattern for kw in rules.keywords.candidates("we decided to go with redis")][:2] == [
        "decided",
        "go with",
    ]


def test_user_cannot_set_derived_keys(project):
    write(config.project_config_path(project), "_derived: {}\n")
    with pytest.raises(config.ConfigError, match="_derived: unknown key"):
        config.load(project)


def test_old_hook_section_is_folded_into_hooks(project, isolated_home):
    """`hook:` (the old spelling) still works in user and project files; `hooks:` wins where both set a key."""
    write(
        config.user_config_path(), "hook:\n  lock_wait_seconds: 2.0\n  review_auto_memory: true\n"
    )
    write(
        config.project_config_path(project),
        "hook:\n  lock_wait_seconds: 3.0\nhooks:\n  lock_wait_seconds: 4.0\n",
    )
    cfg = config.load(project)
    assert "hook" not in cfg
    assert cfg["hooks"]["lock_wait_seconds"] == 4.0
    assert cfg["hooks"]["review_auto_memory"] is True
    assert cfg["hooks"]["summary_events"] == ["SessionEnd", "PreCompact", "SubagentStop"]
