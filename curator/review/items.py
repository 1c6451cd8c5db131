"""What waits for review, whatever its kind: one item shape, its ids, and how an id given on the
command line finds its item.

A kind (a drafted memory, a staged write of Claude's own, a rule candidate, a proposal) is a small
object that lists its items, shows one as a Detail and acts on them over the project's Context (the
`Kind` protocol below): the only way either front end acts on a reviewable thing, through the
Engine's generic verbs. The registry of kinds is curator/review/kinds.py. Ids are unique across kinds: a memory's is `<triage id>/<category>`
(a triage id starts with its time, digits), the others carry their kind's prefix (`claude/`, `rule/`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Protocol

from memcurate.curator.errors import Refusal

# the names it speaks in (their home: names.py), as the kinds and front ends import them from here
from memcurate.curator.review.names import APPROVE as APPROVE
from memcurate.curator.review.names import CHANGE as CHANGE
from memcurate.curator.review.names import CLAUDE_WRITE as CLAUDE_WRITE
from memcurate.curator.review.names import EDIT as EDIT
from memcurate.curator.review.names import EDIT_TEXT as EDIT_TEXT
from memcurate.curator.review.names import ERROR as ERROR
from memcurate.curator.review.names import EVIDENCE_SESSIONS as EVIDENCE_SESSIONS
from memcurate.curator.review.names import FIELDS as FIELDS
from memcurate.curator.review.names import FINAL as FINAL
from memcurate.curator.review.names import MEMORY as MEMORY
from memcurate.curator.review.names import READY as READY
from memcurate.curator.review.names import REJECT as REJECT
from memcurate.curator.review.names import RETRY as RETRY
from memcurate.curator.review.names import RULE as RULE
from memcurate.curator.review.names import TEXT as TEXT
from memcurate.curator.util.atomic import failure

if TYPE_CHECKING:  # the context is handed in; importing it is for the type only
    from memcurate.curator.context import Context


@dataclass(frozen=True)
class ReviewItem:
    id: str
    kind: str  # the kind's name: memory | claude-write | rule | proposal
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
    """What an approval, a rejection or an edit did to one item: done, or refused with the reason."""

    id: str
    done: bool
    action: str = ""  # for an approval: what was saved (create, update, noop, delete)
    path: str = ""  # the file written (absolute), "" for a noop or a rejection
    where: str = ""  # the same, relative to the memory root
    error: str = ""
    # category -> ids moved to the archive
    archived: dict[str, list[str]] = field(default_factory=dict)
    # what a front end tells the person it did ("saved Claude's write: build.md"); not in as_dict
    said: str = ""
    # refused only because another process holds it: a try again later, not a fault
    busy: bool = False
    # the system refused a write (a full disk, no permission): a fault, where a refusal is a decision
    failed: bool = False

    def as_dict(self) -> dict:
        doc = asdict(self)
        del doc["said"], doc["busy"], doc["failed"]
        return doc


def attempt(
    item: ReviewItem,
    act,
    errors: tuple[type[BaseException], ...],
    busy: tuple[type[BaseException], ...] = (),
) -> Outcome:
    """`act(item)` (an action of the item's kind, returning its Outcome), or the item refused with the
    reason when it raises one of `errors` (`busy` ones: held by another process; an OSError: the
    system refused a write, said with the file and the OS's reason)."""
    try:
        return act(item)
    except errors as e:
        if isinstance(e, busy):
            return Outcome(item.id, False, error=str(e) or e.__class__.__name__, busy=True)
        if isinstance(e, OSError):
            return Outcome(item.id, False, error=failure(e), failed=True)
        return Outcome(item.id, False, error=str(e) or e.__class__.__name__)


@dataclass(frozen=True)
class Detail:
    """One item as the person reviews it, whatever its kind: what approving it would write (`text`, the
    `diff`, the `decision`), its issues, and the `fingerprint` of all that: an approval passes the one
    it was shown, and one whose item changed since is refused with nothing written."""

    item: ReviewItem
    # what approving writes, the one text `e` edits; None when it writes no single text
    text: str | None
    fingerprint: str
    # action, target, reasons (a memory's: its whole decision record)
    decision: dict = field(default_factory=dict)
    diff: str = ""
    issues: tuple[dict, ...] = ()
    confidence: dict = field(default_factory=dict)
    # category -> ids approving moves from MEMORY.md to the archive
    archive: dict = field(default_factory=dict)
    note: str = ""  # what could not be read beside it (a damaged MEMORY.md), said
    editor: str = ""  # TEXT, FIELDS, or "" (nothing to edit)
    # an edited title renames the file it creates (a new memory's name is its title's slug)
    renames: bool = False
    # the kind's own view of it, for its presenter (a rule's evidence, a proposal's files, an offline
    # card's evidence), and what the kind adds to `memcurate show --json` (`shown`)
    view: dict = field(default_factory=dict)
    shown: dict = field(default_factory=dict)

    @property
    def action(self) -> str:
        return str(self.decision.get("action") or self.item.action)

    def as_dict(self) -> dict:
        """`memcurate show --json`: {text, decision, diff, confidence, archive, note?, the kind's own}."""
        doc = {
            "text": self.text or "",
            "decision": self.decision,
            "diff": self.diff,
            "confidence": self.confidence,
            "archive": self.archive,
            **({"note": self.note} if self.note else {}),
        }
        return {**doc, **self.shown}


class Kind(Protocol):
    """One kind of item waiting for review: the only way a front end (the TUI, the CLI, through the
    Engine's generic verbs) acts on it. A new kind is one module with these, and one line in
    curator/review/kinds.py's KINDS."""

    name: str
    # its ids start so (`claude/`, `rule/`): a front end keeps its rows under it; "" for memories
    prefix: str
    label: str  # what the queue's category column says for it ("" for memories: their category)
    what: str  # how its items are named when they cannot be read ("the rule candidates")
    noun: str  # one item, as a dialog names it ("Claude's write"; "" for memories: their category)
    one: str  # one item in a sentence ("This staged write of Claude's cannot be read")
    rejectable: frozenset[str]  # the states from which an item of this kind may be rejected

    def folders(self, engine: Context) -> tuple[str, ...]:
        """Where its records appear: what a front end watches to list them again."""

    def items(self, engine: Context, every: bool) -> list[ReviewItem]:
        """The kind's items: those waiting (ready or not yet), and with `every` the FINAL ones too."""

    def detail(self, engine: Context, item: ReviewItem) -> Detail:
        """What approving it would write, as the person is shown it (Refusal when nothing can be)."""

    def approve(
        self, engine: Context, items: list[ReviewItem], seen: Mapping[str, str] | None = None
    ) -> list[Outcome]:
        """Approve approvable items; `seen`, id -> the Detail.fingerprint the person was shown: one
        whose item changed since is refused. A refusal at save time is an Outcome with its error."""

    def reject(self, engine: Context, item: ReviewItem, reason: str) -> Outcome: ...

    def edit(self, engine: Context, item: ReviewItem, value) -> Outcome:
        """Store the person's edit (Detail.editor TEXT: the text; FIELDS: the kind's fields, a dict),
        verified again; refused (an Outcome with its error) when the kind has nothing to edit."""

    def why_not(
        self, action: str, item: ReviewItem | None, detail: Detail | None = None
    ) -> str | None:
        """Why `action` (APPROVE, EDIT...) does not apply to the kind's items (or to `item`, or to
        what `detail` shows), in the words a person is shown; None when it does. The item's state
        (drafting, done, unreadable) is the front end's to say."""


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
