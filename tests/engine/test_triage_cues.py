"""Triage cues that generalise: how people state a deferral or a limit (in other languages too), a
user correcting the assistant, an error that stops after an edit; and an ordinary exchange that
triggers nothing."""

from __future__ import annotations

import pytest
from test_transcript import assistant, result, user, write

from memcurate.curator import config
from memcurate.curator.capture.transcript import TranscriptReader
from memcurate.curator.capture.triage import Rules, triage_entries
from memcurate.curator.categories import TEXT_SCORED


@pytest.fixture(scope="module")
def rules(tmp_path_factory) -> Rules:
    return Rules(config.load(tmp_path_factory.mktemp("p")))


def triage(tmp_path, records, rules, **kw) -> dict:
    return run(tmp_path, records, rules, **kw)[0]


def run(tmp_path, records, rules, **kw):
    path = tmp_path / "t.jsonl"
    write(path, records)
    return triage_entries(TranscriptReader(path), rules, path=str(path), summary=False, **kw)


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def tool(i: str, name: str, **inp) -> dict:
    return {"type": "tool_use", "id": i, "name": name, "input": inp}


def test_a_deferral_is_tech_debt(tmp_path, rules):
    res = triage(
        tmp_path,
        [
            user("The retry logic in the uploader is getting messy."),
            *assistant("m1", text("Agreed, it has grown three special cases.")),
            user(
                "Let's leave the retry logic as is for the time being.\n"
                "We'll come back to it after the release, when we revisit the uploader."
            ),
        ],
        rules,
    )
    td = res["tech_debt"]
    assert td["triggered"], td
    assert any("come back to it" in s["keywords"] for s in td["snippets"])


CONSTRAINTS = {
    "it": "Non usare la rete nei test, deve funzionare offline.\n"
    "Il database è in sola lettura: non modificare lo schema.",
    "es": "No uses la red en los tests, debe funcionar sin conexión.\n"
    "La base de datos es de solo lectura: no modifiques el esquema.",
    "fr": "N’utilise pas le réseau dans les tests, il faut que ça marche hors ligne.\n"
    "La base est en lecture seule : ne modifie pas le schéma.",
    "de": "Im Test das Netz nicht verwenden, es muss offline laufen.\n"
    "Die Datenbank ist schreibgeschützt, das Schema darf nicht geändert werden.",
    "pt": "Não use a rede nos testes, deve funcionar offline.\n"
    "O banco é somente leitura: não altere o esquema.",
}


@pytest.mark.parametrize("lang", sorted(CONSTRAINTS))
def test_a_constraint_in_another_language(tmp_path, rules, lang):
    res = triage(tmp_path, [user(CONSTRAINTS[lang]), *assistant("m1", text("OK."))], rules)
    assert res["constraint"]["triggered"], res["constraint"]
    # A limit stated is not a deferral, a fix or a taste.
    assert not any(res[n]["triggered"] for n in ("tech_debt", "runbook", "preference"))


PROPOSAL = "I'll put a Redis cache in front of the pricing API; shall I go ahead and add it to docker-compose?"
CORRECTION = "No, use the in-process LRU cache instead, no extra services to run."


def test_a_correction_after_a_proposal_is_a_preference(tmp_path, rules):
    res = triage(
        tmp_path,
        [
            user("The pricing API is slow, make it faster."),
            *assistant("m1", text(PROPOSAL)),
            user(CORRECTION),
            *assistant(
                "m2", text("You're right, an in-process cache keeps the deployment simple.")
            ),
        ],
        rules,
    )
    pref = res["preference"]
    assert pref["triggered"], pref
    top = pref["snippets"][0]
    assert top["speaker"] == "user" and top["text"] == CORRECTION
    assert "correction" in top["keywords"] and "conceded: you're right" in top["keywords"]
    assert res["decision"]["score"] > 0  # a correction is often a decision too


def test_the_same_words_as_a_first_prompt_correct_nothing(tmp_path, rules):
    res = triage(
        tmp_path,
        [user(CORRECTION), *assistant("m1", text("Done, the LRU cache is in place."))],
        rules,
    )
    assert res["preference"]["score"] == 0 and res["decision"]["score"] == 0


def test_a_rejected_tool_use_then_the_users_way_is_a_preference(tmp_path, rules):
    res = triage(
        tmp_path,
        [
            user("Add a changelog entry for the new flag."),
            *assistant(
                "m1",
                tool("e1", "Edit", file_path="/src/CHANGELOG.md", old_string="a", new_string="b"),
            ),
            result(
                "e1",
                "The user doesn't want to proceed with this tool use. The tool use was rejected.",
            ),
            user("Put it under Unreleased and link the pull request."),
            *assistant("m2", text("Sorry about that, I'll add it under Unreleased with the link.")),
        ],
        rules,
    )
    pref = res["preference"]
    assert pref["triggered"], pref
    assert "rejected tool use" in pref["snippets"][0]["keywords"]


def _failing_then_fixed(edit: bool) -> list[dict]:
    bash = lambda i, cmd: tool(i, "Bash", command=cmd)  # noqa: E731
    records = [
        user("CI is red, get the build passing"),
        *assistant("m1", bash("b1", "npm run build")),
        result(
            "b1",
            "src/api.ts(12,5): error TS2322: Type 'string' is not assignable to 'number'.",
            True,
        ),
        *assistant("m2", bash("b2", "npm run typecheck")),
        result(
            "b2",
            "src/api.ts(12,5): error TS2322: Type 'string' is not assignable to 'number'.",
            True,
        ),
    ]
    if edit:
        records += [
            *assistant(
                "m3", tool("e1", "Edit", file_path="/src/api.ts", old_string="a", new_string="b")
            ),
            result("e1", "The file /src/api.ts has been updated."),
        ]
    records += [
        *assistant("m4", bash("b3", "npm run ci")),
        result("b3", "Build complete, 0 errors."),
    ]
    return records


def test_an_error_that_stops_after_an_edit_is_a_runbook(tmp_path, rules):
    res, t = run(tmp_path, _failing_then_fixed(edit=True), rules)
    assert res["runbook"]["signals"]["fixed"] == 1 and res["runbook"]["score"] > 0
    assert any(
        s.keywords == ["error-stopped-after-edit"] and "TS2322" in s.text for s in t.top["runbook"]
    )
    # Without an edit in between, another command passing says nothing of the error.
    rerun = triage(tmp_path, _failing_then_fixed(edit=False), rules)["runbook"]
    assert rerun["signals"]["fixed"] == 0 and rerun["score"] == 0


def test_an_ordinary_exchange_triggers_nothing(tmp_path, rules):
    res = triage(
        tmp_path,
        [
            user("Can you add a docstring to parse_args?"),
            *assistant("m1", text("Added a docstring to parse_args that describes each option.")),
            user("Now do the same for main, and mention the exit codes."),
            *assistant(
                "m2", text("Done: main has a docstring too, listing exit codes 0, 1 and 2.")
            ),
            user("Nonetheless the module header still says version one; update it to version two."),
            *assistant("m3", text("Updated the module header to version two.")),
        ],
        rules,
    )
    assert {n: res[n]["score"] for n in TEXT_SCORED} == {n: 0.0 for n in TEXT_SCORED}


def test_a_typographic_apostrophe_matches_like_a_plain_one(tmp_path, rules):
    plain = triage(tmp_path, [user("We don't need the cache layer because reads are rare.")], rules)
    curly = triage(tmp_path, [user("We don’t need the cache layer because reads are rare.")], rules)
    assert curly["decision"]["score"] == plain["decision"]["score"] > 0
