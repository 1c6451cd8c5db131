"""The caches a save run and a check lean on stay bounded, whatever the memory files hold."""

from __future__ import annotations

from memcurate.curator.memory import memfile
from memcurate.curator.util.recent import MAX_TEXT, Recent


def test_a_full_cache_starts_again_and_large_texts_are_not_kept():
    cache = Recent(2)
    cache.put("a", 1, 1)
    cache.put("b", 2, 1)
    assert (cache.get("a"), cache.get("b")) == (1, 2)
    cache.put("c", 3, 1)  # full: what was kept is forgotten at once
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, None, 3)
    cache.put("big", 4, MAX_TEXT + 1)
    assert cache.get("big") is None


def test_a_large_memory_is_parsed_alike_and_not_held(tmp_path):
    doc = memfile.MemoryDoc(
        id="big",
        category="decision",
        title="A big one",
        description="Large",
        type="project",
        tags=[],
        created="2026-11-22T10:04:00Z",
        updated="2026-11-22T10:04:00Z",
        sources=[],
        status="active",
        body="## Decision\n" + "word " * (MAX_TEXT // 4),
    )
    text = memfile.render(doc)
    first, second = memfile.parse(text), memfile.parse(text)
    assert first == second and first is not second
    assert memfile._PARSED.get(text) is None
