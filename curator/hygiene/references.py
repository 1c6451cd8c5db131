"""Memories whose references to the project went stale: files that are gone (stale-file), commands
whose target is gone (stale-command), code symbols found nowhere (stale-symbol), and files that changed
a lot since the memory was written (churn).

What counts as a reference, to keep false positives out: a path has a `/` and an extension, is
relative to the project (or absolute inside it), and is not a URL, a glob, under node_modules, or in a
fenced code block (examples); a command or symbol is inline code (`make test`, `MemoryIndex`). An
empty project (nothing tracked, or no file at all without git) proves nothing and is not checked. A
path that never existed in git history is still reported, at low severity.

An "update" proposal marks the sentence naming each stale reference with memcurate's marker,
` **[memcurate: <note>: `<name>`]**`, and stamps the memory's `updated`. The scan knows the marker: its
text is no reference, and a name already marked with a note is not reported for that note again, so an
approved marker resolves its finding (churn is measured from `updated`).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from memcurate.curator.hygiene import Finding, fix
from memcurate.curator.hygiene.project_facts import ProjectFacts
from memcurate.curator.hygiene.texts import Text, memory_texts
from memcurate.curator.library.entries import MEMCURATE, line_hash
from memcurate.curator.util.stamps import now_iso

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context

_FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.M | re.S)
_CODE = re.compile(r"`([^`\n]+)`")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I)
# A Markdown link's target is relative to the memory file (MEMORY.md's `[x](decision/x.md)`), not the project:
# a link that leads nowhere is the missing-link finding's
_LINK_TARGET = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_PATH = re.compile(
    r"(?<![\w/.~$@-])((?:\.{1,2}/)?[\w.-]+(?:/[\w.-]+)+\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/])"
)
_COMMAND = re.compile(
    r"^(?:(make|just)\s+([A-Za-z0-9_][\w.-]*)|npm run\s+([\w:.-]+)|"
    r"(?:uv run\s+)?python3?\s+-m\s+([A-Za-z_][\w.]*)|uv run\s+([\w./-]+\.py))\b"
)
_CAMEL = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\Z")
# a capital and lowercase after it: PostgreSQL has one, MemoryIndex two
_HUMP = re.compile(r"[A-Z][a-z0-9]+")
# CamelCase words that name products and languages, not the project's code
_PRODUCTS = frozenset(
    """github gitlab bitbucket javascript typescript coffeescript postgresql postgres mysql
