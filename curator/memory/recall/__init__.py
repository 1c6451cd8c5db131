"""Recall (UserPromptSubmit): the saved memories that bear on a prompt, as context Claude does not have.

    if skip_reason(prompt, cfg) is None:                 # light: "yes" or "/clear" load nothing more
        result = answer.recall(project, data, cfg, prompt, session_id)
        if result.context: ...  # the hook's additionalContext

The steps, each in its module: is the prompt worth a search at all (`skip_reason`: an
acknowledgement, a slash command, too few content words); the index made fresh by its category
folders' stamps and searched across categories (lookup.py); what Claude already has of MEMORY.md
(loaded.py); each chosen memory re-read from its file, so what is given is current and still exists
(a file that is gone, broken or unreadable is left out, and said in `problems`); a memory that reads
as an instruction to the agent (curator/util/instructions.py) withheld, and counted in the log line;
what this session was given before (seen.py); the text, quoted so that nothing in it can pose as the
user, the system or its end, within the budget (context.py).

Never raises for bad data: an unreadable index, a damaged MEMORY.md or a broken memory file mean
fewer results and a line in `problems`. No YAML on this path (the config comes from its JSON
cache; memory files are read with front_matter.light_fields).
"""

from __future__ import annotations


def skip_reason(prompt: str, cfg: dict) -> str | None:
    """Why a prompt is not worth a search (None when it is): a slash command, an acknowledgement
    (triage.acknowledgements), fewer than recall.min_words content words."""
    text = prompt.strip()
    if text.startswith("/"):
        return "slash command"
    folded = " ".join(text.lower().strip(" .!?,;:").split())
    if folded in {a.lower() for a in cfg["triage"]["acknowledgements"]}:
        return "acknowledgement"
    from memcurate.curator.memory.index.terms import (
        words,  # only now: a slash command or "yes" never loads the index
    )

    if len(set(words(text[:2000]))) < cfg["recall"]["min_words"]:
        return "too few content words"
    return None
