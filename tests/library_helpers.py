"""A project with memories of both owners, for the library's tests."""

from __future__ import annotations

from pathlib import Path

from memcurate.curator.engine import Engine
from memcurate.curator.memory import memfile

STAMP = "2026-11-22T10:04:00Z"


def library_engine(project: Path, root: Path) -> Engine:
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: offline\nmemory:\n  root: {root}\n"
    )
    root.mkdir(parents=True, exist_ok=True)
    return Engine(project, clock=lambda: STAMP)


def save(
    engine: Engine,
    category: str,
    id: str,
    title: str,
    description: str,
    sections: dict[str, str],
    *,
    tags=("project",),
    sessions=("sess-1",),
    status="active",
    created="2026-01-02T03:04:05Z",
    updated="2026-02-03T04:05:06Z",
) -> Path:
    doc = memfile.MemoryDoc(
        id=id,
        category=category,
        title=title,
        description=description,
        tags=list(tags),
        created=created,
        updated=updated,
        status=status,
        sources=[{"session": s, "turns": [1, 2]} for s in sessions],
        body=memfile.join_sections(sections),
    )
    return Path(engine.store.create(doc))


def jwt(engine: Engine, **kw) -> Path:
    return save(
        engine,
        "decision",
        "use-jwt-for-api-auth",
        "Use JWT for API authentication",
        "Stateless tokens chosen over server sessions",
        {
            "Decision": "Use signed JWT bearer tokens for every public API endpoint.",
            "Rationale": "Sessions need sticky load balancing.",
        },
        **kw,
    )


def no_network(engine: Engine, **kw) -> Path:
    return save(
        engine,
        "constraint",
        "no-network-in-ci",
        "No network in CI",
        "CI runners cannot reach the internet",
        {
            "Rule": "CI jobs cannot reach the internet.",
            "Impact": "Tests use fixtures, never live API calls.",
        },
        **kw,
    )


MEMORY_MD = """# Project memory

- [Debugging notes](debugging.md) \u2014 how we debug the API
- Always run the test suite with -x before pushing
- Always run the test suite with -x before pushing

<!-- memcurate:begin section=decision budget=40 -->
## Key Decisions
- [Use JWT for API authentication](decision/use-jwt-for-api-auth.md) \u2014 Stateless tokens chosen over server sessions
<!-- memcurate:end section=decision -->
"""
