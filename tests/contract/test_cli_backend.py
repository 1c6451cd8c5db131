"""Contract: memcurate's `claude-cli` backend (curator/drafting/claude_cli.py) against the real Claude Code.

ClaudeCliDrafter runs the pinned binary as its `claude`, against the scripted Messages API. Claude Code
2.1.328 turns `--json-schema` into a tool, StructuredOutput, whose input schema is the schema, offered
beside a `DeferredToolPlaceholder` (defer_loading, "never call this tool"); the model answers by calling
it, and the CLI's JSON carries the tool's input as `structured_output`. So the scripted model answers
each call kind with one StructuredOutput call, and the test reads what memcurate made of it.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import pytest

from contract.api import ScriptedAPI, ToolUse, Turn
from contract.conftest import clean_env, read_hooks
from memcurate.curator import config
from memcurate.curator.candidates import staging
from memcurate.curator.drafting import DraftRequest, LookRequest, MergeRequest, RuleRequest
from memcurate.curator.drafting import prompt as prompts
from memcurate.curator.drafting.claude_cli import ClaudeCliDrafter
from memcurate.curator.memory import memfile
from memcurate.curator.util.log import read_log
from memcurate.curator.util.paths import data_dir, memory_root

NOW = "2026-11-27T12:00:00Z"
TOOL = "StructuredOutput"  # the tool 2.1.328 makes of --json-schema
# an API failure is the CLI's answer within this (retries off; with them on: minutes)
FAIL_SECONDS = 20
TIMEOUT = 60  # drafting.timeout_seconds of these calls: a hang fails the test, it does not stall the suite
LEAKS = re.compile(r"ANTHROPIC_|CLAUDE|MEMCURATE_|(HTTPS?|ALL|NO)_PROXY$|NODE_OPTIONS$", re.I)

DECISION = DraftRequest(
    triage_id="t-contract",
    category="decision",
    now=NOW,
    source={"session": "s-contract", "turns": [3, 4]},
    entry={
        "excerpt": "[3] user: We use SQLite not Postgres because it's a single-machine tool; never add a server "
        "dependency.\n[4] assistant: Noted: SQLite stays, no database server."
    },
)
DRAFT = {
    "skip": False,
    "title": "SQLite, not Postgres: no database server",
    "description": "The storage choice, read before adding any dependency",
    "tags": ["sqlite", "storage"],
    "fact": "The app stores its data in SQLite, not Postgres.",
    "why": "It is a single-machine tool; a server dependency is not wanted.",
    "how_to_apply": "Never add a database server dependency.",
    "confidence": 0.9,
}
DIGEST = (
    "[1] user: We use SQLite not Postgres because it's a single-machine tool.\n"
    "[2] assistant: Understood, no database server."
)
LOOK = LookRequest(
    triage_id="t-contract",
    activity=DIGEST,
    turns=frozenset({1, 2}),
    entries=frozenset({1, 2}),
    already=("decision",),
)
FACTS = {
    "facts": [
        {
            "category": "decision",
            "statement": "The app uses SQLite, not Postgres.",
            "why": "a single-machine tool",
            "how_to_apply": "no server dependency",
            "entries": [1, 2],
            "confidence": 0.8,
        },
        {
            "category": "constraint",
            "statement": "A fact citing an entry the digest lacks.",
            "entries": [9],
        },
    ]
}
DRAFT_TEXT = "---\nid: sqlite\n---\n\n## Decision\n\nSQLite, not Postgres.\n"
CONCERNS = {
    "concerns": [
        {"kind": "unsupported", "where": "## Rationale", "message": "the excerpt gives no reason"}
    ]
}
RULE = RuleRequest(
    key="pytest:tests/test_store.py",
    evidence="tests/test_store.py failed: no such directory, "
    "three sessions; fixed by creating the folder before connecting.",
)
RULE_ANSWER = {
    "skip": False,
    "rule": "Create the database's folder before `sqlite3.connect` in `app/store.py`",
    "topic": "testing",
    "paths": ["app/**/*.py"],
}
MERGE = MergeRequest(
    category="decision",
    now=NOW,
    memories=(
        "---\ntitle: SQLite\n---\n\n## Decision\n\nUse SQLite.\n",
        "---\ntitle: No Postgres\n---\n\n## Decision\n\nNo Postgres.\n",
    ),
    merged="## Decision\n\nUse SQLite, not Postgres.\n",
)
MERGED = {
    "skip": False,
    "title": "SQLite, not Postgres",
    "description": "The one storage choice",
    "tags": ["sqlite"],
    "fact": "The app uses SQLite, not Postgres.",
    "why": "A single-machine tool.",
}


def check_draft(r) -> None:
    assert r.ok and r.doc.category == "decision" and r.doc.title == DRAFT["title"], (
        r.error,
        r.skipped,
    )
    assert (
        "The app stores its data in SQLite, not Postgres." in r.text
        and "**Why:** It is a single-machine" in r.text
    )
    assert r.confidence == 0.9


def check_look(r) -> None:
    assert r.error is None and [(f["category"], f["entries"]) for f in r.findings] == [
        ("decision", [1, 2])
    ], r
    assert (
        r.findings[0]["statement"] == "The app uses SQLite, not Postgres."
        and r.findings[0]["confidence"] == 0.8
    )
    # [9] is not in the digest
    assert any(d.startswith("constraint") and "9" in d for d in r.dropped), r.dropped


def check_concerns(r) -> None:
    assert r.error is None and r.concerns == [
        {"kind": "unsupported", "where": "## Rationale", "message": "the excerpt gives no reason"}
    ], (r.error, r.concerns)


def check_rule(r) -> None:
    assert r.error is None and r.answer == {
        "rule": RULE_ANSWER["rule"],
        "topic": "testing",
        "paths": ["app/**/*.py"],
    }, (r.error, r.answer)


def check_merge(r) -> None:
    assert (
        r.ok
        and r.doc.title == "SQLite, not Postgres"
        and "The app uses SQLite, not Postgres." in r.text
    ), r.error


# kind: (call, schema, system prompt, user prompt, the model's answer, what memcurate must make of it)
KINDS = {
    "draft": (
        lambda d: d.draft(DECISION),
        prompts.schema("decision"),
        prompts.SYSTEM_PROMPT,
        prompts.user_prompt(DECISION),
        DRAFT,
        check_draft,
    ),
    "second_look": (
        lambda d: d.second_look(LOOK),
        prompts.look_schema(),
        prompts.LOOK_SYSTEM_PROMPT,
        prompts.look_prompt(LOOK.activity, LOOK.already),
        FACTS,
        check_look,
    ),
    "check": (
        lambda d: d.check(DECISION, DRAFT_TEXT),
        prompts.check_schema(),
        prompts.CHECK_SYSTEM_PROMPT,
        prompts.check_prompt(DECISION, DRAFT_TEXT),
        CONCERNS,
        check_concerns,
    ),
    "rule": (
        lambda d: d.rule(RULE),
        prompts.rule_schema(),
        prompts.RULE_SYSTEM_PROMPT,
        prompts.rule_prompt(RULE.evidence),
        RULE_ANSWER,
        check_rule,
    ),
    "merge": (
        lambda d: d.merge(MERGE),
        prompts.schema("decision"),
        prompts.MERGE_SYSTEM_PROMPT,
        prompts.merge_prompt(MERGE),
        MERGED,
        check_merge,
    ),
}


@pytest.fixture
def backend(claude_bin, claude_home, monkeypatch):
    """backend(script=None, status=None) -> (ClaudeCliDrafter on the real binary, its ScriptedAPI, children).

    `children` gets each child's (stdout, stderr, exit code) as the drafter read them. The drafter passes its
    own process's environment on to the child, so that environment is made what the contract runs use
    (conftest.clean_env), nothing of the session running the tests leaking in."""
    base = clean_env()  # the private HOME and CLAUDE_CONFIG_DIR, the PATH, telemetry off
    for name in [n for n in os.environ if LEAKS.match(n) and n not in base]:
        monkeypatch.delenv(name)
    for name, value in base.items():
        monkeypatch.setenv(name, value)
    started: list[ScriptedAPI] = []
    children: list[tuple] = []
    run = ClaudeCliDrafter._run

    def recorded(self, argv, stdin):
        children.append(run(self, argv, stdin))
        return children[-1]

    monkeypatch.setattr(ClaudeCliDrafter, "_run", recorded)

    def make(script: list[Turn] | None = None, status: int | None = None):
        api = ScriptedAPI(script, status=status).start()
        started.append(api)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        return (
            ClaudeCliDrafter(claude_bin, {"drafting": {"timeout_seconds": TIMEOUT}}),
            api,
            children,
        )

    yield make
    for api in started:
        api.stop()


RECALLED = "Keep the SQLite file at var/notes.db, never on a network share."


def save_memory(project: Path) -> None:
    """A saved decision that recall gives the draft's prompt (it holds that prompt's words)."""
    data = data_dir(project)
    root = Path(memory_root(project, config.load(project, data), data))
    doc = memfile.MemoryDoc(
        id="sqlite-not-postgres",
        category="decision",
        title="SQLite, not Postgres",
        description="The storage choice: SQLite, no database server",
        tags=["sqlite", "postgres"],
        created=NOW,
        updated=NOW,
        body=f"## Decision\n{RECALLED}\n\n## Rationale\n{prompts.user_prompt(DECISION)}",
    )
    path = root / "decision" / "sqlite-not-postgres.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(memfile.render(doc))


def system_text(request) -> str:
    system = request.body.get("system")
    return (
        "\n".join(b.get("text", "") for b in system)
        if isinstance(system, list)
        else str(system or "")
    )


def user_text(request) -> str:
    first = request.body["messages"][0]
    content = first["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


def sessions_kept(home: Path) -> list[str]:
    """The transcripts Claude Code kept (CLAUDE_CONFIG_DIR/projects): a child's must never be there."""
    projects = home / ".claude" / "projects"
    return (
        sorted(str(p.relative_to(projects)) for p in projects.rglob("*") if p.is_file())
        if projects.exists()
        else []
    )


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_call_kind_reaches_the_model_as_memcurates_prompts_and_comes_back_typed(
    kind, backend, claude_home
):
    call, schema, system, user, answer, check = KINDS[kind]
    drafter, api, children = backend([Turn("", [ToolUse(TOOL, answer)])])
    result = call(drafter)
    said = f"{kind}: error={result.error!r}\nchild: {children}\nrequests:\n{api.describe()}"

    [(out, _, code)] = children
    cli = json.loads(out)
    assert code == 0 and cli.get("structured_output") == answer, (
        f"the CLI did not take the call's argv\n{said}"
    )
    assert result.error is None, said
    check(result)
    # the tool call ends the child: one request
    assert len(api.conversation) == 1 and api.unserved == 0, said
    request = api.conversation[0]
    assert system in system_text(request), (
        f"{kind}: memcurate's system prompt is not the request's system\n{said}"
    )
    tools = request.body.get("tools") or []
    offered = [t["name"] for t in tools if not t.get("defer_loading")]
    assert offered == [TOOL], (
        f"{kind}: the model was offered tools beyond the structured output: {offered}"
    )
    assert next(t for t in tools if t["name"] == TOOL)["input_schema"] == schema, (
        f"{kind}: the schema changed"
    )
    assert user_text(request) == user, (
        f"{kind}: the prompt on the child's stdin is not the user message\n{said}"
    )
    # the usage the CLI reports (the scripted API's 10 in, 10 out) and its price of it land in the result
    usage = cli["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (10, 10) and cli[
        "total_cost_usd"
    ] > 0, cli
    assert (result.tokens_in, result.tokens_out, result.cost_usd) == (
        10,
        10,
        cli["total_cost_usd"],
    ), (
        f"{kind}: usage {result.tokens_in}/{result.tokens_out}, cost {result.cost_usd}; the CLI said {usage}"
    )
    assert sessions_kept(claude_home) == [], (
        f"{kind}: the child's session was kept: {sessions_kept(claude_home)}"
    )


