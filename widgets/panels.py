"""The read-only panels: the document, the diff, its issues, pipeline progress, budgets, graduation
(a rule candidate's file to be written and its evidence).

Everything shown comes from transcripts or files and is data (docs/design.md §13): it is
rendered as rich `Text` or `Syntax`, never parsed as markup.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from memcurate.curator.candidates.usage import describe
from memcurate.curator.categories import CATEGORIES, base
from memcurate.curator.review.names import CLAUDE_WRITE, EVIDENCE_SESSIONS, MEMORY, RULE
from memcurate.curator.util.textsafe import clean as display
from memcurate.curator.util.textsafe import one_line

if TYPE_CHECKING:
    # imported where a document is shown: pygments is not needed for the first frame
    from rich.syntax import Syntax

    from memcurate.curator.candidates.queue import Item
    from memcurate.curator.drafting import DraftingStatus
    from memcurate.curator.memory.memory_md import Budgets
    from memcurate.curator.review.items import Detail  # the item shapes: loaded with the engine

SEVERITY_STYLE = {"BLOCK": "bold red", "ADVISORY": "yellow"}
# A factor's why that names an issue as "code (where): message": the message starting with its where again
_REPEATED = re.compile(r"\(([^()]+)\): \1(?=[ :])[ :]*")


def plain(text: str) -> Text:
    """Transcript-derived text, safe to show: control characters and escapes made visible, no markup."""
    return Text(display(text))


class DocumentView(VerticalScroll):
    """The file to be written (front matter and Markdown), and for an UPDATE the diff against the file on disk."""

    DEFAULT_CSS = """
    DocumentView { height: 1fr; }
    DocumentView > Static { width: 1fr; }
    """

    def compose(self):
        yield Static(id="document-body")

    def show(self, review: dict | None, message: str = "", root: str | None = None) -> None:
        """`root`: the memory root, which the target's path is shown relative to."""
        body = self.query_one("#document-body", Static)
        if review is None:
            body.update(Text(message or "Nothing selected.", style="dim"))
            return
        from rich.syntax import Syntax

        parts = []
        decision = review.get("decision", {})
        if decision.get("action") in ("update", "delete") and decision.get("diff"):
            where = str(decision.get("target_path") or decision.get("target") or "")
            if root and os.path.isabs(where) and not os.path.relpath(where, root).startswith(".."):
                where = os.path.relpath(where, root)
            parts += [
                Text(f"Diff against {display(where)}", style="bold"),
                Syntax(display(decision["diff"]), "diff", theme="ansi_dark", word_wrap=True),
                Text(""),
            ]
        parts += [
            Text("Document", style="bold"),
            Syntax(display(review.get("text", "")), "markdown", theme="ansi_dark", word_wrap=True),
        ]
        # an offline card: what it was made from, under its text
        if review.get("evidence") is not None:
            parts += [Text("")] + card_evidence(review["evidence"], bool(review.get("card")))
        body.update(Group(*parts))

    def show_detail(self, detail: Detail, root: str | None = None) -> None:
        """An item of any kind as the person reviews it (items.Detail): drawn by its kind's presenter
        (PRESENTERS, by the kind's name), else as what approving writes, its diff and why."""
        shown = PRESENTERS.get(detail.item.kind)
        if shown is None:
            self.show_generic(detail)
        else:
            shown(self, detail.view, root)

    def show_generic(self, detail: Detail) -> None:
        """A kind with no presenter of its own: what it is, why, the diff and the text approving writes."""
        parts: list = [
            Text.assemble(
                (f"{display(detail.item.kind)}: ", "bold"),
                (display(detail.item.title or detail.item.id), "bold"),
                (f" ({display(detail.action)})" if detail.action else "", "dim"),
            )
        ]
        parts += [Text(display(str(r))) for r in detail.decision.get("reasons") or ()]
        if detail.diff:
            parts += [Text(""), Text("Diff", style="bold"), _syntax(detail.diff, "diff")]
        if detail.text is not None:
            parts += [Text(""), Text("What approving writes", style="bold")]
            parts.append(_syntax(detail.text, "markdown"))
        self.query_one("#document-body", Static).update(Group(*parts))

    def show_claude_write(self, view: dict) -> None:
        """A write of Claude's own held for review (Engine.claude_write's view): what it is, the diff against
        the file as it was when Claude wrote, and the text approving writes."""
        from rich.syntax import Syntax

        where, tool = display(str(view.get("where", ""))), display(str(view.get("tool", "")))
        parts = [
            Text.assemble(
                ("Claude's own write: ", "bold"),
                (where, "bold"),
                (
                    f" ({tool} into its auto-memory folder, held for your review as "
                    f"{display(str(view.get('review_id', '')))})",
                    "dim",
                ),
            )
        ]
        if where == "MEMORY.md":
            parts.append(
                Text(
                    "Approving writes Claude's lines; memcurate's sections are kept as they are then.",
                    style="dim",
                )
            )
        if view.get("base_hash") is None:
            parts.append(Text("A new file: nothing was there when Claude wrote it.", style="dim"))
        elif view.get("diff"):
            parts += [
                Text(""),
                Text(f"Diff against {where} as it was", style="bold"),
                Syntax(display(view["diff"]), "diff", theme="ansi_dark", word_wrap=True),
            ]
        lexer = "markdown" if where.endswith(".md") else "text"
        parts += [
            Text(""),
            Text("What approving writes", style="bold"),
            Syntax(display(str(view.get("text", ""))), lexer, theme="ansi_dark", word_wrap=True),
        ]
        self.query_one("#document-body", Static).update(Group(*parts))

    def show_rule(self, view: dict) -> None:
        """A rule-graduation candidate (Engine.rule's view): the rule, where it applies, the rule file as
        approving would write it (the diff against the file as it is), and the evidence: the failure and
        each session it recurred in. Commands and errors are terminal output: shown as data."""
        plan = view.get("plan") or {}
        paths = [display(str(p)) for p in view.get("paths") or []]
        where = display(str(plan.get("file") or ""))
        parts = [
            Text.assemble(
                ("Rule", "bold"), (f" (topic {display(str(view.get('topic') or ''))})", "dim")
            ),
            Text(display(str(view.get("rule") or ""))),
            Text(
                "applies to: " + ", ".join(paths) if paths else "applies project-wide (no paths)",
                style="dim",
            ),
            Text(""),
        ]
        action = plan.get("action")
        if plan.get("error"):
            parts.append(
                Text(f"Cannot be written: {display(str(plan['error']))}", style="bold red")
            )
        elif action == "noop":
            parts.append(
                Text.assemble(
                    ("The rule is already in ", "bold"),
                    (where, "bold"),
                    (": approving writes nothing", "dim"),
                )
            )
        elif action == "extend":
            parts += [
                Text.assemble(
                    ("Approving extends ", "bold"), (where, "bold"), (": the diff", "dim")
                ),
                _syntax(str(plan.get("diff") or ""), "diff"),
            ]
        else:
            parts += [
                Text.assemble(
                    ("Approving writes ", "bold"), (where, "bold"), (" (a new file)", "dim")
                ),
                _syntax(str(plan.get("after") or ""), "markdown"),
            ]
        parts += [Text("")] + evidence(view.get("candidate"), view.get("evidence_sessions"))
        self.query_one("#document-body", Static).update(Group(*parts))

    def show_proposal(self, view: dict) -> None:
        """A proposal (Engine.proposal's view): what and why, then the diff of every file approving changes."""
        record, planned = view.get("record") or {}, view.get("planned") or {}
        parts = [
            Text.assemble(
                ("Proposal: ", "bold"),
                (display(str(record.get("title", ""))), "bold"),
                (
                    f" ({display(str(record.get('kind', '')))}, from {display(str(record.get('source', '')))})",
                    "dim",
                ),
            ),
            Text(display(str(record.get("reason") or ""))),
        ]
        if record.get("edit") is not None:
            parts.append(Text("Edited by you: approving writes your text.", style="dim"))
        for f in planned.get("files") or []:
            parts += [
                Text(""),
                Text.assemble(
                    ("Approving changes ", "bold"), (display(str(f.get("where", ""))), "bold")
                ),
                _syntax(str(f.get("diff") or "(unchanged)"), "diff"),
            ]
        self.query_one("#document-body", Static).update(Group(*parts))


