"""What a memory a careful reviewer would delete looks like, whoever wrote it (a drafter, Claude, a person).

Small pure checks on a memory's parts. A title states the fact in a short declarative phrase: never a
question, a request to the assistant, a first-person sentence, a tracker id alone, a progress report or a
fragment cut mid-phrase. The description says when the memory applies, not what the assistant did.
A section holds facts, not chatter (narration, progress reports, task-tracker bookkeeping) and not a
placeholder; a runbook's Verification names how the fix was checked, its Steps are the fix.

Each check returns a `Flaw` (code, where, message); verify.py makes them ADVISORY issues, and the offline
drafter uses the same checks to avoid writing them. Sentence-level tests (`is_chatter`) are public for that.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from memcurate.curator.memory.memfile import MemoryDoc


class Flaw(NamedTuple):
    code: str  # title-question, title-prompt, title-first-person, title-tracker-id, title-fragment, ...
    where: str  # "title", "description", "## Steps"
    message: str


CODES = (
    "title-question",
    "title-prompt",
    "title-first-person",
    "title-tracker-id",
    "title-fragment",
    "title-progress",
    "description-narration",
    "section-chatter",
    "section-vacuous",
    "verification-bare",
    "steps-investigation",
    "description-unselectable",
)

_QUESTION = re.compile(
    r"^(?:what|why|how|when|where|which|who|is|are|was|were|do|does|did|can|could|should|would|"
    r"will|shall|may|might|has|have|had)\b(?!\s+(?:to|been)\b)",
    re.I,
)
# Addressing the assistant: what a person typed, not what is true.
_PROMPT = re.compile(
    r"^(?:(?:can|could|would|will) (?:you|we)\b|please\b|help me\b|i (?:want|need|would like|'d like)\b|"
    r"i(?:'d| would) like\b|(?:have|take) a look\b|look (?:at|into)\b|let's\b|let us\b|hey\b|@\w|"
    r"(?:review|check|investigate|research|search|explore|analy[sz]e|read|see) (?:https?://|the |if |whether |@|this\b|"
    r"these\b|that\b|it\b)|(?:go ahead|continue|proceed|try again|do it|make it)\b|as per\b)",
    re.I,
)
# "it" points at the conversation only where nothing in the title names what it is ("Fix it", "It works").
_DEICTIC = re.compile(
    r"\b(?:these|this one|those ones|the above|above|here|as discussed|see @\S+)\b"
    r"|^it\b|^\w+ it\b"
    r"|\byou(?:'re|'ll|'ve|r)?\b|https?://|@\S+/|^(?:this|that|these|those|they)(?:'s| is| was| are| were)\b",
    re.I,
)
# A session summary says what was done; one opening on a bare imperative is the request that began it.
IMPERATIVE = re.compile(
    r"^(?:add|fix|update|solve|make|create|implement|run|use|change|work|review|refactor|write|"
    r"build|remove|help|set|find|research|search|investigate|deploy|test|check|improve|clean|"
    r"move|rename|replace|modify|have|take|do|continue|try|look|give|show|explain|tell|"
    r"resolve|close|merge|start|finish|implement|debug|analy[sz]e|plan|go|get|put|convert|"
    r"migrate|port|setup|set up|install|configure|document|rewrite|split|combine)\b",
    re.I,
)
_FIRST = re.compile(
    r"(?:^|[\s\"“(])(?:I|I'm|I've|I'll|I'd|(?i:me|my|we|we're|we've|we'll|we'd|our|let me|let's))"
    r"(?=[\s,.!?;:\"”)]|$)"
)
_FIRST_OPEN = re.compile(
    r"^(?:now,? |so,? |ok(?:ay)?,? )?(?:I|I'm|I've|I'll|I'd|let me|let's|we|we're|we've|we'll|"
    r"we'd|our|my)\b",
    re.I,
)
_TRACKER_ID = re.compile(
    r"(?:#\d+|\b[A-Z][A-Z0-9]{1,9}-\d+\b|\b(?:task|issue|ticket|pr|story|bug)[- _#]?\d+\b|"
    r"\bphase \d+\b)",
    re.I,
)
_LABEL = re.compile(
    r"^(?:trade-?offs?|key (?:finding|insight|takeaway)s?|impact|implementation(?: steps)?|"
    r"recommendation|note|summary|result|results|status|update|conclusion|next steps?|"
    r"quick fix|fix|problem|issue|solution|root cause|takeaway|step \d+|phase \d+|option \w+|"
    r"sequential dependency|[a-z][\w-]*(?: [\w-]+)? hooks?)\s*[:—–-]\s",
    re.I,
)
_CONNECTOR_START = re.compile(
    r"^(?:and|or|but|with|because|since|which|so|than|then|also|as|that|to|of|for|by|"
    r"while|whereas|if|unless|although|though)\b",
    re.I,
)
_CONNECTOR_END = re.compile(
    r"\b(?:and|or|but|with|the|a|an|of|to|for|in|on|at|by|from|as|that|which|so|than|"
    r"into|via|is|are|was|were|be|not|because|if|when|while|its|their|our|your|especially|also|just|like|such as|"
    r"including|e\.g|i\.e)\W*$",
    re.I,
)
_PROGRESS = re.compile(
    r"(?:^(?:done|all done|finished|completed?|success|fixed(?: it)?|resolved|perfect|great|excellent)(?:\s*[!.:]|$)"
    r"|^successfully\b|\b(?:is now (?:fixed|complete|done|working|resolved|in place)|"
    r"(?:has|have) (?:now )?been (?:successfully )?(?:fixed|resolved|completed|done|addressed|merged|implemented)|"
    r"(?:are|is) (?:now )?(?:passing|green|complete|done|working)[.!]*$|fixed the root cause|all (?:\w+ )?(?:issues|tasks|steps) "
    r"(?:are )?(?:done|complete|completed|closed)|\bcomplete[.!]?$|\bbuilds? (?:successfully|cleanly)(?: now)?[.!]*$)"
    # A status fragment: "Nothing pushed.", "All set", "Firmware downloaded.", and the commonest in other languages.
    r"|^(?:nothing|not(?: yet)?) (?:pushed|merged|committed|deployed|released|changed)(?: yet)?[.!]*$|^all set\b"
    r"|^(?:[\w-]+ ){0,2}(?:downloaded|installed|pushed|merged|committed|deployed|saved|built)[.!]*$"
    r"|^(?:[\w-]+ )?(?:fatto|fatta|completato|perfetto|ottimo|hecho|listo|perfecto|terminé|parfait|fertig|"
    r"erledigt|perfekt)[.!]*$)",
    re.I,
)
_TESTS_PASS = re.compile(
    r"^(?:all |the )?(?:\d+ |the )?(?:\w+ ){0,2}tests? (?:now |all |are |have |still )*"
    r"(?:pass(?:es|ed|ing)?|green|succeed(?:s|ed)?)|^(?:works|it works|everything works|"
    r"all green|tests pass|build (?:passes|succeeds))(?: now)?\b",
    re.I,
)
_TRACKER_CHATTER = re.compile(
    r"\b(?:todo ?list|todos?\b|to-do list|mark(?:s|ed|ing)? (?:the )?(?:task|todo|item|it|this|step)s?\b|"
    r"(?:task|todo|step|item) \d+\b.{0,40}\b(?:complete|completed|done|in[ _]progress)|"
    r"in_progress|status: (?:completed|done|pending)|update (?:the |my )?(?:todos?|task list|progress)|"
    r"(?:move|moving|moved) on to (?:the next|task|step))",
    re.I,
)
_GREETING = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|good (?:morning|afternoon|evening)|you're welcome|"
    r"happy to help|let me know|glad|no problem|sure thing|of course)\b",
    re.I,
)
_NARRATION = re.compile(
    r"^(?:now,? |next,? |first,? |then,? |ok(?:ay)?,? |great,? |perfect,? )?"
    r"(?:let me|let's (?:check|look|see|run|start|try|verify|now|find|read|test)|i'll|i will|i'm going to|"
    r"i need to|i can see|i see\b|i found|i notice|i've|i have|i'm|looking at|now i|we need to|i should|"
    r"here's|here is|running|reading|searching|checking|opening|listing|executing)\b",
    re.I,
)
# The commonest narration of assistants writing in Italian, Spanish, French, German or Portuguese ("Prima
# raccolgo i fatti…, poi entro in Plan Mode": first I gather the facts, then…).
_NARRATION_OTHER = re.compile(
    r"^(?:(?:ora|adesso|prima|poi|quindi|intanto) (?:\w+o|faccio|vado)\b|(?:vediamo|procedo|fammi|lasciami|"
    r"controllo|verifico|pianifico)\b|(?:ahora )?voy a\b|déjame\b|(?:maintenant,? )?je vais\b|laisse-moi\b|"
    r"(?:jetzt )?(?:ich werde|lass mich)\b|(?:agora )?vou\b|deixe-me\b)",
    re.I,
)
_TOOL = re.compile(
    r"\[Request interrupted by user|\btool_use\b|\bexit code \d+\b(?!.*\b(?:because|means)\b)", re.I
)
_VACUOUS = re.compile(
    r"^(?:n/?a|none|nothing|tbd|todo|unknown|-+|\.+|…|see above|as above|not applicable|"
    r"not stated(?: in the session)?|no reason (?:was )?(?:stated|given)(?: in the session)?|"
    r"not (?:given|known|specified)|no (?:details?|information))[.!]?$",
    re.I,
)
_COMMAND = re.compile(
    r"`[^`]+`|\b(?:pytest|npm|pnpm|yarn|go test|go build|cargo|make|tox|nox|ruff|mypy|pyright|"
    r"tsc|jest|vitest|gradle|mvn|dotnet|bun|deno|uv run|python -m|curl|nix|just)\b",
    re.I,
)
_INVESTIGATE = re.compile(
    r"^(?:\d+\.\s*|[-*]\s*)?(?:find (?:what|out|where|why)|investigate|look (?:at|into)|"
    r"check (?:what|why|where|the logs|if|whether)|figure out|understand|explore|debug|"
    r"read (?:the|through)|search (?:for|the)|try to|see (?:if|whether|what))\b",
    re.I,
)
_ATTRIBUTION = re.compile(
    r"\s*\((?:the (?:user|assistant|parent agent)(?:, turn \d+)?|turn \d+)\)", re.I
)


def _words(s: str) -> list[str]:
    return re.findall(r"[A-Za-z][\w'-]*", re.sub(r"`[^`]*`", " code ", s))


def section_sentences(text: str) -> list[str]:
    """A section's sentences, without the drafter's attributions ("(the user, turn 3)")."""
    text = _ATTRIBUTION.sub("", text)
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [p.strip(" -*>\t") for p in parts if re.search(r"[A-Za-z]", p)]


def is_progress(s: str) -> bool:
    """A progress report ("All 49 tests pass", "Done!", "The issue is now fixed"): what happened, not a fact."""
    t = s.strip().strip("“”\"'*").strip()
    return bool(_PROGRESS.search(t) or _TESTS_PASS.match(t))


# Function words of the commonest other languages of the transcripts, and English's own: a sentence with more of
# the first is not English, and its words are no title (the offline drafter cannot translate it).
_OTHER_WORDS = frozenset(
    """il lo gli una di del della dei delle che è non per con su sono poi prima ho questo questa
