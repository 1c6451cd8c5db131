"""Secrets in any memory file: memcurate's memories, Claude's topic files, MEMORY.md (line by line)
and the archive files. Each is high severity; its proposal replaces the secrets with [REDACTED:<kind>]
(curator/util/redact.py): a memory or topic file is written whole, redacted; MEMORY.md and the archive
files change only the lines holding one (`replace_line`: a line of Claude's, a memcurate entry line, a
line of an archive file), every other byte as it was."""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from functools import lru_cache
from typing import TYPE_CHECKING

from memcurate.curator.categories import CATEGORIES
from memcurate.curator.hygiene import Finding, fix
from memcurate.curator.hygiene.texts import memory_texts
from memcurate.curator.library.entries import CLAUDE, file_ref, line_hash, line_ref
from memcurate.curator.memory.memory_md.format import (
    _ENTRY,
    IndexLine,
    MemoryMdError,
    parse,
    read_text,
)
from memcurate.curator.memory.memory_md.writing import memory_md_path
from memcurate.curator.util.paths import ARCHIVE_DIR

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

MEMORY_MD_REF = f"{CLAUDE}/MEMORY.md"


def detect(engine: Context) -> list[Finding]:
    from memcurate.curator.util.redact import find_secrets, redact_text

    findings = []
    # MEMORY.md's lines are checked with the file, below
    texts = [t for t in memory_texts(engine) if not t.is_line]
    for i in may_hold_secrets([t.text for t in texts]):
        t = texts[i]
        kinds = find_secrets(t.text)
        if kinds:
            findings.append(
                _finding(
                    t.ref,
                    t.entry.where,
                    t.text,
                    kinds,
                    [
                        {
                            "op": "write",
                            "ref": t.ref,
                            "base_hash": t.entry.hash,
                            "text": redact_text(t.text),
                        }
                    ],
                )
            )
    for where, text in _archive_files(engine.root):
        kinds = find_secrets(text)
        if kinds:
            ref = file_ref(where)
            ops: dict[str, dict] = {}
            for line in text.split("\n"):
                if line.strip() and find_secrets(line):
                    ops.setdefault(line_hash(line), _replace(ref, line, redact_text(line.strip())))
            findings.append(_finding(ref, where, text, kinds, list(ops.values())))
    findings += _memory_md(engine, find_secrets, redact_text)
    return findings


# -- the prescan ---------------------------------------------------------------------------------------

# What every match of a redaction rule (curator/util/redact.py) holds, in the text lowercased: a text
# none of these match holds no secret redaction would find, and is not redacted at all (at 10,000
# memories redacting each costs a fifth of a second; these, over all of them at once, a tenth of that).
# Each is a rule's own pattern made looser (lowercased, lookarounds and value tests dropped, shorter
# runs), so it matches wherever the rule does; each starts with a literal, which sre finds fast.
# None of them matches both a NUL and a newline: texts joined by "\0\n" never match across two.
# tests/engine/test_check_prescan.py holds each rule's samples to it.
_AFTER_NAME = r"[a-z0-9_.\-]*[\"']?[ \t]*[:=]"  # `_ASSIGNMENT`: the name's rest, then `:` or `=`
# the spoken rules: "… for the staging box is", then ":", a quote, or a run that holds a digit
_SAID = (
    r"[a-z0-9_.\- \t]{0,80} (?:is|was)(?:[ \t]+(?:now|still|set[ \t]+to))?"
    r"(?:[ \t]*:|[ \t]+[\"'`]|[ \t]+[^\s\"'`,;)}\]]{0,80}[0-9])"
)
_PIN = r"in(?: code)? {1,4}(?:is|was)[ \t]*:?[ \t]*[\"'`]?[0-9]{4}"  # "the pin is 4829"
_LOGIN = r"(?:[ \t]*[:/][ \t]*|[ \t]+@?[ \t]*)[^\s\"'`,;)}\]]{6}"
_PRESCAN = (
    r"-----begin",  # private-key
    # sk- (anthropic-key, openai-key), sk_live_ / rk_test_ (stripe-key), key = (assignments), "the key is"
    rf"k(?:-[a-z0-9_\-]{{20}}|_(?:live|test)_[a-z0-9]{{16}}|ey{_AFTER_NAME}|ey{_SAID})",
    # aws-access-key, google-api-key, an admin login
    rf"a(?:(?:kia|sia|gpa|ida|roa|npa|nva|ipa)[a-z0-9]{{16}}|iza[0-9a-z_\-]{{35}}|dmin{_LOGIN})",
    rf"secret(?:(?:_?access_?key)?\"?\s*[:=]|{_AFTER_NAME}|{_SAID})",  # aws-secret-key, password
    rf"p(?:ass{_AFTER_NAME}|wd{_AFTER_NAME}|ass{_SAID}|{_PIN})",
    rf"token(?:{_AFTER_NAME}|{_SAID})",
    rf"credential{_AFTER_NAME}",
    r"gh[pousr]_[a-z0-9]{36}",  # github-token
    r"github_pat_[a-z0-9_]{22}",
    r"glpat-[a-z0-9_\-]{20}",  # gitlab-token
    r"xox[abposre]-",  # slack-token
    r"eyj[a-z0-9_\-]{8,}\.eyj",  # jwt
    r"bearer\s+[a-z0-9._~+/\-]{20}",  # bearer-token
    r"://[^\s:/@\[\]]+:[^\s@/\[\]]+@",  # url-credentials
    rf"root{_LOGIN}",
)
_JOIN = "\0\n"


