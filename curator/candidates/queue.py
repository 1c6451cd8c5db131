"""What waits for a person: one row per pending candidate, read from the staging dir.

A row needs only the triage (read once: it never changes once its second look, if it asked for one,
is made) and its state log
(the `ready` line carries title, action and issue counts), so thousands of
candidates load from one small file per triage. A triage that cannot be read
becomes an error row, never an exception.
"""

from __future__ import annotations

import calendar
import functools
import os
import time
from dataclasses import dataclass
from dataclasses import field as dataclass_field

from memcurate.curator.candidates import staging, usage


@dataclass(frozen=True)
class Item:
    tid: str
    category: str  # "" for an error row (the triage itself is unreadable)
    state: str  # a staging state, or "error"
    title: str = ""
    action: str = ""
    blocks: int = 0
    advisories: int = 0
    created: str = ""  # when the triage was staged (UTC, ISO 8601)
    session: str = ""  # the Claude Code session the triage read
    updated: str = ""
    error: str = ""
    # the state record (model, timings, retries...)
    record: dict = dataclass_field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return (self.tid, self.category)

    @property
    def is_error(self) -> bool:
        return self.state == "error"

    def field(self, name: str, default=None):
        return self.record.get(name, default)

    @property
    def confidence(self) -> float | None:
        """The draft's confidence (0..1) as its last verification recorded it; None before that."""
        value = self.record.get("confidence") if self.state == "ready" else None
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _item(tid: str, doc: dict, rec: dict) -> Item:
    return Item(
        tid,
        rec["category"],
        rec["state"],
        title=str(rec.get("title") or ""),
        action=str(rec.get("action") or "") if rec["state"] == "ready" else "",
        blocks=int(rec.get("blocks") or (1 if rec.get("blocked") else 0)),
        advisories=int(rec.get("advisories") or 0),
        created=str(doc.get("created", "")),
        session=str(doc.get("session") or ""),
        updated=str(rec.get("updated", "")),
        error=str(rec.get("error") or rec.get("conflict") or ""),
        record={k: v for k, v in rec.items() if k != "history"},
    )


@dataclass(frozen=True)
class TriageProgress:
    """What a triage's progress shows beyond its waiting candidates: the categories the model skipped
    (with the reason on their record) and the sums of its model calls (curator/candidates/usage.py)."""

    skipped: tuple[Item, ...] = ()
    usage: dict = dataclass_field(default_factory=usage.empty)

    @property
    def blank(self) -> bool:
        """No skip and no model use: it shows nothing beyond the triage's rows."""
        return not self.skipped and self.usage == usage.empty()


class Board:
    """The pending candidates of a data dir, by triage; `load` re-reads only the triages asked for.
    The same read gives each triage's TriageProgress (`outcome`), from the state log and the second look's
    small file: never the excerpts."""

    def __init__(self, data: str) -> None:
        self.data = data
        self._docs: dict[str, dict] = {}  # triage.json is written once: read once, kept slim
        self._outcomes: dict[str, TriageProgress] = {}
        # Triages whose every category is final (saved, rejected, skipped): none is pending again, so a
        # reload skips them and nothing of theirs is kept but what they cost (a long session's TUI
        # otherwise keeps ~130 objects a triage it has seen decided).
        self._done: set[str] = set()

    def outcome(self, tid: str) -> TriageProgress:
        """The skips and model use of a triage as last loaded."""
        return self._outcomes.get(tid) or TriageProgress()

    def triage_ids(self) -> list[str]:
        return staging.triage_ids(self.data)

    def items_of(self, tid: str, wanted=staging.PENDING) -> list[Item]:
        """The candidates of one triage in the states `wanted` (default: still waiting, not saved or
        rejected); an error row when the triage cannot be read; [] when it is gone."""
        if tid in self._done and wanted == staging.PENDING:
            return []
        try:
            doc = self._docs.get(tid)
            if doc is None:
                full = staging.load_triage(self.data, tid)
                # what reading the states needs: not the snippets and excerpts (kilobytes a triage)
                doc = {
                    "created": full.get("created", ""),
                    "session": (full.get("source") or {}).get("session"),
                    "categories": {
                        name: {
                            "triggered": True,
                            **({"found_by": cat["found_by"]} if cat.get("found_by") else {}),
                        }
                        for name, cat in full["categories"].items()
                        if isinstance(cat, dict) and cat.get("triggered")
                    },
                    "look": usage.add(
                        usage.empty(), (full.get("second_look") or {}).get("record") or {}
                    ),
                }
                # until its second look is made, it may still gain categories
                if not staging.look_due(full):
                    self._docs[tid] = doc
            states = staging.category_states(self.data, tid, doc, history=False)
        except staging.StagingError as e:
            if not os.path.isdir(staging.triage_dir(self.data, tid)):
                self._docs.pop(tid, None)
                self._outcomes.pop(tid, None)
                return []
            # said relative to the data dir: the person knows which project this is
            return [Item(tid, "", "error", error=str(e).replace(os.path.join(self.data, ""), ""))]
        cost = usage.of_triage(self.data, tid, states, doc["look"])
        if tid in self._docs and all(rec["state"] in staging.FINAL for rec in states.values()):
            self._done.add(tid)
            del self._docs[tid]
            # what it cost stays in the overall figures; a decided triage's skips are shown no more
            progress = TriageProgress(usage=cost)
        else:
            skipped = (_item(tid, doc, r) for r in states.values() if r["state"] == "skipped")
            progress = TriageProgress(tuple(skipped), cost)
        if progress.blank and tid in self._done:
            self._outcomes.pop(tid, None)
        else:
            self._outcomes[tid] = progress
        return [_item(tid, doc, rec) for rec in states.values() if rec["state"] in wanted]

    def load(self, tids=None, wanted=staging.PENDING) -> dict[str, list[Item]]:
        """tid -> its candidates in the states `wanted` (default: waiting), for `tids` (default: every
        staged triage)."""
        return {
            tid: self.items_of(tid, wanted) for tid in (self.triage_ids() if tids is None else tids)
        }


@functools.lru_cache(maxsize=4096)
def _epoch(stamp: str) -> int:
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def age(stamp: str, now: float | None = None) -> str:
    """'42s', '5m', '3h', '2d', '14mo', '3y' since a UTC ISO stamp (at most four characters: the column's
    width); '' when it does not read."""
    try:
        t = _epoch(stamp)  # a triage's rows share its stamp: parsed once (strptime costs ~30 µs)
    except (TypeError, ValueError):
        return ""
    secs = max(0, int((time.time() if now is None else now) - t))
    days = secs // 86400
    if days >= 365:
        return f"{days // 365}y"
    if days >= 90:  # "120d" would still fit; "2520d" would not
        return f"{days // 30}mo"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if secs >= size:
            return f"{secs // size}{unit}"
    return f"{secs}s"
