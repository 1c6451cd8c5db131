"""The names review speaks in: an item's states, the kinds' names, the verbs a front end asks a kind
about and how a Detail is edited (curator/review/items.py holds the item shapes that use them).

Kept apart from items.py, whose dataclasses are compiled when it is imported: the TUI names these before
its first frame and imports the shapes after it, with the engine."""

from __future__ import annotations

READY = "ready"
# A record that cannot be read or does not check out (a forged target, a rule the ledger does not back, a
# proposal leaving the memory root): listed with why (`error`), never shown as a change nor acted on.
ERROR = "error"
# Kinds' names (ReviewItem.kind) a front end names without importing the kind (the TUI's start: rows by kind)
MEMORY, CLAUDE_WRITE, RULE = "memory", "claude-write", "rule"
# The sessions of a rule's evidence its view carries and the TUI draws, the newest: a failure that keeps
# recurring would otherwise grow its document, and what the app keeps of it, each time it lands again.
EVIDENCE_SESSIONS = 5
# shown by `list --all` only; an id of one is never acted on
FINAL = (
    "saved",
    "rejected",
    "skipped",
)

# What a front end asks of an item (Kind.why_not): the verbs its keys and commands map to.
APPROVE, REJECT, EDIT, EDIT_TEXT, CHANGE, RETRY = (
    "approve",
    "reject",
    "edit",
    "edit_text",  # the text edited outside (in $EDITOR), as plain text
    "change_action",
    "retry",
)
# How a Detail is edited (Detail.editor): its text, the kind's own fields, or not at all.
TEXT, FIELDS = "text", "fields"
