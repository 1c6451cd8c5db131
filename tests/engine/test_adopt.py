"""Adopting Claude's own memories: a topic file or a MEMORY.md line of Claude's becomes a memcurate memory
(front matter completed, the category's sections, its MEMORY.md line) as one reviewable proposal; Claude's
file is archived with its bytes and its lines dropped only when the person approves."""

from __future__ import annotations

import os

import pytest

from memcurate.curator.engine import Engine
from memcurate.curator.library.entries import line_ref
from memcurate.curator.memory import memfile
from memcurate.curator.proposals import actions as proposal_actions
from memcurate.curator.proposals import store
from memcurate.curator.proposals.store import ProposalError
from memcurate.curator.verify.checks import blocking, verify

TOPIC = """---
name: Flaky upload test on CI
description: The upload test fails on CI when the tmp dir is tmpfs
type: project
---
# Flaky upload test

The upload test fails on CI because the tmp dir is tmpfs and does not support O_DIRECT.
Run it with TMPDIR=/var/tmp to fix it. Verified by running pytest tests/test_upload.py twice.
The root cause is the tmpfs mount of the CI runners.
"""
FEEDBACK = """---
name: Short commit messages
description: Keep commit subjects under 60 characters
type: feedback
---
Keep commit subjects under 60 characters because the log view cuts them.
"""
LINK = "- [Flaky upload test](debugging.md) — tmpfs and O_DIRECT on CI"
MEMORY_MD = f"""# Project memory

{LINK}
- The staging server is reset every Monday at 06:00 UTC
- Prefer small pull requests, because reviews go faster
"""


@pytest.fixture
def proj(project):
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text("backend: offline\n")
    engine = Engine(project)
    root = engine.root
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "debugging.md"), "w") as f:
        f.write(TOPIC)
    with open(os.path.join(root, "commits.md"), "w") as f:
        f.write(FEEDBACK)
    with open(os.path.join(root, "MEMORY.md"), "w") as f:
        f.write(MEMORY_MD)
    os.utime(os.path.join(root, "debugging.md"), (1763800000, 1763800000))  # 2025-11-22T08:26:40Z
    yield engine
    engine.close()


def staged(engine: Engine, pid: str) -> dict:
    return store.find(engine.data, pid)


def test_adopting_a_topic_file_stages_one_proposal_that_writes_a_valid_memory(proj):
    pid = proj.adopt("claude/debugging.md")
    record = staged(proj, pid)
    assert (
        record["kind"] == "adopt" and record["state"] == "pending" and record["source"] == "library"
    )
    write, add, archive, drop = record["ops"]
    assert write["op"] == "write" and write["base_hash"] is None
    assert add == {"op": "add_line", "ref": write["ref"]}
    assert archive["op"] == "archive" and archive["ref"] == "claude/debugging.md"
    assert drop == {
        "op": "drop_line",
        "ref": line_ref(LINK),
        "base_hash": proj.library_entry(line_ref(LINK)).hash,
    }
    doc = memfile.parse(write["text"])
    assert write["ref"] == f"{doc.category}/{doc.id}" == "runbook/flaky-upload-test-on-ci"
    assert doc.title == "Flaky upload test on CI"
    assert doc.description == "The upload test fails on CI when the tmp dir is tmpfs"
    assert doc.type == "reference" and doc.sources == [] and doc.status == "active" and doc.tags
    assert doc.created == "2025-11-22T08:26:40Z"  # the file's mtime: when Claude wrote it
    assert "does not support O_DIRECT" in doc.sections["Symptom"]  # Claude's text, whole
    assert doc.sections["Steps"] == "Run it with TMPDIR=/var/tmp to fix it."
    assert not memfile.problems(doc, file_name=f"{doc.id}.md")
    assert not blocking(verify(write["text"], category=doc.category, cfg=proj.cfg))
    with open(os.path.join(proj.root, "debugging.md")) as f:
        assert f.read() == TOPIC  # nothing changes until it is approved
    with open(os.path.join(proj.root, "MEMORY.md")) as f:
        assert f.read() == MEMORY_MD


def test_adopting_twice_gives_the_same_proposal(proj):
    pid = proj.adopt("claude/debugging.md")
    assert proj.adopt("claude/debugging.md") == pid
    assert len(proj.proposals()) == 1


def test_a_line_linking_a_topic_file_adopts_the_file(proj):
    pid = proj.adopt(line_ref(LINK))
    assert [op["ref"] for op in staged(proj, pid)["ops"]][2] == "claude/debugging.md"
    assert proj.adopt("claude/debugging.md") == pid


def test_a_plain_line_becomes_a_memory_and_only_that_line_is_dropped(proj):
    line = "- Prefer small pull requests, because reviews go faster"
    pid = proj.adopt(line_ref(line))
    write, add, drop = staged(proj, pid)["ops"]
    assert drop == {
        "op": "drop_line",
        "ref": line_ref(line),
        "base_hash": proj.library_entry(line_ref(line)).hash,
    }
    doc = memfile.parse(write["text"])
    assert doc.title == "Prefer small pull requests, because reviews go faster"
    assert not blocking(verify(write["text"], category=doc.category, cfg=proj.cfg))
    assert "because reviews go faster" in doc.body


