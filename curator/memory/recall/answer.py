"""The answer to one prompt: the steps of recall, in order (see the package's docstring)."""

from __future__ import annotations

import datetime as dt
import os
import sqlite3

from memcurate.curator.categories import CATEGORIES
from memcurate.curator.errors import Refusal
from memcurate.curator.memory.front_matter import MAX_FILE_BYTES, light_fields
from memcurate.curator.memory.index import folders
from memcurate.curator.memory.index.schema import INDEX_FILE
from memcurate.curator.memory.index.terms import words
from memcurate.curator.memory.memory_md.loaded import limits_from
from memcurate.curator.memory.recall import claude_recall, skip_reason
from memcurate.curator.memory.recall.context import Memory, render
from memcurate.curator.memory.recall.loaded import loaded_entries
from memcurate.curator.memory.recall.lookup import Hit, prompt_words, search
from memcurate.curator.memory.recall.seen import Seen
from memcurate.curator.util.instructions import find_instructions
from memcurate.curator.util.paths import resolve_memory_root
from memcurate.curator.util.redact import redact_text
from memcurate.curator.util.safe_open import read_at_most

NEW_WORDS = 3  # a loaded memory's body must hold this many words its MEMORY.md line lacks to be worth giving


class IndexUnusable(Refusal):
    """The index could not be brought up to date (the memory store refused: an unsafe root, say)."""


class Recall:
    """What recall gives one prompt (a plain class: the hook does not pay for importing dataclasses)."""

    def __init__(self, note: str = "") -> None:
        self.context = ""  # the additionalContext; "" when nothing is given
        self.given: list[str] = []  # <category>/<id> of the memories in it
        self.note = note  # what happened, for the log line (never the prompt's text)
        self.problems: list[str] = []
        self.withheld: list[
            str
        ] = []  # "<category>/<id> (what it asks for)": read as an instruction, not given


def recall(
    project,
    data: str,
    cfg: dict,
    prompt: str,
    session_id: str = "",
    *,
    env=None,
    now: dt.datetime | None = None,
    transcript: str = "",
) -> Recall:
    """`transcript`: the session's transcript (the hook's transcript_path), read from where the last
    prompt stopped for what Claude Code's own recall gave it (claude_recall.py)."""
    rc = cfg["recall"]
    if not rc["enabled"]:
        return Recall(note="off (recall.enabled: false)")
    why = skip_reason(prompt, cfg)
    if why:
        return Recall(note=f"skipped: {why}")
    root = resolve_memory_root(project, cfg, data, env)["path"]
    if not os.path.isdir(root):
        return Recall(note="no memory root yet")
    out = Recall()
    seen = Seen(data, session_id)
    mode = _claude_mode(seen, transcript, env, out.problems)
    try:
        hits = _search(
            root, data, prompt, rc["max_memories"] * 3 + len(seen.ids) + len(seen.surfaced)
        )
    except (sqlite3.Error, OSError, IndexUnusable) as e:
        out.problems.append(f"index unusable ({e.__class__.__name__}: {e}): nothing recalled")
        out.note = "index unusable"
        return out
    # recall mode: not loaded
    loaded, problem = loaded_entries(root, *limits_from(cfg)) if not mode else ({}, None)
    if problem:
        out.problems.append(problem)
    surfaced = (
        {k for p in seen.surfaced for k in claude_recall.same_file_keys(p)} if mode else set()
    )
    # Claude Code's selector may pick any file it is offered, this very turn: giving one of those too could
    # put a memory in front of Claude twice, so memcurate gives only what its selector is not shown.
    its_own = {os.path.join(root, name) for name in claude_recall.offered(root)} if mode else set()
    memories: list[Memory] = []
    by_claude = []
    for hit in hits:
        if len(memories) >= rc["max_memories"]:
            break
        if hit.key in seen:
            continue
        path = os.path.join(root, hit.category, hit.name)
        if mode and (path in its_own or claude_recall.same_file_keys(path) & surfaced):
            # Claude Code's own recall can pick it, or gave it this session
            by_claude.append(hit.key)
            continue
        m = _read(root, hit, hit.key in loaded, out.problems)
        if m is None or (m.loaded and not _adds(m.body, loaded[hit.key])):
            continue
        found = find_instructions("\n".join((m.title, m.description, m.body)))
        if found:  # written to talk to the agent: never in its context, whatever the fence says
            out.withheld.append(f"{hit.key} ({found[0][0]})")
            continue
        memories.append(m)
    out.context, out.given = render(memories, rc["max_chars"], now or dt.datetime.now(dt.UTC))
    if out.given or seen.dirty:
        try:
            seen.add(out.given)
            seen.save()
        except OSError as e:
            out.problems.append(f"session record not written ({e.strerror or e}): may repeat")
    repeats = sum(1 for h in hits if h.key in seen and h.key not in out.given)
    out.note = (
        f"gave {len(out.given)} ({', '.join(out.given)}), {len(out.context)} characters"
        if out.given
        else "nothing given"
        if out.withheld
        else "nothing relevant"
    )
    out.note += f"; {repeats} already given in this session" if repeats else ""
    if mode:
        out.note += f"; Claude Code recalls by itself ({mode}): MEMORY.md not loaded"
        out.note += (
            f", {len(by_claude)} its own recall is shown or surfaced not given ({', '.join(by_claude)})"
            if by_claude
            else ""
        )
    if out.withheld:
        out.note += (
            f"; withheld {len(out.withheld)} that read as an instruction to the agent "
            f"({', '.join(out.withheld)}): edit or remove the file"
        )
    return out


