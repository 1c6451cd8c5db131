"""`memcurate tidy`: near-duplicates merged and contradictions put to the person as proposals; nothing
changes until one is approved (curator/hygiene/tidy.py, Engine.tidy, the merge call of the Claude
backends)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import ANTHROPIC_SDK, memcurate_exe
from test_anthropic_backend import server  # noqa: F401 (fixture: the local Messages API server)
from test_claude_cli import fake  # noqa: F401 (fixture: the fake claude on the PATH)

from memcurate.curator.engine import Engine
from memcurate.curator.hygiene import merging
from memcurate.curator.memory import memfile
from memcurate.curator.proposals import actions as proposal_actions

SECTIONS = {"decision": ("Decision", "Rationale"), "constraint": ("Rule", "Impact")}


def doc(
    mid,
    title,
    first,
    second,
    *,
    category="decision",
    stamp="2026-11-01T10:00:00Z",
    tags=("x",),
    session="s-1",
    third="",
):
    one, two = SECTIONS[category]
    body = f"## {one}\n{first}\n\n## {two}\n{second}" + (
        f"\n\n## Alternatives\n{third}" if third else ""
    )
    return memfile.MemoryDoc(
        id=mid,
        category=category,
        title=title,
        description=title,
        tags=list(tags),
        created=stamp,
        updated=stamp,
        sources=[{"session": session, "turns": [1, 2]}],
        body=body,
    )


def save(engine: Engine, d: memfile.MemoryDoc) -> None:
    """Saved as memcurate saves: the file and its MEMORY.md line."""
    ref = f"{d.category}/{d.id}"
    engine.apply_changes(
        [
            {"op": "write", "ref": ref, "base_hash": None, "text": memfile.render(d)},
            {"op": "add_line", "ref": ref},
        ]
    )


OLD = doc(
    "use-jwt-for-api-auth",
    "Use JWT for API authentication",
    "The public API authenticates callers with stateless JWT bearer tokens signed by the gateway.\n"
    "Tokens expire after 15m.",
    "Stateless tokens let the API scale horizontally without shared session storage.",
    stamp="2026-09-01T10:00:00Z",
    tags=("auth", "api"),
    session="s-old",
    third="Server sessions in Redis were considered.",
)
NEW = doc(
    "jwt-tokens-authenticate-the-api",
    "JWT tokens authenticate the public API",
    "Callers of the public API authenticate with stateless JWT bearer tokens signed by the gateway.\n"
    "Tokens expire after 60m.",
    "Stateless tokens let the API scale horizontally, no shared session storage needed.",
    stamp="2026-11-01T10:00:00Z",
    tags=("jwt", "auth"),
    session="s-new",
)
OTHER = doc(
    "use-postgres-for-storage",
    "Use Postgres for storage",
    "Application data lives in a managed Postgres database with nightly backups.",
    "Relational queries and transactions fit the billing domain.",
)


@pytest.fixture
def proj(project):
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text("backend: offline\n")
    engine = Engine(project)
    os.makedirs(engine.root, exist_ok=True)
    for d in (OLD, NEW, OTHER):
        save(engine, d)
    yield engine
    engine.close()


def files_of(root: str) -> dict[str, bytes]:
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            out[os.path.relpath(p, root)] = open(p, "rb").read()
    return out


def test_tidy_stages_one_merge_and_changes_nothing_until_approved(proj):
    before = files_of(proj.root)
    [pid] = proj.tidy()
    assert files_of(proj.root) == before
    view = proposal_actions.view(proj, pid)
    record = view["record"]
    assert record["kind"] == "merge" and record["source"] == "tidy"
    assert record["finding"] == {
        "code": "duplicate",
        "refs": ["decision/jwt-tokens-authenticate-the-api", "decision/use-jwt-for-api-auth"],
    }
    ops = {(op["op"], op["ref"]) for op in record["ops"]}
    assert ops == {
        ("write", "decision/jwt-tokens-authenticate-the-api"),
        ("archive", "decision/use-jwt-for-api-auth"),
        ("add_line", "decision/jwt-tokens-authenticate-the-api"),
    }
    # the older's conflicting value is left out, and said so; its extra section is kept
    assert "Tokens expire after 15m." in record["reason"] and "otherwise" in record["reason"]
    [write] = [op for op in record["ops"] if op["op"] == "write"]
    merged = memfile.parse(write["text"])
    assert merged.id == NEW.id and merged.created == OLD.created
    assert merged.tags == ["jwt", "auth", "api"]
    assert [s["session"] for s in merged.sources] == ["s-new", "s-old"]
    assert "Tokens expire after 60m." in merged.body and "15m" not in merged.body
    assert "Server sessions in Redis were considered." in merged.sections["Alternatives"]
    # a sentence both say (in other words) is kept once
    assert merged.body.count("scale horizontally") == 1
    diffs = "".join(f["diff"] for f in view["planned"]["files"])
    assert "+Server sessions in Redis were considered." in diffs


def test_approving_the_merge_writes_it_and_archives_the_others_with_memory_md_consistent(proj):
    [pid] = proj.tidy()
    seen = proposal_actions.view(proj, pid)
    proposal_actions.approve(proj, pid, seen)
    new_text = open(os.path.join(proj.root, "decision", f"{NEW.id}.md"), encoding="utf-8").read()
    assert "Server sessions in Redis were considered." in new_text
    old = memfile.parse(
        open(
            os.path.join(proj.root, ".archive", "decision", f"{OLD.id}.md"), encoding="utf-8"
        ).read()
    )
    assert old.status == "archived"  # kept, not deleted: moved out of Claude Code's recall
    assert not os.path.exists(os.path.join(proj.root, "decision", f"{OLD.id}.md"))
    memory_md = open(os.path.join(proj.root, "MEMORY.md"), encoding="utf-8").read()
    assert f"decision/{NEW.id}.md" in memory_md and f"decision/{OLD.id}.md" not in memory_md
    assert f"decision/{OTHER.id}.md" in memory_md
    archive = open(os.path.join(proj.root, ".archive", "decision.md"), encoding="utf-8").read()
    assert f"decision/{OLD.id}.md" in archive
    # nothing left to tidy
    assert proj.tidy() == []


def test_tidy_twice_stages_nothing_new_and_a_rejected_merge_is_not_proposed_again(proj):
    [pid] = proj.tidy()
    assert proj.tidy() == []
    proposal_actions.reject(proj, pid, "they differ")
    assert proj.tidy() == []
    assert len(proj.proposals(every=True)) == 1


def test_a_contradiction_is_an_archive_proposal_of_the_older(project):
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text("backend: offline\n")
    engine = Engine(project)
    try:
        os.makedirs(engine.root, exist_ok=True)
        save(
            engine,
            doc(
                "use-the-ci-cache",
                "Use the CI dependency cache",
                "Use the shared dependency cache in CI builds for the monorepo.",
                "Cold installs took twelve minutes per pipeline.",
                stamp="2026-09-01T10:00:00Z",
            ),
        )
        save(
            engine,
            doc(
                "ci-dependency-cache-off",
                "Do not use the CI dependency cache",
                "Do not use the shared dependency cache in CI builds for the monorepo.",
                "Stale cached wheels broke three releases.",
                stamp="2026-11-01T10:00:00Z",
            ),
        )
        save(engine, OTHER)
        [pid] = engine.tidy()
        record = proposal_actions.view(engine, pid)["record"]
        assert record["kind"] == "archive"
        assert [(op["op"], op["ref"]) for op in record["ops"]] == [
            ("archive", "decision/use-the-ci-cache")
        ]
        assert (
            "decision/ci-dependency-cache-off" in record["reason"] and "denies" in record["reason"]
        )
    finally:
        engine.close()


def test_a_claude_file_is_never_archived_by_tidy_it_is_named(proj):
    with open(os.path.join(proj.root, "auth-notes.md"), "w", encoding="utf-8") as f:
        f.write(
            "# API authentication\n\nThe public API authenticates callers with stateless JWT bearer tokens "
            "signed by the gateway. Stateless tokens let the API scale horizontally without shared session "
            "storage.\n"
        )
    notes: list[str] = []
    [pid] = proj.tidy(notes=notes)
    record = proposal_actions.view(proj, pid)["record"]
    assert all(op["ref"] != "claude/auth-notes.md" for op in record["ops"])
    assert "claude/auth-notes.md" in record["reason"] and "adopt it to merge" in record["reason"]


def test_check_reports_duplicates_and_contradictions_with_their_proposal(proj):
    findings = proj.check()
    [dup] = [f for f in findings if f.code == "duplicate"]
    assert set(dup.refs) == {f"decision/{OLD.id}", f"decision/{NEW.id}"} and dup.proposal
    # the check and tidy propose the same change: tidy finds it staged
    assert proj.tidy() == []


def test_memcurate_tidy_json(proj):
    out = subprocess.run(
        [*memcurate_exe(), "tidy", "--json", "--project", str(proj.project)],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )
    assert out.returncode == 0, out.stderr
    doc_ = json.loads(out.stdout)
    assert [r["kind"] for r in doc_["staged"]] == ["merge"]
    again = subprocess.run(
        [*memcurate_exe(), "tidy", "--project", str(proj.project)],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )
    assert again.returncode == 0 and "nothing new to tidy" in again.stdout


def test_groups_join_pairs_transitively():
    from memcurate.curator.hygiene.duplicates import Pair

    pairs = [
        Pair("a", "b", 0.7, "duplicate", ""),
        Pair("b", "c", 0.7, "duplicate", ""),
        Pair("x", "y", 0.9, "contradiction", ""),
        Pair("d", "e", 0.8, "duplicate", ""),
    ]
    assert merging.groups(pairs) == [["a", "b", "c"], ["d", "e"]]


# -- drafted by a Claude backend -------------------------------------------------------

MERGED = {
    "skip": False,
    "title": "The public API authenticates with stateless JWT bearer tokens",
    "description": "Read before touching API authentication or token lifetimes",
    "tags": ["auth", "jwt"],
    "sections": {
        "Decision": "Callers authenticate with stateless JWT bearer tokens signed by the gateway; "
        "tokens expire after 60m.",
        "Rationale": "Stateless tokens let the API scale horizontally without shared session storage.",
        "Alternatives": "Server sessions in Redis were considered.",
    },
}


def seeded(engine: Engine) -> Engine:
    os.makedirs(engine.root, exist_ok=True)
    for d in (OLD, NEW, OTHER):
        save(engine, d)
    return engine


def write_of(engine: Engine, pid: str) -> tuple[dict, memfile.MemoryDoc]:
    record = proposal_actions.view(engine, pid)["record"]
    [write] = [op for op in record["ops"] if op["op"] == "write"]
    return record, memfile.parse(write["text"])


def test_the_claude_cli_drafts_the_merge_with_the_memories_fenced(fake, project, tmp_path):
    from fakes import backend_engine
    from test_claude_cli import envelope

    fake.reply(envelope(structured_output=MERGED))
    engine = seeded(backend_engine(project, tmp_path, "claude-cli"))
    try:
        [pid] = engine.tidy()
        record, merged = write_of(engine, pid)
        assert merged.title == MERGED["title"] and "expire after 60m" in merged.body
        # what the model does not decide: the file, its sources and stamps
        assert merged.id == NEW.id and merged.created == OLD.created
        assert {s["session"] for s in merged.sources} == {"s-old", "s-new"}
        assert "Drafted by claude-cli" in record["reason"]
        (call,) = fake.calls()
        assert (
            "--json-schema" in call["argv"]
            and "memory editor" in call["argv"][call["argv"].index("--system-prompt") + 1]
        )
        assert "<<<BEGIN MEMORY1-" in call["stdin"] and "<<<BEGIN MEMORY2-" in call["stdin"]
        assert "Tokens expire after 15m." in call["stdin"]  # the older one, as data
        # idempotent: a second run asks no model
        assert engine.tidy() == [] and len(fake.calls()) == 1
    finally:
        engine.close()


@ANTHROPIC_SDK
def test_the_anthropic_backend_drafts_the_merge_with_a_forced_tool(server, project, tmp_path):
    from fakes import backend_engine
    from test_anthropic_backend import message

    server.replies = [(200, message(MERGED, name="record_merge"))]
    engine = seeded(backend_engine(project, tmp_path, "anthropic"))
    try:
        [pid] = engine.tidy()
        record, merged = write_of(engine, pid)
        assert merged.title == MERGED["title"] and "Drafted by anthropic" in record["reason"]
        (req,) = server.requests
        # the one tool, forced where the model family takes a forced tool (the sonnet of the default config does not)
        assert [t["name"] for t in req["body"]["tools"]] == ["record_merge"]
        assert req["body"]["tool_choice"] in (
            {"type": "tool", "name": "record_merge"},
            {"type": "auto"},
        )
        assert "<<<BEGIN MERGED-" in req["body"]["messages"][0]["content"]
    finally:
        engine.close()


@pytest.mark.parametrize(
    "reply, why",
    [
        ("fails", "Merged without a model"),
        (
            {
                **MERGED,
                "sections": {
                    **MERGED["sections"],
                    "Decision": "Use the key AKIAIOSFODNN7EXAMPLE for it.",
                },
            },
            "Merged without a model",
        ),
        ({**MERGED, "sections": {"Decision": "Only this."}}, "Merged without a model"),
    ],
)
def test_a_failing_model_keeps_the_structural_merge(fake, project, tmp_path, reply, why):
    from fakes import backend_engine
    from test_claude_cli import envelope

    if reply == "fails":
        fake.reply(envelope(is_error=True, result="API Error: 500 internal"), exit=1)
    else:
        fake.reply(envelope(structured_output=reply))
    engine = seeded(backend_engine(project, tmp_path, "claude-cli"))
    try:
        [pid] = engine.tidy()
        record, merged = write_of(engine, pid)
        assert (
            merged.title == NEW.title and "Server sessions in Redis were considered." in merged.body
        )
        assert why in record["reason"] and "AKIA" not in json.dumps(record)
    finally:
        engine.close()
