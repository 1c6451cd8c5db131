"""Fakes shared by the engine tests."""

from __future__ import annotations

from curator.drafting import DraftResult
from curator.drafting.offline import OfflineDrafter


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
