"""A graduation candidate's rule text (docs/design.md §11): the topic, the `paths:` globs and the rule itself.

Offline, the rule is built from the failure's signature and, when the transcript showed it, what
fixed it: a fix said as an instruction ("use the tmp_path fixture", "fixed it by pinning numpy")
becomes the rule; otherwise the rule says what to run or check, and how often it failed. With a
Claude backend the model drafts the rule from the evidence (draft_rule); its answer is validated
like a hand edit and, when it is not usable, the offline rule stands with the reason recorded.

Topics go by the failure's kind (one file per kind of lesson):
    test -> testing, lint -> lint, type -> types, build -> build, runtime -> runtime, command -> commands.

A candidate is anything with `id`, `failure` (the ledger's failure dict) and `occurrences` (the
ledger's per-session records, oldest first): curator/rules/candidates.RuleCandidate, or a stand-in.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from memcurate.curator.rules import ledger, rulefile
from memcurate.curator.util.redact import redact_text
from memcurate.curator.util.textsafe import one_line

TOPICS = {
    "test": "testing",
    "lint": "lint",
    "type": "types",
    "build": "build",
    "runtime": "runtime",
    "command": "commands",
}
# When the kind is missing, the tool says it.
_TOOL_TOPICS = {
    **{t: "testing" for t in ("pytest", "jest", "vitest", "mocha", "unittest", "rspec")},
    **{
        t: "lint"
        for t in ("ruff", "eslint", "flake8", "pylint", "clippy", "golangci-lint", "shellcheck")
    },
    **{t: "types" for t in ("mypy", "pyright", "tsc")},
}
# Folders whose files are never the project's own evidence.
_FOREIGN = (
    "node_modules",
    "site-packages",
    "dist-packages",
    ".venv",
    "venv",
    "__pycache__",
    ".git",
    "target",
    ".tox",
)
MAX_GLOBS = 10
_MESSAGE_MAX = 100
# What a rule never quotes: the signature's placeholders (<tmp>, <n>...), a redaction, a comment marker.
_NOISE = re.compile(r"<[a-z_]{1,12}>|\[REDACTED|<!--|-->")
# An absolute path (someone's home, a system folder): a rule names only the file (group 1).
_ABS_PATH = re.compile(
    r"(?<![\w.:/~])(?:file://)?(?:~|[A-Za-z]:)?[/\\](?:[^\s'\"`:/\\]+[/\\])+([^\s'\"`:/\\]+)"
)
# A temp folder's path (a fix that names one names what changes on every run).
_TEMP_PATH = re.compile(r"(?:/tmp|/var/folders|/private/var|\\Temp)/\S+|pytest-of-", re.I)
_SUBJECT_MAX = 80


def _get(candidate, name: str, default=None):
    if isinstance(candidate, Mapping):
        return candidate.get(name, default)
    return getattr(candidate, name, default)


def topic_for(failure: Mapping) -> str:
    """The topic (file name) a failure's rule goes under: by its kind, else by its tool."""
    kind = str(failure.get("kind") or "")
    return (
        TOPICS.get(kind) or _TOOL_TOPICS.get(str(failure.get("tool") or "").lower()) or "commands"
    )


def _project_file(path) -> str | None:
    """`path` as a project-relative file with `/` separators; None when it is not one (absolute,
    climbing out, a temp or dependency folder)."""
    if not isinstance(path, str) or not path.strip() or not path.isprintable():
        return None
    p = path.strip().replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    parts = p.split("/")
    if (
        p.startswith(("/", "~"))
        or re.match(r"[A-Za-z]:", p)
        or any(x in ("", ".", "..") for x in parts)
    ):
        return None
    if any(x in _FOREIGN for x in parts[:-1]):
        return None
    return p


# What a `paths:` matcher may read as a pattern rather than as the character (picomatch, minimatch,
# gitignore-style: wildcards, classes, braces, extglob and regex groups, `|`, quotes, and `+`, which
# picomatch reads as a quantifier after a class): in a name each is put in a class of its own
# (`*` -> `[*]`), which every one of them reads as that character alone.
_GLOB_SPECIAL = frozenset("*?[]{}()|+\"'`")


