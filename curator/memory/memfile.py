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

from memcurate.curator.categories import CATEGORIES
from memcurate.curator.memory.front_matter import _STAMP, MemoryFormatError, split_front_matter  # noqa: F401 (re-exported)
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
    if (
        _PLAIN.match(s)
        and s.lower() not in ("yes", "no", "on", "off", "true", "false", "null", "y", "n")
        and not s.replace(".", "").isdigit()
    ):
        return s
    return json.dumps(s, ensure_ascii=False)


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
_PARSED: dict[str, MemoryDoc] = {}
_PARSED_MAX = 1024


def parse(text: str) -> MemoryDoc:
    """Parse a memory file. Structure errors raise MemoryFormatError; content rules are `problems`."""
    doc = _PARSED.get(text)
    if doc is not None:
        return _copy(doc)
    fm_text, body = split_front_matter(text)
    doc = _canonical(text, fm_text, body)
    if doc is None:
        return _parse_yaml(fm_text, body)
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.clear()
    _PARSED[text] = doc
    return _copy(doc)


def _copy(doc: MemoryDoc) -> MemoryDoc:
    """A document no other caller holds: its lists and their entries its own."""
    sources = [
        {k: list(v) if isinstance(v, list) else v for k, v in s.items()} for s in doc.sources
    ]
    return replace(doc, tags=list(doc.tags), sources=sources)


def _canonical(text: str, fm_text: str, body: str) -> MemoryDoc | None:
    """The document of a file exactly as `render` writes it, read without YAML (a fifth of the cost: the
    check and an index build read every memory); None for any other text, which YAML reads. Proven by
    rendering the document back to the same bytes; a plain value must start with a letter (YAML reads
    `0x1f`, `1_000`, `2026-01-02` as no text, and `render` quotes the words it reads as booleans)."""
    fields: dict = {}
    sources: list[dict] = []
    meta_type = None
    key = ""
    try:
        for line in fm_text.split("\n"):
            if line.startswith("  - session: "):
                sources.append({"session": _plain_or_json(line[13:])})
            elif line.startswith("    turns: [") and sources and line.endswith("]"):
                sources[-1]["turns"] = [int(t) for t in line[12:-1].split(", ")]
            elif line.startswith("    more: ") and sources:
                sources[-1]["more"] = int(line[10:])
            elif line.startswith("  type: ") and key == "metadata":
                meta_type = _plain_or_json(line[8:])
            else:
                key, sep, value = line.partition(": ")
                if key == "tags" and value.startswith("[") and value.endswith("]"):
                    fields[key] = (
                        [_plain_or_json(t, True) for t in value[1:-1].split(", ")]
                        if value != "[]"
                        else []
                    )
                elif sep:
                    fields[key] = _plain_or_json(value)
                elif line not in ("metadata:", "sources:"):
                    return None
                else:
                    key = line[:-1]
        doc = MemoryDoc(
            id=fields["id"],
            category=fields["category"],
            title=fields["title"],
            description=fields["description"],
            type=meta_type if meta_type is not None else fields["type"],
            tags=fields["tags"],
            created=fields["created"],
            updated=fields["updated"],
            sources=sources,
            status=fields["status"] or "active",
            body=body.strip("\n"),
        )
    except (ValueError, KeyError, TypeError):
        return None
    return doc if render(doc) == text else None


def _plain_or_json(value: str, flow: bool = False) -> str:
    """A scalar as `_scalar` writes text, where YAML reads the same: a JSON string of printable ASCII (YAML
    folds U+2028 and refuses some characters JSON leaves as they are), or plain starting with a letter and
    not ending in a blank (YAML drops it) or a session id (a UUID), in a `flow` list without a comma (YAML splits there); ValueError else."""
    if value.startswith('"') and value.isascii() and value.isprintable():
        v = json.loads(value)
        if isinstance(v, str):
            return v
    elif (
        (value[:1].isalpha() or _UUID.fullmatch(value))
        and _PLAIN.match(value)
        and value == value.rstrip()
        and not (flow and "," in value)
    ):
        return value
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
    for line in body.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
        m = None if in_code else _HEADING.match(line)
        if m:
            current = m.group(1).strip()
            out.setdefault(current, [])
            continue
        out[current].append(line)
    sections = {k: "\n".join(v).strip() for k, v in out.items()}
    if not sections[""]:
        del sections[""]
    return sections


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
