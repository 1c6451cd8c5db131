"""Drafting: the drafter interface, backend resolution, and the offline drafter on real and hostile evidence."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import ANTHROPIC_SDK, ROOT, needs_shared, shared_transcripts

from memcurate.curator import config
from memcurate.curator.candidates import incremental as capture
from memcurate.curator.candidates import staging
from memcurate.curator.categories import CATEGORIES, NAMES
from memcurate.curator.drafting import (
    Drafter,
    DrafterUnavailable,
    DraftRequest,
    DraftResult,
    get_drafter,
    model_for,
)
from memcurate.curator.drafting.offline import (
    NO_NEXT_STEP,
    NOT_STATED,
    SCAFFOLD,
    TOPIC_TITLE_WEAK,
    OfflineDrafter,
    sentences,
)
from memcurate.curator.memory import memfile
from memcurate.curator.util.assets import asset
from memcurate.curator.util.redact import find_secrets

NOW = "2026-11-22T10:04:00Z"
DEMO = ROOT / "assets" / "demo" / "session.jsonl"


# -- fixtures ------------------------------------------------------------------------


def default_cfg() -> dict:
    """The default config alone: no layer from any home folder."""
    return config.build([asset("config.default.yaml")])


def main_sessions() -> list[Path]:
    return [
        p
        for p in shared_transcripts()
        if not p.name.startswith("agent-") and "subagents" not in p.parts
    ]


def _rel(p: Path) -> str:
    return p.name.replace("agent-", "a-")[:13] if p != DEMO else "demo"


_staged: dict[str, dict | None] = {}


def staged_triage(path: Path, tmp_path_factory) -> dict | None:
    """The triage of a whole transcript (backfill with a summary), staged once per test session."""
    key = str(path)
    if key not in _staged:
        data = tmp_path_factory.mktemp("data")
        report = capture.capture(
            str(data), default_cfg(), str(path), event="backfill", summary=True
        )
        _staged[key] = (
            staging.load_triage(str(data), report["triage"]) if report["triage"] else None
        )
    return _staged[key]


def triggered(triage: dict) -> list[str]:
    return [n for n, c in triage["categories"].items() if c.get("triggered")]


def request(triage: dict, category: str, **kw) -> DraftRequest:
    return DraftRequest.from_triage(triage, category, default_cfg(), now=NOW, **kw)


# -- checking a draft against its evidence ------------------------------------------


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def grounded(section: str, evidence: str) -> tuple[bool, str]:
    """Whether a section's text comes from the evidence: a run of 4 words found there, and most of its words."""
    sec = words(SCAFFOLD.sub(" ", section))  # the drafter's framing words are not claims
    ev = " " + " ".join(words(evidence)) + " "
    if len(sec) < 3:
        return False, f"too short: {section!r}"
    n = 4 if len(sec) >= 8 else 3
    runs = [" ".join(sec[i : i + n]) for i in range(max(1, len(sec) - n + 1))]
    if not any(f" {r} " in ev for r in runs):
        return False, f"no run of {n} words of {section[:120]!r} is in the evidence"
    content = [w for w in sec if len(w) > 3]
    found = sum(1 for w in content if f" {w} " in ev)
    share = found / len(content) if content else 1.0
    return share >= 0.6, f"{share:.0%} of the words of {section[:120]!r} are in the evidence"


