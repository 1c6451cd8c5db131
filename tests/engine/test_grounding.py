"""A look's draft is judged on the entries it cites (issue 23): grounding, not word overlap.

The second look hands each fact to its draft with the digest entries it rests on (entry `look`,
`snippets` with their digest kind, the entries whole as the excerpt). A draft that says the fact in its
own words is supported when its names, numbers, paths and commands are in those entries; one that names
what they do not is flagged, and the model's rating of it earns nothing. Credit for the user's words comes
only from what the person typed or decided, never from pasted logs, templated prompts or notifications.
"""

from __future__ import annotations

from memcurate.curator.memory import memfile
from memcurate.curator.verify.checks import verify
from memcurate.curator.verify.confidence import WEIGHTS, assess, grounding, pasted

NOW = "2026-11-27T10:00:00Z"
GATE = 0.8  # auto_approve.min_confidence's default
RULE = (
    "The ESP32 cannot negotiate 5 GHz, so it never joins the combined SSID. Create a 2.4 GHz-only network "
    "and flash the firmware with ESPHome 2025.9.0 again."
)
PARAPHRASE = (
    "Shrooly boxes need a dedicated 2.4 GHz SSID: ESP32 radios do not speak 5 GHz and drop out silently. "
    "Build images using ESPHome 2025.9.0."
)
WHY = "**Why:** it falls back to access-point mode on a mixed network.\n**How to apply:** configure the 2.4 GHz SSID."


def entry(
    *cited: tuple[int, str, str, str],
    statement: str = "The Shrooly needs a 2.4 GHz network.",
    confidence: float = 0.8,
    excerpt: bool = True,
) -> dict:
    """A look's triage entry as second_look._entry builds it: (n, kind, who, text) per cited entry."""
    labels = {
        "user": "user:",
        "assistant": "assistant:",
        "answer": "user answered:",
        "command": "user command:",
        "plan": "plan approved:",
        "queued": "user (queued):",
        "report": "assistant (end of turn):",
    }
    return {
        "score": None,
        "signals": {"second_look": True},
        "why": statement,
        "turns": [n for n, *_ in cited],
        "entries": [n for n, *_ in cited],
        "look": {
            "statement": statement,
            "why": "",
            "how_to_apply": "",
            "entries": [n for n, *_ in cited],
            "confidence": confidence,
        },
        "snippets": [
            {
                "turn": n,
                "speaker": who,
                "kind": kind,
                "weight": 1.0,
                "keywords": [],
                "text": " ".join(text.split())[:300],
            }
            for n, kind, who, text in cited
        ],
        "excerpt": "\n".join(f"[{n}] {labels[kind]} {text}" for n, kind, who, text in cited)
        if excerpt
        else "",
    }


def draft(
    fact: str,
    category: str = "constraint",
    why: str = WHY,
    title: str = "The Shrooly needs a 2.4 GHz network",
) -> str:
    first, second = {
        "constraint": ("Rule", "Impact"),
        "decision": ("Decision", "Rationale"),
        "preference": ("Preference", "Reason"),
    }[category]
    doc = memfile.MemoryDoc(
        id="the-fact",
        category=category,
        title=title,
        description="ESP32 devices need a 2.4 GHz network",  # one recall can pick by
        tags=["esp32"],
        created=NOW,
        updated=NOW,
        body=f"## {first}\n{fact}\n\n## {second}\n{why}",
    )
    return memfile.render(doc)


def judged(
    text: str, e: dict, category: str = "constraint", model: float | None = 0.8
) -> tuple[list, dict]:
    """(verification's issues, the confidence) of a draft, as pipeline.settle makes them."""
    evidence = "\n".join([e.get("excerpt", "")] + [s["text"] for s in e["snippets"]])
    issues = verify(text, category=category, evidence=evidence, entry=e)
    doc = memfile.parse(text)
    return issues, assess(
        category=category,
        entry=e,
        body=doc.body,
        action="create",
        issues=issues,
        model_confidence=model,
        title=doc.title,
        description=doc.description,
    )


def factor(conf: dict, name: str) -> dict:
    (f,) = [f for f in conf["factors"] if f["name"] == name]
    return f


def codes(issues) -> set[str]:
    return {i.code for i in issues}


ASSISTANT = (4, "report", "assistant", RULE)


def test_a_faithful_paraphrase_of_the_cited_entry_is_supported_and_the_models_rating_carries_it_past_the_gate():
    e = entry(ASSISTANT)
    issues, conf = judged(draft(PARAPHRASE), e)
    assert "unsupported" not in codes(issues)
    assert factor(conf, "grounding")["effect"] == WEIGHTS["grounded"]
    assert "specific item(s) are in the cited entries" in factor(conf, "grounding")["why"]
    # the issue's well-grounded constraint rated 0.80 ended at 0.39, held
    assert conf["value"] >= GATE
    # the same paraphrase as a keyword excerpt's draft (no look) is checked as before: by word overlap, its
    # snippets counted as agreement and the user's words, the model's rating weighed ±WEIGHTS["model"]
    keyword = {
        "score": 0.9,
        "threshold": 0.5,
        "excerpt": RULE,
        "snippets": [{"turn": 2, "speaker": "user", "keywords": ["must"], "text": RULE}],
    }
    issues, conf = judged(draft(PARAPHRASE), keyword)
    assert "unsupported" in codes(issues) and not [
        f for f in conf["factors"] if f["name"] == "grounding"
    ]
    assert factor(conf, "agreement") and factor(conf, "user's words")["effect"] == WEIGHTS["user"]
    assert factor(conf, "model")["effect"] == round(WEIGHTS["model"] * 0.6, 3)