mariadb mongodb sqlite dynamodb cockroachdb clickhouse elasticsearch opensearch redis rabbitmq fastapi graphql
openai chatgpt anthropic claudecode vscode intellij pycharm webstorm jetbrains macos ios ipados watchos tvos
iphone ipad youtube linkedin facebook whatsapp wordpress cloudflare cloudfront digitalocean netlify vercel
nextjs nodejs reactjs vuejs sveltekit nuxtjs tailwindcss pytorch tensorflow numpy scipy matplotlib
powershell devops gitops sharepoint onedrive dropbox bigquery snowflake dbt jupyterlab homebrew
testflight xcode appstore playstation microsoft openapi oauth webassembly webrtc websocket websockets
localstorage pubsub mcpserver""".split()
)
_CALL = re.compile(r"([a-z_][a-z0-9_]*)\(.*\)?\Z")
_DOTTED = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+(?:\(\))?\Z")
_FILE_EXTS = frozenset(
    "md py json yaml yml toml txt js ts tsx jsx sh cfg ini lock html css rs go java rb c h "
    "cpp log csv sql env".split()
)
MARKER = "memcurate"
NOTES = ("no longer exists", "command target gone", "not in the project", "changed a lot since")
# memcurate's marker (and the first form, without the "memcurate: " prefix, which the same notes make plain)
_MARK = re.compile(
    r" ?\*\*\[(?:" + MARKER + r": )?(" + "|".join(map(re.escape, NOTES)) + r"): `([^`\n]+)`\]\*\*"
)
CHURN_LINES = 200
CHURN_SHARE = 0.5
CHURN_MIN = 20  # a ten-line file rewritten is not news


def detect(engine: Context) -> list[Finding]:
    facts = ProjectFacts(engine.project)
    if not facts.has_files:
        return []
    texts = [t for t in memory_texts(engine) if t.entry.status == "active"]
    refs = {t.ref: scan(t.text[t.body_start :], engine.project) for t in texts}
    for r in refs.values():
        r["symbols"] = [s for s in r["symbols"] if _own_symbol(s, facts)]
    found = facts.symbols_found({s.rsplit(".", 1)[-1] for r in refs.values() for s in r["symbols"]})
    findings: list[Finding] = []
    for t in texts:
        r = refs[t.ref]
        marked = r["marked"]
        start = len(findings)
        findings += _stale_files(t, r["paths"], facts, marked.get("no longer exists", set()))
        findings += _stale_commands(
            t,
            [c for c in r["commands"] if c[0] not in marked.get("command target gone", ())],
            facts,
        )
        shown = marked.get("not in the project", ())
        names = (s.rsplit(".", 1)[-1] for s in r["symbols"])
        missing = [name for name in names if name not in found and name not in shown]
        if missing:
            findings.append(
                _finding(
                    t,
                    "stale-symbol",
                    "low",
                    missing,
                    f"names {_list(missing)}, found nowhere in the project's files",
                    "not in the project",
                )
            )
        findings += _churn(t, r["paths"], facts)
        _one_change(t, findings[start:])
    return findings


# The note each finding's markers carry (NOTES, by the finding's code).
NOTE_OF = {
    "stale-file": "no longer exists",
    "stale-command": "command target gone",
    "stale-symbol": "not in the project",
    "churn": "changed a lot since",
}


def _one_change(t: Text, found: list[Finding]) -> None:
    """Findings about one memory propose one change: each fix is based on the same bytes, so two proposals
    would have the person approve one and see the other refused. An archive covers them all (what the
    memory names is gone); otherwise one write holds every finding's markers. check shares a proposal
    between findings whose fixes are the same change."""
    fixed = [f for f in found if f.detail.get("fix")]
    if len(fixed) < 2:
        return
    archive = next(
        (f.detail["fix"] for f in fixed if f.detail["fix"]["kind"] in ("archive", "unlink")), None
    )
    if archive is None:
        text = t.text
        for f in fixed:
            text = mark(text, t.body_start, f.detail["named"], NOTE_OF[f.code])
        if t.entry.owner == MEMCURATE:
            text = stamped(text, now_iso())
        codes = ", ".join(f.code.replace("-", " ") for f in fixed)
        archive = fix(
            "update",
            f"Review {t.ref}: {codes}",
            f"{t.entry.where}: "
            + "; ".join(f.message.split(") ", 1)[-1] for f in fixed)
            + ". Proposed: the sentences naming them marked for you to edit.",
            [{"op": "write", "ref": t.ref, "base_hash": t.entry.hash, "text": text}],
        )
    for f in fixed:
        f.detail["fix"] = archive


def scan(body: str, project: str) -> dict:
    """The paths (relative to the project), commands and symbols a memory's body names, and what
    memcurate's markers already say of them ("marked": note -> the names marked with it)."""
    prose = _FENCE.sub("", body)
    marked: dict[str, set[str]] = {}
    for note, name in _MARK.findall(prose):
        marked.setdefault(note, set()).add(name)
    prose = _MARK.sub("", prose)
    codes = _CODE.findall(prose)
    paths: list[str] = []
    for raw in _PATH.findall(_URL.sub(" ", _LINK_TARGET.sub("]", prose))):
        rel = _project_path(raw, project)
        if rel and rel not in paths:
            paths.append(rel)
    for code in codes:  # an absolute path inside the project, in inline code
        if code.startswith("/"):
            rel = _project_path(code.strip(), project)
            if rel and rel not in paths:
                paths.append(rel)
    commands, symbols = [], []
    for code in codes:
        code = code.strip()
        m = _COMMAND.match(code)
        if m:
            commands.append((code, m.groups()))
            continue
        sym = _symbol(code)
        if sym and sym not in symbols:
            symbols.append(sym)
    return {"paths": paths, "commands": commands, "symbols": symbols, "marked": marked}


