"""Bad offline drafts, made from real transcript text, that the drafter no longer produces or that it marks weak.

Each case quotes the session it comes from (../shared/transcripts and ../shared/transcripts-more, MIT or
Apache-2.0: see their LICENSE files). A draft a reviewer would delete (a question or a prompt as its title,
narration as its description, tracker chatter, filler in an empty section, "All 78 tests pass" as
verification) either is not produced, or carries what is wrong in `DraftResult.weak` or as an ADVISORY issue
(curator/verify/form.py), so the confidence gate holds it. The unit tests of form.py are at the end.
"""

from __future__ import annotations

import pytest
from conftest import ROOT
from test_drafting import default_cfg

from memcurate.curator.candidates import incremental as capture
from memcurate.curator.candidates import staging
from memcurate.curator.drafting import DraftRequest
from memcurate.curator.drafting.offline import NOT_STATED, TOPIC_TITLE_WEAK, OfflineDrafter
from memcurate.curator.memory import memfile
from memcurate.curator.verify import form
from memcurate.curator.verify.checks import ADVISORY, verify

NOW = "2026-11-22T10:04:00Z"
CODE_LOG = "transcripts/-Users-dain-workspace-claude-code-log-sample/"
TEMPLAR = "transcripts-more/-home-connerohnesorge-Documents-001Repos-templar/"
LINEAR = "transcripts-more/-Users-dug-linear-agent/263940d8-4431-44ba-9f77-4eb54b5f81f0.jsonl"
POOK = "transcripts-more/-home-pook/da0d9633-7f7b-4ebc-80f9-81a9c987a7df.jsonl"
SHARED = ROOT.parent / "shared"


def entry(
    *blocks: tuple[int, str, str], keywords=("decided",), reply: str = "", files: str = ""
) -> dict:
    """A triage entry as staged: each (turn, speaker, text) a snippet and an excerpt block."""
    snippets = [
        {"turn": t, "speaker": who, "weight": 2.0, "keywords": list(keywords), "text": text}
        for t, who, text in blocks
    ]
    excerpt = "\n\n".join(
        f"[turn {t} · {'tool' if who == 'tool' else who}]\n{text}" for t, who, text in blocks
    )
    if files:
        excerpt = f"[files changed] {files}\n\n" + excerpt
    if reply:
        excerpt += f"\n\n[turn {blocks[-1][0]} · assistant, last reply] {reply}"
    return {
        "score": 1.0,
        "threshold": 0.5,
        "triggered": True,
        "snippets": snippets,
        "excerpt": excerpt,
    }


def draft(category: str, e: dict):
    return OfflineDrafter().draft(
        DraftRequest("t1", category, e, {"session": "s-1", "turns": [1, 2]}, now=NOW)
    )


def advisories(result, category: str) -> set[str]:
    return {i.code for i in verify(result.text, category=category) if i.severity == ADVISORY}


# -- the cases ---------------------------------------------------------------------------


def test_a_question_and_a_prompt_never_become_the_title():
    """fe869ecb (claude-code-log): "wait, does it only run on main? i think we should run it on all push?" was
    drafted as the decision "Run it on all push": a prompt pointing at the conversation."""
    e = entry(
        (
            2,
            "user",
            "wait, does it only run on main? i think we should run it on all push? also, would you "
            "mind fixing the type issues? they don't look that bad.",
        ),
        keywords=("we should",),
    )
    for category in ("decision", "preference"):
        result = draft(category, e)
        assert result.ok, result.error
        assert form.title_flaws(result.doc.title, category) == [], result.doc.title
        assert not result.doc.title.lower().startswith(("run it", "does it", "wait"))
        assert TOPIC_TITLE_WEAK in result.weak  # no sentence states the fact: the draft says so


