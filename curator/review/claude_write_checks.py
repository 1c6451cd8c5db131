"""Verification of a staged write of Claude's own (curator/candidates/claude_writes.py), as issues.

The same Issue type and severities as a draft (curator/verify/checks.py):
- BLOCK: a secret in the text (redacted when it was staged: the kinds in the
  record's `secrets`; the redacted text is never saved as Claude's file); front
  matter that does not parse; a MEMORY.md whose memcurate markers cannot be read.
- ADVISORY: front matter without Claude Code's auto-memory fields (name,
  description, type in user | feedback | project | reference); MEMORY.md over
  the lines or bytes Claude Code loads (the rest is never read); a topic file
  that no MEMORY.md line links to (Claude Code loads only MEMORY.md: nothing
  leads Claude to an unlinked file).
"""

from __future__ import annotations

import posixpath
import re

from memcurate.curator.candidates import claude_writes
from memcurate.curator.memory.memory_md.format import MemoryMdError, read_text
from memcurate.curator.memory.memory_md.loaded import limits_from, loaded
from memcurate.curator.memory.memory_md.planning import keep_sections
from memcurate.curator.memory.memory_md.writing import FILE_NAME, memory_md_path
from memcurate.curator.verify.checks import ADVISORY, BLOCK, Issue, secret_issues

TYPES = ("user", "feedback", "project", "reference")
FIELDS = ("name", "description", "type")
_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def is_memory_md(record: dict) -> bool:
    return record["where"] == FILE_NAME


def front_matter(text: str) -> tuple[dict | None, str | None]:
    """(fields, None) of a text that opens with `---`, (None, why) when they do not parse, (None, None)
    when it has no front matter."""
    if not text.startswith("---"):
        return None, None
    lines = text.split("\n")
    if lines[0].rstrip("\r") != "---":
        return None, "the first line opens front matter but is not exactly ---"
    for i, line in enumerate(lines[1:], 1):  # noqa: B007 (i: the closing line, read after the loop)
        if line.rstrip("\r") == "---":
            break
    else:
        return None, "the front matter has no closing --- line"
    import yaml  # the engine side only: the hook never checks

    try:
        fields = yaml.safe_load("\n".join(lines[1:i]))
    except yaml.YAMLError as e:
        return None, f"the front matter is not valid YAML: {getattr(e, 'problem', None) or e}"
    if fields is None:
        fields = {}
    if not isinstance(fields, dict):
        return None, "the front matter is not a mapping of fields"
    return fields, None


def check(record: dict, cfg: dict, data, records: list[dict] | None = None) -> list[Issue]:
    """The issues of a staged write (`data`: the data dir, where other staged writes are; `records`: all
    of them, when the caller has read them already: checking each of many must not read them all again)."""
    text, where = record["text"], record["where"]
    issues = secret_issues(text, [(where, text)])
    redacted = record.get("secrets") or []
    if redacted:
        issues.append(
            Issue(
                BLOCK,
                "secret",
                where,
                f"Claude's write held a secret ({', '.join(redacted)}), kept "
                "redacted: it cannot be saved; reject it and ask Claude to write it without the secret",
            )
        )
    fields, why = front_matter(text)
    if why:
        issues.append(Issue(BLOCK, "front-matter", f"{where}: front matter", why))
    elif fields is not None:
        missing = [f for f in FIELDS if not (isinstance(fields.get(f), str) and fields[f].strip())]
        if missing:
            issues.append(
                Issue(
                    ADVISORY,
                    "front-matter",
                    f"{where}: front matter",
                    f"no {', '.join(missing)}: Claude Code's memory files carry name, description "
                    f"and type ({' | '.join(TYPES)})",
                )
            )
        elif fields["type"] not in TYPES:
            issues.append(
                Issue(
                    ADVISORY,
                    "front-matter",
                    f"{where}: type",
                    f"type is {fields['type']!r:.40}; Claude Code's types are {' | '.join(TYPES)}",
                )
            )
    if is_memory_md(record):
        issues += _budget_issues(record, cfg)
    elif where.endswith(".md") and not _linked(record, data, records):
        issues.append(
            Issue(
                ADVISORY,
                "unlinked",
                where,
                f"no line of MEMORY.md links to {where}: Claude Code loads only MEMORY.md, so Claude "
                "finds this file only by chance; add a line that links to it",
            )
        )
    return issues


def _budget_issues(record: dict, cfg: dict) -> list[Issue]:
    try:
        text = keep_sections(record["text"], read_text(record["path"]))
    except MemoryMdError as e:
        return [Issue(BLOCK, "memory-md", FILE_NAME, f"memcurate's sections cannot be read: {e}")]
    seen = loaded(text, *limits_from(cfg))
    if not seen.cut:
        return []
    return [
        Issue(
            ADVISORY,
            "budget",
            FILE_NAME,
            "MEMORY.md would be past Claude Code's load limit, what is past "
            f"the cut is not loaded; Claude Code would say: {seen.why}",
        )
    ]


def _linked(record: dict, data, records: list[dict] | None) -> bool:
    """Whether MEMORY.md of the record's folder (its pending staged version, else the file) links to it."""
    index = memory_md_path(record["folder"])
    staged = claude_writes.pending_for(data, index, records, memory_dir=record["folder"])
    try:
        text = staged["text"] if staged else read_text(index)
    except MemoryMdError:
        return True  # not readable as text: no advice from it
    target = posixpath.normpath(record["where"].replace("\\", "/"))
    return any(posixpath.normpath(link) == target for link in _LINK.findall(text or ""))
