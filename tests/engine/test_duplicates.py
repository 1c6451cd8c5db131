"""Near-duplicates and contradictions among memories of both owners (curator/hygiene/duplicates.py)."""

from __future__ import annotations

from types import SimpleNamespace

from memcurate.curator.hygiene import duplicates
from memcurate.curator.hygiene.duplicates import CONTRADICTION, DUPLICATE, find_pairs, memo_of
from memcurate.curator.memory import memfile

SECTIONS = {
    "decision": ("Decision", "Rationale"),
    "constraint": ("Rule", "Impact"),
    "preference": ("Preference", "Reason"),
}


def memory(
    mid: str,
    title: str,
    first: str,
    second: str,
    *,
    category: str = "decision",
    description: str = "",
    updated: str = "2026-11-01T10:00:00Z",
    status: str = "active",
):
    """A memcurate memory as the library lists it, and its file's text."""
    one, two = SECTIONS[category]
    doc = memfile.MemoryDoc(
        id=mid,
        category=category,
        title=title,
        description=description or title,
        tags=["x"],
        created=updated,
        updated=updated,
        status=status,
        body=f"## {one}\n{first}\n\n## {two}\n{second}",
    )
    entry = SimpleNamespace(
        ref=f"{category}/{mid}",
        owner="memcurate",
        category=category,
        title=title,
        description=doc.description,
        status=status,
        created=updated,
        updated=updated,
        broken="",
    )
    return entry, memfile.render(doc)


def claude_file(name: str, title: str, body: str, updated: str = "2026-11-02T10:00:00Z"):
    entry = SimpleNamespace(
        ref=f"claude/{name}",
        owner="claude",
        category="claude",
        title=title,
        description="",
        status="active",
        created=updated,
        updated=updated,
        broken="",
    )
    return entry, f"# {title}\n\n{body}\n"


def found(*items, threshold: float = 0.6):
    memos = [m for m in (memo_of(e, t) for e, t in items) if m is not None]
    return find_pairs(memos, threshold)


FILLER = [
    (
        "Redis evicts least recently used keys",
        "The session cache evicts with allkeys-lru at 2gb.",
        "Hot keys stay resident.",
    ),
    (
        "Kafka consumers commit offsets manually",
        "Consumers commit after the batch is written downstream.",
        "At-least-once delivery.",
    ),
    (
        "Terraform state lives in a locked bucket",
        "Remote state sits in a versioned bucket with a lock table.",
        "Two applies once clobbered it.",
    ),
    (
        "Nginx compresses responses with gzip",
        "Gzip level five for text, json and javascript responses.",
        "Higher levels cost more CPU.",
    ),
    (
        "GraphQL schemas are stitched at the edge",
        "The edge service stitches the billing and catalog schemas.",
        "Teams own their schemas.",
    ),
    (
        "Celery beat runs on one node only",
        "Exactly one scheduler container runs celery beat.",
        "Duplicate beats doubled emails.",
    ),
    (
        "Old build artifacts expire after a month",
        "An object lifecycle rule deletes artifacts older than thirty days.",
        "Storage bills grew.",
    ),
    (
        "Sentry samples a tenth of transactions",
        "Performance tracing keeps ten percent of transactions.",
        "Quota ran out in a week.",
    ),
    (
        "Docker builds order layers for caching",
        "Dependency manifests are copied before sources in every Dockerfile.",
        "Rebuilds take seconds.",
    ),
    (
        "Postgres autovacuum is tuned for big tables",
        "Large tables get a lower scale factor for autovacuum.",
        "Bloat slowed reports.",
    ),
    (
        "Webpack splits vendor chunks",
        "Vendor modules go to a separate chunk with a content hash.",
        "Browsers cache them longer.",
    ),
    (
        "gRPC calls carry deadlines",
        "Every outgoing gRPC call sets a deadline from the request budget.",
        "Hung calls piled up.",
    ),
]