def test_a_session_summary_is_titled_by_what_was_done_not_by_the_opening_request():
    """fe869ecb: titled "Add a Github Action to run tests and linting" (the first prompt), described by "I've
    successfully updated the GitHub Action and fixed all the type issues" (narration)."""
    e = entry(
        (
            1,
            "user",
            "Can you please add a Github Action to run tests and linting? You can test it with `act`.",
        ),
        (2, "user", "wait, does it only run on main? i think we should run it on all push?"),
        reply="Perfect! I've successfully updated the GitHub Action and fixed all the type issues. Here's what "
        "was completed: - **Trigger**: Now runs on all pushes (not just main branch).",
        files="/w/claude-code-log/.github/workflows/ci.yml, /w/claude-code-log/claude_code_log/converter.py",
    )
    result = draft("session_summary", e)
    doc = result.doc
    assert doc.title.startswith("Updated the GitHub Action and fixed all the type issues"), (
        doc.title
    )
    assert "ci.yml" in doc.title  # the files it changed
    assert not doc.description.startswith(("I", "Perfect")) and doc.description.startswith(
        "When resuming work on"
    )
    assert "I've" not in doc.sections["Outcome"]
    assert not {"title-prompt", "title-question", "description-narration"} & advisories(
        result, "session_summary"
    )


def test_a_tracker_summary_is_not_a_tracker_id_and_not_narration():
    """ee2ab929 (templar): "Task-158 Implementation Summary I've successfully completed Task-158" as the
    MEMORY.md line."""
    e = entry(
        (1, "user", "solve backlog tasks not marked as completed see @backlog/tasks/"),
        reply="Task-158 Implementation Summary\n\nI've successfully completed **Task-158 - Add development "
        "workflow integration and tool detection (templar doctor command)**.",
        files="/w/templar/cmd/doctor.go",
    )
    result = draft("session_summary", e)
    assert result.ok
    assert form.title_flaws(result.doc.title, "session_summary") == [], result.doc.title
    assert form.description_flaws(result.doc.description) == [], result.doc.description
    assert "Task-158 Implementation Summary" not in result.doc.description


def test_task_tracker_chatter_is_dropped_and_a_draft_of_only_chatter_is_skipped():
    """8f2aa855 (templar) and 263940d8 (linear-agent): the assistant's bookkeeping about its todo list."""
    chatter = [
        (
            3,
            "assistant",
            "However, the core property-based tests are working! Let me update the TodoWrite to "
            "mark the property-based testing implementation as complete:",
        ),
        (
            4,
            "assistant",
            "Let me track my work with a todo list since this is a complex task requiring "
            "multiple fixes:",
        ),
    ]
    result = draft("tech_debt", entry(*chatter, keywords=("todo",)))
    assert result.doc is None and result.error is None and "chatter" in result.skipped
    # Beside a real statement, the chatter is not what is drafted.
    fact = (
        5,
        "user",
        "For now we leave the retry logic out of the sync client because the API has no idempotency "
        "keys yet.",
    )
    result = draft("tech_debt", entry(*chatter, fact, keywords=("todo", "for now")))
    assert (
        result.ok
        and "todo" not in result.text.lower()
        and "retry logic" in result.doc.title.lower()
    )


def test_a_reason_the_session_never_gave_is_said_and_listed_weak_not_filled():
    """263940d8 (linear-agent): the old Rationale quoted the request back ("No reason was stated beyond…")."""
    e = entry(
        (
            3,
            "user",
            "Use the debug-specialist agent to implement the pagination fix in the Linear client.",
        ),
        keywords=("use",),
    )
    result = draft("decision", e)
    assert result.ok
    assert result.doc.sections["Rationale"] == NOT_STATED
    assert "Rationale: no reason stated in the session" in result.weak
    # so a person's empty edit is flagged too
    assert "section-vacuous" in advisories(result, "decision")


def test_a_runbook_with_no_fix_is_skipped_not_told_to_find_what_changed():
    """da0d9633 (loopkit): Steps "Find what changed before `KeyError: slice(None, 8000, None)` went away" and
    Verification "All 78 tests pass."."""
    e = entry(
        (1, "tool", "error, then fixed: KeyError: slice(None, 8000, None)"),
        (5, "assistant", "All 78 tests pass."),
        keywords=("error-fix", "tests pass"),
    )
    result = draft("runbook", e)
    assert result.doc is None and result.skipped and "runbook" in result.skipped


