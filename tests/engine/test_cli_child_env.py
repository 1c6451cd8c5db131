"""Every `claude` child runs with Claude Code's own retries off (issue 24, Build §3).

The fake `claude` (test_claude_cli.py's) here also records the environment the CLI would act on: the
process's, then the `env` of the person's settings.json, then `--settings`'s, each winning over the one
before (as Claude Code 2.1.328 applies them). Like the real CLI, with its retries on it does not answer a
failed request at once: it retries (here: hangs) until memcurate's timeout kills it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fakes import NOW, backend_engine, decision
from test_claude_cli import envelope, fake  # noqa: F401 (the fixture)
from test_engine import stage

from memcurate.curator.drafting import DraftRequest, LookRequest, MergeRequest, RuleRequest
from memcurate.curator.drafting.claude_cli import ClaudeCliDrafter

RECORD_ENV = 'rec = {"argv": sys.argv[1:], "stdin": sys.stdin.read(), "cwd": os.getcwd(),'
AS_CLAUDE_CODE = r"""
settings_env = dict(os.environ)  # what Claude Code acts on: the process, its user settings' env, --settings
user = os.path.join(os.environ.get("CLAUDE_CONFIG_DIR") or os.path.expanduser("~/.claude"), "settings.json")
if os.path.exists(user):
    settings_env.update(json.load(open(user)).get("env") or {})
if "--settings" in sys.argv:
    settings_env.update(json.loads(sys.argv[sys.argv.index("--settings") + 1]).get("env") or {})
rec["process_env"], rec["effective"] = dict(os.environ), settings_env
if os.environ.get("FAKE_API_FAILS") and settings_env.get("CLAUDE_CODE_MAX_RETRIES", "10") != "0":
    with open(os.environ["FAKE_RECORD"], "a") as f:
        f.write(json.dumps(rec) + "\n")
    time.sleep(60)  # ten retries with backoff: about three minutes before the CLI answers
"""

# What Claude Code 2.1.328 printed (its JSON result, trimmed) with CLAUDE_CODE_MAX_RETRIES=0, against a
# Messages API that answered 401 / a credit error, and with no key and no login at all.
REAL = {
    "bad-key": (
        envelope(
            is_error=True,
            subtype="success",
            api_error_status=401,
            api_error_type="authentication_error",
            terminal_reason="api_error",
            result="Invalid API key · Fix external API key",
            usage={},
            total_cost_usd=0,
        ),
        "Invalid API key · Fix external API key",
    ),
    "no-credit": (
        envelope(
            is_error=True,
            subtype="success",
            api_error_status=400,
            api_error_type="invalid_request_error",
            terminal_reason="api_error",
            result="Credit balance is too low",
            usage={},
            total_cost_usd=0,
        ),
        "Credit balance is too low",
    ),
    "not-logged-in": (
        envelope(
            is_error=True,
            subtype="success",
            api_error_status=None,
            terminal_reason="api_error",
            result="Not logged in · Please run /login",
            usage={},
            total_cost_usd=0,
        ),
        "Not logged in · Please run /login",
    ),
}


@pytest.fixture
def cli(fake, monkeypatch):  # noqa: F811 (the fixture)
    """The fake `claude`, recording the environment the CLI acts on, and retrying as the CLI does when asked."""
    exe = Path(fake.path)
    text = exe.read_text()
    assert RECORD_ENV in text and "record = os.environ" in text
    text = text.replace(
        "record = os.environ", AS_CLAUDE_CODE.strip("\n") + "\nrecord = os.environ", 1
    )
    exe.write_text(text)
    # the person's login, which must reach the child
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    return fake


def user_settings(env: dict) -> None:
    """The person's Claude Code settings.json, with an `env` of its own."""
    path = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"env": env}))


