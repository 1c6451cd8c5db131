"""Issue 22: what a hostile session can do through the failures it shows. A file name in a failure's
output becomes a rule's `paths:` glob only escaped, so it matches itself and never other files; and
the failure ledger stays within its caps however many new failures a session invents, forgetting the
rarest and oldest first and never what a rule candidate rests on."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from memcurate.curator import config
from memcurate.curator.drafting import rule_draft as draft
from memcurate.curator.rules import ledger
from memcurate.curator.rules.signature import Failure

# -- two readings of a `paths:` glob -----------------------------------------------------------------------
# Claude Code's matcher is a JavaScript glob library; these are the two ways such libraries read braces:
# expanded first, blind to classes (minimatch), or as a group outside classes only (picomatch).


def _expand_braces_first(glob: str) -> list[str]:
    """minimatch's brace expansion: the first {…} holding a top-level comma, classes not known."""
    depth, start = 0, -1
    for i, c in enumerate(glob):
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                body, parts, level, last = glob[start + 1 : i], [], 0, 0
                for j, d in enumerate(body):
                    level += (d == "{") - (d == "}")
                    if d == "," and level == 0:
                        parts.append(body[last:j])
                        last = j + 1
                if parts:
                    parts.append(body[last:])
                    return [
                        x
                        for p in parts
                        for x in _expand_braces_first(glob[:start] + p + glob[i + 1 :])
                    ]
                return [glob[: i + 1] + x for x in _expand_braces_first(glob[i + 1 :])]
    return [glob]


def _regex(glob: str, braces: bool) -> str:
    """`glob` as a regular expression: `**` segments, `*`, `?`, classes; when `braces` (picomatch's
    reading) also brace groups, extglobs (`+(a|b)`, `@(…)`, `*(…)`, `?(…)`), regex groups and `|`."""
    out, i, closers = [], 0, []
    while i < len(glob):
        c = glob[i]
        if braces and c in "+@*?" and glob[i + 1 : i + 2] == "(" and ")" in glob[i:]:
            out.append("(?:")
            closers.append({"+": ")+", "@": ")", "*": ")*", "?": ")?"}[c])
            i += 2
        elif braces and c == "(" and ")" in glob[i:]:
            out.append("(?:")
            closers.append(")")
            i += 1
        elif braces and c == ")" and closers:
            out.append(closers.pop())
            i += 1
        elif braces and c == "|":
            out.append("|")
            i += 1
        elif braces and c == "+" and out and out[-1].endswith((")", "]")):
            out.append("+")  # a quantifier after a group or class
            i += 1
        elif glob.startswith("**/", i) and (i == 0 or glob[i - 1] == "/"):
            out.append("(?:[^/]*/)*")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("(?:/.*)?")
            i += 3
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[" and "]" in glob[i + 2 :]:
            end = glob.index("]", i + 2)  # a `]` first in a class is the character
            inner = glob[i + 1 : end]
            neg = inner[:1] in ("!", "^")
            out.append("[" + ("^" if neg else "") + re.escape(inner[1:] if neg else inner) + "]")
            i = end + 1
        elif braces and c == "{" and "}" in glob[i:]:
            end = glob.index("}", i)
            out.append(
                "(?:" + "|".join(_regex(p, braces) for p in glob[i + 1 : end].split(",")) + ")"
            )
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out) + ")" * len(closers)


def matches(glob: str, path: str) -> bool:
    """Whether either reading of `glob` matches `path`."""
    brace_first = any(re.fullmatch(_regex(g, False), path) for g in _expand_braces_first(glob))
    try:
        return brace_first or bool(re.fullmatch(_regex(glob, True), path))
    except re.error:  # a glob picomatch would reject: it matches nothing there
        return brace_first


# Files of a project that a file name must not reach.
OTHERS = [
    "src/a.py",
    "a.py",
    "b.py",
    "x/b.py",
    "lib/b.py",
    "a/c.py",
    "b/c.py",
    "c.py",
    "ab/c.py",
    "a/d.py",
    "b/d.py",
    "xz/e.py",
    "x(y)z/e.py",
    "x(y))z/e.py",
    "xyyz/e.py",
    "a/f.py",
    "f.py",
    "g.py",
    "x/g.py",
    "q.py",
    "s/h.py",
    "src/i.ts",
    "'q'.py",
    "t/j.py",
    "tx/j.py",
    "src/k.py",
    "srcsrc/k.py",
    "a",
    "b",
]


