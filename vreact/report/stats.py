"""Statistics for the experiment reports (DeReAct, Section 4.1): several attempts per task, Pass@1 (mean
single-attempt success), Pass@k (solved in at least one of k attempts, estimated without bias), Lift (a's
improvement over b), Diff (Pass@k lift minus Pass@1 lift), standard errors, and two-sided paired
permutation (sign-flip) tests over tasks that keep each task's attempts together. Standard library only.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

_CHUNK_BITS = 8  # sign-assignment bits looked up per table (one byte of the mask)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``n`` attempts with ``c`` successes: 1 - C(n-c, k) / C(n, k) (Chen et al., 2021).

    It is the probability that a k-subset of the n attempts, drawn uniformly, holds a success.
    """
    if k < 1:
        raise ValueError(f"pass_at_k: k must be at least 1, got k={k}")
    if k > n:
        raise ValueError(f"pass_at_k: k={k} exceeds the number of attempts n={n}")
    if not 0 <= c <= n:
        raise ValueError(f"pass_at_k: successes c={c} must lie in [0, n={n}]")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def mean_se(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of the mean (sample standard deviation, n-1, over sqrt(n)); se is 0.0 for
    a single value."""
    if not values:
        raise ValueError("mean_se: no values")
    mean = statistics.fmean(values)
    if len(values) == 1:
        return mean, 0.0
    return mean, statistics.stdev(values, mean) / math.sqrt(len(values))


def _percentile(ordered: Sequence[float], q: float) -> float:
    """The q-th percentile of sorted values, interpolating linearly between closest ranks (numpy's
    default ``method="linear"``)."""
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def distribution(values: Sequence[float]) -> dict[str, float | None]:
    """Mean, median, 90th and 95th percentile (linear interpolation); all None when there are no values."""
    if not values:
        return {"mean": None, "median": None, "p90": None, "p95": None}
    ordered = sorted(values)
    return {
        "mean": statistics.fmean(ordered),
        "median": _percentile(ordered, 50),
        "p90": _percentile(ordered, 90),
        "p95": _percentile(ordered, 95),
    }


@dataclass(frozen=True)
class PermutationTest:
    """A paired permutation test: ``observed`` is the (signed) mean of the differences, the statistic is
    its absolute value; ``assignments`` is the number of sign assignments evaluated."""

    observed: float
    p_value: float
    exact: bool
    assignments: int


def _subset_sum_tables(values: Sequence[float]) -> list[list[float]]:
    """For each run of 8 values, the sums of all its 256 subsets, indexed by the subset's bit mask."""
    tables = []
    for start in range(0, len(values), _CHUNK_BITS):
        table = [0.0]
        for value in values[start : start + _CHUNK_BITS]:
            table += [s + value for s in table]
        tables.append(table)
    return tables


def paired_permutation_test(
    diffs: Sequence[float], iterations: int = 10_000, seed: int = 0
) -> PermutationTest:
    """Two-sided sign-flip test of mean(diffs) == 0, one difference per task.

    Under the null each task's difference is as likely to be negated, so the statistic |mean(s * d)| is
    computed for sign assignments s; the p-value is the share of assignments at least as extreme as the
    observed one. When 2**len(diffs) <= iterations every assignment is enumerated (exact); otherwise
    ``iterations`` random assignments are drawn with ``random.Random(seed)`` and p = (1 + count) /
    (1 + iterations). Assignments equal to the observed statistic up to float rounding count as extreme.
    """
    if iterations < 1:
        raise ValueError(f"paired_permutation_test: iterations must be at least 1, got {iterations}")
    n = len(diffs)
    if n == 0 or all(d == 0 for d in diffs):
        return PermutationTest(observed=0.0, p_value=1.0, exact=True, assignments=0)

    # A sign assignment is a bit mask (bit i set: task i negated), so that
    # sum(s * d) = total - 2 * (sum of the negated d), the latter read from per-byte subset-sum tables.
    total = math.fsum(diffs)
    threshold = abs(total) - (1e-12 + 1e-9 * math.fsum(abs(d) for d in diffs))
    tables = _subset_sum_tables(diffs)
    width = len(tables)

    def extreme(masks: Iterable[int]) -> int:
        count = 0
        for mask in masks:
            negated = sum(map(list.__getitem__, tables, mask.to_bytes(width, "little")))
            if abs(total - 2.0 * negated) >= threshold:
                count += 1
        return count

    observed = total / n
    exact = n < iterations.bit_length()  # i.e. 2**n <= iterations
    if exact:
        assignments = 2**n
        return PermutationTest(observed, extreme(range(assignments)) / assignments, True, assignments)
    rng = random.Random(seed)
    count = extreme(rng.getrandbits(n) for _ in range(iterations))
    return PermutationTest(observed, (1 + count) / (1 + iterations), False, iterations)


@dataclass(frozen=True)
class PairedComparison:
    """Configuration a against b on the tasks both ran, at full precision (the report's row,
    rounded, is ``vreact.report.model.Comparison``): Pass@1 and Pass@k of each, the lifts (a - b), Diff
    (Pass@k lift minus Pass@1 lift) and the paired permutation p-values of each (``exact`` when all three
    were enumerated exactly)."""

    a: str
    b: str
    tasks: int
    k: int
    pass1_a: float
    pass1_b: float
    lift1: float
    p1: float
    passk_a: float
    passk_b: float
    liftk: float
    pk: float
    diff: float
    p_diff: float
    exact: bool


def compare(
    a: Mapping[str, Sequence[bool]],
    b: Mapping[str, Sequence[bool]],
    k: int,
    name_a: str = "a",
    name_b: str = "b",
    iterations: int = 10_000,
    seed: int = 0,
) -> PairedComparison:
    """Compare two configurations given, per task id, the success of each attempt.

    Only the task ids both share are used. Per task: Pass@1 is the mean success and Pass@k is
    ``pass_at_k(n, c, k)``; the tests permute per-task differences, so each task's attempts stay together.
    """
    if k < 1:
        raise ValueError(f"compare: k must be at least 1, got k={k}")
    tasks = sorted(set(a) & set(b))
    if not tasks:
        raise ValueError(f"compare: {name_a!r} and {name_b!r} share no task")

    def rates(runs: Mapping[str, Sequence[bool]], name: str, task: str) -> tuple[float, float]:
        attempts = runs[task]
        if len(attempts) < k:
            raise ValueError(
                f"compare: task {task!r} has {len(attempts)} attempts in {name!r}, fewer than k={k}"
            )
        successes = sum(bool(x) for x in attempts)
        return successes / len(attempts), pass_at_k(len(attempts), successes, k)

    p1_a, pk_a, p1_b, pk_b = [], [], [], []
    for task in tasks:
        one, many = rates(a, name_a, task)
        p1_a.append(one)
        pk_a.append(many)
        one, many = rates(b, name_b, task)
        p1_b.append(one)
        pk_b.append(many)

    d1 = [x - y for x, y in zip(p1_a, p1_b, strict=True)]
    dk = [x - y for x, y in zip(pk_a, pk_b, strict=True)]
    dd = [y - x for x, y in zip(d1, dk, strict=True)]
    t1, tk, td = (paired_permutation_test(d, iterations, seed) for d in (d1, dk, dd))
    lift1, liftk = statistics.fmean(d1), statistics.fmean(dk)
    return PairedComparison(
        a=name_a,
        b=name_b,
        tasks=len(tasks),
        k=k,
        pass1_a=statistics.fmean(p1_a),
        pass1_b=statistics.fmean(p1_b),
        lift1=lift1,
        p1=t1.p_value,
        passk_a=statistics.fmean(pk_a),
        passk_b=statistics.fmean(pk_b),
        liftk=liftk,
        pk=tk.p_value,
        diff=liftk - lift1,
        p_diff=td.p_value,
        exact=t1.exact and tk.exact and td.exact,
    )


def to_dict(c: PairedComparison) -> dict[str, Any]:
    """The comparison as a JSON-ready dict (full float precision)."""
    return asdict(c)
