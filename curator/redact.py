"""Secret redaction (DESIGN §12): known token formats become ``[REDACTED:<kind>]``.

Runs on whole text units before they are cut into snippets, so a secret is
never split across a cut and half of it kept.
"""

from __future__ import annotations

import re
from collections import Counter

from .lazyre import LazyRegex

_B64 = r"A-Za-z0-9+/"

def _tag(kind: str) -> str:
    return f"[REDACTED:{kind}]"


class _Rule:
    """One secret format.

    `hints`: lowercase substrings one of which every match contains; a cheap
    test that decides whether the regex is compiled and run at all.
    `lowercase`: the regex is written for lowercased text and runs on it
    (sre is several times slower with IGNORECASE); its spans are applied to
    the original text. `keep`: groups kept in front of the tag, and `after`
    text put behind it.
    """

    __slots__ = ("kind", "hints", "regex", "lowercase", "keep", "after")

    def __init__(self, kind: str, hints: tuple[str, ...], pattern: str, *, flags: int = 0, lowercase: bool = False,
                 keep: tuple[int, ...] = (), after: str = "") -> None:
        self.kind, self.hints, self.lowercase, self.keep, self.after = kind, hints, lowercase, keep, after
        self.regex = LazyRegex(pattern, flags)


# Order matters: specific formats first, the generic assignment last.
_RULES: list[_Rule] = [
    _Rule("private-key", ("private key",),
          r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
          r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[\sA-Za-z0-9+/=:,.\-\\]*)", flags=re.S),
    _Rule("anthropic-key", ("sk-ant-",), r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    _Rule("openai-key", ("sk-",), r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    _Rule("aws-access-key", ("akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"),
          r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"),
    _Rule("aws-secret-key", ("secret",),
          r"(?<![a-z0-9])(aws_?secret_?access_?key|aws_?secret|secret_?access_?key)(\"?\s*[:=]\s*[\"']?)"
          r"[a-z0-9+/]{40}(?![a-z0-9+/])", lowercase=True, keep=(1, 2)),
    _Rule("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
          r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"),
    _Rule("gitlab-token", ("glpat-",), r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    _Rule("slack-token", ("xox",), r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    _Rule("google-api-key", ("aiza",), r"\bAIza[0-9A-Za-z_\-]{35}"),
    _Rule("stripe-key", ("_live_", "_test_"), r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    _Rule("jwt", ("eyj",), r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    _Rule("bearer-token", ("bearer",), r"\b(bearer\s+)[a-z0-9._~+/\-]{20,}=*", lowercase=True, keep=(1,)),
    _Rule("url-credentials", ("://",), r"\b([a-z][a-z0-9+.\-]*://[^\s:/@\[\]]+:)[^\s@/\[\]]+@",
          lowercase=True, keep=(1,), after="@"),
]

# `password=...`, `API_KEY: ...`, `"client_secret": "..."`; the value (group 4) is what goes.
# The match starts at the secret-ish word: "DB_PASSWORD=x" matches from "password".
_ASSIGNMENT = _Rule(
    "password", ("pass", "pwd", "secret", "token", "key", "credential"),
    r"((?:password|passwd|passphrase|pwd|secret|token|api[_\-]?key|apikey"
    r"|access[_\-]?key|private[_\-]?key|credentials?)[a-z0-9_.\-]*)"
    r"([\"']?[ \t]*(?::|=|=>)[ \t]*)([\"']?)([^\s\"'`,;)}\]]{4,})", lowercase=True, keep=(1, 2, 3))
_SAFE_VALUE = LazyRegex(r"(?i)^(?:none|null|nil|true|false|undefined|\*+|x+|\.\.\.|<[^>]*>|\[redacted.*|\$.*|os\..*"
                        r"|process\..*|env\..*|.*\(.*)$")

# A bare 40-character AWS secret is redacted only beside an access key id:
# alone, such a string is as likely a hash or an id.
_AWS_SECRET_BARE = _Rule("aws-secret-key", (), rf"(?<![{_B64}])(?=[{_B64}]*[a-z])(?=[{_B64}]*[A-Z])(?=[{_B64}]*[0-9/+])"
                         rf"[{_B64}]{{40}}(?![{_B64}=])")


def _apply(rule: _Rule, text: str, found: Counter) -> str:
    subject = text
    if rule.lowercase:
        subject = text.lower()
        if len(subject) != len(text):  # rare Unicode whose lowercase has another length
            subject, pattern = text, re.compile(rule.regex.pattern, re.I | rule.regex.flags)
        else:
            pattern = rule.regex.rx
    else:
        pattern = rule.regex.rx
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(subject):
        if rule is _ASSIGNMENT and _SAFE_VALUE.match(text[m.start(4):m.end(4)]):
            continue
        found[rule.kind] += 1
        kept = "".join(text[m.start(g):m.end(g)] for g in rule.keep)
        out.append(text[pos:m.start()])
        out.append(f"{kept}{_tag(rule.kind)}{rule.after}")
        pos = m.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def redact(text: str) -> tuple[str, Counter]:
    """Return `text` with every secret replaced, and how many of each kind went."""
    found: Counter = Counter()
    if not text:
        return text, found
    low = text.lower()
    for rule in _RULES:
        if any(h in low for h in rule.hints):
            text = _apply(rule, text, found)
    if found["aws-access-key"]:
        text = _apply(_AWS_SECRET_BARE, text, found)
    if _may_assign(low):
        text = _apply(_ASSIGNMENT, text, found)
    return text, found


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


def find_secrets(text: str) -> list[str]:
    """The kinds of secret still present in `text` (empty when it is clean)."""
    return sorted(redact(text)[1])