def filler(n: int):
    """Unrelated memories, so that word rarity means something."""
    out = []
    for i in range(n):
        title, first, second = FILLER[i % len(FILLER)]
        suffix = f" (shard {i // len(FILLER)})" if i >= len(FILLER) else ""
        out.append(memory(f"filler-{i}", title + suffix, first, second))
    return out


JWT = memory(
    "use-jwt-for-api-auth",
    "Use JWT for API authentication",
    "The public API authenticates callers with stateless JWT bearer tokens signed by the gateway.",
    "Stateless tokens let the API scale horizontally without shared session storage.",
    updated="2026-10-01T10:00:00Z",
)
JWT_AGAIN = memory(
    "jwt-tokens-authenticate-the-api",
    "JWT tokens authenticate the public API",
    "Callers of the public API authenticate with stateless JWT bearer tokens signed by the gateway.",
    "Stateless tokens let the API scale horizontally, no shared session storage needed.",
    updated="2026-11-01T10:00:00Z",
)


def test_a_paraphrase_is_a_duplicate_older_first():
    pairs = found(JWT, JWT_AGAIN, *filler(12))
    assert [(p.a, p.b, p.kind) for p in pairs] == [
        ("decision/use-jwt-for-api-auth", "decision/jwt-tokens-authenticate-the-api", DUPLICATE)
    ]
    assert pairs[0].score >= 0.6 and "alike" in pairs[0].why and "\n" not in pairs[0].why


def test_a_different_subject_is_no_pair():
    other = memory(
        "use-postgres-for-storage",
        "Use Postgres for storage",
        "Application data lives in a managed Postgres database with nightly backups.",
        "Relational queries and transactions fit the billing domain.",
    )
    assert found(JWT, other, *filler(12)) == []


def test_the_threshold_comes_from_the_config():
    assert duplicates.threshold_of({"hygiene": {"duplicate_threshold": 0.9}}) == 0.9
    assert duplicates.threshold_of({}) == duplicates.DEFAULT_THRESHOLD
    assert found(JWT, JWT_AGAIN, threshold=0.99) == []


def test_different_categories_do_not_pair_but_a_claude_file_pairs_with_any():
    as_constraint = memory(
        "jwt-constraint",
        "JWT tokens authenticate the public API",
        "Callers of the public API authenticate with stateless JWT bearer tokens signed by the gateway.",
        "Stateless tokens let the API scale horizontally, no shared session storage needed.",
        category="constraint",
    )
    assert found(JWT, as_constraint, *filler(12)) == []
    claude = claude_file(
        "auth.md",
        "API authentication",
        "The public API authenticates callers with stateless JWT bearer tokens signed by the "
        "gateway. Stateless tokens let the API scale horizontally without shared session storage.",
    )
    pairs = found(JWT, claude, *filler(12))
    assert [(p.a, p.b, p.kind) for p in pairs] == [
        ("decision/use-jwt-for-api-auth", "claude/auth.md", DUPLICATE)
    ]


def test_archived_broken_and_summaries_are_not_compared():
    archived = memory(
        "jwt-old",
        "JWT tokens authenticate the public API",
        "Callers of the public API authenticate with stateless JWT bearer tokens signed by the gateway.",
        "Stateless tokens let the API scale horizontally, no shared session storage needed.",
        status="archived",
    )
    assert found(JWT, archived, *filler(12)) == []
    entry, text = JWT_AGAIN
    assert memo_of(SimpleNamespace(**{**vars(entry), "broken": "invalid YAML"}), text) is None
    line = SimpleNamespace(
        ref="claude/MEMORY.md#0123456789ab",
        owner="claude",
        category="claude",
        title="x",
        description="",
        status="active",
        created="",
        updated="",
        broken="",
    )
    assert memo_of(line, "- JWT tokens authenticate the public API") is None