def test_an_answer_in_text_is_asked_again_by_the_cli_and_the_tool_call_is_what_counts(backend):
    """A model that writes its JSON as text instead of calling StructuredOutput: 2.1.328 asks once more in the
    same child ("[structured-output-enforce] You MUST call the StructuredOutput tool"), and the call it then
    makes is the answer; the child's usage is both requests'."""
    text = dict(DRAFT, title="A title only the text answer has")
    drafter, api, _ = backend([Turn(json.dumps(text)), Turn("", [ToolUse(TOOL, DRAFT)])])
    result = drafter.draft(DECISION)

    assert len(api.conversation) == 2 and "StructuredOutput" in json.dumps(
        api.conversation[1].body["messages"][-1]
    ), api.describe()
    check_draft(result)
    assert (result.tokens_in, result.tokens_out) == (20, 20), (result.tokens_in, result.tokens_out)


def test_a_child_call_runs_no_hook_stages_nothing_and_recalls_nothing(
    backend, cproject, mc, shim, tmp_path, monkeypatch
):
    """memcurate's hooks installed for every project (user scope) do not run inside the child (its
    `--settings` says disableAllHooks), even in a child's folder inside a project (the drafter's temporary
    cwd, under a TMPDIR there). A saved memory on the prompt's subject is there for recall to find: it must
    not reach memcurate's own model."""
    mc("install", "--scope", "user", "--project", str(cproject), project=cproject)
    save_memory(cproject)
    hook_log = tmp_path / "child-hooks"
    hook_log.mkdir()
    drafter, api, _ = backend([Turn("", [ToolUse(TOOL, DRAFT)])])
    monkeypatch.setenv("PATH", f"{shim.parent}:{os.environ['PATH']}")
    monkeypatch.setenv("MEMCURATE_HOOK_LOG", str(hook_log))
    monkeypatch.setattr(tempfile, "tempdir", str(cproject))  # the child's cwd: inside the project

    result = drafter.draft(DECISION)

    assert result.ok, result.error
    hooks = read_hooks(hook_log)
    data = data_dir(cproject, create=False)
    log = read_log(data)
    fired = [h.event for h in hooks]
    assert fired == [], (
        f"hooks ran inside memcurate's child (disableAllHooks not honoured?): {fired}"
    )
    assert RECALLED not in api.conversation[0].text, (
        "memcurate recalled its memories into its own child's prompt"
    )
    assert staging.triage_ids(data) == [], (
        f"a child call staged triages: {staging.triage_ids(data)}\nlog: {log}"
    )
    assert log == [], "a hook inside the child did its work:\n" + "\n".join(log)


