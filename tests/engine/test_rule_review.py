"""Rule candidates in review: the Engine's rule methods and `memcurate list / show / approve / reject /
status` on candidates staged through the real ledger (curator/rules/ledger.py)."""

from __future__ import annotations

import errno
import json
import os
import re
import time
from pathlib import Path

import pytest
import yaml
from test_claude_cli import envelope, fake  # noqa: F401  (fake: a fixture)
from test_review_cli import cli, cli_json

from memcurate.curator.engine import Engine
from memcurate.curator.review import rule_actions
from memcurate.curator.review.rule_actions import RuleError
from memcurate.curator.review.rule_actions import fingerprint as rule_actions_fingerprint
from memcurate.curator.rules import candidates, ledger
from memcurate.curator.rules.signature import Failure

MARKER = re.compile(r"<!-- memcurate:rule/([0-9a-f]{12}) -->")


def store_failure(message: str = "No such file or directory: <tmp>/data.json") -> Failure:
    return Failure(
        kind="test",
        tool="pytest",
        signature=f"pytest tests/test_store.py::test_save FileNotFoundError {message}",
        test="tests/test_store.py::test_save",
        error_type="FileNotFoundError",
        message=message,
        files=("tests/test_store.py", "app/store.py"),
        excerpt="E   FileNotFoundError: [Errno 2] No such file or directory: '/tmp/pytest-7/data.json'",
    )


def lint_failure() -> Failure:
    return Failure(
        kind="lint",
        tool="ruff",
        signature="ruff E501 line too long",
        error_type="E501",
        message="line too long",
        files=("app/cli.py",),
        excerpt="app/cli.py:12:89: E501 Line too long (97 > 88)",
    )


def seen(
    data: str,
    failure: Failure,
    n: int,
    *,
    first: int = 0,
    error: str | None = None,
    fix: dict | None = None,
):
    """`failure` seen in sessions first..first+n-1 (one occurrence each, as the hook records them)."""
    for i in range(first, first + n):
        ledger.record(
            data,
            failure,
            session=f"session-{i}",
            at=f"2026-11-2{i % 10}T10:00:00Z",
            command="uv run pytest -x",
            error=failure.excerpt if error is None else error,
            source="hook",
            fix=fix,
            threshold=3,
        )


