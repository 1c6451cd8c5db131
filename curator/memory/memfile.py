"""A memory file (docs/design.md §6): YAML front matter and Markdown sections, parsed and written.

The draft a person reviews is exactly this document, so one module owns the
format both ways. Writing never goes through a YAML emitter: every string is
written as a JSON string (valid YAML) whenever it is not plainly safe, so a
title cannot close the front matter or smuggle in a key.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache

from memcurate.curator.categories import CATEGORIES
from memcurate.curator.memory.front_matter import _STAMP, MemoryFormatError, split_front_matter  # noqa: F401 (re-exported)
from memcurate.curator.util.recent import Recent
from memcurate.curator.util.redact import redact

ID_MAX = 80
TITLE_MAX = 120
DESCRIPTION_MAX = 200
TAGS_MAX = 12
TYPES = ("user", "feedback", "project", "reference")
STATUSES = ("active", "archived")
# The keys in the order written: `name` and `metadata: {type}` are Claude Code 2.1's own keys (its memory prompt
# asks for name, description, metadata.type), the top-level `type` is kept for older Claude Code.
FIELD_ORDER = (
    "id",
    "name",
    "category",
    "title",
    "description",
    "type",
    "metadata",
    "tags",
    "created",
    "updated",
    "sources",
    "status",
)
SOURCES_HEAD = 1  # the first session a memory came from is kept...
# ...and the newest few: the front matter is injected too and must not grow without bound
SOURCES_TAIL = 4

_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_TAG = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.,/()'+-]*$")  # needs no quotes in YAML
_HEADING = re.compile(r"^##[ \t]+(.+?)[ \t]*#*[ \t]*$")
# _HEADING over a whole body: each line that _HEADING matches, where it is
_HEADINGS = re.compile(_HEADING.pattern, re.M)
# A session id (a UUID) YAML reads as text though it may start with a digit: not a number (dashes, and
# four digits then a dash would be a date, eight are not), so the YAML-free reading takes it too
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass
class MemoryDoc:
    id: str
    category: str
    title: str
    description: str
    tags: list[str]
    created: str
    updated: str
    type: str = ""
    sources: list[dict] = field(default_factory=list)
    status: str = "active"
    body: str = ""

    def __post_init__(self) -> None:
        if not self.type and self.category in CATEGORIES:
            self.type = CATEGORIES[self.category].claude_type

    @property
    def sections(self) -> dict[str, str]:
        return split_sections(self.body)

    def section(self, name: str, default: str = "") -> str:
        """`sections.get(name, default)`, without splitting the other sections: a check asks every
        memory for its first one."""
        found = section_text(self.body, name)
        return default if found is None else found

    def front_matter(self) -> dict:
        out = {k: getattr(self, k) for k in FIELD_ORDER if k not in ("name", "metadata")}
        return dict(out, name=self.id, metadata={"type": self.type})


def cap_sources(sources: list[dict]) -> list[dict]:
    """The sources a file keeps: the first and the SOURCES_TAIL newest, the ones between counted in
    the first kept after them (`more: n`). A file read with a longer list is shortened when next written."""
    if len(sources) <= SOURCES_HEAD + SOURCES_TAIL:
        return sources
    dropped = sources[SOURCES_HEAD:-SOURCES_TAIL]
    more = sum(1 + (m if isinstance(m := s.get("more"), int) else 0) for s in dropped)
    first_tail = dict(sources[-SOURCES_TAIL])
    first_tail["more"] = more + (m if isinstance(m := first_tail.get("more"), int) else 0)
    return sources[:SOURCES_HEAD] + [first_tail] + sources[-SOURCES_TAIL + 1 :]


# -- writing -------------------------------------------------------------------


def _scalar(v) -> str:
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, int):
        return str(v)
    s = str(v)
    return s if _written_plain(s) else json.dumps(s, ensure_ascii=False)


def _flow(items) -> str:
    return "[" + ", ".join(_scalar(i) for i in items) + "]"


def render(doc: MemoryDoc) -> str:
    """The file's text. Deterministic: the same document always gives the same bytes."""
    lines = ["---"]
    for key in FIELD_ORDER:
        if key == "name":
            lines.append(f"name: {_scalar(doc.id)}")
            continue
        if key == "metadata":
            lines += ["metadata:", f"  type: {_scalar(doc.type)}"]
            continue
        value = getattr(doc, key)
        if key == "tags":
            lines.append(f"tags: {_flow(value)}")
        elif key == "sources":
            if not value:
                lines.append("sources: []")
                continue
            lines.append("sources:")
            for src in cap_sources(value):
                lines.append(f"  - session: {_scalar(src.get('session', ''))}")
                turns = src.get("turns")
                if turns:
                    lines.append(f"    turns: {_flow(turns)}")
                if (
                    isinstance(src.get("more"), int)
                    and not isinstance(src.get("more"), bool)
                    and src["more"] > 0
                ):
                    # sessions between the first and this one, not listed
                    lines.append(f"    more: {src['more']}")
        else:
            lines.append(f"{key}: {_scalar(value)}")
    lines.append("---")
    body = doc.body.strip("\n")
    return "\n".join(lines) + "\n" + body + "\n"