# A kind's own way of drawing its Detail's view (by the kind's name); a kind without one is drawn by
# DocumentView.show_generic.
PRESENTERS: dict[str, Callable[[DocumentView, dict, str | None], None]] = {
    MEMORY: lambda view, review, root: view.show(review, root=root),
    CLAUDE_WRITE: lambda view, review, root: view.show_claude_write(review),
    RULE: lambda view, review, root: view.show_rule(review),
    "proposal": lambda view, review, root: view.show_proposal(review),
}


def _syntax(text: str, lexer: str) -> Syntax:
    from rich.syntax import Syntax

    return Syntax(display(text).rstrip("\n"), lexer, theme="ansi_dark", word_wrap=True)


def evidence(candidate, sessions: int | None = None) -> list:
    """A RuleCandidate's evidence: what recurred (kind, tool, signature) and the last EVIDENCE_SESSIONS
    sessions it happened in (the ledger's order, oldest first): when, the command, the error, and what
    fixed it when the transcript shows it. `sessions`: how many were read, when the candidate carries
    only the newest (the rule kind's view)."""
    failure = getattr(candidate, "failure", None) or {}
    occurrences = [o for o in getattr(candidate, "occurrences", None) or [] if isinstance(o, dict)]
    n = max(len(occurrences), sessions if isinstance(sessions, int) else 0)
    occurrences = occurrences[-EVIDENCE_SESSIONS:]
    earlier = n - len(occurrences)
    head = Text.assemble(
        ("Evidence", "bold"),
        (f" — failed the same way in {n} session{'' if n == 1 else 's'}", "dim"),
    )
    out = [
        head,
        Text.assemble(
            ("kind ", "dim"),
            display(str(failure.get("kind", ""))),
            ("  tool ", "dim"),
            display(str(failure.get("tool", ""))),
        ),
        Text.assemble(("signature ", "dim"), display(str(failure.get("signature", "")))),
    ]
    if earlier:
        out.append(
            Text(
                f"\n… {earlier} earlier session{'' if earlier == 1 else 's'} not shown", style="dim"
            )
        )
    for o in occurrences:
        at = str(o.get("at") or "")[:16].replace("T", " ")
        lines = Text.assemble(
            ("\n", ""),
            (f"{at} ", "bold"),
            (f"session {display(str(o.get('session') or ''))}", "dim"),
        )
        if o.get("command"):
            lines.append("\n$ ", style="dim")
            lines.append(display(str(o["command"])))
        if o.get("error"):
            lines.append("\n")
            lines.append(display(str(o["error"]).rstrip()), style="red")
        fix = o.get("fix")
        if isinstance(fix, dict):
            lines.append("\nfixed by: ", style="green")
            lines.append(display(str(fix.get("text") or "")))
            if fix.get("files"):
                lines.append(f" ({display(', '.join(str(f) for f in fix['files']))})", style="dim")
            if fix.get("command"):
                lines.append("\nthen passed: ", style="dim")
                lines.append(display(str(fix["command"])))
        out.append(lines)
    return out


