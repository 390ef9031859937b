"""Agreement among candidates: the grouping by behaviour, the decision (a group of at least two and
at least tau of all k made, undisputed), and the tau curve read from recorded groups."""

from __future__ import annotations

import pytest

from vreact.verify.agreement import DISPUTED, NO_AGREEMENT, NO_CANDIDATE, Group, agree, grouped, tau_curve


def test_candidates_are_grouped_by_behaviour_largest_first_ties_to_the_earliest():
    groups = grouped({0: "a", 1: "b", 2: "a", 3: "b", 4: "c"})
    assert groups == (Group((0, 2)), Group((1, 3)), Group((4,)))


def test_the_largest_group_answers_when_it_holds_two_and_tau_of_all_k_made():
    # five made, one rejected by an R1 gate (it counts against): three agree, one apart
    groups = grouped({0: "a", 2: "a", 3: "a", 4: "b"})
    assert agree(5, 0.6, groups).chosen == 0
    held = agree(5, 0.7, groups)
    assert held.chosen is None and held.cause == NO_AGREEMENT


def test_two_largest_groups_of_one_size_are_no_agreement_whichever_came_first():
    tied = grouped({0: "a", 1: "a", 2: "b", 3: "b"})
    assert agree(4, 0.5, tied).cause == NO_AGREEMENT
    assert agree(4, 0.5, grouped({0: "a", 1: "a", 2: "b", 3: "b"}, disputed={0, 1})).cause == NO_AGREEMENT


def test_the_tau_curve_counts_the_attempt_whose_share_is_the_cut():
    """Two of three is 0.6667 when shown, and still two of three when compared."""
    points, area = tau_curve([(2, 3, False, True)], scoreable=1)
    assert [(p.tau, p.coverage, p.selective_accuracy) for p in points] == [(0.6667, 1.0, 1.0)]
    assert area == 1.0


def test_one_candidate_alone_never_agrees_and_none_is_no_candidate():
    assert agree(1, 0.0, grouped({0: "a"})).cause == NO_AGREEMENT
    assert agree(5, 0.0, grouped({})).cause == NO_CANDIDATE


def test_a_largest_group_that_fails_a_stated_example_is_disputed_not_answered():
    groups = grouped({0: "x", 1: "x", 2: "x", 3: "y"}, disputed={0, 1, 2})
    decided = agree(4, 0.5, groups)
    assert decided.top == Group((0, 1, 2), disputed=True)
    assert decided.chosen is None and decided.cause == DISPUTED


@pytest.mark.parametrize(
    ("attempts", "curve", "area"),
    [
        # (largest group, k, disputed, right): thresholds 1.0, 0.6, 0.4 of k = 5
        (
            [(5, 5, False, True), (3, 5, False, True), (2, 5, False, False), (1, 5, False, True)],
            [(1.0, 0.25, 1.0), (0.6, 0.5, 1.0), (0.4, 0.75, 0.6667)],
            round(0.5 * 1.0 + 0.25 * (1.0 + 0.6667) / 2, 4),
        ),
        # a disputed group never answers, whatever tau
        ([(4, 5, True, True), (2, 4, False, True)], [(0.5, 0.5, 1.0)], 0.5),
    ],
)
def test_the_tau_curve_is_read_from_the_groups(attempts, curve, area):
    points, got = tau_curve(attempts, scoreable=len(attempts))
    assert [(p.tau, p.coverage, p.selective_accuracy) for p in points] == curve
    assert got == area
