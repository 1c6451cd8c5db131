"""The rule files memcurate writes: `<project>/.claude/rules/memcurate/<topic>.md` (docs/design.md §4, §11).

Claude Code loads these files; one whose `paths:` front matter does not parse silently becomes a
project-wide rule, so the front matter is emitted by hand (quoted strings) and parsed back with
yaml before anything is written. A file memcurate writes looks like this:

    ---
    paths:
      - "tests/**/*.py"
    ---
    # Testing

    - Use the `tmp_path` fixture for files a test writes. <!-- memcurate:rule/3f2a9c01d4e5 -->

(no front matter for a project-wide rule). Each bullet ends with its candidate's marker, so the
same rule is never written twice: the marker anywhere in the folder, or the same text
(whitespace and case aside), makes the plan a noop.

A topic file is extended (one bullet appended in its own line endings; every other byte and its
permissions kept) only when its `paths` are
the rule's or include all of them: an existing rule's scope is never widened; the rule goes to
`<topic>-2.md` (then -3...) instead. A file of the folder whose front matter does not parse, or
that is not memcurate's shape, is never rewritten: the plan says why and the person fixes it.
Files outside the folder are never written; a folder that resolves outside the project is refused.

`plan()` decides and shows (the diff the person approves); `write()` writes exactly that plan,
atomically, and refuses when the file changed since.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import unicodedata
from dataclasses import asdict, dataclass

from memcurate.curator.errors import Refusal
from memcurate.curator.util.atomic import failure, replace_if_unchanged
from memcurate.curator.util.paths import RULES_DIR, is_inside
from memcurate.curator.util.redact import find_secrets

RULE_MAX = 300  # characters of one rule (one bullet, one line)
TOPIC_MAX = 40  # characters of a topic's file name, before `.md`
GLOBS_MAX = 20
GLOB_MAX = 200
FILE_MAX = 1 << 20  # a rules file larger than this is not one of ours
DEFAULT_TOPIC = "rules"
MAX_SIBLINGS = 50  # <topic>.md, <topic>-2.md ... <topic>-50.md
_KEY = re.compile(r"[0-9a-f]{8,64}")
MARKER = re.compile(r"<!-- memcurate:rule/([0-9a-f]{8,64}) -->")
# Names some systems refuse as file names whatever their extension.
_RESERVED = frozenset(
    {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
)
_FENCE = re.compile(r"^ {0,3}(```|~~~)", re.M)


class RuleFileError(Refusal):
    """A rule that cannot be written; the message says why, for the person."""


@dataclass
class RulePlan:
    """What approving a rule does. `action`: create | extend | noop; `before` the file's text now
    (None when it does not exist), `after` its text once written, `diff` the unified diff between
    them, `error` why it cannot be written ("" when it can; then `action` means nothing)."""

    path: str
    rel: str
    action: str
    before: str | None
    after: str
    diff: str
    error: str = ""
    key: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


# -- validation ------------------------------------------------------------------------------------


def marker(key: str) -> str:
    return f"<!-- memcurate:rule/{key} -->"


def check_key(key: str) -> str:
    """The candidate's key (`rule/` prefix allowed); ValueError for anything else."""
    key = key[len("rule/") :] if isinstance(key, str) and key.startswith("rule/") else key
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise ValueError(f"not a rule key: {str(key)[:80]!r}")
    return key