def test_tests_pass_is_not_a_verification():
    """da0d9633: a fix stated, but its check only "All 78 tests pass.": the draft is weak there."""
    e = entry(
        (1, "tool", "error, then fixed: KeyError: slice(None, 8000, None)"),
        (
            4,
            "assistant",
            "Fixed by converting the deque to a list before slicing it in `trim_history`.",
        ),
        (5, "assistant", "All 78 tests pass."),
        keywords=("error-fix", "fixed by", "tests pass"),
    )
    result = draft("runbook", e)
    assert result.ok and "deque to a list" in result.doc.sections["Steps"]
    assert any(w.startswith("Verification:") for w in result.weak), result.weak
    assert "verification-bare" in advisories(result, "runbook")


def test_fragment_and_label_titles_are_repaired_or_replaced():
    """9fa9888f (attio-mcp-server): "Impact: Users may encounter permission denied errors" and 8f2aa855
    (templar): "With an empty message causing the parsing to fail"."""
    e = entry(
        (
            2,
            "assistant",
            "Impact: Users may encounter permission denied errors when the token lacks the "
            "records:read scope.",
        ),
        keywords=("denied",),
    )
    result = draft("constraint", e)
    assert result.ok and not result.doc.title.startswith("Impact:"), result.doc.title
    assert form.title_flaws(result.doc.title, "constraint") == []


# -- round two: status titles, error messages as facts, topic words, other languages, dangling descriptions --

DEMO_LAST_REPLY = (
    "Nothing pushed. `auth/jwt-login` has six commits on top of `trunk`: login with JWT access tokens, "
    "protected `/v1/projects` routes, offline tests, one 401 message, a startup check for `JWT_SECRET`, "
    "and the client docs.\n\nLeft for next time:\n\n1. Rotate the summarizer key and the database "
    "password, then open the PR against `trunk`."
)


def test_a_session_summary_is_not_titled_by_a_status_fragment_or_a_list():
    """The bundled demo (assets/demo/session.jsonl, the first thing a new user sees) saved "Nothing pushed.
    `auth/jwt-login` has six commits on top of `trunk`: login with JWT access tokens"; db6a437a (templar) was
    titled by the progress report "All the Go code builds successfully now"."""
    e = entry(
        (1, "user", "I want to add login to acme-api today."),
        reply=DEMO_LAST_REPLY,
        files="/w/acme-api/app/auth.py, /w/acme-api/app/routes/projects.py",
    )
    title = draft("session_summary", e).doc.title
    assert (
        not title.startswith("Nothing pushed") and "`" not in title and "six commits" not in title
    ), title
    assert title.startswith("Login with JWT access tokens and protected /v1/projects routes"), title
    e = entry(
        (
            1,
            "user",
            'fix nix develop -c "lint" returning warnings and errors by solving issues, without being '
            "lazy",
        ),
        reply="All the Go code builds successfully now. I fixed all the linting warnings and errors that were "
        "solvable.",
        files="/w/templar/analyze_deps.go",
    )
    title = draft("session_summary", e).doc.title
    assert title.startswith("Fixed all the linting warnings and errors"), title


def test_an_error_message_or_a_progress_report_is_not_the_fact():
    """6706089d (attio-mcp-server): the constraint was titled by the pasted "Error: This request has been
    automatically failed"; 04c2be8b (Shrooms): by "Firmware downloaded. pip3 is blocked by macOS PEP 668"."""
    e = entry(
        (
            5,
            "user",
            "Error: This request has been automatically failed because it uses a deprecated version of "
            "`actions/upload-artifact: v3`. why do u think?",
        ),
        (
            5,
            "assistant",
            "The CI/CD failure is not due to the test code but because the GitHub Actions workflow "
            "is using a deprecated version of `actions/upload-artifact: v3`. GitHub deprecated v3 "
            "of artifact actions in April 2024.",
        ),
        keywords=("deprecated",),
    )
    title = draft("constraint", e).doc.title
    assert not title.lower().startswith("error"), title
    e = entry(
        (
            1,
            "assistant",
            "Firmware downloaded. pip3 is blocked by macOS PEP 668. Let me use pipx or a venv "
            "instead.",
        ),
        keywords=("blocked by",),
    )
    result = draft("constraint", e)
    assert result.doc.title == "pip3 is blocked by macOS PEP 668", result.doc.title
    assert "Firmware downloaded" not in result.doc.sections["Rule"]