@pytest.fixture
def proj(project) -> dict:
    """A project with the files the failures name, and a candidate seen in three sessions."""
    for rel in ("tests/test_store.py", "app/store.py", "app/cli.py"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("# code\n")
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text("backend: offline\n")
    data = str(project / ".memcurate")
    seen(data, store_failure(), 3)
    return {
        "project": str(project),
        "data": data,
        "key": store_failure().key,
        "rules": project / ".claude" / "rules",
    }


def rule_items(doc: dict) -> list[dict]:
    return [i for i in doc["items"] if i["kind"] == "rule"]


def rule_files(rules: Path) -> dict[str, bytes]:
    return {str(p.relative_to(rules)): p.read_bytes() for p in rules.rglob("*") if p.is_file()}


def front_matter(text: str) -> dict:
    assert text.startswith("---\n"), text
    return yaml.safe_load(text.split("---\n")[1])


# -- list / show ---------------------------------------------------------------------------------


def test_list_shows_a_candidate_with_its_count_rule_and_file(proj, capsys):
    code, doc, _ = cli_json(capsys, "list", "--project", proj["project"])
    assert code == 0
    [item] = rule_items(doc)
    assert item["id"] == f"rule/{proj['key']}" and item["state"] == "ready" and not item["blocked"]
    r = item["rule"]
    assert r["count"] == 3 and r["kind"] == "test" and "test_save" in r["signature"]
    assert (
        r["file"].startswith(".claude/rules/memcurate/")
        and r["file"].endswith(".md")
        and r["topic"]
    )
    assert item["title"] == r["rule"] and r["rule"]
    code, out, _ = cli(capsys, "list", "--project", proj["project"])
    assert f"rule/{proj['key']}" in out and "3 sessions" in out and r["file"] in out


def test_show_prints_the_rule_file_the_diff_and_the_evidence_escaped(proj, capsys):
    seen(
        proj["data"],
        store_failure(),
        1,
        first=3,
        error="E   FileNotFoundError \x1b[31m[bold]red[/bold]\x1b[0m",
    )
    code, doc, _ = cli_json(capsys, "show", f"rule/{proj['key'][:5]}", "--project", proj["project"])
    assert code == 0 and len(doc["evidence"]) == 4 and doc["rule"]["count"] == 4
    assert (
        doc["decision"]["action"] == "create" and MARKER.search(doc["text"]).group(1) == proj["key"]
    )
    code, out, _ = cli(capsys, "show", f"rule/{proj['key']}", "--project", proj["project"])
    assert code == 0
    assert "evidence: 4 session(s)" in out and "session-0" in out and "uv run pytest -x" in out
    # data: the escape goes, the markup is plain text
    assert "\x1b" not in out and "[bold]red[/bold]" in out
    assert f"<!-- memcurate:rule/{proj['key']} -->" in out


# -- approve -------------------------------------------------------------------------------------


def test_approve_writes_one_rule_file_and_a_recurrence_adds_evidence_not_a_copy(proj, capsys):
    code, out, err = cli(capsys, "approve", f"rule/{proj['key']}", "--project", proj["project"])
    assert code == 0, err
    [(name, body)] = rule_files(proj["rules"]).items()
    assert name.startswith("memcurate/")
    text = body.decode()
    assert MARKER.findall(text) == [proj["key"]]
    globs = front_matter(text)["paths"]
    assert any(Path(proj["project"]).glob(g) for g in globs)
    assert any(p.name == "test_store.py" for g in globs for p in Path(proj["project"]).glob(g))

    # the failure comes back after the rule was written
    seen(proj["data"], store_failure(), 2, first=3)
    assert rule_files(proj["rules"]) == {name: body}
    code, doc, _ = cli_json(capsys, "status", "--project", proj["project"])
    assert doc["rules"]["approved"] == 1 and doc["rules"]["pending"] == 0
    assert doc["rules"]["recurring"] == [
        {"id": f"rule/{proj['key']}", "file": f".claude/rules/{name}", "sessions": 5, "since": 2}
    ]
    code, out, _ = cli(capsys, "status", "--project", proj["project"])
    assert "seen in 2 sessions since it was written" in out
    code, out, err = cli(capsys, "approve", f"rule/{proj['key']}", "--project", proj["project"])
    assert code == 1 and "already saved" in err and rule_files(proj["rules"]) == {name: body}
    code, doc, _ = cli_json(capsys, "list", "--all", "--project", proj["project"])
    [item] = rule_items(doc)
    assert (
        item["state"] == "saved"
        and item["rule"]["count"] == 5
        and item["where"] == f".claude/rules/{name}"
    )


def test_a_rule_approved_needs_no_memory_root(proj, capsys, monkeypatch):
    """Auto memory off keeps memories from being saved, not rules: they go to the project."""
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    code, out, err = cli(capsys, "approve", f"rule/{proj['key']}", "--project", proj["project"])
    assert code == 0, err
    assert len(rule_files(proj["rules"])) == 1


def test_a_file_that_cannot_be_extended_blocks_the_rule_and_is_never_touched(proj, capsys):
    engine = Engine(proj["project"])
    target = Path(proj["project"]) / rule_actions.view(engine, proj["key"])["plan"]["file"]
    engine.close()
    target.parent.mkdir(parents=True)
    target.write_bytes(b"---\npaths: [unclosed\n---\n# mine\n")
    other = proj["rules"] / "style.md"
    other.write_bytes(b"# the team's own rule\n")
    before = rule_files(proj["rules"])
    code, doc, _ = cli_json(capsys, "list", "--project", proj["project"])
    [item] = rule_items(doc)
    assert (
        item["blocked"]
        and item["issues"][0]["severity"] == "BLOCK"
        and item["issues"][0]["message"]
    )
    code, out, err = cli(capsys, "approve", item["id"], "--project", proj["project"])
    assert code == 1 and "BLOCK" in err and rule_files(proj["rules"]) == before
    engine = Engine(proj["project"])
    with pytest.raises(RuleError, match="cannot be written"):
        rule_actions.approve(engine, proj["key"])
    engine.close()
    assert rule_files(proj["rules"]) == before
    assert candidates.load(proj["data"], proj["key"]).state == "pending"


# -- edit ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "paths, why",
    [
        (["/etc/**"], "relative"),
        (["../outside/*.py"], ".."),
        ([""], "empty"),
        (["tests/\n- evil"], "control character"),
    ],
)
def test_an_invalid_edit_is_refused_with_its_reason_and_nothing_stored(proj, paths, why):
    path = Path(ledger.candidate_path(proj["data"], proj["key"]))
    before = path.read_bytes()
    engine = Engine(proj["project"])
    with pytest.raises(ValueError, match=re.escape(why)):
        rule_actions.edit(
            engine,
            proj["key"],
            "Use the tmp_path fixture for files a test writes.",
            "testing",
            paths,
        )
    engine.close()
    assert path.read_bytes() == before