def card_evidence(ev: dict, card: bool, editing: bool = False) -> list[Text]:
    """An offline card's evidence (Engine.card_evidence): the category suggested, the session lines it was
    made from, a runbook's failing commands with their fixes, and while `editing` the text around the lines.
    `card`: no person has written it yet (else it was drafted offline and edited since)."""
    head = Text.assemble(
        ("Offline card", "bold yellow"),
        (f" — suggested category: {display(str(ev.get('category') or ''))}", "bold"),
    )
    said = (
        "Quoted from the session by rules, not a memory yet: write the fact in your own words"
        + ("." if editing else " (e opens it pre-filled, with this evidence beside it).")
        if card
        else "Drafted offline and edited by you since. What it was made from:"
    )
    out = [head, Text(said, style="dim")]
    if ev.get("statement"):
        out.append(Text.assemble(("The second look said: ", "bold"), display(str(ev["statement"]))))
    lines = [x for x in ev.get("lines") or [] if isinstance(x, dict)]
    if lines:
        out.append(Text("Session lines", style="bold"))
    for x in lines:
        turn = f"turn {x['turn']} · " if x.get("turn") is not None else ""
        keys = ", ".join(display(str(k)) for k in x.get("keywords") or [])
        out.append(
            Text.assemble(
                (f"{turn}{display(str(x.get('speaker') or ''))}", "dim"),
                (f"  [{keys}]" if keys else "", "dim"),
                "\n",
                display(str(x.get("text") or "")),
            )
        )
    pairs = [x for x in ev.get("pairs") or [] if isinstance(x, dict)]
    if pairs:
        out.append(Text("Error → fix", style="bold"))
    for x in pairs:
        out.append(
            Text.assemble(
                ("failed: ", "red"),
                display(str(x.get("error") or "")),
                "\n",
                ("fixed:  ", "green"),
                display(str(x.get("fix") or "")),
            )
        )
    if ev.get("note"):
        out.append(Text(display(str(ev["note"])), style="dim"))
    if editing and ev.get("excerpt"):
        out += [Text("Around them", style="bold"), Text(display(str(ev["excerpt"])), style="dim")]
    return out