def _project_path(raw: str, project: str) -> str | None:
    if any(c in raw for c in "*?[]{}<>$~") or "node_modules" in raw.split("/"):
        return None
    if raw.startswith("/"):
        if not raw.startswith(project.rstrip("/") + "/"):
            return None  # outside the project: nothing to say
        raw = os.path.relpath(raw, project)
    norm = os.path.normpath(raw).replace(os.sep, "/")
    if norm.startswith("../") or "/" not in norm or _prose(norm, project):
        return None
    return norm


_DOMAIN = re.compile(r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\Z")  # github.com, docs.python.org
_ABBREVIATION = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]?\Z")  # e.g., i.e
_PROSE_PAIRS = frozenset({"and/or", "either/or", "w/o", "n/a", "y/n"})


def _prose(norm: str, project: str) -> bool:
    """Whether a slashed word is prose, not a path: a domain (`github.com/acme/tools.git`), an
    abbreviation (`e.g./i.e`), a sentence's next word taken for an extension (`and/or.Then`)."""
    parts = norm.split("/")
    if any(_ABBREVIATION.match(p) or not p.strip(".") for p in parts):
        return True
    if "/".join(parts[:2]).lower().split(".")[0] in _PROSE_PAIRS:
        return True
    ext = norm.rsplit(".", 1)[-1]
    if ext[:1].isupper() and not ext.isupper():
        return True  # `.Then`: a sentence starting, not an extension
    return bool(_DOMAIN.match(parts[0])) and not os.path.isdir(os.path.join(project, parts[0]))


def _symbol(code: str) -> str | None:
    """The identifier to look for, when inline code looks like code (None when it does not)."""
    if " " in code:
        return None
    if _CAMEL.match(code):
        humps = _HUMP.findall(code)
        return code if len(humps) >= 2 and code.lower() not in _PRODUCTS else None
    m = _CALL.match(code)
    if m and "_" in m.group(1):
        return m.group(1)
    if _DOTTED.match(code):
        parts = code.removesuffix("()").split(".")
        if parts[-1] in _FILE_EXTS or len(parts[-1]) < 3:
            return None
        return f"{parts[0]}.{parts[-1]}"  # its root, judged with the project (see _own_symbol)
    return None


def _own_symbol(sym: str, facts: ProjectFacts) -> bool:
    """Whether a symbol looks like the project's own code: not a dependency's name, and a dotted name
    only when its root is a module of the project (`pytest.approx` is pytest's)."""
    names = facts.dependencies
    if "." in sym:
        root = sym.split(".", 1)[0]
        return root.replace("_", "-") not in names and facts.is_module(root)
    return sym.lower().replace("_", "-") not in names


def _list(items: list[str], n: int = 3) -> str:
    shown = ", ".join(f"`{i}`" for i in items[:n])
    return shown + (f" and {len(items) - n} more" if len(items) > n else "")


def mark(text: str, start: int, needles: list[str], note: str) -> str:
    """`text` with ` **[memcurate: <note>: `needle`]**` after the sentence that names each needle (body
    only; a needle already marked with `note` is left as it is)."""
    for needle in needles:
        if any(m.group(1) == note and m.group(2) == needle for m in _MARK.finditer(text, start)):
            continue
        at = _unmarked_find(text, needle, start)
        if at < 0:
            continue
        eol = text.find("\n", at)
        eol = len(text) if eol < 0 else eol
        m = re.search(r"[.!?](?=\s|$)", text[at + len(needle) : eol])
        end = at + len(needle) + m.end() if m else eol
        text = text[:end] + f" **[{MARKER}: {note}: `{needle}`]**" + text[end:]
    return text