def check_rule(text) -> str:
    """The rule text, stripped; ValueError saying why when it cannot go into a rules file: one line,
    at most RULE_MAX characters, nothing that looks like a marker, no control character, no secret."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the rule is empty")
    text = text.strip()
    if "\n" in text or "\r" in text:
        raise ValueError("the rule must be one line")
    if len(text) > RULE_MAX:
        raise ValueError(f"the rule is {len(text)} characters long; at most {RULE_MAX}")
    if not text.isprintable():
        raise ValueError("the rule holds a control character")
    if "<!--" in text or "-->" in text:
        raise ValueError("the rule holds an HTML comment marker (<!-- or -->)")
    secrets = find_secrets(text)
    if secrets:
        raise ValueError(
            f"the rule holds a secret ({', '.join(secrets)}); a secret never goes into a rules file"
        )
    return text


def check_glob(glob) -> str:
    """One `paths:` glob, as Claude Code matches it against project-relative paths; ValueError saying why not."""
    if not isinstance(glob, str) or not glob:
        raise ValueError("a path glob is empty")
    shown = repr(glob[:60])
    if len(glob) > GLOB_MAX:
        raise ValueError(f"the path glob {shown}... is longer than {GLOB_MAX} characters")
    if not glob.isprintable() or glob != glob.strip():
        raise ValueError(f"the path glob {shown} holds a control character or surrounding blanks")
    if glob.startswith(("/", "~")) or re.match(r"[A-Za-z]:", glob) or "\\" in glob:
        raise ValueError(f"the path glob {shown} is not relative to the project")
    if any(part in ("", ".", "..") for part in glob.split("/")):
        raise ValueError(f"the path glob {shown} has an empty, `.` or `..` part")
    return glob


def check_paths(paths) -> list[str]:
    """The rule's globs, each checked, duplicates dropped; [] is a project-wide rule. ValueError saying
    why not, also when the front matter they make would not read back as exactly these globs."""
    if paths is None:
        return []
    if not isinstance(paths, (list, tuple)):
        raise ValueError("paths must be a list of globs")
    globs = list(dict.fromkeys(check_glob(g) for g in paths))
    if len(globs) > GLOBS_MAX:
        raise ValueError(f"{len(globs)} path globs; at most {GLOBS_MAX}")
    if globs and read_front_matter(front_matter(globs)[4:-4]) != globs:
        raise ValueError("the paths front matter would not read back as written")
    return globs


def topic_name(topic) -> str:
    """A topic as a safe file name (without `.md`): lowercase a-z, 0-9 and `-`, at most TOPIC_MAX
    characters, never empty, hidden, a path or a name some system reserves."""
    text = unicodedata.normalize("NFKD", topic if isinstance(topic, str) else "")
    text = text.encode("ascii", "ignore").decode("ascii").lower()
    name = re.sub(r"[^a-z0-9]+", "-", text).strip("-")[:TOPIC_MAX].strip("-")
    if not name:
        return DEFAULT_TOPIC
    if name in _RESERVED:
        name = f"{name}-{DEFAULT_TOPIC}"
    return name


# -- the file format -------------------------------------------------------------------------------


def front_matter(paths: list[str]) -> str:
    """`paths:` front matter for `paths` (each a JSON string, which YAML reads as the same string);
    "" for a project-wide rule."""
    if not paths:
        return ""
    return (
        "---\npaths:\n"
        + "".join(f"  - {json.dumps(g, ensure_ascii=False)}\n" for g in paths)
        + "---\n"
    )


def read_front_matter(text: str):
    """The globs of a front matter's inside, as Claude Code would read them; None unless it is exactly
    {paths: [non-empty strings]}."""
    import yaml  # here: the hook never writes rules

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if (
        not isinstance(doc, dict)
        or set(doc) != {"paths"}
        or not isinstance(doc["paths"], list)
        or not doc["paths"]
    ):
        return None
    if not all(isinstance(g, str) and g for g in doc["paths"]):
        return None
    return doc["paths"]


def heading(topic: str) -> str:
    return "# " + topic.replace("-", " ").strip().capitalize()


def bullet(key: str, rule: str, newline: str = "\n") -> str:
    return f"- {rule} {marker(key)}{newline}"


def newline_of(text: str) -> str:
    """The line ending most of `text`'s lines end with: a bullet appended keeps the file's style."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf * 2 >= text.count("\n") else "\n"


def render(key: str, rule: str, topic: str, paths: list[str]) -> str:
    """A new rules file holding one rule."""
    return front_matter(paths) + f"{heading(topic)}\n\n" + bullet(key, rule)


