"""What a hook call costs, by structure rather than by the clock: the modules a Stop pass and a counted failure
load, the regular expressions a pass with nothing new compiles, and the ledger files a transcript's failures are
written with.
(bench/hook_bench.py measures the time; these keep what it measured from coming back.)"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import claude_transcripts
from synthetic import Transcript, text, tool
from test_failure_hook import RUNS, SESSIONS, failed
from test_hook import busy_session, decision_session, log_lines, payload, probe
from test_pattern_store import first_call

from memcurate.curator import config
from memcurate.curator.candidates import staging
from memcurate.curator.candidates.incremental import capture
from memcurate.curator.rules import ledger
from memcurate.curator.rules.signature import Failure
from memcurate.curator.util.paths import CONFIG_DIR_RECORD, project_key

# What an incremental Stop pass may load of memcurate: the dispatcher, the capture handler and what they stand on
# (staging only when a category triggers). A module added here is paid for by every Claude Code turn.
STOP_MODULES = {
    "memcurate",
    "memcurate.curator.cli",
    "memcurate.hooks",
    "memcurate.hooks.dispatch",
    "memcurate.hooks.capture",
    "memcurate.hooks.hook_config",
    "memcurate.curator",
    "memcurate.curator.errors",
    "memcurate.curator.config",
    "memcurate.curator.categories",
    "memcurate.curator.capture",
    "memcurate.curator.candidates.incremental",
    "memcurate.curator.capture.transcript",
    "memcurate.curator.capture.triage",
    "memcurate.curator.capture.keywords",
    "memcurate.curator.candidates",
    # what a pass needs only when a line scores (redaction) or a category triggers (its excerpt, staging)
    "memcurate.curator.util.redact",
    "memcurate.curator.capture.summary",
    "memcurate.curator.candidates.staging",
    "memcurate.curator.util.fieldtuple",  # staging's named tuple, instead of collections (~3 ms)
    "memcurate.curator.util",
    "memcurate.curator.util.assets",
    "memcurate.curator.util.atomic",
    "memcurate.curator.util.child_env",
    "memcurate.curator.util.fastjson",
    "memcurate.curator.util.lazyre",
    "memcurate.curator.util.locks",
    "memcurate.curator.util.log",
    "memcurate.curator.util.paths",
    "memcurate.curator.util.private",
    "memcurate.curator.util.safe_open",
    "memcurate.curator.util.stamps",
    "memcurate.curator.util.textsafe",
}
# What a Stop pass over a plain turn (no cue, no failure, no secret) loads of memcurate: no redaction, no quoting,
# no staging, and never the analysis of keyword patterns (the config cache keeps its answers).
PLAIN_TURN_MODULES = STOP_MODULES - {
    "memcurate.curator.util.redact",
    "memcurate.curator.capture.summary",
    "memcurate.curator.candidates.staging",
    "memcurate.curator.util.fieldtuple",
}
# Standard modules the Stop pass has no use for: importlib (with warnings) for one dynamic import, and the
# ones that cost milliseconds to load.
NOT_ON_THE_STOP_PATH = (
    "importlib",
    "warnings",
    "typing",
    "dataclasses",
    "inspect",
    "hashlib",
    "argparse",
)

_PROBE = """
import json, re, sys
from re import _compiler
before = set(sys.modules)
compiled = []
_compile = _compiler.compile
def counting(p, flags=0):
    compiled.append(str(p))
    return _compile(p, flags)
