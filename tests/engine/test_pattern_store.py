"""The store of compiled patterns (util/lazyre.py): what a hook compiled once is made again from its stored
code, by the same Python, without `re`; only what re.compile itself makes is stored, and a store that is
missing, damaged, of another Python or not to be written changes nothing a hook does."""

from __future__ import annotations

import _sre
import json
import marshal
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import claude_transcripts
from synthetic import Transcript, text, tool
from test_hook import log_lines, payload

from memcurate.curator.util import lazyre
from memcurate.curator.util.paths import project_key

# One hook process with the store at `store`, as a user's install has it (bytecode written): the modules it
# ended with. A pattern `re` compiled loaded `re`; one made from the store did not.
# (no `json` here: it loads `re`)
_PROBE = """
import sys
from memcurate.curator.util import lazyre
lazyre.store_path = lambda: {store!r}
sys.dont_write_bytecode = {no_bytecode!r}
from memcurate.curator.cli import main
rc = main(["hook"])
sys.stdout.write("\\n" + str(rc) + " " + " ".join(sorted(sys.modules)))
"""


def session(n: int) -> Transcript:
    """A session with a decision and two failing commands: keywords, redaction and the failure parsers."""
    t = Transcript(session=f"s-{n}")
    t.user("We decided to go with postgres because it is simpler to operate than the others.")
    t.assistant(text("Understood: we will use postgres, since it keeps the deployment simpler."))
    for i, module in enumerate(("alpha", "bravo")):
        t.assistant(tool(f"f{i}", "Bash", command=f"uv run pytest tests/test_{module}.py"))
        t.result(
            f"f{i}",
            f"Exit code 1\n=== FAILURES ===\nFAILED tests/test_{module}.py::test_load - "
            f"ModuleNotFoundError: No module named '{module}'\n=== 1 failed in 0.12s ===",
            is_error=True,
        )
    return t


def first_call(project: Path, n: int, store: Path, *, no_bytecode: bool = False) -> set[str]:
    """A Stop on a transcript the data dir has never seen, by a hook process using `store`: the modules
    that process ended with."""
    path = claude_transcripts(project_key(project)) / f"s-{n}.jsonl"
    session(n).write(path)
    script = _PROBE.format(store=str(store), no_bytecode=no_bytecode)
    p = subprocess.run(
        [sys.executable, "-P", "-c", script],
        input=json.dumps(payload("Stop", path, project, session_id=f"s-{n}")).encode(),
        cwd=project,
        capture_output=True,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(project)},
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    hook_out, _, report = p.stdout.decode().rpartition("\n")
    assert hook_out == "" and p.stderr == b"", p.stderr
    rc, *modules = report.split()
    assert rc == "0"
    line = log_lines(project)[-1]
    assert "staged bytes" in line and "failures counted toward rules: 2" in line, line
    return set(modules)


def test_a_first_call_makes_the_patterns_an_earlier_call_compiled_without_re(project, tmp_path):
    store = tmp_path / "lazyre.patterns"
    assert "re" in first_call(project, 1, store)  # (its config is built too, with yaml)
    assert store.exists()
    second = first_call(project, 2, store)
    # the same keywords, redaction and parsers, and no `re` nor what it loads: a fifth of such a pass
    assert not [m for m in ("re", "enum", "functools") if m in second], sorted(second)


def test_only_what_re_compile_makes_is_stored(project, tmp_path):
    store = tmp_path / "lazyre.patterns"
    first_call(project, 1, store)
    head, entries = marshal.loads(store.read_bytes())
    assert head == lazyre._header() and len(entries) > 3
    for (pattern, flags), blob in entries.items():
        assert _sre.compile(pattern, *marshal.loads(blob)) == re.compile(pattern, flags), pattern


def test_a_store_of_another_python_or_damaged_is_not_used(project, tmp_path):
    store = tmp_path / "lazyre.patterns"
    first_call(project, 1, store)
    head, entries = marshal.loads(store.read_bytes())
    other = (head[0], head[1] + 1, *head[2:])
    store.write_bytes(marshal.dumps((other, entries)))
    assert "re" in first_call(project, 2, store)  # compiled anew, and stored for this Python
    assert marshal.loads(store.read_bytes()) == (head, entries)
    store.write_bytes(b"\0not a store")
    assert "re" in first_call(project, 3, store)


def test_an_entry_sre_refuses_is_compiled_as_without_a_store(project, tmp_path):
    store = tmp_path / "lazyre.patterns"
    first_call(project, 1, store)
    head, entries = marshal.loads(store.read_bytes())
    broken = {key: marshal.dumps((0, [99999, 1, 2], 0, {}, ())) for key in entries}
    store.write_bytes(marshal.dumps((head, broken)))
    assert "re" in first_call(project, 2, store)  # the same pass, its patterns compiled by re
    assert marshal.loads(store.read_bytes()) == (head, entries)  # and stored again as they are
    assert "re" not in first_call(project, 3, store)


def test_no_store_is_written_when_python_writes_no_bytecode(project, tmp_path):
    store = tmp_path / "lazyre.patterns"
    first_call(project, 1, store, no_bytecode=True)
    assert not store.exists()


def test_no_store_is_worked_out_where_nothing_may_be_written(tmp_path, monkeypatch):
    """An install no one may write to (a system package): what keep() would store is not even worked out (a
    parse per pattern, every call)."""
    monkeypatch.setattr(lazyre, "store_path", lambda: str(tmp_path / "lazyre.patterns"))
    monkeypatch.setattr(lazyre, "_compiled_here", [(r"[a-z]+\d", 0)])
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    worked: list = []
    monkeypatch.setattr(lazyre, "_entry", lambda *key: worked.append(key))
    writable = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    lazyre.keep()
    assert worked == [] and not (tmp_path / "lazyre.patterns").exists()
    monkeypatch.setattr(os, "access", writable)
    lazyre.keep()  # the same, writable: worked out (and nothing stored, as _entry gave nothing)
    assert worked == [(r"[a-z]+\d", 0)]


def test_the_store_lies_beside_the_modules_own_bytecode():
    path = lazyre.store_path()
    cached = lazyre.__cached__
    assert path is not None and cached is not None
    assert os.path.dirname(path) == os.path.dirname(cached)
    assert path.endswith(".patterns")