def parse(text: str) -> tuple[list[str] | None, str]:
    """(the file's globs, [] for none; None when its front matter does not parse or is not memcurate's,
    why it is not a file memcurate may extend or "")."""
    paths: list[str] = []
    body = text
    if text.startswith("---\n") or text.startswith("---\r\n"):
        lines = text.splitlines(keepends=True)
        end = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") == "---"), None)
        if end is None:
            return None, "its front matter is not closed by a `---` line"
        paths = read_front_matter("".join(lines[1:end]))
        if paths is None:
            return (
                None,
                "its front matter does not parse as a `paths:` list of globs (and nothing else)",
            )
        body = "".join(lines[end + 1 :])
    elif text.lstrip().startswith("---"):
        return None, "its front matter does not start on the first line"
    if not MARKER.search(body):
        return paths, "it holds no memcurate rule (no marker): it is not memcurate's"
    if len(_FENCE.findall(body)) % 2:
        return paths, "it ends inside a code block: a bullet appended would not be a rule"
    return paths, ""


def _normal(rule: str) -> str:
    return " ".join(rule.lower().split()).rstrip(".")


def _rules_in(text: str) -> list[str]:
    """The normalised text of each marked bullet of a file."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        m = MARKER.search(line)
        if m and line.startswith(("- ", "* ")):
            out.append(_normal(line[2 : m.start()]))
    return out


# -- planning and writing --------------------------------------------------------------------------


def folder(project) -> str:
    return os.path.join(os.fspath(project), RULES_DIR)


def _folder_error(project: str, where: str) -> str:
    """Why the rules folder cannot be written ("" when it can): it must resolve inside the project."""
    real = os.path.realpath(where)
    if not is_inside(real, os.path.realpath(project)) or real == os.path.realpath(project):
        return f"{RULES_DIR} resolves to {real}, outside the project: memcurate writes rules only inside it"
    if os.path.lexists(where) and not os.path.isdir(where):
        return f"{RULES_DIR} is not a folder"
    return ""


def _read(path: str) -> tuple[str | None, str]:
    """(the text of a rules file, why it cannot be used: "" when it can). Never follows a symlink."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None, ""
    except OSError as e:
        return None, f"it cannot be read ({e.strerror or e})"
    try:
        if not _regular(os.fstat(fd).st_mode):
            return None, "it is not a regular file"
        data = os.read(fd, FILE_MAX + 1)
    finally:
        os.close(fd)
    if len(data) > FILE_MAX:
        return None, f"it is larger than {FILE_MAX} bytes"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError:
        return None, "it is not UTF-8 text"


def _regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)


def _existing(where: str) -> dict[str, str]:
    """name -> text of every readable regular `.md` file of the folder (symlinks are never read)."""
    try:
        names = sorted(os.listdir(where))
    except OSError:
        return {}
    out = {}
    for name in names:
        if name.endswith(".md"):
            text, _why = _read(os.path.join(where, name))
            if text is not None:
                out[name] = text
    return out