def test_a_topic_title_names_the_subject_not_verbs_or_the_category():
    """9fa9888f (attio-mcp-server) drafted "Decision on decision" from the heading "## What We're NOT Doing";
    fafb1fb2 (10-box-os) "Preference about modify and rest" from "let's use this one instead and modify the rest
    accordingly": no statement and no subject, so nothing is drafted. 89488521 (claude-code-log) was titled
    "Decision on html and tui" though its sentence states the decision."""
    result = draft(
        "decision",
        entry((0, "assistant", "## What We're NOT Doing"), keywords=("we're not doing",)),
    )
    assert result.doc is None and result.skipped, result.doc and result.doc.title
    result = draft(
        "preference",
        entry(
            (4, "user", "let's use this one instead and modify the rest accordingly"),
            keywords=("let's use",),
        ),
    )
    assert result.doc is None and result.skipped, result.doc and result.doc.title
    result = draft(
        "decision",
        entry(
            (
                1,
                "user",
                "we have cache so we should change TUI that it launches the session "
                "HTML page rather than regenerating it.",
            ),
            keywords=("we should",),
        ),
    )
    assert result.doc.title.startswith("Change TUI that it launches the session HTML page"), (
        result.doc.title
    )
    assert TOPIC_TITLE_WEAK not in result.weak


def test_a_topic_title_and_description_name_nouns_and_identifiers():
    """fe869ecb's decision and the demo's "When working on prefer and small": topic words were verbs and adjectives."""
    from memcurate.curator.drafting.offline.finishing import topic

    texts = ["I prefer small commits, one logical change each."]
    assert topic(["prefer", "small", "commits", "logical"], "preference", texts) == "commits"
    texts = ["Take the least nested path first, but take the latest if there are equal depths."]
    assert "take" not in topic(
        ["take", "least", "nested", "path", "latest", "equal"], "decision", texts
    )


def test_evidence_in_another_language_gives_no_garbage_title():
    """120ec635 (AI-Projects, an Italian session): "Prima raccolgo i fatti read-only necessari …, poi entro in Plan
    Mode" (narration: "first I gather the facts") became a constraint; "Niente hack su keybindings.json" a tech
    debt titled in Italian beside an English statement of it."""
    e = entry(
        (
            20,
            "assistant",
            "Decisione presa. Pianifico. Prima raccolgo i fatti read-only necessari (fork target, "
            "stato clone+patch, riferimenti Hermes in pocket-llm), poi entro in Plan Mode con un "
            "piano concreto.",
        ),
        (
            17,
            "user",
            "- **Model switch overhead**: `hermes model` requires interactive TTY + cache refresh; "
            "can't script it.",
        ),
        keywords=("requires",),
    )
    result = draft("constraint", e)
    assert "raccolgo" not in result.text and "hermes" in result.doc.title.lower(), result.doc.title
    e = entry(
        (
            12,
            "assistant",
            "Niente hack su keybindings.json (non l'ho scritto, è intatto). Il fix giusto è "
            "**dentro jcode**.",
        ),
        keywords=("hack",),
    )
    result = draft("tech_debt", e)
    assert result.doc is None or (
        "niente" not in result.doc.title.lower() and "niente" not in result.doc.tags
    ), result.doc.title
    e = entry(
        (
            22,
            "user",
            "for a possible future publication, please put all fix names, titles, and descriptions "
            "in English",
        ),
        reply="Push fatto. Audit finale GitHub (titoli PR + residui italiani nel fork).",
        files="/Users/r/AI Projects/jcode/PATCHES.md, /Users/r/AI Projects/pocket-llm/jcode/AGENTS.md",
    )
    doc = draft("session_summary", e).doc
    assert (
        "finale" not in doc.title and "finale" not in doc.description and "PATCHES.md" in doc.title
    ), doc.title
    assert form.is_chatter("Prima raccolgo i fatti read-only necessari, poi entro in Plan Mode.")
    assert form.is_chatter("Push fatto.")
    assert form.is_foreign("Niente hack su keybindings.json (non l'ho scritto, è intatto).")
    assert not form.is_foreign("Use JWT with HS256, signed with a secret from the environment.")