def _unmarked_find(text: str, needle: str, start: int) -> int:
    """Where `needle` first stands in `text` from `start`, outside memcurate's markers (-1: nowhere)."""
    spans = [m.span() for m in _MARK.finditer(text, start)]
    at = text.find(needle, start)
    while at >= 0 and any(a <= at < b for a, b in spans):
        at = text.find(needle, at + 1)
    return at


def stamped(text: str, when: str) -> str:
    """A memcurate memory's `text` with `updated: when` (the file as the change writes it); `text` as it
    is when it has no front matter to stamp (a topic file of Claude's) or cannot be read as a memory."""
    from dataclasses import replace

    from memcurate.curator.memory import memfile

    try:
        doc = memfile.parse(text)
    except memfile.MemoryFormatError:
        return text
    return memfile.render(replace(doc, updated=when))


def _finding(
    t: Text,
    code: str,
    severity: str,
    named: list[str],
    what: str,
    note: str,
    *,
    archive: bool = False,
    extra: dict | None = None,
) -> Finding:
    where = t.entry.where if not t.is_line else f"MEMORY.md line {t.entry.line}"
    message = f"{t.ref} ({where}) {what}"
    detail = {"where": where, "named": named, **(extra or {})}
    if t.is_line:
        if archive:
            detail["fix"] = fix(
                "unlink",
                f"Remove Claude's MEMORY.md line about {named[0]}",
                f"Claude's line {t.entry.line} of MEMORY.md {what}.",
                [{"op": "drop_line", "ref": t.ref, "base_hash": line_hash(t.text)}],
            )
    elif archive:
        detail["fix"] = fix(
            "archive",
            f"Archive {t.ref}: what it names is gone",
            f"{t.entry.where} {what}. Proposed: archive it (the file is kept).",
            [{"op": "archive", "ref": t.ref, "base_hash": t.entry.hash}],
        )
    # its secret proposal comes first: a record never holds the key, and
    elif _holds_secret(t.text):
        # redacting it here would take the key's bytes under another title
        detail["waits_for"] = "secret"
        message += " (its proposal waits until the secret in it is removed)"
    else:
        marked = mark(t.text, t.body_start, named, note)
        if t.entry.owner == MEMCURATE and (marked != t.text or code == "churn"):
            # reviewed now: churn counts from here, marked or not
            marked = stamped(marked, now_iso())
        if marked != t.text:
            detail["fix"] = fix(
                "update",
                f"Review {t.ref}: {code.replace('-', ' ')}",
                f"{t.entry.where} {what}. Proposed: the sentences naming them marked for you "
                "to edit.",
                [{"op": "write", "ref": t.ref, "base_hash": t.entry.hash, "text": marked}],
            )
    return Finding(code, severity, (t.ref,), message, detail)


def _resolved(p: str, paths: list[str]) -> list[str]:
    """Where a path may be: relative to the project, or to the folder of another file the memory names."""
    out = [p]
    for q in paths:
        folder = os.path.dirname(q)
        if folder and q != p and f"{folder}/{p}" not in out:
            out.append(f"{folder}/{p}")
    return out


def _holds_secret(text: str) -> bool:
    from memcurate.curator.util.redact import find_secrets

    return bool(find_secrets(text))