def _claude_mode(seen: Seen, transcript: str, env, problems: list[str]) -> str:
    """Why Claude Code recalls by itself in this session ("" when it does not, as far as can be seen): the
    environment's switch, or its relevant_memories attachments in the transcript. Reads the transcript's
    new lines into `seen` (written with it)."""
    if transcript and seen.path is not None:
        start = seen.offset if transcript == seen.transcript else 0
        try:
            offset, paths, found = claude_recall.scan(transcript, start)
        except FileNotFoundError:
            pass  # not written yet: nothing of Claude Code's recall to see
        except OSError as e:
            problems.append(f"transcript not read for Claude Code's own recall ({e.strerror or e})")
        else:
            if offset != start or transcript != seen.transcript:
                seen.read_to(transcript, offset, paths, found)
    if seen.claude_recalls:
        return "its memories in this session's transcript"
    return f"{claude_recall.ENV_SWITCH} is set" if claude_recall.env_on(env) else ""


def _search(root: str, data: str, prompt: str, per_category: int) -> list[Hit]:
    terms = prompt_words(prompt)
    if not terms:
        return []
    path = os.path.join(data, INDEX_FILE)
    fast = folders.open_for_reading(path, root, list(CATEGORIES))
    # the usual case: the index as it is, and the few files saved since read here
    if fast is not None:
        conn, unindexed = fast
        try:
            conn.execute("BEGIN")  # one read transaction: every statement sees one snapshot
            return search(
                conn, terms, per_category, unindexed, lambda cat, name: _words_of(root, cat, name)
            )
        except sqlite3.Error:
            pass  # the full path below checks the database, rebuilds it if it must
        finally:
            conn.close()
    from memcurate.curator.memory.index import MemoryIndex
    from memcurate.curator.memory.store import MemoryStore, StoreError

    try:
        index = MemoryIndex(path, MemoryStore(root), watch=False)
        try:
            index.refresh_changed_folders()
            return index.reading(search, terms, per_category)
        finally:
            index.close()
    except StoreError as e:
        raise IndexUnusable(str(e)) from e


def _load(path: str) -> tuple[dict[str, str], str]:
    """(front matter fields, body) of a memory file, read without YAML; OSError or ValueError (too large,
    not UTF-8, no front matter: UnicodeDecodeError and MemoryFormatError are ValueErrors) when it cannot be."""
    with open(path, "rb") as f:
        data = read_at_most(f, MAX_FILE_BYTES)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"larger than {MAX_FILE_BYTES} bytes")
    return light_fields(data.decode("utf-8"))


def _words_of(root: str, category: str, name: str) -> tuple[str, set[str]] | None:
    """(id, words) of a memory file the index has not seen yet; None when it is no memory to give."""
    try:
        fields, body = _load(os.path.normpath(os.path.join(root, category, name)))
    except (OSError, ValueError):
        return None
    # archived: a path
    if fields.get("id") != name.rsplit("/", 1)[-1][:-3] or fields.get("category") != category:
        return None
    return fields["id"], set(
        words(" ".join((fields.get("title", ""), fields.get("description", ""), body)))
    )


def _read(root: str, hit: Hit, loaded: bool, problems: list[str]) -> Memory | None:
    """The memory as its file says now; None (and a problem) when it is gone, broken or unreadable."""
    # an archived one's name climbs to .archive/
    path = os.path.normpath(os.path.join(root, hit.category, hit.name))
    try:
        fields, body = _load(path)
    except FileNotFoundError:
        return None  # removed since it was indexed: nothing to give
    except (OSError, ValueError) as e:
        problems.append(f"{hit.key}: not given ({e.__class__.__name__}: {e})")
        return None
    if (
        fields.get("id") != hit.id
        or fields.get("category") != hit.category
        or not fields.get("title")
    ):
        problems.append(
            f"{hit.key}: not given (its front matter names another memory, or no title)"
        )
        return None
    return Memory(
        key=hit.key,
        category=hit.category,
        title=redact_text(fields["title"]),
        description=redact_text(fields.get("description", "")),
        updated=fields.get("updated", ""),
        path=path,
        body=redact_text(body),
        loaded=loaded,
        status=fields.get("status", "active"),
    )


# section headings are structure, not content
_HEADINGS = frozenset(
    w for c in CATEGORIES.values() for name in c.required + c.optional for w in words(name)
)


def _adds(body: str, line: str) -> bool:
    """Whether a body says more than its MEMORY.md line: enough words the line does not hold."""
    have = set(words(line)) | _HEADINGS
    return len({w for w in words(body) if w not in have}) >= NEW_WORDS