# -- reading -------------------------------------------------------------------


# Documents of the texts parsed lately, as `render` wrote them: a save run reads the same neighbours for
# every draft near them. Each caller gets its own copy (a MemoryDoc is mutable).
_PARSED = Recent(1024)


def parse(text: str) -> MemoryDoc:
    """Parse a memory file. Structure errors raise MemoryFormatError; content rules are `problems`."""
    doc = _PARSED.get(text)
    if doc is not None:
        return _copy(doc)
    fm_text, body = _split(text)
    doc = _canonical(text, fm_text, body)
    if doc is None:
        return _parse_yaml(fm_text, body)
    _PARSED.put(text, doc, len(text))
    return _copy(doc)


def _split(text: str) -> tuple[str, str]:
    """`split_front_matter(text)`; a text that opens with the fence `render` writes and closes it with
    the first "---" it holds is cut where it says, without a list of its lines."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 3)
        if end >= 0 and "---" not in text[4:end]:
            return text[4:end], text[end + 5 :]
    return split_front_matter(text)


def _copy(doc: MemoryDoc) -> MemoryDoc:
    """A document no other caller holds: its lists and their entries its own. Its fields copied as
    they are (`replace` would build it again through __init__: a quarter of a parse)."""
    copy = object.__new__(MemoryDoc)
    copy.__dict__.update(doc.__dict__)
    copy.tags = list(doc.tags)
    copy.sources = [
        {k: list(v) if isinstance(v, list) else v for k, v in s.items()} for s in doc.sources
    ]
    return copy


def as_sent(fields: dict) -> MemoryDoc:
    """The document whose fields (`vars()`) a forked process sent, as it was there: not built again
    through __init__ (its type was given then)."""
    doc = object.__new__(MemoryDoc)
    doc.__dict__.update(fields)
    return doc


def _canonical(text: str, fm_text: str, body: str) -> MemoryDoc | None:
    """The document of a file exactly as `render` writes it, read without YAML (a fifth of the cost: the
    check and an index build read every memory); None for any other text, which YAML reads. Each line
    must be the very line `render` writes for what it holds, in its order, each value as `_scalar`
    writes it (`_read_scalar`): the text is the document's rendering, proven without rendering it again
    (that doubled the cost of reading a memory)."""
    # the fixed lines before `sources` (one line, or one and its entries), then `status`
    head = _HEAD_LINES.match(fm_text)
    if head is None:
        return None
    lines = fm_text[head.end() :].split("\n")
    if len(lines) < 2:
        return None
    try:
        raw = head.groups()
        # `tags: [` a flow list, read below
        doc_id, name, category, title, description, doc_type, meta_type = map(_read_scalar, raw[:7])
        tags = raw[7]
        created, updated = _read_scalar(raw[8]), _read_scalar(raw[9])
        sources = _sources(lines[:-1])
        if sources is None or not lines[-1].startswith("status: "):
            return None
        status = _read_scalar(lines[-1][8:])
        if not tags.endswith("]") or name != doc_id or meta_type != doc_type:
            return None
        tag_list = [_read_scalar(t, True) for t in tags[:-1].split(", ")] if tags != "]" else []
    except ValueError:
        return None
    doc = MemoryDoc(
        id=doc_id,
        category=category,
        title=title,
        description=description,
        type=doc_type,
        tags=tag_list,
        created=created,
        updated=updated,
        sources=sources,
        status=status,
        body=body.strip("\n"),
    )
    # what render would write otherwise: the type a category gives, a status, the fences, the body
    if doc.type != doc_type or not status or text != f"---\n{fm_text}\n---\n{doc.body}\n":
        return None
    return doc


# The lines `render` writes before `sources`, in its order: each a key and the value after it, but
# `metadata:` (the whole line) and `tags: [` (a flow list, read on)
_HEAD = (
    "id: ",
    "name: ",
    "category: ",
    "title: ",
    "description: ",
    "type: ",
    "metadata:",
    "  type: ",
    "tags: [",
    "created: ",
    "updated: ",
)
# ...matched at once: each line's value (`metadata:` has none), up to the line after `updated`
_HEAD_LINES = re.compile(
    "".join(re.escape(p) + ("\n" if p.endswith(":") else "(.*)\n") for p in _HEAD)
)


def _sources(lines: list[str]) -> list[dict] | None:
    """`sources` as `render` writes it (none: `sources: []`; else each entry's session, its turns when
    any, what it stands for when more than itself, at most as many as `cap_sources` keeps); None else.
    ValueError from a value `_scalar` does not write."""
    if lines == ["sources: []"]:
        return []
    if lines[:1] != ["sources:"] or len(lines) < 2:
        return None
    out: list[dict] = []
    for line in lines[1:]:
        if line.startswith("  - session: "):
            out.append({"session": _read_scalar(line[13:])})
        elif line.startswith("    turns: [") and line.endswith("]") and out and len(out[-1]) == 1:
            turns = [int(t) for t in line[12:-1].split(", ")]
            if ", ".join(map(str, turns)) != line[12:-1]:
                return None
            out[-1]["turns"] = turns
        elif line.startswith("    more: ") and out and "more" not in out[-1]:
            more = int(line[10:])
            if more <= 0 or str(more) != line[10:]:
                return None
            out[-1]["more"] = more
        else:
            return None
    return out if len(out) <= SOURCES_HEAD + SOURCES_TAIL else None


_YAML_WORDS = frozenset(("yes", "no", "on", "off", "true", "false", "null", "y", "n"))
# a JSON string of printable ASCII with nothing escaped (no quote, no backslash)
_QUOTED = re.compile(r'"[ !#-\[\]-~]*"')
# a text `_written_plain` that starts with a letter and does not end in a blank (YAML drops it)
_PLAIN_TEXT = re.compile(r"[A-Za-z](?:[A-Za-z0-9 _.,/()'+-]*[A-Za-z0-9_.,/()'+-])?")


def _written_plain(s: str) -> bool:
    """`_scalar` writes `s` as it is (YAML reads it as the same text)."""
    return (
        bool(_PLAIN.match(s)) and s.lower() not in _YAML_WORDS and not s.replace(".", "").isdigit()
    )


_SHORT = 64  # the values kept, and so the memory kept, are short


def _read_scalar(value: str, flow: bool = False) -> str:
    """`_scalar_text`; a short value (a category, type, tag, time stamp: a store's repeat) read once."""
    return _read_short(value, flow) if len(value) <= _SHORT else _scalar_text(value, flow)


@lru_cache(maxsize=1024)
def _read_short(value: str, flow: bool) -> str:
    return _scalar_text(value, flow)


def _scalar_text(value: str, flow: bool = False) -> str:
    """The text `_scalar` writes as `value`, where YAML reads the same: plain starting with a letter
    (YAML reads `0x1f`, `1_000`, `2026-01-02` as no text) and not ending in a blank, or a session id
    (a UUID), in a `flow` list without a comma (YAML splits there); or a JSON string of printable ASCII
    (YAML folds U+2028 and refuses some characters JSON leaves as they are) of a text not written
    plain. ValueError else."""
    if value[:1] != '"':
        if (
            (_PLAIN_TEXT.fullmatch(value) or _UUID.fullmatch(value))
            and value.lower() not in _YAML_WORDS
            and not (flow and "," in value)
        ):
            return value
    elif _QUOTED.fullmatch(value):
        # nothing JSON escapes: the text between the quotes (a time stamp, a title with a colon)
        if not _written_plain(value[1:-1]):
            return value[1:-1]
    elif value.isascii() and value.isprintable():
        v = json.loads(value)
        if (
            isinstance(v, str)
            and not _written_plain(v)
            and json.dumps(v, ensure_ascii=False) == value
        ):
            return v
    raise ValueError(value)


def _parse_yaml(fm_text: str, body: str) -> MemoryDoc:
    import yaml

    try:
        # libyaml's loader when installed: ~7x faster, and an index build parses every memory
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        fm = yaml.load(fm_text, Loader=loader) if fm_text.strip() else {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"front matter line {mark.line + 2}" if mark else "front matter"
        raise MemoryFormatError(
            f"{where}: invalid YAML ({getattr(e, 'problem', None) or e})"
        ) from None
    if not isinstance(fm, dict):
        raise MemoryFormatError("front matter: expected key: value lines")
    unknown = sorted(str(k) for k in fm if k not in FIELD_ORDER)
    if unknown:
        raise MemoryFormatError(f"front matter: unknown key(s) {', '.join(unknown)}")

    def text_field(key: str) -> str:
        v = fm.get(key, "")
        if v is None:
            return ""
        if not isinstance(v, (str, int, float)) or isinstance(v, bool):
            raise MemoryFormatError(f"front matter: {key}: expected text, found {type(v).__name__}")
        return str(v)

    tags = fm.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, (str, int)) for t in tags):
        raise MemoryFormatError("front matter: tags: expected a list of words")
    sources = fm.get("sources") or []
    if not isinstance(sources, list) or not all(isinstance(s, dict) for s in sources):
        raise MemoryFormatError("front matter: sources: expected a list of {session, turns}")
    metadata = fm.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise MemoryFormatError("front matter: metadata: expected key: value lines (type: ...)")
    doc_type = text_field("type")
    meta_type = metadata.get("type")
    if meta_type is not None:
        if not isinstance(meta_type, str):
            raise MemoryFormatError("front matter: metadata: type: expected text")
        # what Claude Code 2.1 reads: a hand edit or forgery that disagrees loses
        doc_type = meta_type
    stamps = {}
    for key in ("created", "updated"):
        v = fm.get(key, "")
        # YAML reads an unquoted ISO stamp as a datetime: write it back the way we write it
        stamps[key] = v.strftime("%Y-%m-%dT%H:%M:%SZ") if hasattr(v, "strftime") else str(v or "")
    return MemoryDoc(
        id=text_field("id"),
        category=text_field("category"),
        title=text_field("title"),
        description=text_field("description"),
        type=doc_type,
        tags=[str(t) for t in tags],
        created=stamps["created"],
        updated=stamps["updated"],
        sources=[dict(s) for s in sources],
        status=text_field("status") or "active",
        body=body.strip("\n"),
    )