def test_an_edited_rule_is_what_approving_writes(proj, capsys):
    engine = Engine(proj["project"])
    view = rule_actions.edit(
        engine,
        f"rule/{proj['key']}",
        "Use the tmp_path fixture for files a test writes.",
        "Test Files",
        ["tests/**/*.py"],
    )
    assert (
        view["rule"] == "Use the tmp_path fixture for files a test writes."
        and view["plan"]["error"] == ""
    )
    done = rule_actions.approve(engine, proj["key"])
    engine.close()
    text = (Path(proj["project"]) / done["file"]).read_text()
    assert "- Use the tmp_path fixture for files a test writes." in text
    assert front_matter(text)["paths"] == ["tests/**/*.py"]
    with pytest.raises(ValueError):  # decided: no more edits
        rule_actions.edit(Engine(proj["project"]), proj["key"], "Something else.", "testing", [])


# -- reject ----------------------------------------------------------------------------------------


def test_a_rejected_signature_is_never_proposed_again(proj, capsys):
    code, out, err = cli(
        capsys,
        "reject",
        f"rule/{proj['key']}",
        "--reason",
        "flaky on CI",
        "--project",
        proj["project"],
    )
    assert code == 0 and f"rejected rule/{proj['key']}" in out
    seen(proj["data"], store_failure(), 3, first=3)
    code, doc, _ = cli_json(capsys, "list", "--project", proj["project"])
    assert rule_items(doc) == []
    code, doc, _ = cli_json(capsys, "list", "--all", "--project", proj["project"])
    [item] = rule_items(doc)
    assert (
        item["state"] == "rejected"
        and item["reason"] == "flaky on CI"
        and item["rule"]["count"] == 6
    )
    assert not proj["rules"].exists()
    code, out, err = cli(capsys, "approve", f"rule/{proj['key']}", "--project", proj["project"])
    assert code == 1 and "already rejected" in err and not proj["rules"].exists()


# -- status ----------------------------------------------------------------------------------------


def test_status_counts_signatures_and_candidates_and_lists_the_pending(proj, capsys):
    seen(proj["data"], lint_failure(), 1)  # tracked, below the threshold
    code, doc, _ = cli_json(capsys, "status", "--project", proj["project"])
    r = doc["rules"]
    assert r["tracked"] == 2 and (r["pending"], r["approved"], r["rejected"]) == (1, 0, 0)
    [c] = r["candidates"]
    assert (
        c["id"] == f"rule/{proj['key']}"
        and c["sessions"] == 3
        and c["kind"] == "test"
        and c["rule"]
    )
    code, out, _ = cli(capsys, "status", "--project", proj["project"])
    assert (
        "rules        2 failure signature(s) tracked; candidates: 1 pending, 0 approved, 0 rejected"
        in out
    )
    assert f"rule/{proj['key']}  3 sessions  test" in out