def _stale_files(
    t: Text, paths: list[str], facts: ProjectFacts, marked=frozenset()
) -> list[Finding]:
    # stale only when it is nowhere: not at the project's root, not beside another file the memory names,
    # and no file of the project ends with it (said relative to a subfolder)
    gone = [
        p
        for p in paths
        if not any(facts.exists(r) for r in _resolved(p, paths)) and not facts.ends_with(p)
    ]
    if not gone:
        return []
    ever = facts.ever
    if ever is None:  # without git: only a path whose folder is still there says something
        gone = [p for p in gone if facts.exists(os.path.dirname(p))]
        if not gone:
            return []
        severity = "medium"
    tracked = [
        p
        for p in gone
        if ever is not None
        and (any(r in ever for r in _resolved(p, paths)) or facts.ends_with(p, ever))
    ]
    if ever is not None:
        severity = "medium" if tracked else "low"
    # archived only when all it names is gone and each was the project's once (git tracked it); a path
    # git never held may be a typo or another project's: the person edits the memory instead
    every = len(gone) == len(paths) and len(tracked) == len(gone)
    if not every:  # a path marked already is not news (all gone: the archive is proposed)
        gone = [p for p in gone if p not in marked]
        if not gone:
            return []
    return [
        _finding(
            t,
            "stale-file",
            severity,
            gone,
            _gone_said(gone, tracked, ever is not None),
            "no longer exists",
            archive=every,
            extra={"ever_tracked": tracked},
        )
    ]


def _gone_said(gone: list[str], tracked: list[str], with_git: bool) -> str:
    """What a stale-file finding says: a path git once held "no longer exists"; one git never held is only
    "not in the project" (a typo, another project's file, or one never committed)."""
    was = [p for p in gone if p in tracked or not with_git]
    never = [p for p in gone if p not in was]
    said = []
    if was:
        said.append(
            f"{_list(was)}, which no longer exist{'s' if len(was) == 1 else ''} in the project"
        )
    if never:
        one = len(never) == 1
        said.append(
            f"{_list(never)}, which {'is' if one else 'are'} not in the project "
            f"(git never had {'it' if one else 'them'})"
        )
    return "names " + "; and ".join(said)


def _stale_commands(t: Text, commands: list, facts: ProjectFacts) -> list[Finding]:
    stale, why = [], []
    for code, (tool, target, script, module, pyfile) in commands:
        if tool == "make":
            name, targets = facts.make_targets
            problem = (
                "there is no Makefile"
                if name is None
                else None
                if targets is None or target in targets
                else f"{name} has no target {target}"
            )
        elif tool == "just":
            name, targets = facts.just_recipes
            problem = (
                "there is no justfile"
                if name is None
                else None
                if targets is None or target in targets
                else f"{name} has no recipe {target}"
            )
        elif script:
            name, scripts = facts.npm_scripts
            problem = (
                "there is no package.json"
                if name is None
                else None
                if scripts is None or script in scripts
                else f"package.json has no script {script}"
            )
        elif module:
            problem = f"no module {module}" if facts.module_exists(module) is False else None
        else:
            problem = None if facts.exists(pyfile) else f"no file {pyfile}"
        if problem:
            stale.append(code)
            why.append(problem)
    if not stale:
        return []
    return [
        _finding(
            t,
            "stale-command",
            "medium",
            stale,
            f"names {_list(stale)}, but {'; '.join(why[:3])}",
            "command target gone",
            extra={"why": why},
        )
    ]


def _churn(t: Text, paths: list[str], facts: ProjectFacts) -> list[Finding]:
    since = t.entry.updated
    if not since or t.is_line:
        return []
    moved = []
    for p in paths:
        changed = facts.changed_lines(p, since)
        if changed is None or changed < CHURN_MIN:
            continue
        lines = facts.line_count(p)
        if changed >= CHURN_LINES or changed >= CHURN_SHARE * max(lines, 1):
            moved.append((p, changed, lines))
    if not moved:
        return []
    named = [p for p, _, _ in moved]
    said = ", ".join(f"`{p}` ({c} lines changed, {n} now)" for p, c, n in moved[:3])
    return [
        _finding(
            t,
            "churn",
            "low",
            named,
            f"was written before {said} changed a lot: review it",
            "changed a lot since",
            extra={"changes": [{"path": p, "changed": c, "lines": n} for p, c, n in moved]},
        )
    ]
