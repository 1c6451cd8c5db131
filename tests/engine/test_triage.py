"""Triage: what scores and what does not, snippets and excerpts, and agreement with hand labels."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest
from conftest import SHARED_TRANSCRIPTS, needs_shared, shared_transcripts
from test_transcript import assistant, result, user, write

from memcurate.curator import config
from memcurate.curator.capture import keywords
from memcurate.curator.capture.keyword_analysis import keyword, phrases, requirements
from memcurate.curator.capture.keywords import Keyword, KeywordSet, message_words
from memcurate.curator.capture.transcript import TranscriptReader
from memcurate.curator.capture.triage import (
    _PUNCT,
    Rules,
    is_narration,
    mask_inline_code,
    triage_entries,
)
from memcurate.curator.categories import NAMES

LABELS = Path(__file__).parents[1] / "data" / "triage_labels.json"


@pytest.fixture(scope="module")
def rules(tmp_path_factory) -> Rules:
    return Rules(config.load(tmp_path_factory.mktemp("p")))


def triage_file(path, rules, **kw):
    return triage_entries(TranscriptReader(path), rules, path=str(path), **kw)


def text(t: str) -> dict:
    return {"type": "text", "text": t}


DECISION_LINE = (
    "We decided to use JWT instead of server sessions because the API must stay stateless."
)


def test_a_decision_with_its_reason_triggers(tmp_path, rules):
    path = tmp_path / "t.jsonl"
    write(
        path,
        [user("How should the API authenticate clients?"), *assistant("m1", text(DECISION_LINE))],
    )
    res, _ = triage_file(path, rules)
    d = res["decision"]
    assert d["triggered"] and d["score"] >= d["threshold"]
    assert d["snippets"][0]["text"] == DECISION_LINE
    assert "decided" in d["snippets"][0]["keywords"]
    # The excerpt gives the prompt of the turn, then the lines around the snippet.
    assert d["excerpt"].startswith("[turn 1 · user] How should the API authenticate clients?")
    assert DECISION_LINE in d["excerpt"]


def test_the_reason_word_raises_the_weight(tmp_path, rules):
    with_reason, without = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write(
        with_reason,
        [
            user("question one here"),
            *assistant("m1", text("We decided to keep Postgres because it is simpler.")),
        ],
    )
    write(
        without, [user("question one here"), *assistant("m1", text("We decided to keep Postgres."))]
    )
    a, _ = triage_file(with_reason, rules)
    b, _ = triage_file(without, rules)
    assert a["decision"]["score"] > b["decision"]["score"] > 0


@pytest.mark.parametrize(
    "where",
    [
        "tool_result",
        "thinking",
        "system_reminder",
        "meta",
        "code_block",
        "inline_code",
        "command_output",
    ],
)
def test_text_outside_the_conversation_does_not_score(tmp_path, rules, where):
    loud = (
        "We decided to go with X instead of Y because reasons. TODO: for now this is a hack. "
        "I prefer tabs, please don't use spaces. The root cause was the cache; this fixed it."
    )
    prompt = user("please look at the build output")
    if where == "tool_result":
        records = [
            prompt,
            *assistant("m1", {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}),
            result("t1", loud),
        ]
    elif where == "thinking":
        records = [
            prompt,
            *assistant("m1", {"type": "thinking", "thinking": loud, "signature": "x"}),
        ]
    elif where == "system_reminder":
        records = [user(f"<system-reminder>{loud}</system-reminder>look at this please")]
    elif where == "meta":
        records = [user(loud, isMeta=True)]
    elif where == "code_block":
        records = [
            prompt,
            *assistant("m1", text("Here it is:\n```\n" + loud.replace(". ", ".\n") + "\n```")),
        ]
    elif where == "inline_code":
        records = [prompt, *assistant("m1", text(f"Output: `{loud}`"))]
    else:
        records = [user(f"<bash-stdout>{loud}</bash-stdout>")]
    path = tmp_path / "t.jsonl"
    write(path, records)
    res, _ = triage_file(path, rules, summary=False)
    assert {n: res[n]["score"] for n in NAMES if n != "session_summary"} == {
        n: 0.0 for n in NAMES if n != "session_summary"
    }


def test_acknowledgements_and_one_word_turns_do_not_score(tmp_path, rules):
    path = tmp_path / "t.jsonl"
    write(path, [user("ok"), user("Thanks!"), user("go ahead"), user("todo"), user("decided")])
    res, t = triage_file(path, rules, summary=False)
    assert all(res[n]["score"] == 0 for n in NAMES)
    assert t.digest.user_turns == 5  # still real turns


def test_narration_splits_a_line_only_up_to_its_word_limit_and_decides_as_a_whole_split(rules):
    """is_narration stops splitting past the limit (a pasted log line is not split whole): at each limit,
    around it and with odd whitespace, the answer is the one the line's every word gives."""

    def whole(line: str, r: Rules) -> bool:  # the rule on all of the line's words
        words = line.lower().split()
        if len(words) > r.narration_max_words:
            return False
        i = 0
        while i < len(words) and words[i].strip(_PUNCT) in r.fillers:
            i += 1
        return " ".join(words[i:]).startswith(r.narration)

    opener = rules.narration[0]
    filler = sorted(rules.fillers)[0]
    lines = ["", "   ", opener, f"  {filler}\t{opener}  ", "a b c", "now   let\u00a0me  check"]
    for n in range(0, 25):
        lines += [f"{filler} {opener} " + " ".join(["x"] * n), " ".join(["x"] * n) + "  \n "]
    limit = rules.narration_max_words
    try:
        for most in (limit, 0, 1, 3, -1):
            rules.narration_max_words = most
            for line in lines:
                assert is_narration(line, rules) == whole(line, rules), (most, line)
    finally:
        rules.narration_max_words = limit
    assert is_narration(f"{filler} {opener} the tests", rules)


