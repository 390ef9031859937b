"""Peak memory of planning a large run (issue 33): ``vreact run --dry-run`` and ``vreact experiment
--dry-run`` of a million attempts (the largest plan vreact admits), each in a fresh process, and a
refused plan of 10**20 attempts. The figure is the process's peak resident set (``wait4``'s
``ru_maxrss``) next to ``vreact --help``'s, what importing the command line costs alone.

    .venv/bin/python benchmarks/plan_memory.py

The plan is made lazily, one attempt at a time, so its peak does not grow with its size: the
figure at 1,000 attempts is printed beside the one at 1,000,000.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
VREACT = [sys.executable, "-m", "vreact.cli"]


def peak_mb(args: list[str], cwd: str) -> tuple[float, int, str]:
    """(peak RSS in MB, exit code, the last line printed) of ``vreact ARGS``."""
    p = subprocess.Popen([*VREACT, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.read().decode() if p.stdout else ""
    _, status, usage = os.wait4(p.pid, 0)
    lines = [line for line in out.splitlines() if line.strip()]
    return usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), lines[-1] if lines else ""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "run")
        cases = [
            ("vreact --help", ["--help"]),
            (
                "run --dry-run, 1,000 attempts",
                [
                    "run",
                    "--dataset",
                    "sample",
                    "--configs",
                    "N",
                    "--limit",
                    "1",
                    "--attempts",
                    "1000",
                    "--dry-run",
                    "--out",
                    out,
                ],
            ),
            (
                "run --dry-run, 1,000,000 attempts",
                [
                    "run",
                    "--dataset",
                    "sample",
                    "--configs",
                    "N",
                    "--limit",
                    "1",
                    "--attempts",
                    "1000000",
                    "--dry-run",
                    "--out",
                    out,
                ],
            ),
            (
                "experiment pilot --dry-run, 5 x 12 x 16,000",
                ["experiment", "pilot", "--set", "attempts=16000", "--dry-run", "--out", out],
            ),
            (
                "run --attempts 10**20 (refused)",
                ["run", "--dataset", "sample", "--attempts", str(10**20), "--out", out],
            ),
        ]
        print(f"{'what':46} {'peak MB':>8} {'exit':>5}  last line")
        worst = 0.0
        for name, args in cases:
            mb, code, last = peak_mb(args, tmp)
            if "dry-run" in name:
                worst = max(worst, mb)
            print(f"{name:46} {mb:8.1f} {code:5d}  {last[:90]}")
            assert not Path(out).exists(), "a dry run or a refusal made the run folder"
    print(f"peak memory of a dry run of up to 1,000,000 attempts: {worst:.1f} MB (target < 300 MB)")


if __name__ == "__main__":
    main()