def literal_glob(name: str) -> str | None:
    """`name` (a file or folder name, from a failure's output: anything) as a glob part that matches
    that name and no other; None when no escaping does so for every matcher: `!` or `#` opening it
    (a negation, a comment), a backslash (rulefile refuses it), or a brace with a comma (minimatch
    expands braces before it reads classes: `[{]a,b[}]` would become two patterns)."""
    if (
        not name
        or name[0] in "!#"
        or "\\" in name
        or ("," in name and ("{" in name or "}" in name))
    ):
        return None
    return "".join(f"[{c}]" if c in _GLOB_SPECIAL else c for c in name)


def suggest_paths(files) -> list[str]:
    """The globs a rule should load for, from the files the failure involved (most relevant first):
    a file in a folder gives `<top folder>/**/*.<ext>` (`tests/test_store.py` -> `tests/**/*.py`),
    several extensions in one folder one brace glob, a file at the top the file itself. No files
    (or only files outside the project) give [] : a project-wide rule. A name goes into a glob only
    escaped (literal_glob): a file named `*` or `{src,..}` matches itself, never other files."""
    groups: dict[
        str, list[str]
    ] = {}  # top folder, escaped -> extensions ("" none), in order of relevance
    singles: list[str] = []
    for f in files or ():
        p = _project_file(f)
        if p is None:
            continue
        if "/" not in p:
            single = literal_glob(p)
            if single:
                singles.append(single)
            continue
        top, name = literal_glob(p.split("/", 1)[0]), p.rsplit("/", 1)[1]
        if top is None:
            continue
        ext = name.rsplit(".", 1)[1] if "." in name.strip(".") else ""
        exts = groups.setdefault(top, [])
        if ext not in exts:
            exts.append(ext)
    globs: list[str] = []
    for top, exts in groups.items():
        # A folder whose name holds a brace never meets a brace group in one glob: `*.{py,ts}`
        # after `[{]a[}]` could pair the wrong braces in a matcher that expands braces first.
        braced = "{" in top or "}" in top
        if (
            "" in exts
            or not all(re.fullmatch(r"[A-Za-z0-9_+-]{1,12}", e) for e in exts)
            or (braced and len(exts) > 1)
        ):
            globs.append(f"{top}/**")
        elif len(exts) == 1:
            globs.append(f"{top}/**/*.{exts[0]}")
        else:
            globs.append(f"{top}/**/*.{{{','.join(exts)}}}")
    globs += singles
    out = []
    for g in dict.fromkeys(globs):
        try:
            out.append(rulefile.check_glob(g))
        except ValueError:
            continue
    return out[:MAX_GLOBS]


# -- the offline rule ------------------------------------------------------------------------------

# The verbs a fix starts with when said as an instruction ("use ...", "run ..."), also narrated in
# their -ing form ("fixed it by using ...").
# Not "check", "read", "look", "see": a look around is a step of the investigation, not what fixed it.
_VERBS = (
    "use run set add pass call install avoid keep make import mock wrap create remove replace pin quote "
    "declare annotate cast rename delete mark await export convert give put return handle specify start stop "
    "close open load write build clean reset restart activate update upgrade downgrade move change "
    "switch guard escape sort include exclude skip configure define register patch seed wait ensure lock "
    "initialize initialise"
).split()
# running, not runing
_DOUBLED = frozenset({"run", "set", "pin", "put", "wrap", "skip", "stop", "reset"})


def _gerund(verb: str) -> str:
    if verb in _DOUBLED:
        return verb + verb[-1] + "ing"
    return (verb[:-1] if verb.endswith("e") and not verb.endswith("ee") else verb) + "ing"


