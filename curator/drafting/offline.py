"""The offline drafter (DESIGN §10): a complete memory file from the triage's evidence alone.

No network, no key, no model: it reads the category's scored snippets and the
excerpt around them (already redacted), picks the strongest statement, and
fills every section of the category (DESIGN §6) with sentences taken from the
session, whole, in the speakers' own words. It does not invent: a section for
which the session holds no evidence says so, and quotes what it has.

How it reads the evidence:

- The excerpt is cut into blocks (`[turn N · speaker]` headers), the blocks
  into lines and the lines into sentences (Markdown list markers, bold and
  headings stripped; inline code kept). A sentence on a snippet's line
  carries that snippet's weight; the one holding the snippet's keyword is a
  *key* sentence.
- The *main* sentence is the best sentence of the snippets' lines for the
  category: snippet weight (which already says who spoke), whether it holds
  the keyword, and its shape (narration, questions, requests, pasted code
  count less; a reason clause and the category's own wording count more). It
  gives the title and the first section; the sections after it come from its
  reason clause, the sentences around it (an agreement from the other
  speaker, a "because" sentence, a trade-off), and the other snippets.
- Per category: decision (Decision / Rationale / Alternatives / Consequences),
  constraint (Rule / Impact / Workaround), runbook (Symptom from the person's
  report and the failing run, Steps from the fix sentences, Verification from
  the "passes now" line or a re-run of the failing command, Root cause),
  tech_debt (Description / Why deferred / Suggested fix), preference (the
  user's words, quoted / Reason / Examples), session_summary (Goal from the
  prompts, Outcome and Next steps from the last reply, Completed from the
  files changed).
- Other strong statements the draft leaves out are listed in the result's
  notes, so a reviewer can see what else the evidence held.

Everything is a pure function of the request: the same request gives the same
bytes, and drafting from many threads at once is safe.
"""

from __future__ import annotations

import re
import time
from bisect import bisect_right
import unicodedata
from dataclasses import dataclass, field
from typing import Mapping

from .. import memfile
from ..categories import CATEGORIES
from ..redact import find_secrets, redact_text
from ..textsafe import clean
from ..staging import now_iso
from . import DraftRequest, DraftResult

MAX_SNIPPETS = 24  # the triage keeps 6; more is hostile input
MAX_SNIPPET_CHARS = 2000  # the triage cuts at 300
MAX_EXCERPT_CHARS = 20000  # the triage bounds it at 4000
MAX_SENTENCE = 400
TITLE_SOFT = 110
DESCRIPTION_SOFT = 190
MAX_ITEMS = 6
MAX_TAGS = 6

NO_NEXT_STEP = "No next step was stated in the session."

_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


# -- text --------------------------------------------------------------------------

def _outside_code(text: str, fn) -> str:
    """Apply `fn` to the parts of `text` outside `inline code` spans."""
    if "`" not in text:
        return fn(text)
    parts = text.split("`")
    return "`".join(fn(p) if i % 2 == 0 else p for i, p in enumerate(parts))


_ITALIC = re.compile(r"(?<![\w*])\*(?=\S)([^*]*?\S)\*(?![\w*])")
_INLINE_HEADING = re.compile(r"(?:(?<=\s)|^)#{1,6}(?=\s)")
_STRAY_BACKSLASH = re.compile(r"(?:(?<=\s)|(?<=[.,;:!?)])|^)\\+(?=\s|$)")
_LEAD_MARKERS = re.compile(r"^(?:[-*•+]\s+|\d{1,3}[.)]\s+|#{1,6}\s+|>\s*)+")
# Inline list items and headings of text that was folded onto one line.
_INLINE_ITEM = re.compile(r"(?<=[.:!?)*])\s+(?=(?:\d{1,2}[.)]|[-•])\s+\S)|\s+(?=#{2,6}\s)")
# In text the triage folded onto one line, list items follow anything: "… class 2. **System …", "… - **Steps**".
_FOLDED_ITEM = re.compile(r"\s+(?=\d{1,2}\.\s+(?:\*\*|[A-Z`]))|\s+(?=[-•]\s+(?:\*\*|`))|\s+(?=#{2,6}\s)"
                          r"|(?<=[.:!?*])\s+(?=[-•]\s+[A-Z])"
                          r"|\s+[-•]\s+(?=[*`]|[A-Z](?!ixed|ix |ecause|aused|hich))")


def _demark(part: str) -> str:
    part = part.replace("**", "")
    part = _ITALIC.sub(r"\1", part)
    part = _INLINE_HEADING.sub("", part)
    part = _STRAY_BACKSLASH.sub("", part)
    if not part.isascii():
        part = "".join(ch for ch in part if unicodedata.category(ch) != "So" and ch not in "\ufe0f\u200d")
    return part


def _fold(text: str) -> str:
    return " ".join(text.split())


def clean_segment(text: str) -> str:
    """One line of transcript text as plain prose: no list marker, bold, emoji or heading marks."""
    text = _LEAD_MARKERS.sub("", text.strip())
    text = _fold(_outside_code(text, _demark))
    return _LEAD_MARKERS.sub("", text).strip()


def segments(line: str, *, folded: bool = False) -> list[str]:
    """A line cut at inline list items and headings (text folded onto one line keeps them)."""
    line = _fold(clean(line))
    if not line:
        return []
    parts = _INLINE_ITEM.split(line)
    if folded:
        parts = [q for p in parts for q in _FOLDED_ITEM.split(p)]
    return [s for s in (clean_segment(p) for p in parts) if s]


_SPLIT = re.compile(r"([.!?…]+)([\"'”’)\]]*)\s+(?=[\"'“‘(\[`*]*([A-Za-z0-9`]))")
_ABBREV = frozenset({"e.g", "i.e", "etc", "vs", "cf", "approx", "no", "fig", "mr", "mrs", "dr", "st", "eg", "ie",
                     "al", "resp", "incl", "min", "max", "ca"})


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
        before = text[start:m.start()].split()
        last = before[-1].lower().lstrip("([\"'").rstrip(".") if before else ""
        if m.group(1) == "." and (last in _ABBREV or (last.isdigit() and len(last) <= 2 and len(before) == 1)
                                  or (len(last) == 1 and last.isalpha())):
            continue
        # People type "done. also …": a lowercase start ends a sentence only after a real one.
        if m.group(3).islower() and (len(before) < 3 or m.group(1) not in (".", "!", "?")):
            continue
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


_INTERJ_PUNCT = (r"right|good|nice|cool|great|perfect|excellent|done|agreed|yes|yep|sure|thanks|thank you|"
                 r"indeed|correct|exactly|awesome|hmm+|ugh|oops|whoa|alright|fair enough|found it|got it|"
                 r"good (?:catch|point|idea|question)|that's (?:a )?(?:great|good) (?:catch|point|idea|question)|"
                 r"you'?re (?:absolutely |totally |completely |quite )?right|you are (?:absolutely )?right|"
                 r"oh no|all done|success|experiment complete")
_INTERJ_SPACE = (r"ok(?:ay)?|so|well|also|anyway|and|but|now|hey(?: claude)?|hi|oh|ah|wait|actually|then|"
                 r"basically|honestly|in general|in short|plus")
_INTERJ = re.compile(rf"^(?:(?:(?:{_INTERJ_PUNCT})\s*[!,.:;—–-]+\s*)"
                     rf"|(?:(?:{_INTERJ_SPACE})(?:\s*[!,.:;—–]+\s*|\s+)))+", re.I)
_LABEL = re.compile(r"^(?:hiccup|note|nb|warning|caveat|gotcha|important|heads up|update|fyi|tip|bonus|key insight|"
                    r"takeaway|summary|result|tl;?dr|(?:one|another|one more|a|last|final|quick|small) "
                    r"(?:change|thing|note|request|point|nit|tweak))\s*:\s*", re.I)


_MERGED_HEADING = re.compile(r"^(?i:summary|overview|changes made|results?|done)\s+"
                             r"(?=(?:I|I've|I'm|The|All|Both|We|This)\b)")


def strip_interjections(text: str) -> str:
    out = _LABEL.sub("", _INTERJ.sub("", text).strip()).strip()
    out = _MERGED_HEADING.sub("", out, count=1) if out[:1].isupper() else out
    return out if len(out) >= 3 else text


_NARRATION = re.compile(
    r"^(?:let me|let's (?:check|look|see|run|start|first|try|examine|verify|now|begin|find|read|test|also)"
    r"|i'll (?:now |first |start by |go ahead and |also )?(?:check|look|run|start|examine|read|help|search|"
    r"investigate|see|take a look|explore|begin|continue|create a plan|analy[sz]e|review|verify|test|find|update the)"
    r"|i will (?:check|look|run|now|first|start)|i need to (?:look|check|understand|see|find|examine|investigate|read|"
    r"fix|run|update|verify|first)|i'm going to|i can see|i see\b|looking at|i understand|now i (?:understand|see|can)"
    r"|based on (?:my|the|your) |here's |here is |i've (?:successfully )?(?:completed|finished) (?:the|all)"
    r"|i should (?:either|first|check|look)|the user (?:wants|is asking|asked)|this (?:means|shows|confirms) "
    r"|(?:great|perfect|good)[!,.]? (?:so|now) |it looks like (?:the|we|i) (?:need|should))\b", re.I)
_REQUEST = re.compile(r"^(?:(?:can|could|would|will) you\b"
                      r"|please (?!always|never|don't|do not|keep|avoid|use|make sure)"
                      r"|i(?:'d| would) like (?:your help|you to help|some help|help)|help me\b|hey claude\b)", re.I)
_GENERAL = re.compile(r"\b(?:always|never|in general|from now on|every (?:time|new)|prefer|i'd rather|rather than|"
                      r"by default|whenever|please (?:don't|do not|avoid|keep)|(?:don't|do not) (?:ever )?(?:use|add|"
                      r"push|commit|change|touch|create|write|run|merge))\b", re.I)
_REASON = re.compile(r"\b(?:because|since|so that|due to|as it|which (?:is|means|makes)|to avoid|otherwise|"
                     r"in order to|the reason|that way|less work|simpler|cleaner|faster|safer|more reliable|"
                     r"better fit|more efficient|easier|would mean)\b", re.I)
