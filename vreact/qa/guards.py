"""The duplicate-search rollback: a loop guard of qa's steps (``guard: {duplicate_search: true}``
with ``guards: true``; the configuration's ``pipeline`` may name it too, ``duplicate_search``)."""

from __future__ import annotations

from vreact.pipeline import PASS, Member, StepOutcome, Turn, member, rollback
from vreact.pipeline._builtin import normalised


@member("duplicate_search")
class DuplicateSearchRollback(Member):
    """A search whose normalised query already ran in this try and returned results is not run:
    the step is rolled back (not spent) with a note naming the earlier search, at most
    ``budget`` times a try; then every call goes through (the repetition guard is the backstop)."""

    NO_RESULTS = "no results"

    def __init__(self, budget: int = 3) -> None:
        self.left = budget
        self._done: dict[str, int] = {}  # normalised query -> the step (1-based) that ran it

    def proposal(self, turn: Turn) -> StepOutcome:
        step = turn.step
        if step is None or step.action != "search" or self.left <= 0:
            return PASS
        earlier = self._done.get(normalised(step.input))
        if earlier is None:
            return PASS
        self.left -= 1
        return rollback(
            f"You already searched {step.input!r} at step {earlier}; its results are above. "
            "Search other words for the missing fact, read an id, or finish."
        )

    def result(self, turn: Turn) -> StepOutcome:
        step = turn.step
        found = turn.observation is not None and not turn.observation.startswith(self.NO_RESULTS)
        if step is not None and step.action == "search" and found:
            self._done.setdefault(normalised(step.input), turn.index + 1)
        return PASS