def test_status_of_a_project_without_failures_says_nothing_of_rules(project, capsys):
    code, out, _ = cli(capsys, "status", "--project", str(project))
    assert code == 0 and "rules " not in out
    code, doc, _ = cli_json(capsys, "status", "--project", str(project))
    assert doc["rules"]["tracked"] == 0 and doc["rules"]["candidates"] == []


# -- the engine ------------------------------------------------------------------------------------


def test_an_engine_start_forgets_old_signatures_below_the_threshold(proj):
    seen(proj["data"], lint_failure(), 1)
    old = time.time() - 400 * 86400
    for path in ledger.files(proj["data"]):
        os.utime(path, (old, old))
    Engine(proj["project"]).close()
    assert ledger.keys(proj["data"]) == [proj["key"]]  # the candidate's evidence stays


def test_candidates_dir_is_where_candidates_appear(proj):
    engine = Engine(proj["project"])
    assert os.listdir(os.path.join(engine.data, ledger.CANDIDATES_DIR)) == [f"{proj['key']}.json"]
    assert [
        c.id for c in candidates.all(engine.data, threshold=engine.settings.rules.threshold)
    ] == [proj["key"]]
    engine.close()


def test_drafting_offline_does_nothing(proj):
    engine = Engine(proj["project"])
    assert rule_actions.draft_all(engine) == {"drafted": [], "failed": []}
    engine.close()
    assert candidates.load(proj["data"], proj["key"]).draft is None


def test_an_approval_while_another_writes_is_refused_and_the_rule_written_once(proj, monkeypatch):
    """Deterministic race: a second approval starts while the first is writing the rule file."""
    from memcurate.curator.review import rule_actions
    from memcurate.curator.rules import rulefile
    from memcurate.curator.util.locks import LockBusy

    monkeypatch.setattr(rule_actions, "LOCK_WAIT", 0.0)
    write, second = rulefile.write, {}

    def write_while_another_approves(plan):
        # once: the second approval's own write, when nothing kept it out, goes on
        if "tried" not in second:
            second["tried"] = True
            other = Engine(proj["project"])
            try:
                second["done"] = rule_actions.approve(other, proj["key"])
            except (LockBusy, RuleError) as e:
                second["refused"] = e
            finally:
                other.close()
        return write(plan)

    monkeypatch.setattr(rulefile, "write", write_while_another_approves)
    engine = Engine(proj["project"])
    done = rule_actions.approve(engine, proj["key"])
    engine.close()
    assert "refused" in second, second
    [body] = rule_files(proj["rules"]).values()
    assert MARKER.findall(body.decode()) == [proj["key"]] and done["file"].endswith(".md")
    assert candidates.load(proj["data"], proj["key"]).decision["sessions"] == 3


# -- headless ----------------------------------------------------------------------------------------


def test_headless_leaves_rules_for_a_person_and_says_how_many_wait(proj, capsys):
    code, doc, _ = cli_json(capsys, "--auto-approve", "--project", proj["project"])
    assert code == 0 and doc["rules"] == {
        "written": [],
        "failed": [],
        "waiting": [{"id": f"rule/{proj['key']}", "sessions": 3, "error": ""}],
    }
    assert not proj["rules"].exists()
    code, out, _ = cli(capsys, "--auto-approve", "--project", proj["project"])
    assert (
        code == 0
        and "rules     1 wait for review" in out
        and f"rule/{proj['key']}  3 sessions" in out
    )
    assert candidates.load(proj["data"], proj["key"]).state == "pending"