def split_sections(body: str) -> dict[str, str]:
    """`## Heading` sections of a body, in order; text before the first heading is under ''."""
    out: dict[str, list[str]] = {}
    current = ""
    out[current] = []
    in_code = False
    # a body without a fence has no code to skip, and only a line starting "##" can be a heading: the
    # regex runs on those alone (a check splits every memory's sections)
    fenced = "```" in body or "~~~" in body
    for line in body.split("\n"):
        if fenced and line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
        m = _HEADING.match(line) if not in_code and line.startswith("##") else None
        if m:
            current = m.group(1).strip()
            out.setdefault(current, [])
            continue
        out[current].append(line)
    sections = {k: "\n".join(v).strip() for k, v in out.items()}
    if not sections[""]:
        del sections[""]
    return sections


def section_text(body: str, name: str) -> str | None:
    """`split_sections(body).get(name)`, the other sections left unsplit. A body with a code fence, a
    heading given twice (its texts are joined) or the text before the first heading is split whole."""
    if not name or "```" in body or "~~~" in body:
        return split_sections(body).get(name)
    # the lines that start "##" found, not every line split; those that are headings
    starts = [0] if body.startswith("##") else []
    i = body.find("\n##")
    while i >= 0:
        starts.append(i + 1)
        i = body.find("\n##", i + 1)
    heads = []
    for start in starts:
        end = body.find("\n", start)
        m = _HEADINGS.match(body, start, len(body) if end < 0 else end)
        if m is not None:
            heads.append(m)
    at = [i for i, m in enumerate(heads) if m.group(1).strip() == name]
    if len(at) != 1:
        return split_sections(body).get(name) if at else None
    i = at[0]
    # the lines after its heading, up to the next heading
    end = heads[i + 1].start() if i + 1 < len(heads) else len(body)
    return body[heads[i].end() + 1 : end].strip()