# status -> (fatal, retryable, what the error says): what the fallback chain does with it (resilience.py)
FAILURES = {
    401: (True, False, "invalid api key"),
    402: (True, False, "credit balance"),
    529: (False, True, "overloaded"),
}


@pytest.mark.parametrize("status", list(FAILURES))
def test_an_api_failure_is_the_clis_answer_at_once_classified_with_one_request(
    status, backend, claude_home
):
    """Claude Code's own retries are off in the child (CLAUDE_CODE_MAX_RETRIES=0), even for a person whose
    settings.json asks for more: each failure comes back after one request, and memcurate's classification
    decides (bad key, no credit: fatal; overloaded: retry). 2.1.328 left to itself retries a 401 and a 529
    (seven requests in the 59 s before the drafter kills it), not the credit message."""
    (claude_home / ".claude" / "settings.json").write_text(
        json.dumps({"env": {"CLAUDE_CODE_MAX_RETRIES": "10"}})
    )
    fatal, retryable, says = FAILURES[status]
    drafter, api, _ = backend(status=status)
    result = drafter.draft(DECISION)
    said = f"{status}: {result.error!r} in {result.elapsed:.1f}s\nrequests:\n{api.describe()}"

    assert result.error and says in result.error.lower() and result.doc is None, said
    assert (result.fatal, result.retryable) == (fatal, retryable), said
    assert result.elapsed < FAIL_SECONDS, f"the failure took the CLI's retries: {said}"
    assert len(api.conversation) == 1, (
        f"Claude Code retried: {len(api.conversation)} requests\n{said}"
    )