def check_draft(result: DraftResult, triage: dict, category: str) -> memfile.MemoryDoc:
    assert result.error is None, result.error
    assert result.doc is not None and result.text
    doc = memfile.parse(result.text)
    assert memfile.problems(doc) == [], (memfile.problems(doc), result.text)
    assert memfile.problems(doc, file_name=f"{doc.id}.md") == []
    assert doc.category == category and doc.type == CATEGORIES[category].claude_type
    assert doc.created == doc.updated == NOW
    assert doc.sources and doc.sources[0]["session"] == triage["source"]["session"]
    assert memfile.render(doc) == result.text  # the text is exactly the document
    assert find_secrets(result.text) == []
    entry = triage["categories"][category]
    evidence = entry["excerpt"] + "\n" + "\n".join(s["text"] for s in entry["snippets"])
    sections = doc.sections
    assert set(sections) <= set(CATEGORIES[category].required + CATEGORIES[category].optional), (
        sections.keys()
    )
    weak = {w.split(":", 1)[0] for w in result.weak}
    for name in CATEGORIES[category].required:
        text = sections[name]
        if category == "session_summary" and name == "Next steps" and text.startswith(NO_NEXT_STEP):
            continue
        # not stated: said so, not filled
        if text.startswith((NOT_STATED, "The session ended without")):
            assert name in weak, (name, result.weak)
            continue
        ok, why = grounded(text, evidence)
        assert ok, f"{category} ## {name}: {why}\n\n{result.text}"
    # no sentence stated the fact: the title names the topic, from the tags
    if TOPIC_TITLE_WEAK in result.weak:
        assert all(t in evidence.lower() for t in doc.title.lower().split()[2:] if t != "and"), (
            doc.title
        )
    else:
        ok, why = grounded(doc.title, evidence + "\n" + "fix failing")
        assert ok or len(words(doc.title)) < 4, f"title: {why}"
    assert doc.tags
    for tag in doc.tags:
        assert tag in evidence.lower() or tag.replace("-", " ") in evidence.lower(), (tag, doc.tags)
    return doc


# -- real sessions --------------------------------------------------------------------


def test_demo_drafts_every_category_validly_and_specifically(tmp_path_factory):
    triage = staged_triage(DEMO, tmp_path_factory)
    assert set(triggered(triage)) == set(NAMES)
    drafter = OfflineDrafter()
    docs = {c: check_draft(drafter.draft(request(triage, c)), triage, c) for c in NAMES}
    # Specific, not placeholders: each draft holds the facts of its statement.
    assert "JWT" in docs["decision"].title
    assert (
        "simpler because any API instance can verify a token"
        in docs["decision"].sections["Rationale"]
    )
    assert "sessions table" in docs["decision"].sections.get("Alternatives", "")
    assert "CI runners have no network access" in docs["constraint"].sections["Rule"]
    assert "OperationalError" in docs["runbook"].title
    assert "`DATABASE_URL`" in docs["runbook"].sections["Steps"]
    assert "All 10 tests pass" in docs["runbook"].sections["Verification"]
    assert "refresh tokens" in docs["tech_debt"].title.lower()
    assert "mobile team" in docs["tech_debt"].sections["Why deferred"]
    assert "dependencies" in docs["preference"].title
    assert "security team's review" in docs["preference"].sections["Reason"]
    assert "`JWT_SECRET`" in docs["session_summary"].sections["Next steps"]
    assert "`app/auth.py`" in docs["session_summary"].sections["Completed"]


@needs_shared
@pytest.mark.parametrize("path", shared_transcripts(), ids=_rel)
def test_every_triggered_category_of_a_real_session_drafts_from_its_evidence(
    path, tmp_path_factory
):
    """Every main session and subagent transcript (the brief and summary of a subagent come from its parent)."""
    triage = staged_triage(path, tmp_path_factory)
    if triage is None:
        pytest.skip("nothing triggers in this transcript: nothing to draft")
    # A triage is staged when a category triggers, or (a backfill) to carry a second-look request.
    assert triggered(triage) or triage["second_look"]
    if not triggered(triage):
        pytest.skip("nothing triggers in this transcript: only a second look to make")
    drafter = OfflineDrafter()
    for category in triggered(triage):
        result = drafter.draft(request(triage, category))
        # the evidence states nothing of the category (only chatter): said, not drafted
        if result.skipped:
            assert (
                result.doc is None
                and result.error is None
                and category in result.skipped.replace(" ", "_")
            )
            continue
        check_draft(result, triage, category)
        assert len(result.text) < 6000
        assert result.model == "offline" and result.tokens_in == result.tokens_out == 0