def test_narration_does_not_score_but_statements_do(tmp_path, rules):
    path = tmp_path / "t.jsonl"
    write(
        path,
        [
            user("fix the failing test please"),
            *assistant("m1", text("Let me fix the root cause of the failing test.")),
        ],
    )
    res, _ = triage_file(path, rules, summary=False)
    assert res["runbook"]["score"] == 0
    write(
        path,
        [
            user("fix the failing test please"),
            *assistant(
                "m1", text("The root cause was a stale cache key; clearing it fixed the test.")
            ),
        ],
    )
    res, _ = triage_file(path, rules, summary=False)
    assert res["runbook"]["score"] > 0


def test_weak_keywords_alone_never_trigger(tmp_path, rules):
    line = "Use the list instead of the dict, rather than the set, because the approach reads well."
    path = tmp_path / "t.jsonl"
    write(path, [user("tidy this"), *assistant("m1", *(text(line) for _ in range(8)))])
    res, _ = triage_file(path, rules, summary=False)
    assert res["decision"]["signals"]["strong_hits"] == 0
    assert not res["decision"]["triggered"]


def test_a_subagent_brief_is_no_persons_preference(tmp_path, rules):
    brief = (
        "You are bob. Please don't use the network. I prefer short reports. "
        "The main branch is `master`, not `main`. Do not push."
    )
    path = tmp_path / "agent-x.jsonl"
    write(path, [user(brief), *assistant("m1", text("Understood."))])
    sub, _ = triage_file(path, rules, subagent=True, summary=False)
    main, _ = triage_file(path, rules, subagent=False, summary=False)
    assert sub["preference"]["score"] == 0 < main["preference"]["score"]
    assert sub["constraint"]["score"] > 0


def test_an_error_and_its_fix_count_for_runbooks(tmp_path, rules):
    path = tmp_path / "t.jsonl"
    bash = lambda i, cmd: {"type": "tool_use", "id": i, "name": "Bash", "input": {"command": cmd}}  # noqa: E731
    write(
        path,
        [
            user("make the suite green"),
            *assistant("m1", bash("t1", "pytest")),
            result("t1", "E   ImportError: no module named foo\n1 failed", error=True),
            *assistant("m2", bash("t2", "pytest")),
            result("t2", "12 passed"),
        ],
    )
    res, _ = triage_file(path, rules, summary=False)
    rb = res["runbook"]
    assert rb["signals"]["errors"] == 1 and rb["signals"]["fixed"] == 1
    assert (
        any(
            s["keywords"] == ["error-fix"] and "ImportError" in s["text"]
            for s in rb.get("snippets", [])
        )
        or rb["score"] > 0
    )