def join_sections(sections: dict[str, str]) -> str:
    return "\n\n".join(f"## {name}\n{text.strip()}" for name, text in sections.items() if name)


# -- content rules -------------------------------------------------------------


def problems(doc: MemoryDoc, *, file_name: str | None = None) -> list[tuple[str, str]]:
    """What makes a document invalid, as (where, what) pairs. Empty when it is valid."""
    out: list[tuple[str, str]] = []
    if not _SLUG.fullmatch(doc.id) or len(doc.id) > ID_MAX:
        out.append(
            (
                "id",
                f"must be lowercase words joined by '-' (a-z, 0-9), at most {ID_MAX} characters; "
                f"found {doc.id!r:.100}",
            )
        )
    if file_name is not None and file_name != f"{doc.id}.md":
        out.append(("id", f"must equal the file name: {file_name!r} holds id {doc.id!r:.100}"))
    if doc.category not in CATEGORIES:
        out.append(
            ("category", f"must be one of {', '.join(CATEGORIES)}; found {doc.category!r:.60}")
        )
    for key, limit in (("title", TITLE_MAX), ("description", DESCRIPTION_MAX)):
        value = getattr(doc, key)
        if not value.strip():
            out.append((key, "is empty"))
        elif len(value) > limit:
            out.append((key, f"is {len(value)} characters; at most {limit}"))
    if doc.type not in TYPES:
        out.append(("type", f"must be one of {', '.join(TYPES)}; found {doc.type!r:.60}"))
    if not 1 <= len(doc.tags) <= TAGS_MAX:
        out.append(("tags", f"must hold 1 to {TAGS_MAX} tags; found {len(doc.tags)}"))
    bad_tags = [t for t in doc.tags if not _TAG.fullmatch(t) or len(t) > 40]
    if bad_tags:
        out.append(
            ("tags", f"must be lowercase words; found {', '.join(repr(t) for t in bad_tags[:3])}")
        )
    for key in ("created", "updated"):
        if not _STAMP.fullmatch(getattr(doc, key)):
            out.append(
                (
                    key,
                    f"must be a UTC time like 2026-11-22T10:04:00Z; found {getattr(doc, key)!r:.40}",
                )
            )
    if doc.status not in STATUSES:
        out.append(("status", f"must be active or archived; found {doc.status!r:.40}"))
    for i, src in enumerate(doc.sources):
        turns = src.get("turns", [])
        if (
            not isinstance(src.get("session", ""), str)
            or not isinstance(turns, list)
            or not all(isinstance(t, int) for t in turns)
        ):
            out.append((f"sources[{i}]", "must be {session: text, turns: [numbers]}"))
    out += _control_problems(doc, {k for k, _ in out})
    if doc.category in CATEGORIES:
        sections = doc.sections
        for name in CATEGORIES[doc.category].required:
            if name not in sections:
                out.append((f"## {name}", "required section is missing"))
            elif not sections[name].strip():
                out.append((f"## {name}", "required section is empty"))
    return out


