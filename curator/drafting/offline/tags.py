"""A draft's tags: its salient words (file names, code names, technical terms), never stop words or the
drafter's own framing; and the content words the recipes compare topics by."""

from __future__ import annotations

import re

MAX_TAGS = 6


_STOP = frozenset(
    """
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
""".split()
)
_TAG_FILE = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:py|js|mjs|ts|tsx|jsx|html|css|scss|md|json|ya?ml|"
    r"toml|sh|go|rs|java|rb|sql|cfg|ini|lock|txt|c|h|cpp|kt|swift|vue|jsonl))\b"
)
_TAG_DOTTED = re.compile(r"(?<![\w/.-])([a-z_][a-z0-9_]+(?:\.[a-z_][a-z0-9_]+)+)(?![\w/-])")
_TAG_CAPS = re.compile(
    r"(?<![\w`/.-])([A-Z][a-z0-9]*[A-Z][A-Za-z0-9]*|[A-Z]{2,}[0-9]*|[A-Z][a-z]+[0-9]+)(?![\w`/-])"
)
_TAG_WORD = re.compile(r"(?<![\w`/.-])([a-z][a-z0-9]*(?:[-_][a-z0-9]+)*)(?![\w`/])")
_TAG_OK = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
_CAPS_STOP = frozenset(
    {
        "i",
        "ok",
        "todo",
        "fixme",
        "id",
        "ids",
        "url",
        "pr",
        "eg",
        "ie",
        "vs",
        "etc",
        "tl",
        "dr",
        "note",
        "yes",
        "no",
        "e",
        "re",
    }
)


def _tag_norm(t: str) -> str:
    t = t.lower().strip("`'\"()[]{}<>,;:!?")
    return re.sub(r"[^a-z0-9_.-]+", "-", t).strip("-_.")


def stem(t: str) -> str:
    return t[:-1] if t.endswith("s") and len(t) > 4 and not t.endswith("ss") else t


_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9_'-]{2,}")


def content_words(text: str) -> set[str]:
    """Lowercase words that carry meaning, crudely stemmed ("grants" and "grant" are one)."""
    return {stem(w) for w in (w.lower() for w in _WORDS.findall(text)) if w not in _STOP}


# The drafter's own framing words around the quoted evidence (tags are never taken from them).
SCAFFOLD = re.compile(
    r"\((?:the user|the assistant|the parent agent), turn \d+\)|Confirmed by [^:]{0,40}:|In the user's words:|"
    r"No (?:separate )?reason was stated[^:“]*[:;]?|the decision as given[^:]*:|Not stated (?:separately|beyond the "
    r"request itself)[^:]*:|the user's context:|Left for later in the session, as stated[^:]*:|"
    r"The failing run reported:|Re-run (?:the command that failed with|what showed the problem)?|and check it "
    r"(?:passes|is gone)|Reported problems:|Files changed:|Later in the session:|Anything that needs it fails:|"
    r"Work has to stay within it, as stated[^:]*:|Turn \d+:|The (?:assistant|user) agreed \(turn \d+\):|"
    r"Find what changed before|went away|Repeat the investigation of the session|A failure that the session fixed|"
    r"The session ended without a closing summary from the assistant|Not stated in the session's prompts"
)


def make_tags(texts: list[str], category: str) -> list[str]:
    """Salient words of a draft: file names, code names, technical terms; never stop words."""
    texts = [SCAFFOLD.sub(" ", t) for t in texts]
    scores: dict[str, float] = {}
    first: dict[str, int] = {}

    def add(tag: str, w: float) -> None:
        tag = _tag_norm(tag)
        if (
            not tag
            or not _TAG_OK.match(tag)
            or len(tag) > 40
            or tag.replace(".", "").isdigit()
            or tag in _STOP
            or tag in _CAPS_STOP
            or len(tag) < 2
        ):
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
                if re.fullmatch(r"[A-Za-z0-9_.-]{2,40}", span) and not re.fullmatch(
                    r"[-_.]*", span
                ):
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
        key = stem(tag)
        if key in by_stem:  # one of "test"/"tests"
            scores[by_stem[key]] += scores[tag]
        else:
            by_stem[key] = tag
    ranked = sorted(by_stem.values(), key=lambda t: (-scores[t], first[t]))
    picked = [t for t in ranked if scores[t] >= 1.0][:MAX_TAGS]
    if len(picked) < 3:
        picked += [t for t in ranked if t not in picked][: 3 - len(picked)]
    return picked or [category.replace("_", "-")]


