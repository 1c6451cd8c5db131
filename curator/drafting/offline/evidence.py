"""The evidence model: a triage entry's excerpt and snippets read as sentences in transcript order.

The excerpt is cut into blocks (`[turn N · speaker]` headers), the blocks
into lines and the lines into sentences (Markdown list markers, bold and
headings stripped; inline code kept). A sentence on a snippet's line carries
that snippet's weight; the one holding the snippet's keyword is a *key*
sentence. Snippets the (bounded) excerpt lost get blocks of their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memcurate.curator.drafting.offline.statements import is_fluff
from memcurate.curator.drafting.offline.text import (
    LEAD_MARKERS,
    clean_segment,
    fold,
    segments,
    sentences,
)
from memcurate.curator.util.textsafe import clean

MAX_SNIPPETS = 24  # the triage keeps 6; more is hostile input
MAX_SNIPPET_CHARS = 2000  # the triage cuts at 300
MAX_EXCERPT_CHARS = 20000  # the triage bounds it at 4000


_HEADER = re.compile(r"^\[turn (\d{1,9}) · ([a-z_]{1,20})(, last reply)?\](?: (.*))?$")
_SPECIAL = re.compile(r"^\[(files changed|activity)\](?: (.*))?$")


@dataclass
class Block:
    turn: int
    speaker: str  # user | assistant | parent | error (a failed tool run)
    kind: str  # message | prompt | reply | files | activity
    lines: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Snip:
    turn: int
    speaker: str
    weight: float
    keywords: tuple[str, ...]
    text: str


@dataclass(frozen=True, eq=False)
class Sent:
    text: str
    turn: int
    speaker: str
    order: tuple[int, int, int]  # block, line, sentence: transcript order
    weight: float = 0.0  # of the snippet whose line this is (0 for context)
    key: bool = False  # holds the snippet's keyword
    heading: str = ""  # the heading-like line above it in its block ("WebSearch Tool")
    item: bool = False  # was a list item
    kind: str = "message"  # message | prompt | reply | error

    @property
    def user(self) -> bool:
        return self.speaker in ("user", "parent")

    @property
    def line(self) -> tuple[int, int]:
        return self.order[:2]


def parse_excerpt(excerpt: str) -> list[Block]:
    blocks: list[Block] = []
    for raw in excerpt.split("\n"):
        line = raw.rstrip()
        if not line.strip():
            continue
        m = _HEADER.match(line)
        if m:
            kind = "reply" if m.group(3) else ("prompt" if m.group(4) else "message")
            speaker = "error" if m.group(2) == "tool" else m.group(2)
            blocks.append(Block(int(m.group(1)), speaker, kind, [m.group(4)] if m.group(4) else []))
            continue
        m = _SPECIAL.match(line)
        if m:
            blocks.append(Block(0, "", m.group(1).replace(" changed", ""), [m.group(2) or ""]))
            continue
        if not blocks:
            blocks.append(Block(0, "", "message"))
        blocks[-1].lines.append(line)
    return blocks


def parse_snippets(raw) -> list[Snip]:
    out: list[Snip] = []
    for s in (raw if isinstance(raw, list) else [])[:MAX_SNIPPETS]:
        if not isinstance(s, dict) or not isinstance(s.get("text"), str):
            continue
        turn, weight = s.get("turn"), s.get("weight")
        kws = raw_kws if isinstance(raw_kws := s.get("keywords"), list) else []
        out.append(
            Snip(
                turn=turn
                if isinstance(turn, int) and not isinstance(turn, bool) and turn >= 0
                else 0,
                speaker=str(s.get("speaker") or "")[:20],
                weight=float(weight)
                if isinstance(weight, (int, float))
                and not isinstance(weight, bool)
                and weight == weight
                and 0 <= weight < 1e6
                else 1.0,
                keywords=tuple(str(k).lower()[:120] for k in kws[:12] if isinstance(k, str)),
                text=clean(s["text"][:MAX_SNIPPET_CHARS]),
            )
        )
    return out


def _mask(s: str) -> str:
    parts = s.split("`")
    return "".join(p if i % 2 == 0 else "CODE" for i, p in enumerate(parts)).lower()


def _heading_of(raw: str) -> str:
    """The text of a heading-like line ("**WebSearch Tool:**", "### Key Findings:"), else ''."""
    s = raw.strip()
    if not (s.startswith(("#", "**")) and (s.rstrip("*").endswith(":") or s.startswith("#"))):
        return ""
    text = clean_segment(s).rstrip(":").strip()
    return text if 0 < len(text.split()) <= 6 else ""


_ERROR_PREFIX = re.compile(r"^error(?:, then fixed)?: ")


class Evidence:
    """The sentences of a category's excerpt and snippets, in transcript order."""

    def __init__(self, snippets: list[Snip], excerpt: str) -> None:
        self.snippets = snippets
        self.blocks = parse_excerpt(clean(excerpt[:MAX_EXCERPT_CHARS]))
        self.sents: list[Sent] = []
        matched: set[int] = set()
        for bi, block in enumerate(self.blocks):
            if block.kind in ("files", "activity"):
                continue
            heading = ""
            for li, raw in enumerate(block.lines):
                h = _heading_of(raw)
                if h:
                    heading = h
                    continue
                self._add_line(bi, li, block, raw, self._match(block, raw, matched), heading)
        # Snippets the (bounded) excerpt lost get blocks of their own, after the rest.
        for si, snip in enumerate(snippets):
            if si in matched:
                continue
            speaker = "error" if snip.speaker == "tool" else snip.speaker
            text = _ERROR_PREFIX.sub("", snip.text)
            lines = [ln for ln in text.split("\n") if ln.strip()] or [text]
            self.blocks.append(Block(snip.turn, speaker, "message", lines))
            for li, ln in enumerate(lines):
                self._add_line(len(self.blocks) - 1, li, self.blocks[-1], ln, snip, "")

    def _match(self, block: Block, raw: str, matched: set[int]) -> Snip | None:
        line = fold(raw)
        for si, snip in enumerate(self.snippets):
            if si in matched:
                continue
            text = snip.text
            if snip.speaker == "tool":
                if block.speaker != "error":
                    continue
                text, line = _ERROR_PREFIX.sub("", text), _ERROR_PREFIX.sub("", line)
            stem = text.rstrip("…").rstrip()
            if fold(text) == line or (len(stem) > 40 and line.startswith(stem)):
                matched.add(si)
                return snip
        return None

    def _add_line(
        self, bi: int, li: int, block: Block, raw: str, snip: Snip | None, heading: str
    ) -> None:
        if block.speaker == "error":
            text = fold(clean(_ERROR_PREFIX.sub("", raw.strip())))
            if text:
                self.sents.append(
                    Sent(
                        text,
                        block.turn,
                        "error",
                        (bi, li, 0),
                        snip.weight if snip else 0.0,
                        snip is not None,
                        heading,
                        False,
                        "error",
                    )
                )
            return
        item = bool(LEAD_MARKERS.match(raw.strip())) and not raw.strip().startswith("#")
        folded = block.kind in ("prompt", "reply")
        sents = [x for seg in segments(raw, folded=folded) for x in sentences(seg)]
        weights = [0.0] * len(sents)
        keys: set[int] = set()
        if snip:
            hits = [sum(1 for kw in snip.keywords if kw and kw in _mask(x)) for x in sents]
            most = max(hits, default=0)
            if most:
                for k, h in enumerate(hits):
                    weights[k] = snip.weight * ((0.8 + 0.2 * h / most) if h else 0.7)
                    if h:
                        keys.add(k)
            else:  # the keyword is not in any sentence (cut off, or across a boundary): a weaker hint
                weights = [snip.weight * 0.3] * len(sents)
                first = next((k for k, x in enumerate(sents) if not is_fluff(x)), None)
                if first is not None:
                    keys.add(first)
        kind = block.kind if block.kind in ("prompt", "reply") else "message"
        for k, x in enumerate(sents):
            self.sents.append(
                Sent(
                    x,
                    block.turn,
                    block.speaker,
                    (bi, li, k),
                    weights[k],
                    k in keys,
                    heading,
                    item,
                    kind,
                )
            )

    # -- queries ---------------------------------------------------------------
    def keyed(self) -> list[Sent]:
        return [s for s in self.sents if s.key]

    def near(self, s: Sent, *, lines: int = 2) -> list[Sent]:
        """Sentences around `s`: the rest of its line, and `lines` lines either side in its block."""
        b, li, _ = s.order
        return [
            t
            for t in self.sents
            if t is not s and t.order[0] == b and abs(t.order[1] - li) <= lines
        ]

    def previous(self, s: Sent) -> Sent | None:
        """The sentence just before `s` in its block."""
        before = [t for t in self.sents if t.order[0] == s.order[0] and t.order < s.order]
        return before[-1] if before else None

    def after(self, s: Sent) -> list[Sent]:
        return [t for t in self.sents if t.order > s.order]

    def turn_prompt(self, turn: int) -> list[Sent]:
        return [t for t in self.sents if t.turn == turn and t.user]