@needs_shared
def test_real_drafts_pass_verification(tmp_path_factory):
    verify = pytest.importorskip("memcurate.curator.verify.checks")
    drafter = OfflineDrafter()
    verified = 0
    for path in shared_transcripts() + [DEMO]:
        triage = staged_triage(path, tmp_path_factory)
        if triage is None:
            continue
        for category in triggered(triage):
            entry = triage["categories"][category]
            result = drafter.draft(request(triage, category))
            if result.skipped:
                continue
            text = result.text
            issues = verify.verify(
                text, category=category, evidence=entry["excerpt"], cfg=default_cfg()
            )
            assert not [i for i in issues if i.severity == "BLOCK" or i.code == "unsupported"], (
                path.name,
                issues,
            )
            verified += 1
    assert verified > len(NAMES)  # the demo's six categories and the shared sessions' drafts


def test_same_request_gives_the_same_bytes(tmp_path_factory):
    triage = staged_triage(DEMO, tmp_path_factory)
    for category in NAMES:
        a = OfflineDrafter().draft(request(triage, category))
        b = OfflineDrafter().draft(request(triage, category))
        assert a.text == b.text and a.notes == b.notes


def test_drafting_from_many_threads_gives_the_serial_results(tmp_path_factory):
    triages = [staged_triage(DEMO, tmp_path_factory)]
    triages += [t for t in (staged_triage(p, tmp_path_factory) for p in main_sessions()[:6]) if t]
    reqs = [request(t, c) for t in triages for c in triggered(t)]
    reqs = (reqs * 20)[:20] if len(reqs) < 20 else reqs[:20]
    drafter = OfflineDrafter()
    serial = [drafter.draft(r).text for r in reqs]
    with ThreadPoolExecutor(max_workers=8) as pool:
        threaded = list(pool.map(lambda r: drafter.draft(r).text, reqs))
    assert threaded == serial
    assert all(serial)


# -- hostile evidence -----------------------------------------------------------------

SECRET = "sk-ant-api03-" + "Q7x" * 20
DECISION = "We decided to use Redis for the job queue because it is simpler to run than RabbitMQ."


def hostile_entry(*texts: str) -> dict:
    snippets = [
        {
            "turn": i + 1,
            "speaker": "user",
            "weight": 2.0,
            "keywords": ["decided", "must", "the fix"],
            "text": t,
        }
        for i, t in enumerate(texts)
    ]
    snippets.append(
        {
            "turn": 1,
            "speaker": "tool",
            "weight": 1.5,
            "keywords": ["error-fix"],
            "text": "error, then fixed: " + texts[0],
        }
    )
    excerpt = "\n\n".join(f"[turn {i + 1} · user]\n{t}" for i, t in enumerate(texts))
    excerpt += f"\n\n[turn 1 · assistant, last reply] {texts[-1]}"
    return {
        "score": 1.0,
        "threshold": 0.5,
        "triggered": True,
        "snippets": snippets,
        "excerpt": excerpt,
    }


HOSTILE = {
    "front matter": [
        DECISION + "\n---\nid: x\ncategory: preference\ntitle: pwned\n---",
        "---\nid: x\n---",
    ],
    "headings": [
        "## Rationale\n" + DECISION + "\n## Decision\n```\nunclosed fence",
        "# Title\n~~~\n## Steps",
    ],
    "yaml": ['title: "x"\ntags: [a, b]\nstatus: archived\n' + DECISION, "- id: y\n  key: [1, 2"],
    "control": [
        DECISION
        + "\x00 NUL \x1b[31mred\x1b[0m \x1b]8;;http://x\x07link\x1b]8;;\x07 [bold]rich[/bold] "
        "[link=http://evil]x[/link] \u202eevil",
        "\x07\x08\r\n\u2028tab\there",
    ],
    "secret": [
        f"Let's go with the key {SECRET} because password=hunter2hunter2 is simpler to rotate.",
        f"export ANTHROPIC_API_KEY={SECRET}\nThe fix is to read the token from `.env` because it is safer.",
    ],
    "huge": [(DECISION + " ") * 300_000, "x" * 10_000_000],
}


