"""No secret at rest, nothing readable by others (issue 22): after each flow every file and folder under
`.memcurate/` is swept for the secrets the flow saw (none may be there in clear) and for its mode (0600 a
file, 0700 a folder, with the umask a person usually has, 022). The flows: the real hook capturing a
session that holds an AWS key and a GitHub token, the drafting that follows, a person's edit in the TUI
holding a token, library deletions of memories holding secrets, the trash forgetting, and what `show`,
`list` and a decision's diff print of a secret a file holds."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest
from conftest import claude_transcripts, run_cli, run_hook
from scenarios import engine_factory
from synthetic import Transcript, text

from memcurate.curator import config
from memcurate.curator.candidates import staging
from memcurate.curator.candidates.incremental import capture
from memcurate.curator.config import ConfigError
from memcurate.curator.library import edits
from memcurate.curator.memory import memfile
from memcurate.curator.proposals import actions as proposal_actions
from memcurate.curator.proposals import store
from memcurate.curator.proposals.store import ProposalError
from memcurate.curator.review.actions import Blocked
from memcurate.curator.util.assets import asset
from memcurate.curator.util.paths import data_dir
from memcurate.curator.util.stamps import content_hash
from memcurate.curator.verify.decide import Existing, decide

AWS = "AKIAZ3MXQ7RT4PLW8KJD"
GHP = "ghp_Q9w8E7r6T5y4U3i2O1p0AsDfGhJkLzXcVbNm"
SECRETS = (AWS, GHP)
DEMO = Path(asset(os.path.join("demo", "session.jsonl")))
STAMP = "2026-11-22T10:04:00Z"
DAY = 86400


@pytest.fixture(autouse=True)
def umask_022():
    """The umask most people have: a file made without an explicit mode would be 0644, a folder 0755."""
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.fixture
def memory(tmp_path) -> Path:
    return tmp_path / "memory"


def offline(project: Path, memory: Path, extra: str = "") -> None:
    (project / ".claude").mkdir(parents=True, exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {memory}\n{extra}"
    )


def sweep(project: Path, secrets=SECRETS) -> int:
    """Every file and folder under the data dir: no secret in clear, files 0600, folders 0700 (a link
    counts as neither, and none is expected). Returns how many files were looked at."""
    data = project / ".memcurate"
    assert stat.S_IMODE(data.lstat().st_mode) == 0o700, oct(data.lstat().st_mode)
    files = 0
    for folder, dirs, names in os.walk(data):
        for d in dirs:
            st = os.lstat(os.path.join(folder, d))
            assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700, (
                folder,
                d,
                oct(st.st_mode),
            )
        for n in names:
            path = os.path.join(folder, n)
            st = os.lstat(path)
            assert stat.S_ISREG(st.st_mode), path
            assert stat.S_IMODE(st.st_mode) == 0o600, (path, oct(st.st_mode))
            data_bytes = Path(path).read_bytes()
            for s in secrets:
                assert s.encode() not in data_bytes, f"{s} in clear in {path}"
            files += 1
    return files


def secret_session() -> Transcript:
    """A session where a person pastes credentials while deciding something durable."""
    return (
        Transcript()
        .user(
            f"We decided to go with postgres because it is simpler to operate. The deploy key is {AWS} "
            f"and the CI token is {GHP}, use them for the release."
        )
        .assistant(
            text(f"Understood: postgres it is; I will use {AWS} for the deploy and {GHP} for CI.")
        )
        .user("Also we decided to always tag releases from main, because hotfix branches drift.")
        .assistant(text("Noted: releases are tagged from main."))
    )


def hook_stop(project: Path, transcript: Path) -> None:
    payload = {
        "session_id": "0b5e6a34-1111-4222-8333-444455556666",
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": "Stop",
    }
    p = run_hook(payload, cwd=project)
    assert p.returncode == 0 and p.stderr == b"", p.stderr


# -- the hook, and the drafting after it --------------------------------------------------------


def test_the_hook_and_drafting_leave_no_secret_and_nothing_readable_by_others(project, memory):
    offline(project, memory)
    path = secret_session().write(claude_transcripts() / "secrets.jsonl")
    hook_stop(project, path)
    (tid,) = staging.triage_ids(project / ".memcurate")
    assert sweep(project) >= 3  # .gitignore, the triage, the offsets, the log...
    # the offline drafter: drafts, reviews, the index
    listed = run_cli("list", "--draft", "--json", cwd=project)
    assert listed.returncode == 0, listed.stderr
    assert [i for i in json.loads(listed.stdout)["items"] if i["state"] == "ready"]
    assert not any(s in listed.stdout for s in SECRETS)
    assert (project / ".memcurate" / "index.sqlite").exists() and list(
        (project / ".memcurate").rglob("*.md")
    )
    sweep(project)


def test_a_data_dir_an_older_memcurate_left_readable_is_tightened_and_no_link_is_followed(
    project, memory, tmp_path
):
    offline(project, memory)
    data = project / ".memcurate"
    (data / "staging" / "20250101T000000Z-old" / "drafts").mkdir(parents=True, mode=0o755)
    for p in (
        data,
        data / "staging",
        data / "staging" / "20250101T000000Z-old",
        data / "staging" / "20250101T000000Z-old" / "drafts",
    ):
        p.chmod(0o755)
    (data / ".gitignore").write_text("*\n")
    (data / "staging" / "20250101T000000Z-old" / "drafts" / "decision.md").write_text(
        "old session text\n"
    )
    (data / "log").mkdir(mode=0o755)
    (data / "log" / "memcurate.log").write_text("an old line\n")
    outside = tmp_path / "someone-elses.txt"
    outside.write_text("not memcurate's\n")
    outside.chmod(0o644)
    (data / "planted").symlink_to(outside)  # Claude can write here: a link must not be followed
    assert stat.S_IMODE((data / ".gitignore").stat().st_mode) == 0o644
    hook_stop(project, secret_session().write(claude_transcripts() / "secrets.jsonl"))
    (data / "planted").unlink()
    sweep(project)
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644


# -- a person's edit -------------------------------------------------------------------------


def stage_demo(project: Path, memory: Path) -> str:
    engine = engine_factory(project, memory)()
    try:
        report = capture(engine.data, engine.cfg, str(DEMO), event="backfill", summary=True)
        assert set(engine.process(report["triage"]).values()) == {"ready"}
        return report["triage"]
    finally:
        engine.close()


def test_an_edit_saved_again_with_the_marker_stays_blocked_until_the_person_writes_what_is_meant(
    project, memory
):
    tid = stage_demo(project, memory)
    engine = engine_factory(project, memory)()
    try:
        text = engine.review(tid, "decision")["text"]
        record = engine.edit(tid, "decision", text.rstrip() + f"\nDeploy with {AWS}.\n")
        assert record["blocked"]
        staged = engine.review(tid, "decision")["text"]
        assert AWS not in staged and "[REDACTED:aws-access-key]" in staged
        assert engine.edit(tid, "decision", staged)[
            "blocked"
        ]  # opened and saved unchanged: still blocked
        with pytest.raises(Blocked):
            engine.approve(tid, "decision")
        assert not list(memory.glob("*/*.md"))
        clean = staged.replace("[REDACTED:aws-access-key]", "the key from the vault")
        assert not engine.edit(tid, "decision", clean)["blocked"]
    finally:
        engine.close()
    sweep(project)


def test_a_proposal_edit_holding_a_secret_is_refused_and_nothing_is_stored(project, memory):
    engine = lib_engine(project, memory)
    try:
        ops = [
            {"op": "write", "ref": "decision/x", "base_hash": None, "text": "old\n"},
            {"op": "add_line", "ref": "decision/x"},
        ]
        pid = engine.stage_proposal("adopt", "Adopt", "", ops, source="library")
        with pytest.raises(ProposalError, match="a secret is present"):
            proposal_actions.edit(engine, pid, f"old\nThe token is {GHP}\n")
        assert store.ops_of(store.find(engine.data, pid))[0]["text"] == "old\n"
    finally:
        engine.close()
    sweep(project)


# -- the trash ------------------------------------------------------------------------------


def lib_engine(project: Path, memory: Path, extra: str = ""):
    from memcurate.curator.engine import Engine

    offline(project, memory, extra)
    memory.mkdir(parents=True, exist_ok=True)
    return Engine(project, clock=lambda: STAMP)


def secret_memory(engine) -> str:
    doc = memfile.MemoryDoc(
        id="deploy-key",
        category="decision",
        title="Deploy key",
        description="How we deploy",
        tags=["deploy"],
        created=STAMP,
        updated=STAMP,
        sources=[{"session": "s1"}],
        body=f"## Decision\nDeploy with the key {AWS} from the box.\n\n## Rationale\nOne box.",
    )
    path = engine.store.create(doc)
    return content_hash(Path(path).read_bytes())


def test_a_deleted_memory_and_a_deleted_claude_file_reach_the_trash_redacted(project, memory):
    engine = lib_engine(project, memory)
    try:
        h = secret_memory(engine)
        claude = memory / "ci-notes.md"
        claude.write_bytes(f"# CI\nThe CI token is {GHP}\nRun make ci.\n".encode())
        done = edits.delete(engine, "decision/deploy-key", h)
        done2 = edits.delete(engine, "claude/ci-notes.md", content_hash(claude.read_bytes()))
        assert not (memory / "decision" / "deploy-key.md").exists() and not claude.exists()
        (mine,), (claudes,) = done.trash, done2.trash
        assert (
            "Deploy with the key [REDACTED:aws-access-key] from the box" in Path(mine).read_text()
        )
        assert (
            Path(claudes).read_text()
            == "# CI\nThe CI token is [REDACTED:github-token]\nRun make ci.\n"
        )
    finally:
        engine.close()
    sweep(project)


def test_the_trash_forgets_copies_older_than_trash_days_when_a_copy_is_put_there_and_on_check(
    project, memory
):
    """And a copy an older memcurate kept whole is redacted when it is kept."""
    engine = lib_engine(project, memory, "library:\n  trash_days: 2\n")
    trash = Path(engine.data) / "trash"
    try:
        trash.mkdir(mode=0o700)  # as memcurate made them
        old, young = (
            trash / "20250101T000000Z-decision__old.md",
            trash / "20250101T000000Z-decision__young.md",
        )
        for p, days in ((old, 3), (young, 1)):
            p.write_text(f"gone memory, deployed with {AWS}\n")  # kept whole by an older memcurate
            p.chmod(0o600)
            os.utime(p, (time.time() - days * DAY, time.time() - days * DAY))
        h = secret_memory(engine)
        (copy,) = edits.delete(engine, "decision/deploy-key", h).trash
        assert sorted(trash.iterdir()) == sorted([young, Path(copy)])  # the 3-day-old copy went
        # the young one kept,
        assert young.read_text() == "gone memory, deployed with [REDACTED:aws-access-key]\n"
        assert young.stat().st_mtime < time.time() - DAY / 2  # redacted, its age unchanged
        os.utime(young, (time.time() - 3 * DAY, time.time() - 3 * DAY))
        engine.check()
        assert list(trash.iterdir()) == [Path(copy)]
    finally:
        engine.close()
    sweep(project)


def test_with_trash_days_0_every_file_of_a_change_set_is_in_the_trash_before_it_is_removed(
    project, memory
):
    """Forgetting never takes the copy of a file the same change removes: Claude's bytes stay somewhere."""
    engine = lib_engine(project, memory, "library:\n  trash_days: 0\n")
    try:
        (memory / "a.md").write_text("# A\nnotes a\n")
        (memory / "b.md").write_text("# B\nnotes b\n")
        earlier = Path(engine.data) / "trash" / "20250101T000000Z-old.md"
        earlier.parent.mkdir(parents=True, exist_ok=True)
        earlier.write_text("older\n")
        os.utime(earlier, (time.time() - 60, time.time() - 60))
        done = engine.apply_changes(
            [
                {
                    "op": "delete",
                    "ref": f"claude/{n}",
                    "base_hash": content_hash((memory / n).read_bytes()),
                }
                for n in ("a.md", "b.md")
            ]
        )
        assert sorted(Path(p).read_text() for p in done.trash) == [
            "# A\nnotes a\n",
            "# B\nnotes b\n",
        ]
        assert not earlier.exists() and all(Path(p).exists() for p in done.trash)
    finally:
        engine.close()


