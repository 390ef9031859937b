"""vreact.report.stats: Pass@k, standard errors, percentiles and the paired permutation tests, against values
worked out by hand and against brute-force enumeration."""

from __future__ import annotations

import itertools
import json
import math
import random
from fractions import Fraction

import pytest

from vreact.report.stats import (
    PairedComparison,
    PermutationTest,
    compare,
    distribution,
    mean_se,
    paired_permutation_test,
    pass_at_k,
    to_dict,
)

T, F = True, False

# Two configurations, 3 attempts per task. "t5" is only in A and must be ignored.
#
#   task  A attempts   A p1  A p3 | B attempts   B p1  B p3 | d1 = dp1  d3 = dp3  dd = d3 - d1
#   t1    T F F        1/3   1    | F F F        0     0    |  1/3       1          2/3
#   t2    F T F        1/3   1    | F F F        0     0    |  1/3       1          2/3
#   t3    T T F        2/3   1    | F F F        0     0    |  2/3       1          1/3
#   t4    T T T        1     1    | F T T        2/3   1    |  1/3       0         -1/3
#
# Pass@1:  A = (1/3 + 1/3 + 2/3 + 1) / 4 = (7/3) / 4 = 7/12;  B = (2/3) / 4 = 1/6 = 2/12
#          lift1 = 7/12 - 2/12 = 5/12  (= mean of d1 = (1+1+2+1)/3 / 4 = 5/12)
# Pass@3:  A = 4/4 = 1;  B = 1/4;  liftk = 3/4  (= mean of d3 = 3/4)
# Diff:    liftk - lift1 = 9/12 - 5/12 = 4/12 = 1/3  (= mean of dd = (2+2+1-1)/3 / 4 = 4/12)
#
# Exact p-values, 2**4 = 16 sign assignments each, statistic |sum(s * d)| (in units of 1/3 where useful):
# p1:   d1 = (1, 1, 2, 1)/3, observed sum 5/3, the largest possible; only all-plus and all-minus reach
#       |sum| = 5/3, every other assignment flips at least one term and drops |sum| to <= 3/3.
#       count 2 -> p1 = 2/16 = 0.125
# p3:   d3 = (1, 1, 1, 0), observed 3. The sign of t4's 0 does not matter (x2); of the 8 signs of
#       (1, 1, 1) only +++ and --- give |sum| = 3 (the rest give 1).  count 2 * 2 = 4 -> p3 = 4/16 = 0.25
# diff: dd = (2, 2, 1, -1)/3, observed |2 + 2 + 1 - 1| = 4 (thirds). The two 2's give +4 (1 way), 0
#       (2 ways) or -4 (1 way); the two 1's give +2, 0, 0, -2. |sum| >= 4 needs the 2's at +-4:
#       +4 with +2, 0, 0 (3 ways; +4-2 = 2 fails) and -4 with -2, 0, 0 (3 ways).
#       count 6 -> p_diff = 6/16 = 0.375
TABLE_A = {
    "t1": [T, F, F],
    "t2": [F, T, F],
    "t3": [T, T, F],
    "t4": [T, T, T],
    "t5": [T, T, T],
}
TABLE_B = {
    "t1": [F, F, F],
    "t2": [F, F, F],
    "t3": [F, F, F],
    "t4": [F, T, T],
}


def test_compare_hand_computed_table() -> None:
    c = compare(TABLE_A, TABLE_B, k=3, name_a="dereact", name_b="react")
    assert (c.a, c.b, c.tasks, c.k) == ("dereact", "react", 4, 3)
    assert c.pass1_a == pytest.approx(7 / 12)
    assert c.pass1_b == pytest.approx(2 / 12)
    assert c.lift1 == pytest.approx(5 / 12)
    assert c.passk_a == pytest.approx(1.0)
    assert c.passk_b == pytest.approx(1 / 4)
    assert c.liftk == pytest.approx(3 / 4)
    assert c.diff == pytest.approx(1 / 3)
    assert c.p1 == 2 / 16
    assert c.pk == 4 / 16
    assert c.p_diff == 6 / 16
    assert c.exact is True


def test_compare_is_antisymmetric_and_k1_has_no_diff() -> None:
    # Swapping a and b negates the lifts and leaves the two-sided p-values unchanged.
    c = compare(TABLE_B, TABLE_A, k=3)
    assert (c.lift1, c.liftk, c.diff) == pytest.approx((-5 / 12, -3 / 4, -1 / 3))
    assert (c.p1, c.pk, c.p_diff) == (2 / 16, 4 / 16, 6 / 16)
    # With k = 1, Pass@k is Pass@1: Diff is 0 per task and its test is 1.0.
    c1 = compare(TABLE_A, TABLE_B, k=1)
    assert c1.passk_a == pytest.approx(c1.pass1_a) and c1.liftk == pytest.approx(c1.lift1)
    assert c1.diff == pytest.approx(0.0) and c1.p_diff == 1.0


