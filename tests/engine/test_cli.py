"""The `memcurate` command line (DESIGN §3, §4, §13): version and help, backfill
triage, status, config errors, --project, and output that is free of terminal
escapes whatever the transcript held."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import claude_transcripts, run_cli, run_hook
from synthetic import Transcript, text, tool

from memcurate import curator
from memcurate.curator.candidates import staging
from memcurate.curator.categories import NAMES

SUBCOMMANDS = ("hook", "triage", "status", "install", "uninstall", "demo")


def session(tag: str = "postgres", stamp: str = "2025-07-14T22:59") -> Transcript:
    """Triggers decision and tech_debt; busy enough for a session summary."""
    t = Transcript(session="5d7c2f10-aaaa-4bbb-8ccc-ddddeeeeffff", stamp=stamp)
    t.user(
        f"We decided to go with {tag} because it is simpler to operate. Leave the old importer as a TODO for now."
    )
    t.assistant(
        text("I'll look at the code."),
        tool("t1", "Read", file_path="/home/dev/app/db.py"),
        tool("t2", "Grep", pattern="engine"),
    )
    t.result("t1", "import sqlite3").result("t2", "db.py:3")
    t.assistant(
        tool("t3", "Edit", file_path="/home/dev/app/db.py", old_string="a", new_string="b"),
        tool("t4", "Bash", command="pytest -q"),
    )
    t.result("t3", "ok").result("t4", "5 passed")
    t.user("Now please also update the README for the switch.")
    t.assistant(
        text(f"Switched to {tag}; the README says so. The old importer is left as a TODO for now.")
    )
    return t


def data_of(project: Path) -> Path:
    return project / ".memcurate"


def staged(project: Path) -> list[str]:
    d = data_of(project) / "staging"
    return sorted(n for n in os.listdir(d) if not n.startswith(".")) if d.is_dir() else []


def stage_two(project: Path, transcripts: Path, backend: str | None = None) -> list[str]:
    """Two sessions backfilled into `project` (with `backend`, when given, in its config): their triage ids."""
    if backend:
        (project / ".claude").mkdir()
        (project / ".claude" / "memcurate.yaml").write_text(f"backend: {backend}\n")
    a = session("postgres").write(transcripts / "a.jsonl")
    b = session("kafka", stamp="2025-07-15T09:00").write(transcripts / "b.jsonl")
    assert run_cli("triage", str(a), str(b), cwd=project).returncode == 0
    return staged(project)


def one_line_error(p) -> str:
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


@pytest.fixture
def transcripts(tmp_path) -> Path:
    return claude_transcripts()


# -- version, help, usage ---------------------------------------------------------


def test_version(project):
    p = run_cli("--version", cwd=project)
    assert p.returncode == 0
    assert p.stdout.strip() == f"memcurate {curator.__version__}"


def test_help_lists_the_subcommands(project):
    p = run_cli("--help", cwd=project)
    assert p.returncode == 0
    for name in SUBCOMMANDS:
        assert name in p.stdout
    assert "--project" in p.stdout


@pytest.mark.parametrize(
    "args", [("--no-such-option",), ("triage",), ("frobnicate",), ("status", "--bogus")]
)
def test_usage_errors_exit_2(args, project):
    p = run_cli(*args, cwd=project)
    assert p.returncode == 2
    assert "usage:" in p.stderr
    assert "Traceback" not in p.stderr
    assert not data_of(project).exists()


# -- triage (backfill) ----------------------------------------------------------------


def test_triage_json_stages_and_reports_every_category(project, transcripts):
    a = session("postgres").write(transcripts / "a.jsonl")
    b = session("kafka", stamp="2025-07-15T09:00").write(transcripts / "b.jsonl")
    p = run_cli("triage", str(a), str(b), "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    doc = json.loads(p.stdout)  # exactly one document
    assert [t["transcript"] for t in doc["triages"]] == [str(a), str(b)]
    ids = []
    for t in doc["triages"]:
        assert [c["category"] for c in t["categories"]] == list(NAMES)
        for c in t["categories"]:
            assert set(c) >= {"category", "score", "triggered"}
            assert 0.0 <= c["score"] <= 1.0 and isinstance(c["triggered"], bool)
        triggered = {c["category"] for c in t["categories"] if c["triggered"]}
        assert {"decision", "tech_debt", "session_summary"} <= triggered
        assert t["triage"]
        ids.append(t["triage"])
        staged_doc = json.loads(
            (data_of(project) / "staging" / t["triage"] / "triage.json").read_text()
        )
        assert staged_doc["source"]["transcript"] == t["transcript"]
        assert {n for n, c in staged_doc["categories"].items() if c["triggered"]} == triggered
        assert set(staging.category_states(str(data_of(project)), t["triage"])) == triggered
        assert {
            r["state"] for r in staging.category_states(str(data_of(project)), t["triage"]).values()
        } == {"triaged"}
    assert staged(project) == sorted(ids)
    assert (data_of(project) / ".gitignore").read_text() == "*\n"

    # A second run: nothing new, nothing staged.
    before = staged(project)
    p = run_cli("triage", str(a), str(b), "--json", cwd=project)
    assert p.returncode == 0
    again = json.loads(p.stdout)
    assert [t["status"] for t in again["triages"]] == ["nothing-new", "nothing-new"]
    assert all(t["triage"] is None for t in again["triages"])
    assert staged(project) == before


def test_triage_text_output(project, transcripts):
    a = session().write(transcripts / "a.jsonl")
    p = run_cli("triage", str(a), cwd=project)
    assert p.returncode == 0 and p.stderr == ""
    [tid] = staged(project)
    assert str(a) in p.stdout and tid in p.stdout
    for name in NAMES:
        assert name in p.stdout
    p = run_cli("triage", str(a), cwd=project)
    assert p.returncode == 0 and "nothing new" in p.stdout
    assert staged(project) == [tid]


def test_triage_missing_path_is_one_clear_error(project, transcripts):
    missing = transcripts / "gone.jsonl"
    line = one_line_error(run_cli("triage", str(missing), cwd=project))
    assert line.startswith("memcurate:") and str(missing) in line and "not found" in line
    assert staged(project) == []


@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
def test_triage_mixed_paths_stage_the_good_ones(json_out, project, transcripts):
    good = session().write(transcripts / "good.jsonl")
    missing = transcripts / "gone.jsonl"
    folder = transcripts / "a-folder.jsonl"
    folder.mkdir()
    args = ["triage", str(missing), str(good), str(folder)] + (["--json"] if json_out else [])
    p = run_cli(*args, cwd=project)
    assert p.returncode == 1
    assert "Traceback" not in p.stderr
    assert len(staged(project)) == 1
    doc = json.loads(
        (data_of(project) / "staging" / staged(project)[0] / "triage.json").read_text()
    )
    assert doc["source"]["transcript"] == str(good)
    if json_out:
        reports = json.loads(p.stdout)["triages"]
        assert [r["status"] for r in reports] == ["error", "staged", "error"]
        assert str(missing) in reports[0]["error"] and str(folder) in reports[2]["error"]
    else:
        errors = p.stderr.splitlines()
        assert len(errors) == 2
        assert str(missing) in errors[0] and str(folder) in errors[1]


def test_triage_json_error_still_explained_on_stderr(project, transcripts):
    missing = transcripts / "gone.jsonl"
    p = run_cli("triage", str(missing), "--json", cwd=project)
    json.loads(p.stdout)
    assert str(missing) in one_line_error(p)


# -- status -------------------------------------------------------------------------------


def _expected_counts(project: Path, tids: list[str] | None = None) -> dict:
    """Each triggered category's state: its last line in the state log when it has moved, else `triaged`."""
    by_state: dict[str, int] = {}
    for tid in staged(project) if tids is None else tids:
        folder = data_of(project) / "staging" / tid
        doc = json.loads((folder / "triage.json").read_text())
        log = folder / "state.log"
        moves = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        last = {m["category"]: m["state"] for m in moves}
        for name, cat in doc["categories"].items():
            if cat["triggered"]:
                s = last.get(name, "triaged")
                by_state[s] = by_state.get(s, 0) + 1
    return by_state


