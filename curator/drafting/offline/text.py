"""Text handling for the offline drafter: transcript lines cut into segments and sentences, cleaned of
Markdown marks, cut to a length at a clause or word boundary, cased and quoted as the document writes them."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right

from memcurate.curator.util.textsafe import clean

MAX_SENTENCE = 400
MAX_ITEMS = 6


def _outside_code(text: str, fn) -> str:
    """Apply `fn` to the parts of `text` outside `inline code` spans."""
    if "`" not in text:
        return fn(text)
    parts = text.split("`")
    return "`".join(fn(p) if i % 2 == 0 else p for i, p in enumerate(parts))


_ITALIC = re.compile(r"(?<![\w*])\*(?=\S)([^*]*?\S)\*(?![\w*])")
_INLINE_HEADING = re.compile(r"(?:(?<=\s)|^)#{1,6}(?=\s)")
_STRAY_BACKSLASH = re.compile(r"(?:(?<=\s)|(?<=[.,;:!?)])|^)\\+(?=\s|$)")
LEAD_MARKERS = re.compile(r"^(?:[-*•+]\s+|\d{1,3}[.)]\s+|#{1,6}\s+|>\s*)+")
# Inline list items and headings of text that was folded onto one line.
_INLINE_ITEM = re.compile(r"(?<=[.:!?)*])\s+(?=(?:\d{1,2}[.)]|[-•])\s+\S)|\s+(?=#{2,6}\s)")
# In text the triage folded onto one line, list items follow anything: "… class 2. **System …", "… - **Steps**".
_FOLDED_ITEM = re.compile(
    r"\s+(?=\d{1,2}\.\s+(?:\*\*|[A-Z`]))|\s+(?=[-•]\s+(?:\*\*|`))|\s+(?=#{2,6}\s)"
    r"|(?<=[.:!?*])\s+(?=[-•]\s+[A-Z])"
    r"|\s+[-•]\s+(?=[*`]|[A-Z](?!ixed|ix |ecause|aused|hich))"
)


def _demark(part: str) -> str:
    part = part.replace("**", "")
    part = _ITALIC.sub(r"\1", part)
    part = _INLINE_HEADING.sub("", part)
    part = _STRAY_BACKSLASH.sub("", part)
    if not part.isascii():
        part = "".join(
            ch for ch in part if unicodedata.category(ch) != "So" and ch not in "\ufe0f\u200d"
        )
    return part


def fold(text: str) -> str:
    return " ".join(text.split())


def clean_segment(text: str) -> str:
    """One line of transcript text as plain prose: no list marker, bold, emoji or heading marks."""
    text = LEAD_MARKERS.sub("", text.strip())
    text = fold(_outside_code(text, _demark))
    return LEAD_MARKERS.sub("", text).strip()


def segments(line: str, *, folded: bool = False) -> list[str]:
    """A line cut at inline list items and headings (text folded onto one line keeps them)."""
    line = fold(clean(line))
    if not line:
        return []
    parts = _INLINE_ITEM.split(line)
    if folded:
        parts = [q for p in parts for q in _FOLDED_ITEM.split(p)]
    return [s for s in (clean_segment(p) for p in parts) if s]


_SPLIT = re.compile(r"([.!?…]+)([\"'”’)\]]*)\s+(?=[\"'“‘(\[`*]*([A-Za-z0-9`]))")
_ABBREV = frozenset(
    {
        "e.g",
        "i.e",
        "etc",
        "vs",
        "cf",
        "approx",
        "no",
        "fig",
        "mr",
        "mrs",
        "dr",
        "st",
        "eg",
        "ie",
        "al",
        "resp",
        "incl",
        "min",
        "max",
        "ca",
    }
)


def sentences(text: str) -> list[str]:
    """`text` cut at sentence ends; never inside a word, an abbreviation or `code`."""
    out: list[str] = []
    start = 0
    spans = [m.span() for m in re.finditer(r"`[^`]*`", text)]
    starts = [a for a, _ in spans]
    for m in _SPLIT.finditer(text):
        end = m.end(2)
        k = bisect_right(starts, m.start()) - 1
        if k >= 0 and m.start() < spans[k][1]:  # inside `code`
            continue
        before = text[start : m.start()].split()
        last = before[-1].lower().lstrip("([\"'").rstrip(".") if before else ""
        if m.group(1) == "." and (
            last in _ABBREV
            or (last.isdigit() and len(last) <= 2 and len(before) == 1)
            or (len(last) == 1 and last.isalpha())
        ):
            continue
        # People type "done. also …": a lowercase start ends a sentence only after a real one.
        # A name may start lowercase ("Firmware downloaded. pip3 is blocked", "Nothing pushed. `auth/x` has").
        nxt = text[m.end() :].split(None, 1)[0]
        name = nxt.startswith("`") or re.search(r"[\d_/]", nxt)
        if (
            m.group(3).islower()
            and not name
            and (len(before) < 3 or m.group(1) not in (".", "!", "?"))
        ):
            continue
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def finish(s: str) -> str:
    """A sentence as it is written into the document: capital first, closing punctuation, bounded."""
    s = fold(s).strip(" ,;-–—")
    if not s:
        return s
    if len(s) > MAX_SENTENCE:
        s = shorten(s, MAX_SENTENCE, ellipsis=True)
    s = trim_truncated(s)
    s = sentence_case(s)
    if s.endswith(":"):
        s = s[:-1].rstrip() + "."
    elif s[-1] not in ".!?…" and not (s[-1] in "\"'”’)" and len(s) > 1 and s[-2] in ".!?…"):
        s += "."
    return s


def trim_truncated(s: str) -> str:
    """A sentence the triage cut ("… and waits 30…") back to its last whole clause when it has one."""
    if not s.endswith("…"):
        return s
    body = s[:-1].rstrip()
    for sep in ("; ", " — ", ": ", " - "):
        k = body.rfind(sep)
        if k >= max(40, len(body) // 3):
            return _balanced(body[:k].rstrip(" ,")) + "."
    k = body.rfind(", ")
    if k >= max(40, len(body) // 2):
        return _balanced(body[:k]) + " …"
    k = body.rfind(" ")
    return _balanced(body[:k] if k > 20 else body) + " …"


_CONNECTORS = frozenset(
    "and or but with the a an of to for in on at by from as that which who so than via into "
    "when while if because since its their our your this these those is are was were be "
    "also just then how what why where about".split()
)


def shorten(s: str, limit: int, *, ellipsis: bool = False) -> str:
    """`s` within `limit` characters, cut at a clause or word boundary."""
    if len(s) <= limit:
        return s
    head = s[: limit - (2 if ellipsis else 0)]
    cut = -1
    for sep in (": ", "; ", " — ", ", ", " ("):
        k = head.rfind(sep)
        if k >= limit * 0.5:
            cut = max(cut, k)
    if cut < 0:
        strong = [
            m.start()
            for m in re.finditer(r" (?:and|or|but|that|which|so|because|when|if|while) ", head)
            if m.start() >= limit * 0.5
        ]
        weak = [
            m.start()
            for m in re.finditer(r" (?:with|to|for|from|by|in|on) ", head)
            if m.start() >= limit * 0.5
        ]
        cut = (strong or weak or [head.rfind(" ")])[-1]
        if cut < limit * 0.4:
            cut = len(head)
    out = head[:cut].rstrip(" ,;:-–—(")
    words = out.split(" ")
    while len(words) > 3 and (
        words[-1].lower().strip(",") in _CONNECTORS or words[-1].lower() in ("i.e", "e.g")
    ):
        words.pop()
    out = _balanced(" ".join(words).rstrip(" ,;:-–—("))
    return out + (" …" if ellipsis else "")


def _balanced(s: str) -> str:
    """Drop an unclosed `code` span or bracket left by a cut."""
    if s.count("`") % 2:
        s = s[: s.rfind("`")].rstrip()
    for o, c in (("(", ")"), ("[", "]")):
        if s.count(o) > s.count(c):
            s = s[: s.rfind(o)].rstrip()
    return s.rstrip(" ,;:-–—")


def sentence_case(s: str) -> str:
    if s and s[0].islower():
        first = s.split(" ", 1)[0]
        # A name keeps its case: "pip3", "ci.yml", "getUser", "`x`".
        if not any(c in first for c in "._/()`=") and not any(
            c.isupper() or c.isdigit() for c in first[1:]
        ):
            return s[0].upper() + s[1:]
    return s


def lower_first(s: str) -> str:
    """ "It is less work" -> "it is less work", but "JWT is" and "`x`" stay."""
    if (
        len(s) > 1
        and s[0].isupper()
        and not s[1].isupper()
        and s.split(" ", 1)[0] not in ("I", "I'm", "I've", "I'd")
    ):
        return s[0].lower() + s[1:]
    return s


def inside_code(s: str, pos: int) -> bool:
    return s[:pos].count("`") % 2 == 1


def third_person(s: str) -> str:
    """The user's "me"/"my" in a title or description, where the reader is not the user."""
    s = re.sub(r"\bme\b", "the user", s)
    s = re.sub(r"\bmy\b", "the user's", s)
    return s