_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\ufeff]")


def _control_problems(doc: MemoryDoc, already: set[str]) -> list[tuple[str, str]]:
    """Front matter values are one line each, with no tab, NUL or other control character
    (a line break after a time stamp would end the front matter early). `already`: keys with a
    problem found, not reported twice."""
    out = []
    for key in ("id", "category", "title", "description", "type", "created", "updated", "status"):
        value = getattr(doc, key)
        if isinstance(value, str) and _CONTROL.search(value) and key not in already:
            out.append(
                (key, f"must not contain control characters or line breaks; found {value!r:.60}")
            )
    if "tags" not in already and any(isinstance(t, str) and _CONTROL.search(t) for t in doc.tags):
        out.append(("tags", "must not contain control characters or line breaks"))
    for i, src in enumerate(doc.sources):
        if (
            isinstance(src, dict)
            and isinstance(src.get("session"), str)
            and _CONTROL.search(src["session"])
        ):
            out.append(
                (f"sources[{i}]", "session must not contain control characters or line breaks")
            )
    return out


def slugify(text: str, limit: int = ID_MAX) -> str:
    """An id from a title: lowercase ASCII words joined by '-'."""
    import unicodedata

    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = ""
    for w in words:
        candidate = f"{slug}-{w}" if slug else w
        if len(candidate) > limit:
            break
        slug = candidate
    return slug or "memory"


