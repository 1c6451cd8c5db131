"""A secret in a memory is never shown nor stored by what finds or proposes its fix: the secret
proposal's own diff, `show proposal/…` (text and --json), a stale-file proposal's record, and every
finding's message in check.json and the CLI's output."""

from __future__ import annotations

import json

from test_check_cli import KEY, check_json, messy  # noqa: F401 (the fixture)

from memcurate.curator.cli import main
from memcurate.curator.engine import Engine
from memcurate.curator.hygiene import Finding, check


def proposal_files(project) -> str:
    folder = project / ".memcurate" / "proposals"
    return "".join(p.read_text() for p in sorted(folder.iterdir()))


def secret_pid(doc: dict) -> str:
    [f] = [
        f for f in doc["findings"] if f["code"] == "secret" and f["refs"] == ["claude/debugging.md"]
    ]
    return "proposal/" + f["proposal"]


def test_the_secret_proposal_shows_its_change_without_the_key(messy, capsys):  # noqa: F811
    pid = secret_pid(check_json(capsys, messy["project"]))
    assert main(["show", pid, "--project", str(messy["project"])]) == 0
    out = capsys.readouterr().out
    assert (
        KEY not in out
        and "-The staging AWS key is [REDACTED" in out
        and "+The staging AWS key is" in out
    )
    assert main(["show", pid, "--json", "--project", str(messy["project"])]) == 0
    shown = capsys.readouterr().out
    assert KEY not in shown
    [f] = [f for f in json.loads(shown)["files"] if f["where"] == "debugging.md"]
    assert f["diff"] and "[REDACTED" in f["before"] and "[REDACTED" in f["after"]


def test_a_plan_that_removes_a_private_key_shows_none_of_it(messy):  # noqa: F811
    from memcurate.curator.util.stamps import content_hash

    engine = Engine(str(messy["project"]))
    pem = (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        + "\n".join(f"MIIEowIBAAKCAQEA{i:02d}abcdefghijklmnopqrstu" for i in range(12))
        + "\n-----END RSA PRIVATE KEY-----\n"
    )
    data = ((messy["root"] / "debugging.md").read_text() + pem).encode()
    (messy["root"] / "debugging.md").write_bytes(data)
    ops = [
        {
            "op": "write",
            "ref": "claude/debugging.md",
            "base_hash": content_hash(data),
            "text": "# Debugging\nThe staging AWS key is in the vault.\n",
        }
    ]
    planned = engine.plan_changes(ops).as_dict()
    assert not planned["errors"] and planned["files"][0]["diff"].startswith("--- a/debugging.md")
    text = json.dumps(planned)
    assert (
        KEY not in text
        and "MIIEowIBAAKCAQEA" not in text
        and "-The staging AWS key is [REDACTED" in text
    )


def test_a_stale_file_proposal_never_stores_a_file_holding_a_secret(messy, capsys):  # noqa: F811
    path = messy["root"] / "debugging.md"
    # one since deleted
    path.write_text(path.read_text() + "Login is in `src/auth.py`, next to `src/db.py`.\n")
    doc = check_json(capsys, messy["project"])
    [stale] = [
        f
        for f in doc["findings"]
        if f["code"] == "stale-file" and f["refs"] == ["claude/debugging.md"]
    ]
    assert "waits until the secret" in stale["message"] and stale["proposal"] is None
    assert secret_pid(doc)  # the secret's own proposal is there, and it stores the text redacted
    # Claude's bytes untouched
    assert KEY not in proposal_files(messy["project"]) and KEY in path.read_text()


# noqa: F811
def test_finding_messages_are_redacted_before_they_are_cached_or_printed(
    messy, capsys, monkeypatch
):
    def quoting(engine):
        return [
            Finding(
                "contradiction",
                "medium",
                ("decision/sqlite-for-tests",),
                f"says the key is {KEY}, the other one does not",
                {
                    "why": [f"one says the token is `{KEY}`"],
                    "where": "decision/sqlite-for-tests.md",
                },
            )
        ]

    monkeypatch.setattr(check, "DETECTORS", (*check.DETECTORS, quoting))
    doc = check_json(capsys, messy["project"])
    assert any(
        f["code"] == "contradiction" and "[REDACTED" in f["message"] for f in doc["findings"]
    )
    assert KEY not in json.dumps(doc)
    assert KEY not in (messy["project"] / ".memcurate" / check.CACHE).read_text()
    assert main(["check", "--project", str(messy["project"])]) == 0
    assert KEY not in capsys.readouterr().out
    engine = Engine(str(messy["project"]))
    assert KEY not in repr(engine.flags())