def test_compare_pass_at_2_of_3() -> None:
    # pass@2 of 3 attempts with c successes = 1 - C(3-c, 2)/C(3, 2):
    # c=0 -> 0, c=1 -> 1 - 1/3 = 2/3, c>=2 -> 1.
    # A: c = 1, 1, 2, 3 -> (2/3 + 2/3 + 1 + 1)/4 = (10/3)/4 = 5/6;  B: c = 0, 0, 0, 2 -> 1/4.
    c = compare(TABLE_A, TABLE_B, k=2)
    assert c.passk_a == pytest.approx(5 / 6)
    assert c.passk_b == pytest.approx(1 / 4)
    assert c.liftk == pytest.approx(5 / 6 - 1 / 4)
    assert c.diff == pytest.approx(5 / 6 - 1 / 4 - 5 / 12)


def test_to_dict_is_json_ready() -> None:
    c = compare(TABLE_A, TABLE_B, k=3, name_a="x", name_b="y")
    d = to_dict(c)
    assert set(d) == {f.name for f in PairedComparison.__dataclass_fields__.values()}
    round_trip = json.loads(json.dumps(d))
    assert round_trip["a"] == "x" and round_trip["tasks"] == 4 and round_trip["exact"] is True
    assert round_trip["p_diff"] == pytest.approx(0.375)


def test_compare_errors() -> None:
    with pytest.raises(ValueError, match="share no task"):
        compare({"t1": [T, T, T]}, {"t2": [T, T, T]}, k=3)
    with pytest.raises(ValueError, match=r"'t2'.*'b'"):
        compare({"t1": [T, T, T], "t2": [T, T, T]}, {"t1": [T, T, T], "t2": [T, F]}, k=3)
    with pytest.raises(ValueError, match="k must be at least 1"):
        compare(TABLE_A, TABLE_B, k=0)


# --- pass_at_k ----------------------------------------------------------------------------------------------


def _brute_pass_at_k(n: int, c: int, k: int) -> Fraction:
    """Share of the k-subsets of n attempts (the first c successful) holding at least one success."""
    subsets = list(itertools.combinations(range(n), k))
    return Fraction(sum(any(i < c for i in s) for s in subsets), len(subsets))


def test_pass_at_k_matches_brute_force() -> None:
    for n in range(1, 7):
        for k in range(1, n + 1):
            for c in range(n + 1):
                assert pass_at_k(n, c, k) == pytest.approx(float(_brute_pass_at_k(n, c, k)), abs=1e-12)