_GERUNDS = {_gerund(v): v for v in _VERBS}
_IMPERATIVE = frozenset(_VERBS) | {"never", "always", "prefer", "do", "don't", "only"}
# How a session narrates a fix before the instruction itself.
_LEADS = re.compile(
    r"^(?:(?:ok(?:ay)?|so|now|good|great|right|fixed|done)[,.!:;]?\s+)*"
    r"(?:(?:i|we)(?:'ve| have)?\s+)?(?:(?:fixed|solved|resolved)\s+(?:it|this|that|the \w+(?: \w+)?)\s+by\s+"
    r"|(?:the\s+)?(?:fix|solution|answer)\s+(?:is|was)\s+(?:to\s+)?"
    r"|(?:it|this|the \w+)\s+(?:needs?|needed)\s+to\s+|(?:we|you|i)\s+(?:need|needed|have|had|must|should)\s+to\s+"
    r"|(?:we|you)\s+(?:must|should)\s+)",
    re.I,
)
# "I'll use tmp_path instead": a fix said as the next step. Not "I'll check ...": that is a step, not a fix.
_NEXT = re.compile(
    r"^(?:i|we)(?:'ll| will)\s+(?!check\b|read\b|look\b|see\b|try\b|investigate\b)", re.I
)
_SENTENCES = 3  # a fix's instruction is among its first sentences


# Narration inside a sentence: what follows is the session talking, not the fix.
_NARRATED = re.compile(r"\b(?:let me|let's|now i|i see|it looks like|it seems)\b", re.I)


def _sentences(text: str) -> list[str]:
    # A colon before a capital ends a sentence: "Use X: Now let me build" is a fix, then narration (the
    # ledger holds fixes written before the triage ended each message with a full stop).
    parts = re.split(r"(?<=[.!?:])\s+(?=[A-Z`])", one_line(text, 1000))
    return [p.strip().rstrip(" .!:;,") for p in parts[:_SENTENCES] if p.strip()]


def fix_instruction(text) -> str | None:
    """The fix a session stated, as an instruction ("Use the `tmp_path` fixture ..."), from the first
    of its first sentences that says one; None when none does (narration, a finding, a question)."""
    if not isinstance(text, str) or not text.strip():
        return None
    for sentence in _sentences(redact_text(text)):
        found = _instruction(_NEXT.sub("", _LEADS.sub("", sentence, count=1), count=1).strip())
        if found:
            return found
    return None


def _instruction(sentence: str) -> str | None:
    """`sentence` as an instruction when it starts with one's verb (or its -ing form), else None."""
    if (
        not sentence
        or "?" in sentence
        or _NOISE.search(sentence)
        or _TEMP_PATH.search(sentence)
        or _NARRATED.search(sentence)
    ):
        return None
    first, _, rest = sentence.partition(" ")
    word = first.lower().strip(",:;")
    if word in _GERUNDS:
        first = _GERUNDS[word]
    elif word not in _IMPERATIVE:
        return None
    elif word == "only" and rest.partition(" ")[0].lower() not in _IMPERATIVE:
        return None  # "Only one test is failing now" is a finding; "Only run ..." an instruction
    sentence = (first + (" " + rest if rest else "")).strip()
    if len(sentence) > 200:
        return None  # a wall of text is not a rule
    return sentence[0].upper() + sentence[1:]


def _sessions(candidate) -> int:
    n = _get(candidate, "sessions")
    if isinstance(n, int) and not isinstance(n, bool) and n > 0:
        return n
    occ = _get(candidate, "occurrences") or []
    return len(occ) if isinstance(occ, list) else 0


def _latest_fix(candidate) -> dict:
    """The most recent fix the evidence holds ({} when none)."""
    for o in reversed(_get(candidate, "occurrences") or []):
        fix = o.get("fix") if isinstance(o, Mapping) else None
        if isinstance(fix, Mapping) and (fix.get("text") or fix.get("files")):
            return dict(fix)
    return {}


def _code(text: str, limit: int = _SUBJECT_MAX) -> str:
    """`text` as inline code, one line, no backtick inside."""
    return "`" + one_line(str(text).replace("`", "'"), limit) + "`"