def test_a_model_unsure_of_its_grounded_draft_is_believed_and_stays_below_the_gate():
    e = entry(ASSISTANT)
    sure, unsure = (
        judged(draft(PARAPHRASE), e, model=0.9)[1],
        judged(draft(PARAPHRASE), e, model=0.45)[1],
    )
    assert factor(unsure, "model")["effect"] < 0 < factor(sure, "model")["effect"]
    # the issue's draft rated 0.45 reached 0.82 and was saved
    assert unsure["value"] < GATE <= sure["value"]
    assert sure["value"] - unsure["value"] >= 0.3  # the rating carries real weight


def test_an_invented_path_or_number_is_flagged_and_the_models_confidence_earns_nothing():
    e = entry(ASSISTANT)
    invented = PARAPHRASE + " Its settings live in `config/wifi_24.yaml`, retried 12 times."
    issues, conf = judged(draft(invented), e, model=0.95)
    (issue,) = [i for i in issues if i.code == "unsupported"]
    assert "config/wifi_24.yaml" in issue.message and "12" in issue.message
    assert (
        factor(conf, "grounding")["effect"] < 0
        and "config/wifi_24.yaml" in factor(conf, "grounding")["why"]
    )
    assert (
        factor(conf, "model")["effect"]
        < judged(draft(PARAPHRASE), e, model=0.95)[1]["factors"][-1]["effect"]
    )
    assert conf["value"] < GATE
    # the same advisory is counted once: by the grounding factor, not again as an advisory
    assert not [f for f in conf["factors"] if f["name"] == "advisory"]


def test_cited_entries_missing_from_the_evidence_ground_nothing():
    e = entry(ASSISTANT, excerpt=False)
    e["snippets"] = []  # the record says [4] was cited; nothing of it reached the draft
    issues, conf = judged(draft(PARAPHRASE), e)
    assert (
        "unsupported" in codes(issues)
        and "[4]" in [i for i in issues if i.code == "unsupported"][0].message
    )
    assert factor(conf, "grounding")["effect"] == WEIGHTS["cited_missing"]
    assert grounding(e, PARAPHRASE).share == 0.0


def test_a_looks_snippets_earn_no_agreement_and_the_opening_prompt_no_users_words():
    # the look cites three messages of one turn; counting them as agreeing cues was +0.10 unearned
    e = entry(
        ASSISTANT,
        (5, "assistant", "assistant", "The ESP32 fails silently on 5 GHz."),
        (6, "assistant", "assistant", "Flashed with ESPHome 2025.9.0."),
    )
    _, conf = judged(draft(PARAPHRASE), e)
    assert not [f for f in conf["factors"] if f["name"] == "agreement"]
    assert not [f for f in conf["factors"] if f["name"] == "user's words"]  # no user entry is cited


def test_users_words_only_for_what_the_person_typed_or_decided():
    decision = "Use Redis for the job queue: it already runs in production."
    text = draft(decision, "decision", title="The job queue uses Redis")
    answered = entry(
        (
            3,
            "answer",
            "user",
            '"Which queue backend?"="Redis" (chosen: Redis: already in production)',
        ),
        statement=decision,
    )
    _, conf = judged(text, answered, "decision")
    assert factor(conf, "user's words")["effect"] == WEIGHTS["user"]
    assert "answer" in factor(conf, "user's words")["why"]
    # an approved plan is long and structured by nature: still the person's decision, not pasted text
    plan = (
        "# Plan: Redis queue\n\n## Context\n"
        + "\n".join(f"- step {i}: use Redis for job {i}" for i in range(40))
        + "\n\n## Steps\n1. add Redis\n\n## Verification\nrun the tests"
    )
    assert (
        factor(
            judged(text, entry((3, "plan", "user", plan), statement=decision), "decision")[1],
            "user's words",
        )["effect"]
        == WEIGHTS["user"]
    )

    log = "\n".join(
        f"2026-06-0{i % 9 + 1} 10:0{i % 10}:00 [INFO] redis queue worker {i} started    pid={i}"
        for i in range(12)
    )
    templated = (
        "<command-name>/deploy</command-name> <command-args>redis</command-args> "
        "Deploy with Redis as the queue."
    )
    notice = "<task-notification> Task 6 finished: the Redis queue is in production. </task-notification>"
    for kind, said, what in [
        ("user", log, "pasted text"),
        ("command", templated, "a templated prompt"),
        ("user", notice, "a notification"),
    ]:
        _, conf = judged(text, entry((3, kind, "user", said), statement=decision), "decision")
        f = factor(conf, "user's words")
        assert f["effect"] == WEIGHTS["assistant_only"] and what in f["why"], (kind, f)
    assert pasted(log) and not pasted(plan.split("## Steps")[0][:300])