_compiler.compile = counting
from memcurate.curator.cli import main
rc = main(["hook"])
sys.stdout.write("\\n" + json.dumps({"rc": rc, "new": sorted(set(sys.modules) - before), "compiled": compiled}))
"""


def _probe(project: Path, transcript: Path | None, doc: dict | None = None) -> dict:
    """One hook process (a Stop on `transcript`, else `doc`): what it loaded and the patterns it compiled."""
    doc = json.loads(probe(_PROBE, project, doc or payload("Stop", transcript, project)))
    assert doc["rc"] == 0
    return doc


def test_an_incremental_stop_pass_loads_only_the_capture_path(project):
    path = claude_transcripts() / "s.jsonl"
    path.write_bytes(busy_session().bytes())
    _probe(project, path)  # the first call builds the config cache
    with open(path, "ab") as f:
        f.write(decision_session("kafka").bytes())
    doc = _probe(project, path)
    # the whole pass ran: read, triage, redact, stage
    assert "staged bytes" in log_lines(project)[-1]
    ours = {m for m in doc["new"] if m.startswith("memcurate")}
    assert ours <= STOP_MODULES, f"the Stop pass loads more: {sorted(ours - STOP_MODULES)}"
    assert not [m for m in NOT_ON_THE_STOP_PATH if m in doc["new"]]


def test_a_stop_with_nothing_new_compiles_no_regular_expression(project):
    path = claude_transcripts() / "s.jsonl"
    path.write_bytes(decision_session().bytes())
    _probe(project, path)
    doc = _probe(project, path)
    assert "nothing-new" in log_lines(project)[-1]
    assert doc["compiled"] == []  # each compile is ~0.1-2 ms of Python, paid again by every process


def test_counting_a_failure_never_loads_hashlib(project):
    doc = _probe(project, None, failed(SESSIONS[0], RUNS[0]))
    # it loads OpenSSL: ~5 ms of every hook that counts a failure
    assert "hashlib" not in doc["new"]
    (key,) = ledger.keys(project / ".memcurate")
    f = ledger.failure(project / ".memcurate", key)
    # keys on disk hold
    assert key == hashlib.sha256(f"{f['kind']}\0{f['signature']}".encode()).hexdigest()[:12]


# -- a transcript's failures ----------------------------------------------------------------------------


def _failing(t: Transcript, n: int, module: str, command: str = "uv run python -m app") -> None:
    t.assistant(tool(f"f{n}", "Bash", command=command))
    t.result(
        f"f{n}",
        f'Exit code 1\nTraceback (most recent call last):\n  File "app/main.py", line 3, in <module>\n'
        f"    import {module}\nModuleNotFoundError: No module named '{module}'",
        is_error=True,
    )


def _passing(
    t: Transcript, n: int, edited: str, said: str, command: str = "uv run python -m app"
) -> None:
    t.assistant(text(said), tool(f"e{n}", "Edit", file_path=edited, old_string="a", new_string="b"))
    t.result(f"e{n}", "The file has been updated.")
    t.assistant(tool(f"p{n}", "Bash", command=command))
    t.result(f"p{n}", "ok")


def _capture(project: Path, t: Transcript, sid: str) -> dict:
    data = project / ".memcurate"
    data.mkdir(exist_ok=True)
    path = t.write(project / "transcripts" / f"{sid}.jsonl")
    return capture(
        str(data), config.load(project, str(data)), str(path), event="Stop", session_id=sid
    )


def _count_writes(monkeypatch) -> list[str]:
    """The paths the ledger writes whole (replacing or creating), in order."""
    written: list[str] = []
    for name in ("write_json", "write_new"):
        real = getattr(ledger, name)

        def counting(path, *a, _real=real, **kw):
            written.append(os.fspath(path))
            return _real(path, *a, **kw)

        monkeypatch.setattr(ledger, name, counting)
    return written


def test_a_transcripts_failures_are_one_ledger_file(project, monkeypatch):
    """A pass that shows six failures writes one file into the ledger, not a folder and two files
    each: a new file is most of what a write costs (37f83ec9's first call made 20 folders, 40 files)."""
    t = Transcript(session="s-one")
    t.user("Please run the app and fix what fails")
    modules = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
    for n, module in enumerate(modules):
        _failing(t, n, module, command=f"uv run python -m app.{module}")
    data = project / ".memcurate"
    written = _count_writes(monkeypatch)
    made = []
    real_mkdir = os.mkdir
    monkeypatch.setattr(os, "mkdir", lambda p, *a, **k: made.append(p) or real_mkdir(p, *a, **k))
    report = _capture(project, t, "s-one")
    assert len(ledger.keys(data)) == len(modules)
    assert any(f"failures counted toward rules: {len(modules)}" in n for n in report["notes"])
    ledger_root = os.path.join(data, ledger.FAILURES_DIR)
    assert [p for p in written if p.startswith(ledger_root)] == [
        os.path.join(ledger_root, "s-one.0.json")
    ]
    assert [os.fspath(p) for p in made if os.fspath(p).startswith(ledger_root)] == [ledger_root]
    # and a second pass of the same session over the same failures counts none again, writing nothing
    written.clear()
    again = _capture(project, t, "s-one")
    assert not [p for p in written if p.startswith(ledger_root)]
    assert not any("failures counted toward rules" in n for n in again["notes"])


def test_a_failure_fixed_twice_in_a_pass_is_written_once_with_its_last_fix(project, monkeypatch):
    t = Transcript(session="s-fix")
    t.user("Please run the app and fix what fails")
    _failing(t, 1, "alpha")
    _passing(
        t, 1, str(project / "app" / "one.py"), "The import was wrong. I moved it into the package."
    )
    _failing(t, 2, "alpha")
    _passing(
        t,
        2,
        str(project / "app" / "two.py"),
        "The module was missing from the lock file. I added it.",
    )
    written = _count_writes(monkeypatch)
    _capture(project, t, "s-fix")
    data = project / ".memcurate"
    (key,) = ledger.keys(data)
    occurrence = os.path.join(data, ledger.FAILURES_DIR, "s-fix.0.json")
    assert [p for p in written if ledger.FAILURES_DIR in p] == [occurrence]
    (occ,) = ledger.occurrences(data, key)
    assert occ["fix"]["files"] == ["app/two.py"] and "lock file" in occ["fix"]["text"]


# -- what a turn's pass loads, started as `memcurate install` runs the hook ----------------------------

# Standard modules a Stop pass over a plain turn (no cue, no failure, no secret) has no use for: `re` and what
# it loads cost about a third of an interpreter start (util/lazyre.py), the others each a little.
NOT_FOR_A_PLAIN_TURN = (
    "re",
    "enum",
    "functools",
    "collections",
    "types",
    "json",
    "heapq",
    "bisect",
)
_MODULES = "import sys\nsys.stderr.write(' '.join(sorted(sys.modules)))\n"


def _loaded(project: Path, transcript: Path | None, doc: dict | None = None) -> set[str]:
    """The modules a Stop hook on `transcript` (else the hook given `doc`) started as install writes it loads
    beyond the interpreter's own start."""
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project)}
    bare = subprocess.run(
        [sys.executable, "-P", "-c", _MODULES], capture_output=True, text=True, env=env
    )
    code = "from memcurate.curator.cli import main\nmain(['hook'])\n" + _MODULES
    ran = subprocess.run(
        [sys.executable, "-P", "-c", code],
        input=json.dumps(doc or payload("Stop", transcript, project)),
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        timeout=60,
    )
    assert ran.returncode == 0 and ran.stdout == "", ran.stderr
    return set(ran.stderr.split()) - set(bare.stderr.split())


