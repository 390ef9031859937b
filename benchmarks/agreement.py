"""What one problem's agreement check costs: k candidates run on up to N made-up inputs in one
sandbox start (``mode="behaviours"``: bubblewrap, the system's Python, each candidate in a process
of its own, the outputs compared by the checker). For each of HumanEval's problems, the inputs are
made by ``vreact.code.generated`` (from the prompt alone: its type hints or its stated examples'
values) and the k candidates are its canonical solution written k ways (a comment apart): every
candidate answers every input, the most calls a check can make. Prints the median, 90th
percentile and largest whole-check time (milliseconds, from outside), the checker's own share,
and the time Hypothesis took to make the inputs, kept apart.

    .venv/bin/python benchmarks/agreement.py [--k 5] [--inputs 200] [--limit N]
"""

from __future__ import annotations

import argparse
import statistics
import time

from vreact.code.agreement import CALL_S, WALL_S
from vreact.code.data import SHIPPED, read_problems
from vreact.code.generated import generated
from vreact.sandbox import Limits, Sandbox


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--inputs", type=int, default=200)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    sandbox = Sandbox(Limits(wall_s=WALL_S, call_s=CALL_S))  # as vreact.code.agreement.check runs
    whole, inside, making, counts, stopped, ids = [], [], [], [], 0, []
    for p in read_problems(SHIPPED, args.limit, audit=lambda p: []):
        start = time.perf_counter()
        inputs = generated(p.prompt, p.entry_point, p.examples, n=args.inputs)
        making.append(time.perf_counter() - start)
        if not inputs:
            continue
        program = p.prompt + str(p.canonical_solution)
        programs = [f"{program}\n# candidate {i}\n" for i in range(args.k)]
        start = time.perf_counter()
        r = sandbox.run("", mode="behaviours", entry_point=p.entry_point, programs=programs, inputs=inputs)
        whole.append(time.perf_counter() - start)
        inside.append(r.checks_s)
        counts.append(len(inputs))
        stopped += any(b.get("stopped") for b in r.behaviours) or not r.marked
        ids.append(p.id)
    print(f"{len(whole)} problems with made-up inputs ({min(counts)}-{max(counts)} each,", end=" ")
    print(f"median {statistics.median(counts):g}), k = {args.k} candidates each, one sandbox start a problem")
    print("| what | median ms | 90th percentile ms | largest ms |")
    print("|---|--:|--:|--:|")
    for what, times in (
        ("the whole check, from outside", whole),
        ("the checker's own time, inside", inside),
        ("making the inputs (Hypothesis)", making),
    ):
        ms = [1000 * t for t in times]
        tenth = statistics.quantiles(ms, n=10, method="inclusive")[-1]
        print(f"| {what} | {statistics.median(ms):.0f} | {tenth:.0f} | {max(ms):.0f} |")
    slowest = max(range(len(whole)), key=whole.__getitem__)
    print(f"checks where a candidate was stopped (the 1 s a call may take) or no reply came: {stopped}")
    print(f"the slowest: {ids[slowest]}, {1000 * whole[slowest]:.0f} ms")


if __name__ == "__main__":
    main()