def inline_code(s: str) -> str:
    """`s` as one inline code span, whatever backticks it holds."""
    s = fold(s)
    run = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (run + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def quote(s: str) -> str:
    return f"“{s}”"


_PARENS = re.compile(r"\s*\([^()]{0,200}\)")


def drop_parens(s: str) -> str:
    """`s` without (asides), outside code; kept when nothing would be left."""
    out = fold(_outside_code(s, lambda p: _PARENS.sub("", p)))
    return out if len(out.split()) >= 3 else s


def bounded_line(s: str, limit: int) -> str:
    s = fold(s)
    return s if len(s) <= limit else shorten(s, limit - 1).rstrip(".,;:") + "…"


def bullets(items: list[str], numbered: bool = False) -> str:
    return "\n".join(f"{i}. {x}" if numbered else f"- {x}" for i, x in enumerate(items, 1))


def norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", s.lower()).strip()


def safe_body(body: str) -> str:
    """Lines of evidence that would read as structure (a heading, a code fence, a rule) are escaped."""
    out = []
    for line in body.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith(("#", "```", "~~~")) or re.match(
            r"^(?:-{3,}|={3,}|\*{3,}|_{3,})\s*$", stripped
        ):
            line = line[: len(line) - len(stripped)] + "\\" + stripped
        out.append(line)
    return "\n".join(out)