def every_kind_of_call(drafter: ClaudeCliDrafter) -> None:
    """A draft, a check, a second look, a rule and a merge: one child each."""
    entry = {
        "score": 5,
        "threshold": 3,
        "snippets": [
            {
                "turn": 1,
                "speaker": "user",
                "weight": 1.0,
                "keywords": ["jwt"],
                "text": "Let's go with JWT",
            }
        ],
        "excerpt": "Let's go with JWT",
    }
    request = DraftRequest(
        triage_id="t",
        category="decision",
        entry=entry,
        source={"session": "s"},
        now=NOW,
        model_alias="sonnet",
    )
    drafter.draft(request)
    drafter.check(request, "# A memory\n")
    drafter.second_look(
        LookRequest(
            triage_id="t",
            activity="[1] user: Let's go with JWT",
            turns=frozenset({1}),
            model_alias="sonnet",
        )
    )
    drafter.rule(
        RuleRequest(
            key="k", evidence="pytest failed twice on the same import", model_alias="sonnet"
        )
    )
    drafter.merge(
        MergeRequest(
            category="decision",
            memories=("# One\n", "# Two\n"),
            merged="# One\n",
            now=NOW,
            model_alias="sonnet",
        )
    )


def test_every_kind_of_child_runs_with_claude_codes_retries_off(cli):
    every_kind_of_call(ClaudeCliDrafter(cli.path, {"drafting": {"timeout_seconds": 30}}))
    calls = cli.calls()
    assert len(calls) == 5
    for call in calls:
        for env in (call["process_env"], call["effective"]):
            assert env["CLAUDE_CODE_MAX_RETRIES"] == "0"
            assert (
                env["DISABLE_TELEMETRY"],
                env["DISABLE_ERROR_REPORTING"],
                env["DISABLE_AUTOUPDATER"],
            ) == ("1",) * 3
            assert env["MEMCURATE_CHILD"] == "1" and "CLAUDECODE" not in env
            # the rest of the parent's environment is kept
            assert env["ANTHROPIC_API_KEY"] == "sk-ant-test"


def test_a_parents_environment_and_the_persons_settings_do_not_turn_them_back_on(cli, monkeypatch):
    monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "5")
    monkeypatch.setenv("DISABLE_TELEMETRY", "")
    user_settings(
        {"CLAUDE_CODE_MAX_RETRIES": "10", "DISABLE_AUTOUPDATER": "0", "ANTHROPIC_MODEL": "opus"}
    )
    every_kind_of_call(ClaudeCliDrafter(cli.path, {"drafting": {"timeout_seconds": 30}}))
    calls = cli.calls()
    assert len(calls) == 5
    for call in calls:
        assert (
            call["process_env"]["CLAUDE_CODE_MAX_RETRIES"] == "0"
            and call["process_env"]["DISABLE_TELEMETRY"] == "1"
        )
        effective = call["effective"]
        assert (effective["CLAUDE_CODE_MAX_RETRIES"], effective["DISABLE_AUTOUPDATER"]) == (
            "0",
            "1",
        )
        assert effective["ANTHROPIC_MODEL"] == "opus"  # the person's other settings stay theirs


@pytest.mark.parametrize(
    "settings", [None, {"CLAUDE_CODE_MAX_RETRIES": "10"}], ids=["defaults", "settings-retries"]
)
@pytest.mark.parametrize("case", list(REAL))
def test_a_bad_key_no_credit_or_no_login_is_reported_as_such_at_once_and_not_retried(
    cli, project, tmp_path, monkeypatch, case, settings
):
    reply, said = REAL[case]
    cli.reply(reply, exit=1)
    monkeypatch.setenv("FAKE_API_FAILS", "1")
    if settings:
        user_settings(settings)
    engine = backend_engine(
        project, tmp_path, "claude-cli", retries=2, timeout=10.0, fallback="[haiku, offline]"
    )
    (tid,) = stage(engine)
    # the offline draft, held for a person
    assert engine.process(tid, only=["decision"])["decision"] == "ready"
    # fatal for the backend: neither asked again nor asked of the next model
    assert len(cli.calls()) == 1
    rec = decision(engine, tid)
    assert rec["model"] == "offline" and rec["retries"] == 0
    first, haiku, offline = rec["attempts"]
    assert first["outcome"] == "failed" and first["error"] == f"claude CLI error: {said} (exit 1)"
    # the CLI's own answer (the error says what it printed), not a timeout
    assert (haiku["outcome"], haiku["error"], offline["outcome"]) == (
        "not tried",
        "the backend cannot draft now",
        "ok",
    )