@pytest.mark.parametrize("value", ["-1", "thirty", "1.5"])
def test_trash_days_must_be_a_whole_number_of_days(project, memory, value):
    offline(project, memory, f"library:\n  trash_days: {value}\n")
    with pytest.raises(ConfigError, match="library.trash_days"):
        config.load(project)


# -- what is shown and printed ------------------------------------------------------------------


def test_show_list_and_status_mask_a_secret_planted_in_staging(project, memory):
    """Staging is Claude-writable: a secret put in a staged draft or its state line is never printed."""
    tid = stage_demo(project, memory)
    files = staging.candidate_files(data_dir(project), tid, "decision")
    Path(files.file).write_text(Path(files.file).read_text() + f"\nThe token is {GHP}\n")
    with open(Path(files.file).parent.parent / "state.log", "a") as f:
        rec = staging.category_state(data_dir(project), tid, "decision")
        f.write(
            json.dumps({**{k: v for k, v in rec.items() if k != "history"}, "title": f"Key {AWS}"})
            + "\n"
        )
    for args in (
        ("show", f"{tid}/decision"),
        ("show", f"{tid}/decision", "--json"),
        ("list",),
        ("list", "--json"),
        ("status",),
        ("status", "--json"),
    ):
        out = run_cli(*args, cwd=project)
        assert out.returncode == 0, out.stderr
        assert not any(s in out.stdout + out.stderr for s in SECRETS), args
        assert "[REDACTED:" in out.stdout, args


def test_an_update_decided_against_a_memory_holding_a_secret_shows_no_secret_in_its_diff():
    def doc(id, body):
        return memfile.MemoryDoc(
            id=id,
            category="decision",
            title="Use JWT for API authentication",
            description="Use JWT for API authentication",
            tags=["auth", "api"],
            created=STAMP,
            updated=STAMP,
            body=body,
        )

    old = doc(
        "jwt-auth",
        f"## Decision\nUse JWT tokens for the public API.\n\n## Rationale\nSigned with {AWS}.",
    )
    new = doc(
        "use-jwt",
        "## Decision\nUse JWT tokens for the public API.\n\n## Rationale\nSigned with a key. "
        "Tokens expire after one hour.",
    )
    d = decide(
        new, [Existing(old.id, "/m/decision/jwt-auth.md", "h", old, memfile.render(old))], now=STAMP
    )
    assert d.action == "update" and d.diff
    assert AWS not in d.diff and "[REDACTED:aws-access-key]" in d.diff