_DOC_FIELDS = ("title", "description", "category", "type", "created", "updated", "status", "body")


def redact_document(doc: MemoryDoc, *, keep_id: bool = False) -> tuple[MemoryDoc, Counter]:
    """A memory document with every field redacted, front matter included, and how many of each kind
    went.

    Tags and ids are lowercase words, where a token's shape is lost: a tag or id that carries
    a secret, or a lowercased piece of one found elsewhere in the document, is dropped (the id
    is made again from the redacted title, unless `keep_id`: the index keeps the file's name).
    """
    sessions = [s.get("session") for s in doc.sources if isinstance(s, dict)]
    whole = [getattr(doc, k) for k in _DOC_FIELDS] + [doc.id, *doc.tags, *sessions]
    if not redact("\n".join(v for v in whole if isinstance(v, str)))[1]:
        # the common case, in one call: the fields joined hold every match they hold apart
        return (
            doc,
            Counter(),
        )

    found: Counter = Counter()
    removed: list[str] = []

    def clean(value):
        if not isinstance(value, str):
            return value
        out, kinds = redact(value, removed)
        found.update(kinds)
        return out

    fields = {k: clean(getattr(doc, k)) for k in _DOC_FIELDS}
    sources = [
        {**s, "session": clean(s["session"])} if isinstance(s, dict) and "session" in s else s
        for s in doc.sources
    ]
    tags = [t for t in doc.tags if clean(t) == t]
    id_held_secret = clean(doc.id) != doc.id
    if not found:
        return doc, found
    traces = [r.lower() for r in removed if len(r) >= 8]

    def traced(word: str) -> bool:
        w = word.lower()
        return any(t in w or (len(w) >= 8 and w in t) for t in traces)

    tags = [t for t in tags if not traced(t)] or [
        str(fields["category"]).replace("_", "-") or "memory"
    ]
    doc_id = doc.id
    if not keep_id and (id_held_secret or traced(doc_id)):
        doc_id = slugify(fields["title"])
    return replace(doc, id=doc_id, tags=tags, sources=sources, **fields), found