def test_headless_with_rules_auto_approve_writes_what_can_be_written(proj, capsys):
    (Path(proj["project"]) / ".claude" / "memcurate.yaml").write_text(
        "backend: offline\nrules:\n  auto_approve: true\n"
    )
    other = lint_failure()
    seen(proj["data"], other, 3)
    engine = Engine(proj["project"])
    blocked = Path(proj["project"]) / rule_actions.view(engine, other.key)["plan"]["file"]
    engine.close()
    blocked.parent.mkdir(parents=True, exist_ok=True)
    blocked.write_bytes(b"# the team's lint notes, not memcurate's\n")
    code, doc, _ = cli_json(capsys, "--auto-approve", "--project", proj["project"])
    assert code == 0
    [written] = doc["rules"]["written"]
    assert (
        written["id"] == f"rule/{proj['key']}"
        and (Path(proj["project"]) / written["file"]).is_file()
    )
    [waiting] = doc["rules"]["waiting"]
    assert waiting["id"] == f"rule/{other.key}" and "left alone" in waiting["error"]
    assert blocked.read_bytes() == b"# the team's lint notes, not memcurate's\n"
    assert candidates.load(proj["data"], other.key).state == "pending"
    # a second run writes nothing new
    code, doc, _ = cli_json(capsys, "--auto-approve", "--project", proj["project"])
    assert code == 0 and doc["rules"]["written"] == [] and len(doc["rules"]["waiting"]) == 1


def test_headless_a_full_disk_fails_the_rule_and_a_later_run_writes_it(proj, capsys, monkeypatch):
    """A rule file the disk refuses is a failure (exit 1, the file and the system's reason), not a
    rule waiting for a person; nothing is half-written, the candidate stays pending, and the next
    run, with space again, writes it."""
    from memcurate.curator.util import atomic

    (Path(proj["project"]) / ".claude" / "memcurate.yaml").write_text(
        "backend: offline\nrules:\n  auto_approve: true\n"
    )
    real = atomic._temp_file

    def full(path, *a, **k):
        if os.fspath(path).startswith(str(proj["rules"])):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
        return real(path, *a, **k)

    monkeypatch.setattr(atomic, "_temp_file", full)
    code, doc, _ = cli_json(capsys, "--auto-approve", "--project", proj["project"])
    [failed] = doc["rules"]["failed"]
    assert code == 1 and doc["rules"]["written"] == [] and doc["rules"]["waiting"] == []
    assert failed["id"] == f"rule/{proj['key']}" and "No space left on device" in failed["error"]
    assert str(proj["rules"]) in failed["error"]
    assert not proj["rules"].exists() or rule_files(proj["rules"]) == {}
    assert candidates.load(proj["data"], proj["key"]).state == "pending"
    monkeypatch.setattr(atomic, "_temp_file", real)
    code, doc, _ = cli_json(capsys, "--auto-approve", "--project", proj["project"])
    assert code == 0 and [w["id"] for w in doc["rules"]["written"]] == [f"rule/{proj['key']}"]
    assert candidates.load(proj["data"], proj["key"]).state == "approved"


def test_a_hand_damaged_record_is_named_and_the_others_still_listed(proj, capsys):
    seen(proj["data"], lint_failure(), 3)
    broken = Path(ledger.candidate_path(proj["data"], lint_failure().key))
    broken.write_text("{not json")
    code, doc, err = cli_json(capsys, "list", "--project", proj["project"])
    by_id = {i["id"]: i for i in rule_items(doc)}
    assert by_id[f"rule/{proj['key']}"]["state"] == "ready"
    bad = by_id[f"rule/{lint_failure().key}"]
    assert bad["state"] == "error" and str(broken) in bad["error"] and "unreadable" in bad["error"]
    code, out, err = cli(capsys, "approve", bad["id"], "--project", proj["project"])
    assert code == 1 and broken.read_text() == "{not json"


# -- drafting with Claude ----------------------------------------------------------------------------


def test_list_draft_asks_claude_for_the_rule_text_and_approving_writes_it(proj, capsys, fake):
    (Path(proj["project"]) / ".claude" / "memcurate.yaml").write_text("backend: claude-cli\n")
    rule = "Create the store's folder before the first write; tests start from an empty tmp_path."
    fake.reply(
        envelope(structured_output={"rule": rule, "topic": "storage", "paths": ["app/**/*.py"]})
    )
    code, doc, err = cli_json(capsys, "list", "--draft", "--project", proj["project"])
    assert code == 0, err
    assert doc["drafted"]["drafted"] == [f"rule/{proj['key']}"] and len(fake.calls()) == 1
    [item] = rule_items(doc)
    assert item["title"] == rule and item["rule"]["paths"] == ["app/**/*.py"]
    assert item["rule"]["file"] == ".claude/rules/memcurate/storage.md"
    assert candidates.load(proj["data"], proj["key"]).draft["by"] == "claude-cli"
    # drafted once
    code, doc, err = cli_json(capsys, "list", "--draft", "--project", proj["project"])
    assert doc["drafted"]["drafted"] == [] and len(fake.calls()) == 1
    code, out, err = cli(capsys, "approve", item["id"], "--project", proj["project"])
    assert code == 0, err
    text = (Path(proj["project"]) / ".claude/rules/memcurate/storage.md").read_text()
    assert f"- {rule} <!-- memcurate:rule/{proj['key']} -->" in text and front_matter(text)[
        "paths"
    ] == ["app/**/*.py"]


