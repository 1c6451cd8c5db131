"""What kind of statement a sentence is, and its parts: the interjections and labels in front of it,
narration, requests, general rules, reasons and trade-offs, fluff, pasted code, headings and lead-ins, and
the reason clause (and consequence) after its core."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memcurate.curator.drafting.offline.text import finish, inside_code

_INTERJ_PUNCT = (
    r"right|good|nice|cool|great|perfect|excellent|done|agreed|yes|yep|sure|thanks|thank you|"
    r"indeed|correct|exactly|awesome|hmm+|ugh|oops|whoa|alright|fair enough|found it|got it|"
    r"good (?:catch|point|idea|question)|that's (?:a )?(?:great|good) (?:catch|point|idea|question)|"
    r"you'?re (?:absolutely |totally |completely |quite )?right|you are (?:absolutely )?right|"
    r"oh no|all done|success|experiment complete"
)
_INTERJ_SPACE = (
    r"ok(?:ay)?|so|well|also|anyway|and|but|now|hey(?: claude)?|hi|oh|ah|wait|actually|then|"
    r"basically|honestly|in general|in short|plus"
)
_INTERJ = re.compile(
    rf"^(?:(?:(?:{_INTERJ_PUNCT})\s*[!,.:;—–-]+\s*)"
    rf"|(?:(?:{_INTERJ_SPACE})(?:\s*[!,.:;—–]+\s*|\s+)))+",
    re.I,
)
_LABEL = re.compile(
    r"^(?:hiccup|note|nb|warning|caveat|gotcha|important|heads up|update|fyi|tip|bonus|key insight|"
    r"takeaway|summary|result|tl;?dr|(?:one|another|one more|a|last|final|quick|small) "
    r"(?:change|thing|note|request|point|nit|tweak))\s*:\s*",
    re.I,
)


_MERGED_HEADING = re.compile(
    r"^(?i:summary|overview|changes made|results?|done)\s+"
    r"(?=(?:I|I've|I'm|The|All|Both|We|This)\b)"
)


def strip_interjections(text: str) -> str:
    out = _LABEL.sub("", _INTERJ.sub("", text).strip()).strip()
    out = _MERGED_HEADING.sub("", out, count=1) if out[:1].isupper() else out
    return out if len(out) >= 3 else text


NARRATION = re.compile(
    r"^(?:let me|let's (?:check|look|see|run|start|first|try|examine|verify|now|begin|find|read|test|also)"
    r"|i'll (?:now |first |start by |go ahead and |also )?(?:check|look|run|start|examine|read|help|search|"
    r"investigate|see|take a look|explore|begin|continue|create a plan|analy[sz]e|review|verify|test|find|update the)"
    r"|i will (?:check|look|run|now|first|start)|i need to (?:look|check|understand|see|find|examine|investigate|read|"
    r"fix|run|update|verify|first)|i'm going to|i can see|i see\b|looking at|i understand|now i (?:understand|see|can)"
    r"|based on (?:my|the|your) |here's |here is |i've (?:successfully )?(?:completed|finished) (?:the|all)"
    r"|i should (?:either|first|check|look)|the user (?:wants|is asking|asked)|this (?:means|shows|confirms) "
    r"|(?:great|perfect|good)[!,.]? (?:so|now) |it looks like (?:the|we|i) (?:need|should))\b",
    re.I,
)
REQUEST = re.compile(
    r"^(?:(?:can|could|would|will) you\b"
    r"|please (?!always|never|don't|do not|keep|avoid|use|make sure)"
    r"|i(?:'d| would) like (?:your help|you to help|some help|help)|help me\b|hey claude\b)",
    re.I,
)
GENERAL = re.compile(
    r"\b(?:always|never|in general|from now on|every (?:time|new)|prefer|i'd rather|rather than|"
    r"by default|whenever|please (?:don't|do not|avoid|keep)|(?:don't|do not) (?:ever )?(?:use|add|"
    r"push|commit|change|touch|create|write|run|merge))\b",
    re.I,
)
REASON = re.compile(
    r"\b(?:because|since|so that|due to|as it|which (?:is|means|makes)|to avoid|otherwise|"
    r"in order to|the reason|that way|less work|simpler|cleaner|faster|safer|more reliable|"
    r"better fit|more efficient|easier|would mean)\b",
    re.I,
)
TRADEOFF = re.compile(
    r"\b(?:trade-?offs?|downside|drawback|the cost is|at the cost|caveat)\b", re.I
)


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
    if t.startswith(
        (
            "diff --git",
            "@@",
            "+++",
            "--- ",
            "index ",
            "$ ",
            ">>> ",
            "|",
            "def ",
            "class ",
            "import ",
        )
    ):
        return True
    if (
        any(m in t for m in ("```", "{%", "<!--", "___", '"""'))
        or len(re.findall(r"</?\w+[^>]*>", t)) >= 2
    ):
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
    # "Tests on Python 3.12 and 3.13" is prose
    if any(re.search(r"\d", tok) for tok in t.split()[:-1]):
        return False
    words = [w for w in re.findall(r"[A-Za-z][\w'-]*", t)]
    big = [w for w in words if w.lower() not in _SMALL]
    return (
        2 <= len(words) <= 8 and len(big) >= 2 and all(w[0].isupper() for w in big) and "`" not in t
    )


