"""Fakes shared by the engine tests."""

from __future__ import annotations

from pathlib import Path

from memcurate.curator.candidates import staging
from memcurate.curator.drafting import DraftResult
from memcurate.curator.drafting.offline import OfflineDrafter
from memcurate.curator.engine import Engine

NOW = "2026-11-22T10:04:00Z"  # the stamp drafts carry in the backend tests


class Failing:
    """The offline drafter, except that the categories in `fail` fail as a model's refusal would."""

    name = "failing"
    reason = "test"

    def __init__(self, fail: set[str]) -> None:
        self.fail, self.inner = fail, OfflineDrafter()

    def draft(self, request):
        if request.category in self.fail:
            return DraftResult(doc=None, text="", model="fake", error="the model said no")
        return self.inner.draft(request)


def backend_engine(
    project: Path,
    tmp_path: Path,
    backend: str,
    *,
    retries: int = 0,
    timeout: float = 60.0,
    fallback: str = "[]",
    deadline: float = 600.0,
    verify: bool = False,
    **drafting,
) -> Engine:
    """An engine whose project drafts with `backend`, no backoff, the memory root in tmp_path; no
    fallback chain unless `fallback` (YAML) says, no model verifier unless `verify` (`drafting`: more
    keys of the config's drafting section)."""
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "memcurate.yaml").write_text(
        f"backend: {backend}\nmemory:\n  root: {tmp_path / 'memory'}\n"
        f"drafting:\n  retries: {retries}\n  backoff_seconds: 0.0\n  timeout_seconds: {timeout}\n"
        f"  fallback: {fallback}\n  deadline_seconds: {deadline}\n"
        + "".join(f"  {k}: {v}\n" for k, v in drafting.items())
        + f"verify:\n  llm: {'true' if verify else 'false'}\n"
    )
    return Engine(project, clock=lambda: NOW)


def decision(engine: Engine, tid: str) -> dict:
    """The state record of a triage's decision candidate."""
    return staging.category_states(engine.data, tid)["decision"]