def test_a_failed_rule_call_keeps_the_offline_text_and_says_why(proj, capsys, fake):
    (Path(proj["project"]) / ".claude" / "memcurate.yaml").write_text("backend: claude-cli\n")
    fake.reply(envelope(is_error=True, result="Credit balance is too low"), exit=1)
    code, doc, err = cli_json(capsys, "list", "--draft", "--project", proj["project"])
    assert code == 1 and "Credit balance is too low" in doc["drafted"]["failed"][0]["error"]
    [item] = rule_items(doc)
    assert item["state"] == "ready" and item["title"] and "FileNotFoundError" in item["title"]
    draft = candidates.load(proj["data"], proj["key"]).draft
    assert draft["by"] == "offline" and "Credit balance" in draft["error"]


# -- approving writes what the person saw ------------------------------------------------------------


def test_approving_what_was_shown_writes_it(proj):
    engine = Engine(proj["project"])
    shown = rule_actions.view(engine, proj["key"])
    done = rule_actions.approve(engine, proj["key"], seen=shown)
    engine.close()
    assert (Path(proj["project"]) / done["file"]).read_text() == shown["plan"]["after"]


def test_a_draft_stored_after_the_rule_was_shown_is_refused_and_nothing_written(proj):
    """The reviewer saw the offline text; a model's draft stored meanwhile (headless `list --draft`) is not
    what they approve."""
    engine = Engine(proj["project"])
    shown = rule_actions.view(engine, proj["key"])
    candidates.set_draft(
        proj["data"],
        proj["key"],
        {
            "rule": "Never save outside tmp_path in a test.",
            "topic": "testing",
            "paths": ["tests/**/*.py"],
            "by": "claude",
            "model": "m",
            "at": "2026-11-30T10:00:00Z",
        },
    )
    with pytest.raises(RuleError, match="changed since you looked: look again"):
        rule_actions.approve(engine, proj["key"], seen=shown)
    assert (
        not proj["rules"].exists() and candidates.load(proj["data"], proj["key"]).state == "pending"
    )
    again = rule_actions.view(
        engine, proj["key"]
    )  # looked again: the draft is shown, and approving it writes it
    rule_actions.approve(engine, proj["key"], seen=rule_actions_fingerprint(again))
    engine.close()
    [body] = rule_files(proj["rules"]).values()
    assert "Never save outside tmp_path in a test." in body.decode()


def test_a_file_extended_by_another_approval_after_the_rule_was_shown_is_refused(proj):
    """Both rules go to one topic file: the second's plan was shown against the file before the first
    was written; its new plan (another `before`, another diff) is not what the person saw."""
    seen(proj["data"], store_failure("other message"), 3, first=5)
    other = store_failure("other message").key
    engine = Engine(proj["project"])
    rule_actions.edit(
        engine, other, "Check the data folder exists before saving.", "testing", ["tests/**/*.py"]
    )
    rule_actions.edit(
        engine,
        proj["key"],
        "Use the tmp_path fixture for files a test writes.",
        "testing",
        ["tests/**/*.py"],
    )
    shown = rule_actions.view(engine, proj["key"])
    assert shown["plan"]["action"] == "create"
    rule_actions.approve(engine, other)  # from a script: what `show` shows now
    before = rule_files(proj["rules"])
    with pytest.raises(RuleError, match="changed since you looked"):
        rule_actions.approve(engine, proj["key"], seen=shown)
    assert rule_files(proj["rules"]) == before
    assert rule_actions.view(engine, proj["key"])["plan"]["action"] == "extend"
    engine.close()


