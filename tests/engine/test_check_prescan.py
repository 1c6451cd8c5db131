"""The secrets check's prescan (curator/util/redact.py, used by curator/hygiene/secrets.py): a memory is redacted only when one test over
every memory at once says it may hold a secret, and that test is looser than every redaction rule
(curator/util/redact.py), so whatever a full redaction finds the check still reports."""

from __future__ import annotations

import importlib
import random
from pathlib import Path

import pytest
from scenarios import offline_config

from memcurate.curator.engine import Engine
from memcurate.curator.hygiene import check
from memcurate.curator.memory import memfile
from memcurate.curator.util import redact
from memcurate.curator.util.redact import may_hold_secrets

# one sample or more of every rule, beside the redaction tests' own (test_secrets.py)
SAMPLES = [
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
    "export KEY=sk-ant-api03-Zx9Kq2Lm4Np6Rs8Tv0Wy1Ab3Cd5Ef7Gh9",
    "OPENAI=sk-proj-Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9",
    "creds AKIAZ7Q3R5T7V9X2B4D6 wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ3kT8vN1p in use",
    'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ3kT8vN1p"',
    "AWS_SECRET:\n  wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ3kT8vN1p",
    "token ghp_R7tY2uI9oP4aS6dF1gH8jK3lZ5xC0vB2nM4q ok",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "glpat-Ab3Cd5Ef7Gh9Ij1Kl3Mn",
    "slack xoxb-1234567890-abcdefghij",
    "maps AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "stripe rk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV",
    "Authorization: Bearer abcdefghij0123456789.klmnop",
    "postgres://app_user:pa55word@db.internal:5432/app",
    "PASSWORD=Tr0ub4dor-horse-battery",
    'config = {"client_secret": "s3cr3tValue"}',
    "API_KEY: abcd1234efgh",
    "DB_PASSWD => hunter2hunter2",
    "my password is: Qz7-harbor-Lynx",
    "the token is `tk9F2mQx81Lp`",
    "the api key for the staging box was 'Mar1gold Sky 42'",
    "the secret key is  hunter2Vortex",
    "the pin is 482913",
    "the PIN code was: 1234",
    "login admin: s3cret!x",
    "root / hunter22",
    "the router admin @Gizmo99.55",
]


def redaction_samples() -> list[str]:
    """Every text of the redaction tests (their constants and parametrized cases) and SAMPLES."""
    module = importlib.import_module("test_secrets")
    found: list[str] = list(SAMPLES)

    def gather(value) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, (list, tuple, set, dict)):
            for v in value.values() if isinstance(value, dict) else value:
                gather(v)

    for name, value in vars(module).items():
        if name.isupper():
            gather(value)
        for mark in getattr(value, "pytestmark", []):
            if mark.name == "parametrize":
                gather(list(mark.args[1]))
    return found


def rules() -> list:
    """Every redaction rule, wherever the module keeps it."""
    out = []
    for value in vars(redact).values():
        for rule in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(rule, redact._Rule):
                out.append(rule)
    return out


def fired(rule, text: str) -> bool:
    found: dict[str, int] = {}
    redact._apply(rule, text, found)
    return bool(found)


def variants(text: str, rng: random.Random) -> list[str]:
    """`text` where a memory may hold it: in the front matter, in a code block, in mixed case, with CRLF
    line ends, glued between words."""
    flipped = "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in text)
    return [
        text,
        f"---\ntitle: {text}\ndescription: d\n---\n## Decision\nSee above.\n",
        f"## Runbook\n```sh\n{text}\n```\n",
        text.upper(),
        text.lower(),
        flipped,
        text.replace("\n", "\r\n"),
        f"before {text} after",
        f"İstanbul office: {text}",  # a letter whose lowercase is longer
    ]


def test_every_redaction_rule_has_a_sample_here():
    samples = redaction_samples()
    missing = [r.kind for r in rules() if not any(fired(r, s) for s in samples)]
    assert missing == []


def test_the_prescan_flags_every_text_a_full_redaction_finds_a_secret_in():
    rng = random.Random(25)
    checked = 0
    clean = "A memory about the deploy queue and its retries.\n"
    for sample in redaction_samples():
        for text in variants(sample, rng):
            if not redact.find_secrets(text):
                continue
            checked += 1
            # alone, and among other memories at either end and between them
            assert may_hold_secrets([text]) == [0], text
            assert 1 in may_hold_secrets([clean, text, clean]), text
            assert may_hold_secrets([text, clean])[:1] == [0], text
            assert 1 in may_hold_secrets([clean * 3, text]), text
    assert checked > 200


def test_the_prescan_passes_over_ordinary_memories():
    ordinary = [
        "## Decision\nThe primary key of the table is id; the cache key holds the user id.\n",
        "## Rule\nRun `make test` before pushing; the root cause was a stale lock.\n",
        "## Symptom\nThe token bucket refills every second and the password reset mail is slow.\n",
        "See https://github.com/anthropics/claude-code/issues/42 for the history.\n",
    ]
    assert may_hold_secrets(ordinary) == []


def write(
    root: Path, mid: str, body: str, title: str = "A decision about the deploy queue"
) -> None:
    doc = memfile.MemoryDoc(
        id=mid,
        category="decision",
        title=title,
        description="How the deploy queue retries",
        tags=["deploy"],
        created="2026-10-01T10:00:00Z",
        updated="2026-10-01T10:00:00Z",
        body=f"## Decision\n{body}\n\n## Rationale\nIt was needed.",
    )
    (root / "decision" / f"{mid}.md").write_text(memfile.render(doc))


@pytest.fixture
def store(project: Path, tmp_path: Path) -> tuple[Engine, Path]:
    root = tmp_path / "memory"
    (root / "decision").mkdir(parents=True)
    offline_config(project, root)
    for i in range(30):
        write(root, f"plain{i}", f"Deploy worker {i} retries the queue with backoff.")
    return Engine(str(project)), root


def test_the_check_redacts_only_what_may_hold_a_secret_and_still_reports_each(store, monkeypatch):
    engine, root = store
    write(root, "in-title", "Nothing here.", title="Staging uses AKIAZ7Q3R5T7V9X2B4D6 for now")
    write(
        root, "in-code", "```sh\nexport GITHUB_TOKEN=ghp_R7tY2uI9oP4aS6dF1gH8jK3lZ5xC0vB2nM4q\n```"
    )
    write(root, "mixed-case", "The Staging DB Password Is: Qz7-Harbor-Lynx")
    redacted: list[str] = []
    real = redact.find_secrets

    def counted(text: str) -> list[str]:
        redacted.append(text)
        return real(text)

    monkeypatch.setattr(redact, "find_secrets", counted)
    found = check.run(engine, stage=False)
    engine.close()
    secret = {ref for f in found if f.code == "secret" for ref in f.refs}
    assert secret == {"decision/in-title", "decision/in-code", "decision/mixed-case"}
    # the 30 plain memories were not redacted one by one (MEMORY.md and the archive are read whole)
    memories = [t for t in redacted if t.startswith("---\n")]
    assert len(memories) == 3
