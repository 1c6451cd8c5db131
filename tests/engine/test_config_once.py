"""config.build in one process: the defaults and the keyword index are worked out once (an engine, the TUI and
every `memcurate` process build their config more than once), and each caller still gets a config of its own."""

from __future__ import annotations

from memcurate.curator import config
from memcurate.curator.capture.triage import Rules

ZEBRA = "we took the zebra crossing"


def decision_cues(cfg: dict, text: str) -> list[str]:
    return [
        kw.pattern
        for kw in Rules(cfg).keywords.candidates(text.lower())
        if kw.category == "decision"
    ]


def test_building_the_same_layers_again_costs_next_to_nothing(tmp_path, monkeypatch):
    """The costly steps (~150 ms: parsing the YAML defaults, checking them, analysing every keyword
    pattern) happen in the first build only; a second build over the same layers does none of them."""
    from memcurate.curator.capture import triage

    paths = config.layer_paths(tmp_path)  # the defaults and the user layer isolated_home writes
    config._built_defaults.clear()
    triage._indexes.clear()
    parsed, analysed = [], []
    read_yaml, keyword_sets = config._read_yaml, triage.keyword_sets
    monkeypatch.setattr(config, "_read_yaml", lambda *a: parsed.append(a[0]) or read_yaml(*a))
    monkeypatch.setattr(triage, "keyword_sets", lambda cfg: analysed.append(1) or keyword_sets(cfg))
    first = config.build(paths)
    assert parsed and analysed == [1]  # the defaults (and the user layer) parsed, the index made
    user_layers = [p for p in parsed if p != paths[0]]
    parsed.clear()
    assert config.build(paths) == first
    # again: the user layer is read (it may have changed), the defaults and the index are not
    assert parsed == user_layers and analysed == [1]


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