def test_a_turn_with_nothing_to_score_loads_no_pattern_machinery(project):
    path = claude_transcripts() / "s.jsonl"
    t = decision_session("kafka")
    path.write_bytes(t.bytes())
    _loaded(project, path)  # the first call builds the config cache, with yaml and re
    # a plain turn: a question, a file read, a short answer
    with open(path, "ab") as f:
        f.write(
            Transcript(session=t.session)
            .user("Please open the README file of this project")
            .assistant(text("Opening it."), tool("r1", "Read", file_path="/home/dev/app/README.md"))
            .result("r1", "# app\n\nA small app.\n")
            .assistant(text("It has one heading and a line of text."))
            .bytes()
        )
    new = _loaded(project, path)
    assert "no-trigger bytes" in log_lines(project)[-1]
    assert not [m for m in NOT_FOR_A_PLAIN_TURN if m in new], sorted(new)
    ours = {m for m in new if m.startswith("memcurate")}
    assert ours <= PLAIN_TURN_MODULES, (
        f"a plain turn loads more: {sorted(ours - PLAIN_TURN_MODULES)}"
    )


def test_a_stop_that_finds_a_segment_due_asks_for_a_look_without_the_drafting_package(
    project, tmp_path, monkeypatch
):
    """`backend: auto` decides whether a look is worth asking for (a `claude` on the PATH): that choice
    is curator/backends.py's, light, and never the drafting package's (dataclasses, typing, shutil and
    its compressors: 40-55 ms, before a long pass's reader could start)."""
    from test_look_segments import SEGMENT, turn

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text("#!/bin/sh\nexit 1\n")
    (bin_dir / "claude").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: auto\nsecond_look:\n  segment_bytes: {SEGMENT}\n"
    )
    path = claude_transcripts() / "s.jsonl"
    t = Transcript()
    turn(t, 0)
    path.write_bytes(t.bytes())
    _loaded(
        project, path
    )  # the first call builds the config cache; its bytes are short of a segment
    i = 1
    while len(t.bytes()) < 2 * SEGMENT:
        turn(t, i)
        i += 1
    path.write_bytes(t.bytes())
    new = _loaded(project, path)
    assert "second look asked" in log_lines(project)[-1]
    assert not [m for m in new if m.startswith("memcurate.curator.drafting")], sorted(new)
    assert not [m for m in ("dataclasses", "typing", "shutil", "bz2") if m in new], sorted(new)