_TRADEOFF = re.compile(r"\b(?:trade-?offs?|downside|drawback|the cost is|at the cost|caveat)\b", re.I)


def is_fluff(s: str) -> bool:
    """Interjections and headings that say nothing on their own ("Perfect!", "Summary of Fixes:")."""
    body = strip_interjections(s)
    words = body.split()
    if not words or _INTERJ.fullmatch(s.strip() + " "):
        return True
    if len(words) <= 4 and body.endswith(("!", ":")):
        return True
    return len(words) <= 2 and not any(c in body for c in "`/._")


def is_codeish(s: str) -> bool:
    """Pasted code, diffs, markup or tables rather than prose."""
    t = s.strip()
    if t.startswith(("diff --git", "@@", "+++", "--- ", "index ", "$ ", ">>> ", "|", "def ", "class ", "import ")):
        return True
    if any(m in t for m in ("```", "{%", "<!--", "___", '"""')) or len(re.findall(r"</?\w+[^>]*>", t)) >= 2:
        return True
    prose = re.sub(r"`[^`]*`", "x", t)
    if re.search(r"\b\w+ = [\w.]+\(|\bdef \w+\(|=\s*\{|\w\.\w+\([^)]*\) as \w+:", prose):
        return True
    if len(prose) < 24:
        return False
    ok = sum(1 for c in prose if c.isalpha() or c.isspace() or c in ".,;:'\"()-!?")
    return ok / len(prose) < 0.8


_SMALL = frozenset("a an and the of on in for to with by vs or at from".split())


def is_heading(s: str) -> bool:
    """Title Case words ending a line or a lead-in: "Benefits of Using the Component", "GitHub Action Updates"."""
    t = s.strip().rstrip(":.!").strip()
    t = re.sub(r"`[^`]*`", "Code", t).rsplit(": ", 1)[-1]
    if any(re.search(r"\d", tok) for tok in t.split()[:-1]):  # "Tests on Python 3.12 and 3.13" is prose
        return False
    words = [w for w in re.findall(r"[A-Za-z][\w'-]*", t)]
    big = [w for w in words if w.lower() not in _SMALL]
    return 2 <= len(words) <= 8 and len(big) >= 2 and all(w[0].isupper() for w in big) and "`" not in t


def is_lead_in(s: str) -> bool:
    return s.rstrip().endswith(":")


def finish(s: str) -> str:
    """A sentence as it is written into the document: capital first, closing punctuation, bounded."""
    s = _fold(s).strip(" ,;-–—")
    if not s:
        return s
    if len(s) > MAX_SENTENCE:
        s = _cut(s, MAX_SENTENCE, ellipsis=True)
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


_CONNECTORS = frozenset("and or but with the a an of to for in on at by from as that which who so than via into "
                        "when while if because since its their our your this these those is are was were be "
                        "also just then how what why where about".split())


def _cut(s: str, limit: int, *, ellipsis: bool = False) -> str:
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
        strong = [m.start() for m in re.finditer(r" (?:and|or|but|that|which|so|because|when|if|while) ", head)
                  if m.start() >= limit * 0.5]
        weak = [m.start() for m in re.finditer(r" (?:with|to|for|from|by|in|on) ", head) if m.start() >= limit * 0.5]
        cut = (strong or weak or [head.rfind(" ")])[-1]
        if cut < limit * 0.4:
            cut = len(head)
    out = head[:cut].rstrip(" ,;:-–—(")
    words = out.split(" ")
    while len(words) > 3 and (words[-1].lower().strip(",") in _CONNECTORS or words[-1].lower() in ("i.e", "e.g")):
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
        if not any(c in first for c in "._/()`=") and not any(c.isupper() for c in first[1:]):
            return s[0].upper() + s[1:]
    return s


def lower_first(s: str) -> str:
    """"It is less work" -> "it is less work", but "JWT is" and "`x`" stay."""
    if len(s) > 1 and s[0].isupper() and not s[1].isupper() and s.split(" ", 1)[0] not in ("I", "I'm", "I've", "I'd"):
        return s[0].lower() + s[1:]
    return s


_REASON_CLAUSE = re.compile(
    r"(?:,\s*|\s+)(?:and |but )?(because|since|so that|due to|as it|which (?:is|means|makes|would|keeps)|"
    r"to avoid|otherwise|in order to)\b", re.I)
_LEADING_REASON = re.compile(r"^(?:since|because|as|now that|given that)\s+(.{6,}?),\s+(.+)$", re.I)
_SO_CLAUSE = re.compile(r"^(.{6,}?),?\s+so\s+(?=(?:we|i|you|it|the|this|that|they|tests?|all)\b)(.+)$", re.I)


@dataclass
class Clauses:
    core: str
    reason: str = ""  # the reason, as given ("because …", "since …", "which is …")
    consequence: str = ""  # what follows from it (", so …")


def split_reason(text: str) -> Clauses:
    """A statement, its reason clause and its consequence ("A because B, so C" / "Since B, A" / "B so A")."""
    s = text.strip()
    m = _LEADING_REASON.match(s)
    if m:
        return Clauses(core=m.group(2), reason="because " + m.group(1))
    m = _REASON_CLAUSE.search(s)
    if m and m.start() >= 8 and not _inside_code(s, m.start()):
        core, rest = s[: m.start()], s[m.start():].lstrip(" ,")
        rest = re.sub(r"^(?:and|but)\s+", "", rest, flags=re.I)
        cons = ""
        k = re.search(r",\s+so\s+", rest)
        if k:
            rest, cons = rest[: k.start()], rest[k.end():]
        return Clauses(core=core.rstrip(" ,"), reason=rest, consequence=cons)
    m = _SO_CLAUSE.match(s)
    if m:
        return Clauses(core=m.group(2), reason="because " + m.group(1))
    return Clauses(core=s)


def _inside_code(s: str, pos: int) -> bool:
    return s[:pos].count("`") % 2 == 1


def reason_sentence(clause: str) -> str:
    """A reason clause ("which is less work") as a sentence of its own ("It is less work.")."""
    c = clause.strip().rstrip(",;")
    rules = ((r"^(?:because|since|as)\s+(?:of\s+)?", ""), (r"^which is\b", "It is"), (r"^which means\b", "This means"),
             (r"^which makes\b", "This makes"), (r"^which would\b", "It would"), (r"^which keeps\b", "This keeps"),
             (r"^as it\b", "It"), (r"^due to\b", "Due to"))
    for pat, rep in rules:
        new = re.sub(pat, rep, c, count=1, flags=re.I)
        if new != c:
            c = new
            break
    return finish(c)


def third_person(s: str) -> str:
    """The user's "me"/"my" in a title or description, where the reader is not the user."""
    s = re.sub(r"\bme\b", "the user", s)
    s = re.sub(r"\bmy\b", "the user's", s)
    return s


