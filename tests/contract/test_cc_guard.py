"""Contract: the write guard's answer reaches the model through the real Claude Code, and review mode holds
Claude's own memory writes until the person approves them."""

from __future__ import annotations

import json
from pathlib import Path

from contract.api import ToolUse, Turn
from memcurate.curator import config
from memcurate.curator.util.paths import data_dir, memory_root


def auto_memory(project: Path) -> Path:
    """The memory root memcurate derives for the project (Claude Code's auto-memory folder)."""
    return Path(memory_root(project, config.load(project, data_dir(project)), data_dir(project)))


def tool_result(run, tool_use_id: str) -> dict:
    """The tool_result for `tool_use_id` in the request after the call: what the model was told."""
    for request in run.api.conversation:
        for message in request.body.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id:
                    return block
    raise AssertionError(f"no request carried the tool_result of {tool_use_id}\n{run.explain()}")


def result_text(block: dict) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def test_a_denied_write_into_the_memory_root_reaches_the_model_as_a_tool_error(
    installed, run_claude
):
    target = auto_memory(installed) / "decision" / "use-sqlite.md"
    script = [
        Turn(
            "Saving a memory.",
            [ToolUse("Write", {"file_path": str(target), "content": "We use SQLite.\n"})],
        ),
        Turn("Understood."),
    ]
    run = run_claude("Remember that we use SQLite.", script, cwd=installed)
    assert run.returncode == 0, run.explain()
    block = tool_result(run, "toolu_0002")
    said = result_text(block)
    assert block.get("is_error") is True, f"the denied Write came back as a success: {block}"
    assert "managed by memcurate" in said and "memcurate's decision category" in said, (
        f"the guard's reason did not reach the model; the tool_result says: {said!r}"
    )
    assert not target.exists(), f"Claude Code wrote {target} although the guard denied it"
    pre = [h for h in run.hooks if h.event == "PreToolUse"]
    assert pre and '"permissionDecision": "deny"' in pre[0].stdout, [h.stdout for h in pre]


def test_review_mode_holds_claudes_memory_write_until_approved(cproject, mc, run_claude):
    mc("install", "--project", str(cproject), "--review-auto-memory", project=cproject)
    target = auto_memory(cproject) / "feedback_tabs.md"
    content = "---\nname: tabs\ndescription: the person indents with tabs\nmetadata:\n  type: feedback\n---\n\nTabs.\n"
    script = [
        Turn(
            "Saving a memory.", [ToolUse("Write", {"file_path": str(target), "content": content})]
        ),
        Turn("Queued."),
    ]
    run = run_claude("Remember that I indent with tabs.", script, cwd=cproject)
    assert run.returncode == 0, run.explain()
    said = result_text(tool_result(run, "toolu_0002"))
    assert "queued for the person's approval" in said, (
        f"review mode's answer did not reach the model: {said!r}"
    )
    assert not target.exists(), f"review mode let Claude Code write {target} before approval"

    wid = said.split("approval as ", 1)[1].split(" ", 1)[0]
    items = json.loads(mc("list", "--json", project=cproject).stdout)["items"]
    held = [i for i in items if i["id"] == wid]
    assert held and held[0]["kind"] == "claude-write" and held[0]["where"] == target.name, (
        f"`memcurate list` does not show the held write {wid} of {target.name}: {items}"
    )
    mc("approve", wid, project=cproject)
    assert target.read_text() == content, (
        "approving the held write did not write exactly what Claude asked to"
    )