def test_a_description_is_readable_on_its_own():
    """The demo's preference was described "When working on email and login: otherwise anyone can find out which
    emails have an account": a reason clause cut from its sentence."""
    e = entry(
        (
            8,
            "user",
            "I'd rather login answered 401 with the same message whether the email is unknown or the "
            "password is wrong, otherwise anyone can find out which emails have an account.",
        ),
        keywords=("i'd rather",),
    )
    desc = draft("preference", e).doc.description
    assert ": otherwise" not in desc and "401" in desc, desc
    e = entry(
        (
            7,
            "user",
            "I prefer small commits, one logical change each, so that any of them can be reverted on "
            "its own: the dependency, the auth module and routes, the test setup.",
        ),
        keywords=("i prefer",),
    )
    desc = draft("preference", e).doc.description
    assert ": so that" not in desc and "prefer and small" not in desc, desc


@pytest.mark.skipif(
    not (SHARED / "transcripts").is_dir() or not (SHARED / "transcripts-more").is_dir(),
    reason=f"real transcripts not found in {SHARED} (they sit beside the checkout in CI)",
)
def test_no_real_session_gets_a_title_or_description_a_reviewer_would_delete(tmp_path_factory):
    """Every triggered category of every session in both folders: a title that states a fact (or one named
    from the topic, listed weak) and a description that is not narration; whatever the drafter could not
    state is in `weak`, never filler."""
    drafted = skipped = 0
    for path in sorted((SHARED / "transcripts").rglob("*.jsonl")) + sorted(
        (SHARED / "transcripts-more").rglob("*.jsonl")
    ):
        if path.name.startswith("agent-") or "subagents" in path.parts:
            continue
        data = tmp_path_factory.mktemp("data")
        report = capture.capture(
            str(data), default_cfg(), str(path), event="backfill", summary=True
        )
        if not report["triage"]:
            continue
        triage = staging.load_triage(str(data), report["triage"])
        for category, e in triage["categories"].items():
            if not e.get("triggered"):
                continue
            result = OfflineDrafter().draft(
                DraftRequest.from_triage(triage, category, default_cfg(), now=NOW)
            )
            if result.skipped:
                skipped += 1
                continue
            assert result.ok, (path.name, category, result.error)
            doc = result.doc
            where = (path.name, category, doc.title, doc.description)
            assert form.title_flaws(doc.title, category) == [], where
            assert form.description_flaws(doc.description) == [], where
            for name, text in doc.sections.items():
                if text.startswith(NOT_STATED):
                    assert any(w.startswith(f"{name}:") for w in result.weak), (where, name)
                assert not [
                    f
                    for f in form.section_flaws(category, name, text)
                    if f.code == "section-chatter"
                ], (where, name, text)
            drafted += 1
    assert drafted > 40 and skipped < drafted / 5


# -- form.py -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "title, code",
    [
        ("Does it only run on main?", "title-question"),
        ("How should the cache be invalidated", "title-question"),
        ("Can you please add a Github Action to run tests and linting", "title-prompt"),
        ("Run it on all push", "title-prompt"),
        ("Use this one instead and modify the rest accordingly", "title-prompt"),
        ("Review https://github.com/kesslerio/attio-mcp-server/pull/398", "title-prompt"),
        ("I'm not sure what scanners do we need for this", "title-first-person"),
        ("We've just done a big refactoring", "title-first-person"),
        ("Task-158", "title-tracker-id"),
        ("Fix #395", "title-tracker-id"),
        ("The deadnix issue is now fixed", "title-progress"),
        ("All 49 tests pass", "title-progress"),
        ("With an empty message causing the parsing to fail", "title-fragment"),
        ("Key finding: The planning audit discovered a live crisis", "title-fragment"),
        ("The UserService is worth implementing, especially", "title-fragment"),
    ],
)
def test_form_names_what_is_wrong_with_a_title(title, code):
    assert code in {f.code for f in form.title_flaws(title)}


