"""A candidate memory: one triggered category of one staged triage (one fact: a category's further facts have
slots of their own, "decision-2": curator/categories.py).

A Candidate owns what staging holds of it: its entry in the triage (snippets
and excerpt), its state (its lines in the triage's state log), its files (the
drafter's document, the file to be written, the review record) and its moves.
The pipeline and the review actions are short steps over candidates, taken
under their triage's claim (`StagedTriage.claim`): a lock that dies with its
holder, re-entrant in the thread holding it, which keeps out other threads
and other processes alike.

Where each file lives is `staging`'s to say; this module reads and writes
them through it.
"""

from __future__ import annotations

import hashlib

from memcurate.curator.candidates import staging
from memcurate.curator.categories import base
from memcurate.curator.util.atomic import read_json, write_json, write_text
from memcurate.curator.util.safe_open import read_text_path
from memcurate.curator.util.stamps import content_hash as text_hash  # noqa: F401 (candidate.text_hash: a draft's text)


class StagedTriage:
    """A staged triage, its document read once: the candidates of its triggered categories."""

    def __init__(self, data: str, tid: str, doc: dict | None = None) -> None:
        self.data, self.tid = data, tid
        self.doc = doc if doc is not None else staging.load_triage(data, tid)

    def candidates(self) -> dict[str, Candidate]:
        """Every triggered category with its current state (the state log read once)."""
        return {
            cat: Candidate(self, cat, rec)
            for cat, rec in staging.category_states(self.data, self.tid, self.doc).items()
        }

    def candidate(self, category: str) -> Candidate:
        """One candidate; staging.NotACategory for a category this triage did not trigger."""
        return Candidate(
            self, category, staging.category_state(self.data, self.tid, category, self.doc)
        )

    def claim(self, engine, wait: float = 0.0) -> Claim:
        return Claim(engine, self.tid, wait)


class Claim:
    """Exclusive work on one triage: re-entrant in the thread holding it; another thread of the same
    engine waits for it like another process would (LockBusy after `wait`)."""

    def __init__(self, engine, triage_id: str, wait: float = 0.0) -> None:
        self.engine, self.tid, self.wait = engine, triage_id, wait

    def __enter__(self) -> Claim:
        self.lock = self.engine.enter_claim(
            self.tid, staging.claim_path(self.engine.data, self.tid)
        )
        try:
            self.lock.acquire(self.wait)
        except BaseException:
            self.engine.leave_claim(self.tid)
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.lock.release()
        finally:
            self.engine.leave_claim(self.tid)


class Candidate:
    """One slot of a staged triage (a category's fact), with its state record as last read or moved. `name` is
    the slot ("decision", "decision-2"): what names its files, its state lines and its rows; `category` the
    category it is of."""

    __slots__ = ("triage", "name", "record")

    def __init__(self, triage: StagedTriage, name: str, record: dict) -> None:
        self.triage, self.name, self.record = triage, name, record

    def __repr__(self) -> str:
        return f"Candidate({self.tid}/{self.name}: {self.state})"

    @property
    def category(self) -> str:
        return base(self.name)

    @property
    def tid(self) -> str:
        return self.triage.tid

    @property
    def key(self) -> tuple[str, str]:
        return (self.triage.tid, self.name)

    @property
    def state(self) -> str:
        return self.record["state"]

    @property
    def entry(self) -> dict:
        """What triage (or the second look) found for this slot: score, threshold, snippets, excerpt, look."""
        return self.triage.doc["categories"][self.name]

    @property
    def files(self) -> staging.CandidateFiles:
        return staging.candidate_files(self.triage.data, self.tid, self.name)

    def fingerprint(self) -> str:
        """What the candidate was drafted from: once rejected, it is not proposed again from it (whatever its slot)."""
        entry = self.entry
        parts = (
            [self.category]
            + [s.get("text", "") for s in entry.get("snippets", [])]
            + [entry.get("excerpt", "")]
        )
        return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()

    def evidence(self) -> str:
        """The transcript text a draft's claims are checked against."""
        entry = self.entry
        return "\n".join(
            [entry.get("excerpt", "")] + [s.get("text", "") for s in entry.get("snippets", [])]
        )

    # -- moves ---------------------------------------------------------------------

    def move(self, state: str, **extra) -> dict:
        """Move to `state` (StagingError when the life cycle forbids it), keeping the record's fields."""
        self.record = staging.set_state(
            self.triage.data,
            self.tid,
            self.name,
            state,
            doc=self.triage.doc,
            current=self.record,
            **extra,
        )
        return self.record

    # -- files ---------------------------------------------------------------------

    def write_draft(self, text: str) -> None:
        """Keep the drafter's own document: deciding again starts from it."""
        write_text(self.files.draft, text)

    def write_review(self, text: str, record: dict) -> None:
        """The file to be written (what the person reviews and edits) and its review record."""
        files = self.files
        write_text(files.file, text)
        write_json(files.review, record)

    def issues(self) -> list[dict]:
        """The issues its last verification found: the review record alone, cheaper than `review`."""
        try:
            issues = read_json(self.files.review)["issues"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise staging.StagingError(f"{self.tid}/{self.name}: review unreadable ({e})") from None
        return issues

    def review(self) -> dict:
        """The review record, with `text` (the file to be written) and `draft` (the drafter's document)."""
        return read_review(self.triage.data, self.tid, self.name)


def read_review(data: str, tid: str, category: str) -> dict:
    """A candidate's review record with its `text` and `draft`, read from its files alone (no triage
    document: a selection in the TUI reads just these)."""
    files = staging.candidate_files(data, tid, category)
    try:
        review = read_json(files.review)
        review["text"] = read_text_path(files.file)
        review["draft"] = read_text_path(files.draft)
    except (OSError, ValueError) as e:
        raise staging.StagingError(f"{tid}/{category}: review files unreadable ({e})") from None
    return review