def test_status_counts_what_is_staged(project, transcripts):
    first, second = stage_two(project, transcripts)
    data = str(data_of(project))
    staging.set_state(data, first, "decision", "drafting")
    staging.set_state(data, first, "tech_debt", "rejected")
    staging.set_state(data, second, "decision", "rejected")
    expected = _expected_counts(project)
    assert expected["triaged"] and expected["drafting"] == 1 and expected["rejected"] == 2

    p = run_cli("status", "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["triages"] == 2
    assert doc["unreadable"] == 0
    assert doc["by_state"] == expected
    assert doc["pending"] == sum(n for s, n in expected.items() if s not in ("rejected", "saved"))

    text = run_cli("status", cwd=project)
    assert text.returncode == 0
    assert (
        f"triages      2 staged (a session, or a stretch of one), {sum(expected.values())} categories"
        in text.stdout
    )
    assert (
        f"pending      {doc['pending']} categories not yet saved, rejected or skipped"
        in text.stdout
    )
    assert "   1  drafting   being drafted" in text.stdout  # each state says what it means
    assert "model use    no model call yet" in text.stdout  # not "$0.0000, 0 call(s)"


def test_auto_approve_says_which_backend_drafted(project, transcripts, tmp_path):
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {tmp_path / 'm'}\n"
    )
    assert (
        run_cli(
            "triage", str(session("postgres").write(transcripts / "a.jsonl")), cwd=project
        ).returncode
        == 0
    )
    doc = json.loads(run_cli("--auto-approve", "--json", cwd=project).stdout)
    assert doc["drafting"].startswith("drafting: offline — backend: offline") and doc["created"]
    # nothing left: the line still says what would draft
    text = run_cli("--auto-approve", cwd=project).stdout
    assert "\ndrafting     offline — backend: offline; models: none" in text


