"""Agreement among candidates, R3's check when a configuration makes k of them: the candidates
that reach it are grouped by what they do (a family says what that is: code, the outputs on the
inputs; question answering, the normalised answer), and the largest group's candidate is the
answer when the group holds at least two and at least ``tau`` of all k made (a candidate an R1
gate rejected counts against it). Otherwise the attempt abstains (``no_agreement``); a largest
group that fails a stated example, all of it the same way, is a rejection (``disputed_example``):
the task's own words outvote any number of candidates. No gold and no judge: nothing here knows
the right answer.

The ``tau`` curve reads the recorded groups again, no model called: at each threshold, the
attempts whose largest group would have been answered, and how many of those answers are right."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

#: Why an agreement check did not answer.
NO_CANDIDATE, NO_AGREEMENT, DISPUTED = "no_candidate", "no_agreement", "disputed_example"


@dataclass(frozen=True)
class Group:
    """Candidates (their indexes, smallest first) that did the same on every input; ``disputed``:
    they fail a stated example (all of them, the same way)."""

    members: tuple[int, ...]
    disputed: bool = False

    @property
    def size(self) -> int:
        return len(self.members)


@dataclass(frozen=True)
class Agreement:
    """One attempt's agreement: ``k`` candidates made, their groups (largest first), the candidate
    chosen (None: none) and, when none, why (``NO_CANDIDATE``, ``NO_AGREEMENT``, ``DISPUTED``)."""

    k: int
    tau: float
    groups: tuple[Group, ...]
    chosen: int | None
    cause: str | None

    @property
    def top(self) -> Group | None:
        return self.groups[0] if self.groups else None


def witnesses(groups: Iterable[Group], checked: int) -> list[int]:
    """The candidates R3's judge may run beside candidate ``checked`` (``AttemptContext.witnesses``):
    the first of each group but its own, a disputed group left out."""
    return [g.members[0] for g in groups if checked not in g.members and not g.disputed]


def grouped(behaviours: Mapping[int, Hashable], disputed: Iterable[int] = ()) -> tuple[Group, ...]:
    """The candidates by behaviour (``behaviours``: candidate index -> what it did, equal where
    two did the same), largest group first, a tie to the group holding the earliest candidate.
    A group is ``disputed`` when its candidates are among ``disputed`` (they behave the same, so
    on a stated example they all fail alike or all pass)."""
    by: dict[Hashable, list[int]] = {}
    for i in sorted(behaviours):
        by.setdefault(behaviours[i], []).append(i)
    failing = set(disputed)
    groups = [Group(tuple(m), disputed=m[0] in failing) for m in by.values()]
    return tuple(sorted(groups, key=lambda g: (-g.size, g.members[0])))


def agree(k: int, tau: float, groups: tuple[Group, ...]) -> Agreement:
    """The decision on ``groups`` of ``k`` candidates made: the largest group's first candidate
    when the group is the only largest one, undisputed, holds two or more, and at least ``tau`` of
    ``k``."""
    if not groups:
        return Agreement(k, tau, groups, None, NO_CANDIDATE)
    top = groups[0]
    if len(groups) > 1 and groups[1].size == top.size:  # a tie: which is largest is the sampling's
        return Agreement(k, tau, groups, None, NO_AGREEMENT)
    if top.disputed:
        return Agreement(k, tau, groups, None, DISPUTED)
    if top.size >= 2 and top.size >= tau * k:
        return Agreement(k, tau, groups, top.members[0], None)
    return Agreement(k, tau, groups, None, NO_AGREEMENT)


@dataclass(frozen=True)
class TauPoint:
    """One threshold of the tau curve: the share of scoreable attempts answered at it (coverage)
    and the share of those answers that are right (selective accuracy; None: none answered)."""

    tau: float
    coverage: float
    selective_accuracy: float | None


def tau_curve(attempts: list[tuple[int, int, bool, bool]], scoreable: int) -> tuple[list[TauPoint], float]:
    """The tau curve from recorded groups, and its area (selective accuracy over coverage,
    trapezoids from coverage 0): each attempt as ``(largest group's size, k, undecided, right)``
    (``undecided``: disputed, or tied with another group; ``right``: the largest group's candidate
    is right). At threshold tau an attempt answers when its largest group is decided, holds two or
    more, and at least tau of its k; the thresholds are the attempts' own shares, compared exactly."""
    shares = sorted({Fraction(s, k) for s, k, d, _ in attempts if k and s >= 2 and not d}, reverse=True)
    points = []
    for tau in shares:
        kept = [right for s, k, d, right in attempts if not d and s >= 2 and Fraction(s, k) >= tau]
        points.append(
            TauPoint(
                tau=round(float(tau), 4),
                coverage=round(len(kept) / scoreable, 4) if scoreable else 0.0,
                selective_accuracy=round(sum(kept) / len(kept), 4) if kept else None,
            )
        )
    area, last_c, last_a = 0.0, 0.0, None
    for p in points:
        if p.selective_accuracy is not None:
            a0 = p.selective_accuracy if last_a is None else last_a
            area += (p.coverage - last_c) * (a0 + p.selective_accuracy) / 2
            last_c, last_a = p.coverage, p.selective_accuracy
    return points, round(area, 4)
