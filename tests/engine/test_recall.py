"""Recall on UserPromptSubmit (issue 12, item 4): saved memories that bear on a prompt come back as
additionalContext, once per session, within the budget, never repeating what MEMORY.md already loads."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import needs_shared, run_hook, shared

from memcurate.curator import config
from memcurate.curator.candidates.incremental import capture
from memcurate.curator.engine import Engine
from memcurate.curator.headless import auto_approve
from memcurate.curator.memory import memfile
from memcurate.curator.memory.front_matter import light_fields
from memcurate.curator.memory.recall import context, skip_reason
from memcurate.curator.memory.recall.answer import Recall, recall
from memcurate.curator.util.log import read_log

NOW = dt.datetime(2026, 12, 1, 12, 0, 0, tzinfo=dt.UTC)
SAMPLE = "-Users-dain-workspace-claude-code-log-sample/"
SESSIONS = [
    SAMPLE + "aa5c5ada-4f1e-4b7f-9d1f-c496b3badde5.jsonl",  # a failing cache-version test
    SAMPLE + "12a546d1-83a7-49a6-abba-5400db340b43.jsonl",  # sidechain messages in the timeline
    SAMPLE
    + "fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl",  # the GitHub action, pyright in converter.py
    "-src-experiments-claude_p/2b4ed4c0-b905-41de-9238-273db3ec737a.jsonl",
]  # WebSearch in -p mode
UNRELATED = [
    "write a haiku about autumn leaves and the sea",
    "set up a kubernetes ingress for the payments service with TLS",
    "please refactor the login handler to use async database calls",
    "add a dark mode toggle to the settings page",
    # share two to four words with saved memories, by chance: below the relevance floor
    "add type hints to the timeline messages module",
    "run the failing tests in parallel with pytest-xdist",
]


# -- a project whose memories were saved from real sessions ---------------------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    """A project with the memories of SESSIONS saved offline (every clean draft), built once."""
    if not all(shared(s).is_file() for s in SESSIONS):
        pytest.skip(f"shared transcripts not found beside the checkout ({shared('')})")
    base = tmp_path_factory.mktemp("recall-saved")
    with pytest.MonkeyPatch.context() as mp:
        for name in ("HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME"):
            mp.setenv(name, str(base / "home" / name.lower()))
        # offline drafts stand in for a model's here: saved as drafted, not held as cards for a person
        project = make_project(base, "auto_approve:\n  offline_cards: true\n")
        engine = Engine(project, clock=lambda: "2026-11-22T10:04:00Z")
        for s in SESSIONS:
            capture(engine.data, engine.cfg, str(shared(s)), event="backfill", summary=True)
        summary = auto_approve(engine, min_confidence=0.0)
        assert summary["created"], summary
    return base


def make_project(base: Path, extra: str = "") -> Path:
    project = base / "project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {base / 'memory'}\n{extra}"
    )
    return project


@pytest.fixture
def proj(saved, tmp_path) -> Path:
    """A copy of the saved project (its memory root and data dir), for one test to change."""
    shutil.copytree(saved / "memory", tmp_path / "memory")
    project = make_project(tmp_path)
    return project


def run(project: Path, prompt: str, session: str = "s-1", **cfg_over) -> Recall:
    """recall() as the hook calls it, with config keys overridden (`recall__max_chars=500`)."""
    data = str(project / ".memcurate")
    os.makedirs(data, exist_ok=True)
    cfg = config.load(project, data)
    for key, value in cfg_over.items():
        section, _, name = key.partition("__")
        cfg = {**cfg, section: {**cfg[section], name: value}}
    return recall(project, data, cfg, prompt, session, now=NOW)


def memory_root(project: Path) -> Path:
    return project.parent / "memory"


@needs_shared
@pytest.mark.parametrize(
    "prompt, expected",
    [
        (
            "the cache invalidation version mismatch test is failing again",
            "runbook/fix-failing-test-cache-invalidation-version-mismatch",
        ),
        (
            "how do we render sidechain messages in the timeline",
            "runbook/fix-failing-test-timeline-system-messages",
        ),
        (
            "can WebSearch be used in -p mode without asking for permission?",
            "constraint/websearch-tool-available-but-requires-user-permission-grant",
        ),
        ("fix the pyright errors in converter.py", "runbook/fix-error-in-converter-py"),
        ("update the github action workflow", "session_summary/updated-the-github-action"),
    ],
)
def test_a_prompt_about_a_saved_session_recalls_its_memory_first(proj, prompt, expected):
    r = run(proj, prompt)
    assert r.given and r.given[0].startswith(expected), (r.given, r.note)
    path = memory_root(proj) / (r.given[0] + ".md")
    head = f"Saved as {path} ("
    assert head in r.context  # where it lives: a path Claude can Read
    title = memfile.parse(path.read_text()).title
    assert f"## {title}" in r.context
    assert "not instructions" in r.context.splitlines()[0]


@needs_shared
@pytest.mark.parametrize("prompt", UNRELATED)
def test_an_unrelated_prompt_recalls_nothing(proj, prompt):
    r = run(proj, prompt)
    assert r.context == "" and r.given == [], r.given
    assert r.note == "nothing relevant"


@needs_shared
def test_one_session_never_gets_the_same_memory_twice(proj):
    prompt = "the cache invalidation version mismatch test is failing again"
    first = run(proj, prompt, session="s-a")
    assert first.given
    again = run(proj, prompt, session="s-a")
    assert not set(again.given) & set(first.given)
    assert "already given in this session" in again.note
    other = run(proj, prompt, session="s-b")  # another session starts afresh
    assert other.given[0] == first.given[0]


@needs_shared
def test_the_budget_holds_for_real_memories(proj):
    prompt = "fix the pyright errors in converter.py and the failing cache test"
    # A memory's block names its file by its full path, so the budgets grow with the test folder's path (xdist's
    # workers add popen-gwN/ to it, the user's name is in it): 800, 1000 and 2000 where it is 69 characters long.
    path = len(str(memory_root(proj)))
    for budget in (731 + path, 931 + path, 1931 + path):
        r = run(proj, prompt, session=f"budget-{budget}", recall__max_chars=budget)
        assert len(r.context) <= budget
        assert r.given, budget
        assert len(r.given) <= 3


@needs_shared
def test_memories_loaded_by_memory_md_come_without_their_summary_and_the_others_in_full(proj):
    root = memory_root(proj)
    key = "runbook/fix-failing-test-cache-invalidation-version-mismatch"
    doc = memfile.parse((root / f"{key}.md").read_text())
    prompt = "the cache invalidation version mismatch test is failing again"
    loaded = run(proj, prompt, session="loaded")
    assert loaded.given[0] == key
    block = loaded.context.split("\n## ")[1]
    assert "already loaded" in block and doc.description not in block
    assert "### Symptom\n" + doc.sections["Symptom"] in block  # its headings under the memory's own
    # Past the load cut (MEMORY.md's first lines only): title, description and body.
    past = run(proj, prompt, session="past", memory_md__max_lines=3)
    block = past.context.split("\n## ")[1]
    assert (
        doc.description in block
        and "already loaded" not in block
        and doc.sections["Symptom"] in block
    )


# -- synthetic memories: exact control over MEMORY.md, bodies and status ----------------------------------


def write_memory(
    root: Path,
    category: str,
    id: str,
    title: str,
    body: str,
    *,
    description: str = "",
    status: str = "active",
    updated: str = "2026-11-20T08:00:00Z",
) -> Path:
    doc = memfile.MemoryDoc(
        id=id,
        category=category,
        title=title,
        description=description or f"When {title}",
        tags=["recall"],
        created=updated,
        updated=updated,
        status=status,
        body=body,
    )
    path = root / category / f"{id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(memfile.render(doc))
    return path


def entry(category: str, id: str, title: str, description: str = "") -> str:
    return f"- [{title}]({category}/{id}.md) — {description or 'When ' + title}"


def runbook_body(words: str, extra: str = "") -> str:
    return (
        f"## Symptom\nThe {words} job fails with a timeout.\n\n## Steps\n1. Restart the {words} worker "
        f"with the drain flag.\n2. Clear the stale lock file.\n\n## Verification\nThe {words} job "
        f"passes again.{extra}"
    )


@pytest.fixture
def synth(tmp_path) -> Path:
    (tmp_path / "memory").mkdir()
    return make_project(tmp_path)


def test_past_the_cut_archived_and_unlisted_memories_come_in_full(synth):
    root = memory_root(synth)
    write_memory(
        root, "runbook", "zorblat-loaded", "Zorblat queue stalls", runbook_body("zorblat queue")
    )
    write_memory(
        root,
        "runbook",
        "zorblat-past",
        "Zorblat queue restarts",
        runbook_body("zorblat queue restart"),
    )
    write_memory(
        root,
        "runbook",
        "zorblat-archived",
        "Zorblat queue archive",
        runbook_body("zorblat queue old"),
        status="archived",
    )
    filler = [f"- Claude's own note {i}" for i in range(10)]
    (root / "MEMORY.md").write_text(
        "\n".join(
            [
                entry("runbook", "zorblat-loaded", "Zorblat queue stalls"),
                *filler,
                entry("runbook", "zorblat-past", "Zorblat queue restarts"),
            ]
        )
        + "\n"
    )
    r = run(synth, "the zorblat queue job fails with a timeout again", memory_md__max_lines=5)
    assert set(r.given) == {
        "runbook/zorblat-loaded",
        "runbook/zorblat-past",
        "runbook/zorblat-archived",
    }
    blocks = {b.split("\n", 1)[0]: b for b in r.context.split("\n## ")[1:]}
    assert "already loaded" in blocks["Zorblat queue stalls"]
    # its line: Claude has it
    assert "When Zorblat queue stalls" not in blocks["Zorblat queue stalls"]
    # past the cut: in full
    assert "When Zorblat queue restarts" in blocks["Zorblat queue restarts"]
    assert "runbook, archived" in blocks["Zorblat queue archive"]
    assert "When Zorblat queue archive" in blocks["Zorblat queue archive"]
    for b in blocks.values():
        assert "Clear the stale lock file." in b


def test_a_loaded_memory_whose_body_adds_nothing_is_not_given(synth):
    root = memory_root(synth)
    title, desc = (
        "Pin frobnicator to version 3",
        "frobnicator version 3 pinned for the widget build",
    )
    write_memory(
        root,
        "decision",
        "pin-frobnicator",
        title,
        "## Decision\nPin frobnicator version 3.\n\n## Rationale\nThe widget build.",
        description=desc,
    )
    (root / "MEMORY.md").write_text(entry("decision", "pin-frobnicator", title, desc) + "\n")
    r = run(synth, "which frobnicator version does the widget build pin?")
    assert r.given == [] and r.context == ""
    (root / "MEMORY.md").write_text("")  # not listed: Claude has nothing of it
    r = run(synth, "which frobnicator version does the widget build pin?", session="s-2")
    assert r.given == ["decision/pin-frobnicator"]


def test_the_budget_holds_with_a_huge_body_and_ten_matches(synth):
    root = memory_root(synth)
    huge = "\n".join(
        f"Line {i}: the quasar relay drops packets when the buffer overflows. "
        f"Increase the window for quasar relay {i}."
        for i in range(3000)
    )
    write_memory(
        root,
        "runbook",
        "quasar-huge",
        "Quasar relay drops packets",
        runbook_body("quasar relay", huge),
    )
    for i in range(10):
        write_memory(
            root,
            "runbook",
            f"quasar-{i}",
            f"Quasar relay drops packets {i}",
            runbook_body(f"quasar relay buffer {i}"),
        )
    for i, topic in enumerate(
        ["kiln", "ferry", "gable", "mosaic", "tundra", "walnut", "cobalt", "lantern"] * 4
    ):
        write_memory(
            root,
            "decision",
            f"other-{i}",
            f"Keep the {topic} service {i} small",
            f"## Decision\nThe {topic} service {i} stays small.\n\n## Rationale\nFewer moving parts.",
        )
    prompt = "the quasar relay drops packets when the buffer overflows"
    # 1300: room for four heads
    for budget, most, fit in (
        (2000, 3, 3),
        (10_000, 3, 3),
        (1300, 5, 4),
    ):
        r = run(
            synth,
            prompt,
            session=f"b-{budget}",
            recall__max_chars=budget,
            recall__max_memories=most,
        )
        assert 0 < len(r.context) <= budget
        assert r.given[0] == "runbook/quasar-huge"
        # the huge body is cut to fit, at a boundary, and leaves room for the others: it cannot starve them
        block = r.context.split("## Quasar relay drops packets\n", 1)[1].split("\n## ")[0]
        assert block.rstrip().endswith(context.CUT.strip())
        assert len(r.given) == fit <= most


def test_bodies_are_cut_at_a_line_or_sentence_boundary():
    text = "First line of the body.\nSecond line, longer, with two sentences. The second one ends here.\nThird."
    assert context.cut(text, 1000) == text
    # a line break, when near
    assert context.cut(text, 30) == "First line of the body." + context.CUT
    assert (
        context.cut(text, 60)
        == "First line of the body.\nSecond line, longer, with two" + context.CUT
    )
    assert (
        context.cut("One sentence here. Another sentence that runs on and on and on.", 30)
        == "One sentence here." + context.CUT
    )
    for n in range(0, len(text) + 5):
        assert len(context.cut(text, n)) <= n


@pytest.mark.parametrize(
    "prompt, why",
    [
        ("yes", "acknowledgement"),
        ("Continue.", "acknowledgement"),
        ("ok", "acknowledgement"),
        ("looks good!", "acknowledgement"),
        ("/compact keep the zorblat notes", "slash command"),
        ("fix it", "too few content words"),
        ("what about zorblat?", "too few content words"),
    ],
)
def test_trivial_prompts_are_skipped(synth, prompt, why):
    cfg = config.load(synth)
    assert skip_reason(prompt, cfg) == why
    r = run(synth, prompt)
    assert r.note == f"skipped: {why}" and r.context == ""


def test_recall_can_be_turned_off(synth):
    write_memory(
        memory_root(synth),
        "runbook",
        "zorblat",
        "Zorblat queue stalls",
        runbook_body("zorblat queue"),
    )
    assert run(synth, "the zorblat queue job fails with a timeout").given
    off = run(
        synth, "the zorblat queue job fails with a timeout", session="s-2", recall__enabled=False
    )
    assert off.context == "" and off.note.startswith("off")


@pytest.mark.parametrize(
    "key, value", [("max_chars", 0), ("max_chars", 10_001), ("max_memories", 0), ("min_words", 0)]
)
def test_recall_bounds_are_validated(synth, key, value):
    (synth / ".claude" / "memcurate.yaml").write_text(f"recall:\n  {key}: {value}\n")
    with pytest.raises(config.ConfigError, match=f"recall.{key}"):
        config.load(synth)


def test_a_memory_saved_after_the_last_call_is_found_and_a_removed_one_is_not_given(synth):
    root = memory_root(synth)
    write_memory(root, "runbook", "zorblat", "Zorblat queue stalls", runbook_body("zorblat queue"))
    prompt = "the quibble parser rejects unicode input files"
    assert run(synth, prompt).given == []
    write_memory(
        root,
        "decision",
        "quibble-parser",
        "Quibble parser reads unicode input",
        "## Decision\nThe quibble parser decodes input files as UTF-8.\n\n## Rationale\nUnicode files.",
    )
    assert run(synth, prompt, session="s-2").given == ["decision/quibble-parser"]
    (root / "decision" / "quibble-parser.md").unlink()
    assert run(synth, prompt, session="s-3").given == []


def test_damaged_files_mean_fewer_results_never_an_error(synth):
    root = memory_root(synth)
    write_memory(
        root, "runbook", "zorblat-good", "Zorblat queue stalls", runbook_body("zorblat queue")
    )
    bad = write_memory(
        root, "runbook", "zorblat-bad", "Zorblat queue stalls badly", runbook_body("zorblat queue")
    )
    prompt = "the zorblat queue job fails with a timeout"
    assert len(run(synth, prompt).given) == 2  # indexed, both
    # the folder's stamp is old enough to be trusted ...
    os.utime(root / "runbook", ns=(10**18, 10**18))
    assert len(run(synth, prompt, session="s-1b").given) == 2
    bad.write_bytes(b"\xff\xfe not a memory any more")  # ... and an edit in place does not move it
    (root / "MEMORY.md").write_bytes(b"\xff\xfe\n" + entry("runbook", "x", "y").encode())
    r = run(synth, prompt, session="s-2")
    assert r.given == ["runbook/zorblat-good"]
    assert any("runbook/zorblat-bad: not given" in p for p in r.problems)
    assert any("MEMORY.md is not UTF-8" in p for p in r.problems)
    # an index that is not a database: rebuilt, same answer
    (synth / ".memcurate" / "index.sqlite").write_bytes(b"garbage" * 100)
    assert run(synth, prompt, session="s-3").given == ["runbook/zorblat-good"]


def test_light_fields_read_what_render_writes_and_leave_out_what_they_cannot():
    doc = memfile.MemoryDoc(
        id="a-b",
        category="decision",
        title='Use "quotes": yes',
        description="plain words",
        tags=["x"],
        created="2026-11-20T08:00:00Z",
        updated="2026-11-21T08:00:00Z",
        body="## D\nb",
    )
    fields, body = light_fields(memfile.render(doc))
    assert fields["title"] == 'Use "quotes": yes' and fields["description"] == "plain words"
    assert (
        fields["updated"] == "2026-11-21T08:00:00Z"
        and fields["status"] == "active"
        and body == "## D\nb"
    )
    odd, _ = light_fields("---\ntitle: 'it''s'\nstatus: yes\ncount: 12\nnote: a # b\n---\n")
    assert odd == {"title": "it's"}


# -- the real hook process ---------------------------------------------------------------------------------


def hook_payload(
    prompt: str, project: Path, session: str = "0b5e6a34-1111-4222-8333-444455556666"
) -> dict:
    return {
        "session_id": session,
        "transcript_path": str(project / "t.jsonl"),
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }


def test_the_hook_process_prints_claude_codes_json_or_nothing(synth):
    root = memory_root(synth)
    write_memory(root, "runbook", "zorblat", "Zorblat queue stalls", runbook_body("zorblat queue"))
    p = run_hook(hook_payload("the zorblat queue job fails with a timeout", synth), cwd=synth)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    out = json.loads(p.stdout)
    assert set(out) == {"hookSpecificOutput"}
    spec = out["hookSpecificOutput"]
    assert spec["hookEventName"] == "UserPromptSubmit"
    assert f"Saved as {root / 'runbook' / 'zorblat.md'}" in spec["additionalContext"]
    assert len(spec["additionalContext"]) <= 2000
    for prompt in (
        "the zorblat queue job fails with a timeout",  # the same session: given already
        "write a haiku about autumn leaves",
        "yes",
        "/clear",
    ):
        p = run_hook(hook_payload(prompt, synth), cwd=synth)
        assert (p.returncode, p.stdout, p.stderr) == (0, b"", b""), prompt
    lines = [x for x in read_log(synth / ".memcurate") if "UserPromptSubmit" in x]
    assert len(lines) == 5
    assert "autumn" not in "\n".join(lines)  # the log never holds the prompt's text


@pytest.mark.parametrize(
    "raw",
    [
        b'{"hook_event_name": "UserPromptSubmit", "prompt": 7}',
        b'{"hook_event_name": "UserPromptSubmit"}',
        b'{"hook_event_name": "UserPromptSubmit", "prompt": "zorblat queue fails", '
        b'"session_id": ["x"]}',
    ],
)
def test_malformed_prompt_input_is_one_log_line_and_nothing_on_stdout(synth, raw):
    p = run_hook(None, cwd=synth, raw=raw)
    assert (p.returncode, p.stdout, p.stderr) == (0, b"", b"")
    assert len(read_log(synth / ".memcurate")) == 1


_PROBE = """
import json, sys
from memcurate.curator.cli import main
rc = main(["hook"])
sys.stdout.write("\\n" + json.dumps({"rc": rc, "modules": sorted(sys.modules)}))
"""


def test_the_recall_hook_path_imports_no_yaml_and_no_ui(synth):
    """With the index current (memory files are parsed, with YAML, only when one is new or changed)."""
    import subprocess
    import sys

    from conftest import ROOT

    write_memory(
        memory_root(synth),
        "runbook",
        "zorblat",
        "Zorblat queue stalls",
        runbook_body("zorblat queue"),
    )
    # a folder stamp old enough to be trusted
    os.utime(memory_root(synth) / "runbook", ns=(10**18, 10**18))
    # indexes it
    assert run(synth, "the zorblat queue job fails with a timeout", session="warm-up").given
    p = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=synth,
        capture_output=True,
        timeout=60,
        input=json.dumps(
            hook_payload("the zorblat queue job fails with a timeout", synth)
        ).encode(),
        env={**os.environ, "PYTHONPATH": str(ROOT / "dev")},
    )
    hook_out, _, probe = p.stdout.decode().rpartition("\n")
    # indexed and recalled
    assert "zorblat.md" in json.loads(hook_out)["hookSpecificOutput"]["additionalContext"]
    modules = json.loads(probe)["modules"]
    for name in ("yaml", "textual", "rich", "anthropic", "widgets"):
        assert not any(m == name or m.startswith(name + ".") for m in modules), name


def test_a_memory_saved_since_the_index_looked_is_recalled_without_loading_the_indexer(synth):
    """The first prompt after a save reads the new file itself (folders.open_for_reading): no YAML, no
    indexer, so that call costs what the others do; a file removed since is not given either."""
    import subprocess
    import sys

    from conftest import ROOT

    root = memory_root(synth)
    write_memory(root, "runbook", "zorblat", "Zorblat queue stalls", runbook_body("zorblat queue"))
    gone = write_memory(
        root, "runbook", "zorblat-old", "Zorblat queue stalled once", runbook_body("zorblat queue")
    )
    # indexed
    assert (
        len(run(synth, "the zorblat queue job fails with a timeout", session="warm-up").given) == 2
    )
    write_memory(
        root,
        "decision",
        "quibble-parser",
        "Quibble parser reads unicode input",
        "## Decision\nThe quibble parser decodes input files as UTF-8.\n\n## Rationale\nUnicode files.",
    )
    gone.unlink()
    prompts = [
        "the quibble parser rejects unicode input files",
        "the zorblat queue job fails with a timeout",
    ]
    for i, prompt in enumerate(prompts):
        p = subprocess.run(
            [sys.executable, "-c", _PROBE],
            cwd=synth,
            capture_output=True,
            timeout=60,
            input=json.dumps({**hook_payload(prompt, synth), "session_id": f"p-{i}"}).encode(),
            env={**os.environ, "PYTHONPATH": str(ROOT / "dev")},
        )
        hook_out, _, probe = p.stdout.decode().rpartition("\n")
        context = json.loads(hook_out)["hookSpecificOutput"]["additionalContext"]
        assert ("quibble-parser.md" in context) == (i == 0) and "zorblat-old.md" not in context
        modules = json.loads(probe)["modules"]
        assert (
            "yaml" not in modules and "memcurate.curator.memory.index.memory_index" not in modules
        )
    # in-process, the same answer (the index itself is left for the engine to bring up to date)
    assert run(synth, prompts[0], session="s-9").given == ["decision/quibble-parser"]