def issue_parts(issue: dict) -> tuple[str, str]:
    """An issue's heading (where) and its message without what the heading already says: a message often
    starts with its severity or its where ("## Verification required section is missing" under the heading
    "## Verification")."""
    where, message = str(issue.get("where") or ""), str(issue.get("message") or "")
    for said in (str(issue.get("severity") or ""), where):
        if (
            said
            and message.startswith(said)
            and message[len(said) : len(said) + 1] in (" ", ":", "")
        ):
            message = message[len(said) :].lstrip(" :—-") or message
    return where, message


def issue_text(issue: dict) -> str:
    """One issue on one line, as a toast or a list says it: "<where>: <message>"."""
    where, message = issue_parts(issue)
    return one_line(f"{where}: {message}" if where else message, 200)


class IssuesView(Static):
    DEFAULT_CSS = "IssuesView { height: auto; max-height: 12; }"

    def show(self, item: Item | None, review: dict | None) -> None:
        if item is None:
            self.update("")
            return
        lines = Text()
        if item.state == "failed" or item.is_error:
            lines.append("FAILED ", style="bold red")
            lines.append(display(item.error or "unknown error"))
            lines.append("\n")
        for attempt in _chain(item):  # each model tried, when it took more than one, or retries
            outcome = str(attempt.get("outcome", ""))
            lines.append(f"{'DRAFTING':<9}", style="dim")
            lines.append(f"{display(str(attempt.get('model', '')))}: ", style="bold")
            lines.append(
                outcome,
                style="green" if outcome == "ok" else "red" if outcome == "failed" else "dim",
            )
            extra = [
                f"{attempt['retries']} retries" if attempt.get("retries") else "",
                _elapsed(attempt.get("elapsed")),
                display(str(attempt.get("error") or "")),
            ]
            lines.append("".join(f" · {e}" for e in extra if e))
            lines.append("\n")
        for issue in (review or {}).get("issues", []):
            sev = issue.get("severity", "")
            lines.append(f"{sev:<9}", style=SEVERITY_STYLE.get(sev, ""))
            where, message = issue_parts(issue)
            lines.append(f"{display(where)}: ", style="bold")
            lines.append(display(message))
            lines.append("\n")
        if not lines:
            lines = Text("No issues.\n" if item.state == "ready" else "", style="dim")
        lines.append_text(confidence_lines((review or {}).get("confidence")))
        lines.rstrip()  # in place: the last line break
        self.update(lines)


def confidence_lines(conf: dict | None) -> Text:
    """The draft's confidence: its value and every factor's effect on one line, then why of each factor that
    pulled it down (curator/verify/confidence.py), as the review record holds them."""
    out = Text()
    if not isinstance(conf, dict) or not isinstance(conf.get("value"), (int, float)):
        return out
    out.append(f"{'CONF':<9}", style="bold")
    out.append(f"{conf['value']:.2f}", style="bold")
    factors = [f for f in conf.get("factors") or [] if isinstance(f, dict)]
    out.append(
        "".join(f" · {display(str(f.get('name', '')))} {f.get('effect', 0):+.2f}" for f in factors),
        style="dim",
    )
    out.append("\n")
    for f in sorted((f for f in factors if f.get("effect", 0) < 0), key=lambda f: f["effect"]):
        out.append(f"{'':<9}{f['effect']:+.2f} {display(str(f.get('name', '')))}: ", style="yellow")
        out.append(display(_REPEATED.sub(r"(\1): ", str(f.get("why", "")))))
        out.append("\n")
    return out