def test_session_summary_only_when_asked_and_substantive(tmp_path, rules):
    path = tmp_path / "t.jsonl"
    tools = [
        {
            "type": "tool_use",
            "id": f"t{i}",
            "name": name,
            "input": {"file_path": f"/work/app/src/f{i}.py"},
        }
        for i, name in enumerate(["Read", "Edit", "Bash", "Grep", "Write"] * 4)
    ]
    write(
        path,
        [
            user("Add pagination to the list endpoint", cwd="/work/app"),
            *assistant("m1", *tools),
            *[result(f"t{i}", "ok") for i in range(len(tools))],
            user("Now document it in the README"),
            *assistant(
                "m2", text("Done: pagination added, README updated; next, add tests for page size.")
            ),
        ],
    )
    res, _ = triage_file(path, rules, summary=False)
    assert not res["session_summary"]["triggered"] and "skipped" in res["session_summary"]
    res, _ = triage_file(path, rules, summary=True)
    s = res["session_summary"]
    assert s["triggered"]
    assert s["signals"] == {"tool_uses": 20, "distinct_tools": 5, "user_turns": 2}
    assert "[turn 1 · user] Add pagination to the list endpoint" in s["excerpt"]
    assert "next, add tests for page size" in s["excerpt"]
    # relative to the session's folder
    assert "[files changed] src/f1.py, src/f4.py, src/f6.py" in s["excerpt"]
    tiny = tmp_path / "tiny.jsonl"
    write(tiny, [user("Warmup"), *assistant("m1", text("Ready."))])
    res, _ = triage_file(tiny, rules, summary=True)
    assert not res["session_summary"]["triggered"]


def test_snippets_are_redacted_bounded_and_unique(tmp_path, rules):
    secret = "sk-ant-api03-" + "Q" * 40
    line = f"We decided to rotate the key {secret} because it leaked."
    path = tmp_path / "t.jsonl"
    write(
        path,
        [
            user("what now?"),
            *assistant("m1", text(line)),
            *assistant("m2", text(line)),
            *assistant("m3", text("We decided " + "very " * 400 + "long.")),
        ],
    )
    res, _ = triage_file(path, rules)
    doc = json.dumps(res)
    assert secret not in doc and "[REDACTED:anthropic-key]" in doc
    snippets = res["decision"]["snippets"]
    # the repeated line is one snippet
    assert len(snippets) == 2 and len({s["text"] for s in snippets}) == 2
    assert all(len(s["text"]) <= rules.snippet_chars for s in snippets)
    assert len(res["decision"]["excerpt"]) <= rules.excerpt_chars


# -- keyword requirements ------------------------------------------------------


@pytest.mark.parametrize(
    "pattern, needs",
    [
        ("decided", [("decided",)]),
        (
            "(?:is|are) not (?:allowed|available)",
            [("is", "are"), ("not",), ("allowed", "available")],
        ),
        ("todo(?! list)", [("todo",)]),
        ("tech(?:nical)? debt", [("tech",), ("debt",)]),
        ("(?:as a )?temporar(?:y|ily)", [("temporar",)]),
        ("a|b", []),  # single letters say nothing: no filter
        ("(?:x|yy)+", []),  # a repeated group is not required text
    ],
)
def test_requirements(pattern, needs):
    assert requirements(pattern) == needs


@functools.cache  # read once: two tests walk every line of the real transcripts
def _conversation_lines() -> tuple[str, ...]:
    lines: list[str] = []
    for path in shared_transcripts():
        for e in TranscriptReader(path):
            if e.kind in ("user", "assistant") and e.text:
                lines.extend(e.text.splitlines())
    return tuple(lines)


@needs_shared
def test_requirements_never_hide_a_match(rules):
    """Soundness: whenever a keyword's pattern matches a line, the cheap filter lets it through."""
    lines = [
        *_conversation_lines(),
        "We'll go with Redis",
        "I'd rather not",
        "is `main`, not `trunk`",
        "Wait, stop",
        "TODO: later",
        "the main branch is master",
        "requires approval",
        "replacing the old parser with a new one",
    ]
    keywords = rules.keywords.keywords + rules.reasons.keywords
    # Every text a plain-phrase keyword stands for, in a sentence (its requirements are worked out apart).
    lines += [f"So {p.capitalize()} here." for kw in keywords for p in kw.phrases or ()]
    matched = set()
    for kw in keywords:
        rx = re.compile(kw.regex.pattern, kw.regex.flags)
        for line in lines:
            if rx.search(line):
                assert kw.may_match(line.lower()), (kw.regex.pattern, line)
                matched.add(kw.regex.pattern)
    # the lines put a good share of the keywords to the test
    assert len(matched) >= len(keywords) // 3