def test_the_backend_choice_finds_claude_as_shutil_which_does(tmp_path):
    import shutil

    from memcurate.curator.backends import which

    a, b, c = (tmp_path / n for n in "abc")
    for d in (a, b, c):
        d.mkdir()
    (a / "claude").write_text("not executable")
    (b / "claude").mkdir()  # a folder, executable bit and all
    (c / "claude").write_text("#!/bin/sh\n")
    (c / "claude").chmod(0o755)
    for path in (f"{a}:{b}:{c}", f"{a}:{b}", "", f"{c}:{c}", f"::{a}"):
        assert which("claude", path) == (shutil.which("claude", path=path) or ""), path


def test_recording_the_config_dir_loads_no_codec(project):
    """A first call records the config dir Claude Code keeps the project's sessions in, which takes the
    project's key: a short key needs no UTF-16 codec (a module of its own), only a key cut to length does."""
    path = claude_transcripts(project_key(project)) / "s.jsonl"
    path.write_bytes(decision_session().bytes())
    _loaded(project, path)  # the first call builds the config cache, with yaml and re
    record = project / ".memcurate" / CONFIG_DIR_RECORD
    assert record.exists()
    record.unlink()  # as in a new project's first call
    new = _loaded(project, path)
    assert record.exists()
    assert "encodings.utf_16_le" not in new, sorted(new)


def test_a_first_call_that_stages_and_counts_failures_loads_no_collections(project, tmp_path):
    """With its patterns made from the store (util/lazyre.py), no `re` loads `collections`: nor do the staged
    triage's files or a failure (their named tuples are util/fieldtuple.py's)."""
    store = tmp_path / "lazyre.patterns"
    first_call(project, 1, store)
    second = first_call(project, 2, store)
    assert "memcurate.curator.candidates.staging" in second
    assert "memcurate.curator.rules.signature" in second
    assert "collections" not in second


def test_named_tuples_are_what_namedtuple_made():
    from collections import namedtuple

    made = namedtuple(
        "Failure",
        "kind tool signature test error_type message files excerpt",
        defaults=("", "", "", (), ""),
    )
    f = Failure("test", "pytest", "sig", message="boom", files=("a.py",))
    old = made("test", "pytest", "sig", message="boom", files=("a.py",))
    assert f == old and hash(f) == hash(old) and tuple(f) == tuple(old)
    assert repr(f) == repr(old) and f.as_dict() == old._asdict() and f._fields == old._fields
    assert (f.kind, f.tool, f.signature, f.test, f.files, f.excerpt) == (
        "test",
        "pytest",
        "sig",
        "",
        ("a.py",),
        "",
    )
    assert pickle.loads(pickle.dumps(f)) == f and type(pickle.loads(pickle.dumps(f))) is Failure
    files = staging.CandidateFiles("a.md", "a.draft.md", "a.json")
    file, draft, review = files
    assert (files.file, files.draft, files.review) == (file, draft, review) == tuple(files)
    assert repr(files) == "CandidateFiles(file='a.md', draft='a.draft.md', review='a.json')"
    with pytest.raises(AttributeError):
        files.file = "b.md"  # type: ignore[misc]


def test_a_guarded_write_loads_neither_re_nor_json(project):
    """The write guard runs before every Write and Edit: a write of a source file loads no pattern machinery
    and no `json` (fastjson reads the input and would write a deny as json.dumps does)."""
    (project / "src").mkdir()
    doc = {
        "session_id": "s",
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(project / "src" / "app.py"), "content": "x = 1\n"},
    }
    _loaded(project, None, doc)  # the first call builds the config cache, with yaml and re
    new = _loaded(project, None, doc)
    assert not [m for m in ("re", "json", "enum") if m in new], sorted(new)


def test_recalls_text_and_the_instruction_check_compile_their_patterns_on_use():
    """What recall renders its context with and the check for instructions to the agent (the guard's and
    recall's) load no `re` until a pattern is used (recall's tokenizer, memory/index/terms.py, still does)."""
    code = (
        "import sys\nfrom memcurate.curator.memory.recall import context\n"
        "from memcurate.curator.util import instructions\nprint('re' in sys.modules)"
    )
    ran = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True)
    assert ran.returncode == 0 and ran.stdout == "False\n", ran.stderr


def test_a_hooks_json_answer_is_the_text_json_dumps_gives():
    from memcurate.curator.util import fastjson

    for obj in (
        {"hookSpecificOutput": {"permissionDecisionReason": "é \u2028 \ud800 \x00 <tag>"}},
        ["a", 1, 2.5, None, True, {"": []}],
        "only a string",
    ):
        for ascii_only in (True, False):
            assert fastjson.dumps(obj, ensure_ascii=ascii_only) == json.dumps(
                obj, ensure_ascii=ascii_only
            )