def _chain(item: Item) -> list[dict]:
    """The drafting steps of a category worth showing: more than one model, or any retry."""
    attempts = item.field("attempts")
    if not isinstance(attempts, list) or not all(isinstance(a, dict) for a in attempts):
        return []
    return attempts if len(attempts) > 1 or any(a.get("retries") for a in attempts) else []


def _model(item: Item) -> str:
    """The model column: the chain ("sonnet→haiku→offline") when the category went through one."""
    chain = _chain(item)
    if len(chain) > 1:
        return "→".join(str(a.get("model", "")) for a in chain if a.get("outcome") != "not tried")
    return str(item.field("model") or "")


def _elapsed(value) -> str:
    try:
        return f"{float(value):.1f}s"
    except (TypeError, ValueError):
        return ""


class ProgressView(Static):
    """Each category of the selected triage: its stage, model, time, tokens, retries, failure;
    and how many other triages are being drafted."""

    DEFAULT_CSS = "ProgressView { height: auto; }"

    # a narrow terminal: the triage's categories counted by stage on one line, no table
    compact = False
    _last: tuple | None = None

    def set_compact(self, compact: bool) -> None:
        if compact != self.compact:
            self.compact = compact
            if self._last is not None:
                self.show(*self._last)

    def show(
        self,
        tid: str | None,
        items: list[Item],
        busy_elsewhere: int,
        used: dict | None = None,
        overall: dict | None = None,
    ) -> None:
        self._last = (tid, items, busy_elsewhere, used, overall)
        table = Table(box=None, pad_edge=False, expand=True, show_edge=False)
        for name, kw in (
            ("category", {}),
            ("draft", {}),
            ("verify", {}),
            ("model", {}),
            ("time", {"justify": "right"}),
            ("tokens", {"justify": "right"}),
            ("retries", {"justify": "right"}),
        ):
            table.add_column(name, style="bold" if name == "category" else "", **kw)
        for item in items:
            draft, verify = _stages(item.state)
            tokens = item.field("tokens_in"), item.field("tokens_out")
            cat = base(item.category)
            name = CATEGORIES[cat].section if cat in CATEGORIES else item.category
            if cat != item.category:  # a further fact of the category: its number
                name += f" #{item.category.rpartition('-')[2]}"
            if item.field("found_by") == "second_look":
                name += " (2nd look)"  # the keywords missed it: a model's reading of the session found it
            table.add_row(
                name,
                draft,
                verify,
                display(_model(item)),
                _elapsed(item.field("elapsed")),
                "" if tokens == (None, None) else f"{tokens[0] or 0}/{tokens[1] or 0}",
                str(item.field("retries") or 0),
            )
        title = Text(f"Pipeline — {tid}" if tid else "Pipeline", style="bold")
        if self.compact and items:  # e.g. "Pipeline — <tid>: 4 ready · 1 verifying · 1 failed"
            counts: dict[str, int] = {}
            for item in items:
                counts[item.state] = counts.get(item.state, 0) + 1
            title.append(": " + " · ".join(f"{n} {state}" for state, n in counts.items()), style="")
        foot = Text(
            f"{busy_elsewhere} other triage(s) being drafted" if busy_elsewhere else "", style="dim"
        )
        # Model use, once there is any (the offline drafter makes no call): this triage's, then every triage's.
        for label, total in (
            ("this triage", used),
            ("all triages", overall if overall != used else None),
        ):
            if total and (total.get("calls") or total.get("tokens_in")):
                foot.append(("\n" if foot.plain else "") + f"{label}: {describe(total)}")
        skipped = [i for i in items if i.state == "skipped"]
        for item in skipped:  # why the model found nothing durable there: final, never saved
            name = (
                CATEGORIES[item.category].section if item.category in CATEGORIES else item.category
            )
            foot.append(
                ("\n" if foot.plain else "")
                + f"{name} skipped: {display(str(item.field('reason') or ''))}"
            )
        idle = Text("Nothing in progress.", style="dim")
        if self.compact:
            self.update(Group(title, foot) if foot.plain else title)
            return
        self.update(
            Group(title, table, foot)
            if items
            else Group(title, idle, foot)
            if foot.plain
            else Group(title, idle)
        )