@pytest.mark.parametrize("kind", list(HOSTILE))
@pytest.mark.parametrize("category", NAMES)
def test_hostile_evidence_still_makes_a_valid_bounded_clean_draft(kind, category):
    entry = hostile_entry(*HOSTILE[kind])
    req = DraftRequest("t1", category, entry, {"session": "s-1", "turns": [1, 2]}, now=NOW)
    result = OfflineDrafter().draft(req)
    assert result.error is None, result.error
    if result.skipped:  # a decision's words state no fix: no runbook, and the reason is clean
        assert category == "runbook" and result.doc is None and len(result.skipped) < 200
        assert find_secrets(result.skipped) == [] and not re.search(
            r"[\x00-\x1f\x7f\u202e]", result.skipped
        )
        return
    doc = memfile.parse(result.text)
    assert memfile.problems(doc) == []
    assert doc.category == category and doc.id not in ("x", "y") and doc.status == "active"
    assert set(doc.sections) <= set(CATEGORIES[category].required + CATEGORIES[category].optional)
    assert len(result.text) < 8000
    assert (
        find_secrets(result.text) == []
        and SECRET not in result.text
        and "hunter2hunter2" not in result.text
    )
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\u202e\u2028]", result.text)
    # Only the document's own lines open a section or a code block.
    body_lines = doc.body.split("\n")
    headings = [ln for ln in body_lines if ln.startswith("#")]
    assert all(
        ln[3:] in CATEGORIES[category].required + CATEGORIES[category].optional for ln in headings
    ), headings
    assert not any(ln.lstrip().startswith(("```", "~~~")) for ln in body_lines)


@pytest.mark.parametrize(
    "entry",
    [
        None,
        {},
        {"snippets": "nope"},
        {"snippets": [None, 3, {"text": 5}], "excerpt": 7},
        {"snippets": [], "excerpt": "   "},
        {"snippets": [{"text": "---"}], "excerpt": "---\n---"},
    ],
)
def test_bad_entries_give_an_error_result_not_an_exception(entry):
    for category in NAMES:
        result = OfflineDrafter().draft(DraftRequest("t", category, entry, {}, now=NOW))
        assert result.doc is None and result.text == "" and result.error


def test_bad_requests_do_not_raise():
    good = hostile_entry(DECISION)
    assert (
        "unknown category"
        in OfflineDrafter().draft(DraftRequest("t", "nonsense", good, {}, now=NOW)).error
    )
    assert OfflineDrafter().draft(DraftRequest("t", None, good, {}, now=NOW)).error  # type: ignore[arg-type]
    # Odd source and weights still draft; a bad `now` is replaced by the current time and noted.
    odd = dict(
        good,
        snippets=[dict(s, turn="3", weight=float("nan"), keywords="x") for s in good["snippets"]],
    )
    result = OfflineDrafter().draft(
        DraftRequest("t", "decision", odd, {"session": 5, "turns": "x"}, now="yesterday")
    )
    assert result.error is None and memfile.problems(result.doc) == []
    assert any("not a UTC stamp" in n for n in result.notes)


def test_sentences_keep_code_abbreviations_and_files_whole():
    assert sentences(
        "Use `a. B` here. Then e.g. this. Also in (e.g. foo) cases. Edit app.py now."
    ) == ["Use `a. B` here.", "Then e.g. this.", "Also in (e.g. foo) cases.", "Edit app.py now."]
    assert sentences("it works fine. also we keep it.") == ["it works fine.", "also we keep it."]
    assert sentences("ok. also") == ["ok. also"]


# -- the interface and backend resolution ---------------------------------------------


