"""Reviewable proposals: changes to existing memories found by a check, tidy or the library, applied
only when a person approves (store.py: the records; adopt.py: a Claude memory made memcurate's; the
review kind is curator/review/proposal_kind.py; the changes themselves are curator/library/changes.py)."""
