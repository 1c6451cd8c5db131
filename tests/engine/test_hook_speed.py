"""The Stop hook without the `json` package (issue 25 §6): fastjson parses and writes as `json` does, errors
included, and a Stop pass never imports `json` (nor `copy`): each costs every Claude Code turn milliseconds. (bench/hook_bench.py measures the time; these keep the structure.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import claude_transcripts
from synthetic import Transcript, text, tool
from test_hook import busy_session, log_lines, payload, probe

from memcurate.curator.util import fastjson

VALID = [
    '{"a": [1, 2.5, -0.0, 1e400, 12345678901234567890, "x\\u00e9\\ud83d\\ude00", null, true, false]}',
    "  \n\t[] \r\n",
    '"just a string"',
    "-17",
    "NaN",
    '[Infinity, -Infinity, {"": {}}]',
    '"\\ud800 a lone surrogate"',
    '{"a": 1, "a": 2}',
    '{"deep": ' + "[" * 200 + "]" * 200 + "}",
]
INVALID = [
    "",
    "   ",
    '{"a": 1} x',
    '{"a": 1}{}',
    '{"a": "\x01"}',
    '{"a": 1,}',
    "[1, 2",
    '"\\x"',
    "nan",
    "[" * 100_000,
]
BYTES = [
    b'{"a": "\xc3\xa9"}',
    b'\xef\xbb\xbf{"bom": 1}',
    '{"utf16": 1}'.encode("utf-16"),
    '{"utf16": 1}'.encode("utf-16-le"),
    '{"utf32": 1}'.encode("utf-32"),
    b'{"a": "\xff"}',
    b"\x00",
    b"",
    bytearray(b'[1, {"b": 2}]\n'),
]


def outcome(f, arg):
    """What a call gives: ("ok", value) or ("raises", type, message). NaN compared by its repr."""
    try:
        return ("ok", repr(f(arg)))
    except Exception as e:
        return ("raises", type(e), str(e))


@pytest.mark.parametrize("doc", VALID + INVALID + BYTES)
def test_fastjson_loads_gives_what_json_loads_gives(doc):
    assert outcome(fastjson.loads, doc) == outcome(json.loads, doc)


def test_fastjson_loads_says_jsons_error_before_json_is_imported():
    # The C scanner words its errors with json.decoder, which a hook process has not loaded.
    probe = (
        "import sys\nfrom memcurate.curator.util import fastjson\n"
        "assert 'json' not in sys.modules\n"
        'try:\n    fastjson.loads(\'{"a": "\\x01"}\')\n'
        "except Exception as e:\n    print(type(e).__module__, type(e).__name__, e)\n"
    )
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == (
        "json.decoder JSONDecodeError Invalid control character at: line 1 column 8 (char 7)"
    )


class Odd:
    pass


circular: list = []
circular.append(circular)
OBJECTS = [
    {"a": [1, 2.5, -0.0, 1e300, float("inf"), float("nan"), None, True, False]},
    {"text": 'é "quoted" \\ back\nslash\t\x00\x1f\u2028 \ud83d\ude00', "": {}},
    [],
    "a top-level string\n",
    17,
    None,
    (1, 2),
    {3: "int key", 2.5: "float key", True: "bool key", None: "none key"},
    {"odd": Odd()},
    {("tuple", "key"): 1},
    circular,
]


def compact(o):
    return json.dumps(o, ensure_ascii=False, separators=(",", ":"))


def indented(o):
    return json.dumps(o, ensure_ascii=False, indent=1)


@pytest.mark.parametrize("obj", OBJECTS)
def test_fastjson_dumps_gives_what_json_dumps_gives(obj):
    assert outcome(fastjson.dumps_compact, obj) == outcome(compact, obj)
    assert outcome(fastjson.dumps_indented, obj) == outcome(indented, obj)
    if obj is OBJECTS[-2]:  # an error leaves nothing behind that fails the next call
        assert fastjson.dumps_compact([[1]]) == "[[1]]"
        assert fastjson.dumps_indented([[1]]) == "[\n [\n  1\n ]\n]"


def test_a_staged_triage_is_written_as_json_writes_it(project):
    # the staged document as the hook writes it (fastjson) and as json.dumps(indent=1) would
    path = claude_transcripts() / "s.jsonl"
    path.write_bytes(busy_session().bytes())
    _probe(project, path)
    (doc_path,) = (project / ".memcurate" / "staging").glob("*/triage.json")
    text = doc_path.read_text()
    assert text == indented(json.loads(text)) + "\n"
    assert '"categories": {' in text


_PROBE = """
import sys
before = set(sys.modules)
from memcurate.curator.cli import main
rc = main(["hook"])
sys.stdout.write("\\n" + repr((rc, sorted(set(sys.modules) - before))))
"""


def _probe(project: Path, transcript: Path) -> list[str]:
    """One hook process (a Stop on `transcript`): the modules it loaded."""
    report = probe(_PROBE, project, payload("Stop", transcript, project))
    rc, new = eval(report)  # a repr of our own probe's tuple of ints and strings
    assert rc == 0
    return new


def plain_turn() -> Transcript:
    """A turn that triggers nothing: a question, a look, an answer."""
    t = Transcript(stamp="2025-07-14T23:10")
    t.user("Which files are in the app folder?")
    t.assistant(text("Let me look."), tool("toolu_l1", "Bash", command="ls app"))
    t.result("toolu_l1", "main.py\nutil.py")
    t.assistant(text("There are two: main.py and util.py."))
    return t


@pytest.mark.parametrize("grown", [True, False], ids=["incremental", "nothing-new"])
def test_a_stop_pass_that_stages_nothing_loads_neither_json_nor_copy(project, grown):
    path = claude_transcripts() / "s.jsonl"
    path.write_bytes(busy_session().bytes())
    _probe(project, path)  # the first call builds the config cache and stages
    if grown:
        with open(path, "ab") as f:
            f.write(plain_turn().bytes())
    new = _probe(project, path)
    assert ("no-trigger bytes" if grown else "nothing-new bytes") in log_lines(project)[-1]
    assert "memcurate.curator.capture.triage" in new or not grown  # the pass did read and triage
    assert not {"json", "json.decoder", "json.encoder", "copy"} & set(new)


def test_a_stop_pass_that_stages_loads_no_json_either(project):
    path = claude_transcripts() / "s.jsonl"
    path.write_bytes(plain_turn().bytes())
    _probe(project, path)  # the first call builds the config cache
    with open(path, "ab") as f:
        f.write(busy_session().bytes())
    new = _probe(project, path)
    assert "staged bytes" in log_lines(project)[-1]
    assert not {"json", "json.decoder", "json.encoder", "copy"} & set(new)


def test_fastjson_without_the_c_accelerator_is_json():
    # a Python whose json has no _json (not CPython): the same answers, from json's own code
    probe = (
        "import sys\nsys.modules['_json'] = None\nimport json\n"
        "from memcurate.curator.util import fastjson\n"
        'doc = \'{"a": [1, 2.5, "\\\\u00e9"]}\'\n'
        "assert fastjson.loads(doc) == json.loads(doc) == {'a': [1, 2.5, 'é']}\n"
        "assert fastjson.dumps_compact({'a': 'é'}) == '{\"a\":\"é\"}'\n"
        "try:\n    fastjson.loads('[1,')\nexcept json.JSONDecodeError as e:\n    print(e)\n"
    )
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "Expecting value: line 1 column 4 (char 3)"
