"""A draft's confidence (curator/verify/confidence.py): each factor moves the value the way its why says.

Each test changes ONE input of a base draft and checks the value moves in the stated direction, with
the factor named and explained; the value stays in 0..1 however many factors pile up.
"""

from __future__ import annotations

import pytest

from memcurate.curator.drafting.prompt import stated_confidence
from memcurate.curator.verify.checks import ADVISORY, BLOCK, Issue
from memcurate.curator.verify.confidence import WEIGHTS, assess, pulled_down, specifics

SNIPPET = {
    "turn": 3,
    "speaker": "user",
    "keywords": ["let's go with"],
    "text": "Let's go with JWT access tokens: sessions would need a table.",
}
BODY = "## Decision\nUse JWT access tokens (15 minutes) signed with `JWT_SECRET`.\n\n## Rationale\nNo session table."


def conf(**change) -> dict:
    args = {
        "category": "decision",
        "entry": {"score": 0.75, "threshold": 0.5, "snippets": [SNIPPET]},
        "body": BODY,
        "action": "create",
        "sources": 1,
        "issues": [],
        "weak": [],
        "model_confidence": None,
    }
    args.update(change)
    return assess(**args)


def factor(result: dict, name: str) -> dict:
    (f,) = [f for f in result["factors"] if f["name"] == name]
    return f


def entry(**change) -> dict:
    return {"score": 0.75, "threshold": 0.5, "snippets": [SNIPPET], **change}


def test_a_stronger_triage_score_raises_it_and_a_score_at_the_threshold_lowers_it():
    weak, strong = conf(entry=entry(score=0.5)), conf(entry=entry(score=1.0))
    assert weak["value"] < conf()["value"] < strong["value"]
    assert factor(weak, "evidence")["effect"] < 0 < factor(strong, "evidence")["effect"]
    assert "triage score 0.50 against the threshold 0.50" in factor(weak, "evidence")["why"]


def test_more_agreeing_snippets_cues_and_speakers_raise_it():
    more = [
        SNIPPET,
        {"turn": 4, "speaker": "assistant", "keywords": ["decided"], "text": "Decided: JWT it is."},
    ]
    alone, agreeing = conf(), conf(entry=entry(snippets=more))
    assert agreeing["value"] > alone["value"]
    assert (
        factor(alone, "agreement")["effect"] < 0
        and "nothing else points at it" in factor(alone, "agreement")["why"]
    )
    assert (
        "2 snippet(s), 2 distinct cue(s), 2 speaker(s) agree"
        == factor(agreeing, "agreement")["why"]
    )


def test_the_users_own_words_raise_it_and_the_assistants_alone_lower_a_decision():
    said = dict(SNIPPET, speaker="assistant")
    user, assistant = conf(), conf(entry=entry(snippets=[said]))
    assert user["value"] > assistant["value"]
    assert factor(user, "user's words")["why"] == "the user said it (turn 3)"
    assert factor(assistant, "user's words")["effect"] < 0
    # a fix is as often the assistant's to state: no penalty for a runbook
    assert not [
        f
        for f in conf(category="runbook", entry=entry(snippets=[said]))["factors"]
        if f["name"] == "user's words"
    ]
    # what only a parent agent's prompt to a subagent says is context handed down, for any category
    parent = conf(category="constraint", entry=entry(snippets=[dict(SNIPPET, speaker="parent")]))
    assert (
        factor(parent, "user's words")["effect"] < 0
        and "parent agent" in factor(parent, "user's words")["why"]
    )


def test_paths_commands_identifiers_and_numbers_raise_it_and_a_generic_body_lowers_it():
    generic = conf(
        body="## Decision\nUse the better approach.\n\n## Rationale\nIt is better (the user, turn 3)."
    )
    assert generic["value"] < conf()["value"]
    assert factor(generic, "specificity")["effect"] < 0  # a turn reference is no specific fact
    assert factor(conf(), "specificity")["effect"] > 0
    assert specifics(
        "Edit src/app.py, run `pytest -x` with --debug; MAX_SIZE is 42, see get_name and v3.12"
    ) == ["src/app.py", "`pytest -x`", "--debug", "MAX_SIZE", "42", "get_name", "v3.12"]
    # a preference is often general ("small commits, one change each"): no penalty there
    assert not [
        f
        for f in conf(category="preference", body="## Preference\nSmall commits.")["factors"]
        if f["name"] == "specificity"
    ]


@pytest.mark.parametrize("action, sources", [("update", 1), ("noop", 1), ("create", 3)])
def test_a_fact_seen_again_raises_it(action, sources):
    again = conf(action=action, sources=sources)
    assert (
        again["value"] > conf()["value"] and factor(again, "repeats")["effect"] == WEIGHTS["repeat"]
    )


def test_each_weak_line_of_the_drafter_lowers_it_and_says_what():
    one = conf(weak=["Rationale: no reason stated in the session"])
    two = conf(weak=["Rationale: no reason stated in the session", "title: made from the topic"])
    assert conf()["value"] > one["value"] > two["value"]
    assert [f["why"] for f in two["factors"] if f["name"] == "weak"] == [
        "Rationale: no reason stated in the session",
        "title: made from the topic",
    ]


def test_each_advisory_lowers_it_but_what_has_a_factor_of_its_own_counts_once():
    question = Issue(ADVISORY, "form", "title", "the title is a question")
    asked = conf(issues=[question])
    assert asked["value"] < conf()["value"]
    assert factor(asked, "advisory")["why"] == "form (title): the title is a question"
    assert (
        conf(issues=[question, Issue(ADVISORY, "unsupported", "body", "x")])["value"]
        < asked["value"]
    )
    # the weak-score advisory is the evidence factor; a fallback model's draft is no defect
    low = Issue(ADVISORY, "low-score", "triage", "weak evidence")
    haiku = Issue(ADVISORY, "fallback", "drafting", "drafted by haiku after sonnet failed")
    assert conf(issues=[low, haiku])["value"] == conf()["value"]


