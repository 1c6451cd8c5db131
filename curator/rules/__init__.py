"""Rule graduation (docs/design.md §11): a failure that recurs across sessions becomes a rule Claude loads.

The flow, one module per step:

    capture    the PostToolUse hook (hooks/failures.py) and the transcript triage see a failed
               test, lint, type check, build or command
    signature  signature.py: the output → `Failure`s with a normalised signature (normalise.py
               strips what changes between sessions; parsers/ reads each tool's output)
    ledger     ledger.py: one occurrence per signature per session, a file per record call, counted
               in the data dir
    candidate  candidates.py: at the threshold, a graduation candidate waits for review
    draft      draft.py: the rule text, its topic and `paths:` globs (offline or by Claude)
    rule file  rulefile.py: approving writes `.claude/rules/memcurate/<topic>.md`
"""