nel nella anche come più già ma se ci si e al alla cosa fatto niente tutto el los las es por para del como pero
está muy le les des est et pour avec dans une du au aux sont pas ce cette qui der die das und ist nicht mit für ein
eine den dem auch sich auf ich wir não uma com os ao mais nel nei sul sulla dal dalla degli""".split()
)
_ENGLISH_WORDS = frozenset(
    """the a an is are was were be to of and in on at it for with that this these by from as
not no or but if then so we you i they he she has have had do does can will would should there which what""".split()
)


def is_foreign(s: str) -> bool:
    """`s` is written in another language than English (more of that language's function words than English's)."""
    words = [w.lower() for w in re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", re.sub(r"`[^`]*`", " ", s))]
    other = sum(w in _OTHER_WORDS for w in words) + sum(
        bool(re.search(r"[àèìòùñäöüßçãõ]", w)) for w in words
    )
    english = sum(w in _ENGLISH_WORDS for w in words)
    return other >= 2 and other > english


def is_chatter(s: str) -> bool:
    """A sentence a memory should not hold: narration, a greeting, a progress report, task-tracker or tool chatter."""
    t = s.strip().strip("“”\"'*").strip()
    if not t:
        return True
    return bool(
        _NARRATION.match(t)
        or _NARRATION_OTHER.match(t)
        or _GREETING.match(t)
        or _TRACKER_CHATTER.search(t)
        or _TOOL.search(t)
        or is_progress(t)
    )


def title_flaws(title: str, category: str = "") -> list[Flaw]:
    """Why `title` does not state a fact (empty when it does)."""
    t = title.strip().strip("“”\"'").strip()
    out: list[Flaw] = []
    if not t:
        return out
    if t.endswith("?") or _QUESTION.match(t):
        out.append(
            Flaw("title-question", "title", "the title is a question: state the answer or the fact")
        )
    if (
        _PROMPT.match(t)
        or _DEICTIC.search(t)
        or (category == "session_summary" and IMPERATIVE.match(t))
    ):
        out.append(
            Flaw(
                "title-prompt",
                "title",
                "the title is a request to the assistant or points at the "
                'conversation ("these", a link): state the fact itself',
            )
        )
    elif _FIRST_OPEN.match(t) or _FIRST.search(t):
        out.append(
            Flaw(
                "title-first-person",
                "title",
                "the title is a first-person sentence: state the fact, not who said it",
            )
        )
    rest = [
        w
        for w in _words(_TRACKER_ID.sub(" ", t))
        if w.lower()
        not in ("fix", "fixed", "close", "closed", "done", "see", "the", "a", "and", "task", "pr")
    ]
    if _TRACKER_ID.search(t) and len(rest) < 2:
        out.append(
            Flaw(
                "title-tracker-id", "title", "the title is a tracker id: say what the item is about"
            )
        )
    if is_progress(t) or _TRACKER_CHATTER.search(t):
        out.append(
            Flaw(
                "title-progress", "title", "the title is a progress report: state what is now true"
            )
        )
    fragment = ""
    if _LABEL.match(t):
        fragment = "starts with a heading label"
    elif _CONNECTOR_START.match(t):
        fragment = "starts mid-sentence"
    elif t.endswith(("…", "...")) or _CONNECTOR_END.search(t):
        fragment = "is cut mid-phrase"
    elif t.count("`") % 2 or t.count("(") != t.count(")") or len(_words(t)) < 2:
        fragment = "is incomplete"
    if fragment:
        out.append(
            Flaw(
                "title-fragment",
                "title",
                f"the title {fragment}: write the whole fact as a short phrase",
            )
        )
    return out


def description_flaws(description: str) -> list[Flaw]:
    """Why the MEMORY.md line is narration rather than when the memory applies (empty when it is not)."""
    t = description.strip().strip("“”\"'").strip()
    if t and (_FIRST_OPEN.match(t) or is_chatter(t) or _PROMPT.match(t) or t.endswith("?")):
        return [
            Flaw(
                "description-narration",
                "description",
                "the description narrates the session: say when the memory applies",
            )
        ]
    return []


# Words that name no subject: a description made of these alone ("Project notes", "A decision was made")
# gives Claude Code's recall selector, which sees only path, type and description, nothing to pick by.
_GENERIC = frozenset(
    """a an the this that these some of about on for to in and or is was were be been has have had
