"""UserPromptSubmit: saved memories that bear on the prompt, added to Claude's context.

Prints Claude Code's hook JSON (`hookSpecificOutput.additionalContext`) when there is something to
add, nothing otherwise; always exits 0. One log line per call, naming the memories given and those
withheld because they read as an instruction to the agent, never the prompt's text. The engine side
is curator/memory/recall/; this module imports it only when a prompt is worth a search, so the other
events and trivial prompts do not pay for SQLite.
"""

from __future__ import annotations

import sys

from memcurate.curator.util import fastjson
from memcurate.curator.util.log import log_line

from . import hook_config

EVENT = "UserPromptSubmit"


def handle(
    payload: dict, project: str, data: str, *, env=None, session_dirs=(), review_auto_memory=False
) -> int:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        log_line(data, EVENT, "recall: no prompt in hook input: nothing recalled")
        return 0
    cfg = hook_config.load(project, data, EVENT, "nothing recalled")
    if cfg is None:
        return 0
    from memcurate.curator.memory.recall import skip_reason

    why = skip_reason(prompt, cfg)
    if why:  # before the engine is imported: "yes" and "/clear" cost no more than a Stop with nothing new
        log_line(data, EVENT, f"recall: skipped: {why}")
        return 0
    from memcurate.curator.memory.recall.answer import recall

    session = payload.get("session_id") if isinstance(payload.get("session_id"), str) else ""
    transcript = (
        payload.get("transcript_path") if isinstance(payload.get("transcript_path"), str) else ""
    )
    result = recall(project, data, cfg, prompt, session, env=env, transcript=transcript)
    log_line(data, EVENT, "recall: " + "; ".join([result.note, *result.problems]))
    if result.context:
        out = {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": result.context}}
        sys.stdout.write(fastjson.dumps(out, ensure_ascii=False) + "\n")
    return 0