def inline_code(s: str) -> str:
    """`s` as one inline code span, whatever backticks it holds."""
    s = _fold(s)
    run = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (run + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def quote(s: str) -> str:
    return f"“{s}”"


_PARENS = re.compile(r"\s*\([^()]{0,200}\)")


def drop_parens(s: str) -> str:
    """`s` without (asides), outside code; kept when nothing would be left."""
    out = _fold(_outside_code(s, lambda p: _PARENS.sub("", p)))
    return out if len(out.split()) >= 3 else s


# -- evidence ----------------------------------------------------------------------

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
        kws = s.get("keywords") if isinstance(s.get("keywords"), list) else []
        out.append(Snip(turn=turn if isinstance(turn, int) and not isinstance(turn, bool) and turn >= 0 else 0,
                        speaker=str(s.get("speaker") or "")[:20],
                        weight=float(weight) if isinstance(weight, (int, float)) and not isinstance(weight, bool)
                        and weight == weight and 0 <= weight < 1e6 else 1.0,
                        keywords=tuple(str(k).lower()[:120] for k in kws[:12] if isinstance(k, str)),
                        text=clean(s["text"][:MAX_SNIPPET_CHARS])))
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


_GENERIC_HEADINGS = frozenset("""summary changes made key findings what i found benefits overview result results fixes
notes details steps next left for time the of using component current structure navigation modes test coverage added
features tested tool control options improvements solution problem issue conclusion takeaway a an and on in fix to
what was completed""".split())
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
        line = _fold(raw)
        for si, snip in enumerate(self.snippets):
            if si in matched:
                continue
            text = snip.text
            if snip.speaker == "tool":
                if block.speaker != "error":
                    continue
                text, line = _ERROR_PREFIX.sub("", text), _ERROR_PREFIX.sub("", line)
            stem = text.rstrip("…").rstrip()
            if _fold(text) == line or (len(stem) > 40 and line.startswith(stem)):
                matched.add(si)
                return snip
        return None

    def _add_line(self, bi: int, li: int, block: Block, raw: str, snip: Snip | None, heading: str) -> None:
        if block.speaker == "error":
            text = _fold(clean(_ERROR_PREFIX.sub("", raw.strip())))
            if text:
                self.sents.append(Sent(text, block.turn, "error", (bi, li, 0), snip.weight if snip else 0.0,
                                       snip is not None, heading, False, "error"))
            return
        item = bool(_LEAD_MARKERS.match(raw.strip())) and not raw.strip().startswith("#")
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
            self.sents.append(Sent(x, block.turn, block.speaker, (bi, li, k), weights[k], k in keys, heading, item,
                                   kind))

    # -- queries ---------------------------------------------------------------
    def keyed(self) -> list[Sent]:
        return [s for s in self.sents if s.key]

    def near(self, s: Sent, *, lines: int = 2) -> list[Sent]:
        """Sentences around `s`: the rest of its line, and `lines` lines either side in its block."""
        b, li, _ = s.order
        return [t for t in self.sents if t is not s and t.order[0] == b and abs(t.order[1] - li) <= lines]

    def previous(self, s: Sent) -> Sent | None:
        """The sentence just before `s` in its block."""
        before = [t for t in self.sents if t.order[0] == s.order[0] and t.order < s.order]
        return before[-1] if before else None

    def after(self, s: Sent) -> list[Sent]:
        return [t for t in self.sents if t.order > s.order]

    def turn_prompt(self, turn: int) -> list[Sent]:
        return [t for t in self.sents if t.turn == turn and t.user]


# -- choosing ----------------------------------------------------------------------

_BOOST = {
    "decision": re.compile(r"\b(?:let's (?:go with|use|keep|switch|stick|just)|we(?:'ll| will) (?:go with|use)|decided|"
                           r"go with|settled on|chose|should (?:use|change|switch|modify|run)|no need|"
                           r"(?:we|i) don't need|we're not doing|instead of|rather than|combine)\b", re.I),
    "constraint": re.compile(r"\b(?:must|never|can't|cannot|no (?:network|access)|only|not (?:allowed|available|"
                             r"supported)|requires?|blocked|denied|doesn't|didn't|won't)\b", re.I),
    "tech_debt": re.compile(r"\b(?:todo|for now|later|defer(?:red)?|leave .{1,60} out|left out|out of (?:this|the) "
                            r"(?:change|scope)|temporar|hack|known (?:issue|problem|limitation)"
                            r"|allow .{1,40} failures)\b", re.I),
    "preference": _GENERAL,
}
_BACKREF = re.compile(r"^(?:this|that|it|which|doing so|this approach|that approach|this way)(?:'s| is| was| would|"
                      r" will| keeps| makes)\b", re.I)


def shape_factor(s: Sent, category: str) -> float:
    """How well a sentence's shape suits the main statement of a memory."""
    text = strip_interjections(s.text)
    core = split_reason(text).core
    f = 1.0
    if _NARRATION.match(text) or _NARRATION.match(core):
        f *= 0.15
    if is_lead_in(text):
        f *= 0.4
    if text.endswith("?"):
        f *= 0.6 if category in ("decision", "preference") else 0.4
    if _REQUEST.match(text):
        f *= 0.35 if category == "preference" else 0.75
    boost = _BOOST.get(category)
    if boost is not None and boost.search(text):
        f *= 1.3
    if not s.key and s.weight > 0 and not (boost is not None and boost.search(text)):
        f *= 0.7  # beside the keyword, and not saying anything of the category either
    if category in ("decision", "tech_debt") and _REASON.search(text):
        f *= 1.5  # the reason fills the second required section
    elif category == "constraint" and _REASON.search(text):
        f *= 1.2
    words = len(text.split())
    if words < 4:
        f *= 0.3
    if text.endswith("…"):
        f *= 0.9
    if is_fluff(s.text) or is_codeish(s.text):
        f *= 0.05
    return f


def substantive(s: str) -> bool:
    """Says something: at least three words of letters (not "---", "id: x" or a bare path)."""
    return len(re.findall(r"[A-Za-z]{2,}", re.sub(r"`[^`]*`", "", s))) >= 3


def main_statement(ev: Evidence, category: str, **kw) -> Sent:
    """The statement a draft is built on; _NoEvidence when there is none."""
    main = pick_main(ev, category, **kw)
    if main is None:
        raise _NoEvidence()
    return main


def pick_main(ev: Evidence, category: str, *, speakers: tuple[str, ...] = ()) -> Sent | None:
    texts = [s for s in ev.sents if s.kind != "error" and substantive(s.text)]
    pool = [s for s in texts if s.weight > 0] or texts
    if speakers and any(s.speaker in speakers for s in pool):
        pool = [s for s in pool if s.speaker in speakers]
    if not pool:
        return None
    return max(pool, key=lambda s: (max(s.weight, 0.05) * shape_factor(s, category),
                                    -s.order[0], -s.order[1], -s.order[2]))


def usable(s: Sent) -> bool:
    t = strip_interjections(s.text)
    return not (is_fluff(s.text) or _NARRATION.match(t) or len(t.split()) < 3 or is_lead_in(t) or is_codeish(t))


def body_text(s: Sent) -> str:
    return finish(strip_interjections(s.text))


def attribution(s: Sent) -> str:
    who = {"user": "the user", "parent": "the parent agent", "assistant": "the assistant"}.get(s.speaker, s.speaker)
    return f"{who}, turn {s.turn}" if s.turn else who


def _with_heading(s: Sent, text: str) -> str:
    """A list item under a specific heading ("**WebSearch Tool:**" / "- Available but …") names its subject."""
    if s.heading and s.item and set(re.findall(r"[a-z]+", s.heading.lower())) - _GENERIC_HEADINGS:
        return f"{s.heading}: {lower_first(text)}"
    return text


# -- titles ------------------------------------------------------------------------

_TITLE_REWRITES: dict[str, list[tuple[str, str]]] = {
    "decision": [
        (r"^(?:i think |i guess |maybe |so )?(?:let's|let us|we(?:'ll| will| should| can| could| need to| want to)|"
         r"i(?:'ll| will| would| should| decided to| chose to| want to)|we decided to|we chose to|decided to|"
         r"we(?:'re| are) going to)\s+(?:just\s+|actually\s+|instead\s+)?", ""),
        (r"^(?:go|stick|settle)\s+(?:with|on)\s+", "use "),
        (r"^you (?:can|could|should) (?:just )?", ""),
        (r"^(?:can|could|would) (?:you|we) (?:please )?", ""),
        (r"^please ", ""),
    ],
    "constraint": [
        (r"^(?:please )?(?:remember|note|keep in mind|be aware)(?: that)?,?\s+", ""),
        (r"^(?:fyi|heads up),?\s+", ""),
    ],
    "tech_debt": [
        (r"^(?:let's|let us|we(?:'ll| will| should)|i(?:'ll| will| have|'ve))\s+(?:just\s+)?", ""),
        (r"^please ", ""),
    ],
    "preference": [
        (r"^(?:please )", ""),
        (r"^i (?:really |strongly |very much |much )?prefer\s+", "prefer "),
        (r"^i(?:'d| would) (?:much )?(?:rather|prefer)(?: that| to)?\s+", "prefer "),
        (r"^i(?:'d| would) like (?:you )?to\s+", ""),
        (r"^i (?:think|thought|feel) (?:we|you) should\s+", ""),
        (r"^(?:we|you) (?:should|can|could) (?:just )?", ""),
        (r"^from now on,?\s+", ""),
    ],
    "runbook": [(r"^(?:the )?(?:root cause|issue|problem|bug|cause) (?:is|was) (?:that )?", "")],
    "session_summary": [
        (r"^(?:(?:can|could|would) you (?:please )?(?:help (?:me )?(?:to )?)?|please (?:help (?:me )?(?:to )?)?|"
         r"i(?:'d| would) like (?:your help (?:with|to)|you to|to)|i want (?:you )?to|i need (?:you )?to|"
         r"help me (?:to )?|let's|we need to|we should|we(?:'re| are) going to|i'm going to)\s*", ""),
    ],
}
_META_HEAD = re.compile(r"\b(?:like|logic|approach|plan|idea|mind|decided|decision|following|this|it|that|"
                        r"change|rule|rules|goal|as follows|combine)\s*$", re.I)


def meta_split(text: str) -> tuple[str, str]:
    """("would like to combine the logic", "take the least nested path first") of "… the logic: take …"."""
    if ": " in text:
        head, tail = text.split(": ", 1)
        if not _inside_code(text, len(head)) and len(tail.split()) >= 4 \
                and (_META_HEAD.search(head) or "changed my mind" in head.lower()):
            return head, tail
    return "", text


def title_from(text: str, category: str, *, sent: Sent | None = None) -> str:
    t = strip_interjections(_fold(text))
    t = re.sub(r"^(?:and |but |so |also )+", "", t, flags=re.I)
    t = re.sub(r"^(?:in general|in short|for the record|for now|going forward),?\s+", "", t, flags=re.I)
    t = t.rstrip("…").rstrip()
    if category in ("decision", "preference", "tech_debt"):
        t = meta_split(t)[1]
    clauses = split_reason(t)
    if len(clauses.core.split()) >= 3:
        t = clauses.core
    for pat, rep in _TITLE_REWRITES.get(category, []):
        t = re.sub(pat, rep, t, count=1, flags=re.I)
    t = drop_parens(t).strip().rstrip(".?!:;,").strip()
    t = third_person(t)
    if sent is not None:
        t = _with_heading(sent, t)
    t = _cut(t, TITLE_SOFT)
    return sentence_case(t.rstrip(".?!:;, "))


def _bounded_line(s: str, limit: int) -> str:
    s = _fold(s)
    return s if len(s) <= limit else _cut(s, limit - 1).rstrip(".,;:") + "…"


# -- sections, per category --------------------------------------------------------

@dataclass
class Draft:
    title: str
    description: str
    sections: dict[str, str]
    used: list[Sent]
    notes: list[str] = field(default_factory=list)


def _bullets(items: list[str], numbered: bool = False) -> str:
    return "\n".join(f"{i}. {x}" if numbered else f"- {x}" for i, x in enumerate(items, 1))


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", s.lower()).strip()


_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9_'-]{2,}")


def _content(text: str) -> set[str]:
    """Lowercase words that carry meaning, crudely stemmed ("grants" and "grant" are one)."""
    return {_stem(w) for w in (w.lower() for w in _WORDS.findall(text)) if w not in _STOP}


def _dedupe(sents: list[Sent], used: list[Sent]) -> list[Sent]:
    """`sents` without those already used or saying the same as one (repeated lines, quotes)."""
    seen = [_norm(s.text) for s in used]
    ids = {id(s) for s in used}
    out = []
    for s in sents:
        n = _norm(s.text)
        if id(s) in ids or any(n == o or (len(o) > 30 and len(n) > 30 and (n in o or o in n)) for o in seen):
            continue
        seen.append(n)
        ids.add(id(s))
        out.append(s)
    return out


def _related(ev: Evidence, main: Sent, *, turns: int = 1) -> list[Sent]:
    """Sentences that may support `main`: its block first, then its turn and the next ones."""
    near = ev.near(main, lines=3)
    ids = {id(s) for s in near}
    rest = [s for s in ev.sents if id(s) not in ids and s is not main and 0 <= s.turn - main.turn <= turns]
    return near + rest


def _other_notes(ev: Evidence, used: list[Sent]) -> list[str]:
    """Other statements of the evidence: the draft keeps to one, the reviewer may want another."""
    lines = {s.line for s in used}
    out = []
    for s in sorted((s for s in ev.keyed() if s.kind != "error"), key=lambda s: (-s.weight, s.order)):
        if s.line in lines or not usable(s):
            continue
        lines.add(s.line)
        out.append(f"also in the evidence, not drafted: turn {s.turn} ({s.speaker}): "
                   f"{_bounded_line(strip_interjections(s.text), 140)}")
    return out[:4]


_ALTERNATIVE = re.compile(r"\b(?:instead of|rather than|over (?:using|the)|alternatives?|options?|would mean|"
                          r"vs\.?|versus|considered|not (?:use|go with))\b", re.I)
_EXPLICIT_ALT = re.compile(r"\b(?:alternatives?|options?|would mean|considered|versus|vs\.?)\b", re.I)
_CONSEQUENCE = re.compile(r"\b(?:means that|as a result|no longer)\b", re.I)
_CHANGE_LOG = re.compile(r"^(?:updated|changed|added|fixed|replaced|removed|used|created|modified|renamed|moved)\b",
                         re.I)
_CONFIRM = re.compile(r"\b(?:agreed|you're (?:absolutely )?right|good (?:idea|call|point)|makes sense|better fit|"
                      r"(?:much |a lot )?(?:cleaner|simpler|better)|will do)\b", re.I)


def draft_decision(ev: Evidence) -> Draft:
    main = main_statement(ev, "decision")
    backref = None
    prev = ev.previous(main)
    if _BACKREF.match(strip_interjections(main.text)) and prev is not None and usable(prev):
        # "I should modify `generate_html` … . This is much cleaner than …": the choice is the sentence before.
        main, backref = prev, main
    used = [main] + ([backref] if backref else [])
    text = strip_interjections(main.text)
    context, text = meta_split(text)
    cl = split_reason(text)
    decision = [finish(text)]
    # Later key sentences of the same line are part of the statement ("… also we don't need to check …").
    for s in ev.sents:
        if s.line == main.line and s.order > main.order and s.key and usable(s) and len(decision) < 3 \
                and s is not backref:
            decision.append(body_text(s))
            used.append(s)
    decision = [" ".join(decision) + f" ({attribution(main)})"]
    related = _dedupe(_related(ev, main), used)
    # The other party agreeing belongs with the decision.
    confirm = next((s for s in related if s.speaker != main.speaker and s.turn >= main.turn and usable(s)
                    and s.speaker in ("user", "assistant", "parent") and _CONFIRM.search(s.text)
                    and not _TRADEOFF.search(s.text)), None)
    rationale: list[str] = []
    if cl.reason:
        rationale.append(reason_sentence(cl.reason))
    if backref:
        rationale.append(body_text(backref))
    if confirm:
        used.append(confirm)
        if _REASON.search(confirm.text):  # an agreement that says why is part of the rationale
            who = "The assistant" if confirm.speaker == "assistant" else "The user"
            agreed = f"{who} agreed ({attribution(confirm).split(', ')[-1]}): {quote(body_text(confirm))}"
        else:
            decision.append(f"Confirmed by {attribution(confirm)}: {quote(body_text(confirm))}")
            agreed = ""
    for s in _dedupe(related, used):
        if len(rationale) >= 2:
            break
        if usable(s) and _REASON.search(s.text) and not _ALTERNATIVE.search(s.text) and not _TRADEOFF.search(s.text) \
                and not s.text.endswith("?") and (s.turn == main.turn or s.speaker == main.speaker):
            rationale.append(body_text(s))
            used.append(s)
    if confirm and agreed:
        rationale.append(agreed)
    if not rationale:
        before = [s for s in ev.near(main, lines=2) if s.order < main.order and usable(s)]
        ctx = before[-1] if before else next((s for s in ev.turn_prompt(main.turn) if s is not main and usable(s)
                                              and s.order < main.order), None)
        if context:
            rationale.append(f"No reason was stated beyond the request ({attribution(main)}): {quote(finish(context))}")
        elif ctx:
            rationale.append(f"No reason was stated beyond the context ({attribution(ctx)}): {quote(body_text(ctx))}")
            used.append(ctx)
        else:
            rationale.append(f"No separate reason was stated; the decision as given ({attribution(main)}): "
                             f"{quote(finish(cl.core))}")
    pool = _dedupe(related, used)
    alternatives = [s for s in pool if usable(s) and _ALTERNATIVE.search(s.text) and not s.text.endswith("?")
                    and s.turn == main.turn and not _CHANGE_LOG.match(strip_interjections(s.text))
                    and (s.speaker == main.speaker or _EXPLICIT_ALT.search(s.text))][:3]
    used += alternatives
    consequences = [s for s in _dedupe(related, used) if usable(s) and s.turn == main.turn
                    and (_TRADEOFF.search(s.text) or _CONSEQUENCE.search(s.text))][:2]
    used += consequences
    sections = {"Decision": "\n\n".join(decision),
                "Rationale": " ".join(rationale) if len(rationale) < 3 else _bullets(rationale)}
    if alternatives:
        sections["Alternatives"] = _bullets([body_text(s) for s in alternatives])
    if consequences:
        sections["Consequences"] = " ".join(body_text(s) for s in consequences)
    notes = _other_notes(ev, used)
    if main.speaker == "assistant" and _CHANGE_LOG.match(strip_interjections(_LABEL_PREFIX.sub("", main.text))):
        notes.insert(0, "weak evidence: the statement is a change the assistant reported, not a choice it or the "
                        "user made between alternatives")
    title = title_from(text, "decision", sent=main)
    why = rationale[0] if not rationale[0].startswith(("No ", "The assistant agreed", "The user agreed")) else ""
    return Draft(title, _describe(title, why), sections, used, notes)


_LABEL_PREFIX = re.compile(r"^[^:`]{3,50}:\s+")
_WORKAROUND = re.compile(r"^(?:make|use|set|skip|mark|run|add|put|keep|only|instead"
                         r"|i'll (?:mark|make|set|add|skip|use)"
                         r"|(?:it |they |this )?can be "
                         r"(?:enabled|disabled|configured|set|overridden|bypassed|skipped))\b"
                         r"|\b(?:skip unless|only when|instead|via `|can be (?:enabled|disabled|configured))", re.I)


def draft_constraint(ev: Evidence) -> Draft:
    main = main_statement(ev, "constraint")
    used = [main]
    text = strip_interjections(main.text)
    cl = split_reason(text)
    rule = finish(_with_heading(main, cl.core + (", " + cl.reason if cl.reason else "")))
    impact: list[str] = []
    workaround: list[str] = []
    if cl.consequence:
        cons = cl.consequence
        if ": " in cons and not _inside_code(cons, cons.index(": ")):
            cons, fix = cons.split(": ", 1)
            workaround.append(finish(fix))
        impact.append(finish(cons))
    topic = _content(f"{main.heading} {text}")
    same_line = [s for s in ev.sents if s.line == main.line and s.order > main.order]
    near = ev.near(main, lines=1)
    keyed = sorted((s for s in ev.sents if s.weight > 0 and s.kind != "error" and s.line != main.line),
                   key=lambda s: (-s.weight, s.order))
    for s in _dedupe(same_line + near + keyed, used):
        if not usable(s) or s.text.endswith("?"):
            continue
        t = strip_interjections(s.text)
        close = s in same_line or s in near
        shared = len(_content(t) & topic)
        if _WORKAROUND.search(t) and (close or shared >= 2):
            if len(workaround) < 2:
                workaround.append(body_text(s))
                used.append(s)
            continue
        if len(impact) < 2 and (s in same_line or shared >= 2):
            sc = split_reason(t)
            if sc.consequence:
                cons = sc.consequence
                if ": " in cons and not _inside_code(cons, cons.index(": ")):
                    cons, fix = cons.split(": ", 1)
                    if len(workaround) < 2:
                        workaround.append(finish(fix))
                impact.append(finish(cons))
            else:
                impact.append(body_text(s))
            used.append(s)
    if not impact:
        nxt = next((s for s in ev.after(main) if usable(s) and s.turn == main.turn and s not in used), None)
        if cl.reason:
            impact.append(f"Anything that needs it fails: {lower_first(reason_sentence(cl.reason))}")
        elif nxt:
            impact.append(body_text(nxt))
            used.append(nxt)
        else:
            impact.append(f"Work has to stay within it, as stated ({attribution(main)}): {quote(finish(cl.core))}")
    sections = {"Rule": f"{rule} ({attribution(main)})", "Impact": " ".join(impact)}
    if workaround:
        sections["Workaround"] = " ".join(workaround)
    title = title_from(text, "constraint", sent=main)
    return Draft(title, _describe(title, reason_sentence(cl.reason) if cl.reason else impact[0]), sections, used,
                 _other_notes(ev, used))


_ERROR_NAMED = re.compile(r"(?:^|[\s(])(?<!except )(?<!raise )([A-Za-z_][\w.]*(?:Error|Exception|Exit))"
                          r"(?::\s+(.+)|\s*$)")
_PYTEST_NODE = re.compile(r"(\S+\.py)::(\S+?)\s+(?:FAILED|ERROR)\b")
_LINT = re.compile(r"(\S+\.\w+):\d+(?::\d+)?\s*[-:]?\s*(error|warning)\b:?\s*(.+)", re.I)
_FIX = re.compile(r"\b(?:fix(?:ed|es)? by|the fix (?:is|was)|to fix (?:this|it|the)|the solution (?:is|was)|"
                  r"solved by|resolved by|workaround|added|adding|changed|changing|replaced|replacing|updated|"
                  r"updating|removed|removing|moved|switched|installed|renamed|wrapped|set `|now (?:uses|sets|calls)|"
                  r"use[sd]? `|using `|by (?:adding|changing|using|setting|removing))\b", re.I)
_FIX_VERBS = ("modify", "add", "change", "replace", "remove", "set", "update", "use", "move", "pass", "call", "rename",
              "wrap", "install", "create", "mark", "clean", "delete", "switch", "make", "mock", "patch", "skip",
              "stop", "import", "annotate", "cast", "revert", "pin", "upgrade", "downgrade", "configure")
_INTENT = re.compile(r"^(?:i should|i'll|i will|i need to|we need to|we should|let me|let's)\s+(?:now\s+|just\s+)?"
                     rf"((?:{'|'.join(_FIX_VERBS)})\b.*)$", re.I)
_VERIFY = re.compile(r"\b(?:all (?:the )?(?:\d+ )?(?:[\w-]+ ){0,2}tests? (?:are |now )*(?:pass|passing)|"
                     r"\d+ (?:[\w-]+ )?tests? pass(?:ed|es|ing)?|"
                     r"(?:now|all) (?:pass(?:es|ing)?|works?|working|green)|works now|pass(?:es)? now|"
                     r"(?:is|are) (?:now )?(?:passing|green)|(?:has|have) been (?:resolved|fixed)|\b0 errors|"
                     r"no (?:more )?(?:errors|failures)|type checker is happy|succeed(?:s|ed)?)\b", re.I)
_NEGATED = re.compile(r"\b(?:but|except|still|yet)\b.{0,60}\b(?:errors?|fail\w*|issues?|broken)\b", re.I)
_CAUSE = re.compile(r"\b(?:root cause|the (?:issue|problem|bug|cause|error) (?:is|was)|caused by|turns out|"
                    r"(?:fail(?:ing|s|ed)?|broke(?:n)?|break(?:s|ing)?) (?:\w+ ){0,3}because|because of|due to|"
                    r"because|it looks like|determines that)\b", re.I)
_SYMPTOM = re.compile(r"\b(?:fail(?:ing|s|ed|ure)?|errors?|broken|broke|unhappy|crash(?:es|ed)?|doesn't work|"
                      r"not working|exception|traceback|timeout|timed out|hangs?|issues?|problems?|warnings?)\b", re.I)
_FIX_BY = re.compile(r"\b(?:fix(?:ed|es)? by|the fix|by (?:adding|changing|using|setting))\b", re.I)
_FIXED_LABEL = re.compile(r"^(?:fixed|resolved|solved|addressed)\s+([^:]{3,60}?):\s", re.I)


_INSIGHT = re.compile(r"\b(?:understand|found|see|spotted|identified) the (?:issue|problem|bug|cause)\b", re.I)


def _after_insight(ev: Evidence, s: Sent) -> bool:
    """The sentence right after "Now I understand the issue." says what the issue is."""
    prev = ev.previous(s)
    return prev is not None and prev.line == s.line and bool(_INSIGHT.search(prev.text))


def _cause_text(text: str) -> str:
    """A cause sentence without its list label and preamble: "Added tracking: The issue is that X" -> "X"."""
    t = strip_interjections(text)
    m = re.match(r"^([^:`]{3,50}):\s+(.+)$", t)
    if m and len(m.group(1).split()) <= 5 and len(m.group(2).split()) >= 4:
        t = m.group(2)
    t = re.sub(r"^(?:found it[.!]\s*)?(?:the )?(?:root cause|issue|problem|bug|cause) (?:is|was) (?:that )?", "", t,
               flags=re.I)
    return sentence_case(t)


def _informative_error(s: Sent) -> int:
    t = s.text
    if _ERROR_NAMED.search(t):
        return 3
    if _PYTEST_NODE.search(t) or _LINT.search(t):
        return 2
    words = re.findall(r"[A-Za-z]{3,}", t)
    if len(words) >= 3 and "test session starts" not in t:
        return 1
    return 0


def _symptom_phrase(err: Sent) -> str:
    t = err.text.strip()
    m = _PYTEST_NODE.search(t)
    if m:
        return f"failing {m.group(2).split('::')[-1]}"
    m = _ERROR_NAMED.search(t)
    if m:
        name = m.group(1).rsplit(".", 1)[-1]
        msg = drop_parens(m.group(2) or "").strip()
        return f"{name}: {msg}" if msg else name
    m = _LINT.search(t)
    if m:
        return f"{m.group(2).lower()} in {m.group(1).rsplit('/', 1)[-1]}: {drop_parens(m.group(3))}"
    return re.sub(r"^(?:E\s+|error:\s*)", "", t, flags=re.I)


def _steps_from(s: Sent, ev: Evidence) -> list[str]:
    t = strip_interjections(s.text)
    m = re.match(r"^(?:the |my )?(?:fix|solution|workaround) (?:is|was) (?:to )?(.+)$", t, re.I)
    if m:
        parts = re.split(r",? and (?:then )?to\s+", m.group(1))
        return [finish(p) for p in parts if p.strip()]
    m = _INTENT.match(t)
    if m:
        return [finish(m.group(1))]
    return [finish(t)]


def _is_step(s: Sent, ev: Evidence) -> bool:
    if s.kind == "error" or s.speaker != "assistant" or s.text.endswith("?") or is_codeish(s.text):
        return False
    t = strip_interjections(s.text)
    if _VERIFY.search(t) or is_fluff(s.text) or len(t.split()) < 3:
        return False
    if _CAUSE.search(t) and not _FIX_BY.search(t):
        return False
    m = _INTENT.match(t.rstrip(":"))
    if m and re.search(r"\b(?:a plan|look|understand|investigate|check|see|find out|debug)\b", m.group(1), re.I):
        return False
    if m:
        # A plan counts as a step when it is concrete (names code) or answers "how to fix this".
        prev = ev.previous(s)
        prev2 = ev.previous(prev) if prev is not None else None
        return "`" in t or any(p is not None and re.search(r"\b(?:to fix|the fix|the issue|fix th)", p.text, re.I)
                               for p in (prev, prev2))
    if is_lead_in(t) or _NARRATION.match(t) or re.match(r"^(?:i need to|i should|i'll|let me|we need to)\b", t, re.I):
        return False
    return bool(_FIX.search(t))


def draft_runbook(ev: Evidence) -> Draft:
    errors = [s for s in ev.sents if s.kind == "error" and _informative_error(s)]
    if not errors and not any(s.kind != "error" and substantive(s.text) for s in ev.sents):
        raise _NoEvidence()
    errors.sort(key=lambda s: (-_informative_error(s), -s.weight, s.order))
    text_keyed = [s for s in ev.sents if s.kind != "error" and s.weight > 0]
    top = max(text_keyed, key=lambda s: (s.weight, -s.order[0])) if text_keyed else None
    err = errors[0] if errors else None
    anchor_err = err if err and _informative_error(err) >= 2 and (top is None or err.turn == top.turn
                                                                   or err.weight >= top.weight) else None
    used: list[Sent] = []
    causes = [s for s in ev.sents if s.kind != "error" and s.speaker == "assistant" and usable(s)
              and not _VERIFY.search(s.text) and (_CAUSE.search(s.text) or _after_insight(ev, s))]
    causes = _dedupe(sorted(causes, key=lambda s: (-s.weight, s.order)), [])[:2]
    causes.sort(key=lambda s: s.order)
    labels = []
    for s in ev.sents:
        m = _FIXED_LABEL.match(s.text) if s.speaker == "assistant" else None
        if m and m.group(1).lower() not in (x.lower() for x in labels):
            labels.append(m.group(1))

    # Symptom: the person's report, the failing run's own words, else what the assistant said was wrong.
    symptom: list[str] = []
    turns = ([err.turn] if err else []) + ([top.turn] if top else [])
    report = None
    for t in turns:
        for s in ev.turn_prompt(t):
            st = strip_interjections(s.text)
            if is_codeish(st) and ":" in st:  # "A couple of tests are unhappy now: ___ <pasted output>"
                st = st.split(":", 1)[0]
            if _SYMPTOM.search(st) and not is_fluff(st) and not is_codeish(st) and len(st.split()) >= 4 \
                    and len(st) < 300:
                report = (s, st)
                break
        if report:
            break
    if report:
        s, st = report
        names = list(dict.fromkeys(n for p in ev.turn_prompt(s.turn) for n in re.findall(r"\btest_\w+", p.text)))
        line = finish(st)
        if names and not any(n in line for n in names):
            line = line.rstrip(".") + f" ({', '.join(inline_code(n) for n in names[:3])})."
        symptom.append(f"{line} ({attribution(s)})")
        used.append(s)
    if err and (anchor_err is not None or not causes or (top is not None and err.turn == top.turn)
                or err.turn in {c.turn for c in causes}):
        symptom.append(f"The failing run reported: {inline_code(_bounded_line(err.text, 240))}")
        used.append(err)
    cause_used_as_symptom = None
    if not symptom and causes:
        sym = max(causes, key=lambda s: (s.weight, -s.order[0]))
        cl = split_reason(_cause_text(sym.text))
        if cl.reason and len(cl.core.split()) >= 3:
            symptom.append(finish(cl.core))
        else:
            symptom.append(finish(_cause_text(sym.text)))
        cause_used_as_symptom = sym
        used.append(sym)
    if not symptom:
        cand = [s for s in ev.sents if s.kind != "error" and usable(s) and _SYMPTOM.search(s.text)
                and not _VERIFY.search(s.text)]
        cand.sort(key=lambda s: (-s.weight, s.order))
        if cand:
            symptom.append(body_text(cand[0]))
            used.append(cand[0])
    symptom_core = symptom[0].rsplit(" (the ", 1)[0] if symptom else ""
    if labels and not err and not report:
        symptom.append("Reported problems: " + "; ".join(labels[:4]) + ".")
    if not symptom:
        first = next((s for s in ev.sents if usable(s)), None)
        symptom.append(body_text(first) if first else "A failure that the session fixed.")

    # Steps: what was changed, in transcript order.
    steps: list[str] = []
    for s in _dedupe([s for s in ev.sents if _is_step(s, ev)], used):
        for st in _steps_from(s, ev):
            if len(steps) < MAX_ITEMS and _norm(st) not in (_norm(x) for x in steps):
                steps.append(st)
        used.append(s)
    if not steps:
        rest = [s for s in ev.sents if s.weight > 0 and s.kind != "error" and usable(s) and s not in used
                and not _VERIFY.search(s.text)]
        for s in _dedupe(causes[-1:] + rest, used)[:3]:
            steps.append(body_text(s))
            used.append(s)
    if not steps:
        steps.append(f"Find what changed before {inline_code(_bounded_line(err.text, 160))} went away."
                     if err else "Repeat the investigation of the session.")

    # Verification: the line that says it passes now.
    verify = [s for s in ev.sents if s.kind != "error" and s.speaker == "assistant" and not is_fluff(s.text)
              and _VERIFY.search(s.text) and not _NEGATED.search(s.text) and not _NARRATION.match(
                  strip_interjections(s.text))]
    rerun = ""
    if err is not None and err in used:
        m = _PYTEST_NODE.search(err.text)
        command = inline_code(f"pytest {m.group(1)}::{m.group(2)}") if m else ""
        rerun = (f"Re-run {command} and check it passes." if m else
                 f"Re-run the command that failed with {inline_code(_bounded_line(err.text, 160))} "
                 "and check it passes.")
    checks: list[tuple[Sent, str]] = []
    for v in verify:
        line = finish(strip_interjections(v.text))
        if is_lead_in(strip_interjections(v.text)):  # "The workflow now passes completely:" and its items
            items = [finish(strip_interjections(s.text)).rstrip(".") for s in ev.sents
                     if s.order[0] == v.order[0] and s.order[1] > v.order[1] and len(s.text) < 80
                     and re.search(r"\bpass|\bok\b|green|0 errors", s.text, re.I)][:4]
            if items:
                line = line.rstrip(".") + ": " + "; ".join(items) + "."
            elif len(line.split()) < 4 or line.rstrip(".").split()[-1].lower() in _WEAK_END:
                continue
        checks.append((v, line))
    checks.sort(key=lambda c: (-bool(re.search(r"\d", c[1])), -c[0].weight, -c[0].order[0]))
    if checks:
        v, line = checks[0]
        verification = line + (" " + rerun if rerun and err is not None and _PYTEST_NODE.search(err.text) else "")
        used.append(v)
    else:
        verification = rerun or ("Re-run what showed the problem (" + _bounded_line(symptom_core or symptom[0], 160)
                                 .rstrip(".") + ") and check it is gone.")
    sections = {"Symptom": "\n\n".join(symptom), "Steps": _bullets(steps, numbered=True),
                "Verification": verification}
    cause_text = [body_text(s) for s in causes if s is not cause_used_as_symptom]
    if cause_used_as_symptom is not None:
        reason = split_reason(_cause_text(cause_used_as_symptom.text)).reason
        if reason:
            cause_text.insert(0, reason_sentence(reason))
    if cause_text:
        sections["Root cause"] = " ".join(dict.fromkeys(cause_text))
        used += causes

    # Title: the symptom, as specific as the evidence allows.
    if anchor_err is not None:
        title = "Fix " + _symptom_phrase(anchor_err)
    elif causes:
        best = max(causes, key=lambda s: (s.weight, -s.order[0]))
        title = drop_parens(_cause_text(best.text)).rstrip(".:;, ")
    elif labels:
        title = "Fix " + ", ".join(labels[:2])
    elif err is not None:
        title = "Fix " + _symptom_phrase(err)
    elif top is not None:
        title = title_from(top.text, "runbook")
    else:
        title = title_from(steps[0], "runbook")
    title = sentence_case(_cut(title, TITLE_SOFT).rstrip(".:;, "))
    return Draft(title, _describe(title, steps[0]), sections, used, _other_notes(ev, used))


_SUGGEST = re.compile(r"\b(?:should (?:move|be|use|eventually|later)|todo|once|next time|follow-?up|"
                      r"suggest|would be (?:better|to)|could be (?:improved|refactored|moved)|move (?:it )?to)\b", re.I)


def draft_tech_debt(ev: Evidence) -> Draft:
    main = main_statement(ev, "tech_debt")
    used = [main]
    text = strip_interjections(main.text)
    cl = split_reason(text)
    core = re.sub(r"^(?:so |also )", "", cl.core, flags=re.I)
    description = [finish(core)]
    # What holds meanwhile ("For now clients just log in again …") belongs to the description.
    for s in [s for s in ev.sents if s.line == main.line and s.order > main.order and usable(s)][:2]:
        t = strip_interjections(s.text)
        if re.search(r"\b(?:for now|until then|meanwhile|currently|still)\b", t, re.I) \
                and not _SUGGEST.search(t) and not re.match(r"^(?:put|add|make|write|create|leave|mark)\b", t, re.I):
            description.append(finish(t))
            used.append(s)
    description[-1] += f" ({attribution(main)})"
    why: list[str] = []
    if cl.reason:
        why.append(reason_sentence(cl.reason))
    topic = _content(text)
    related = _dedupe(_related(ev, main, turns=12), used)
    for s in related:
        if len(why) >= 2:
            break
        if usable(s) and re.search(r"\b(?:because|since|until|out of scope|deferred|rather than|not worth)\b",
                                   s.text, re.I) and len(_content(s.text) & topic) >= 2:
            why.append(body_text(s))
            used.append(s)
    if not why:
        why.append(f"Left for later in the session, as stated ({attribution(main)}): {quote(body_text(main))}")
    suggested = [s for s in _dedupe(related, used) if usable(s) and _SUGGEST.search(s.text)
                 and len(_content(s.text) & topic) >= 2][:2]
    used += suggested
    sections = {"Description": " ".join(description), "Why deferred": " ".join(why)}
    if suggested:
        sections["Suggested fix"] = " ".join(body_text(s) for s in suggested)
    title = title_from(text, "tech_debt", sent=main)
    return Draft(title, _describe(title, why[0] if cl.reason else ""), sections, used, _other_notes(ev, used))


_ASK_TAIL = re.compile(r"^(.{12,}?),\s+(?:so\s+)?(?:can|could|would) you (?:please )?(.{8,}?)\??$", re.I)


def draft_preference(ev: Evidence) -> Draft:
    main = main_statement(ev, "preference", speakers=("user", "parent"))
    used = [main]
    text = strip_interjections(main.text)
    text = re.sub(r"^(?:and |but |also )?(?:in general,?\s+)?", "", text, flags=re.I)
    reason: list[str] = []
    m = _ASK_TAIL.match(text)
    if m:  # "I didn't find those links helpful, can you please replace them with …?"
        said, asked = m.group(1), m.group(2)
        pref_words = finish(asked)
        reason.append(f"In the user's words: {quote(finish(said))}")
        np = re.search(r"\b(?:those|these|the)\s+((?:[\w-]+\s+){0,4}[\w-]+s)\b", said)
        title = title_from(re.sub(r"\b(?:them|those)\b", np.group(1), asked, count=1) if np else f"{said}: {asked}",
                           "preference", sent=main)
        why = said
    else:
        cl = split_reason(text)
        pref_words = finish(cl.core) if cl.reason else finish(text)
        title = title_from(text, "preference", sent=main)
        why = reason_sentence(cl.reason) if cl.reason else ""
        if cl.reason:  # verbatim: "…because every new package has to go through review."
            reason.append(f"In the user's words: {quote('…' + lower_first(finish(cl.reason)))}")
    sections = {"Preference": f"> {pref_words}\n\n({attribution(main)})"}
    if not reason:
        for s in ev.near(main, lines=1):
            if s.user and usable(s) and _REASON.search(s.text):
                reason.append(f"In the user's words: {quote(body_text(s))}")
                used.append(s)
                why = why or body_text(s)
                break
    if not reason:
        ctx = [s for s in ev.near(main, lines=1) if s.user and usable(s) and s.order < main.order]
        if ctx:
            reason.append(f"Not stated separately; the user's context: {quote(body_text(ctx[-1]))}")
            used.append(ctx[-1])
        else:
            reason.append(f"Not stated beyond the request itself ({attribution(main)}): {quote(finish(text))}")
    sections["Reason"] = " ".join(reason)
    # Examples: what the preference led to, in the same message or the reply to it.
    examples = [s for s in ev.near(main, lines=2) if usable(s) and s not in used and s.user
                and re.search(r"\b(?:skip|use|instead|so|e\.g\.|for example|like)\b", s.text, re.I)]
    reply = [s for s in ev.sents if s.speaker == "assistant" and s.turn == main.turn and usable(s)
             and s.order > main.order and not re.match(r"^you'?re (?:absolutely )?right", s.text, re.I)]
    ex = _dedupe(examples + reply[:1], used)[:2]
    if ex:
        sections["Examples"] = _bullets([body_text(s) for s in ex])
        used += ex
    return Draft(title, _describe(title, third_person(why)), sections, used, _other_notes(ev, used))


_NEXT = re.compile(r"\b(?:next time|next steps?|todo|to-do|follow-?ups?|left for|still (?:need|to do)|"
                   r"remaining (?:work|issues|steps)|not yet|open questions?|before deploying|later)\b", re.I)
_NEXT_HEAD = re.compile(r"\b(?:left for next time|next steps?|todo|to do next|remaining work|follow-?ups?|"
                        r"still to do|what's left)\b\s*:", re.I)
_ASKS = re.compile(r"\b(?:let's|please|can you|could you|would you|i think we should|we should|i want|i'd like|"
                   r"go with|make sure|i prefer|i'd rather)\b", re.I)
_RULES = re.compile(r"\b(?:must|never|always|don't|do not|should|need to)\b", re.I)
_PASTED = re.compile(r"\s(?:_{3,}|`{3}|={3,}|-{5,})")


def _ask_score(x: str) -> float:
    return 2 * bool(_ASKS.search(x)) + bool(_RULES.search(x)) - (len(x.split()) < 6)


def _summary_parts(excerpt: str, snippets: list[Snip]):
    blocks = parse_excerpt(clean(excerpt[:MAX_EXCERPT_CHARS]))
    prompts = [(b.turn, " ".join(b.lines)) for b in blocks if b.kind == "prompt" and b.speaker in ("user", "parent")]
    if not prompts:
        prompts = [(s.turn, s.text) for s in snippets if s.speaker in ("user", "parent")]
    reply = next(((b.turn, " ".join(b.lines)) for b in blocks if b.kind == "reply"), None)
    if reply is None:
        last = [s for s in snippets if s.speaker == "assistant"]
        reply = (last[-1].turn, last[-1].text) if last else None
    files: list[str] = []
    for b in blocks:
        if b.kind == "files":
            files = [f.strip() for f in " ".join(b.lines).split(", ") if f.strip()]
    return prompts, reply, files


def _short_paths(files: list[str]) -> list[str]:
    """Paths without the folders they all share (one file keeps its last three parts)."""
    split = [f.split("/") for f in files]
    common = 0
    if len(files) > 1:
        for parts in zip(*[p[:-1] for p in split], strict=False):
            if len(set(parts)) != 1:
                break
            common += 1
    elif split:
        common = max(0, len(split[0]) - 3)
    return ["/".join(p[common:]) or f for p, f in zip(split, files, strict=True)]


def _prose(text: str, *, folded: bool = True) -> list[str]:
    """The sentences of `text` worth quoting: no fluff, narration, code or pasted output."""
    out = []
    text = _PASTED.split(text, 1)[0]  # what follows is pasted output
    for seg in segments(text, folded=folded):
        for x in sentences(seg):
            x2 = strip_interjections(x)
            if not is_fluff(x) and not _NARRATION.match(x2) and len(x2.split()) >= 3 and not is_codeish(x2):
                out.append(x2)
    return out


_WEAK_END = frozenset("now it that to the following includes include are is made were was this these so because "
                      "found below changes".split())


_TECHNICAL = re.compile(r"`|\b\w+\.\w{1,5}\b|\b[A-Z][a-z0-9]*[A-Z]\w*|\b[A-Z]{2,}\b|\d|/")


def _low_content(sentence: str) -> bool:
    """A first prompt that only sets the scene ("there isn't much to see here"): no request, no technical term."""
    t = strip_interjections(sentence)
    rewritten = t
    for pat, rep in _TITLE_REWRITES["session_summary"]:
        rewritten = re.sub(pat, rep, rewritten, count=1, flags=re.I)
    return rewritten == t and not _ASKS.search(t) and not _TECHNICAL.search(t) \
        and re.match(r"^(?:there|this|it|here|so|we've|we have|i've|i have)\b", t, re.I) is not None


_PREAMBLE = re.compile(r"^(?:you are|you're|you have been|you've been|context\b|this is an? |the parent |"
                       r"background\b|note that|remember)", re.I)


def draft_session_summary(excerpt: str, snippets: list[Snip], *, subagent: bool = False) -> Draft:
    prompts, reply, files = _summary_parts(excerpt, snippets)
    if not prompts and not reply:
        raise _NoEvidence()
    who = "the parent agent" if subagent else "the user"
    goal_lines: list[str] = []
    title_src = title_next = ""
    for turn, text in prompts:
        ss = _prose(text)
        if not ss:
            continue
        if not goal_lines:
            picked, size = [], 0
            for x in ss:
                if size and size + len(x) > 420:
                    break
                picked.append(finish(x))
                size += len(x)
            goal_lines.append(" ".join(picked) + (f" ({who}, turn {turn})" if turn else ""))
            # A subagent's brief opens with its role ("You are alice, …"): the title is the task.
            topical = [x for x in ss if not _PREAMBLE.match(x)] or ss
            title_src = re.sub(r"^(?:your )?task\b\s*(?:\([^)]*\))?[\s:]*", "", topical[0], flags=re.I)
            title_next = topical[1] if len(topical) > 1 else ""
        elif len(goal_lines) < 4:
            best = max(ss[:5], key=lambda x: (_ask_score(x), -ss.index(x)))
            goal_lines.append((f"Turn {turn}: " if turn else "") + finish(_cut(best, 240, ellipsis=True)
                                                                        if len(best) > 240 else best))
    if not goal_lines and prompts:
        goal_lines.append(finish(_cut(_fold(prompts[0][1]), 300, ellipsis=True)))
        title_src = goal_lines[0]

    outcome: list[str] = []
    items: list[str] = []
    next_steps: list[str] = []
    in_next = False
    for seg in segments(reply[1], folded=True) if reply else []:
        if in_next:
            next_steps += [finish(strip_interjections(x)) for x in sentences(seg) if not is_fluff(x)]
            continue
        m = _NEXT_HEAD.search(seg)
        if m:
            in_next = True
            tail = seg[m.end():].strip()
            if tail:
                next_steps.append(finish(tail))
            seg = seg[: m.start()].strip()
        for x in sentences(seg):
            x2 = strip_interjections(x)
            if is_fluff(x) or _NARRATION.match(x2) or is_codeish(x2) or len(x2.split()) < (2 if not outcome else 3) \
                    or is_heading(x2):
                continue
            label = re.match(r"^[^:`]{3,50}:\s", x2)
            if is_lead_in(x2):
                words = x2.rstrip(":").split()
                prose_words = re.findall(r"[A-Za-z]{2,}", re.sub(r"`[^`]*`", "", x2))
                if len(prose_words) >= 4 and ": " not in x2 and words[-1].lower() not in _WEAK_END \
                        and len(outcome) < 2 and not items:
                    outcome.append(finish(x2))
                continue
            if label and len(items) < 5:
                items.append(finish(x2))
            elif not label and len(outcome) < 2 and not items:
                outcome.append(finish(x2))
    if not next_steps and reply:
        next_steps = [finish(x) for x in _prose(reply[1]) if _NEXT.search(x)][:3]
    if not next_steps:
        for turn, text in prompts[1:]:
            next_steps += [f"{finish(x)} ({who}, turn {turn})" for x in _prose(text)
                           if re.search(r"\b(?:next time|later|follow-?up|todo)\b", x, re.I)]
    if not outcome and items:
        outcome, items = items[:1], items[1:]
    if not outcome:
        outcome = [finish(x) for x in (_prose(reply[1])[:1] if reply else [])] or \
            ["The session ended without a closing summary from the assistant."]
    outcome_text = " ".join(outcome)
    if reply and reply[0]:
        outcome_text += f" (the assistant, turn {reply[0]})"
    if items:
        outcome_text += "\n\n" + _bullets(items)
    goal = goal_lines[0] if goal_lines else "Not stated in the session's prompts."
    if len(goal_lines) > 1:
        goal += "\n\nLater in the session:\n" + _bullets(goal_lines[1:])
    if next_steps:
        next_text = _bullets(list(dict.fromkeys(next_steps))[:MAX_ITEMS], numbered=True)
    else:
        # Say so, and quote where the session stopped: the next session picks up from there.
        last = next(((t, _prose(x)) for t, x in reversed(prompts) if _prose(x)), None)
        next_text = NO_NEXT_STEP
        if last:
            next_text += f" It stopped at: “{finish(_cut(last[1][0], 240, ellipsis=True))}” ({who}, turn {last[0]})"
    sections = {"Goal": goal, "Outcome": outcome_text, "Next steps": next_text}
    short = _short_paths(files)
    if short:
        sections["Completed"] = "Files changed:\n" + _bullets([inline_code(f) for f in short[:12]])
    title = title_from(title_src, "session_summary") if title_src else ""
    if title and _low_content(title_src) and outcome and substantive(outcome[0]) and len(outcome[0].split()) >= 5:
        title = title_from(outcome[0], "session_summary")  # "Ok, so there isn't much to see here …"
    elif len(title.split()) < 4 and title_next and not title_next.endswith("?"):
        title = _cut(f"{title}: {lower_first(title_from(title_next, 'session_summary'))}", TITLE_SOFT)
    elif len(title.split()) < 3 and outcome and not outcome[0].startswith("The session ended"):
        title = title_from(outcome[0], "session_summary")
    title = title or "Session summary"
    turns = [t for t, _ in prompts] + ([reply[0]] if reply else [])
    used = [Sent("", t, "user", (0, 0, 0)) for t in turns if t]
    # The MEMORY.md line adds the outcome to a goal title, or the goal to an outcome title.
    extra = outcome[0] if _norm(title) not in _norm(outcome[0]) else (goal_lines[0].rsplit(" (", 1)[0]
                                                                      if goal_lines else "")
    return Draft(title, _describe(title, extra), sections, used)


# -- assembly ----------------------------------------------------------------------

class _NoEvidence(Exception):
    pass


class _Invalid(Exception):
    """Input the drafter cannot draft from; the message is the result's error."""


ID_SOFT = 60  # ids are file names and link targets: shorter than memfile's hard limit reads better


def _describe(title: str, extra: str) -> str:
    """The MEMORY.md line's second half: MEMORY.md shows `[title](file) — description`, so the
    description adds the reason or first step rather than repeating the title (which it falls back to)."""
    extra = re.sub(r"^(?:in the user's words: )", "", _fold(extra), flags=re.I).strip("“”").rstrip(".")
    if extra and _norm(extra) not in _norm(title) and _norm(title) not in _norm(extra):
        line = extra[:1].upper() + extra[1:]
    else:
        line = title
    return _bounded_line(line, DESCRIPTION_SOFT)


_STOP = frozenset("""
a about above after again against all also am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few
for from further had hadn't has hasn't have haven't having he her here hers herself him himself his how i i'd i'll
i'm i've if in into is isn't it it's its itself just let let's me more most mustn't my myself no nor not now of
off on once only or other ought our ours ourselves out over own same shan't she should shouldn't so some such
than that that's the their theirs them themselves then there there's these they they'd they'll they're they've
this those through to too under until up very was wasn't we we'd we'll we're we've were weren't what what's when
where which while who whom why will with won't would wouldn't you you'd you'll you're you've your yours yourself
yourselves yes ok okay please thanks thank hey claude great perfect excellent sure right actually really
like want need needs make makes made use used using uses get gets got go going goes went see look looks
thing things way ways something anything everything nothing one two three first second last new old good bad
better best well much many lot lots bit also still even ever every may might must shall done do doing work works
working able across around back since via per etc user users assistant turn session sessions
today tomorrow yesterday time times always never sometimes already yet again
think thought know knew seems seem said says say tell told ask asked asking help helps try tried
change changes changed changing add added adding update updated updating fix fixed fixes fixing set sets
run runs running ran call calls called file files code line lines case cases part parts kind sort type
instead rather without within whether though although however therefore thus hence less more most
stated reason request context words confirmed failing reported problems steps step find went away
repeat investigation check passes pass passing re-run rerun
""".split())
_TAG_FILE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:py|js|mjs|ts|tsx|jsx|html|css|scss|md|json|ya?ml|"
                       r"toml|sh|go|rs|java|rb|sql|cfg|ini|lock|txt|c|h|cpp|kt|swift|vue|jsonl))\b")