def test_the_plain_scans_find_what_the_patterns_they_replace_found():
    import random
    import re

    from memcurate.curator.capture.keywords import words
    from memcurate.curator.capture.transcript import strip_reminders

    rng = random.Random(5)
    chars = "ab_9 -'\n\t.é漢→…\u2019\u00a0\u2003½²\ud800"
    for _ in range(3000):
        s = "".join(rng.choice(chars) for _ in range(rng.randint(0, 40)))
        assert words(s) == re.findall(r"\w+", s), repr(s)
    pieces = ["a", " ", "\n", "<system-reminder>", "</system-reminder>", "<system-", "reminder>"]
    reminder = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.S)
    for _ in range(3000):
        s = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert strip_reminders(s) == reminder.sub("", s), repr(s)


# -- the keyword index: read from the config cache only when a pass scores text --------------------------

_INDEX_PROBE = """
import json, sys
from memcurate.curator import config
parsed = []
real = config.CachedIndex.load
def load(self):
    parsed.append(len(self._raw))
    return real(self)
config.CachedIndex.load = load
from memcurate.curator.cli import main
rc = main(["hook"])
sys.stdout.write(json.dumps({"rc": rc, "parsed": parsed}))
"""


def _index_probe(project: Path, transcript: Path) -> list[int]:
    """One Stop hook process: the sizes of the keyword index lines it parsed."""
    doc = json.loads(probe(_INDEX_PROBE, project, payload("Stop", transcript, project)))
    assert doc["rc"] == 0
    return doc["parsed"]


def test_a_pass_with_no_text_to_score_never_parses_the_keyword_index(project):
    path = claude_transcripts() / "s.jsonl"
    t = decision_session("kafka")
    path.write_bytes(t.bytes())
    _index_probe(project, path)  # the first call builds the config cache
    head, _, index = (project / ".memcurate" / config.CACHE_NAME).read_bytes().partition(b"\n")
    # the config a hook parses on every call is a fraction of the cache
    assert len(head) * 3 < len(index)
    # a turn of tool calls and their output: nothing that scores
    with open(path, "ab") as f:
        f.write(
            Transcript(session=t.session)
            .assistant(tool("r1", "Read", file_path="/home/dev/app/README.md"))
            .result("r1", "# app\n\nWe decided to use kafka.\n")
            .bytes()
        )
    assert _index_probe(project, path) == []
    assert "no-trigger bytes" in log_lines(project)[-1]
    # a turn the person writes in: the index is read, once, and finds the cue
    with open(path, "ab") as f:
        f.write(decision_session("redis").bytes())
    assert _index_probe(project, path) == [len(index)]
    assert "staged bytes" in log_lines(project)[-1] and "(decision)" in log_lines(project)[-1]


def _forged(check: int) -> dict[str, str]:
    index = json.dumps({"check": check, "keywords": {"records": 5}, "reasons": {}})
    out_of_range = {"records": ["decision||||x"], "always": [7], "by_literal": {}}
    return {
        "missing": "",
        "not-json": "{half an index",
        "not-a-mapping": "[]",
        "wrong-shape": index,
        "ids-out-of-range": json.dumps(
            {"check": check, "keywords": {**out_of_range, "words": "", "word_ids": ""}}
        ),
        "other-check": json.dumps({"check": check + 1}),
    }


def test_a_forged_keyword_index_changes_nothing_a_pass_captures(project, tmp_path):
    """The index line is in Claude's reach: one that is not an index of these keyword lists is not used (the
    triage builds its own), so the pass stages what it stages with the index config.load wrote."""
    path = busy_session().write(tmp_path / "t.jsonl")

    def captured(data: Path) -> dict:
        report = capture(str(data), config.load(project, str(data)), str(path), event="SessionEnd")
        assert report["status"] == "staged"
        tid = report["triage"]
        return json.loads((data / "staging" / tid / "triage.json").read_text())["categories"]

    good = tmp_path / "good"
    good.mkdir()
    config.load(project, str(good))  # the cache written
    head, _, _ = (good / config.CACHE_NAME).read_text().partition("\n")
    check = json.loads(head)["config"]["_derived"]["triage"]["check"]
    expected = captured(good)
    assert [n for n, c in expected.items() if c["triggered"]] == ["decision", "session_summary"]
    for name, line in _forged(check).items():
        data = tmp_path / name
        data.mkdir()
        (data / config.CACHE_NAME).write_text(head + "\n" + line)
        cfg = config.load(project, str(data))
        assert cfg["_derived"]["triage"].load() is None, (
            name
        )  # served from the cache, its index refused
        assert captured(data) == expected, name