made make taken decided decision decisions chosen choice note notes memory memories information info detail details
context summary session sessions project projects repo repository code codebase thing things stuff general various
misc important key relevant useful work change changes update updates issue issues fix fixes preference preferences
rule rules constraint constraints runbook runbooks debt tech technical item items topic topics points learned
remember when what how why user team""".split()
)
_SUBJECT_WORD = re.compile(r"[^\W\d_][\w'./-]*|\d[\w.]*[^\W\d_][\w.]*")


def _subject_words(text: str) -> set[str]:
    """Stems of the words that can name a subject (5 letters: "chosen"/"choose" and "sessions"/"session" meet)."""
    return {
        w.lower()[:5]
        for w in _SUBJECT_WORD.findall(re.sub(r"[`*_]", " ", text))
        if w.lower() not in _GENERIC and len(w) > 2
    }


def selector_flaws(doc: MemoryDoc) -> list[Flaw]:
    """Why Claude Code's recall selector could not pick this memory by its description (empty when it can):
    the title repeated, a generic phrase, or no word in common with the memory's own fact (its body)."""
    d = doc.description.strip()
    if not d:
        return []  # memfile.problems: an empty description is a BLOCK already
    why = ""
    if _norm(d) == _norm(doc.title):
        why = "repeats the title"
    elif not _subject_words(d):
        why = "is a generic phrase that names no subject"
    elif doc.body.strip() and not _subject_words(d) & _subject_words(doc.body):
        why = "shares no word with the memory's fact"
    if not why:
        return []
    return [
        Flaw(
            "description-unselectable",
            "description",
            f"the description {why}: Claude Code's recall picks a memory by its description alone, so name "
            "the specific subject (the thing, the choice, the reason)",
        )
    ]