_TAG_DOTTED = re.compile(r"(?<![\w/.-])([a-z_][a-z0-9_]+(?:\.[a-z_][a-z0-9_]+)+)(?![\w/-])")
_TAG_CAPS = re.compile(r"(?<![\w`/.-])([A-Z][a-z0-9]*[A-Z][A-Za-z0-9]*|[A-Z]{2,}[0-9]*|[A-Z][a-z]+[0-9]+)(?![\w`/-])")
_TAG_WORD = re.compile(r"(?<![\w`/.-])([a-z][a-z0-9]*(?:[-_][a-z0-9]+)*)(?![\w`/])")
_TAG_OK = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
_CAPS_STOP = frozenset({"i", "ok", "todo", "fixme", "id", "ids", "url", "pr", "eg", "ie", "vs", "etc", "tl", "dr",
                        "note", "yes", "no", "e", "re"})


def _tag_norm(t: str) -> str:
    t = t.lower().strip("`'\"()[]{}<>,;:!?")
    return re.sub(r"[^a-z0-9_.-]+", "-", t).strip("-_.")


def _stem(t: str) -> str:
    return t[:-1] if t.endswith("s") and len(t) > 4 and not t.endswith("ss") else t


# The drafter's own framing words around the quoted evidence (tags are never taken from them).
SCAFFOLD = re.compile(
    r"\((?:the user|the assistant|the parent agent), turn \d+\)|Confirmed by [^:]{0,40}:|In the user's words:|"
    r"No (?:separate )?reason was stated[^:“]*[:;]?|the decision as given[^:]*:|Not stated (?:separately|beyond the "
    r"request itself)[^:]*:|the user's context:|Left for later in the session, as stated[^:]*:|"
    r"The failing run reported:|Re-run (?:the command that failed with|what showed the problem)?|and check it "
    r"(?:passes|is gone)|Reported problems:|Files changed:|Later in the session:|Anything that needs it fails:|"
    r"Work has to stay within it, as stated[^:]*:|Turn \d+:|The (?:assistant|user) agreed \(turn \d+\):|"
    r"Find what changed before|went away|Repeat the investigation of the session|A failure that the session fixed|"
    r"The session ended without a closing summary from the assistant|Not stated in the session's prompts")