@pytest.mark.parametrize(
    "pattern, expected",
    [
        ("root cause", ["root cause"]),
        ("requires?", ["require", "requires"]),
        (
            "(?:does not|doesn't) (?:support|work)",
            ["does not support", "does not work", "doesn't support", "doesn't work"],
        ),
        ("tech(?:nical)? debt", ["tech debt", "technical debt"]),
        (
            "(?:as a )?temporar(?:y|ily)",
            ["as a temporarily", "as a temporary", "temporarily", "temporary"],
        ),
        ("obbligatori[oa]", ["obbligatoria", "obbligatorio"]),
        (
            "standardi[sz]ed? on",
            ["standardise on", "standardised on", "standardize on", "standardized on"],
        ),
        ("[a-z]+ on", None),  # a range, repeated: a regex
        ("[^x]y", None),
        ("todo(?! list)", None),
        ("replac(?:e|ed) (?:\\S+ ){0,4}with", None),
        ("(?:x|yy)+", None),
        ("a?", None),  # may match nothing: not a phrase
    ],
)
def test_phrases(pattern, expected):
    assert phrases(pattern) == expected


@needs_shared
def test_phrases_found_without_regex_agree_with_the_regex(rules):
    """On every line of the real transcripts, a phrase keyword matches exactly where its regex does."""
    lines = [
        *_conversation_lines(),
        "Root cause: x",
        "the root causes",
        "rootcause",
        "so-called root cause_x",
        "It doesn't work, it does not support it",
        "requires requires",
    ]
    keywords = [kw for kw in rules.keywords.keywords + rules.reasons.keywords if kw.phrases]
    assert len(keywords) > 60
    lowered = [(line, line.lower()) for line in lines]  # once, not once per keyword
    for kw in keywords:
        rx = re.compile(kw.regex.pattern, kw.regex.flags)
        for line, lower in lowered:
            by_regex = {m.start() for m in rx.finditer(line)}
            by_find = {pos for pos, _ in kw.find(line, lower)}
            assert by_regex <= by_find and bool(by_regex) == bool(by_find), (kw.regex.pattern, line)


@needs_shared
@pytest.mark.parametrize("spell_after", [1, keywords.SPELL_AFTER])
def test_candidates_by_spelled_phrases_find_what_every_candidate_finds(
    tmp_path, monkeypatch, spell_after
):
    """A phrase keyword none of whose phrases the message's words spell is left out (candidates with
    `spelled`), and the phrases of one that are not looked for (find with the words): what is found,
    where and as what, is the same as testing every keyword and phrase, on the real conversation and on
    each phrase glued to word characters, punctuation and letters outside ASCII; each index word's
    phrases sorted from its first message, or after SPELL_AFTER (until then, requirements tested)."""
    monkeypatch.setattr(keywords, "SPELL_AFTER", spell_after)
    texts = [
        e.text
        for path in shared_transcripts()
        for e in TranscriptReader(path)
        if e.kind in ("user", "assistant") and e.text
    ]
    config.load(tmp_path, tmp_path / "data")
    cfg = config.load(tmp_path, tmp_path / "data")
    # the index the config cache keeps, and one analysed now
    ready, fresh = Rules(cfg), Rules({k: v for k, v in cfg.items() if k != "_derived"})
    sets = [fresh.keywords, fresh.reasons, ready.keywords, ready.reasons]
    for p in {
        p for kw in fresh.keywords.keywords + fresh.reasons.keywords for p in kw.phrases or ()
    }:
        texts += [
            f"So {p} here.",
            f"x{p} {p}y _{p}_ 3{p}",
            f"café{p} {p}é «{p}» ({p})\n{p.upper()}'s",
            f"{p}-{p}.{p}",
            p.replace(" ", "  "),
        ]
    assert len(texts) > 5000
    for text in texts:
        lowered = text.lower()
        if len(lowered) != len(text):
            continue  # (a text whose lowercase is longer is found by the regexes: not `spelled`)
        words = message_words(lowered)
        for ks in sets:
            every = [
                (kw.index, at) for kw in ks.candidates(lowered) for at in kw.find(text, lowered)
            ]
            spelled = [
                (kw.index, at)
                for kw in ks.candidates(lowered, spelled=True)
                for at in kw.find(text, lowered, words)
            ]
            assert spelled == every, text