def test_a_negation_flip_is_a_contradiction_newer_second():
    old = memory(
        "use-the-ci-cache",
        "Use the CI dependency cache",
        "Use the shared dependency cache in CI builds for the monorepo.",
        "Cold installs took twelve minutes per pipeline.",
        updated="2026-09-01T10:00:00Z",
    )
    new = memory(
        "ci-dependency-cache-off",
        "Do not use the CI dependency cache",
        "Do not use the shared dependency cache in CI builds for the monorepo.",
        "Stale cached wheels broke three releases.",
        updated="2026-11-01T10:00:00Z",
    )
    pairs = found(new, old, *filler(12))
    assert [(p.a, p.b, p.kind) for p in pairs] == [
        ("decision/use-the-ci-cache", "decision/ci-dependency-cache-off", CONTRADICTION)
    ]
    assert "denies" in pairs[0].why


def test_another_value_for_the_same_setting_is_a_contradiction():
    old = memory(
        "python-version",
        "Python version for the service",
        "The service runs on Python 3.11 in production.",
        "The base image ships it.",
        category="constraint",
        updated="2026-09-01T10:00:00Z",
    )
    new = memory(
        "python-version-bump",
        "Python version for the service",
        "The service runs on Python 3.12 in production.",
        "The base image ships it.",
        category="constraint",
        updated="2026-11-01T10:00:00Z",
    )
    pairs = found(old, new, *filler(12))
    assert [p.kind for p in pairs] == [CONTRADICTION]
    assert "python" in pairs[0].why and "3.12" in pairs[0].why and "3.11" in pairs[0].why


def test_the_newer_replacing_the_older_choice_is_a_contradiction():
    old = memory(
        "use-flask-for-the-api",
        "Use Flask for the HTTP API",
        "The HTTP API is served by Flask behind gunicorn.",
        "Flask was already known to the team.",
        updated="2026-08-01T10:00:00Z",
    )
    new = memory(
        "use-fastapi-for-the-api",
        "Use FastAPI for the HTTP API",
        "The HTTP API is served by FastAPI instead of Flask.",
        "Async handlers and typed request models.",
        updated="2026-11-01T10:00:00Z",
    )
    pairs = found(old, new, *filler(12))
    assert [(p.a, p.kind) for p in pairs] == [("decision/use-flask-for-the-api", CONTRADICTION)]
    assert "instead of flask" in pairs[0].why.lower()


def test_same_subject_that_agrees_is_no_contradiction():
    # counts of things (turns, files) and the same value said twice are no disagreement
    old = memory(
        "retry-limit",
        "Retry limit for the uploader",
        "The uploader retries 5 times (the user, turn 3).",
        "Flaky storage needed it; seen in 2 files.",
        category="constraint",
        updated="2026-09-01T10:00:00Z",
    )
    new = memory(
        "uploader-retries",
        "Uploader retry limit",
        "The uploader retries 5 times before failing (the user, turn 9).",
        "Flaky storage needed it; seen in 4 files.",
        category="constraint",
        updated="2026-11-01T10:00:00Z",
    )
    assert all(p.kind == DUPLICATE for p in found(old, new, *filler(12)))


def test_candidates_are_bounded_not_every_pair():
    items = filler(600)
    memos = [memo_of(e, t) for e, t in items]
    assert len(duplicates.candidates(memos)) <= len(memos) * duplicates.MAX_CANDIDATES
    assert len(duplicates.candidates(memos)) < len(memos) * (len(memos) - 1) // 2 // 10


def test_a_threshold_out_of_range_is_a_config_error_naming_the_key(tmp_path):
    import pytest

    from memcurate.curator import config
    from memcurate.curator.util.assets import asset

    layer = tmp_path / "memcurate.yaml"
    layer.write_text("hygiene:\n  duplicate_threshold: 1.5\n")
    with pytest.raises(config.ConfigError, match="hygiene.duplicate_threshold"):
        config.build([asset("config.default.yaml"), str(layer)])
    layer.write_text("hygiene:\n  duplicate_threshold: 0.8\n")
    assert duplicates.threshold_of(config.build([asset("config.default.yaml"), str(layer)])) == 0.8