def make_tags(texts: list[str], category: str) -> list[str]:
    """Salient words of a draft: file names, code names, technical terms; never stop words."""
    texts = [SCAFFOLD.sub(" ", t) for t in texts]
    scores: dict[str, float] = {}
    first: dict[str, int] = {}

    def add(tag: str, w: float) -> None:
        tag = _tag_norm(tag)
        if not tag or not _TAG_OK.match(tag) or len(tag) > 40 or tag.replace(".", "").isdigit() or tag in _STOP \
                or tag in _CAPS_STOP or len(tag) < 2:
            return
        scores[tag] = scores.get(tag, 0.0) + w
        first.setdefault(tag, len(first))

    for text in texts:
        for i, part in enumerate(text.split("`")):
            if i % 2:  # inline code: a name, a path, a call
                span = part.strip()
                if not span or " " in span or len(span) > 60:
                    continue
                span = span.split("(")[0].rstrip("/")
                span = span.rsplit("/", 1)[-1].lstrip(".-@")
                if re.fullmatch(r"[A-Za-z0-9_.-]{2,40}", span) and not re.fullmatch(r"[-_.]*", span):
                    add(span, 3.0)
                continue
            for m in _TAG_FILE.finditer(part):
                add(m.group(1).rsplit("/", 1)[-1], 3.0)
            rest = _TAG_FILE.sub(" ", part)
            for m in _TAG_DOTTED.finditer(rest):
                add(m.group(1), 2.0)
            rest = _TAG_DOTTED.sub(" ", rest)
            for m in _TAG_CAPS.finditer(rest):
                add(m.group(1), 2.0)
            for m in _TAG_WORD.finditer(rest.lower()):
                w = m.group(1)
                if len(w) >= 4 and w not in _STOP:
                    add(w, 1.0 if ("-" in w or "_" in w) else 0.6)
    by_stem: dict[str, str] = {}
    for tag in sorted(scores, key=lambda t: (-scores[t], first[t])):
        key = _stem(tag)
        if key in by_stem:  # one of "test"/"tests"
            scores[by_stem[key]] += scores[tag]
        else:
            by_stem[key] = tag
    ranked = sorted(by_stem.values(), key=lambda t: (-scores[t], first[t]))
    picked = [t for t in ranked if scores[t] >= 1.0][:MAX_TAGS]
    if len(picked) < 3:
        picked += [t for t in ranked if t not in picked][: 3 - len(picked)]
    return picked or [category.replace("_", "-")]


