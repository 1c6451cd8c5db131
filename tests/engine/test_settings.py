"""The config's typed view (curator/settings.py): every key of its sections in the defaults is a field, a
layer's values come through typed, the view cannot be written, and the hook path never loads it."""

from __future__ import annotations

import dataclasses

import pytest
import yaml
from conftest import ROOT

from memcurate.curator import config
from memcurate.curator.settings import SECTIONS, Settings, settings

DEFAULTS = yaml.safe_load((ROOT / "assets" / "config.default.yaml").read_text())


@pytest.mark.parametrize("name", sorted(SECTIONS))
def test_every_key_of_a_section_in_the_defaults_is_a_field(name):
    """A key added to assets/config.default.yaml and not to the view (or the other way round) fails here."""
    fields = {f.name for f in dataclasses.fields(SECTIONS[name])}
    assert fields == set(DEFAULTS[name]), (
        f"{name}: view {sorted(fields)}, defaults {sorted(DEFAULTS[name])}"
    )
    assert isinstance(getattr(Settings, name), property)


def test_the_views_values_are_the_configs_with_their_types(project):
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text(
        "drafting:\n  timeout_seconds: 30\n  fallback: [sonnet]\n"
        "auto_approve:\n  min_confidence: 0.5\nrules:\n  threshold: 4\n"
    )
    cfg = config.load(project)
    view = settings(cfg)
    assert view.drafting.timeout_seconds == 30.0 and isinstance(
        view.drafting.timeout_seconds, float
    )
    assert view.drafting.fallback == ("sonnet",)
    assert (view.auto_approve.min_confidence, view.rules.threshold) == (0.5, 4)
    assert view.recall.max_chars == DEFAULTS["recall"]["max_chars"]  # untouched: the default
    assert view.model_id("haiku") == cfg["models"]["haiku"] and view.model_id("x-1") == "x-1"
    assert view.backend == cfg["backend"]


def test_the_view_cannot_be_written_and_follows_the_config(project):
    cfg = config.load(project)
    view = settings(cfg)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.verify.llm = True  # type: ignore[misc]
    with pytest.raises(AttributeError):
        view.verify = None  # type: ignore[misc]
    cfg["verify"]["llm"] = True  # a test that changes a built config: the view reads it
    assert view.verify.llm is True


def test_a_partial_config_names_the_key_it_lacks():
    with pytest.raises(KeyError, match="rules.threshold"):
        assert settings({"rules": {"enabled": True}}).rules
