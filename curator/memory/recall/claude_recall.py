"""Claude Code's own recall, as the UserPromptSubmit hook can see it cheaply (checked against 2.1.328).

In its recall mode Claude Code does not load MEMORY.md (`E$e`: `if(!rMe())return e;return
e.filter((o)=>o.type!=="AutoMem")`); at each user turn a selector picks up to 5 `.md` files under the
memory folder and Claude Code injects them as a transcript line
`{"type":"attachment","attachment":{"type":"relevant_memories","memories":[{"path","content","mtimeMs",
"header","limit"}]}}`, `path` absolute (the memory folder joined with the file's relative name); a file
surfaced once in the session is not offered again (`!y.paths.has(ot.path)`).

The mode is on behind a server-side switch (`tengu_moth_copse`), or when the environment sets
CLAUDE_MEMORY_STORES to anything but blanks (`vhr(){return!!process.env.CLAUDE_MEMORY_STORES?.trim()}`).
The hook sees the environment, and the session's transcript: a `relevant_memories` attachment in it
says the switch is on whatever the environment says. The transcript is read from where the last prompt
of the session stopped (its offset kept in seen.py's record), only whole lines, and only the lines that
name `relevant_memories` are parsed.

What the selector is shown (`offered`), as the real 2.1.328 lists it: every `.md` file (that case) under
the memory folder at any depth, but a file named MEMORY.md at any depth, a path with a component starting
with "." (`.archive/` among them), and a first component `logs`, `sessions` or `proposals` (compared
NFC-normalized, trailing dots and blanks cut, lower-cased: `Logs/`, `logs./` too); newest first, at most
200. The contract suite (tests/contract/test_cc_recall_mode.py) checks this against the selector's real
request.
"""

from __future__ import annotations

import os
import unicodedata

from memcurate.curator.util import fastjson

ENV_SWITCH = "CLAUDE_MEMORY_STORES"
ATTACHMENT = "relevant_memories"
CHUNK = 4 << 20  # bytes of the transcript read at a time
# bytes of new transcript read per prompt at most (~20 ms): the rest on the next prompts
READ_MAX = 16 << 20
_NEEDLE = b'"' + ATTACHMENT.encode() + b'"'
OFFERED_MAX = 200  # files the selector is shown, newest first
_NOT_OFFERED_TOP = frozenset(("logs", "sessions", "proposals"))
INDEX = "MEMORY.md"


def env_on(env) -> bool:
    """Whether the environment turns Claude Code's recall mode on (any value but blanks, as it reads it)."""
    value = (env if env is not None else os.environ).get(ENV_SWITCH)
    return isinstance(value, str) and bool(value.strip())


def offered(root: str, limit: int = OFFERED_MAX) -> list[str]:
    """The memory files (paths relative to `root`, "/"-separated) Claude Code's selector is shown, in its
    order: newest first, at most `limit`. Symbolic links to folders are not followed."""
    found: list[tuple[float, str]] = []

    def walk(folder: str, rel: str) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for e in entries:
            if e.name.startswith("."):
                continue
            name = f"{rel}/{e.name}" if rel else e.name
            if (
                not rel
                and unicodedata.normalize("NFC", e.name).rstrip(". ").lower() in _NOT_OFFERED_TOP
            ):
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    walk(e.path, name)
                elif e.name.endswith(".md") and e.name != INDEX and e.is_file():
                    found.append((e.stat().st_mtime, name))
            except OSError:
                continue

    walk(root, "")
    found.sort(key=lambda f: (-f[0], f[1]))
    return [name for _, name in found[:limit]]


def scan(path: str, offset: int, read_max: int = READ_MAX) -> tuple[int, list[str], bool]:
    """(the offset to start from next time, the memory paths surfaced in the whole lines read, whether a
    relevant_memories attachment was read). Reads from `offset` (from 0 when the file is now shorter:
    rewritten), whole lines only; OSError when the transcript cannot be read."""
    paths: list[str] = []
    found = False
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size < offset:
            offset = 0
        f.seek(offset)
        done = 0
        while done < read_max:
            want = min(CHUNK, read_max - done)
            chunk = f.read(want)
            if not chunk:
                break
            end = chunk.rfind(b"\n") + 1
            if end == 0:
                if want < CHUNK or len(chunk) < want:
                    break  # a line still being written (or past this call's share): read it whole next time
                # one line longer than a chunk: no attachment line is; skip its bytes
                end = len(chunk)
            elif end < len(chunk):
                f.seek(offset + end)
            if _NEEDLE in chunk:
                for line in chunk[:end].split(b"\n"):
                    if _NEEDLE in line:
                        got = _surfaced(line)
                        if got is not None:
                            found = True
                            paths += got
            offset += end
            done += end
            if len(chunk) < want:
                break
    return offset, paths, found


def _surfaced(line: bytes) -> list[str] | None:
    """The paths of a relevant_memories attachment line; None when the line is no such attachment."""
    try:
        obj = fastjson.loads(line)
    except ValueError:
        return None
    att = (
        obj.get("attachment") if isinstance(obj, dict) and obj.get("type") == "attachment" else None
    )
    if not isinstance(att, dict) or att.get("type") != ATTACHMENT:
        return None
    memories = att.get("memories")
    return (
        [m["path"] for m in memories if isinstance(m, dict) and isinstance(m.get("path"), str)]
        if isinstance(memories, list)
        else []
    )


def same_file_keys(path: str) -> set[str]:
    """The forms under which a path is compared with Claude Code's: as written (normalized) and resolved."""
    keys = {os.path.normpath(path)}
    try:
        keys.add(os.path.realpath(path))
    except (OSError, ValueError):
        pass
    return keys