def test_request_from_a_staged_triage_carries_model_and_evidence(tmp_path_factory):
    triage = staged_triage(DEMO, tmp_path_factory)
    req = DraftRequest.from_triage(
        triage, "decision", default_cfg(), candidates=[{"id": "x"}], now=NOW
    )
    assert (req.model_alias, req.model_id) == ("sonnet", default_cfg()["models"]["sonnet"])
    assert model_for(default_cfg(), "runbook") == ("haiku", default_cfg()["models"]["haiku"])
    assert req.snippets and req.excerpt and req.source["session"] == triage["source"]["session"]
    assert req.candidates == ({"id": "x"},) and req.triage_id == triage["id"]
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", DraftRequest("t", "decision", {}, {}).now)


def fake_claude(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "claude"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return folder


@ANTHROPIC_SDK
def test_get_drafter_resolution(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with_claude = fake_claude(tmp_path / "bin")

    d = get_drafter({"backend": "offline"}, env={})
    assert isinstance(d, OfflineDrafter) and isinstance(d, Drafter) and d.name == "offline"

    d = get_drafter({"backend": "auto"}, env={"PATH": str(empty)})
    assert (
        d.name == "offline"
        and d.reason == "backend: auto, no ANTHROPIC_API_KEY, no claude on the PATH"
    )

    d = get_drafter({"backend": "auto"}, env={"PATH": str(with_claude), "ANTHROPIC_API_KEY": "k"})
    # a key wins over the claude CLI
    assert d.name == "anthropic" and "ANTHROPIC_API_KEY set" in d.reason

    d = get_drafter({"backend": "auto"}, env={"PATH": f"{empty}{os.pathsep}{with_claude}"})
    assert (
        d.name == "claude-cli"
        and d.reason == "backend: auto, no ANTHROPIC_API_KEY, claude on the PATH"
    )
    assert d.executable == str(with_claude / "claude")

    d = get_drafter({"backend": "auto"}, env={"PATH": str(with_claude), "ANTHROPIC_API_KEY": "  "})
    assert d.name == "claude-cli" and "no ANTHROPIC_API_KEY" in d.reason  # a blank key is no key

    assert get_drafter({}, env={"PATH": str(empty)}).name == "offline"  # no backend key: auto

    d = get_drafter(
        {"backend": "anthropic"}, env={"ANTHROPIC_API_KEY": "k", "PATH": str(with_claude)}
    )
    assert d.name == "anthropic" and d.reason == "backend: anthropic, ANTHROPIC_API_KEY set"
    with pytest.raises(DrafterUnavailable, match="ANTHROPIC_API_KEY is not set"):
        get_drafter(
            {"backend": "anthropic"}, env={"ANTHROPIC_API_KEY": " ", "PATH": str(with_claude)}
        )
    d = get_drafter(
        {"backend": "claude-cli"}, env={"ANTHROPIC_API_KEY": "k", "PATH": str(with_claude)}
    )
    assert d.name == "claude-cli" and "backend: claude-cli" in d.reason
    with pytest.raises(DrafterUnavailable, match="no `claude` executable is on the PATH"):
        get_drafter({"backend": "claude-cli"}, env={"PATH": str(empty)})
    with pytest.raises(DrafterUnavailable, match="unknown backend"):
        get_drafter({"backend": "gpt"}, env={})


@ANTHROPIC_SDK
def test_get_drafter_reads_the_process_environment_by_default(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert "ANTHROPIC_API_KEY" in get_drafter({"backend": "auto"}).reason


def test_importing_drafting_loads_no_model_sdk():
    code = (
        "import sys; import memcurate.curator.drafting, memcurate.curator.drafting.offline; "
        "from memcurate.curator.drafting import get_drafter; get_drafter({'backend': 'auto'}); "
        "print([m for m in ('anthropic', 'textual', 'rich') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PATH": ""},
        check=True,
    )
    assert out.stdout.strip() == "[]"
