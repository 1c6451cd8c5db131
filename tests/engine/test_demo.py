"""The bundled demo session (assets/demo/session.jsonl) and `memcurate demo`.

The demo transcript is synthetic but written in Claude Code's real format, and
it is meant to show every category: these tests keep it that way, and check
that the demo stays inside its throwaway folder and never leaks the fake
secrets it contains.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from conftest import run_cli

from memcurate.curator import config
from memcurate.curator.candidates import staging
from memcurate.curator.candidates.incremental import capture
from memcurate.curator.capture.transcript import TranscriptReader
from memcurate.curator.categories import NAMES
from memcurate.curator.demo import DEMO_SESSION, DEMO_TRANSCRIPT
from memcurate.curator.util.assets import asset
from memcurate.curator.util.paths import data_dir

DEMO = Path(asset(DEMO_TRANSCRIPT))

# The fake secrets the demo user pastes "by mistake": whole, and their distinctive cores.
SECRETS = (
    "sk-ant-api03-DEMOfakeKEYdoNotUse7Qm2Lp9Rt4Vw8Yz1Bc5Df3Gh6",
    "DEMOfakeKEYdoNotUse7Qm2Lp9Rt4Vw8Yz1Bc5Df3Gh6",
    "s3cretpass",
)
# Text that sits right next to the secrets: when it was captured, redaction must have happened.
SECRET_NEIGHBOURS = ("SUMMARIZER_API_KEY=", "postgres://app:")

# For each text category, a phrase its snippets must contain: the evidence a reviewer would point at.
EVIDENCE = {
    "decision": "Let's go with JWT",
    "constraint": "no network access",
    "runbook": "root cause",
    "tech_debt": "For now clients just log in again",
    "preference": "please don't add new dependencies",
}


def records() -> list[dict]:
    return [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()]


# -- the transcript ------------------------------------------------------------


def test_every_line_is_a_record_the_reader_accepts():
    reader = TranscriptReader(DEMO)
    entries = list(reader)
    stats = reader.stats
    assert stats.bad == 0, stats.bad_lines
    assert stats.end == DEMO.stat().st_size
    assert 60 <= stats.lines <= 120
    assert all(isinstance(r, dict) for r in records())
    assert stats.records["user"] > 0 and stats.records["assistant"] > 0
    for rtype in ("system", "file-history-snapshot"):
        assert stats.records[rtype] > 0, f"no {rtype} bookkeeping records"
    for kind in (
        "user",
        "assistant",
        "tool_result",
        "meta",
        "command",
        "command_output",
        "bookkeeping",
    ):
        assert stats.entries[kind] > 0, f"no {kind} entries"
    assert stats.user_turns >= 10
    assert stats.session_ids == {DEMO_SESSION}
    assert entries[-1].end == stats.end


def test_the_records_have_claude_codes_shapes():
    recs = records()
    convo = [r for r in recs if r["type"] in ("user", "assistant", "system")]
    for r in convo:
        assert {
            "parentUuid",
            "isSidechain",
            "userType",
            "cwd",
            "sessionId",
            "version",
            "gitBranch",
            "uuid",
            "timestamp",
        } <= r.keys()
        assert (
            r["sessionId"] == DEMO_SESSION
            and r["cwd"] == "/home/dev/acme-api"
            and r["version"] == "2.1.100"
        )
        assert r["timestamp"].startswith("2026-11-20T")
    # uuids are unique, and every parent is an earlier record
    seen: set[str] = set()
    for r in convo:
        assert r["uuid"] not in seen
        assert r["parentUuid"] is None or r["parentUuid"] in seen
        seen.add(r["uuid"])

    # every assistant block is its own record; blocks of one reply share message.id and requestId
    blocks: Counter = Counter()
    requests: dict[str, set] = {}
    tool_uses: dict[str, str] = {}
    for r in recs:
        if r["type"] == "assistant":
            content = r["message"]["content"]
            assert len(content) == 1
            blocks[content[0]["type"]] += 1
            requests.setdefault(r["message"]["id"], set()).add(r["requestId"])
            if content[0]["type"] == "tool_use":
                tool_uses[content[0]["id"]] = content[0]["name"]
    assert blocks["thinking"] >= 1 and blocks["text"] >= 1 and blocks["tool_use"] >= 15
    assert all(len(v) == 1 for v in requests.values())
    assert any(
        n > 1
        for n in Counter(r["message"]["id"] for r in recs if r["type"] == "assistant").values()
    )

    # every tool_use has one tool_result, with a toolUseResult sibling
    results = [
        (b, r)
        for r in recs
        if r["type"] == "user" and isinstance(r["message"]["content"], list)
        for b in r["message"]["content"]
        if b["type"] == "tool_result"
    ]
    assert sorted(b["tool_use_id"] for b, _ in results) == sorted(tool_uses)
    assert all("toolUseResult" in r for _, r in results)
    assert any("<system-reminder>" in b["content"] for b, _ in results)

    # a failing Bash run, and a later successful one
    bash = [
        (b.get("is_error") is True) for b, _ in results if tool_uses[b["tool_use_id"]] == "Bash"
    ]
    assert True in bash and False in bash[bash.index(True) + 1 :]

    # an isMeta caveat, a slash command, and the bookkeeping Claude Code writes
    assert any(r.get("isMeta") for r in recs if r["type"] == "user")
    assert any(
        isinstance(r["message"]["content"], str)
        and r["message"]["content"].startswith("<command-name>/")
        for r in recs
        if r["type"] == "user"
    )
    assert any(r["type"] == "file-history-snapshot" and r["isSnapshotUpdate"] for r in recs)


def test_the_fake_secrets_are_in_the_transcript():
    text = DEMO.read_text(encoding="utf-8")
    for secret in SECRETS:
        assert secret in text  # otherwise the redaction test below proves nothing


# -- triage of the whole file -------------------------------------------------------


def test_triaging_the_whole_file_triggers_every_category(project):
    data = data_dir(project)
    cfg = config.load(project, data)
    report = capture(data, cfg, str(DEMO), event="backfill", summary=True)
    assert report["status"] == "staged"
    scores = {c["category"]: c for c in report["categories"]}
    missing = [n for n in NAMES if not scores[n]["triggered"]]
    assert not missing, {n: scores[n]["score"] for n in NAMES}

    doc = staging.load_triage(data, report["triage"])
    assert doc["source"]["session"] == DEMO_SESSION
    cats = doc["categories"]
    for name, phrase in EVIDENCE.items():
        texts = [s["text"] for s in cats[name]["snippets"]]
        assert any(phrase in t for t in texts), (name, texts)
    runbook = cats["runbook"]
    assert runbook["signals"]["errors"] >= 1 and runbook["signals"]["fixed"] >= 1
    summary = cats["session_summary"]["signals"]
    assert (
        summary["tool_uses"] >= 15
        and summary["distinct_tools"] >= 4
        and summary["user_turns"] >= 10
    )


# -- memcurate demo ---------------------------------------------------------------


def _under(path: str, root: str) -> bool:
    path, root = os.path.realpath(path), os.path.realpath(root)
    return os.path.commonpath([path, root]) == root and path != root


@pytest.fixture
def demo(tmp_path, isolated_home):
    """Run `memcurate demo --json`; yield its document; remove its folder afterwards."""
    before = set(os.listdir(tempfile.gettempdir()))
    r = run_cli("demo", "--json", cwd=tmp_path)
    doc = None
    try:
        assert r.returncode == 0, r.stderr
        assert r.stderr == ""
        doc = json.loads(r.stdout)  # exactly one JSON document
        yield doc, before
    finally:
        root = doc.get("root") if isinstance(doc, dict) else None
        if root and _under(root, tempfile.gettempdir()):
            shutil.rmtree(root, ignore_errors=True)


def test_demo_stays_in_its_own_folder_and_shows_every_category(demo, isolated_home):
    doc, before = demo
    root = doc["root"]
    tmp = tempfile.gettempdir()
    assert os.path.dirname(os.path.realpath(root)) == os.path.realpath(tmp)
    assert os.path.basename(root) not in before and os.path.isdir(root)
    for key in ("project", "data_dir", "memory_root", "claude_config_dir", "transcript"):
        assert _under(doc[key], root), (key, doc[key])

    data = doc["data_dir"]
    staged = set()
    for tid in staging.triage_ids(data):
        cats = staging.load_triage(data, tid)["categories"]
        staged |= {n for n, c in cats.items() if c["triggered"]}
    assert staged == set(NAMES)
    assert {n for t in doc["triages"] for n in t["categories"]} == set(NAMES)
    assert len(doc["triages"]) >= 3  # the session arrives in parts, as Claude Code writes it

    # nothing under the (isolated) home: the demo never touches the person's real folders
    assert [
        p.relative_to(isolated_home) for p in Path(isolated_home).rglob("*") if p.is_file()
    ] == [Path(".config/memcurate/config.yaml")]  # the fixture's, and nothing else


def test_demo_never_writes_the_fake_secrets(demo):
    doc, _ = demo
    root = doc["root"]
    # The transcript copy stands in for Claude Code's own file: it is the input, secrets and all.
    transcript = os.path.realpath(doc["transcript"])
    assert Path(transcript).read_bytes() == DEMO.read_bytes()

    staged_texts = []
    checked = 0
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.realpath(path) == transcript:
                continue
            body = Path(path).read_bytes()
            checked += 1
            for secret in SECRETS:
                assert secret.encode() not in body, f"{secret[:12]}… found in {path}"
            if name == "triage.json":
                staged_texts.append(body.decode("utf-8"))
    assert checked and staged_texts

    # A line that held a secret was staged (else the check above proved nothing), and wherever
    # a secret's neighbour was staged, the secret after it is a redaction tag.
    staged = "\n".join(staged_texts)
    assert "SUMMARIZER_API_KEY=[REDACTED:anthropic-key]" in staged
    for neighbour in SECRET_NEIGHBOURS:
        for piece in staged.split(neighbour)[1:]:
            assert piece.startswith("[REDACTED:"), f"{neighbour}{piece[:20]}…"
