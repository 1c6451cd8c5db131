"""Secret redaction (docs/design.md §12): known token formats become ``[REDACTED:<kind>]``.

Runs on whole text units before they are cut into snippets, so a secret is
never split across a cut and half of it kept.

Tokens are matched by their own shape, not by word boundaries: `creds_AKIA…`
or `tok_ghp_…` (a token glued to a word by `_`) is still a token. A prefix
distinctive enough (`ghp_`, `glpat-`, `AIza`, `xoxb-…1`, `eyJ….eyJ…`) needs
nothing before it; a shorter one (`sk-`, `sk-ant-`, `sk_live_`, `AKIA`) only
forbids a letter or digit right before it, so `task-manager-…`,
`desk-ant-…` or `risk_test_…` stay.
Secrets said in prose ("my password is hunter2", "the token is `…`") go too.
"""

from __future__ import annotations

from memcurate.curator.util.lazyre import DOTALL, IGNORECASE, LazyRegex

TYPE_CHECKING = False
if TYPE_CHECKING:  # re loads only when a text may hold a secret (lazyre.py)
    import re

_B64 = r"A-Za-z0-9+/"


def marker(kind: str) -> str:
    """What stands where a secret of `kind` was."""
    return f"[REDACTED:{kind}]"


class _Rule:
    """One secret format.

    `hints`: lowercase substrings one of which every match contains; a cheap
    test that decides whether the regex is compiled and run at all.
    `lowercase`: the regex is written for lowercased text and runs on it
    (sre is several times slower with IGNORECASE); its spans are applied to
    the original text. `keep`: groups kept in front of the tag, and `after`
    text put behind it. `value`: the groups that hold the secret itself (the
    first one that matched counts); such a match is left alone when the value
    is a placeholder (`None`, `<your key>`, `$ENV`, an ENV_NAME, …).
    """

    __slots__ = ("kind", "hints", "regex", "lowercase", "keep", "after", "value")

    def __init__(
        self,
        kind: str,
        hints: tuple[str, ...],
        pattern: str,
        *,
        flags: int = 0,
        lowercase: bool = False,
        keep: tuple[int, ...] = (),
        after: str = "",
        value: tuple[int, ...] = (),
    ) -> None:
        self.kind, self.hints, self.lowercase, self.keep, self.after = (
            kind,
            hints,
            lowercase,
            keep,
            after,
        )
        self.value = value
        self.regex = LazyRegex(pattern, flags)


# Order matters: specific formats first, the generic assignment last.
_RULES: list[_Rule] = [
    _Rule(
        "private-key",
        ("private key",),
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[\sA-Za-z0-9+/=:,.\-\\]*)",
        flags=DOTALL,
    ),
    _Rule("anthropic-key", ("sk-ant-",), r"(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_\-]{20,}"),
    _Rule(
        "openai-key", ("sk-",), r"(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"
    ),
    _Rule(
        "aws-access-key",
        ("akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"),
        r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}(?![A-Z0-9])",
    ),
    _Rule(
        "aws-secret-key",
        ("secret",),
        r"(?<![a-z0-9])(aws_?secret_?access_?key|aws_?secret|secret_?access_?key)(\"?\s*[:=]\s*[\"']?)"
        r"[a-z0-9+/]{40}(?![a-z0-9+/])",
        lowercase=True,
        keep=(1, 2),
    ),
    _Rule(
        "github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        r"gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}",
    ),
    _Rule("gitlab-token", ("glpat-",), r"glpat-[A-Za-z0-9_\-]{20,}"),
    # A digit is required: "xoxo-gossip-girl" is not a token; real ones carry numeric ids.
    _Rule("slack-token", ("xox",), r"xox[abposre]-(?=[A-Za-z0-9\-]{0,80}[0-9])[A-Za-z0-9\-]{10,}"),
    _Rule("google-api-key", ("aiza",), r"AIza[0-9A-Za-z_\-]{35}"),
    _Rule(
        "stripe-key",
        ("_live_", "_test_"),
        r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
    ),
    _Rule("jwt", ("eyj",), r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    _Rule(
        "bearer-token",
        ("bearer",),
        r"(?<![a-z0-9])(bearer\s+)[a-z0-9._~+/\-]{20,}=*",
        lowercase=True,
        keep=(1,),
    ),
    _Rule(
        "url-credentials",
        ("://",),
        r"(?<![a-z0-9+.\-])([a-z][a-z0-9+.\-]*://[^\s:/@\[\]]+:)[^\s@/\[\]]+@",
        lowercase=True,
        keep=(1,),
        after="@",
    ),
]