def may_hold_secrets(texts: list[str]) -> list[int]:
    """The indexes of `texts` a redaction may find a secret in, in order: each text the prescan
    matches, and each whose lowercase is not as long as it (redaction reads such a text apart)."""
    lowered = [t.lower() for t in texts]
    found = {i for i, (t, low) in enumerate(zip(texts, lowered)) if len(low) != len(t)}
    starts = []
    at = 0
    for low in lowered:
        starts.append(at)
        at += len(low) + len(_JOIN)
    joined = _JOIN.join(lowered)
    for pattern in _prescan():
        for m in pattern.finditer(joined):
            found.add(bisect_right(starts, m.start()) - 1)
    return sorted(found)


@lru_cache(maxsize=1)
def _prescan() -> list[re.Pattern]:
    return [re.compile(p) for p in _PRESCAN]


def _replace(ref: str, line: str, new: str) -> dict:
    return {"op": "replace_line", "ref": ref, "base_hash": line_hash(line), "text": new}


def _finding(
    ref: str, where: str, text: str, kinds: list[str], ops: list[dict], refs=None, lines=None
) -> Finding:
    lines = lines or [n for n, line in enumerate(text.split("\n"), 1) if _has_secret(line)]
    at = f" line {lines[0]}" if lines else ""
    said = ", ".join(kinds)
    detail = {"where": where, "kinds": kinds, "lines": lines}
    if ops:
        detail["fix"] = fix(
            "update",
            f"Redact the secret in {where}",
            f"{where} holds {said}; every session that loads it sees the secret. Proposed: the "
            "same text with the secret replaced by [REDACTED:<kind>] (rotate the secret too).",
            ops,
        )
    return Finding(
        "secret", "high", tuple(refs or (ref,)), f"{where}{at} holds a secret ({said})", detail
    )


def _has_secret(line: str) -> bool:
    from memcurate.curator.util.redact import find_secrets

    return bool(find_secrets(line))


def _archive_files(root: str):
    """(where, text) of every Markdown file under the archive folder (its entry files and Claude's archived
    topic files; the archived memories in `.archive/<category>/` are memories, checked with the others)."""
    top = os.path.join(root, ARCHIVE_DIR)
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and not (folder == top and d in CATEGORIES)
        )
        for name in sorted(files):
            if name.endswith(".md") and not name.startswith("."):
                path = os.path.join(folder, name)
                try:
                    text = read_text(path)
                except ValueError:
                    continue  # not UTF-8: no text to look in
                if text:
                    yield os.path.relpath(path, root).replace(os.sep, "/"), text


def _memory_md(engine: Context, find_secrets, redact_text) -> list[Finding]:
    path = memory_md_path(engine.root)
    try:
        text = read_text(path)
    except ValueError:
        return []
    if not text or not find_secrets(text):
        return []
    # numbered as memory_md numbers them
    parts = (text[1:] if text.startswith("\ufeff") else text).split("\n")
    hits = [i for i, line in enumerate(parts) if find_secrets(line)]
    kinds = sorted({k for i in hits for k in find_secrets(parts[i])}) or find_secrets(text)
    owned: dict[int, str] | None
    try:
        owned = {
            n: cat for cat, s in parse(text).sections.items() for n in range(s.line, s.end_line + 1)
        }
    except MemoryMdError:
        owned = None  # which lines are whose is not known: found, no fix proposed (check says why it is damaged)
    ops: dict[str, dict] = {}
    refs: list[str] = []
    for i in hits if owned is not None else ():
        line = parts[i].strip()
        # Claude's: the line redacted, every other byte of the file as it was
        if i + 1 not in (owned or {}):
            refs.append(line_ref(line))
            ops.setdefault(refs[-1], _replace(refs[-1], line, redact_text(line)))
            continue
        m = _ENTRY.match(line)
        if m is None:
            continue  # a marker or heading cannot hold one and still be read
        e = IndexLine(m.group(3), m.group(2), m.group(1), m.group(4) or "")
        ref = f"{e.category}/{e.id}"
        redacted = IndexLine(e.id, e.category, *(redact_text(x) for x in _unescaped(e)))
        refs.append(ref)
        ops.setdefault(ref, _replace(ref, line, redacted.markdown()))
    refs = list(dict.fromkeys(refs)) or [line_ref(parts[i]) for i in hits] or [MEMORY_MD_REF]
    return [
        _finding(
            MEMORY_MD_REF,
            "MEMORY.md",
            text,
            kinds,
            list(ops.values()),
            refs=refs,
            lines=[i + 1 for i in hits],
        )
    ]


def _unescaped(e: IndexLine) -> tuple[str, str]:
    from memcurate.curator.memory.memory_md.entry import unescape

    return unescape(e.title), unescape(e.description)
