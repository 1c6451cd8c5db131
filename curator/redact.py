"""Secret redaction (DESIGN §12): known token formats become ``[REDACTED:<kind>]``.

Runs on whole text units before they are cut into snippets, so a secret is
never split across a cut and half of it kept.
"""

from __future__ import annotations

import re
from collections import Counter

from .lazyre import LazyRegex

_B64 = r"A-Za-z0-9+/"

# (kind, lowercase substrings one of which a match must contain, pattern).
# The cheap substring test decides whether a pattern is compiled and run at all.
# Order matters: specific formats first, the generic assignment last.
_PATTERNS: list[tuple[str, tuple[str, ...], LazyRegex]] = [
    ("private-key", ("private key",), LazyRegex(
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[\sA-Za-z0-9+/=:,.\-\\]*)", re.S)),
    ("anthropic-key", ("sk-ant-",), LazyRegex(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    ("openai-key", ("sk-",), LazyRegex(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}")),
    ("aws-access-key", ("akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"),
     LazyRegex(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b")),
    ("aws-secret-key", ("secret",), LazyRegex(
        r"(?i)(?<![A-Za-z0-9])(aws_?secret_?access_?key|aws_?secret|secret_?access_?key)(\"?\s*[:=]\s*[\"']?)"
        rf"[{_B64}]{{40}}(?![{_B64}])")),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
     LazyRegex(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})")),
    ("gitlab-token", ("glpat-",), LazyRegex(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("slack-token", ("xox",), LazyRegex(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("google-api-key", ("aiza",), LazyRegex(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("stripe-key", ("_live_", "_test_"), LazyRegex(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("jwt", ("eyj",), LazyRegex(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("bearer-token", ("bearer",), LazyRegex(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/\-]{20,}=*")),
    ("url-credentials", ("://",), LazyRegex(r"\b([a-z][a-z0-9+.\-]*://[^\s:/@\[\]]+):[^\s@/\[\]]+@", re.I)),
]

_ASSIGNMENT_HINTS = ("pass", "pwd", "secret", "token", "key", "credential")
# `password=...`, `API_KEY: ...`, `"client_secret": "..."`; the value is what goes.
_ASSIGNMENT = LazyRegex(
    r"(?i)(?<![A-Za-z0-9])([A-Za-z0-9_.\-]*(?:password|passwd|passphrase|pwd|secret|token|api[_\-]?key|apikey"
    r"|access[_\-]?key|private[_\-]?key|credentials?)[A-Za-z0-9_.\-]*)"
    r"([\"']?\s*(?::|=|=>)\s*)([\"']?)([^\s\"'`,;)}\]]{4,})"
)
_SAFE_VALUE = LazyRegex(r"(?i)^(?:none|null|nil|true|false|undefined|\*+|x+|\.\.\.|<[^>]*>|\[redacted.*|\$.*|os\..*|process\..*|env\..*|.*\(.*)$")

# A bare 40-character AWS secret is redacted only beside an access key id:
# alone, such a string is as likely a hash or an id.
_AWS_SECRET_BARE = LazyRegex(rf"(?<![{_B64}])(?=[{_B64}]*[a-z])(?=[{_B64}]*[A-Z])(?=[{_B64}]*[0-9/+])[{_B64}]{{40}}(?![{_B64}=])")


def _tag(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def redact(text: str) -> tuple[str, Counter]:
    """Return `text` with every secret replaced, and how many of each kind went."""
    found: Counter = Counter()
    if not text:
        return text, found

    low = text.lower()
    for kind, hints, pat in _PATTERNS:
        if not any(h in low for h in hints):
            continue

        def sub(m: re.Match, kind=kind) -> str:
            found[kind] += 1
            if kind in ("bearer-token", "aws-secret-key"):
                return m.group(1) + (m.group(2) if kind == "aws-secret-key" else "") + _tag(kind)
            if kind == "url-credentials":
                return f"{m.group(1)}:{_tag(kind)}@"
            return _tag(kind)
        text = pat.sub(sub, text)

    if found["aws-access-key"]:
        def bare(m: re.Match) -> str:
            found["aws-secret-key"] += 1
            return _tag("aws-secret-key")
        text = _AWS_SECRET_BARE.sub(bare, text)

    def assign(m: re.Match) -> str:
        value = m.group(4)
        if _SAFE_VALUE.match(value):
            return m.group(0)
        found["password"] += 1
        return f"{m.group(1)}{m.group(2)}{m.group(3)}{_tag('password')}"

    if any(h in low for h in _ASSIGNMENT_HINTS):
        text = _ASSIGNMENT.sub(assign, text)
    return text, found


def redact_text(text: str) -> str:
    return redact(text)[0]


def find_secrets(text: str) -> list[str]:
    """The kinds of secret still present in `text` (empty when it is clean)."""
    return sorted(redact(text)[1])