# Words that are no subject: adjectives, adverbs and verbs the tags pick up ("prefer", "small", "modify", "rest").
_NOT_SUBJECT = frozenset(
    """prefer small large big modify rest take least most complex simple simpler cleaner clean
quick equal latest nested proper actual current existing full real whole easy hard faster slower potentially accurate
specific possible available required broken direct launch keep leave avoid allow stop start create implement remove
replace include handle return open close show save load write read build move switch choose pick idea success
particular completely accordingly remaining much enough sure likely certain important main different same other
another previous next further entire overall single multiple several various extra additional separate
minimal means requires needs decision constraint runbook preference tech-debt tech_debt debt session summary limit fixing deferred""".split()
)
_DETERMINER = re.compile(
    r"\b(?:the|a|an|this|that|these|those|its|their|our|your|my|each|every|all|any|no|some|"
    r"of|for|on|in|with|to|from|about|by)\s+(?:[\w.-]+\s+){0,2}$",
    re.I,
)


def _is_word(ch: str) -> bool:
    """What `\\w` matches in a str pattern: a letter, a digit or a numeral, or `_`."""
    return ch.isalnum() or ch == "_"


def whole_word(tag: str, text: str, folded: str) -> list[tuple[int, int]]:
    """Where `tag` stands in `text` as a word, any case (`(?<![\\w.-])tag(?![\\w-])`, re.I), as
    spans; `folded` is text.lower(). Found with str.find, not a pattern compiled per word: a draft looks
    up every word of its text, and each pattern would go to re's module cache (512 patterns), which a
    long-running app (the TUI's pipeline) would keep full of one-off words, pushing out the patterns
    that are used again."""
    word = tag.lower()
    if not word or not word.isascii() or len(folded) != len(text):
        # where str.lower() may not fold as re.I does (another length, a non-ASCII word): the pattern
        found = re.finditer(rf"(?<![\w.-]){re.escape(tag)}(?![\w-])", text, re.I)
        return [m.span() for m in found]
    spans = []
    i = folded.find(word)
    while i >= 0:
        end = i + len(word)
        before = folded[i - 1] if i else ""
        after = folded[end] if end < len(folded) else ""
        if not (before and (_is_word(before) or before in ".-")) and not (
            after and (_is_word(after) or after == "-")
        ):
            spans.append((i, end))
            i = folded.find(word, end)
        else:
            i = folded.find(word, i + 1)
    return spans


def subject_words(tags: list[str], texts: list[str], *, names_only: bool = False) -> list[str]:
    """The tags that name the draft's subject, as written: identifiers first (files, code, `JWT`, `getUser`,
    `orange-red`), then nouns (a word after a determiner or a preposition, or a plural); never a verb, an adjective,
    a stop word or a category's name. `names_only` keeps identifiers alone (text the drafter cannot read)."""
    text = SCAFFOLD.sub(" ", "\n".join(texts))
    names: list[str] = []
    nouns: list[str] = []
    # The tags first, then the text's other words: a short draft has few tags.
    words = [w.lower() for w in re.findall(r"[A-Za-z][\w.-]*[A-Za-z0-9]", text)]
    folded = text.lower()
    for tag in dict.fromkeys(tags + [w for w in words if len(w) >= 4]):
        if tag in _NOT_SUBJECT or tag in _STOP:
            continue
        found = whole_word(tag, text, folded)
        if not found:
            continue
        forms = [text[start:end] for start, end in found]
        written = next((f for f in forms if f != f.lower()), forms[0])
        coded = any(text[:start].count("`") % 2 for start, _ in found)
        # A proper noun ("Hermes") is capitalized everywhere and somewhere mid-sentence, outside a Title Case heading.
        proper = all(f[:1].isupper() for f in forms) and any(
            re.search(r"[a-z,;]\s+$", text[:start])
            and not re.search(r"\b[A-Z][\w-]*\s+$", text[:start])
            and not re.match(r"\s+[A-Z]", text[end:])
            for start, end in found
        )
        if (
            re.search(r"[._/\d]", tag)
            or coded
            or any(re.search(r".[A-Z]", f) for f in forms)
            or proper
        ):
            names.append(written)
        elif (
            not names_only
            and not re.search(r"(?:ing|ed|ly|ous|ful|ive|able|ible|less|est)$", tag)
            and (
                tag in tags
                and tag.endswith("s")
                and not tag.endswith("ss")
                or re.search(r"(?:tion|ment|ness|ity|ance|ence|ism)$", tag)
                or any(_DETERMINER.search(text[max(0, start - 60) : start]) for start, _ in found)
            )
        ):
            nouns.append(tag)
    return names + nouns