def test_pass_at_k_special_cases() -> None:
    for c in range(4):
        assert pass_at_k(3, c, 3) == float(c > 0)
    for n in range(1, 8):
        for c in range(n + 1):
            assert pass_at_k(n, c, 1) == pytest.approx(c / n)
    # Hand: n=5, c=2, k=2 -> 1 - C(3,2)/C(5,2) = 1 - 3/10 = 0.7
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("n", "c", "k", "message"),
    [
        (3, 1, 0, "k must be at least 1"),
        (3, 1, 4, "exceeds"),
        (3, -1, 2, "successes"),
        (3, 4, 2, "successes"),
    ],
)
def test_pass_at_k_errors(n: int, c: int, k: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pass_at_k(n, c, k)


# --- mean_se and distribution ----------------------------------------------------------------------------


def test_mean_se() -> None:
    # [2, 4, 4, 4, 5, 5, 7, 9]: mean 40/8 = 5; squared deviations 9+1+1+1+0+0+4+16 = 32;
    # sample variance 32/7; se = sqrt(32/7) / sqrt(8) = sqrt(4/7) = 0.7559289...
    mean, se = mean_se([2, 4, 4, 4, 5, 5, 7, 9])
    assert mean == pytest.approx(5.0)
    assert se == pytest.approx(math.sqrt(4 / 7))
    assert se == pytest.approx(0.7559289460184544)
    assert mean_se([0.25]) == (0.25, 0.0)
    # Three runs of Pass@1: 0.5, 0.6, 0.7 -> mean 0.6, sd 0.1, se 0.1/sqrt(3)
    assert mean_se([0.5, 0.6, 0.7]) == pytest.approx((0.6, 0.1 / math.sqrt(3)))
    with pytest.raises(ValueError, match="no values"):
        mean_se([])


def test_distribution() -> None:
    # 1..10: rank positions (n-1) * q = 9q: median 4.5 -> 5 + 0.5 = 5.5; p90 8.1 -> 9 + 0.1 = 9.1;
    # p95 8.55 -> 9 + 0.55 = 9.55; mean 55/10 = 5.5.
    d = distribution([float(x) for x in range(10, 0, -1)])  # unsorted input
    assert d == pytest.approx({"mean": 5.5, "median": 5.5, "p90": 9.1, "p95": 9.55})
    # [0, 10, 20, 100]: positions 3q: median 1.5 -> 15; p90 2.7 -> 20 + 0.7*80 = 76; p95 2.85 -> 88;
    # mean 130/4 = 32.5.
    assert distribution([100, 0, 20, 10]) == pytest.approx({"mean": 32.5, "median": 15, "p90": 76, "p95": 88})
    assert distribution([3.0]) == {"mean": 3.0, "median": 3.0, "p90": 3.0, "p95": 3.0}
    assert distribution([]) == {"mean": None, "median": None, "p90": None, "p95": None}


# --- paired_permutation_test ------------------------------------------------------------------------------


def _brute_p(diffs: list[Fraction]) -> Fraction:
    """Exact two-sided sign-flip p-value with rational arithmetic (no rounding anywhere)."""
    observed = abs(sum(diffs, Fraction(0)))
    signs = list(itertools.product((1, -1), repeat=len(diffs)))
    sums = [sum((s * d for s, d in zip(ss, diffs, strict=True)), Fraction(0)) for ss in signs]
    extreme = sum(abs(total) >= observed for total in sums)
    return Fraction(extreme, len(signs))


def test_exact_matches_rational_brute_force() -> None:
    rng = random.Random(7)
    for _ in range(30):
        n = rng.randint(1, 8)
        diffs = [Fraction(rng.randint(-3, 3), 3) for _ in range(n)]
        if not any(diffs):
            continue
        result = paired_permutation_test([float(d) for d in diffs])
        assert result.exact and result.assignments == 2**n
        assert result.p_value == pytest.approx(float(_brute_p(diffs)), abs=1e-12)
        assert result.observed == pytest.approx(float(sum(diffs) / n))


def test_ties_under_float_rounding_count() -> None:
    # [0.1, 0.2, -0.3, 0.5], observed sum 0.5. |0.5 - 2f| >= 0.5 iff the negated subset sums to f <= 0 or
    # f >= 0.5: f <= 0 for {}, {-0.3}, {0.1,-0.3}, {0.2,-0.3}, {0.1,0.2,-0.3} (sum exactly 0) and their 5
    # complements -> 10/16. In floats 0.1 + 0.2 - 0.3 = 5.55e-17, so a naive >= comparison gets 8/16.
    result = paired_permutation_test([0.1, 0.2, -0.3, 0.5])
    assert result.p_value == 10 / 16 and result.exact and result.assignments == 16
    assert result.observed == pytest.approx(0.125)


def test_exact_iff_assignments_fit_in_iterations() -> None:
    diffs13 = [1.0, -0.5] * 6 + [1.0]
    r13 = paired_permutation_test(diffs13, iterations=8192)
    assert r13.exact and r13.assignments == 8192
    r13_default = paired_permutation_test(diffs13)  # 8192 <= 10_000
    assert r13_default.exact and r13_default.p_value == r13.p_value
    r13_small = paired_permutation_test(diffs13, iterations=8191)
    assert not r13_small.exact and r13_small.assignments == 8191

    diffs14 = [*diffs13, 0.5]
    r14 = paired_permutation_test(diffs14, seed=3)
    assert not r14.exact and r14.assignments == 10_000
    assert paired_permutation_test(diffs14, seed=3) == r14
    assert paired_permutation_test(diffs14, seed=4).p_value != r14.p_value
    # The Monte Carlo p-value has the (1 + count) / (1 + iterations) form.
    count = r14.p_value * 10_001 - 1
    assert count == pytest.approx(round(count)) and 0 <= round(count) <= 10_000


def test_monte_carlo_null_and_strong_effect() -> None:
    null = paired_permutation_test([1.0, -1.0] * 20)  # mean exactly 0: every assignment is as extreme
    assert not null.exact and null.p_value == 1.0
    noisy = paired_permutation_test([0.5, -0.5, 1.0, -1.0, 0.25, -0.25] * 5 + [0.1])  # 31 tasks, nearly null
    assert not noisy.exact and noisy.p_value > 0.5
    strong = paired_permutation_test([1.0] * 20)
    # Only the 2 of 2**20 assignments +...+ and -...- reach |mean| = 1; with 10,000 draws almost surely
    # none does, so p = (1 + 0) / 10_001.
    assert not strong.exact and strong.observed == 1.0
    assert strong.p_value == pytest.approx(1 / 10_001)


def test_degenerate_inputs_and_errors() -> None:
    assert paired_permutation_test([]).p_value == 1.0
    zeros = paired_permutation_test([0.0] * 30)
    assert zeros.p_value == 1.0 and zeros.observed == 0.0
    one = paired_permutation_test([0.5])  # both assignments give |0.5|
    assert one == PermutationTest(observed=0.5, p_value=1.0, exact=True, assignments=2)
    with pytest.raises(ValueError, match="iterations"):
        paired_permutation_test([1.0], iterations=0)