def _test_name(test: str) -> str:
    """The test's own name: `tests/test_store.py::TestX::test_save[a]` -> test_save[a]."""
    for sep in ("::", "/", "."):
        if sep in test:
            test = test.rsplit(sep, 1)[1] or test
    return test


def _test_file(failure: Mapping) -> str:
    test = str(failure.get("test") or "")
    if "::" in test:
        return _project_file(test.split("::", 1)[0]) or ""
    files = [f for f in failure.get("files") or () if _project_file(f)]
    return next(
        (
            f
            for f in files
            if re.search(r"(^|/)(tests?|spec|__tests__)/|(^|/)test_|_test\.|\.(test|spec)\.", f)
        ),
        "",
    )


# The signature's placeholders (curator/rules/normalise.py) as a reader says them: dropping the message
# that holds one left "Guard against Error"; printing it left "<tmp>" in the rule.
_PLACEHOLDERS = {
    "n": "N",
    "dur": "N s",
    "hex": "an id",
    "uuid": "an id",
    "addr": "an address",
    "ip": "an IP address",
    "time": "a time",
}
_TEMP_TOKEN = re.compile(r"(:\s*)?(['\"]?)<tmp>[^\s'\"`]*\2")
_PLACEHOLDER = re.compile(r"<([a-z_]{1,12})>")
_ERRNO = re.compile(r"^\[Errno (?:<n>|\d+)\]\s*")
_MARKS = re.compile(r"\[REDACTED|<!--|-->")
# Error types that say nothing the message does not: "Error (Cannot find module)" says it once.
_GENERIC_ERRORS = frozenset({"error", "exception"})


def _readable(message: str) -> str:
    """`message` with its placeholders said in words: `Cannot find module '<tmp>'` -> `Cannot find module
    (a temp path)`, `Expected: <n>` -> `Expected: N`; an unknown `<name>` loses its brackets."""
    message = _ERRNO.sub("", message)
    message = _TEMP_TOKEN.sub(lambda m: ": a temp path" if m.group(1) else "(a temp path)", message)
    return _PLACEHOLDER.sub(lambda m: _PLACEHOLDERS.get(m.group(1), m.group(1)), message)