def _safe_body(body: str) -> str:
    """Lines of evidence that would read as structure (a heading, a code fence, a rule) are escaped."""
    out = []
    for line in body.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith(("#", "```", "~~~")) or re.match(r"^(?:-{3,}|={3,}|\*{3,}|_{3,})\s*$", stripped):
            line = line[: len(line) - len(stripped)] + "\\" + stripped
        out.append(line)
    return "\n".join(out)


class OfflineDrafter:
    """Drafts from the triage's snippets and excerpt, with no model. Stateless, so thread-safe."""

    name = "offline"

    def __init__(self, reason: str = "backend: offline") -> None:
        self.reason = reason

    def draft(self, request: DraftRequest) -> DraftResult:
        t0 = time.perf_counter()
        try:
            doc, notes = self._draft(request)
            text = memfile.render(doc)
            if find_secrets(text):  # defence in depth: every part was redacted, the whole is checked too
                doc = memfile.parse(redact_text(text))
                text = memfile.render(doc)
                notes.append("redacted a secret that survived into the draft")
        except Exception as e:  # a drafter never raises: the pipeline marks the category failed
            msg = str(e) if isinstance(e, _Invalid) else f"offline drafter failed: {e.__class__.__name__}: {e}"
            return DraftResult(doc=None, text="", model="offline", elapsed=time.perf_counter() - t0,
                               error=clean(msg)[:500])
        for where, what in memfile.problems(doc):
            notes.append(f"invalid draft: {where} {what}")
        return DraftResult(doc=doc, text=text, model="offline", elapsed=time.perf_counter() - t0, notes=notes)

    def _draft(self, request: DraftRequest) -> tuple[memfile.MemoryDoc, list[str]]:
        category = getattr(request, "category", None)
        if not isinstance(category, str) or category not in CATEGORIES:
            raise _Invalid(f"unknown category {category!r:.60}; expected one of {', '.join(CATEGORIES)}")
        entry = getattr(request, "entry", None)
        entry = entry if isinstance(entry, Mapping) else {}
        snippets = parse_snippets(entry.get("snippets"))
        excerpt = entry.get("excerpt") if isinstance(entry.get("excerpt"), str) else ""
        if not snippets and not excerpt.strip():
            raise _Invalid(f"no evidence to draft {category} from: the triage entry has no snippets and no excerpt")
        notes: list[str] = []
        now = getattr(request, "now", "")
        if not (isinstance(now, str) and _STAMP.match(now)):
            notes.append(f"request.now {now!r:.40} is not a UTC stamp like 2026-11-22T10:04:00Z: used the current time")
            now = now_iso()
        source = getattr(request, "source", None)
        source = source if isinstance(source, Mapping) else {}
        if category == "session_summary":
            subagent = source.get("subagent") is True
            d = _run(lambda: draft_session_summary(excerpt, snippets, subagent=subagent), category)
        else:
            ev = Evidence(snippets, excerpt)
            fn = {"decision": draft_decision, "constraint": draft_constraint, "runbook": draft_runbook,
                  "tech_debt": draft_tech_debt, "preference": draft_preference}[category]
            d = _run(lambda: fn(ev), category)
        notes += d.notes
        title = _bounded_line(redact_text(d.title).replace("\n", " ").strip(), memfile.TITLE_MAX) or "Untitled memory"
        description = _bounded_line(redact_text(d.description) or title, memfile.DESCRIPTION_MAX)
        cat = CATEGORIES[category]
        sections = {}
        for name in cat.required + cat.optional:
            text = d.sections.get(name, "").strip()
            if text:
                sections[name] = _safe_body(redact_text(text))
        body = memfile.join_sections(sections)
        tags = make_tags([title, *sections.values()], category)
        session = source.get("session") if isinstance(source.get("session"), str) else ""
        turns = sorted({s.turn for s in d.used if isinstance(s.turn, int) and s.turn > 0})
        if not turns:
            st = source.get("turns")
            st = st if isinstance(st, list) else []
            turns = sorted(t for t in st if isinstance(t, int) and not isinstance(t, bool))
        src: dict = {"session": clean(session)[:200]}
        if turns:
            src["turns"] = [turns[0], turns[-1]]
        doc = memfile.MemoryDoc(id=memfile.slugify(title, ID_SOFT), category=category, title=title,
                                description=description, tags=tags, created=now, updated=now, sources=[src],
                                status="active", body=body)
        for c in getattr(request, "candidates", None) or ():
            if isinstance(c, Mapping) and c.get("id") and _norm(str(c.get("title", ""))) == _norm(title):
                notes.append(f"same title as existing memory {str(c.get('id'))[:80]!r}")
        return doc, notes


def _run(fn, category: str) -> Draft:
    try:
        return fn()
    except _NoEvidence:
        raise _Invalid(f"no usable statement to draft {category} from in the evidence") from None