def test_claudes_feedback_becomes_a_preference(proj):
    write = staged(proj, proj.adopt("claude/commits.md"))["ops"][0]
    doc = memfile.parse(write["text"])
    assert (doc.category, doc.type, doc.id) == ("preference", "feedback", "short-commit-messages")
    # the reason Claude gave, as a sentence
    assert doc.sections["Reason"] == "The log view cuts them."
    assert not blocking(verify(write["text"], category="preference", cfg=proj.cfg))


def test_the_new_id_never_takes_an_existing_memorys(proj):
    os.makedirs(os.path.join(proj.root, "runbook"), exist_ok=True)
    with open(os.path.join(proj.root, "runbook", "flaky-upload-test-on-ci.md"), "w") as f:
        f.write("taken\n")
    write = staged(proj, proj.adopt("claude/debugging.md"))["ops"][0]
    assert write["ref"] == "runbook/flaky-upload-test-on-ci-2"


def test_only_claudes_memories_are_adopted(proj):
    with pytest.raises(ProposalError, match="memcurate's already"):
        proj.adopt("decision/use-jwt")
    with pytest.raises(ProposalError, match="not a library ref"):
        proj.adopt("claude/../etc/passwd.md")
    assert proj.proposals() == []


def test_the_adoption_is_one_diff_and_approving_it_keeps_every_other_byte(proj):
    pid = proj.adopt("claude/debugging.md")
    view = proposal_actions.view(proj, pid)
    assert view["issues"] == []
    files = {f["where"]: f for f in view["planned"]["files"]}
    new = "runbook/flaky-upload-test-on-ci.md"
    assert files[new]["before"] is None and "+title: Flaky upload test on CI" in files[new]["diff"]
    md = files["MEMORY.md"]["diff"]
    assert f"-{LINK}" in md  # Claude's line that linked the file, dropped
    # the memory's own line
    assert "+- [Flaky upload test on CI](runbook/flaky-upload-test-on-ci.md)" in md
    assert (
        files["debugging.md"]["after"] is None
        and files[".archive/claude/debugging.md"]["after"] == TOPIC
    )

    proposal_actions.approve(proj, pid, view)
    root = proj.root
    with open(os.path.join(root, ".archive", "claude", "debugging.md")) as f:
        assert f.read() == TOPIC  # Claude's bytes, kept
    assert not os.path.exists(os.path.join(root, "debugging.md"))
    with open(os.path.join(root, new)) as f:
        doc = memfile.parse(f.read())
    assert not memfile.problems(doc, file_name=os.path.basename(new))
    with open(os.path.join(root, "MEMORY.md")) as f:
        after = f.read()
    from memcurate.curator.memory.memory_md.format import parse

    outside = parse(after).outside()
    assert outside.replace("\n", "") == MEMORY_MD.replace(LINK + "\n", "").replace("\n", "")
    assert outside.startswith(
        "# Project memory\n\n- The staging server is reset every Monday at 06:00 UTC\n"
        "- Prefer small pull requests, because reviews go faster\n"
    )
    assert proj.proposals(every=True)[0]["state"] == "approved"
    assert "flaky-upload-test-on-ci" in {
        e.ref.partition("/")[2] for e in proj.library() if e.owner == "memcurate"
    }


def test_the_person_edits_the_memory_before_approving(proj):
    pid = proj.adopt("claude/commits.md")
    text = store.find(proj.data, pid)["ops"][0]["text"]
    edited = text.replace("## Reason\n", "## Reason\nLong subjects are cut in the log view. ")
    view = proposal_actions.edit(proj, pid, edited)
    assert view["issues"] == [] and view["record"]["edit"][0]["text"] == edited
    proposal_actions.approve(proj, pid, view)
    with open(os.path.join(proj.root, "preference", "short-commit-messages.md")) as f:
        assert "Long subjects are cut in the log view." in f.read()


def test_an_edit_that_breaks_the_memory_blocks_the_approval(proj):
    pid = proj.adopt("claude/commits.md")
    text = store.find(proj.data, pid)["ops"][0]["text"]
    view = proposal_actions.edit(proj, pid, text.replace("## Reason", "## Notes"))
    assert view["issues"] and view["issues"][0]["severity"] == "BLOCK"
    with pytest.raises(ProposalError):
        proposal_actions.approve(proj, pid, view)
    assert not os.path.exists(os.path.join(proj.root, "preference"))
    with pytest.raises(ProposalError, match="writes none"):
        proposal_actions.edit(
            proj,
            proj.stage_proposal(
                "archive",
                "a",
                "",
                [{"op": "archive", "ref": "claude/x.md", "base_hash": "0" * 64}],
                source="check",
            ),
            "x",
        )
