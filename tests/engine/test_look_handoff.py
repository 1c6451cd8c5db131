"""The second look's hand-off to the drafts (issue 23): the look reads the session digest, cites its
entries for each category with the statement it found, and each draft of a category it found or confirmed
carries that statement and those entries, whole, as its evidence. A keyword category the look did not
confirm keeps its keyword excerpt when the look could not read the whole session (it is skipped when the
look read it all: tests/engine/test_look_skip.py).

The drafter is a fake Claude backend (as in test_second_look.py) whose look cites the entries holding
given words, and whose drafts record the prompt the real backends would send (prompt.user_prompt).
"""

from __future__ import annotations

import json
from pathlib import Path

from synthetic import Transcript, text, tool
from test_digest import answer
from test_second_look import Looking, end_session, engine_with

from memcurate.curator.candidates import staging
from memcurate.curator.drafting import prompt as prompts

QUESTIONS = [
    {
        "question": "Which queue backend?",
        "header": "Queue",
        "multiSelect": False,
        "options": [
            {
                "label": "Redis",
                "description": "Already runs in production; no new service to operate",
            },
            {"label": "RabbitMQ", "description": "Durable, but one more service"},
        ],
    }
]
CHOSEN = '"Which queue backend?"="Redis" (chosen: Redis: Already runs in production; no new service to operate)'


class Citing(Looking):
    """A look that cites, per category, the digest entries holding its words (as a model reading the
    digest would), and drafts that keep the prompt each request makes."""

    def __init__(self, cites: dict[str, tuple[str, str]]) -> None:
        super().__init__()
        self.cites = cites  # category -> (words an entry holds, the statement)
        self.prompts: dict[str, str] = {}
        self.requests: dict = {}

    def second_look(self, request):
        entries = [
            (int(line[1 : line.index("]")]), line)
            for line in request.activity.splitlines()
            if line.startswith("[") and "]" in line and line[1 : line.index("]")].isdigit()
        ]
        self.answer = {
            "findings": [
                {
                    "category": c,
                    "entries": [n for n, line in entries if words in line],
                    "statement": said,
                }
                for c, (words, said) in self.cites.items()
            ]
        }
        return super().second_look(request)

    def draft(self, request):
        self.prompts[request.category] = prompts.user_prompt(request)
        self.requests[request.category] = request
        return super().draft(request)


def look_record(engine, tid: str) -> dict:
    return json.loads(Path(staging.second_look_path(engine.data, tid)).read_text())


def test_an_answer_given_through_askuserquestion_reaches_the_decision_draft_through_the_look(
    project, tmp_path
):
    t = (
        Transcript()
        .user("Add a job queue for the mailer.")
        .assistant(tool("q1", "AskUserQuestion", questions=QUESTIONS))
    )
    answer(
        t,
        "q1",
        'Your questions have been answered: "Which queue backend?"="Redis". You can now continue with '
        "these answers in mind.",
        {"questions": QUESTIONS, "answers": {"Which queue backend?": "Redis"}, "annotations": {}},
    )
    t.assistant(text("The mailer jobs now go through a Redis queue."))
    fake = Citing(
        {"decision": ("chosen: Redis", "The job queue uses Redis: it already runs in production.")}
    )
    engine = engine_with(project, tmp_path, fake)
    end_session(engine, t.write(tmp_path / "s.jsonl"))
    (tid,) = engine.pending()
    engine.process(tid)

    (ask,) = fake.looks
    assert f"user answered: {CHOSEN}" in ask.activity  # the tool record is in what the look reads
    prompt = fake.prompts["decision"]
    assert f"[2] user answered: {CHOSEN}" in prompt  # and, cited, in the draft of its category
    assert "The job queue uses Redis: it already runs in production." in prompt
    assert prompt.index("<<<BEGIN FACT-") < prompt.index("<<<BEGIN EXCERPT-")
    assert "The lines that scored" not in prompt  # the cited entry is not repeated as scored lines
    assert staging.category_states(engine.data, tid)["decision"]["found_by"] == "second_look"


def test_two_categories_found_in_one_turn_get_each_their_own_evidence(project, tmp_path):
    t = Transcript().user(
        "Add the CSV export of orders. Keep the page size at 20 for the mobile client, always."
    )
    t.assistant(
        text(
            "Added the CSV export. It still loads every row into memory; that stays until the export "
            "job is rewritten next quarter."
        )
    )
    fake = Citing(
        {
            "preference": ("page size at 20", "The mobile client wants pages of 20."),
            "tech_debt": (
                "loads every row",
                "The CSV export loads every row into memory until the rewrite.",
            ),
        }
    )
    engine = engine_with(project, tmp_path, fake)
    end_session(engine, t.write(tmp_path / "s.jsonl"))
    (tid,) = engine.pending()
    engine.process(tid)

    pref, debt = fake.requests["preference"], fake.requests["tech_debt"]
    assert pref.excerpt != debt.excerpt  # one turn, two facts: not one byte-identical excerpt
    assert "page size at 20" in pref.excerpt and "loads every row" not in pref.excerpt
    assert "loads every row" in debt.excerpt and "page size at 20" not in debt.excerpt
    assert "The mobile client wants pages of 20." in fake.prompts["preference"]
    assert "The CSV export loads every row" in fake.prompts["tech_debt"]
    assert "pages of 20" not in fake.prompts["tech_debt"]


JWT = "We decided to use JWT because sessions would need a sessions table; let's go with JWT."


