"""The retrieval ceiling's parts: which paragraphs a recorded step showed the executor."""

from __future__ import annotations

from vreact.records import StepRecord
from vreact.report.compute import retrieved


def step(action: str, observation: str, pid: str = "") -> StepRecord:
    return StepRecord(1, 1, "answer", 1, 1, None, "", action, pid, [], observation)


def test_every_search_hit_and_each_read_paragraph_count_nothing_else():
    steps = [
        step("search", "[12] Kestrel Bridge: spans the river ...\n[3] Quillmoor: a town\n[07] Ash: x"),
        step(
            "read", "[40] Edwin Marlow: born 1901.\n[41] not a hit: a line of the paragraph's own text", "40"
        ),
        step("search", "no results; try other words"),
        step("read", "no paragraph with id '99'; use an id from search results", "99"),
        step("search", "[5] Fen: y\nyou repeated this search; try other words"),  # a hint appended
        step("finish", "[77] not shown: the input of a finish", "77"),
        step("search", "searching for 'forbidden' is not allowed here; search other words"),  # blocked
    ]
    assert retrieved(steps) == {"12", "3", "7", "40", "5"}
