"""What the hygiene check must not flag, because a careful reviewer would keep the memory (a flag a
person learns to ignore is worse than none), next to what it still flags (curator/hygiene/references.py,
project_facts.py, duplicates.py, statements.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scenarios import decisions_project, git
from test_duplicates import filler, found
from test_duplicates import memory as dup_memory

from memcurate.curator.cli import main
from memcurate.curator.engine import Engine
from memcurate.curator.hygiene import references
from memcurate.curator.hygiene.duplicates import CONTRADICTION
from memcurate.curator.hygiene.references import scan


def memory(id_: str, body: str) -> str:
    return (
        f"---\nid: {id_}\ncategory: decision\ntitle: {id_}\ndescription: {id_}\ntype: project\n"
        f"tags: [test]\ncreated: 2020-01-01T00:00:00Z\nupdated: 2020-01-01T00:00:00Z\nsources:\n"
        f"  - session: s1\n    turns: [1, 2]\nstatus: active\n---\n## Decision\n{body}\n## Rationale\nBecause.\n"
    )


FILES = {
    "pkg/src/x.py": "def helper_one():\n    return 1\n",
    "curator/hygiene/check.py": "class MemoryIndex:\n    pass\n\ndef load_view():\n    pass\n",
    "curator/engine.py": "def library():\n    return []\n",
    "tools/gone.py": "print(1)\n",
    "migrate.py": "print(1)\n",
    "pyproject.toml": '[project]\nname = "p"\ndependencies = ["requests-mock>=1", "SQLAlchemy"]\n',
    "package.json": '{"dependencies": {"@acme/FooBar": "1"}}\n',
}


@pytest.fixture
def project(tmp_path) -> Path:
    project, _root = decisions_project(tmp_path)
    for rel, text in FILES.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "first")
    for rel in ("tools/gone.py", "migrate.py"):
        (project / rel).unlink()
    git(project, "commit", "-qam", "drop two")
    return project


def check(capsys, project: Path, body: str) -> list[dict]:
    root = project.parent / "memory"
    (root / "decision" / "m.md").write_text(memory("m", body))
    (root / "MEMORY.md").write_text("- [m](decision/m.md) — m\n")
    assert main(["check", "--json", "--project", str(project)]) == 0
    return [
        f for f in json.loads(capsys.readouterr().out)["findings"] if f["refs"] == ["decision/m"]
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Cloned from github.com/acme/tools.git last week.",
        "Some flags, e.g./i.e. the verbose ones, are off.",
        "Run the linter and/or.Then commit.",
        "See docs.python.org/3/library/os.html for it.",
        "- [Old notes](notes/old.md) — how we debugged it",  # a link: relative to the memory, not the project
        '- see [the runbook](runbook/fix-ci.md "title") first',
    ],
)
def test_prose_with_slashes_is_no_path(text):
    assert scan(text, "/nowhere")["paths"] == []


@pytest.mark.parametrize(
    "text, path",
    [
        ("Login is in `src/auth.py`.", "src/auth.py"),
        ("Edit ./lib/x.ts first.", "lib/x.ts"),
        ("The CI is in .github/workflows/ci.yml now.", ".github/workflows/ci.yml"),
    ],
)
def test_a_project_path_is_still_one(text, path):
    assert scan(text, "/nowhere")["paths"] == [path]


@pytest.mark.parametrize(
    "body",
    [
        "The helper is in `src/x.py`.",  # relative to pkg/
        "Checks live in `hygiene/check.py`, next to `curator/engine.py`.",  # relative to a named file's folder
        "Cloned from github.com/acme/tools.git, e.g./i.e. the fork, and/or.Then built.",
    ],
)
def test_a_path_that_some_tracked_file_ends_with_is_not_stale(capsys, project, body):
    assert [f for f in check(capsys, project, body) if f["code"] == "stale-file"] == []


def stale_files(capsys, project: Path, body: str) -> list:
    check(capsys, project, body)  # writes the memory
    return [
        f
        for f in references.detect(Engine(project))
        if f.code == "stale-file" and f.refs == ("decision/m",)
    ]


def test_a_path_no_file_ends_with_is_stale_and_only_tracked_ones_are_archived(capsys, project):
    [once] = stale_files(capsys, project, "The job was `tools/gone.py`.")
    assert once.severity == "medium" and once.detail["fix"]["kind"] == "archive"
    # a path git never held: low, and the person edits the memory (it may be a typo), nothing archived
    [never] = stale_files(capsys, project, "The job was `tools/never.py`.")
    assert never.severity == "low" and never.detail["fix"]["kind"] == "update"
    [mixed] = stale_files(capsys, project, "Jobs: `tools/gone.py` and `tools/never.py`.")
    assert mixed.severity == "medium" and mixed.detail["fix"]["kind"] == "update"


@pytest.mark.parametrize(
    "body",
    [
        "Type-check with `python -m mypy src` before pushing.",
        "Serve docs with `python -m http.server 8000`.",
        "Run `python -m curator.engine` to try it.",
    ],
)
def test_python_m_of_a_module_not_the_projects_or_present_is_not_stale(capsys, project, body):
    assert [f for f in check(capsys, project, body) if f["code"] == "stale-command"] == []


@pytest.mark.parametrize(
    "body, named",
    [
        (
            "Run `python -m curator.gone` to try it.",
            "python -m curator.gone",
        ),  # the project's package, module gone
        ("Migrate with `python -m migrate`.", "python -m migrate"),  # git once tracked migrate.py
    ],
)
def test_python_m_of_the_projects_module_that_is_gone_is_stale(capsys, project, body, named):
    [f] = [f for f in check(capsys, project, body) if f["code"] == "stale-command"]
    assert f["detail"]["named"] == [named]


@pytest.mark.parametrize(
    "body",
    [
        "The database is `PostgreSQL` behind `FastAPI`.",
        "Compare floats with `pytest.approx()`.",
        "Mock HTTP with `requests_mock()` and map with `SQLAlchemy`.",
        "Use `GitHub` actions and `JavaScript` for the page.",
        "Call `os.path.join()` for paths.",
    ],
)
def test_products_dependencies_and_other_libraries_code_are_no_stale_symbols(capsys, project, body):
    assert [f for f in check(capsys, project, body) if f["code"] == "stale-symbol"] == []


@pytest.mark.parametrize(
    "body, missing",
    [
        ("The index is `SearchIndexer`.", ["SearchIndexer"]),
        ("Call `load_everything()` first.", ["load_everything"]),
        ("Then `curator.rebuild_all()` runs.", ["rebuild_all"]),
    ],
)
def test_the_projects_own_symbols_found_nowhere_are_still_flagged(capsys, project, body, missing):
    [f] = [f for f in check(capsys, project, body) if f["code"] == "stale-symbol"]
    assert f["severity"] == "low" and f["detail"]["named"] == missing


def test_the_projects_own_symbols_that_exist_are_not_flagged(capsys, project):
    body = "`MemoryIndex` and `load_view()` and `curator.library()` are used."
    assert [f for f in check(capsys, project, body) if f["code"] == "stale-symbol"] == []


def test_settings_of_two_different_things_do_not_contradict():
    old = dup_memory(
        "payments-timeout",
        "Payments client timeout",
        "The payments client timeout of 30s holds.",
        "Slow card networks need it.",
        category="constraint",
        updated="2026-09-01T10:00:00Z",
    )
    new = dup_memory(
        "search-timeout",
        "Search client timeout",
        "The search client timeout of 5s holds.",
        "Search must answer fast.",
        category="constraint",
        updated="2026-11-01T10:00:00Z",
    )
    assert [p for p in found(old, new, *filler(12)) if p.kind == CONTRADICTION] == []


def test_the_same_things_setting_given_another_value_still_contradicts():
    old = dup_memory(
        "payments-timeout",
        "Payments client timeout",
        "The payments client timeout of 30s holds.",
        "Slow card networks need it.",
        category="constraint",
        updated="2026-09-01T10:00:00Z",
    )
    new = dup_memory(
        "payments-timeout-short",
        "Payments client timeout",
        "The payments client timeout of 10s holds.",
        "Card networks got faster.",
        category="constraint",
        updated="2026-11-01T10:00:00Z",
    )
    pairs = [p for p in found(old, new, *filler(12)) if p.kind == CONTRADICTION]
    assert len(pairs) == 1 and "10s" in pairs[0].why and "30s" in pairs[0].why
