"""What waits for review, whatever its kind: one item shape, its ids, and how an id given on the
command line finds its item.

A kind (a drafted memory, a staged write of Claude's own, a rule candidate) is a small object that
lists its items and acts on them through the Engine (the `Kind` protocol below); the registry of
kinds is curator/review/kinds.py. Ids are unique across kinds: a memory's is `<triage id>/<category>`
(a triage id starts with its time, digits), the others carry their kind's prefix (`claude/`, `rule/`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Protocol

from memcurate.curator.errors import Refusal

READY = "ready"
# A record that cannot be read or does not check out (a forged target, a rule the ledger does not back, a
# proposal leaving the memory root): listed with why (`error`), never shown as a change nor acted on.
ERROR = "error"
# Kinds' names (ReviewItem.kind) a front end names without importing the kind (the TUI's start: rows by kind)
CLAUDE_WRITE, RULE = "claude-write", "rule"
# shown by `list --all` only; an id of one is never acted on
FINAL = (
    "saved",
    "rejected",
    "skipped",
)


@dataclass(frozen=True)
class ReviewItem:
    id: str
    kind: str  # memory | claude-write | rule
    state: str  # the kind's state: `ready` is what a person approves; FINAL ones are done
    category: str = ""
    title: str = ""
    action: str = ""  # create | update | noop | delete, when known
    confidence: float | None = None
    issues: tuple[dict, ...] = ()  # {severity, code, where, message}
    blocked: bool = False
    where: str = ""  # the file it would write (or wrote), relative to the memory root
    session: str = ""
    created: str = ""
    error: str = ""  # why it failed, or why it cannot be read
    reason: str = ""  # why it was rejected or skipped
    # a rule candidate's count, kind, signature, paths, topic, file (kind `rule` only)
    rule: dict | None = None

    @property
    def approvable(self) -> bool:
        return self.state == READY and not self.blocked

    @property
    def final(self) -> bool:
        return self.state in FINAL

    def as_dict(self) -> dict:
        doc = asdict(self)
        doc["issues"] = list(self.issues)
        if self.rule is None:
            del doc["rule"]
        return doc


@dataclass
class Outcome:
    """What an approval or a rejection did to one item: done, or refused with the reason."""

    id: str
    done: bool
    action: str = ""  # for an approval: what was saved (create, update, noop, delete)
    path: str = ""  # the file written (absolute), "" for a noop or a rejection
    where: str = ""  # the same, relative to the memory root
    error: str = ""
    # category -> ids moved to the archive
    archived: dict[str, list[str]] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def attempt(item: ReviewItem, act, errors: tuple[type[BaseException], ...]) -> Outcome:
    """`act(item)` (an approval or a rejection through the Engine, returning the item's Outcome), or the
    item refused with the reason when it raises one of `errors`."""
    try:
        return act(item)
    except errors as e:
        return Outcome(item.id, False, error=str(e) or e.__class__.__name__)


class Kind(Protocol):
    """One kind of item waiting for review. Every action goes through the Engine's own methods (the
    calls the TUI makes), never around them."""

    name: str
    rejectable: frozenset[str]  # the states from which an item of this kind may be rejected

    def items(self, engine, every: bool) -> list[ReviewItem]:
        """The kind's items: those waiting (ready or not yet), and with `every` the FINAL ones too."""

    def show(self, engine, item: ReviewItem) -> dict:
        """What approving it would write: {text, decision, diff, confidence, archive}."""

    def approve(self, engine, items: list[ReviewItem]) -> list[Outcome]:
        """Approve approvable items; a refusal at save time is an Outcome with its error."""

    def reject(self, engine, item: ReviewItem, reason: str) -> Outcome: ...


class Unresolved(Refusal):
    """The ids given do not all name an item that can be acted on: one line per problem."""

    def __init__(self, problems: list[dict]) -> None:
        self.problems = problems  # {id, error}
        super().__init__("; ".join(p["error"] for p in problems))


def find(query: str, items: list[ReviewItem]) -> ReviewItem:
    """The item `query` names: its full id, or a prefix of exactly one id. A prefix matching waiting
    items and done ones means the waiting one (a done item is never acted on again). LookupError
    with the reason otherwise."""
    exact = [i for i in items if i.id == query]
    if exact:
        return exact[0]
    matches = [i for i in items if query and i.id.startswith(query)]
    waiting = [i for i in matches if not i.final]
    matches = waiting or matches
    if not matches:
        raise LookupError(f"{query}: no such item (see memcurate list --all)")
    if len(matches) > 1:
        ids = ", ".join(i.id for i in matches[:10]) + (", …" if len(matches) > 10 else "")
        raise LookupError(f"{query}: ambiguous, it begins {len(matches)} ids: {ids}")
    return matches[0]


def resolve(queries: list[str], items: list[ReviewItem], allowed) -> list[ReviewItem]:
    """Every item `queries` name, each checked by `allowed(item)` (None when it may be acted on, else
    why not). Unresolved when any query fails: then nothing is to be done."""
    found: list[ReviewItem] = []
    problems: list[dict] = []
    for q in queries:
        try:
            item = find(q, items)
        except LookupError as e:
            problems.append({"id": q, "error": str(e)})
            continue
        why = allowed(item)
        if why:
            problems.append({"id": q, "error": f"{item.id}: {why}"})
        elif item not in found:
            found.append(item)
    if problems:
        raise Unresolved(problems)
    return found


def why_not_approvable(item: ReviewItem) -> str | None:
    if item.approvable:
        return None
    if item.state == READY:
        return "BLOCKed: it cannot be approved until edited (memcurate, the TUI) or rejected"
    if item.final:
        return f"already {item.state}"
    if item.state == "triaged":
        return "triaged, not drafted yet (memcurate list --draft drafts it)"
    if item.state == ERROR:
        return damaged(item)
    return f"{item.state}, not ready" + (f" ({item.error})" if item.error else "")


def damaged(item: ReviewItem) -> str:
    """Why an item in state `error` (its record cannot be read, or does not check out) is never acted on."""
    return "cannot be read or does not check out, never acted on" + (
        f": {item.error}" if item.error else ""
    )