def jwt_session(tmp_path: Path) -> Path:
    t = Transcript().user(JWT)
    t.assistant(text("Decision recorded: we'll go with JWT for the API."))
    t.user("Also, the staging database is read-only on Fridays, never migrate then.")
    t.assistant(text("Understood: no migrations against staging on Fridays."))
    return t.write(tmp_path / "s.jsonl")


def test_a_keyword_category_the_look_confirms_is_drafted_from_the_entries_it_cites(
    project, tmp_path
):
    fake = Citing(
        {
            "decision": (
                "use JWT because",
                "API auth uses JWT: sessions would need a sessions table.",
            )
        }
    )
    engine = engine_with(project, tmp_path, fake)
    end_session(engine, jwt_session(tmp_path))
    (tid,) = engine.pending()
    keyword = staging.load_triage(engine.data, tid)["categories"]["decision"]
    # the keywords found it
    assert keyword["triggered"] and "second_look" not in keyword.get("signals", {})
    engine.process(tid)

    (ask,) = fake.looks
    assert "decision" in ask.already and "(unconfirmed)" in prompts.look_prompt(
        ask.activity, ask.already
    )
    look = look_record(engine, tid)
    assert list(look["confirmed"]) == ["decision"] and look["added"] == {}
    request = fake.requests["decision"]
    # the cited entry, whole, in place of the keyword excerpt
    assert request.excerpt == f"[1] user: {JWT}"
    assert "API auth uses JWT: sessions would need a sessions table." in fake.prompts["decision"]
    assert "Fridays" not in request.excerpt
    cand = engine.candidates(tid)["decision"]
    assert cand.entry["confirmed_by"] == "second_look" and "found_by" not in cand.entry
    # still the keywords' trigger, with the look's evidence
    assert cand.entry["score"] == keyword["score"]
    on_disk = json.loads(Path(staging.triage_dir(engine.data, tid), "triage.json").read_text())
    # triage.json as triage wrote it
    assert on_disk["categories"]["decision"]["excerpt"] == keyword["excerpt"]


def test_a_keyword_category_the_look_could_not_confirm_keeps_its_keyword_excerpt(project, tmp_path):
    """A look that failed (or read only part of the session: tests/engine/test_look_skip.py) leaves the keyword
    category drafted from its own excerpt; one that read everything and did not confirm it skips it."""
    fake = Citing({})
    fake.error = "claude CLI timed out after 119 s (killed)"
    engine = engine_with(project, tmp_path, fake)
    end_session(engine, jwt_session(tmp_path))
    (tid,) = engine.pending()
    keyword = staging.load_triage(engine.data, tid)["categories"]["decision"]
    engine.process(tid)
    request = fake.requests["decision"]
    assert request.excerpt == keyword["excerpt"] and request.snippets == keyword["snippets"]
    prompt = fake.prompts["decision"]
    assert "Transcript excerpt (redacted):" in prompt and "<<<BEGIN FACT-" not in prompt


def test_a_cited_entry_past_the_evidence_bound_is_left_out_whole_and_counted(project, tmp_path):
    t = Transcript()
    for i in range(6):
        t.user(
            f"Constraint {i}: the build box has {i} GB of swap. "
            + "It cannot be changed by us. " * 60
        )
        t.assistant(text(f"Noted constraint {i}."))
    fake = Citing({"constraint": ("Constraint", "The build box's limits cannot be changed.")})
    engine = engine_with(project, tmp_path, fake, "triage:\n  excerpt_chars: 2000\n")
    end_session(engine, t.write(tmp_path / "s.jsonl"))
    (tid,) = engine.pending()
    engine.process(tid)
    excerpt = fake.requests["constraint"].excerpt
    assert (
        len(excerpt) <= 2 * 2000 + 100
        and "more cited entries left out: the evidence bound" in excerpt
    )
    kept = [
        line for line in excerpt.splitlines() if line[:2] == "[" + line[1:2] and line[1:2].isdigit()
    ]
    # whole entries
    assert len(kept) == 2 and all(
        line.rstrip().endswith("It cannot be changed by us.") for line in kept
    )


def test_under_a_tight_cap_the_last_cited_entries_are_left_out_whole():
    from memcurate.curator.drafting import DraftRequest
    from memcurate.curator.drafting.input_cap import fit, prompt_chars

    blocks = {
        1: "[1] user: " + "keep the v1 API for the mobile client. " * 20,
        4: "[4] assistant: " + "the adapter maps v1 onto v2. " * 20,
        7: "[7] user answered: " + '"Which API?"="v1 stays until the apps update". ' * 10,
    }
    entry = {
        "excerpt": "\n".join(blocks.values()),
        "snippets": [{"turn": 1, "speaker": "user", "text": "x"}],
        "look": {"statement": "v1 stays for the mobile apps", "entries": [7, 1, 4]},
    }
    request = DraftRequest("t", "constraint", entry, {"session": "s"}, now="2026-11-22T10:04:00Z")
    out, cut = fit(request, prompt_chars(request) - len(blocks[4]) + 100)
    assert blocks[7] in out.excerpt and blocks[1] in out.excerpt  # cited first: kept, whole
    assert (
        "[4] assistant" not in out.excerpt and "characters cut: per-triage input cap" in out.excerpt
    )
    assert cut >= len(blocks[4])
    only, _ = fit(request, prompt_chars(request) - len(blocks[4]) - len(blocks[1]) + 100)
    assert blocks[7] in only.excerpt and "[1] user" not in only.excerpt