def test_an_offline_fallback_under_a_claude_backend_and_a_block_lower_it():
    offline = conf(
        issues=[
            Issue(ADVISORY, "offline-fallback", "drafting", "drafted offline after sonnet failed")
        ]
    )
    blocked = conf(
        issues=[Issue(BLOCK, "section", "## Rationale", "## Rationale required section is missing")]
    )
    assert factor(offline, "offline fallback")["effect"] == WEIGHTS["offline_fallback"]
    assert blocked["value"] < offline["value"] < conf()["value"]


def test_the_models_own_confidence_is_one_weighted_factor_among_the_others():
    sure, unsure, middling = (
        conf(model_confidence=1.0),
        conf(model_confidence=0.0),
        conf(model_confidence=0.5),
    )
    assert unsure["value"] < middling["value"] == conf()["value"] < sure["value"]
    assert factor(sure, "model")["effect"] == pytest.approx(WEIGHTS["model"])
    assert factor(sure, "model")["why"] == "the drafting model rated its draft 1.00"
    # a model sure of a draft the facts do not support does not carry it
    assert (
        conf(model_confidence=1.0, weak=["Rationale: none stated"], entry=entry(score=0.5))["value"]
        < 0.75
    )


def test_the_value_stays_within_0_and_1_and_what_pulled_it_down_comes_strongest_first():
    worst = conf(
        issues=[Issue(BLOCK, "secret", "body", "a secret")] * 3,
        weak=["x"] * 5,
        model_confidence=0.0,
    )
    best = conf(
        entry=entry(
            score=1.0, snippets=[SNIPPET, dict(SNIPPET, turn=5, keywords=["decided", "chose"])]
        ),
        action="update",
        model_confidence=1.0,
    )
    assert worst["value"] == 0.0 and best["value"] == 1.0
    down = pulled_down(
        conf(weak=["Rationale: none"], issues=[Issue(ADVISORY, "form", "title", "a question")])
    )
    assert [f["name"] for f in down] == ["advisory", "weak", "agreement"]  # -0.25, -0.15, -0.05


@pytest.mark.parametrize(
    "given, read",
    [
        (0.8, 0.8),
        (1, 1.0),
        (0, 0.0),
        (1.5, None),
        (-0.1, None),
        ("high", None),
        (True, None),
        (None, None),
        (float("nan"), None),
    ],
)
def test_a_models_stated_confidence_is_a_number_from_0_to_1_or_none(given, read):
    assert stated_confidence(given) == read


def test_a_gap_the_drafter_lists_and_verification_flags_counts_once():
    """A "Not stated" Rationale is the drafter's weak line and form's vacuous-section advisory: one gap."""
    weak = ["Rationale: no reason stated in the session"]
    vacuous = Issue(ADVISORY, "section-vacuous", "## Rationale", "Rationale states nothing")
    both = conf(weak=weak, issues=[vacuous])
    assert both["value"] == conf(issues=[vacuous])["value"] < conf(weak=weak)["value"]
    assert [f["name"] for f in both["factors"]].count("weak") == 0
    other = Issue(ADVISORY, "section-vacuous", "## Alternatives", "Alternatives states nothing")
    # another section: both count
    assert conf(weak=weak, issues=[other])["value"] < conf(issues=[other])["value"]


def test_an_offline_quote_that_does_not_state_its_category_lowers_it():
    """The offline drafter quotes the session: a Decision quoting no way a choice is said is likely the
    sentence beside the choice. Only the cues given (an offline draft's own text) are checked."""
    cues = ["let's go with", "instead of", "decided"]
    chose = "## Decision\nLet's go with JWT instead of sessions (the user, turn 3)\n\n## Rationale\nNo table."
    beside = "## Decision\nThe tests took 3 seconds (the user, turn 3)\n\n## Rationale\nNo table."
    assert not [f for f in conf(body=chose, cues=cues)["factors"] if f["name"] == "fit"]
    assert factor(conf(body=beside, cues=cues), "fit")["effect"] < 0
    # no cues given: not checked
    assert conf(body=beside, cues=cues)["value"] < conf(body=beside)["value"]
    runbook = (
        "## Symptom\nE   AssertionError (the user, turn 3)\n\n## Steps\n1. x\n\n## Verification\ny"
    )
    assert not [
        f
        for f in conf(category="runbook", body=runbook, cues=cues)["factors"]
        if f["name"] == "fit"
    ]


def test_whose_words_the_statement_quotes_counts_not_who_else_spoke():
    """A user snippet in the evidence does not make the assistant's (or a parent agent's) quoted sentence
    the user's word."""
    user_said = conf(body="## Decision\nUse JWT (the user, turn 3)\n\n## Rationale\nNo table.")
    assistant_said = conf(
        body="## Decision\nUse JWT (the assistant, turn 4)\n\n## Rationale\nNo table."
    )
    parent_said = conf(
        body="## Decision\nUse JWT (the parent agent, turn 1)\n\n## Rationale\nNo table."
    )
    assert factor(user_said, "user's words")["effect"] > 0
    assert factor(assistant_said, "user's words")["effect"] < 0  # a decision is the user's to state
    assert (
        factor(parent_said, "user's words")["effect"]
        < factor(assistant_said, "user's words")["effect"]
    )