@pytest.mark.parametrize(
    "name",
    [
        "*/b.py",
        "*",
        "?.py",
        "[ab]/c.py",
        "a|b/d.py",
        "x(y)+z/e.py",
        "{a}/f.py",
        "**/g.py",
        "'q'.py",
        "s*/h.py",
        "src*/i.ts",
        "t?/j.py",
        "+(src)/k.py",
        "@(a|b)",
    ],
)
def test_a_file_name_in_a_glob_matches_only_itself(name):
    globs = draft.suggest_paths([name])
    assert globs, f"{name!r} gave no glob"
    for g in globs:
        assert matches(g, name), f"{g!r} (from {name!r}) does not match {name!r}"
        wrong = [p for p in OTHERS if p != name and matches(g, p)]
        assert wrong == [], f"{g!r} (from {name!r}) also matches {wrong}"


@pytest.mark.parametrize("name", ["{src,..}/a.py", "{a,b}.py", "!b.py", "#c.py"])
def test_a_file_name_no_escaping_makes_literal_gives_no_glob_that_reaches_other_files(name):
    """A brace with a comma (expanded before classes are read), a leading `!` (negation) or `#` (a
    comment) cannot be escaped for every matcher: such a name adds no glob."""
    globs = draft.suggest_paths([name, "tests/test_x.py"])
    assert globs == ["tests/**/*.py"]


def test_ordinary_file_names_keep_their_globs():
    assert draft.suggest_paths(
        ["tests/test_store.py", "src/app/main.ts", "src/app/util.tsx", "Makefile"]
    ) == ["tests/**/*.py", "src/**/*.{ts,tsx}", "Makefile"]


# -- the ledger's caps -----------------------------------------------------------------------------------------


def failure(n: int | str) -> Failure:
    return Failure(
        kind="command",
        tool="sh",
        signature=f"sh error: invented failure number {n}",
        message=f"invented failure number {n}",
        files=("src/app.py",),
        excerpt=f"error: invented failure number {n} " + "x" * 200,
    )


def rec(data: str, n, session: str, **caps) -> ledger.Recorded:
    return ledger.record(
        data,
        failure(n),
        session=session,
        at="2026-01-01T10:00:00Z",
        command="make",
        error=failure(n).excerpt,
        source="hook",
        threshold=3,
        **caps,
    )


def ledger_size(data: str) -> tuple[int, int]:
    """The ledger's files (what the caps count) and their bytes."""
    files = [Path(p) for p in ledger.files(data)]
    return len(files), sum(p.stat().st_size for p in files)


def age(data: str, key: str, seconds: float) -> None:
    """Make every file holding signature `key` `seconds` old."""
    import json

    for p in map(Path, ledger.files(data)):
        if key in json.loads(p.read_text())["seen"]:
            when = p.stat().st_mtime - seconds
            os.utime(p, (when, when))


@pytest.fixture
def data(tmp_path) -> str:
    d = tmp_path / ".memcurate"
    d.mkdir()
    return str(d)


@pytest.mark.parametrize("cap", ["entries", "bytes"])
def test_a_flood_of_new_failures_keeps_the_ledger_within_its_caps_forgetting_the_rarest_and_oldest(
    cap, data
):
    caps = (
        {"max_entries": 120, "max_bytes": 1 << 30}
        if cap == "entries"
        else {"max_entries": 100_000, "max_bytes": 64 * 1024}
    )
    # What is worth keeping: a failure seen in three sessions (its candidate staged), one seen in two.
    for s in ("s1", "s2", "s3"):
        rec(data, "staged", s, **caps)
    assert os.path.exists(ledger.candidate_path(data, failure("staged").key))
    for s in ("s1", "s2"):
        rec(data, "twice", s, **caps)
    # Old single sightings, then a flood of new ones from one hostile session.
    old = [rec(data, f"old-{i}", "s1", **caps).key for i in range(10)]
    for key in old:
        age(data, key, 3600)
    flood = [rec(data, f"flood-{i}", "hostile", **caps).key for i in range(300)]

    files, size = ledger_size(data)
    assert files <= caps["max_entries"] and size <= caps["max_bytes"], (files, size)
    kept = set(ledger.keys(data))
    assert failure("staged").key in kept  # a rule candidate rests on it
    assert failure("twice").key in kept  # seen in more sessions than any of the flood
    assert not kept & set(old)  # the oldest of the rarest went first
    assert flood[-1] in kept  # the newest stays
    assert ledger.sessions(data, failure("twice").key) == 2


