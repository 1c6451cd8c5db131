"""`--auto-approve` when things go wrong: a memory file that is not UTF-8, a damaged MEMORY.md,
staged triages it cannot read, drafts and saves that fail, a disk that fills up mid-run.

The exit status says the truth (0: everything that could be saved was, or there was nothing;
1: a draft or a save failed, or a staged triage cannot be read), one bad item never stops the
others, and whatever happens the files on disk stay whole and the next run finishes the work.
"""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path

import pytest
from conftest import run_cli
from fakes import Failing
from test_engine_processes import check_memory, memory_files

from memcurate.curator import headless
from memcurate.curator.candidates import staging
from memcurate.curator.candidates.incremental import capture
from memcurate.curator.cli import main
from memcurate.curator.engine import Engine
from memcurate.curator.memory import memfile, memory_md
from memcurate.curator.util import atomic
from memcurate.curator.util.assets import asset

DEMO = Path(asset(os.path.join("demo", "session.jsonl")))
DEMO_SESSION = b"5e55a1d0-de70-4c1a-9a5e-000000000001"
CATEGORIES = {"decision", "constraint", "runbook", "tech_debt", "preference", "session_summary"}


def setup(project: Path, tmp_path: Path) -> Path:
    memory = tmp_path / "memory"
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {memory}\ndrafting:\n  backoff_seconds: 0.0\n"
        # these sessions are reworded to make memories of their own: what is tested is the failures, not the gate
        # (nor the hold on offline cards: set here too, as a test that undoes its monkeypatches reads the real home)
        "auto_approve:\n  min_confidence: 0.0\n  offline_cards: true\n"
    )
    return memory


_WORDS = (
    "JWT PyJWT argon2 passlib tokens token sessions session Postgres SQLite trunk mobile summarizer refresh "
    "login dependencies dependency package packages commits commit tests test database network CI runners "
    "VPC secret environment cookies security team review email password hashes request requests service "
    "startup deploy docs emails account 401 routes projects OperationalError connection server internal db "
    "asking user first new add"
).split()
_WORD = re.compile(r"\b(" + "|".join(map(re.escape, _WORDS)) + r")\b")


def _reword(obj, n: int):
    """The words people and the assistant wrote, changed so that session `n` makes memories of its own."""
    if isinstance(obj, str):
        return _WORD.sub(lambda m: f"{m.group(1)[:3]}q{n}x", obj)
    if isinstance(obj, list):
        return [_reword(x, n) for x in obj]
    if isinstance(obj, dict):
        return {
            k: _reword(v, n) if k in ("content", "text", "input") else v for k, v in obj.items()
        }
    return obj


def stage(project: Path, tmp_path: Path, n: int, *, same: bool = False, replace: tuple = ()) -> str:
    """Stage session `n`: the demo session under its own id, its words changed (unless `same`) so that
    it makes six memories of its own, and `replace` (old, new) applied."""
    records = [json.loads(line) for line in DEMO.read_text().splitlines()]
    if not same:
        for r in records:
            if "message" in r:
                r["message"] = _reword(r["message"], n)
    raw = "".join(json.dumps(r) + "\n" for r in records).replace(
        DEMO_SESSION.decode(), f"5e55a1d0-de70-4c1a-9a5e-{n:012d}"
    )
    for old, new in replace:
        raw = raw.replace(old, new)
    path = tmp_path / "sessions" / f"{n}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(raw)
    engine = Engine(project)
    try:
        report = capture(engine.data, engine.cfg, str(path), event="backfill", summary=True)
    finally:
        engine.close()
    assert report["status"] == "staged"
    return report["triage"]


