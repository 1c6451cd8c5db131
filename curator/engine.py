"""The engine of one project: the one API its front ends call, over the project's Context
(curator/context.py: config, data dir, memory root, store, index, drafter, clock, locks).

The TUI, `--auto-approve` and the CLI build an Engine and call its methods
(process a triage, read a review, approve, edit, reject, retry, change the
action, budgets); they never reach into the pipeline or the review steps.
Tests build it with a tmp project and fakes (`drafter=`, `clock=`).
"""

from __future__ import annotations

import os

from memcurate.curator.candidates import cards, pipeline, staging
from memcurate.curator.candidates.candidate import Claim, StagedTriage, read_review
from memcurate.curator.context import REJECTED, WRITTEN, Context  # noqa: F401 (the record names, re-exported)
from memcurate.curator.memory import memory_md
from memcurate.curator.review import actions
from memcurate.curator.util.atomic import sweep_temps
from memcurate.curator.util.paths import ARCHIVE_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memcurate.curator.drafting import DraftingStatus
    from memcurate.curator.library.entries import Opened


class Engine(Context):
    """The verbs front ends call, over one project's Context."""

    def __init__(self, project, *, cfg: dict | None = None, drafter=None, clock=None) -> None:
        super().__init__(project, cfg=cfg, drafter=drafter, clock=clock)
        self._forget_failures()

    def _forget_failures(self) -> None:
        """Once per start: forget the failure signatures no session saw for `rules.forget_after_days`
        (never one with a candidate). Cheap: a listing and a stat per signature when nothing is old;
        a failure is only logged."""
        from memcurate.curator.rules import ledger
        from memcurate.curator.util.log import log_line

        days = self.settings.rules.forget_after_days
        try:
            if os.path.isdir(os.path.join(self.data, ledger.FAILURES_DIR)):
                ledger.prune(self.data, days)
        except OSError as e:
            log_line(self.data, "engine", f"forgetting old failure signatures failed: {e}")

    def _new_drafter(self):
        from memcurate.curator.drafting import get_drafter

        return get_drafter(self.cfg)

    # -- the work: what front ends call ----------------------------------------------

    def pending(self, unreadable: list | None = None) -> list[str]:
        """Triages with a candidate not yet saved or rejected, those with a second look due first, each part
        oldest first; `unreadable`, when given,
        gains (triage id, why) for each triage that cannot be read."""
        return pipeline.pending_triages(self.data, unreadable)

    @property
    def staging_dir(self) -> str:
        """Where staged triages appear (what a front end watches)."""
        return staging.staging_dir(self.data)

    def board(self):
        """The candidates waiting for a person, read from staging (one file per triage)."""
        from memcurate.curator.candidates.queue import Board

        return Board(self.data)

    def candidates(self, tid: str) -> dict:
        """category -> Candidate of one staged triage (StagingError when it cannot be read)."""
        return StagedTriage(self.data, tid).candidates()

    def claim(self, tid: str, wait: float = 0.0):
        """Exclusive work on a triage, as a context manager (LockBusy when another holds it)."""
        return Claim(self, tid, wait)

    def process(self, tid: str, *, only: list[str] | None = None, on_event=None) -> dict[str, str]:
        """Draft, verify and decide what a triage needs; category -> state. LockBusy when held elsewhere."""
        return pipeline.process(self, tid, only=only, on_event=on_event)

    def review(self, tid: str, cat: str) -> dict:
        """A ready candidate's review record, with `text` (the file to be written) and `draft`; `card` says
        whether it is an offline evidence card no person has written yet (curator/candidates/cards.py)."""
        return cards.marked(read_review(self.data, tid, cat))

    def card_evidence(self, tid: str, cat: str) -> dict:
        """What an offline draft was made from, for the person who writes it: the suggested category, the
        session lines, for a runbook each failing command and its fix (reads the transcript for that)."""
        cand = StagedTriage(self.data, tid).candidate(cat)
        return cards.evidence(
            cand.entry, cand.category, cand.triage.doc.get("source") or {}, self.cfg
        )

    def budgets(self) -> memory_md.Budgets:
        """MEMORY.md's sections against their budgets (MemoryMdError when it is damaged)."""
        return memory_md.usage(self.root, self.cfg)

    def approve(self, tid: str, cat: str, text: str | None = None, seen: str | None = None):
        """`seen`: the text_hash of the draft the person was shown (actions.approve): a changed one is refused."""
        return actions.approve(self, tid, cat, text, seen)

    def approve_all(self, tid: str, cats):
        return actions.approve_all(self, tid, cats)

    def resume(self, tid: str):
        return actions.resume(self, tid)

    def edit(self, tid: str, cat: str, text: str) -> dict:
        return actions.edit(self, tid, cat, text)

    def reject(self, tid: str, cat: str, reason: str = "") -> None:
        actions.reject(self, tid, cat, reason)

    def retry(self, tid: str, cat: str, *, on_event=None) -> dict:
        return actions.retry(self, tid, cat, on_event=on_event)

    def change_action(self, tid: str, cat: str, action: str, target: str | None = None) -> dict:
        return actions.change_action(self, tid, cat, action, target)

    def redecide(self, tid: str, cat: str) -> dict:
        return actions.redecide(self, tid, cat)

    # -- review: the items of every kind (curator/review/kinds.py), the front ends' one path --------

    def review_kinds(self) -> tuple:
        """The registered kinds (items.Kind): a front end lists, shows and acts through the verbs below."""
        from memcurate.curator.review import kinds

        return kinds.KINDS

    def review_folders(self) -> dict[str, str]:
        """Every kind's folder -> its name: what a front end watches to list a kind's items again."""
        from memcurate.curator.review import kinds

        return kinds.folders_of(self)

    def review_items(self, every: bool = False, kind: str | None = None) -> list:
        """What waits for review, of every kind or of `kind` (with `every`, what is done too): ReviewItems."""
        from memcurate.curator.review import kinds

        return kinds.items(self, every, kind)

    def find_items(self, queries: list[str], action: str = "") -> list:
        """The items `queries` name (ids or unique prefixes), all or none (items.Unresolved), each one
        `action` (items.APPROVE, REJECT; "": show) may act on."""
        from memcurate.curator.review import kinds

        return kinds.find(self, queries, action)

    def detail(self, item):
        """What approving `item` would write as the person sees it (items.Detail, with its fingerprint)."""
        from memcurate.curator.review import kinds

        return kinds.detail(self, item)

    def approve_items(self, items: list, seen: dict[str, str] | None = None) -> list:
        """Approve `items`; `seen`: id -> the Detail.fingerprint shown (changed since: refused). Outcomes."""
        from memcurate.curator.review import kinds

        return kinds.approve(self, items, seen)

    def reject_items(self, items: list, reason: str = "") -> list:
        """Reject `items`; Outcomes, one per item."""
        from memcurate.curator.review import kinds

        return kinds.reject(self, items, reason)

    def edit_item(self, item, value):
        """The person's edit of `item` (Detail.editor: its text, or its kind's fields), verified again."""
        from memcurate.curator.review import kinds

        return kinds.edit(self, item, value)

    def why_not(self, action: str, item, detail=None) -> str | None:
        """Why `action` (items.APPROVE, EDIT...) does not apply to `item`'s kind; None when it does."""
        from memcurate.curator.review import kinds

        return kinds.why_not(action, item, detail)

    def draft_pending(self, kind: str | None = None) -> dict:
        """Draft what waits to be drafted (of every kind, or of `kind`), saving nothing:
        {drafted, busy, failed}."""
        from memcurate.curator.review import kinds

        return kinds.draft(self, kind)

    # -- hygiene: what is wrong with the memory already saved (curator/hygiene) ------------

    def check(self, stage: bool = True, summary: dict | None = None) -> list:
        """Every hygiene finding (most severe first), each staged as a proposal when `stage`; nothing
        under the memory root changes. Cached for `flags`."""
        from memcurate.curator.hygiene import check

        return check.run(self, stage=stage, summary=summary)

    def tidy(self, notes: list | None = None) -> list[str]:
        """Stage a merge proposal per group of near-duplicate memories and an archive proposal per
        contradicted one; the ids staged now (none when nothing changed since). `notes` gains what is
        left to the person (Claude's own files: adopt them to merge)."""
        from memcurate.curator.hygiene import tidy

        return tidy.tidy(self, notes=notes)

    def flags(self) -> dict:
        """ref -> the last check's Findings about it (the library's flag column)."""
        from memcurate.curator.hygiene import check

        return check.flags(self.data)

    def memory_md_view(self):
        """MEMORY.md as Claude Code loads it (memory_md.LoadView): each line's owner, the cut, budgets."""
        from memcurate.curator.hygiene.memory_md_checks import read_view

        return read_view(self)[1]

    # -- proposals: changes to existing memories, applied when approved (proposal/<id>) ------

    def stage_proposal(
        self,
        kind: str,
        title: str,
        reason: str,
        ops: list[dict],
        *,
        source: str,
        finding: dict | None = None,
    ) -> str | None:
        """Stage a proposal of change `ops` (curator/library/changes.py); its id, None when the same kind,
        refs and base hashes are already proposed (pending, approved or rejected). ProposalError when invalid."""
        from memcurate.curator.proposals import store

        return store.stage(self.data, kind, title, reason, ops, source=source, finding=finding)

    def proposals(self, every: bool = False) -> list[dict]:
        """The pending proposal records (with `every`, the decided ones too), oldest first; damaged ones
        are review items of kind `proposal` in state `error`."""
        from memcurate.curator.proposals import store

        return [r for r in store.scan(self.data)[0] if every or r["state"] == store.PENDING]

    def adopt(self, ref: str) -> str:
        """Stage an adopt proposal making one of Claude's memories (a topic file, a MEMORY.md line) a
        memcurate memory; its id (the pending one when the same adoption is already proposed)."""
        from memcurate.curator.proposals import adopt

        return adopt.adopt(self, ref)

    # -- the library: every memory, memcurate's and Claude's own (curator/library) -----------

    def library(self) -> list:
        """Every memory as a library Entry: memcurate's (archived too, from the index), Claude's topic
        files and Claude's lines of MEMORY.md."""
        from memcurate.curator.library import catalog

        return catalog.entries(self)

    def library_entry(self, ref: str) -> Opened:
        """The memory `ref` names, read now (entry, text, hash); LibraryError when it is gone."""
        from memcurate.curator.library import catalog

        return catalog.entry(self, ref)

    def library_search(self, query: str, limit: int = 500) -> list[str]:
        """Refs of the memories matching `query` as it is typed (the last word a prefix), best first;
        an empty query: every ref."""
        from memcurate.curator.library import search

        return search.search(self, query, limit)

    # -- the library's changes: change sets of ops (curator/library/changes.py) -------------

    def plan_changes(self, ops):
        """What the ops would do (changes.Planned: files with before, after and diff; errors; fingerprint)."""
        from memcurate.curator.library import changes

        return changes.plan(self, ops)

    def apply_changes(self, ops, fingerprint: str | None = None):
        """Carry the ops out (changes.Applied); ChangeError when in error, or not what `fingerprint` showed."""
        from memcurate.curator.library import changes

        return changes.apply(self, ops, fingerprint)

    def edit_memory(self, ref: str, text: str, base_hash: str) -> dict:
        """A person's edit of a memory, verified again (ChangeError with the BLOCK issues, or changed since)."""
        from memcurate.curator.library import edits

        return edits.edit(self, ref, text, base_hash)

    # -- parts ------------------------------------------------------------------------

    def drafting_status(self) -> DraftingStatus:
        """Which backend and models draft here, and why, with warnings for deprecated model ids
        (curator.drafting.describe: builds no drafter, imports no SDK). It describes the config's
        choice: a drafter handed to the engine (tests) is not looked at."""
        from memcurate.curator.drafting import describe

        return describe(self.cfg)

    def sweep_temps(self) -> int:
        """Remove what killed writers left: half-assembled triages, and temp files in the memory root and
        the data dir; returns how many."""
        from memcurate.curator.categories import CATEGORIES

        folders = [
            self.root,
            os.path.join(self.root, ARCHIVE_DIR),
            self.data,
            os.path.join(self.data, "offsets"),
        ]
        folders += [
            os.path.join(self.root, *parts, c) for c in CATEGORIES for parts in ((), (ARCHIVE_DIR,))
        ]
        return staging.clean_incoming(self.data) + sum(sweep_temps(f) for f in folders)

    def sweep_triage(self, tid: str) -> int:
        """Remove the temp files killed writers left in a triage's folders (call it under the claim)."""
        return staging.sweep_triage_temps(self.data, tid)