# `password=...`, `API_KEY: ...`, `"client_secret": "..."`; the value (group 4) is what goes.
# The match starts at the secret-ish word: "DB_PASSWORD=x" matches from "password".
_ASSIGNMENT = _Rule(
    "password",
    ("pass", "pwd", "secret", "token", "key", "credential"),
    r"((?:password|passwd|passphrase|pwd|secret|token|api[_\-]?key|apikey"
    r"|access[_\-]?key|private[_\-]?key|credentials?)[a-z0-9_.\-]*)"
    r"([\"']?[ \t]*(?::|=|=>)[ \t]*)([\"'`]?)([^\s\"'`,;)}\]]{4,})",
    lowercase=True,
    keep=(1, 2, 3),
    value=(4,),
)

# Said in prose: "my password is: x", "the token is `x`", "the API key for staging was 'x'".
# After "is:" any value goes; a quoted one may hold spaces (a passphrase); a bare one must
# hold a digit, so "the password is wrong" and "the token is expired" stay. A PIN is digits
# (so "the numpy pin is 1.26.4" stays).
_VALUE_END = r"[^\s\"'`,;)}\]]{3,}[^\s\"'`,;)}\].!?:]"
# prose: blanks before "is" are spaces
_SAID = r" {1,4}(?:is|was)(?:[ \t]+(?:now|still|set[ \t]+to))?"
# from the end of a hint to " is": the longest "s for the <30 characters>" and blanks
_SAID_REACH = 64
_SPOKEN_RULES = (
    _Rule(
        "password",
        ("pass", "secret", "token", "key"),
        r"(?<![a-z0-9])((?:password|passphrase|passcode|passwd|secret(?:[ _\-]?key)?|token|api[ _\-]?key"
        r"|access[ _\-]?key|private[ _\-]?key)s?"
        r"(?:[ \t]{1,4}(?:for|to|of)[ \t]{1,4}(?:the[ \t]{1,4}|my[ \t]{1,4}|our[ \t]{1,4})?[a-z0-9_.\-]{1,30})?"
        + _SAID
        + ")"
        rf"(?:([ \t]*:[ \t]*[\"'`]?)({_VALUE_END})|([ \t]+[\"'`])([^\"'`\n]{{4,200}})(?=[\"'`])"
        rf"|([ \t]+)(?=[^\s\"'`,;)}}\]]{{0,80}}[0-9])({_VALUE_END}))",  # the digit in the value itself
        lowercase=True,
        keep=(1, 2, 4, 6),
        value=(3, 5, 7),
    ),
    _Rule(
        "password",
        ("pin ",),
        r"(?<![a-z0-9])(pin(?: code)?"
        + _SAID
        + r"[ \t]*:?[ \t]*[\"'`]?)([0-9]{4,12})(?![0-9a-z]|\.[0-9])",
        lowercase=True,
        keep=(1,),
        value=(2,),
    ),
)
# A login written out: "admin @Gizmo99.55", "root / hunter22", "login admin: s3cret!" (a router's, a
# server's). The value needs a letter and a digit (so "root 10.0.0.1" and "admin panel" stay) and a blank
# or ':' / '/' before it (so "ssh root@db1" stays).
_LOGIN = _Rule(
    "password",
    ("admin", "root"),
    r"(?<![a-z0-9_\-])((?:admin|root)(?:[ \t]*[:/][ \t]*|[ \t]+@?[ \t]*))"
    r"(?=[^\s\"'`,;)}\]]{0,80}[0-9])(?=[^\s\"'`,;)}\]]{0,80}[a-z])"
    r"([^\s\"'`,;)}\]]{5,}[^\s\"'`,;)}\].!?:])",
    lowercase=True,
    keep=(1,),
    value=(2,),
)
_SAFE_VALUE = LazyRegex(
    r"(?i)^(?:none|null|nil|true|false|undefined|\*+|x+|\.\.\.|<.*|\[redacted.*|\$.*|os\..*"
    r"|process\..*|env\..*|.*\(.*)$"
)
# "the token is `GITHUB_TOKEN`": a name, not a value
_ENV_NAME = LazyRegex(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")

# A bare 40-character AWS secret is redacted only beside an access key id:
# alone, such a string is as likely a hash or an id.
_AWS_SECRET_BARE = _Rule(
    "aws-secret-key",
    (),
    rf"(?<![{_B64}])(?=[{_B64}]*[a-z])(?=[{_B64}]*[A-Z])(?=[{_B64}]*[0-9/+])"
    rf"[{_B64}]{{40}}(?![{_B64}=])",
)


def _apply(rule: _Rule, text: str, found: dict[str, int], removed: list[str] | None = None) -> str:
    subject = text
    pattern: re.Pattern
    if rule.lowercase:
        subject = text.lower()
        if len(subject) != len(text):  # rare Unicode whose lowercase has another length
            import re

            subject, pattern = text, re.compile(rule.regex.pattern, IGNORECASE | rule.regex.flags)
        else:
            pattern = rule.regex.rx
    else:
        pattern = rule.regex.rx
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(subject):
        start, end = _secret_span(rule, m)
        if rule.value and _placeholder(text[start:end]):
            continue
        found[rule.kind] = found.get(rule.kind, 0) + 1
        if removed is not None:
            removed.append(text[start:end])
        kept = "".join(text[m.start(g) : m.end(g)] for g in rule.keep)
        out.append(text[pos : m.start()])
        out.append(f"{kept}{marker(rule.kind)}{rule.after}")
        pos = m.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _secret_span(rule: _Rule, m: re.Match) -> tuple[int, int]:
    """Where the secret itself is in a match: its value group, else what the kept groups leave."""
    for g in rule.value:
        if m.start(g) >= 0:
            return m.span(g)
    start = max((m.end(g) for g in rule.keep), default=m.start())
    return max(start, m.start()), m.end() - len(rule.after)


def _placeholder(value: str) -> bool:
    return bool(_SAFE_VALUE.match(value) or _ENV_NAME.match(value))


def redact(text: str, removed: list[str] | None = None) -> tuple[str, dict[str, int]]:
    """Return `text` with every secret replaced, and how many of each kind went (only kinds found).
    A dict, not a Counter: collections is no import of the hook's.
    `removed`, when given, receives each secret's text (to find its traces elsewhere, e.g. a tag)."""
    found: dict[str, int] = {}
    if not text:
        return text, found
    low = text.lower()
    for rule in _RULES:
        for hint in rule.hints:  # a loop, not any(): no generator per rule on every call
            if hint in low:
                text = _apply(rule, text, found, removed)
                break
    if found.get("aws-access-key"):
        text = _apply(_AWS_SECRET_BARE, text, found, removed)
    if _may_assign(low):
        text = _apply(_ASSIGNMENT, text, found, removed)
    if "admin" in low or "root" in low:
        text = _apply(_LOGIN, text, found, removed)
    if " is" in low or " was" in low:
        for rule in _SPOKEN_RULES:
            if _said(low, rule.hints):  # each rule gated alone: a PIN's regex is rarely needed
                text = _apply(rule, text, found, removed)
    return text, found


def _said(low: str, hints: tuple[str, ...]) -> bool:
    """Whether some hint word is followed closely by "is" or "was" (as the spoken rules need):
    spares their regexes, and their compilation, for text that cannot match them."""
    for hint in hints:
        i = low.find(hint)
        while i >= 0:
            j = i + len(hint.rstrip())  # "pin " is a hint, and its blank starts " is"
            end = j + _SAID_REACH
            if low.find(" is", j, end) >= 0 or low.find(" was", j, end) >= 0:
                return True
            i = low.find(hint, j)
    return False


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")


def _may_assign(low: str) -> bool:
    """Whether some hint word is followed, past name characters, a quote and blanks, by ':' or '='.

    "token" and "key" are everywhere in technical text; this spares the
    assignment regex (and its compilation) for text that cannot match it.
    """
    n = len(low)
    for hint in _ASSIGNMENT.hints:
        i = low.find(hint)
        while i >= 0:
            j = i + len(hint)
            while j < n and low[j] in _NAME_CHARS:
                j += 1
            if j < n and low[j] in "\"'":
                j += 1
            while j < n and low[j] in " \t":
                j += 1
            if j < n and low[j] in ":=":
                return True
            i = low.find(hint, i + 1)
    return False


def redact_text(text: str) -> str:
    return redact(text)[0]


def redact_all(value):
    """`value` (text, or lists and mappings of them, as a command prints them or a record holds them) with
    every secret redacted; anything else as it is."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: redact_all(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_all(v) for v in value)
    return value


def redact_diff(diff: str, *texts: str) -> str:
    """A diff between `texts` as shown: redacted, and any line of a secret found in one of the texts too
    (a hunk may hold part of a private key without its BEGIN line)."""
    diff = redact_text(diff)
    secrets: list[str] = []
    for text in texts:
        redact(text, secrets)
    for piece in sorted(
        {p.strip() for s in secrets for p in s.splitlines()}, key=len, reverse=True
    ):
        if len(piece) >= 4:
            diff = diff.replace(piece, "[REDACTED]")
    return diff


def find_secrets(text: str) -> list[str]:
    """The kinds of secret still present in `text` (empty when it is clean)."""
    return sorted(redact(text)[1])


# -- the prescan: which of many texts to redact (memcurate check) ---------------------------------------------------------------------------------------

# What every match of a redaction rule above holds, in the text lowercased: a text
# none of these match holds no secret redaction would find, and is not redacted at all (at 10,000
# memories redacting each costs a fifth of a second; these, over all of them at once, a tenth of that).
# Each is a rule's own pattern made looser (lowercased, lookarounds and value tests dropped, shorter
# runs), so it matches wherever the rule does; each starts with a literal, which sre finds fast.
# None of them matches both a NUL and a newline: texts joined by "\0\n" never match across two.
# tests/engine/test_check_prescan.py holds each rule's samples to it.
_LOOSE_AFTER_NAME = (
    r"[a-z0-9_.\-]*[\"']?[ \t]*[:=]"  # `_ASSIGNMENT`: the name's rest, then `:` or `=`
)
# the spoken rules: "… for the staging box is", then ":", a quote, or a run that holds a digit
_LOOSE_SAID = (
    r"[a-z0-9_.\- \t]{0,80} (?:is|was)(?:[ \t]+(?:now|still|set[ \t]+to))?"
    r"(?:[ \t]*:|[ \t]+[\"'`]|[ \t]+[^\s\"'`,;)}\]]{0,80}[0-9])"
)
_LOOSE_PIN = r"in(?: code)? {1,4}(?:is|was)[ \t]*:?[ \t]*[\"'`]?[0-9]{4}"  # "the pin is 4829"
_LOOSE_LOGIN = r"(?:[ \t]*[:/][ \t]*|[ \t]+@?[ \t]*)[^\s\"'`,;)}\]]{6}"
_PRESCAN = (
    r"-----begin",  # private-key
    # sk- (anthropic-key, openai-key), sk_live_ / rk_test_ (stripe-key), key = (assignments), "the key is"
    rf"k(?:-[a-z0-9_\-]{{20}}|_(?:live|test)_[a-z0-9]{{16}}|ey{_LOOSE_AFTER_NAME}|ey{_LOOSE_SAID})",
    # aws-access-key, google-api-key, an admin login
    rf"a(?:(?:kia|sia|gpa|ida|roa|npa|nva|ipa)[a-z0-9]{{16}}|iza[0-9a-z_\-]{{35}}|dmin{_LOOSE_LOGIN})",
    rf"secret(?:(?:_?access_?key)?\"?\s*[:=]|{_LOOSE_AFTER_NAME}|{_LOOSE_SAID})",  # aws-secret-key, password
    rf"p(?:ass{_LOOSE_AFTER_NAME}|wd{_LOOSE_AFTER_NAME}|ass{_LOOSE_SAID}|{_LOOSE_PIN})",
    rf"token(?:{_LOOSE_AFTER_NAME}|{_LOOSE_SAID})",
    rf"credential{_LOOSE_AFTER_NAME}",
    r"gh[pousr]_[a-z0-9]{36}",  # github-token
    r"github_pat_[a-z0-9_]{22}",
    r"glpat-[a-z0-9_\-]{20}",  # gitlab-token
    r"xox[abposre]-",  # slack-token
    r"eyj[a-z0-9_\-]{8,}\.eyj",  # jwt
    r"bearer\s+[a-z0-9._~+/\-]{20}",  # bearer-token
    r"://[^\s:/@\[\]]+:[^\s@/\[\]]+@",  # url-credentials
    rf"root{_LOOSE_LOGIN}",
)
_LOOSE_JOIN = "\0\n"


def may_hold_secrets(texts: list[str]) -> list[int]:
    """The indexes of `texts` a redaction may find a secret in, in order: each text the prescan
    matches, and each whose lowercase is not as long as it (redaction reads such a text apart)."""
    from bisect import bisect_right

    lowered = [t.lower() for t in texts]
    found = {i for i, (t, low) in enumerate(zip(texts, lowered)) if len(low) != len(t)}
    starts = []
    at = 0
    for low in lowered:
        starts.append(at)
        at += len(low) + len(_LOOSE_JOIN)
    joined = _LOOSE_JOIN.join(lowered)
    for pattern in _prescan():
        for m in pattern.finditer(joined):
            found.add(bisect_right(starts, m.start()) - 1)
    return sorted(found)


_LOOSE_COMPILED: list[re.Pattern] = []  # compiled on first use (functools stays off the hook path)


def _prescan() -> list[re.Pattern]:
    if not _LOOSE_COMPILED:
        import re

        _LOOSE_COMPILED.extend(re.compile(p) for p in _PRESCAN)
    return _LOOSE_COMPILED
