"""The offline drafter itself (the package's docstring says how a draft is made)."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping

from memcurate.curator.categories import CATEGORIES
from memcurate.curator.drafting import DraftRequest, DraftResult
from memcurate.curator.drafting.offline import recipes
from memcurate.curator.drafting.offline.choosing import NoEvidence, NotStated
from memcurate.curator.drafting.offline.evidence import parse_snippets
from memcurate.curator.drafting.offline.finishing import (
    FOREIGN_WEAK,
    TOPIC_TITLE_WEAK,
    finish_draft,
)
from memcurate.curator.drafting.offline.tags import make_tags, subject_words
from memcurate.curator.drafting.offline.text import bounded_line, norm, safe_body
from memcurate.curator.errors import DamagedError, MemcurateError
from memcurate.curator.memory import memfile
from memcurate.curator.util.redact import find_secrets, redact_text
from memcurate.curator.util.stamps import now_iso
from memcurate.curator.util.textsafe import clean

_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


class _Invalid(DamagedError):
    """Input the drafter cannot draft from; the message is the result's error."""


class _Skip(MemcurateError):
    """The evidence states no fact of the category (only chatter): the result is `skipped`, as a model answers."""


ID_SOFT = 60  # ids are file names and link targets: shorter than memfile's hard limit reads better


class OfflineDrafter:
    """Drafts from the triage's snippets and excerpt, with no model. Stateless, so thread-safe."""

    name = "offline"

    def __init__(self, reason: str = "backend: offline") -> None:
        self.reason = reason

    def draft(self, request: DraftRequest) -> DraftResult:
        t0 = time.perf_counter()
        try:
            doc, notes, weak = self._draft(request)
            text = memfile.render(doc)
            # defence in depth: every part was redacted, the whole is checked too
            if find_secrets(text):
                doc = memfile.parse(redact_text(text))
                text = memfile.render(doc)
                notes.append("redacted a secret that survived into the draft")
        except _Skip as e:
            return DraftResult(
                doc=None,
                text="",
                model="offline",
                elapsed=time.perf_counter() - t0,
                skipped=clean(str(e))[:500],
            )
        except Exception as e:  # a drafter never raises: the pipeline marks the category failed
            msg = (
                str(e)
                if isinstance(e, _Invalid)
                else f"offline drafter failed: {e.__class__.__name__}: {e}"
            )
            return DraftResult(
                doc=None,
                text="",
                model="offline",
                elapsed=time.perf_counter() - t0,
                error=clean(msg)[:500],
            )
        for where, what in memfile.problems(doc):
            notes.append(f"invalid draft: {where} {what}")
        return DraftResult(
            doc=doc,
            text=text,
            model="offline",
            elapsed=time.perf_counter() - t0,
            notes=notes,
            weak=weak,
        )

    def _draft(self, request: DraftRequest) -> tuple[memfile.MemoryDoc, list[str], list[str]]:
        category = getattr(request, "category", None)
        if not isinstance(category, str) or category not in CATEGORIES:
            raise _Invalid(
                f"unknown category {category!r:.60}; expected one of {', '.join(CATEGORIES)}"
            )
        entry = getattr(request, "entry", None)
        entry = entry if isinstance(entry, Mapping) else {}
        snippets = parse_snippets(entry.get("snippets"))
        excerpt = raw if isinstance(raw := entry.get("excerpt"), str) else ""
        if not snippets and not excerpt.strip():
            raise _Invalid(
                f"no evidence to draft {category} from: the triage entry has no snippets and no excerpt"
            )
        notes: list[str] = []
        now = getattr(request, "now", "")
        if not (isinstance(now, str) and _STAMP.match(now)):
            notes.append(
                f"request.now {now!r:.40} is not a UTC stamp like 2026-11-22T10:04:00Z: used the current time"
            )
            now = now_iso()
        source = getattr(request, "source", None)
        source = source if isinstance(source, Mapping) else {}
        try:
            d = recipes.draft(category, snippets, excerpt, subagent=source.get("subagent") is True)
        except NotStated:
            raise _Skip(
                f"no statement of a {category.replace('_', ' ')} in the evidence, only chatter"
            ) from None
        except NoEvidence:
            raise _Invalid(
                f"no usable statement to draft {category} from in the evidence"
            ) from None
        notes += d.notes
        cat = CATEGORIES[category]
        sections = {}
        for name in cat.required + cat.optional:
            text = d.sections.get(name, "").strip()
            if text:
                sections[name] = safe_body(redact_text(text))
        done = finish_draft(d, category, make_tags(list(sections.values()), category))
        if done.skipped:
            raise _Skip(done.skipped)
        title = (
            bounded_line(redact_text(done.title).replace("\n", " ").strip(), memfile.TITLE_MAX)
            or "Untitled memory"
        )
        description = bounded_line(redact_text(done.description) or title, memfile.DESCRIPTION_MAX)
        body = memfile.join_sections(sections)
        # A title made from the topic is made from these tags: it adds none of its own.
        topical = TOPIC_TITLE_WEAK in done.weak or FOREIGN_WEAK in done.weak
        tags = make_tags(([] if topical else [title]) + list(sections.values()), category)
        # words of a language the drafter cannot read are no tags; names are
        if FOREIGN_WEAK in done.weak:
            names = {
                w.lower() for w in subject_words(tags, list(sections.values()), names_only=True)
            }
            tags = [t for t in tags if t in names] or [category.replace("_", "-")]
        session = s if isinstance(s := source.get("session"), str) else ""
        turns = sorted({s.turn for s in d.used if isinstance(s.turn, int) and s.turn > 0})
        if not turns:
            st = source.get("turns")
            st = st if isinstance(st, list) else []
            turns = sorted(t for t in st if isinstance(t, int) and not isinstance(t, bool))
        src: dict = {"session": clean(session)[:200]}
        if turns:
            src["turns"] = [turns[0], turns[-1]]
        doc = memfile.MemoryDoc(
            id=memfile.slugify(title, ID_SOFT),
            category=category,
            title=title,
            description=description,
            tags=tags,
            created=now,
            updated=now,
            sources=[src],
            status="active",
            body=body,
        )
        for c in getattr(request, "candidates", None) or ():
            if (
                isinstance(c, Mapping)
                and c.get("id")
                and norm(str(c.get("title", ""))) == norm(title)
            ):
                notes.append(f"same title as existing memory {str(c.get('id'))[:80]!r}")
        return doc, notes, done.weak