def _lines(text: str) -> list[str]:
    """`text` cut after each "\\n" only (splitlines also cuts at \\r, \\f, U+2028...: a diff would
    show one line of the file as several)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _diff(before: str | None, after: str, rel: str) -> str:
    """The unified diff, as `diff -u` prints it: a last line without a newline is followed by
    `\\ No newline at end of file`, else it would run into the next line of the diff."""
    out = []
    for line in difflib.unified_diff(
        _lines(before or ""),
        _lines(after),
        fromfile="/dev/null" if before is None else f"a/{rel}",
        tofile=f"b/{rel}",
    ):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def plan(project, key: str, rule: str, topic: str, paths) -> RulePlan:
    """What approving rule `key` (its text, topic and globs) writes, and why not when it cannot."""
    project = os.path.abspath(os.fspath(project))
    where = folder(project)
    name = topic_name(topic)

    def failed(error: str, file: str | None = None) -> RulePlan:
        path = os.path.join(where, file or f"{name}.md")
        return RulePlan(
            path=path,
            rel=os.path.relpath(path, project),
            action="",
            before=None,
            after="",
            diff="",
            error=error,
            key=str(key),
        )

    try:
        key, rule, paths = check_key(key), check_rule(rule), check_paths(paths)
    except ValueError as e:
        return failed(str(e))
    error = _folder_error(project, where)
    if error:
        return failed(error)
    files = _existing(where)
    said, norm = marker(key), _normal(rule)
    # the same rule already written, by key or by text: nothing to do
    for (
        file,
        text,
    ) in files.items():
        if said in text or norm in _rules_in(text):
            path = os.path.join(where, file)
            return RulePlan(
                path=path,
                rel=os.path.relpath(path, project),
                action="noop",
                before=text,
                after=text,
                diff="",
                key=key,
            )
    for n in range(1, MAX_SIBLINGS + 1):
        file = f"{name}.md" if n == 1 else f"{name}-{n}.md"
        path = os.path.join(where, file)
        rel = os.path.relpath(path, project)
        found, why = (files[file], "") if file in files else _read(path)
        if why:
            return failed(f"{rel} is left alone: {why}", file)
        if found is None:
            after = render(key, rule, name, paths)
            return RulePlan(
                path=path,
                rel=rel,
                action="create",
                before=None,
                after=after,
                diff=_diff(None, after, rel),
                key=key,
            )
        text = found
        have, why = parse(text)
        if have is None or why:
            return failed(f"{rel} is left alone: {why}; fix or move it by hand", file)
        if (not paths and not have) or (paths and have and set(paths) <= set(have)):
            nl = newline_of(text)  # the file's own line endings: nothing else in it changes
            after = text + ("" if text.endswith("\n") else nl) + bullet(key, rule, nl)
            return RulePlan(
                path=path,
                rel=rel,
                action="extend",
                before=text,
                after=after,
                diff=_diff(text, after, rel),
                key=key,
            )
        # other paths: never widen that file's rules; the next sibling
    return failed(f"{MAX_SIBLINGS} files of topic {name!r} already hold rules for other paths")


def write(plan: RulePlan) -> str:
    """Write `plan` (from plan()); returns the path. RuleFileError when the plan has an error, when the
    file changed since the plan (plan again), or when the disk refuses (its __cause__ is the OSError):
    then nothing is written. A noop writes nothing."""
    if plan.error:
        raise RuleFileError(plan.error)
    if plan.action == "noop":
        return plan.path
    if plan.action not in ("create", "extend"):
        raise RuleFileError(f"not a plan to write: {plan.action!r}")
    where = os.path.dirname(plan.path)
    project = where
    for _ in RULES_DIR.split(os.sep):
        project = os.path.dirname(project)
    error = _folder_error(project, where)
    if error:
        raise RuleFileError(error)
    try:
        os.makedirs(where, exist_ok=True)
    except OSError as e:
        raise RuleFileError(f"{RULES_DIR} cannot be made: {failure(e)}") from e
    error = _folder_error(project, where)  # a symlink put there meanwhile
    if error:
        raise RuleFileError(error)
    if os.path.islink(plan.path):
        raise RuleFileError(f"{plan.rel} is a symlink now: nothing written")
    mode = None
    # an extended file keeps its permissions (a file made 0600 stays so)
    if plan.before is not None:
        try:
            mode = os.lstat(plan.path).st_mode & 0o7777
        except FileNotFoundError:
            pass  # gone meanwhile: render_new refuses it below
        except OSError as e:
            raise RuleFileError(f"{plan.rel} not written: {failure(e)}") from e
    expected = None if plan.before is None else plan.before.encode("utf-8")
    after = plan.after.encode("utf-8")

    def render_new(current: bytes | None) -> bytes | None:
        if current == after and expected != after:
            return None  # another process wrote exactly this plan meanwhile
        if current != expected:
            raise RuleFileError(
                f"{plan.rel} changed since the rule was planned: nothing written; look again"
            )
        return after

    try:
        replace_if_unchanged(plan.path, render_new, mode=mode)
    except OSError as e:  # a full disk, a read-only folder: the file is as it was
        raise RuleFileError(f"{plan.rel} not written: {failure(e)}") from e
    return plan.path