def _norm(s: str) -> str:
    """A text compared without case, punctuation or spacing."""
    return " ".join(re.findall(r"\w+", s.lower()))


def section_flaws(category: str, name: str, text: str) -> list[Flaw]:
    """Why a section holds no fact: a placeholder, only chatter, a bare "tests pass", investigation steps."""
    where = f"## {name}"
    sents = section_sentences(text)
    out: list[Flaw] = []
    if not sents or all(_VACUOUS.match(s.rstrip(" .")) or _VACUOUS.match(s) for s in sents):
        return [
            Flaw("section-vacuous", where, f"{name} says nothing: the session did not state it")
        ]
    # an outcome by nature: checked below
    verification = category == "runbook" and name == "Verification"
    if not verification and all(is_chatter(s) for s in sents):
        out.append(
            Flaw(
                "section-chatter",
                where,
                f"{name} is chatter (narration, progress or tracker lines), not a fact",
            )
        )
    if verification and not _COMMAND.search(text) and any(is_progress(s) for s in sents):
        out.append(
            Flaw(
                "verification-bare",
                where,
                "Verification says tests pass but not how the fix was "
                "checked: name the command and its outcome",
            )
        )
    if category == "runbook" and name == "Steps":
        steps = [ln for ln in text.split("\n") if ln.strip()]
        if steps and all(_INVESTIGATE.match(ln.strip()) for ln in steps):
            out.append(
                Flaw("steps-investigation", where, "Steps narrate the investigation, not the fix")
            )
    return out


def flaws(doc: MemoryDoc) -> list[Flaw]:
    """Every flaw of a memory's form: its title, its description and each section."""
    out = (
        title_flaws(doc.title, doc.category)
        + description_flaws(doc.description)
        + selector_flaws(doc)
    )
    for name, text in doc.sections.items():
        if name:
            out += section_flaws(doc.category, name, text)
    return out