def test_status_counts_skips_and_totals_the_model_use_per_triage_and_overall(project, transcripts):
    first, second = stage_two(project, transcripts, "claude-cli")  # a backfill asks for a look
    data = str(data_of(project))
    call = {
        "tokens_in": 1500,
        "tokens_out": 150,
        "cache_read_tokens": 300,
        "cache_write_tokens": 200,
        "calls": 1,
    }
    staging.set_state(data, first, "decision", "drafting")
    staging.set_state(
        data, first, "decision", "skipped", reason="only task chatter", cost_usd=0.01, **call
    )
    staging.set_state(data, first, "tech_debt", "drafting")
    staging.set_state(data, first, "tech_debt", "drafted", cost_usd=0.02, **{**call, "calls": 2})
    staging.set_state(data, second, "decision", "drafting")
    # no cost known
    staging.set_state(data, second, "decision", "failed", error="timed out", **call)
    (data_of(project) / "staging" / first / "second_look.json").write_text(
        json.dumps({"tokens_in": 4000, "tokens_out": 100, "cost_usd": 0.005, "calls": 1})
    )

    doc = json.loads(run_cli("status", "--json", cwd=project).stdout)
    assert doc["by_state"]["skipped"] == 1
    # a skip is final
    assert doc["pending"] == sum(n for s, n in doc["by_state"].items() if s != "skipped")
    per = doc["usage"]["triages"]
    assert per[first] == {
        "tokens_in": 7000,
        "tokens_out": 400,
        "cache_read_tokens": 600,
        "cache_write_tokens": 400,
        "calls": 4,
        "cost_usd": pytest.approx(0.035),
    }
    assert per[second] == {
        "tokens_in": 1500,
        "tokens_out": 150,
        "cache_read_tokens": 300,
        "cache_write_tokens": 200,
        "calls": 1,
        "cost_usd": 0,
    }
    assert doc["usage"]["overall"] == {
        "tokens_in": 8500,
        "tokens_out": 550,
        "cache_read_tokens": 900,
        "cache_write_tokens": 600,
        "calls": 5,
        "cost_usd": pytest.approx(0.035),
    }

    text = run_cli("status", cwd=project).stdout
    assert "     1  skipped    nothing durable" in text
    assert (
        "model use    8,500 in / 550 out, cache 900 read / 600 written, $0.0350, 5 call(s)" in text
    )