def test_a_session_summary_titled_by_its_request_is_a_prompt():
    assert "title-prompt" in {
        f.code
        for f in form.title_flaws("Solve open github issues and close them", "session_summary")
    }
    assert form.title_flaws("Solve open github issues and close them", "decision") == []


@pytest.mark.parametrize(
    "title",
    [
        "Use JWT for API authentication",
        "Set group.visible using the vis library",
        "`cycle` is a property, not a method in the Linear SDK",
        "Updated the GitHub Action and fixed all the type issues (ci.yml, converter.py)",
        "Summarizer tests must stay skipped in CI",
        "Fix KeyError: slice(None, 8000, None)",
        "Prima raccolgo i fatti read-only necessari",  # "i" is Italian here, not a first person
    ],
)
def test_form_leaves_a_title_that_states_a_fact(title):
    assert (
        form.title_flaws(title, "session_summary" if title.startswith("Updated") else "decision")
        == []
    )


@pytest.mark.parametrize(
    "sentence",
    [
        "Now let me run the tests.",
        "All 78 tests pass.",
        "Done!",
        "Perfect! Both fixes are now complete.",
        "Let me update the TodoWrite to mark the property-based testing implementation as complete:",
        "Marking task 3 complete.",
        "[Request interrupted by user for tool use]",
        "Thanks!",
    ],
)
def test_chatter(sentence):
    assert form.is_chatter(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The token is verified with the public key, so any API instance can check it.",
        "Fixed possibly-unbound-attribute warning: added a null check before `cached_data.version`.",
        "Refresh tokens are left for later because the mobile team needs them first.",
    ],
)
def test_not_chatter(sentence):
    assert not form.is_chatter(sentence)


def test_sections_that_say_nothing_or_only_chatter_are_flagged():
    assert [
        f.code for f in form.section_flaws("decision", "Rationale", "Not stated in the session.")
    ] == ["section-vacuous"]
    assert [f.code for f in form.section_flaws("decision", "Rationale", "N/A")] == [
        "section-vacuous"
    ]
    assert "section-chatter" in {
        f.code
        for f in form.section_flaws(
            "decision", "Decision", "Now let me update the todo list. (the assistant, turn 3)"
        )
    }
    steps = "1. Find what changed before `KeyError` went away."
    assert "steps-investigation" in {f.code for f in form.section_flaws("runbook", "Steps", steps)}
    assert "verification-bare" in {
        f.code for f in form.section_flaws("runbook", "Verification", "All 78 tests pass.")
    }
    assert (
        form.section_flaws(
            "runbook", "Verification", "`pytest tests/test_cache.py` passes: 78 passed."
        )
        == []
    )
    assert form.section_flaws("decision", "Rationale", "Any API instance can verify a token.") == []


def test_verify_reports_form_flaws_as_advisory_for_any_drafter():
    """A Claude draft or a person's edit is held to the same form: ADVISORY, never BLOCK."""
    doc = memfile.MemoryDoc(
        id="x",
        category="decision",
        title="Can you use JWT?",
        description="I've successfully switched to JWT",
        tags=["jwt"],
        created=NOW,
        updated=NOW,
        sources=[{"session": "s"}],
        body="## Decision\nUse JWT.\n\n## Rationale\nN/A\n",
    )
    issues = verify(memfile.render(doc), category="decision")
    codes = {i.code: i.severity for i in issues}
    assert codes.get("title-prompt") == codes.get("title-question") == ADVISORY
    assert (
        codes.get("description-narration") == ADVISORY and codes.get("section-vacuous") == ADVISORY
    )
    assert not [i for i in issues if i.severity == "BLOCK"]