def test_an_edit_waits_for_an_approval_under_way_and_is_then_refused(proj, monkeypatch):
    """Deterministic race: an edit stored while an approval writes would leave the old text in the file and
    the candidate approved; it takes the same lock, so it is refused (busy) and the record keeps no edit."""
    from memcurate.curator.review import rule_actions
    from memcurate.curator.rules import rulefile
    from memcurate.curator.util.locks import LockBusy

    monkeypatch.setattr(rule_actions, "LOCK_WAIT", 0.0)
    write, edit = rulefile.write, {}

    def write_while_edited(plan):
        try:
            rule_actions.edit(
                Engine(proj["project"]), proj["key"], "Something else entirely.", "testing", []
            )
            edit["stored"] = True
        except LockBusy as e:
            edit["refused"] = e
        return write(plan)

    monkeypatch.setattr(rulefile, "write", write_while_edited)
    engine = Engine(proj["project"])
    rule_actions.approve(engine, proj["key"])
    engine.close()
    assert "refused" in edit, edit
    cand = candidates.load(proj["data"], proj["key"])
    assert cand.state == "approved" and cand.edit is None


# -- hand damage ---------------------------------------------------------------------------------


def every_view(proj, capsys, rid: str) -> dict:
    """list, list --all, status and show (plain and --json) on the project, and the TUI's rule items:
    each exits 0 (or 1 with a one-line error for show) and none raises. Returns show's JSON (or {})."""
    for args in (
        ("list",),
        ("list", "--all"),
        ("status",),
        ("list", "--json"),
        ("status", "--json"),
    ):
        code, out, err = cli(capsys, *args, "--project", proj["project"])
        assert code == 0 and "Traceback" not in err, (args, err)
    code, out, err = cli(capsys, "show", rid, "--project", proj["project"])
    assert (
        code in (0, 1) and "Traceback" not in err and (code == 0 or rid in err or "rules/" in err)
    ), err
    engine = Engine(proj["project"])
    try:
        items = engine.review_items(every=True, kind="rule")
    finally:
        engine.close()
    assert any(i.id == rid for i in items)
    code, out, _ = cli(capsys, "show", rid, "--json", "--project", proj["project"])
    return json.loads(out) if code == 0 else {}


@pytest.mark.parametrize(
    "part,value,why",
    [
        ("edit", {"rule": 5, "topic": 7, "paths": "abc"}, "edit.rule is not a str"),
        (
            "edit",
            {"rule": "Create the folder first.", "topic": "store", "paths": [1, 2]},
            "edit.paths is not a list of strings",
        ),
        (
            "edit",
            {"rule": "Create the folder first.", "topic": "store", "paths": {"a": 1}},
            "edit.paths is not a list",
        ),
        (
            "draft",
            {"rule": ["t"], "topic": "testing", "paths": [], "by": "claude-cli"},
            "draft.rule is not a str",
        ),
        ("edit", "Create the folder first.", "edit is a str, not a mapping"),
        ("decision", {"at": "x", "file": 5, "sessions": 3}, "decision.file is not a str"),
    ],
)
def test_a_hand_damaged_rule_text_is_an_error_naming_the_file_never_made_up_globs(
    proj, capsys, part, value, why
):
    path = Path(ledger.candidate_path(proj["data"], proj["key"]))
    doc = json.loads(path.read_text())
    doc[part] = value
    path.write_text(json.dumps(doc))
    before = path.read_bytes()
    rid = f"rule/{proj['key']}"
    assert every_view(proj, capsys, rid) == {}
    code, doc, _ = cli_json(capsys, "list", "--project", proj["project"])
    [item] = rule_items(doc)
    assert item["state"] == "error" and str(path) in item["error"] and why in item["error"]
    code, out, err = cli(capsys, "show", rid, "--project", proj["project"])
    assert code == 1 and why in err and str(path) in err
    for command in ("approve", "reject"):
        code, out, err = cli(capsys, command, rid, "--project", proj["project"])
        assert code == 1 and "Traceback" not in err and rid in err, (command, err)
    engine = Engine(proj["project"])
    # the engine's own calls name the damage too
    with pytest.raises(RuleError, match=re.escape(why)):
        rule_actions.view(engine, rid)
    engine.close()
    # nothing written, nothing lost
    assert path.read_bytes() == before and not proj["rules"].exists()