def test_status_names_a_triage_whose_second_look_record_is_damaged_and_counts_the_others(
    project, transcripts
):
    first, second = stage_two(project, transcripts, "claude-cli")  # a backfill asks for a look
    # a hand edit
    (data_of(project) / "staging" / second / "second_look.json").write_text("{not json")
    p = run_cli("status", "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    # the other triage still counts
    assert doc["unreadable"] == 1 and doc["triages"] == 2 and doc["pending"] > 0
    assert doc["usage"]["triages"][second]["calls"] == 0


def test_status_on_a_project_without_data_dir(project):
    p = run_cli("status", "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert (doc["triages"], doc["unreadable"], doc["pending"], doc["by_state"]) == (0, 0, 0, {})
    assert doc["project"] == str(project)
    assert not data_of(project).exists()  # looking does not create anything


def test_status_counts_an_unreadable_state_log_as_unreadable(project, transcripts):
    first, second = stage_two(project, transcripts)
    data = str(data_of(project))
    staging.set_state(data, second, "decision", "drafting")
    (data_of(project) / "staging" / first / "state.log").mkdir()  # cannot be read as a file
    expected = _expected_counts(project, [second])
    p = run_cli("status", "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["triages"] == 2 and doc["unreadable"] == 1
    assert doc["by_state"] == expected
    text = run_cli("status", cwd=project)
    assert text.returncode == 0 and "1 unreadable" in text.stdout


@pytest.mark.parametrize(
    "garbage",
    [b"not json at all {", b"[1, 2]", b'{"id": "other", "categories": {}}', b""],
    ids=["not-json", "not-an-object", "wrong-id", "empty"],
)
def test_status_counts_a_garbage_triage_json_as_unreadable(garbage, project, transcripts):
    first, second = stage_two(project, transcripts)
    expected = _expected_counts(project, [second])
    (data_of(project) / "staging" / first / "triage.json").write_bytes(garbage)
    p = run_cli("status", "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert (doc["triages"], doc["unreadable"]) == (2, 1)
    assert doc["by_state"] == expected


# -- config errors ------------------------------------------------------------------------------

BAD_CONFIGS = {
    "unknown-key": (
        "categories:\n  decision:\n    thresold: 0.3\n",
        ["categories.decision.thresold", "unknown key", "threshold"],
    ),
    "wrong-type": (
        "categories:\n  decision:\n    threshold: high\n",
        ["categories.decision.threshold", "expected a number", "found a string", "high"],
    ),
    "wrong-nested-type": (
        "hook:\n  summary_events: SessionEnd\n",
        ["hooks.summary_events", "expected a list", "found a string"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_project_config_is_one_clear_error(case, project, transcripts):
    body, expected = BAD_CONFIGS[case]
    cfg = project / ".claude" / "memcurate.yaml"
    cfg.parent.mkdir()
    cfg.write_text(body)
    a = session().write(transcripts / "a.jsonl")
    line = one_line_error(run_cli("triage", str(a), cwd=project))
    assert str(cfg) in line
    for part in expected:
        assert part in line
    assert staged(project) == []


def test_bad_user_config_is_named(project, transcripts, isolated_home):
    cfg = isolated_home / ".config" / "memcurate" / "config.yaml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text("hook:\n  lock_wait_seconds: [1]\n")
    line = one_line_error(
        run_cli("triage", str(session().write(transcripts / "a.jsonl")), cwd=project)
    )
    assert str(cfg) in line and "hooks.lock_wait_seconds" in line and "expected a number" in line


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_hook_with_bad_config_loses_nothing(case, project, transcripts):
    body, expected = BAD_CONFIGS[case]
    cfg = project / ".claude" / "memcurate.yaml"
    cfg.parent.mkdir()
    cfg.write_text(body)
    path = session().write(transcripts / "a.jsonl")
    hook_input = {
        "session_id": "s",
        "transcript_path": str(path),
        "cwd": str(project),
        "hook_event_name": "Stop",
    }
    p = run_hook(hook_input, cwd=project)
    assert p.returncode == 0 and p.stdout == b""
    assert b"Traceback" not in p.stderr
    log = (data_of(project) / "log" / "memcurate.log").read_text().splitlines()
    assert len(log) == 1
    assert "config error" in log[0] and expected[0] in log[0]
    assert staged(project) == []
    assert not (data_of(project) / "offsets").exists()

    cfg.write_text("categories:\n  decision:\n    threshold: 0.4\n")  # fixed
    p = run_hook(hook_input, cwd=project)
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b""
    [tid] = staged(project)
    doc = json.loads((data_of(project) / "staging" / tid / "triage.json").read_text())
    assert doc["source"]["byte_range"] == [0, path.stat().st_size]
    assert doc["categories"]["decision"]["threshold"] == 0.4


# -- --project ---------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [("status",), ("status", "--json"), ("triage", "x.jsonl")])
def test_project_that_does_not_exist(command, tmp_path, project):
    missing = tmp_path / "no-such-project"
    line = one_line_error(run_cli("--project", str(missing), *command, cwd=project))
    assert str(missing) in line
    assert not missing.exists()
    assert not data_of(project).exists()


def test_project_option_after_the_subcommand(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    p = run_cli("status", "--project", str(project), "--json", cwd=elsewhere)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["project"] == str(project)


def test_project_option_chooses_the_data_dir(tmp_path, project, transcripts):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    a = session().write(transcripts / "a.jsonl")
    p = run_cli("--project", str(project), "triage", str(a), "--json", cwd=elsewhere)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["project"] == str(project)
    assert len(staged(project)) == 1
    assert not data_of(elsewhere).exists()


# -- terminal output is data --------------------------------------------------------------------


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


@pytest.mark.parametrize("no_color", [True, False], ids=["NO_COLOR", "color-allowed"])
def test_escapes_in_the_transcript_never_reach_output_or_staging(no_color, project, transcripts):
    t = Transcript(session="5d7c2f10-aaaa-4bbb-8ccc-ddddeeeeffff")
    t.user(
        "We decided to use \x1b[31mred\x1b[0m [bold red]alerts[/bold red] because it is simpler. "
        "\x1b]8;;http://evil.example\x07link\x1b]8;;\x07 \x1b[2J\x07\x08"
    )
    t.assistant(
        text(
            "\x1b[1mWe will use\x1b[22m the [link=http://evil.example]alerts[/link] module "
            "because it is simpler; that is the decision."
        )
    )
    path = t.write(transcripts / "ansi-\x1b[31mname.jsonl")
    env = (
        {"NO_COLOR": "1"}
        if no_color
        else {"FORCE_COLOR": "1", "TERM": "xterm-256color", "NO_COLOR": ""}
    )
    p = run_cli("triage", str(path), cwd=project, env=env)
    assert p.returncode == 0, p.stderr
    assert "\x1b" not in p.stdout and "\x1b" not in p.stderr
    assert "\x07" not in p.stdout
    assert "ansi-" in p.stdout  # the path is shown, without its escape
    [tid] = staged(project)
    raw = (data_of(project) / "staging" / tid / "triage.json").read_text()
    doc = json.loads(raw)
    snippets = [s["text"] for c in doc["categories"].values() for s in c.get("snippets", [])]
    assert snippets
    for s in _strings(doc["categories"]):
        assert "\x1b" not in s and "\x07" not in s and "\x08" not in s, repr(s)
    # Markup is data: kept as the words it is, never interpreted or lost.
    assert any("[bold red]alerts[/bold red]" in s for s in snippets)
    assert any("red" in s and "decided" in s for s in snippets)

    p = run_cli("triage", str(path), "--json", cwd=project, env=env)
    assert "\x1b" not in p.stdout  # JSON escapes control characters
    json.loads(p.stdout)


def test_escapes_in_a_bad_path_never_reach_stderr(project, transcripts):
    folder = transcripts / "dir\x1b[2J\x1b]0;pwned\x07.jsonl"
    folder.mkdir()
    p = run_cli("triage", str(folder), str(transcripts / "gone\x1b[31m.jsonl"), cwd=project)
    assert p.returncode == 1
    assert len(p.stderr.splitlines()) == 2
    assert "\x1b" not in p.stderr and "\x07" not in p.stderr


def test_the_tui_without_a_terminal_says_what_to_use_instead(project):
    p = run_cli("--project", str(project), cwd=project)  # stdin and stdout are pipes here
    assert p.returncode == 1
    assert "needs a terminal" in p.stderr and "--auto-approve" in p.stderr and p.stdout == ""


def test_the_engine_imports_no_ui():
    """curator/ knows nothing of the UI: importing every engine module loads no textual and no widgets."""
    import pkgutil
    import subprocess
    import sys

    names = [m.name for m in pkgutil.walk_packages(curator.__path__, "memcurate.curator.")]
    code = (
        f"import importlib, sys\nfor n in {names!r}: importlib.import_module(n)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual' or m.startswith('memcurate.widgets')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(curator.__file__).parent.parent,
    )
    assert out.stdout.strip() == "[]" and len(names) > 20


def test_a_global_option_before_hook_runs_the_hook_not_the_tui(project, transcripts):
    """`memcurate --debug hook` goes through the full parser: it is the hook all the same."""
    import subprocess

    from conftest import memcurate_exe

    path = session("postgres").write(transcripts / "a.jsonl")
    payload = {
        "session_id": path.stem,
        "transcript_path": str(path),
        "cwd": str(project),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    done = subprocess.run(
        memcurate_exe() + ["--debug", "hook"],
        input=json.dumps(payload).encode(),
        cwd=project,
        capture_output=True,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(project)},
        timeout=60,
    )
    assert done.returncode == 0 and b"TUI" not in done.stderr, done.stderr
    assert len(staged(project)) == 1  # the Stop hook's pass staged the session
