"""curator/util/jsonsplice.py: a JSON text edited where its document changed, and nowhere else."""

from __future__ import annotations

import json
import random

import pytest

from memcurate.curator.util.jsonsplice import DuplicateKey, splice

TEXT = '{\n\t"a": [1, 2.50, "\\u00e9"],\n\t"b": {"x": true},\n\t"c": 1E3\n}\n'


def test_what_does_not_change_keeps_its_bytes():
    doc = json.loads(TEXT)
    assert splice(TEXT, doc) == TEXT
    out = splice(TEXT, {**doc, "b": {"x": False}})
    assert out == TEXT.replace("true", "false")  # 2.50, \u00e9 and 1E3 as they were written


def test_removed_members_go_with_their_separators_and_added_ones_follow_the_layout():
    doc = json.loads(TEXT)
    assert splice(TEXT, {"b": doc["b"], "c": doc["c"]}) == '{\n\t"b": {"x": true},\n\t"c": 1E3\n}\n'
    assert (
        splice(TEXT, {"a": doc["a"], "b": doc["b"]})
        == '{\n\t"a": [1, 2.50, "\\u00e9"],\n\t"b": {"x": true}\n}\n'
    )
    assert splice(TEXT, {**doc, "d": {"y": [1]}}) == TEXT.replace(
        "1E3\n}", '1E3,\n\t"d": {\n\t\t"y": [\n\t\t\t1\n\t\t]\n\t}\n}'
    )
    # inline stays inline
    assert splice(TEXT, {**doc, "a": [1, 2.5, "é", 3]}) == TEXT.replace(
        '"\\u00e9"]', '"\\u00e9", 3]'
    )


def test_a_crlf_file_keeps_its_line_breaks():
    text = '{\r\n  "a": 1\r\n}\r\n'
    assert splice(text, {"a": 1, "b": [2]}) == '{\r\n  "a": 1,\r\n  "b": [\r\n    2\r\n  ]\r\n}\r\n'


def test_a_duplicated_key_in_an_object_that_changes_is_refused():
    with pytest.raises(DuplicateKey):
        splice('{"a": 1, "a": 2, "b": 1}', {"a": 2, "b": 2})


@pytest.mark.parametrize("seed", range(100))
def test_random_edits_give_the_new_document(seed):
    rnd = random.Random(seed)

    def value(depth):
        kind = rnd.choice(["obj", "arr", "num", "str"] if depth < 3 else ["num", "str"])
        if kind == "obj":
            return {f"k{rnd.randrange(6)}": value(depth + 1) for _ in range(rnd.randrange(4))}
        if kind == "arr":
            return [value(depth + 1) for _ in range(rnd.randrange(4))]
        return rnd.randrange(5) if kind == "num" else rnd.choice("xyz")

    def mutate(v, depth=0):
        if isinstance(v, dict):
            out = {k: mutate(x, depth + 1) for k, x in v.items() if rnd.random() > 0.2}
            if rnd.random() < 0.3:
                out[f"n{rnd.randrange(9)}"] = value(depth + 1)
            return out
        if isinstance(v, list):
            out = [mutate(x, depth + 1) for x in v if rnd.random() > 0.2]
            return out + ([value(depth + 1)] if rnd.random() < 0.3 else [])
        return v if rnd.random() > 0.2 else value(3)

    old = {f"t{i}": value(1) for i in range(4)}
    new = mutate(old)
    for text in (json.dumps(old, indent=2) + "\n", json.dumps(old, indent="\t"), json.dumps(old)):
        assert json.loads(splice(text, new)) == new