def is_lead_in(s: str) -> bool:
    return s.rstrip().endswith(":")


# A lead-in ending in one of these only announces what follows ("The changes made were:").
WEAK_END = frozenset(
    "now it that to the following includes include are is made were was this these so because "
    "found below changes".split()
)


_REASON_CLAUSE = re.compile(
    r"(?:,\s*|\s+)(?:and |but )?(because|since|so that|due to|as it|which (?:is|means|makes|would|keeps)|"
    r"to avoid|otherwise|in order to)\b",
    re.I,
)
_LEADING_REASON = re.compile(r"^(?:since|because|as|now that|given that)\s+(.{6,}?),\s+(.+)$", re.I)
_SO_CLAUSE = re.compile(
    r"^(.{6,}?),?\s+so\s+(?=(?:we|i|you|it|the|this|that|they|tests?|all)\b)(.+)$", re.I
)


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
    # "not due to the tests but because …": a reason denied is part of the statement; the next one is its reason.
    m = next(
        (m for m in _REASON_CLAUSE.finditer(s) if not re.search(r"\bnot$", s[: m.start()])), None
    )
    if m and m.start() >= 8 and not inside_code(s, m.start()):
        core, rest = s[: m.start()], s[m.start() :].lstrip(" ,")
        rest = re.sub(r"^(?:and|but)\s+", "", rest, flags=re.I)
        cons = ""
        k = re.search(r",\s+so\s+", rest)
        if k:
            rest, cons = rest[: k.start()], rest[k.end() :]
        return Clauses(core=core.rstrip(" ,"), reason=rest, consequence=cons)
    m = _SO_CLAUSE.match(s)
    if m:
        return Clauses(core=m.group(2), reason="because " + m.group(1))
    return Clauses(core=s)


def reason_sentence(clause: str) -> str:
    """A reason clause ("which is less work") as a sentence of its own ("It is less work.")."""
    c = clause.strip().rstrip(",;")
    rules = (
        (r"^(?:because|since|as)\s+(?:of\s+)?", ""),
        (r"^which is\b", "It is"),
        (r"^which means\b", "This means"),
        (r"^which makes\b", "This makes"),
        (r"^which would\b", "It would"),
        (r"^which keeps\b", "This keeps"),
        (r"^as it\b", "It"),
        (r"^due to\b", "Due to"),
    )
    for pat, rep in rules:
        new = re.sub(pat, rep, c, count=1, flags=re.I)
        if new != c:
            c = new
            break
    return finish(c)
