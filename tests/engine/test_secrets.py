"""Secrets (DESIGN §12): whatever a transcript holds, no key, token or password
reaches a file memcurate writes; known formats become [REDACTED:<kind>], and
ordinary text is left alone."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import claude_transcripts, run_cli, run_hook
from synthetic import Transcript, text, tool

from memcurate.curator.util.redact import find_secrets, redact

# -- the secrets (made up, in the real formats) ----------------------------------

ANTHROPIC = (
    "sk-ant-api03-Zx9Kq2Lm4Np6Rs8Tv0Wy1Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz7Qa2Ws4Ed6Rf8-AbCdEfAA"
)
AWS_ID_1, AWS_SECRET_1 = "AKIAZ7Q3R5T7V9X2B4D6", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ3kT8vN1p"
AWS_ID_2, AWS_SECRET_2 = "AKIAQ2W4E6R8T0Y1U3I5", "Hq8Zp1Lx4Vb7Nm0Kc3Jd6Fg9St2Wr5Ey8Tu1Io4+"
GITHUB = "ghp_" + "R7tY2uI9oP4aS6dF1gH8jK3lZ5xC0vB2nM4q"
KEY_BODY = [
    "MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
    "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo",
]
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(KEY_BODY) + "\n-----END RSA PRIVATE KEY-----"
)
URL_PASSWORD = "pa55word"
DB_URL = f"postgres://app_user:{URL_PASSWORD}@db.internal:5432/app"
ENV_PASSWORD = "Tr0ub4dor-horse-battery"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUgRG9lIn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
# Glued to a word (no word boundary before them), and said in prose.
AWS_ID_3 = "AKIAR4T6Y8U0I2O4P6A8"
GITHUB_2 = "ghp_" + "Zq8Wx3Ec5Rv7Tb9Yn1Um2Ik4Ol6Pa0Sd2Fg4"
SAID_PASSWORD = "Qz7-harbor-Lynx"  # "my password is: …"
BARE_PASSWORD = "hunter2Vortex"  # "my password is …"
SAID_TOKEN = "tk9F2mQx81Lp"  # "the token is `…`"
PROSE_PASSWORD = "Mar1gold-Sky-42"  # "password: …" in a sentence

# What must never be found in a file memcurate writes: each secret whole, and a
# distinctive piece of it (so a secret cut in two is caught too).
FORBIDDEN = {
    "anthropic": [ANTHROPIC, ANTHROPIC[13:30], ANTHROPIC[-20:]],
    "aws-id": [AWS_ID_1, AWS_ID_2],
    "aws-secret": [AWS_SECRET_1, AWS_SECRET_1[14:28], AWS_SECRET_2, AWS_SECRET_2[-14:]],
    "github": [GITHUB, GITHUB[4:18], GITHUB[-14:]],
    "private-key": [b[:24] for b in KEY_BODY] + [b[-16:] for b in KEY_BODY],
    "url-password": [URL_PASSWORD],
    "password": [ENV_PASSWORD],
    "jwt": [JWT, JWT.split(".")[1][:20], JWT.split(".")[2][:16]],
    "aws-id-glued": [AWS_ID_3],
    "github-glued": [GITHUB_2, GITHUB_2[4:18], GITHUB_2[-14:]],
    "said": [SAID_PASSWORD, BARE_PASSWORD, SAID_TOKEN, PROSE_PASSWORD],
}
assert (len(AWS_ID_1), len(AWS_SECRET_1), len(AWS_ID_2), len(AWS_SECRET_2), len(GITHUB)) == (
    20,
    40,
    20,
    40,
    40,
)
assert (len(AWS_ID_3), len(GITHUB_2)) == (20, 40)
KINDS = {
    "anthropic-key",
    "aws-access-key",
    "aws-secret-key",
    "github-token",
    "private-key",
    "url-credentials",
    "password",
    "jwt",
}


def leaky_session() -> Transcript:
    """Every kind of secret, in prompts, replies and tool results, most of them on lines that score."""
    t = Transcript(session="9c1d2e3f-0000-4111-8222-333344445555")
    # decision: a credential in a URL and a password assignment
    t.user(
        f"We decided to go with the managed database because it is simpler: connect with {DB_URL} "
        f"and set PASSWORD={ENV_PASSWORD} in the .env file."
    )
    t.assistant(
        text(f"We will use {DB_URL} from now on, since it is simpler than running our own server."),
        tool("toolu_1", "Bash", command=f"AWS_ACCESS_KEY_ID={AWS_ID_1} aws s3 ls --profile deploy"),
    )
    # runbook: an AWS pair on one line of a failing command, fixed by the next run of it
    t.result(
        "toolu_1",
        f"An error occurred (InvalidClientTokenId) when calling ListBuckets: "
        f"key {AWS_ID_1} secret {AWS_SECRET_1}\nexit code 255",
        is_error=True,
    )
    t.assistant(tool("toolu_2", "Bash", command="aws s3 ls --profile prod"))
    t.result("toolu_2", "2025-01-01 app-bucket")
    t.assistant(
        text(
            f"The root cause was the revoked key {ANTHROPIC}; the fix was to rotate it. "
            f"This fixed the CI, which now authenticates with {GITHUB} because the old token expired."
        )
    )
    # constraint: an AWS pair over two lines
    t.user(
        f"The deploy role must not use any other credentials than these, because of the audit:\n"
        f"{AWS_ID_2}\n{AWS_SECRET_2}"
    )
    t.assistant(
        text(f"Understood: the deploy role is restricted to {AWS_ID_2} with secret {AWS_SECRET_2}.")
    )
    # preference: a JWT
    t.user(
        f"I prefer that you always use this test token {JWT} because it is faster than logging in."
    )
    # tech debt: a private key pasted on one line, and as a block in a tool result and a plain prompt
    t.user(
        f"TODO: this is a temporary hack for now, rotate {PRIVATE_KEY.replace(chr(10), ' ')} later on."
    )
    t.assistant(
        tool("toolu_3", "Read", file_path="/home/dev/app/deploy/id_rsa"),
        tool("toolu_4", "Grep", pattern="PASSWORD"),
    )
    t.result("toolu_3", PRIVATE_KEY)
    t.result("toolu_4", f".env:3:PASSWORD={ENV_PASSWORD}\n.env:4:GITHUB_TOKEN={GITHUB}")
    t.user(f"Here is the deploy key again so you have it:\n{PRIVATE_KEY}\nand the JWT {JWT}")
    t.assistant(
        tool("toolu_5", "Edit", file_path="/home/dev/app/.env", old_string="a", new_string="b"),
        tool("toolu_6", "Bash", command="pytest -q"),
    )
    t.result("toolu_5", "ok").result("toolu_6", "12 passed")
    t.assistant(
        text(
            f"Done. The app connects with {DB_URL} and PASSWORD={ENV_PASSWORD}; "
            f"the key {ANTHROPIC} is rotated, and CI uses {GITHUB}."
        )
    )
    # glued to a word, and said in prose, on lines that score
    t.user(
        f"We decided to keep the deploy credentials as creds_{AWS_ID_3} in the vault because it is simpler, "
        f"and my password is: {SAID_PASSWORD}."
    )
    t.assistant(text(f"We will use creds_{AWS_ID_3} from now on, since it is simpler."))
    t.user(
        f"The root cause was the expired token; the fix was to export tok_{GITHUB_2} because the token is "
        f"`{SAID_TOKEN}` no more."
    )
    t.user(
        f"I prefer that you always log in as admin, my password is {BARE_PASSWORD}, because it is faster."
    )
    t.user(
        f"The staging box must only accept password: {PROSE_PASSWORD} because of the audit, never another one."
    )
    return t


def all_files(root: Path):
    for p in sorted(root.rglob("*")):
        if p.is_file():
            yield p, p.read_bytes()


def assert_no_secret(where: str, data: bytes) -> None:
    low = data.lower()  # tags and ids are lowercase: a secret lowercased is still a secret
    for kind, pieces in FORBIDDEN.items():
        for piece in pieces:
            assert piece.lower().encode() not in low, (
                f"{kind} secret ({piece[:6]}…) found in {where}"
            )


def redacted_kinds(project: Path) -> set[str]:
    found = set()
    for _, data in all_files(project / ".memcurate" / "staging"):
        for kind in KINDS:
            if f"[REDACTED:{kind}]".encode() in data:
                found.add(kind)
    return found


@pytest.fixture
def transcripts(tmp_path) -> Path:
    return claude_transcripts()


def _hook(event: str, path: Path, project: Path):
    p = run_hook(
        {
            "session_id": "9c1d2e3f-0000-4111-8222-333344445555",
            "transcript_path": str(path),
            "cwd": str(project),
            "hook_event_name": event,
        },
        cwd=project,
    )
    assert p.returncode == 0 and p.stdout == b"" and p.stderr == b"", p.stderr
    return p


# -- end to end: the hook and the backfill ----------------------------------------------


def test_no_secret_reaches_any_file_memcurate_writes(project, transcripts, tmp_path):
    memory = tmp_path / "memory"
    (project / ".claude").mkdir()
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {memory}\n"
    )
    path = leaky_session().write(transcripts / "9c1d2e3f-0000-4111-8222-333344445555.jsonl")
    raw = path.read_bytes()
    for pieces in FORBIDDEN.values():  # the transcript really holds them
        assert all(p.encode() in raw for p in pieces)

    _hook("Stop", path, project)
    _hook("SessionEnd", path, project)  # the session summary reads prompts back from the transcript
    copy = transcripts / "backfill.jsonl"
    copy.write_bytes(raw)
    cli = run_cli("triage", str(copy), "--json", cwd=project)
    assert cli.returncode == 0, cli.stderr
    assert_no_secret("triage --json output", cli.stdout.encode())
    assert_no_secret("triage stderr", cli.stderr.encode())
    text_out = run_cli("triage", str(path), str(copy), cwd=project)
    assert_no_secret("triage output", (text_out.stdout + text_out.stderr).encode())

    files = list(all_files(project))
    assert any(p.name == "triage.json" for p, _ in files)
    for p, data in files:
        assert_no_secret(str(p.relative_to(project)), data)

    docs = [json.loads(d) for p, d in files if p.name == "triage.json"]
    triggered = {n for doc in docs for n, c in doc["categories"].items() if c["triggered"]}
    assert {
        "decision",
        "runbook",
        "constraint",
        "preference",
        "tech_debt",
        "session_summary",
    } <= triggered
    # The secrets were on lines that score: they reached snippets and excerpts, redacted.
    assert redacted_kinds(project) == KINDS
    tool_snippets = [
        s["text"]
        for doc in docs
        for s in doc["categories"]["runbook"].get("snippets", [])
        if s["speaker"] == "tool"
    ]
    assert any("[REDACTED:aws-secret-key]" in s for s in tool_snippets), tool_snippets
    # The glued and said ones reached staging too, redacted where they stood.
    staged = b"".join(d for p, d in files if p.name == "triage.json").decode()
    for redacted in (
        "creds_[REDACTED:aws-access-key]",
        "tok_[REDACTED:github-token]",
        "my password is: [REDACTED:password]",
        "the token is `[REDACTED:password]`",
        "my password is [REDACTED:password]",
        "password: [REDACTED:password]",
    ):
        assert redacted in staged, redacted

    # Drafted, verified and saved unattended: no file anywhere holds a secret either.
    p = run_cli("--auto-approve", "--json", cwd=project)
    assert p.returncode == 0, p.stderr
    assert_no_secret("--auto-approve output", (p.stdout + p.stderr).encode())
    summary = json.loads(p.stdout)
    assert summary["created"], summary
    saved = list(all_files(memory))
    assert any(p.name == "MEMORY.md" for p, _ in saved) and any(
        p.parent.name == "decision" for p, _ in saved
    )
    assert (project / ".memcurate" / "index.sqlite").exists()
    for p, data in list(all_files(project)) + saved:
        assert_no_secret(str(p), data)


def test_log_never_holds_transcript_text(project, transcripts):
    path = leaky_session().write(transcripts / "s.jsonl")
    _hook("Stop", path, project)
    _hook("SessionEnd", path, project)
    log = (project / ".memcurate" / "log" / "memcurate.log").read_bytes()
    assert_no_secret("the log", log)
    assert b"decided" not in log and b"[REDACTED:" not in log


def test_private_key_block_on_a_scoring_message_is_redacted(project, transcripts):
    t = Transcript(session="9c1d2e3f-0000-4111-8222-333344445555")
    t.user(
        f"We decided to use this deploy key because it is simpler:\n{PRIVATE_KEY}\nplease keep it out of git."
    )
    t.assistant(text("We will use the deploy key, since it is simpler."))
    path = t.write(transcripts / "s.jsonl")
    _hook("Stop", path, project)
    files = list(all_files(project / ".memcurate"))
    assert any(p.name == "triage.json" for p, _ in files)
    for p, data in files:
        assert_no_secret(str(p), data)


def test_secret_cut_by_the_summary_quote_is_not_half_kept(project, transcripts):
    prompt = (
        "Here is the CI log, please read it carefully. "
        + "build step ok. " * 400
        + GITHUB
        + " "
        + "x " * 2990
    )
    cut = len(prompt) - 6000
    # the cut is inside the token
    assert prompt.index(GITHUB) < cut < prompt.index(GITHUB) + len(GITHUB) - 14
    t = Transcript(session="9c1d2e3f-0000-4111-8222-333344445555").user(prompt)
    t.assistant(
        text("Reading."),
        tool("t1", "Read", file_path="/a"),
        tool("t2", "Grep", pattern="b"),
        tool("t3", "Bash", command="ls"),
        tool("t4", "Edit", file_path="/c", old_string="x", new_string="y"),
    )
    t.result("t1", "a").result("t2", "b").result("t3", "c").result("t4", "d")
    t.user("Thanks, now summarise the failures for me please.")
    t.assistant(text("Summary: the build passed."))
    path = t.write(transcripts / "s.jsonl")
    _hook("SessionEnd", path, project)
    files = list(all_files(project / ".memcurate"))
    assert any(p.name == "triage.json" for p, _ in files)
    for p, data in files:
        assert GITHUB[-14:].encode() not in data, p


# -- curator.util.redact.redact, kind by kind -----------------------------------------------------


@pytest.mark.parametrize(
    "source, expected, kinds",
    [
        (
            f"export KEY={ANTHROPIC} # prod",
            "export KEY=[REDACTED:anthropic-key] # prod",
            {"anthropic-key": 1},
        ),
        (f"use {ANTHROPIC}.", "use [REDACTED:anthropic-key].", {"anthropic-key": 1}),
        (
            f"creds {AWS_ID_1} {AWS_SECRET_1} in use",
            "creds [REDACTED:aws-access-key] [REDACTED:aws-secret-key] in use",
            {"aws-access-key": 1, "aws-secret-key": 1},
        ),
        (
            f"{AWS_ID_2}\n{AWS_SECRET_2}",
            "[REDACTED:aws-access-key]\n[REDACTED:aws-secret-key]",
            {"aws-access-key": 1, "aws-secret-key": 1},
        ),
        (
            f"aws_access_key_id = {AWS_ID_1}\naws_secret_access_key = {AWS_SECRET_1}",
            "aws_access_key_id = [REDACTED:aws-access-key]\naws_secret_access_key = [REDACTED:aws-secret-key]",
            {"aws-access-key": 1, "aws-secret-key": 1},
        ),
        (
            f"aws_secret_access_key={AWS_SECRET_2}",
            "aws_secret_access_key=[REDACTED:aws-secret-key]",
            {"aws-secret-key": 1},
        ),
        (f"token {GITHUB} ok", "token [REDACTED:github-token] ok", {"github-token": 1}),
        (f"key:\n{PRIVATE_KEY}\ndone", "key:\n[REDACTED:private-key]\ndone", {"private-key": 1}),
        (
            f"{PRIVATE_KEY.split(chr(10) + KEY_BODY[-1])[0]}",
            "[REDACTED:private-key]",
            {"private-key": 1},
        ),  # cut short
        (
            f"connect to {DB_URL} now",
            "connect to postgres://app_user:[REDACTED:url-credentials]@db.internal:5432/app now",
            {"url-credentials": 1},
        ),
        (f"PASSWORD={ENV_PASSWORD}", "PASSWORD=[REDACTED:password]", {"password": 1}),
        (
            f'"db_password": "{ENV_PASSWORD}",',
            '"db_password": "[REDACTED:password]",',
            {"password": 1},
        ),
        (f"auth {JWT} end", "auth [REDACTED:jwt] end", {"jwt": 1}),
        # glued to a word: no word boundary before the token
        (
            f"creds_{AWS_ID_3} in use",
            "creds_[REDACTED:aws-access-key] in use",
            {"aws-access-key": 1},
        ),
        (f"awsKey{AWS_ID_3}.", "awsKey[REDACTED:aws-access-key].", {"aws-access-key": 1}),
        (f"tok_{GITHUB_2} x", "tok_[REDACTED:github-token] x", {"github-token": 1}),
        (f"KEY_{ANTHROPIC}", "KEY_[REDACTED:anthropic-key]", {"anthropic-key": 1}),
        ("old_sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t", "old_[REDACTED:openai-key]", {"openai-key": 1}),
        ("ci_glpat-Xy7zAb3dEf6hIj9kLm2n", "ci_[REDACTED:gitlab-token]", {"gitlab-token": 1}),
        ("hook_xoxb-1234567890-AbCdEfGhIj", "hook_[REDACTED:slack-token]", {"slack-token": 1}),
        (
            "maps_AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
            "maps_[REDACTED:google-api-key]",
            {"google-api-key": 1},
        ),
        ("pay_sk_live_4eC39HqLyjWDarjtT1zdp7dc", "pay_[REDACTED:stripe-key]", {"stripe-key": 1}),
        (f"session_{JWT}", "session_[REDACTED:jwt]", {"jwt": 1}),
        (
            f"DBURL_{DB_URL}",
            "DBURL_postgres://app_user:[REDACTED:url-credentials]@db.internal:5432/app",
            {"url-credentials": 1},
        ),
        # said in prose
        (
            f"my password is: {SAID_PASSWORD}.",
            "my password is: [REDACTED:password].",
            {"password": 1},
        ),
        (f"My password is {BARE_PASSWORD}", "My password is [REDACTED:password]", {"password": 1}),
        ("my password is hunter2", "my password is [REDACTED:password]", {"password": 1}),
        (
            f"the token is `{SAID_TOKEN}` now",
            "the token is `[REDACTED:password]` now",
            {"password": 1},
        ),
        (
            f"Password: {PROSE_PASSWORD} for the box",
            "Password: [REDACTED:password] for the box",
            {"password": 1},
        ),
        (
            f"the password is `{BARE_PASSWORD}`",
            "the password is `[REDACTED:password]`",
            {"password": 1},
        ),
        (f"password: `{SAID_TOKEN}`", "password: `[REDACTED:password]`", {"password": 1}),
        (
            "The passphrase is 'correct horse battery staple' ok",
            "The passphrase is '[REDACTED:password]' ok",
            {"password": 1},
        ),
        ("the secret is: Zk29fLq0x", "the secret is: [REDACTED:password]", {"password": 1}),
        (
            "The API key for staging was: ab12cd34ef56",
            "The API key for staging was: [REDACTED:password]",
            {"password": 1},
        ),
        ("our api key is 9f8e7d6c5b4a", "our api key is [REDACTED:password]", {"password": 1}),
        ("The PIN is 4821.", "The PIN is [REDACTED:password].", {"password": 1}),
        ("my pin code is: 120934", "my pin code is: [REDACTED:password]", {"password": 1}),
        # A login written out, as a user gives a router's (a real session): the value after admin or root goes.
        (
            "look at it at 192.168.1.1 admin @Gizmo99.55",
            "look at it at 192.168.1.1 admin @[REDACTED:password]",
            {"password": 1},
        ),
        (
            "log in as root / hunter22 then",
            "log in as root / [REDACTED:password] then",
            {"password": 1},
        ),
    ],
    ids=[
        "anthropic",
        "anthropic-punct",
        "aws-same-line",
        "aws-next-line",
        "aws-assignments",
        "aws-secret-assignment",
        "github",
        "private-key",
        "private-key-unterminated",
        "url",
        "password-env",
        "password-json",
        "jwt",
        "glued-aws",
        "glued-aws-camel",
        "glued-github",
        "glued-anthropic",
        "glued-openai",
        "glued-gitlab",
        "glued-slack",
        "glued-google",
        "glued-stripe",
        "glued-jwt",
        "glued-url",
        "said-colon",
        "said-bare",
        "said-hunter2",
        "said-token-code",
        "prose-password",
        "said-code",
        "prose-password-code",
        "said-passphrase",
        "said-secret",
        "said-api-key-for",
        "said-api-key",
        "said-pin",
        "said-pin-code",
        "login-admin",
        "login-root",
    ],
)
def test_redact_each_kind(source, expected, kinds):
    out, found = redact(source)
    assert out == expected
    assert found == Counter(kinds)
    assert find_secrets(out) == []  # nothing left to find
    assert redact(out) == (out, Counter())  # and redacting again changes nothing


@pytest.mark.parametrize(
    "source",
    [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b fixes da39a3ee5e6b4b0d3255bfef95601890afd80709",
        "git checkout 9fceb02 && git log --oneline -3",
        "session 72a43a5b-7f8d-4f2e-b2f6-4b6bc331efc3 and uuid 0b5e6a34-1111-4222-8333-444455556666",
        "echo aGVsbG8gd29ybGQ= | base64 -d  # and Zm9vYmFy",
        "the password is wrong, try again",
        "reset your password",
        "password = None",
        "password: null",
        "token = get_token()",
        "api_key = os.environ['API_KEY']",
        "password = ${DB_PASSWORD}",
        "Set SECRET_KEY in settings.py, see the docs.",
        "the primary key of the table is id",
        "https://github.com/anthropics/claude-code/issues/42",
        "see http://localhost:8000/api/v1/items?page=2",
        "sk-ant is the prefix of Anthropic keys",
        "AKIA is the prefix of AWS access key ids",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        # identifiers that only look like a token's prefix
        "task-manager-service-worker-pool-v2 and the skeleton-loader-component-for-lists",
        "risk_test_integrationSuiteAlphaBeta and desk-ant-colony-simulation-project",
        "AKIAX is shorter than an access key id, and so is AKIA123",
        "xoxo-gossip-girl-fan-club-archive",
        "the glpat- prefix marks GitLab tokens",
        # said in prose, but no secret is said
        "my password is expired, reset it",
        "the token is valid for 3600 seconds",
        "the token is `GITHUB_TOKEN` in CI",
        "the api key is `$OPENAI_API_KEY`",
        "the secret is that the cache never expires",
        "the API key is stored in Vault",
        "if password is None: raise",
        "the numpy pin is 1.26.4",
        "spin is 1200 rpm",
        "the token is: <your token here>",
        "ssh root@db1 and restart it",  # a host, not a password
        "root 10.0.0.1 answers",
        "the root cause was a race in worker2",
        "open the admin panel (v2) and list users",
    ],
)
def test_ordinary_text_is_not_redacted(source):
    assert redact(source) == (source, Counter())
    assert find_secrets(source) == []


# -- whatever a drafter returns, and whatever a memory file holds ------------------------------

NOW = "2026-11-22T10:04:00Z"


class EchoingDrafter:
    """A backend that echoes secrets from its evidence into every field, front matter included,
    one lowercased into a tag, and one into a YAML comment of the text it returns."""

    name, reason = "echoing", "test"

    def draft(self, request):
        from memcurate.curator.drafting import DraftResult
        from memcurate.curator.memory import memfile

        body = "\n\n".join(
            f"## {name}\nUse tok_{GITHUB_2} and creds_{AWS_ID_3} for {request.category}."
            for name in memfile.CATEGORIES[request.category].required
        )
        doc = memfile.MemoryDoc(
            id=f"creds-{AWS_ID_3.lower()}",
            category=request.category,
            title=f"Deploy with creds_{AWS_ID_3}",
            description=f"my password is: {SAID_PASSWORD}",
            tags=["deploy", AWS_ID_3.lower(), f"tok_{GITHUB_2}".lower()],
            created=NOW,
            updated=NOW,
            sources=[{"session": f"s-{GITHUB_2}", "turns": [1, 2]}],
            body=body,
        )
        text = memfile.render(doc).replace("status: active", f"status: active  # {ANTHROPIC}")
        return DraftResult(doc=doc, text=text, model="echo")


def _engine(project: Path, tmp_path: Path, **kw):
    from memcurate.curator.engine import Engine

    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {tmp_path / 'memory'}\ndrafting:\n  backoff_seconds: 0.0\n"
    )
    return Engine(project, clock=lambda: NOW, **kw)


def test_a_drafters_whole_document_is_redacted_before_staging(project, tmp_path):
    from memcurate.curator.candidates import staging
    from memcurate.curator.candidates.incremental import capture
    from memcurate.curator.memory import memfile

    engine = _engine(project, tmp_path, drafter=EchoingDrafter())
    t = Transcript(session="9c1d2e3f-0000-4111-8222-333344445555")
    t.user("We decided to use Redis for the job queue because it is simpler to run than RabbitMQ.")
    t.assistant(text("We will use Redis for the queue, since it is simpler."))
    report = capture(engine.data, engine.cfg, str(t.write(tmp_path / "s.jsonl")), event="backfill")
    assert report["status"] == "staged"
    assert engine.process(report["triage"])["decision"] == "ready"

    review = engine.review(report["triage"], "decision")
    doc = memfile.parse(review["text"])
    assert doc.title == "Deploy with creds_[REDACTED:aws-access-key]"
    assert doc.description == "my password is: [REDACTED:password]"
    assert doc.tags == ["deploy"]  # the tags that held a secret, whole or lowercased, are gone
    assert doc.id == "deploy-with-creds-redacted-aws-access-key"
    assert doc.sources == [{"session": "s-[REDACTED:github-token]", "turns": [1, 2]}]
    assert (
        "Use tok_[REDACTED:github-token] and creds_[REDACTED:aws-access-key] for decision."
        in doc.body
    )
    assert memfile.problems(doc) == [] and not review["blocked"], review["issues"]
    assert review["draft"] == review["text"]
    for p, data in all_files(Path(staging.triage_dir(engine.data, report["triage"]))):
        assert_no_secret(str(p), data)
        assert ANTHROPIC[13:30].encode() not in data


def test_a_secret_typed_into_a_memory_never_reaches_the_index(project, tmp_path):
    from memcurate.curator.memory import memfile

    engine = _engine(project, tmp_path)
    doc = memfile.MemoryDoc(
        id="deploy-creds",
        category="decision",
        title=f"Deploy with creds_{AWS_ID_3}",
        description=f"the token is `{SAID_TOKEN}`",
        tags=["deploy", "vault"],
        created=NOW,
        updated=NOW,
        body=f"## Decision\nmy password is {BARE_PASSWORD}\n\n## Rationale\n"
        f"tok_{GITHUB_2} is simpler.",
    )
    engine.store.create(doc)  # as a person would type it; `check` reports such a file
    found = engine.index.get("decision", "deploy-creds")
    assert found.title == "Deploy with creds_[REDACTED:aws-access-key]"
    assert found.body == (
        "## Decision\nmy password is [REDACTED:password]\n\n"
        "## Rationale\ntok_[REDACTED:github-token] is simpler."
    )
    assert [c.id for c in engine.index.candidates("decision", "deploy vault creds")] == [
        "deploy-creds"
    ]
    engine.close()
    files = [
        (p, d) for p, d in all_files(project / ".memcurate") if p.name.startswith("index.sqlite")
    ]
    assert files
    for p, data in files:
        assert_no_secret(str(p), data)
