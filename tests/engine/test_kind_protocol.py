"""One review protocol for every kind (curator/review/items.py `Kind`): each registered kind lists its
folders and items, shows an item as a typed Detail with the fingerprint of what the person saw, refuses
an approval whose item changed since it was shown (nothing written), rejects, and says why a key does
not apply. A kind registered in a test, with no widget change, shows up in the TUI's queue, is drawn in
the document panel and is approved by its key: a new kind is one module and one registry line."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest
from scenarios import CLAUDE_TOPIC, MEMORY_MD, engine_factory, proj_files, recurring, stage_demo
from test_claude_writes import TOPIC, stage
from test_guard import setup  # noqa: F401 (a fixture)

from memcurate.curator.engine import Engine
from memcurate.curator.proposals import actions as proposal_actions
from memcurate.curator.review import kinds, rule_actions
from memcurate.curator.review.items import (
    APPROVE,
    CHANGE,
    EDIT,
    EDIT_TEXT,
    READY,
    REJECT,
    RETRY,
    TEXT,
    Detail,
    Outcome,
    ReviewItem,
)

VERBS = (APPROVE, REJECT, EDIT, EDIT_TEXT, CHANGE, RETRY)
WIDGETS = Path(__file__).resolve().parents[2] / "widgets"


# -- one project per kind: its engine, the item's id, and a change that makes what was shown stale --------


def memory_case(project: Path, tmp_path: Path):
    memory = tmp_path / "memory"
    tid = stage_demo(project, memory, drafted=True)
    engine = engine_factory(project, memory)()

    def change(engine: Engine) -> None:
        text = engine.review(tid, "decision")["text"]
        engine.edit(tid, "decision", text.rstrip("\n") + "\nRotate the secret every quarter.\n")

    def saved() -> bool:
        return any(memory.glob("decision/*.md"))

    return engine, f"{tid}/decision", change, saved


def claude_case(project: Path, root: Path):
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text("backend: offline\n")
    wid = stage(project, "Write", {"file_path": str(root / "build.md"), "content": TOPIC})

    # Claude writes the same file again: the record's text changes
    def change(engine: Engine) -> None:
        again = TOPIC.replace("make all", "make everything")
        stage(project, "Write", {"file_path": str(root / "build.md"), "content": again})

    return Engine(project), wid, change, (root / "build.md").exists


def rule_case(project: Path, tmp_path: Path):
    proj_files(project)
    memory = tmp_path / "memory"
    factory = engine_factory(project, memory)
    key = recurring(project)

    def change(engine: Engine) -> None:
        rule_actions.edit(engine, key, "Create the data dir in a fixture first.", "testing", [])

    def saved() -> bool:
        return (project / ".claude" / "rules").exists() and any(
            (project / ".claude" / "rules").rglob("*.md")
        )

    return factory(), f"rule/{key}", change, saved


def proposal_case(project: Path, tmp_path: Path):
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "commits.md").write_text(CLAUDE_TOPIC)
    (memory / "MEMORY.md").write_text(MEMORY_MD)
    engine = engine_factory(project, memory)()
    pid = engine.adopt("claude/commits.md")

    # the person's edit of the text it writes: a new plan
    def change(engine: Engine) -> None:
        view = proposal_actions.view(engine, pid)
        [write] = [op for op in view["record"]["ops"] if op.get("op") == "write"]
        proposal_actions.edit(engine, pid, write["text"].replace("60 characters", "50 characters"))
        assert view["planned"]["files"] != proposal_actions.view(engine, pid)["planned"]["files"]

    return engine, f"proposal/{pid}", change, (memory / "preference").exists


@pytest.fixture(params=["memory", "claude-write", "rule", "proposal"])
def case(request, project, tmp_path):
    if request.param == "claude-write":
        project, root = request.getfixturevalue("setup")
        built = claude_case(project, root)
    else:
        build = {"memory": memory_case, "rule": rule_case, "proposal": proposal_case}
        built = build[request.param](project, tmp_path)
    engine = built[0]
    yield (request.param, *built)
    engine.close()


def test_every_kind_is_registered_once_with_its_own_prefix():
    names = [k.name for k in kinds.KINDS]
    assert sorted(names) == ["claude-write", "memory", "proposal", "rule"]
    prefixes = [k.prefix for k in kinds.KINDS]
    # one kind (memories) is kept by triage; the others under a prefix of their own
    assert prefixes.count("") == 1 and len(set(prefixes)) == len(prefixes)
    assert all(p.endswith("/") for p in prefixes if p)


def test_a_kind_lists_its_item_in_its_folder_and_shows_it_as_a_typed_detail(case):
    name, engine, rid, _, _ = case
    [item] = engine.find_items([rid])
    assert item.kind == name and item.state == READY
    assert item in engine.review_items(kind=name)
    folders = [f for f, kind in engine.review_folders().items() if kind == name]
    assert folders and any(os.listdir(f) for f in folders if os.path.isdir(f))
    detail = engine.detail(item)
    assert isinstance(detail, Detail) and detail.item == item
    assert detail.fingerprint and detail.fingerprint == engine.detail(item).fingerprint
    assert detail.text or detail.diff  # what approving writes, shown
    doc = detail.as_dict()  # `memcurate show --json`
    assert {"text", "decision", "diff", "confidence", "archive"} <= set(doc)
    json.dumps(doc, default=str)


def test_an_approval_of_what_changed_since_it_was_shown_is_refused_and_writes_nothing(case):
    name, engine, rid, change, saved = case
    [item] = engine.find_items([rid], APPROVE)
    shown = engine.detail(item)
    change(engine)
    [item] = engine.find_items([rid], APPROVE)
    assert engine.detail(item).fingerprint != shown.fingerprint
    [outcome] = engine.approve_items([item], {item.id: shown.fingerprint})
    assert isinstance(outcome, Outcome) and not outcome.done
    assert "changed since" in outcome.error and not saved()
    [still] = engine.find_items([rid])
    assert still.state == READY
    # what is shown now is approved
    [outcome] = engine.approve_items([still], {still.id: engine.detail(still).fingerprint})
    assert outcome.done and outcome.said, outcome
    assert saved()


def test_a_rejected_item_is_done_and_says_so(case):
    name, engine, rid, _, saved = case
    [item] = engine.find_items([rid], REJECT)
    [outcome] = engine.reject_items([item], "not worth keeping")
    assert outcome.done and outcome.said and not saved()
    [done] = engine.find_items([rid])
    assert done.state == "rejected"


def test_a_kind_says_which_keys_do_not_apply_to_it(case):
    name, engine, rid, _, _ = case
    [item] = engine.find_items([rid])
    detail = engine.detail(item)
    for verb in VERBS:
        why = engine.why_not(verb, item, detail)
        assert why is None or (isinstance(why, str) and why), (verb, why)
    assert engine.why_not(APPROVE, item, detail) is None
    assert engine.why_not(REJECT, item, detail) is None
    # changing the action and retrying are a drafted memory's, said in words for any other kind
    for verb in (CHANGE, RETRY):
        assert (engine.why_not(verb, item, detail) is None) == (name == "memory"), verb
    if detail.editor == TEXT:  # an editable text: `e` applies
        assert engine.why_not(EDIT, item, detail) is None


# -- a new kind: one module (this class) and one registry line (the monkeypatch) --------------------------


class NoteKind:
    """A kind no widget knows: notes staged as files under <data>/notes/, approved into the project."""

    name = "note"
    prefix = "note/"
    label = "note"
    what = "the notes"
    noun = "note"
    one = "staged note"
    rejectable = frozenset({READY})

    def folders(self, engine) -> tuple[str, ...]:
        return (os.path.join(engine.data, "notes"),)

    def _path(self, engine, item: ReviewItem) -> Path:
        return Path(self.folders(engine)[0]) / (item.id.removeprefix(self.prefix) + ".json")

    def items(self, engine, every: bool) -> list[ReviewItem]:
        out = []
        folder = Path(self.folders(engine)[0])
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            doc = json.loads(path.read_text())
            if doc["state"] == "pending" or every:
                state = READY if doc["state"] == "pending" else doc["state"]
                out.append(
                    ReviewItem(self.prefix + path.stem, self.name, state, "note", doc["title"])
                )
        return out

    def detail(self, engine, item: ReviewItem) -> Detail:
        text = json.loads(self._path(engine, item).read_text())["text"]
        return Detail(
            item,
            text,
            hashlib.sha256(text.encode()).hexdigest(),
            decision={"action": "create", "target": "NOTES.md", "reasons": ["a note to keep"]},
        )

    def approve(self, engine, items, seen=None) -> list[Outcome]:
        out = []
        for item in items:
            shown = (seen or {}).get(item.id)
            if shown is not None and self.detail(engine, item).fingerprint != shown:
                out.append(Outcome(item.id, False, error="the note changed since you looked"))
                continue
            path = self._path(engine, item)
            doc = json.loads(path.read_text())
            Path(engine.project, "NOTES.md").write_text(doc["text"])
            path.write_text(json.dumps({**doc, "state": "saved"}))
            out.append(Outcome(item.id, True, "create", said="note kept: NOTES.md"))
        return out

    def reject(self, engine, item: ReviewItem, reason: str) -> Outcome:
        path = self._path(engine, item)
        path.write_text(json.dumps({**json.loads(path.read_text()), "state": "rejected"}))
        return Outcome(item.id, True, said="note dropped")

    def edit(self, engine, item: ReviewItem, value) -> Outcome:
        return Outcome(item.id, False, error="a note is kept as written")

    def why_not(self, action: str, item, detail=None) -> str | None:
        return None if action in (APPROVE, REJECT) else "a note is kept or dropped as written"


def stage_note(project: Path, text: str) -> None:
    folder = project / ".memcurate" / "notes"
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"title": "deploys happen on Fridays", "text": text, "state": "pending"}
    (folder / "n1.json").write_text(json.dumps(doc))


def test_no_widget_dispatches_on_a_kind():
    """The TUI acts on every kind through the Engine's generic verbs and the kind's why_not: no
    `category == <kind>` branch, no per-kind table of keys that do not apply."""
    found = []
    sources = sorted(WIDGETS.glob("*.py"))
    assert len(sources) > 10  # the widgets package itself, not an empty folder
    for path in sources:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\bcategory\s*(==|!=)|\bis_claude\(|^NOT_FOR_\w+\s*=", line):
                found.append(f"{path.name}:{n}: {line.strip()}")
    assert found == []