def _what(failure: Mapping) -> str:
    """What failed, briefly: the error type and/or a short message; "" when the failure says neither."""
    error = one_line(str(failure.get("error_type") or ""), 60)
    message = one_line(
        _ABS_PATH.sub(r"\1", redact_text(str(failure.get("message") or ""))), _MESSAGE_MAX
    )
    specific = error and error.lower() not in _GENERIC_ERRORS
    if _MARKS.search(message) or (
        specific and (len(message) > _MESSAGE_MAX // 2 or "<tmp>" in message)
    ):
        # a secret's trace, a marker, a long message or one about a temp path: the error type says it
        message = ""
    message = one_line(_readable(message), _MESSAGE_MAX).replace("`", "'")
    quoted = '"' + message.replace('"', "'") + '"'  # not `""strings" imported and not used"`
    if error and message and message.lower() != error.lower():
        return f"{error} ({message})" if specific else quoted
    return error or (quoted if message else "")


def _command_for(failure: Mapping, candidate) -> str:
    """The command to run to check again: the tool on the test file when there is one, else the
    shortest command the evidence recorded, when it holds no absolute path."""
    tool = str(failure.get("tool") or "")
    test_file = _test_file(failure)
    if tool == "pytest" and test_file:
        return f"pytest {test_file}"
    commands = [
        one_line(str(o.get("command") or ""), 200)
        for o in _get(candidate, "occurrences") or []
        if isinstance(o, Mapping)
    ]
    commands = [
        c for c in commands if c and len(c) <= 80 and not re.search(r"(^|[\s=])/|~/|\[REDACTED", c)
    ]
    return min(commands, key=len) if commands else tool


def _changed(failure: Mapping, fix: Mapping) -> str:
    """The file to name in "after changing ...": the fix's first edited file, else the failure's first
    non-test file; by its name alone."""
    test_file = _test_file(failure)
    for f in list(fix.get("files") or ()) + list(failure.get("files") or ()):
        p = _project_file(f)
        if p and p != test_file:
            return os.path.basename(p)
    return ""


def _times(n: int) -> str:
    # Not the count: the rule file keeps the sentence while the count goes on (show and status have it).
    return "in several sessions" if n > 1 else "before"


def offline(candidate) -> dict:
    """The rule a candidate suggests without a model: {rule, topic, paths}."""
    failure = _get(candidate, "failure") or {}
    failure = failure if isinstance(failure, Mapping) else {}
    fix = _latest_fix(candidate)
    n = _sessions(candidate)
    kind = str(failure.get("kind") or "")
    tool = str(failure.get("tool") or "") or "the command"
    what = _what(failure)
    # a failure that says nothing more: not "with an error"
    with_what = f" with {what}" if what else ""
    test = str(failure.get("test") or "")
    subject = _code(_test_name(test)) if test else _code(tool, 40)
    instruction = fix_instruction(fix.get("text"))
    changed = _changed(failure, fix)
    command = _command_for(failure, candidate)
    if instruction:
        rule = f"{instruction}: without it {subject} failed{with_what} {_times(n)}."
    elif fix.get("files") and changed:
        rule = (
            f"When {subject} fails{with_what}, look at {_code(changed)} first: "
            f"changing it fixed this {_times(n)}."
        )
    elif kind == "test":
        after = f" after changing {_code(changed)}" if changed else ""
        rule = f"Run {_code(command)}{after}: {subject} has failed{with_what} {_times(n)}."
    elif kind == "lint":
        where = _code(changed) if changed else "changed files"
        rule = (
            f"Keep {where} clean of {_code(tool, 40)} {what or 'errors'}: run {_code(command)} before finishing; "
            f"it has failed {_times(n)}."
        )
    elif kind in ("type", "build"):
        after = f" after changing {_code(changed)}" if changed else " after changing code"
        rule = f"Run {_code(command)}{after}: it has failed{with_what} {_times(n)}."
    elif kind == "runtime":
        where = f" in {_code(changed)}" if changed else ""
        rule = f"Guard against {what or 'the error'}{where} when running {_code(command)}: it has been raised {_times(n)}."
    else:
        rule = f"Check why {_code(command)} fails before running it again: it has failed{with_what} {_times(n)}."
    rule = one_line(rule, rulefile.RULE_MAX)
    try:
        rule = rulefile.check_rule(rule)
    except ValueError:  # a secret or a marker in the evidence: say less
        rule = f"Run {_code(tool, 40)} again after changing code: {subject} has failed {_times(n)}."
    return {
        "rule": rule,
        "topic": topic_for(failure),
        "paths": suggest_paths(failure.get("files") or ()),
    }


# -- the model's rule ------------------------------------------------------------------------------

CLAUDE_BACKENDS = ("anthropic", "claude-cli")
# a rule is a runbook's lesson: drafted with that category's model (haiku)
RULE_MODEL_CATEGORY = "runbook"
EVIDENCE_SESSIONS = 5  # the most recent sessions shown to the model
_EXCERPT_MAX = 600


def evidence(candidate, suggested: Mapping | None = None) -> str:
    """What the model reads about a candidate: the failure, the most recent sessions (command, error,
    fix) and the offline rule; redacted again (the ledger's text already was), bounded."""
    failure = _get(candidate, "failure") or {}
    failure = failure if isinstance(failure, Mapping) else {}
    lines = [
        f"Failure: {failure.get('kind') or '?'} by {failure.get('tool') or '?'}",
        f"Signature: {one_line(str(failure.get('signature') or ''), 300)}",
    ]
    for key, label in (("test", "Test"), ("error_type", "Error type"), ("message", "Message")):
        if failure.get(key):
            lines.append(f"{label}: {one_line(str(failure[key]), 300)}")
    files = [f for f in failure.get("files") or () if _project_file(f)]
    if files:
        lines.append(f"Files involved: {', '.join(files[:10])}")
    occurrences = [o for o in _get(candidate, "occurrences") or [] if isinstance(o, Mapping)]
    lines.append(f"Sessions it failed in: {_sessions(candidate)}")
    for o in occurrences[-EVIDENCE_SESSIONS:]:
        lines += [
            "",
            f"Session {one_line(str(o.get('session') or '?'), 80)} at {one_line(str(o.get('at') or '?'), 30)}:",
            f"  command: {one_line(str(o.get('command') or ''), 300)}",
            "  error:",
            *(
                "    " + line
                for line in ledger.cap(
                    str(o.get("error") or ""), _EXCERPT_MAX, lines=True
                ).splitlines()
            ),
        ]
        fix = o.get("fix") if isinstance(o.get("fix"), Mapping) else None
        if fix:
            lines.append(f"  what fixed it: {one_line(str(fix.get('text') or ''), 400)}")
            if fix.get("files"):
                lines.append(
                    f"  files edited: {', '.join(one_line(str(f), 200) for f in list(fix['files'])[:10])}"
                )
            if fix.get("command"):
                lines.append(f"  then passed: {one_line(str(fix['command']), 300)}")
    if suggested:
        lines += [
            "",
            f"A rule written without a model: {suggested.get('rule', '')}",
            f"Its topic: {suggested.get('topic', '')}; its paths: {list(suggested.get('paths') or [])}",
        ]
    return redact_text("\n".join(lines))


def checked(answer: Mapping) -> dict:
    """A model's {rule, topic, paths} as a rules file takes it: the rule one clean line with no secret,
    the topic a safe name, every glob valid. ValueError saying what is wrong."""
    rule = one_line(str(answer.get("rule") or ""), 10 * rulefile.RULE_MAX)
    rule = rulefile.check_rule(rule)
    paths = rulefile.check_paths(answer.get("paths") or [])
    if len(rule.split()) < 3:
        raise ValueError(f"the rule {rule!r} is too short to say what to do")
    return {"rule": rule, "topic": rulefile.topic_name(answer.get("topic")), "paths": paths}


def draft_rule(drafter, candidate, cfg: Mapping, *, usage=None, now: str | None = None) -> dict:
    """A candidate's draft {rule, topic, paths, by, model, at, error}: the model's rule when the drafter
    is a Claude backend and its answer holds up, else the offline rule, with why in `error` (a failed
    call, an answer rejected, the model's skip). Never raises. `usage` (a ModelCall): the call's tokens
    and cost are added to it."""
    from memcurate.curator.drafting import RuleRequest, RuleResult, model_for
    from memcurate.curator.util.stamps import now_iso

    at = now or now_iso()
    suggested = offline(candidate)
    name = str(getattr(drafter, "name", "") or "offline")
    if name not in CLAUDE_BACKENDS or not callable(getattr(drafter, "rule", None)):
        return {**suggested, "by": "offline", "model": "", "at": at, "error": ""}
    alias, model_id = model_for(cfg, RULE_MODEL_CATEGORY)
    request = RuleRequest(
        key=str(_get(candidate, "id") or ""),
        evidence=evidence(candidate, suggested),
        model_alias=alias,
        model_id=model_id,
    )
    try:
        result = drafter.rule(request)
    except Exception as e:  # a backend must not raise; if one does, the offline rule stands
        result = RuleResult(model=model_id or alias, error=one_line(f"{e.__class__.__name__}: {e}"))
    if usage is not None:
        usage.add_usage(result)
    model = str(result.model or model_id or alias)
    why = result.error or (
        f"{name} skipped: {result.skipped}" if result.skipped is not None else ""
    )
    if not why:
        try:
            return {
                **checked(result.answer or {}),
                "by": name,
                "model": model,
                "at": at,
                "error": "",
            }
        except ValueError as e:
            why = f"{name} answer rejected: {e}"
    return {**suggested, "by": "offline", "model": model, "at": at, "error": one_line(why)}
