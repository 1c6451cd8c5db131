"""The offline drafter (docs/design.md §10): a complete memory file from the triage's evidence alone.

No network, no key, no model: it reads the category's scored snippets and the
excerpt around them (already redacted), picks the strongest statement, and
fills every section of the category (docs/design.md §6) with sentences taken from the
session, whole, in the speakers' own words. It does not invent: a section for
which the session holds no evidence says so, and quotes what it has.

Its modules, in the order a draft uses them:

- text.py: segments and sentences of transcript text, cleaned, cut, cased;
- statements.py: what kind of statement a sentence is (narration, a request,
  a reason, fluff, pasted code...) and its reason clause;
- evidence.py: the excerpt and snippets as sentences in transcript order;
- choosing.py: the main statement and the sentences that support it;
- recipes/: one recipe per category, filling its sections;
- titles.py and tags.py: the title, the MEMORY.md description, the tags.

Everything is a pure function of the request: the same request gives the same
bytes, and drafting from many threads at once is safe.

The package itself loads nothing: `sentences` and the other text helpers are
imported by the hygiene checks, which must not pay for the whole drafter.
"""

from __future__ import annotations

import importlib

# name -> the module (of this package) that defines it: loaded on first use
_LAZY = {
    "NOT_STATED": "choosing",
    "NO_NEXT_STEP": "recipes.session_summary",
    "SCAFFOLD": "tags",
    "TOPIC_TITLE_WEAK": "finishing",
    "OfflineDrafter": "drafter",
    "sentences": "text",
}
__all__ = sorted(_LAZY)  # what the tests and the drafting package use


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