def test_hand_damaged_ledger_files_are_read_as_text_not_crashed_on(proj, capsys):
    folder = Path(proj["data"], ledger.FAILURES_DIR)
    # the signature stays the key's (else the ledger backs no rule: test_attack_records)
    f = store_failure()
    failure = {
        "kind": f.kind,
        "signature": f.signature,
        "key": f.key,
        "files": "tests/a.py",
        "tool": None,
        "message": 7,
    }
    occurrence = {
        "failure": failure,
        "at": 1,  # read as "1": the earliest, so its failure is the one shown
        "command": [1],
        "error": {"e": 1},
        "fix": {"text": 5, "files": "app/x.py"},
    }
    (folder / "session-1.0.json").write_text(
        json.dumps({"session": ["x"], "seen": {proj["key"]: occurrence}})
    )
    (folder / "session-2.0.json").write_text(
        json.dumps({"seen": {proj["key"]: {"fix": "not a fix", "files": {"a": 1}}}})
    )
    rid = f"rule/{proj['key']}"
    shown = every_view(proj, capsys, rid)
    assert shown["failure"]["message"] == "7" and shown["failure"]["tool"] == ""
    assert shown["failure"]["files"] == ["tests/a.py"]
    by_cmd = {e["command"]: e for e in shown["evidence"]}
    assert by_cmd["[1]"]["fix"] == {"text": "5", "command": "", "files": ["app/x.py"]}
    assert all(e["fix"] is None for e in shown["evidence"] if e["command"] != "[1]")
    assert shown["rule"]["count"] == 3


def test_a_damaged_ledger_file_is_named_and_counts_nothing(proj, capsys):
    """A file that cannot be read is no evidence: the sessions are those the readable files show."""
    seen(proj["data"], store_failure(), 1, first=3)
    (Path(proj["data"], ledger.FAILURES_DIR, "session-1.0.json")).write_text("{not json")
    cand = candidates.load(proj["data"], proj["key"])
    assert (
        cand.sessions == ledger.sessions(proj["data"], proj["key"]) == 3
        and len(cand.occurrences) == 3
    )
    code, doc, _ = cli_json(capsys, "show", f"rule/{proj['key']}", "--project", proj["project"])
    assert code == 0 and doc["rule"]["count"] == 3
    assert any("session-1.0.json" in r and "unreadable" in r for r in doc["decision"]["reasons"])


def test_an_approved_rule_shows_the_text_written_not_one_worked_out_again(proj, capsys):
    code, doc, _ = cli_json(capsys, "approve", f"rule/{proj['key']}", "--project", proj["project"])
    assert code == 0
    [file] = rule_files(proj["rules"]).values()
    # A later session says what fixed it: the offline text would now be another rule.
    seen(
        proj["data"],
        store_failure(),
        1,
        first=3,
        fix={
            "text": "Use the tmp_path fixture for the data file.",
            "files": ["tests/test_store.py"],
            "command": "",
        },
    )
    from memcurate.curator.review.rule_actions import text

    cand = candidates.load(proj["data"], proj["key"])
    assert text(cand)["rule"].startswith("Use the tmp_path fixture")
    code, doc, _ = cli_json(capsys, "list", "--all", "--project", proj["project"])
    [item] = rule_items(doc)
    assert (
        item["state"] == "saved"
        and item["title"] in file.decode()
        and item["rule"]["rule"] == item["title"]
    )
    assert not item["title"].startswith("Use the tmp_path fixture")
    assert (
        cand.decision["rule"] == item["title"]
        and cand.decision["topic"]
        and "paths" in cand.decision
    )
