"""config.build in one process: the defaults and the keyword index are worked out once (an engine, the TUI and
every `memcurate` process build their config more than once), and each caller still gets a config of its own."""

from __future__ import annotations

import time

import pytest

from memcurate.curator import config
from memcurate.curator.capture.triage import Rules

ZEBRA = "we took the zebra crossing"


def decision_cues(cfg: dict, text: str) -> list[str]:
    return [
        kw.pattern
        for kw in Rules(cfg).keywords.candidates(text.lower())
        if kw.category == "decision"
    ]


@pytest.mark.serial  # a time budget: measured with the machine to itself
def test_building_the_same_layers_again_costs_next_to_nothing(tmp_path):
    paths = config.layer_paths(tmp_path)  # the defaults and the user layer isolated_home writes
    config.build(paths)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        config.build(paths)
        best = min(best, time.perf_counter() - t0)
    # ~0.5 ms; parsing and analysing: ~150
    assert best < 0.02, f"a second build took {best * 1000:.0f} ms"


def test_each_build_is_the_callers_own_and_a_changed_keyword_list_gets_its_own_index(tmp_path):
    paths = config.layer_paths(tmp_path)
    first = config.build(paths)
    first["categories"]["decision"]["keywords"].append("zebra crossing")
    first["_derived"]["triage"]["keywords"]["records"].clear()
    first["hooks"]["summary_events"].clear()
    again = config.build(paths)
    assert "zebra crossing" not in again["categories"]["decision"]["keywords"]
    assert again["_derived"]["triage"]["keywords"]["records"] and again["hooks"]["summary_events"]
    assert decision_cues(again, ZEBRA) == []

    layer = tmp_path / ".claude" / "memcurate.yaml"
    layer.parent.mkdir()
    layer.write_text("categories:\n  decision:\n    keywords: ['zebra crossing']\n")
    assert decision_cues(config.build(paths), ZEBRA) == ["zebra crossing"]
    layer.unlink()
    assert decision_cues(config.build(paths), ZEBRA) == []
    assert config.build(paths) == again
