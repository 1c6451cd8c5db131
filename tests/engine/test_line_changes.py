"""Single lines of MEMORY.md and of the archive files changed through a change set: a secret redacted
where it stands (a line of Claude's, a memcurate entry, an archive line), a dead link removed, and
MEMORY.md written once for all of a set's line changes; removals that never lose what Claude Code
wrote meanwhile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memcurate.curator.cli import main
from memcurate.curator.engine import Engine
from memcurate.curator.library import carry_out
from memcurate.curator.library.changes import ChangeError
from memcurate.curator.library.entries import line_hash, line_ref
from memcurate.curator.util import atomic
from memcurate.curator.util.redact import redact_text

CLAUDE_KEY = "AKIAIOSFODNN7EXAMPLE"
ENTRY_KEY = "AKIAI44QH8DHBEXAMPLE"
ARCHIVE_KEY = "AKIAJ55RI9EICFXAMPLE"
TOPIC_KEY = "AKIAK66SJ0FJDGXAMPLE"


def memory(cat: str, id_: str, title: str, description: str) -> str:
    return (
        f"---\nid: {id_}\ncategory: {cat}\ntitle: {title}\ndescription: {description}\ntype: project\n"
        f"tags: [test]\ncreated: 2020-01-01T00:00:00Z\nupdated: 2020-01-01T00:00:00Z\nsources:\n"
        f"  - session: s1\n    turns: [1, 2]\nstatus: active\n---\n"
        "## Decision\nUse JWT.\n## Rationale\nBecause it was needed.\n"
    )


# Claude's lines with CRLF endings, trailing blanks and no final break: each byte must survive.
MD = (
    "\ufeff# Notes\r\n"
    f"- The deploy key is {CLAUDE_KEY} for now  \r\n"
    "- Always run make before pushing\r\n"
    "\r\n"
    "<!-- memcurate:begin section=decision budget=40 -->\r\n"
    "## Key Decisions\r\n"
    "- [Use JWT](decision/use-jwt.md) \u2014 Stateless tokens\r\n"
    f"- [Staging access](decision/staging.md) \u2014 Staging uses key {ENTRY_KEY}\r\n"
    "- [Gone memory](decision/gone.md) \u2014 Its file was deleted\r\n"
    "- [Keep logs](decision/keep-logs.md) \u2014 Logs stay 30 days\r\n"
    "<!-- memcurate:end section=decision -->\r\n"
    "\r\n"
    "last line of Claude's, no break"
)
ARCHIVE = (
    "# Archived from MEMORY.md: Key Decisions (newest first; the memory files themselves are unchanged)\n"
    "\n"
    f"- [Old staging](../decision/old-staging.md) \u2014 old key {ARCHIVE_KEY}\n"
    "- [Old logs](../decision/old-logs.md) \u2014 Logs stayed 7 days\n"
)
TOPIC = f"# Old notes\r\nthe key was {TOPIC_KEY}\r\nkeep this\r\n"


@pytest.fixture
def proj(tmp_path) -> dict:
    project, root = tmp_path / "project", tmp_path / "memory"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {root}\n"
    )
    (root / "decision").mkdir(parents=True)
    for id_, title, description in (
        ("use-jwt", "Use JWT", "Stateless tokens"),
        ("staging", "Staging access", "Staging uses a shared key"),
        ("keep-logs", "Keep logs", "Logs stay 30 days"),
        ("old-staging", "Old staging", "old key rotated"),
        ("old-logs", "Old logs", "Logs stayed 7 days"),
    ):
        (root / "decision" / f"{id_}.md").write_text(memory("decision", id_, title, description))
    (root / "MEMORY.md").write_bytes(MD.encode())
    (root / ".archive" / "claude").mkdir(parents=True)
    (root / ".archive" / "decision.md").write_bytes(ARCHIVE.encode())
    (root / ".archive" / "claude" / "old-notes.md").write_bytes(TOPIC.encode())
    return {"project": project, "root": root}


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


def check(capsys, project: Path) -> list[dict]:
    capsys.readouterr()
    assert main(["check", "--json", "--project", str(project)]) == 0
    return json.loads(capsys.readouterr().out)["findings"]


def approve(project: Path, finding: dict) -> None:
    assert main(["approve", f"proposal/{finding['proposal']}", "--project", str(project)]) == 0


def redacted(text: str, key: str) -> str:
    return text.replace(key, "[REDACTED:aws-access-key]")


def test_approving_the_secret_proposals_removes_each_key_and_changes_no_other_byte(proj, capsys):
    root = proj["root"]
    before = tree(root)
    secrets = {
        f["detail"]["where"]: f for f in check(capsys, proj["project"]) if f["code"] == "secret"
    }
    assert set(secrets) == {"MEMORY.md", ".archive/decision.md", ".archive/claude/old-notes.md"}
    assert set(secrets["MEMORY.md"]["refs"]) == {
        line_ref(f"- The deploy key is {CLAUDE_KEY} for now"),
        "decision/staging",
    }
    assert tree(root) == before  # found and proposed: nothing written yet

    approve(proj["project"], secrets["MEMORY.md"])
    # (a) Claude's line and (c) the memcurate entry's description: only the keys went
    after = redacted(redacted(MD, CLAUDE_KEY), ENTRY_KEY).replace(
        "[REDACTED:aws-access-key]\r\n- [Gone", "\\[REDACTED:aws-access-key\\]\r\n- [Gone"
    )
    assert (root / "MEMORY.md").read_bytes() == after.encode()
    assert CLAUDE_KEY not in after and ENTRY_KEY not in after
    # (b) an archive file of memcurate's, and a topic file of Claude's archived
    approve(proj["project"], secrets[".archive/decision.md"])
    assert (root / ".archive" / "decision.md").read_bytes() == redacted(
        ARCHIVE, ARCHIVE_KEY
    ).encode()
    approve(proj["project"], secrets[".archive/claude/old-notes.md"])
    assert (root / ".archive" / "claude" / "old-notes.md").read_bytes() == redacted(
        TOPIC, TOPIC_KEY
    ).encode()
    changed = {k for k in before if tree(root)[k] != before[k]}
    assert changed == {"MEMORY.md", ".archive/decision.md", ".archive/claude/old-notes.md"}
    assert not any(f["code"] == "secret" for f in check(capsys, proj["project"]))


def test_a_redacted_line_must_still_hold_the_bytes_it_was_planned_against(proj):
    engine = Engine(proj["project"])
    line = f"- The deploy key is {CLAUDE_KEY} for now"
    op = {
        "op": "replace_line",
        "ref": line_ref(line),
        "base_hash": line_hash(line),
        "text": "- The deploy key is [REDACTED:aws-access-key] for now",
    }
    (proj["root"] / "MEMORY.md").write_bytes(MD.replace("for now", "until Friday").encode())
    with pytest.raises(ChangeError) as e:
        engine.apply_changes([op])
    assert e.value.changed
    # the new text is checked like any text written
    with pytest.raises(ChangeError, match="secret"):
        engine.apply_changes([dict(op, text=line)])
    engine.close()


def test_approving_a_missing_link_proposal_removes_only_that_entry(proj, capsys):
    root = proj["root"]
    (root / "MEMORY.md").write_bytes(redacted(MD, ENTRY_KEY).encode())
    before = tree(root)
    [missing] = [f for f in check(capsys, proj["project"]) if f["code"] == "missing-link"]
    assert missing["refs"] == ["decision/gone"]
    approve(proj["project"], missing)
    md = redacted(MD, ENTRY_KEY).replace(
        "[REDACTED:aws-access-key]", "\\[REDACTED:aws-access-key\\]"
    )
    assert (root / "MEMORY.md").read_bytes() == md.replace(
        "- [Gone memory](decision/gone.md) \u2014 Its file was deleted\r\n", ""
    ).encode()
    assert {k for k in before if tree(root).get(k) != before[k]} == {"MEMORY.md"}
    assert not any(f["code"] == "missing-link" for f in check(capsys, proj["project"]))


def test_a_set_dropping_claude_lines_and_adding_entries_writes_memory_md_once(proj, monkeypatch):
    engine = Engine(proj["project"])
    root = proj["root"]
    (root / "decision" / "new-one.md").write_text(
        memory("decision", "new-one", "New one", "A new decision")
    )
    line = "- Always run make before pushing"
    writes = []
    real = atomic._temp_file

    def counting(path, data, durable, mode=None):
        if Path(path).name == "MEMORY.md":
            writes.append(data)
        return real(path, data, durable, mode)

    monkeypatch.setattr(atomic, "_temp_file", counting)
    engine.apply_changes(
        [
            {"op": "drop_line", "ref": line_ref(line), "base_hash": line_hash(line)},
            {"op": "add_line", "ref": "decision/new-one"},
        ]
    )
    assert len(writes) == 1  # one write: a crash leaves all of the change or none of it
    text = (root / "MEMORY.md").read_bytes().decode()
    assert line not in text and "- [New one](decision/new-one.md) \u2014 A new decision\r\n" in text
    assert text.startswith("\ufeff# Notes\r\n") and text.endswith(
        "\r\nlast line of Claude's, no break"
    )
    trash = list((proj["project"] / ".memcurate" / "trash").iterdir())
    # MEMORY.md as it was before Claude's line went, its secrets redacted (a secret is revoked, not restored)
    assert [p.read_bytes() for p in trash] == [redact_text(MD).encode()]
    engine.close()


@pytest.fixture
def topic(proj):
    engine = Engine(proj["project"])
    path = proj["root"] / "debugging.md"
    path.write_bytes(b"# Debugging\nrun with -v\n")
    yield engine, path
    engine.close()


def test_a_delete_never_removes_what_claude_wrote_after_the_file_was_read(topic, monkeypatch):
    engine, path = topic
    from memcurate.curator.util.stamps import content_hash

    op = {
        "op": "delete",
        "ref": "claude/debugging.md",
        "base_hash": content_hash(path.read_bytes()),
    }
    real = carry_out.read_bytes

    def then_claude_writes(p):  # Claude Code writes its file right after memcurate looked at it
        data = real(p)
        if not path.exists() or path.read_bytes() != b"# Debugging\nnewest\n":
            path.write_bytes(b"# Debugging\nnewest\n")
        return data

    monkeypatch.setattr(carry_out, "read_bytes", then_claude_writes)
    engine.apply_changes([op])
    assert path.read_bytes() == b"# Debugging\nnewest\n"


def test_a_delete_of_a_file_changed_after_planning_puts_it_back_and_fails(topic, monkeypatch):
    engine, path = topic
    from memcurate.curator.util.stamps import content_hash

    op = {
        "op": "delete",
        "ref": "claude/debugging.md",
        "base_hash": content_hash(path.read_bytes()),
    }
    real = carry_out._trash

    def trash_then_claude_writes(engine, where, data):  # between the plan and the removal
        made = real(engine, where, data)
        path.write_bytes(b"# Debugging\nnewest\n")
        return made

    monkeypatch.setattr(carry_out, "_trash", trash_then_claude_writes)
    with pytest.raises(ChangeError) as e:
        engine.apply_changes([op])
    assert e.value.changed and path.read_bytes() == b"# Debugging\nnewest\n"
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".debugging")] == []