def test_a_phrase_keyword_is_no_candidate_where_its_words_are_not(monkeypatch):
    """Its phrase inside other words ("go with" in "ago with") or its index word alone ("with"): no
    candidate, and no test of its requirements (a message's common words reach dozens of keywords),
    once the index word reached SPELL_AFTER messages."""
    kws = [keyword("decision", p, weak=False) for p in ("go with", "stick with", "todo")]
    ks = KeywordSet(kws)
    assert ks.candidates("ago with") == [kws[0]]  # what its requirements let through
    tested = []
    real = Keyword.may_match
    monkeypatch.setattr(Keyword, "may_match", lambda kw, s: tested.append(kw) or real(kw, s))
    for _ in range(keywords.SPELL_AFTER - 1):  # a short pass: requirements, as always
        assert ks.candidates("ago with", spelled=True) == [kws[0]]
    assert tested
    tested.clear()
    assert ks.candidates("ago with", spelled=True) == []
    assert ks.candidates("with", spelled=True) == []
    assert tested == []
    assert ks.candidates("we stick with it, and go with that", spelled=True) == kws[:2]


def test_keyword_without_requirements_always_runs():
    kw = keyword("decision", "(?:x|yy)+", weak=False)
    assert kw.needs == [] and kw.may_match("anything")
    assert KeywordSet([kw]).candidates("anything") == [kw]


def test_candidates_keep_the_configured_order():
    kws = [
        keyword("decision", p, weak=False)
        for p in ("decided", "(?:x|yy)+", "instead of", "we decided")
    ]
    assert KeywordSet(kws).candidates("we decided this instead of that") == kws
    assert KeywordSet(kws).candidates("nothing here") == [kws[1]]


def test_the_cached_index_finds_what_each_pattern_finds(tmp_path):
    """The keyword index kept ready-made in the config cache gives the candidates analysing every pattern gives."""
    data = tmp_path / "data"
    config.load(tmp_path, data)
    cfg = config.load(tmp_path, data)
    ready, fresh = Rules(cfg), Rules({k: v for k, v in cfg.items() if k != "_derived"})
    lines = [
        f"So {p} here."
        for kw in fresh.keywords.keywords + fresh.reasons.keywords
        for p in kw.phrases or ()
    ]
    lines += [
        "We need explicit approval",
        "all 12 tests pass",
        "TODO: skip the flaky tests",
        "nothing at all",
    ]
    for line in lines:
        for a, b in ((ready.keywords, fresh.keywords), (ready.reasons, fresh.reasons)):
            assert [(kw.index, kw.pattern, kw.weak) for kw in a.candidates(line.lower())] == [
                (kw.index, kw.pattern, kw.weak) for kw in b.candidates(line.lower())
            ], line


def test_keywords_changed_after_loading_are_not_found_through_a_stale_index(tmp_path):
    data = tmp_path / "data"
    config.load(tmp_path, data)
    cfg = config.load(tmp_path, data)
    cfg["categories"]["decision"]["keywords"].insert(0, "zebra crossings?")
    found = Rules(cfg).keywords.candidates("we took the zebra crossing, as decided")
    assert [kw.pattern for kw in found][:2] == ["zebra crossings?", "decided"]


# -- agreement with hand labels ------------------------------------------------


@needs_shared
def test_triage_agrees_with_hand_labels(rules):
    """Category precision and recall over the real transcripts of the tune part, against
    tests/data/triage_labels.json (keys are paths under ../shared/)."""
    labels = json.loads(LABELS.read_text())["labels"]
    shared = SHARED_TRANSCRIPTS.parent
    assert {k for k in labels if k.startswith("transcripts/")} == {
        str(p.relative_to(shared)) for p in shared_transcripts()
    }
    assert all(v["part"] in ("tune", "holdout") for v in labels.values())
    tune = {k: v for k, v in labels.items() if v["part"] == "tune" and (shared / k).is_file()}
    tp = fp = fn = 0
    misses = []
    for rel, truth in sorted(tune.items()):
        path = shared / rel
        res, _ = triage_file(path, rules, summary=True, subagent=path.name.startswith("agent-"))
        for n in NAMES:
            got, want = res[n]["triggered"], truth[n]
            tp += got and want
            fp += got and not want
            fn += want and not got
            if got != want:
                misses.append(f"{rel} {n}: got {got} ({res[n]['score']})")
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    report = f"precision {precision:.2f} recall {recall:.2f}\n" + "\n".join(misses)
    assert precision >= 0.85, report
    assert recall >= 0.80, report


@pytest.mark.parametrize(
    "line", ["a `b` c", "`x`", "a ` b", "a `b` c `d", "``", "a `b` `c` d", "no ticks", "`a``b`"]
)
def test_inline_code_is_masked_like_a_code_span(line):
    assert mask_inline_code(line) == re.sub(r"`[^`\n]*`", "CODE", line)