def run(project: Path, capsys, *extra: str) -> tuple[int, str, str]:
    """`memcurate --auto-approve` in this process, through the CLI's own entry point."""
    capsys.readouterr()
    code = main(["--auto-approve", "--project", str(project), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def states(project: Path) -> dict[str, dict[str, str]]:
    data = os.path.join(project, ".memcurate")
    return {
        tid: {c: r["state"] for c, r in staging.category_states(data, tid).items()}
        for tid in staging.triage_ids(data)
    }


# -- defect 7: one bad byte ---------------------------------------------------------------


def corrupt(path: Path) -> int:
    """Put one byte that is not UTF-8 into a memory file's body, the way a bad hand edit does."""
    data = bytearray(path.read_bytes())
    at = data.index(b"## Rationale") + len(b"## Rationale\n") + 3
    data[at] = 0xFF
    path.write_bytes(bytes(data))
    return at


def test_a_memory_file_that_is_not_utf8_blocks_only_the_item_that_touches_it(project, tmp_path):
    memory = setup(project, tmp_path)
    stage(project, tmp_path, 1, same=True)
    first = run_cli("--auto-approve", "--json", cwd=project)
    assert first.returncode == 0, first.stderr
    (bad,) = memory.glob("decision/*.md")
    at = corrupt(bad)
    damaged = bad.read_bytes()
    # Pending now: the same session again (its decision names the damaged file), and a new one.
    again = stage(project, tmp_path, 2, same=True)
    other = stage(project, tmp_path, 3)
    p = run_cli("--auto-approve", "--json", cwd=project)
    assert p.returncode == 0, p.stderr  # a candidate left for review is not a failure
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr
    summary = json.loads(p.stdout)
    assert not summary["failed"]
    (blocked,) = summary["blocked"]
    assert (blocked["triage"], blocked["category"]) == (again, "decision")
    (issue,) = blocked["issues"]
    assert f"decision/{bad.name}" in issue and f"byte {at}" in issue and "fix or delete" in issue
    # Everything else was saved: the other categories of that triage, and the whole new triage.
    assert states(project)[other] == {c: "saved" for c in CATEGORIES}
    assert states(project)[again] == {**{c: "saved" for c in CATEGORIES}, "decision": "ready"}
    assert {c["category"] for c in summary["created"] if c["triage"] == other} == CATEGORIES
    assert bad.read_bytes() == damaged  # never rewritten
    text = run_cli("--auto-approve", cwd=project)
    assert text.returncode == 0 and f"byte {at}" in text.stdout


def test_an_update_whose_target_turned_to_bad_bytes_is_blocked_naming_it(project, tmp_path):
    """The file an UPDATE was decided against is damaged before the save: blocked, never a traceback."""
    memory = setup(project, tmp_path)
    stage(project, tmp_path, 1, same=True)
    assert run_cli("--auto-approve", cwd=project).returncode == 0
    engine = Engine(project)
    try:
        # the same decision from a second session, with more said: an UPDATE of the saved memory
        tid = stage(
            project,
            tmp_path,
            2,
            same=True,
            replace=(("on its own", "on its own, and tokens rotate weekly"),),
        )
        engine.process(tid)
        decision = engine.review(tid, "decision")["decision"]
    finally:
        engine.close()
    assert decision["action"] == "update"
    target = Path(decision["target_path"])
    at = corrupt(target)
    p = run_cli("--auto-approve", "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    (blocked,) = summary["blocked"]
    assert blocked["category"] == "decision"
    assert any(f"byte {at}" in i and target.name in i for i in blocked["issues"]), blocked
    assert target.parent == memory / "decision"


def test_a_memory_md_that_is_not_utf8_refuses_the_saves_that_need_it_and_drafting_goes_on(
    project, tmp_path
):
    memory = setup(project, tmp_path)
    memory.mkdir()
    damaged = b"# Claude's notes\n- caf\xe9 au lait\n"
    (memory / "MEMORY.md").write_bytes(damaged)
    tid = stage(project, tmp_path, 1)
    p = run_cli("--auto-approve", "--json", cwd=project)
    assert p.returncode == 1, p.stderr  # every save failed: that is for the user to act on
    assert "Traceback" not in p.stderr and len(p.stderr.splitlines()) == 1
    summary = json.loads(p.stdout)
    assert not summary["created"]
    assert {f["category"] for f in summary["failed"]} == CATEGORIES
    assert all("MEMORY.md" in f["error"] and "byte 22" in f["error"] for f in summary["failed"])
    assert (memory / "MEMORY.md").read_bytes() == damaged
    assert not memory_files(memory)
    assert set(states(project)[tid].values()) == {
        "ready"
    }  # drafted and verified: waiting for the fix
    (memory / "MEMORY.md").write_bytes(damaged.replace(b"\xe9", b"e"))
    p = run_cli("--auto-approve", "--json", cwd=project)
    assert p.returncode == 0 and len(json.loads(p.stdout)["created"]) == 6


# -- defect 8: exit status, unreadable triages, failed drafts -----------------------------------


def test_every_save_failing_exits_1(project, tmp_path, capsys, monkeypatch):
    memory = setup(project, tmp_path)
    stage(project, tmp_path, 1)
    real = atomic._temp_file

    def refuse_memory_root(path, data, durable, mode=None):
        if str(path).startswith(str(memory)):
            raise OSError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real(path, data, durable, mode)

    monkeypatch.setattr(atomic, "_temp_file", refuse_memory_root)
    code, out, err = run(project, capsys, "--json")
    assert code == 1
    assert "memcurate:" in err and len(err.splitlines()) == 1
    summary = json.loads(out)
    assert not summary["created"] and not summary["blocked"]
    # a memory folder that refuses writes stops the run (issue 26): every candidate left for the next run
    assert not summary["failed"] and {x["category"] for x in summary["left"]} == CATEGORIES
    assert "Permission denied" in summary["stopped"] and "read-only" in summary["stopped"]
    code, out, err = run(project, capsys)  # the text summary, same status
    assert code == 1 and "Permission denied" in out


def test_a_run_collects_cycles_rarely_and_gives_the_collector_back(project, tmp_path, capsys):
    """A save makes many short-lived objects and no cycles worth a collection; the interpreter's own
    settings come back after the run, whether it ends well or not."""
    import gc

    setup(project, tmp_path)
    stage(project, tmp_path, 1)
    before = gc.get_threshold()
    during = []
    real = headless.approve_all

    def spy(*a, **k):
        during.append(gc.get_threshold())
        return real(*a, **k)

    def broken(*a, **k):
        raise RuntimeError("a bug")

    try:
        gc.set_threshold(555, 7, 7)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(headless, "approve_all", spy)
            assert run(project, capsys)[0] == 0
        assert during and during[0][0] >= 10_000 and gc.get_threshold() == (555, 7, 7)
        stage(project, tmp_path, 2)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(headless, "approve_all", broken)
            with pytest.raises(RuntimeError):
                headless.auto_approve(Engine(str(project)))
        assert gc.get_threshold() == (555, 7, 7)
    finally:
        gc.set_threshold(*before)


def test_a_failed_draft_exits_1_and_the_rest_is_saved(project, tmp_path, capsys, monkeypatch):
    import memcurate.curator.drafting as drafting

    setup(project, tmp_path)
    stage(project, tmp_path, 1)
    monkeypatch.setattr(drafting, "get_drafter", lambda cfg: Failing({"runbook"}))
    code, out, _ = run(project, capsys, "--json")
    summary = json.loads(out)
    assert code == 1
    assert [f["category"] for f in summary["failed"]] == ["runbook"]
    assert len(summary["created"]) == 5


def test_nothing_to_do_and_only_blocked_candidates_exit_0(project, tmp_path, capsys):
    setup(project, tmp_path)
    assert run(project, capsys)[0] == 0  # nothing staged
    tid = stage(project, tmp_path, 1)
    engine = Engine(project)
    try:
        engine.process(tid)
        engine.edit(
            tid,
            "decision",
            engine.review(tid, "decision")["text"].replace("## Rationale", "## Thoughts"),
        )
    finally:
        engine.close()
    code, out, _ = run(project, capsys, "--json")
    summary = json.loads(out)
    assert code == 0 and [b["category"] for b in summary["blocked"]] == ["decision"]
    assert len(summary["created"]) == 5


def test_every_unreadable_staged_triage_is_named_and_the_rest_is_saved(project, tmp_path):
    setup(project, tmp_path)
    good = stage(project, tmp_path, 1)
    root = project / ".memcurate" / "staging"
    (root / "20250101T000000Z-garbage0").mkdir()
    (root / "20250101T000000Z-garbage0" / "triage.json").write_bytes(b"{not json\xff")
    (root / "20250101T000001Z-emptydir").mkdir()
    (root / "20250101T000002Z-notatriage").mkdir()
    (root / "20250101T000002Z-notatriage" / "triage.json").write_text('{"id": "something else"}')
    names = {
        "20250101T000000Z-garbage0",
        "20250101T000001Z-emptydir",
        "20250101T000002Z-notatriage",
    }
    p = run_cli("--auto-approve", "--json", cwd=project)
    assert p.returncode == 1, p.stderr
    summary = json.loads(p.stdout)
    assert {u["triage"] for u in summary["unreadable"]} == names
    reasons = {u["triage"]: u["error"] for u in summary["unreadable"]}
    assert "missing" in reasons["20250101T000001Z-emptydir"]
    assert "unreadable" in reasons["20250101T000000Z-garbage0"]
    assert "not a memcurate triage" in reasons["20250101T000002Z-notatriage"]
    assert {c["triage"] for c in summary["created"]} == {good} and len(summary["created"]) == 6
    assert "3 staged triage" in p.stderr
    text = run_cli("--auto-approve", cwd=project)
    assert text.returncode == 1
    for name in names:
        assert name in text.stdout
    assert "unreadable" in text.stdout and "missing" in text.stdout


# -- defect 8: a disk that fills up mid-run --------------------------------------------------


class FullDisk:
    """atomic._temp_file, where every file written whole is made, failing with ENOSPC from the `after`+1-th write
    into the memory root on (and for every write anywhere once the disk is full)."""

    def __init__(self, memory: Path, after: int) -> None:
        self.memory, self.after = str(memory), after
        self.real = atomic._temp_file
        self.ok: list[str] = []
        self.refused: list[str] = []

    def __call__(self, path, data, durable, mode=None):
        path = os.fspath(path)
        into_root = path.startswith(self.memory + os.sep)
        if self.refused or (
            into_root and sum(p.startswith(self.memory) for p in self.ok) >= self.after
        ):
            self.refused.append(path)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
        self.ok.append(path)
        return self.real(path, data, durable, mode)


def outcome(memory: Path) -> tuple[set[str], set[tuple[str, str]]]:
    """The memory files (relative paths) and MEMORY.md's entries (category, id)."""
    files = {str(p.relative_to(memory)) for p in memory_files(memory)}
    sections = memory_md.parse((memory / "MEMORY.md").read_text()).sections
    return files, {(e.category, e.id) for s in sections.values() for e in s.entries}


@pytest.mark.parametrize(
    "per_write, after",
    [(1, 0), (1, 3), (1, 6), (1, 7), (1, 9), (1, 13), (64, 0), (64, 6), (64, 9), (64, 12)],
)
def test_a_disk_that_fills_up_mid_run(project, tmp_path, capsys, monkeypatch, per_write, after):
    """Two triages of six new memories each. A MEMORY.md write a triage (`per_write` 1): the first one
    processed writes its memory files and MEMORY.md as writes 1-7 into the memory root, the second as
    8-14. One MEMORY.md write for both (the default): their memory files are writes 1-12, MEMORY.md 13.
    Whatever write the disk fills at: the saves before it are listed, the one that failed says why,
    nothing more is tried, nothing on disk is half-written, every candidate is accounted for, and the
    next run finishes the work."""
    monkeypatch.setattr(headless, "TRIAGES_PER_WRITE", per_write)
    memory = setup(project, tmp_path)
    tids = [stage(project, tmp_path, 1, same=True), stage(project, tmp_path, 2)]
    disk = FullDisk(memory, after)
    monkeypatch.setattr(atomic, "_temp_file", disk)
    code, out, err = run(project, capsys, "--json")
    assert code == 1 and "Traceback" not in err and "No space left on device" in err
    summary = json.loads(out)
    # stopped at the first refused write, rather than failing on and on
    assert len(disk.refused) == 1
    assert "No space left on device" in summary["stopped"]
    failed = summary["failed"]
    assert failed and all("No space left on device" in f["error"] for f in failed)
    # MEMORY.md's write fails the memories written for it
    writing_memory_md = {6: 6, 13: 6} if per_write == 1 else {12: 12}
    assert len(failed) == writing_memory_md.get(after, 1)
    saved = summary["created"] + summary["updated"]
    assert len(saved) == (6 if per_write == 1 and after >= 7 else 0)
    # every candidate accounted for, once: saved, failed, or left for the next run
    pairs = [(c["triage"], c["category"]) for c in saved + failed] + [
        (x["triage"], c)
        for x in summary["left"]
        for c in ([x["category"]] if x["category"] else CATEGORIES)
    ]
    assert sorted(pairs) == sorted((t, c) for t in tids for c in CATEGORIES)
    # what the summary calls saved is saved: on disk, listed in MEMORY.md, its state `saved`
    if saved:
        files, listed = outcome(memory)
        for c in saved:
            doc = memfile.parse(Path(c["path"]).read_text())
            assert (doc.category, doc.id) in listed
            assert states(project)[c["triage"]][c["category"]] == "saved"
    # nothing half-written: no temp file left, every memory file parses, MEMORY.md parses
    assert not [p for p in memory.rglob("*") if p.name.endswith(".tmp")]
    for path in memory_files(memory):
        assert memfile.problems(memfile.parse(path.read_text()), file_name=path.name) == []
    if (memory / "MEMORY.md").exists():
        memory_md.parse((memory / "MEMORY.md").read_text())
    # the disk has room again: the next run completes the rest, as if nothing had happened
    monkeypatch.undo()
    code, out, _ = run(project, capsys, "--json")
    assert code == 0, out
    assert all(s == "saved" for tid in tids for s in states(project)[tid].values())
    check_memory(memory)
    files, listed = outcome(memory)
    assert len(files) == len(listed) == 12


def test_the_text_summary_of_a_full_disk_lists_the_saved_the_failed_and_the_stop(
    project, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(
        headless, "TRIAGES_PER_WRITE", 1
    )  # the first triage saved before the disk fills
    memory = setup(project, tmp_path)
    stage(project, tmp_path, 1, same=True)
    stage(project, tmp_path, 2)
    stage(project, tmp_path, 3)
    monkeypatch.setattr(atomic, "_temp_file", FullDisk(memory, 9))
    code, out, err = run(project, capsys)
    assert code == 1 and len(err.splitlines()) == 1
    lines = out.splitlines()
    assert "created   6" in lines
    assert "failed    1  (retry in the TUI)" in lines
    assert any(ln.startswith("left ") for ln in lines)
    assert any(
        ln.startswith("stopped ") and "No space left on device" in ln and "next run" in ln
        for ln in lines
    )


def test_a_write_that_really_fails_names_its_file_and_leaves_nothing_behind(tmp_path):
    """A real failed write, no root needed: a file size limit (RLIMIT_FSIZE) makes os.write fail with
    EFBIG, which names no file. write_bytes names the target and removes its temp file; the old
    version stays whole."""
    import subprocess
    import sys

    target = tmp_path / "MEMORY.md"
    target.write_text("old\n")
    code = f"""
import resource, signal, sys
from memcurate.curator.util import atomic
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
try:
    atomic.write_bytes({str(target)!r}, b"x" * 100000)
except OSError as e:
    print(e.errno, e.filename, atomic.failure(e))
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    number, name, said = p.stdout.strip().split(" ", 2)
    assert int(number) == errno.EFBIG and name == str(target)
    assert said == f"{target}: {os.strerror(errno.EFBIG)}"
    assert target.read_text() == "old\n"
    assert [q.name for q in tmp_path.iterdir()] == ["MEMORY.md"]


def test_verify_blocks_a_file_in_the_way_that_is_no_memory_for_any_action():
    from memcurate.curator.verify.checks import verify

    text = "not even a memory"  # the target's issue does not depend on the text
    target = {
        "exists": True,
        "hash_matches": False,
        "path": "/m/decision/x.md",
        "where": "decision/x.md",
        "unreadable": "is not UTF-8 text (byte 7)",
    }
    for action in ("create", "update", "delete"):
        issues = [
            i
            for i in verify(text, category="decision", action=action, target=target)
            if i.code == "unreadable"
        ]
        assert [(i.severity, i.where, i.message) for i in issues] == [
            ("BLOCK", "decision/x.md", "is not UTF-8 text (byte 7): fix or delete the file")
        ]