def test_files_that_hold_no_failure_go_before_any_failure_is_forgotten(data):
    """Files named like the ledger's but holding no signature (JSON of another shape, bytes that are
    not JSON, as a hostile session could plant) count toward the caps: the caps remove them first
    (as many as they need gone), and the failures recorded stay. Before, they were never removed, so every record was past the
    caps and forgot real failures instead."""
    caps = {"max_entries": 40, "max_bytes": 1 << 30}
    for s in ("s1", "s2"):
        rec(data, "twice", s, **caps)
    kept = [rec(data, f"kept-{i}", "s1", **caps).key for i in range(5)]
    root = os.path.join(data, ledger.FAILURES_DIR)
    for i in range(60):
        with open(os.path.join(root, f"planted.{i}.json"), "wb") as f:
            f.write(b'{"format": 2, "note": "not a record"}' if i < 50 else b"\x00 not JSON")
    rec(data, "new", "s3", **caps)

    planted = [n for n in os.listdir(root) if n.startswith("planted.")]
    assert len(planted) < 60  # as many as the caps needed gone
    assert set(ledger.keys(data)) >= {*kept, failure("twice").key, failure("new").key}
    assert ledger.sessions(data, failure("twice").key) == 2
    files, _ = ledger_size(data)
    assert files - 10 <= caps["max_entries"]  # bytes that are not JSON count nothing, as before


def test_within_the_caps_nothing_is_forgotten(data):
    keys = [rec(data, i, "s1").key for i in range(20)]
    assert sorted(keys) == ledger.keys(data)


@pytest.mark.parametrize(
    "key,value,ok",
    [
        ("ledger_max_entries", 2000, True),
        ("ledger_max_entries", 99, False),
        ("ledger_max_entries", 10**9, False),
        ("ledger_max_bytes", 1 << 20, True),
        ("ledger_max_bytes", 1000, False),
        ("ledger_max_bytes", 1 << 40, False),
    ],
)
def test_the_caps_are_config_keys_a_project_cannot_lift_out_of_reach(key, value, ok, project):
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text(f"rules:\n  {key}: {value}\n")
    if ok:
        assert config.load(project)["rules"][key] == value
    else:
        with pytest.raises(config.ConfigError, match=f"rules.{key}: expected a whole number from"):
            config.load(project)


def test_the_defaults_are_two_thousand_entries_and_one_mebibyte(project):
    rules = config.load(project)["rules"]
    assert (rules["ledger_max_entries"], rules["ledger_max_bytes"]) == (2000, 1 << 20)


def test_a_fifo_planted_as_the_index_neither_blocks_nor_lifts_the_caps(data):
    """The index that spares each record a read of every file is in the data dir, where Claude can
    put a FIFO."""
    import threading

    rec(data, "first", "s1")
    tally = Path(data) / ledger.FAILURES_DIR / ledger.INDEX_FILE
    tally.unlink(missing_ok=True)
    os.mkfifo(tally)
    done: list = []
    t = threading.Thread(
        target=lambda: done.append(
            [rec(data, f"more-{i}", "s1", max_entries=100, max_bytes=1 << 30) for i in range(60)]
        ),
        daemon=True,
    )
    t.start()
    t.join(10)
    if not done:
        os.close(os.open(tally, os.O_WRONLY | os.O_NONBLOCK))  # let the blocked reader go
    assert done, "recording blocked on a FIFO"
    assert ledger_size(data)[0] <= 100


def test_the_failure_hook_keeps_the_ledger_within_the_configured_cap(project):
    """Through the real dispatcher, as a hostile session would: 150 new failing commands against a
    project capped at 100 files. The ledger counts them, and stays within the cap."""
    import json

    from memcurate.hooks import dispatch

    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text("rules:\n  ledger_max_entries: 100\n")
    data = str(project / ".memcurate")
    for i in range(150):
        doc = {
            "session_id": "hostile",
            "transcript_path": "",
            "cwd": str(project),
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": "make"},
            "tool_use_id": f"toolu_{i}",
            "error": f"Exit code 1\nerror: cannot find module mod_{i}",
            "is_interrupt": False,
        }
        assert dispatch.run(json.dumps(doc).encode(), {"CLAUDE_PROJECT_DIR": str(project)}) == 0
    keys = ledger.keys(data)
    assert len(keys) > 10  # counted, not turned away
    assert ledger_size(data)[0] <= 100
    last = [k for k in keys if "mod_149" in (ledger.failure(data, k) or {}).get("signature", "")]
    assert last, "the newest failure was forgotten"
