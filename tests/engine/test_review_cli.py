"""Review from a script: `memcurate list / show / approve / reject` on a project seeded from the
bundled demo session (offline drafter), through the same engine calls as the TUI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_cli

from memcurate.curator import demo
from memcurate.curator.candidates import staging
from memcurate.curator.cli import main
from memcurate.curator.engine import Engine
from memcurate.curator.util.locks import FileLock
from memcurate.hooks.dispatch import run as hook

ITEM_KEYS = {
    "id",
    "kind",
    "state",
    "category",
    "title",
    "action",
    "confidence",
    "issues",
    "blocked",
    "where",
    "session",
    "created",
    "error",
    "reason",
}


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """`memcurate ARGS` in this process: (exit status, stdout, stderr)."""
    try:
        code = main(list(args))
    except SystemExit as e:  # argparse's usage errors
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys, *args: str) -> tuple[int, dict, str]:
    code, out, err = cli(capsys, *args, "--json")
    return code, json.loads(out), err  # exactly one document: json.loads refuses anything after it


@pytest.fixture
def seeded(tmp_path) -> dict:
    """The demo session played through the real hook into a project under tmp_path (nothing drafted)."""
    layout = demo.make_project(str(tmp_path / "demo"))
    demo.play_session(layout, hook)
    layout["data"] = os.path.join(layout["project"], ".memcurate")
    return layout


@pytest.fixture
def drafted(seeded, capsys) -> dict:
    code, doc, _ = cli_json(capsys, "list", "--draft", "--project", seeded["project"])
    assert code == 0 and doc["drafted"]["drafted"]
    seeded["items"] = {i["category"] + ":" + i["id"].partition("/")[0]: i for i in doc["items"]}
    return seeded


def item(layout: dict, category: str, nth: int = 0) -> dict:
    """The nth item (by id) of a category in the drafted demo."""
    return sorted(
        (i for i in layout["items"].values() if i["category"] == category), key=lambda i: i["id"]
    )[nth]


def staging_files(data: str) -> dict[str, bytes]:
    found = {}
    for folder, _, files in os.walk(os.path.join(data, "staging")):
        for name in files:
            path = os.path.join(folder, name)
            found[path] = Path(path).read_bytes()
    return found


def memories(root: str) -> list[str]:
    return sorted(
        str(p.relative_to(root)) for p in Path(root).glob("*/*.md") if p.parent.name != "archive"
    )


def states(layout: dict) -> dict[str, str]:
    return {
        f"{tid}/{cat}": rec["state"]
        for tid in staging.triage_ids(layout["data"])
        for cat, rec in staging.category_states(layout["data"], tid).items()
    }


# -- list ------------------------------------------------------------------------------------


def test_list_shows_what_is_triaged_and_never_drafts(seeded, capsys):
    before = staging_files(seeded["data"])
    code, out, err = cli(capsys, "list", "--project", seeded["project"])
    assert code == 0 and err == ""
    code, doc, _ = cli_json(capsys, "list", "--project", seeded["project"])
    assert code == 0
    assert staging_files(seeded["data"]) == before  # read-only: nothing drafted, nothing moved
    expected = {
        f"{t}/{c}"
        for t in staging.triage_ids(seeded["data"])
        for c in staging.category_states(seeded["data"], t)
    }
    assert {i["id"] for i in doc["items"]} == expected and len(expected) == 9
    assert {i["state"] for i in doc["items"]} == {"triaged"}
    for i in doc["items"]:
        assert set(i) == ITEM_KEYS and i["kind"] == "memory" and i["confidence"] is None
        assert i["session"] == demo.DEMO_SESSION
        assert i["id"] in out
    assert "9 triaged" in out


def test_list_on_a_project_with_nothing_staged(project, capsys):
    code, out, err = cli(capsys, "list", "--project", str(project))
    assert (code, out.strip(), err) == (0, "nothing waits for review", "")
    code, doc, _ = cli_json(capsys, "list", "--project", str(project))
    assert code == 0 and doc["items"] == []
    assert not (project / ".memcurate").exists()  # a listing creates nothing


def test_list_after_drafting_shows_ready_items_with_confidence_and_issues(drafted, capsys):
    code, doc, _ = cli_json(capsys, "list", "--project", drafted["project"])
    assert code == 0
    items = doc["items"]
    assert {i["state"] for i in items} == {"ready"} and len(items) == 9
    for i in items:
        tid, _, cat = i["id"].partition("/")
        assert cat == i["category"] and tid in staging.triage_ids(drafted["data"])
        assert 0 <= i["confidence"] <= 1 and i["action"] == "create"
        assert i["where"].startswith(f"{cat}/") and i["where"].endswith(".md")
    runbook = item(drafted, "runbook")  # its form advisory, and the mark of an offline card
    assert [(x["severity"], x["code"]) for x in runbook["issues"]][-1] == (
        "ADVISORY",
        "offline-card",
    )
    assert [x["severity"] for x in runbook["issues"]] == ["ADVISORY", "ADVISORY"]

    code, out, _ = cli(capsys, "list", "--project", drafted["project"])
    lines = out.splitlines()
    head = lines[0]
    assert head.split() == ["ID", "KIND", "STATE", "CATEGORY", "CONF", "TITLE"]
    rows = [
        line
        for line in lines[1:]
        if line and not line.startswith(" ") and "ready" in line.split()[:3]
    ]
    assert len(rows) == 9
    for i in items:  # aligned: every title starts under TITLE
        row = next(r for r in rows if r.startswith(i["id"] + " "))
        assert row[head.index("TITLE") :].startswith(i["title"][:50])
        assert row[head.index("CONF") :].startswith(f"{i['confidence']:.2f}")
    issue_line = lines[lines.index(next(r for r in rows if r.startswith(runbook["id"]))) + 1]
    assert (
        issue_line.startswith("    ADVISORY") and runbook["issues"][0]["message"][:40] in issue_line
    )


# -- show and approve ------------------------------------------------------------------------


def test_approve_saves_exactly_what_show_showed(drafted, capsys):
    dec = item(drafted, "decision")
    prefix = dec["id"][:-4]  # a unique prefix will do
    code, shown, _ = cli_json(capsys, "show", prefix, "--project", drafted["project"])
    assert code == 0 and shown["item"]["id"] == dec["id"]
    assert shown["decision"]["action"] == "create" and shown["diff"] == ""
    assert shown["confidence"]["value"] == dec["confidence"] and shown["confidence"]["factors"]
    draft_file = staging.candidate_files(drafted["data"], *dec["id"].split("/")).file
    assert shown["text"] == Path(draft_file).read_text(encoding="utf-8")
    code, text, _ = cli(capsys, "show", prefix, "--project", drafted["project"])
    assert f"decision    create {dec['where']}" in text and shown["text"] in text

    code, doc, err = cli_json(capsys, "approve", prefix, "--project", drafted["project"])
    assert (code, err, doc["refused"]) == (0, "", [])
    [saved] = doc["saved"]
    assert (
        saved["id"] == dec["id"] and saved["action"] == "create" and saved["where"] == dec["where"]
    )
    root = drafted["memory_root"]
    assert Path(saved["path"]) == Path(root) / dec["where"]
    assert Path(saved["path"]).read_text(encoding="utf-8") == shown["text"]
    assert f"]({dec['where']})" in (Path(root) / "MEMORY.md").read_text(encoding="utf-8")

    code, doc, _ = cli_json(capsys, "list", "--project", drafted["project"])
    assert dec["id"] not in {i["id"] for i in doc["items"]}
    code, doc, _ = cli_json(capsys, "list", "--all", "--project", drafted["project"])
    done = next(i for i in doc["items"] if i["id"] == dec["id"])
    assert done["state"] == "saved" and done["where"] == dec["where"]
    assert doc["items"][-1]["id"] == dec["id"]  # what is done comes after what waits


def test_items_of_one_triage_share_one_memory_md_write(drafted, capsys, monkeypatch):
    from memcurate.curator.memory import memory_md

    writes = []
    real = memory_md.apply
    monkeypatch.setattr(memory_md, "apply", lambda *a, **k: writes.append(a[2]) or real(*a, **k))
    tid = item(drafted, "runbook")["id"].partition("/")[0]
    ids = [i["id"] for i in drafted["items"].values() if i["id"].startswith(tid)]
    assert len(ids) == 4
    code, out, err = cli(capsys, "approve", *ids, "--project", drafted["project"])
    assert code == 0, err
    assert len(writes) == 1 and len(writes[0]) == 4
    assert out.count("saved ") == 4 and len(memories(drafted["memory_root"])) == 4


def test_show_of_an_update_has_the_diff_and_a_conflict_is_refused_alone(drafted, capsys):
    root = Path(drafted["memory_root"])
    dec = item(drafted, "decision")
    assert cli(capsys, "approve", dec["id"], "--project", drafted["project"])[0] == 0
    saved = root / dec["where"]
    # The person trims the memory by hand; the same session, played again, says it in full.
    saved.write_text(
        saved.read_text(encoding="utf-8").replace("The assistant agreed", "The assistant said"),
        encoding="utf-8",
    )
    again = dict(drafted, transcript=drafted["transcript"].replace("000000000001", "000000000002"))
    demo.play_session(again, hook)
    code, doc, _ = cli_json(capsys, "list", "--draft", "--project", drafted["project"])
    [update] = [i for i in doc["items"] if i["category"] == "decision"]
    assert update["action"] == "update" and update["where"] == dec["where"]

    code, shown, _ = cli_json(capsys, "show", update["id"], "--project", drafted["project"])
    assert shown["decision"]["action"] == "update"
    assert "+The assistant agreed" in shown["diff"] and f"+++ b/{dec['where']}" in shown["diff"]
    code, text, _ = cli(capsys, "show", update["id"], "--project", drafted["project"])
    assert f"update of {dec['where']}" in text and f"--- diff against {dec['where']} ---" in text
    assert "+The assistant agreed" in text

    # Changed again before the approval: that one is refused as a conflict, the other is saved.
    saved.write_text(
        saved.read_text(encoding="utf-8") + "\nOne more line by hand.\n", encoding="utf-8"
    )
    other = next(i for i in doc["items"] if i["category"] == "constraint" and i["state"] == "ready")
    code, doc, err = cli_json(
        capsys, "approve", update["id"], other["id"], "--project", drafted["project"]
    )
    assert code == 1
    assert [s["id"] for s in doc["saved"]] == [other["id"]]
    assert [r["id"] for r in doc["refused"]] == [update["id"]]
    assert (
        err.count("\n") == 1
        and update["id"] in err
        and "by hand" in saved.read_text(encoding="utf-8")
    )


def test_a_noop_says_it_writes_nothing(drafted, capsys):
    dec = item(drafted, "decision")
    cli(capsys, "approve", dec["id"], "--project", drafted["project"])
    again = dict(drafted, transcript=drafted["transcript"].replace("000000000001", "000000000002"))
    demo.play_session(again, hook)
    code, doc, _ = cli_json(capsys, "list", "--draft", "--project", drafted["project"])
    [noop] = [i for i in doc["items"] if i["category"] == "decision"]
    assert noop["action"] == "noop"
    code, text, _ = cli(capsys, "show", noop["id"], "--project", drafted["project"])
    assert f"noop: {dec['where']} already says it" in text and "approving writes nothing" in text


def test_show_never_prints_escape_sequences_from_a_hand_edited_draft(drafted, capsys):
    dec = item(drafted, "decision")
    path = Path(staging.candidate_files(drafted["data"], *dec["id"].split("/")).file)
    path.write_text(
        path.read_text(encoding="utf-8") + "\x1b]0;owned\x07\x1b[31mred\x1b[0m\n", encoding="utf-8"
    )
    code, text, _ = cli(capsys, "show", dec["id"], "--project", drafted["project"])
    assert code == 0 and "\x1b" not in text and "\x07" not in text and "red" in text


# -- refusals: all or nothing ----------------------------------------------------------------


@pytest.fixture
def mixed(seeded, capsys) -> dict:
    """One triage drafted (its decision ready, its preference BLOCKed by an edit), the others triaged."""
    engine = Engine(seeded["project"])
    try:
        tid = next(
            t
            for t in staging.triage_ids(seeded["data"])
            if "decision" in staging.category_states(seeded["data"], t)
        )
        engine.process(tid)
        text = engine.review(tid, "preference")["text"]
        engine.edit(tid, "preference", text.split("## Reason")[0])  # a required section gone: BLOCK
    finally:
        engine.close()
    seeded["ready"], seeded["blocked"] = f"{tid}/decision", f"{tid}/preference"
    seeded["triaged"] = next(i for i, s in states(seeded).items() if s == "triaged")
    return seeded


@pytest.mark.parametrize(
    "bad, says",
    [
        ("nope", "no such item"),
        ("2026", "ambiguous"),
        ("triaged", "not drafted yet"),
        ("blocked", "BLOCK"),
    ],
)
def test_a_bad_id_approves_nothing(mixed, capsys, bad, says):
    bad = mixed.get(bad, bad)
    before = states(mixed)
    code, doc, err = cli_json(capsys, "approve", mixed["ready"], bad, "--project", mixed["project"])
    assert code == 1
    assert [e["id"] for e in doc["errors"]] == [bad] and says in doc["errors"][0]["error"]
    assert err.count("\n") == 1 and says in err
    assert states(mixed) == before and memories(mixed["memory_root"]) == []
    code, out, err = cli(capsys, "approve", mixed["ready"], bad, "--project", mixed["project"])
    assert code == 1 and out.strip() == "nothing approved" and err.count("\n") == 1
    assert states(mixed) == before


def test_ambiguous_prefix_lists_its_matches(mixed, capsys):
    tid = mixed["ready"].partition("/")[0]
    code, _, err = cli(capsys, "reject", tid, "--project", mixed["project"])
    assert code == 1 and mixed["ready"] in err and mixed["blocked"] in err


def test_a_blocked_item_can_be_rejected_and_a_busy_triage_is_a_clear_error(mixed, capsys):
    tid = mixed["ready"].partition("/")[0]
    with FileLock(staging.claim_path(mixed["data"], tid)):  # the TUI (another process) works on it
        code, doc, err = cli_json(capsys, "approve", mixed["ready"], "--project", mixed["project"])
    assert code == 1 and "another process is working on it; try again" in err
    assert doc["refused"][0]["id"] == mixed["ready"] and states(mixed)[mixed["ready"]] == "ready"
    code, out, err = cli(
        capsys,
        "reject",
        mixed["blocked"],
        "--reason",
        "not a preference",
        "--project",
        mixed["project"],
    )
    assert (code, err) == (0, "") and out.strip() == f"rejected {mixed['blocked']}"
    assert states(mixed)[mixed["blocked"]] == "rejected"


# -- reject ----------------------------------------------------------------------------------


def test_a_rejected_item_is_not_listed_nor_proposed_again(drafted, capsys):
    rb = item(drafted, "runbook")
    code, doc, err = cli_json(
        capsys, "reject", rb["id"], "--reason", "no command named", "--project", drafted["project"]
    )
    assert (code, doc["rejected"], doc["refused"], err) == (0, [rb["id"]], [], "")
    code, doc, _ = cli_json(capsys, "list", "--project", drafted["project"])
    assert rb["id"] not in {i["id"] for i in doc["items"]}
    code, doc, _ = cli_json(capsys, "list", "--all", "--project", drafted["project"])
    gone = next(i for i in doc["items"] if i["id"] == rb["id"])
    assert gone["state"] == "rejected" and gone["reason"] == "no command named"
    # in words too: why it went
    _, out, _ = cli(capsys, "list", "--all", "--project", drafted["project"])
    assert "    why      no command named" in out.split(rb["id"], 1)[1].split("\n20", 1)[0], out
    _, out, _ = cli(capsys, "show", rb["id"], "--project", drafted["project"])
    assert "state       rejected\nwhy         no command named\n" in out, out
    code, _, err = cli(capsys, "reject", rb["id"], "--project", drafted["project"])
    assert code == 1 and "already rejected" in err

    # The same evidence staged again (another session file saying the same): never proposed again.
    again = dict(drafted, transcript=drafted["transcript"].replace("000000000001", "000000000002"))
    demo.play_session(again, hook)
    code, doc, _ = cli_json(capsys, "list", "--draft", "--project", drafted["project"])
    assert code == 0 and len(doc["drafted"]["drafted"]) == 8
    assert not [i for i in doc["items"] if i["category"] == "runbook"]
    assert sum(1 for s in states(drafted).values() if s == "rejected") == 2


# -- exit codes, --json, --project, the real console script ----------------------------------


@pytest.mark.parametrize(
    "args", [["approve"], ["reject"], ["show"], ["list", "--bogus"], ["show", "a", "b"]]
)
def test_usage_errors_exit_2(drafted, capsys, args):
    code, out, err = cli(capsys, *args, "--project", drafted["project"])
    assert code == 2 and out == "" and "usage:" in err


def test_a_bad_project_is_one_json_document_with_the_error(tmp_path, capsys):
    code, doc, err = cli_json(capsys, "approve", "x", "--project", str(tmp_path / "nowhere"))
    assert code == 1 and "not a folder" in doc["errors"][0]["error"] and err.count("\n") == 1


def test_the_console_script(drafted):
    project = drafted["project"]
    r = run_cli("--project", project, "list", "--json", cwd=Path(project))
    assert r.returncode == 0 and r.stderr == ""
    items = json.loads(r.stdout)["items"]
    pref = next(i for i in items if i["category"] == "preference")
    r = run_cli("show", pref["id"], "--project", project, cwd=Path(project))
    assert r.returncode == 0 and pref["title"] in r.stdout
    r = run_cli("approve", pref["id"], cwd=Path(project))  # the project from the cwd's git root
    assert r.returncode == 0 and r.stdout.startswith(f"saved    {pref['id']}  create ")
    r = run_cli("approve", pref["id"], "--json", cwd=Path(project))
    assert r.returncode == 1 and "already saved" in json.loads(r.stdout)["errors"][0]["error"]
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1
    other = next(i for i in items if i["category"] == "tech_debt")
    r = run_cli("reject", other["id"], "--reason", "later", cwd=Path(project))
    assert r.returncode == 0 and r.stdout.strip() == f"rejected {other['id']}"


def test_a_save_leaves_the_index_current_for_the_recall_hook(drafted, capsys):
    """What approving writes is indexed by the save itself: the recall hook's next prompt finds nothing it
    would have to read on its own (folders.open_for_reading lists no file unseen by the index)."""
    from memcurate.curator.categories import CATEGORIES
    from memcurate.curator.memory.index import folders

    chosen = item(drafted, "decision")
    code, doc, _ = cli_json(capsys, "approve", chosen["id"], "--project", drafted["project"])
    assert code == 0, doc
    engine = Engine(drafted["project"])
    root = engine.root
    engine.close()
    conn, unindexed = folders.open_for_reading(
        os.path.join(drafted["data"], "index.sqlite"), root, list(CATEGORIES)
    )
    conn.close()
    assert not unindexed, (unindexed.changed, unindexed.gone)