def _stages(state: str) -> tuple[Text, Text]:
    done, wait = Text("done", style="green"), Text("·", style="dim")
    return {
        "triaged": (wait, wait),
        "drafting": (Text("running", style="yellow"), wait),
        "drafted": (done, wait),
        "verifying": (done, Text("running", style="yellow")),
        "ready": (done, done),
        "approved": (done, done),
        "failed": (Text("failed", style="bold red"), wait),
        "skipped": (Text("skipped", style="dim"), Text("—", style="dim")),
    }.get(state, (wait, wait))


class DraftingLine(Static):
    """One line: the drafting backend and models in use and why; below it, a warning per configured
    model id the SDK marks deprecated."""

    DEFAULT_CSS = "DraftingLine { height: auto; }"

    def show(self, info: DraftingStatus) -> None:
        style = "dim" if info.available else "bold red"
        # config text: never raw escapes
        lines = [Text(display(info.line), style=style)]
        lines += [Text(f"⚠ {display(w)}", style="yellow") for w in info.warnings]
        if info.deprecation_table != "available":
            lines.append(Text(info.deprecation_table, style="dim"))
        self.update(Group(*lines))


class BudgetsView(Static):
    """MEMORY.md's sections as meters (used / budget), and what approving the selection would archive."""

    DEFAULT_CSS = "BudgetsView { height: auto; }"

    _last: tuple = (None, {}, "")

    def on_resize(self) -> None:
        self.show(*self._last)  # the meters take the width there is

    def show(self, usage: Budgets | None, moves: dict, error: str = "") -> None:
        self._last = (usage, moves, error)
        out = Text("MEMORY.md budgets\n", style="bold")
        if error:
            out.append(display(error), style="red")
            self.update(out)
            return
        if not usage:
            out.append("…", style="dim")
            self.update(out)
            return
        # the meter takes what the labels leave: 16 for the name, 8 for the count (what moves to the archive
        # has a line of its own: beside them it wrapped in the panel's width at 160 columns)
        width = max(3, min(16, self.content_size.width - 24))
        for name, sec in usage.sections.items():
            used, budget = sec.used, max(sec.budget, 1)
            filled = min(width, round(width * used / budget))
            style = "red" if used >= budget else "yellow" if used >= 0.8 * budget else "green"
            out.append(f"{CATEGORIES[name].section[:15]:<15} ")
            out.append("█" * filled, style=style)
            out.append("░" * (width - filled), style="dim")
            out.append(f" {used:>3}/{sec.budget:<3}")
            out.append("\n")
            if moves.get(name):
                out.append(f"  ↳ {len(moves[name])} to the archive\n", style="bold yellow")
        t = usage.total
        out.append(
            f"{t.lines}/{t.max_lines} lines, {t.chars / 1000:.1f}k/{t.max_chars / 1000:g}k chars",
            style="dim",
        )
        self.update(out)


class GraduationView(Static):
    """Rule-graduation candidates: each pending one with the sessions its failure recurred in (the queue's
    rows of category rule, updated with it)."""

    DEFAULT_CSS = "GraduationView { height: auto; }"

    _shown: tuple | None = None

    def on_mount(self) -> None:
        self.show([])

    def show(self, items: list[Item]) -> None:
        shown = tuple((i.tid, i.title, i.field("sessions")) for i in items)
        if shown == self._shown:
            return  # an update lays the screen out again
        self._shown = shown
        title = Text.assemble(
            ("Rule graduation", "bold"), (f" {len(items)}" if items else "", "dim")
        )
        if not items:
            self.update(Group(title, Text("Nothing recurring yet.", style="dim")))
            return
        lines = [
            Text.assemble(
                (f"{i.field('sessions', 0)}× ", "cyan"),
                one_line(i.title, 200),
                no_wrap=True,
                overflow="ellipsis",
            )
            for i in items
        ]
        self.update(Group(title, *lines))
