"""What ``vreact probe`` costs without a judge: the wall time of the whole command (a process,
as a user runs it) on the tests' MuSiQue-Full and MuSiQue-Ans records with the shipped
verifiers, every class, R1 and R3; the minimum of ``--runs`` runs, each into a fresh folder.
Issue 23's target: under a minute. The figure line is printed last.

    .venv/bin/python benchmarks/probe.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "musique"
FILES = {"Full": DATA / "musique_full_train_80.jsonl", "Ans": DATA / "musique_ans_train_100.jsonl"}


def probe(dataset: Path, out: Path) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "vreact.cli", "probe", "--dataset", str(dataset), "--out", str(out), "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    wall = time.perf_counter() - start
    return wall, sum(c["artifacts"] for c in json.loads(done.stdout)["classes"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    figures = []
    for name, path in FILES.items():
        walls, artifacts = [], 0
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                wall, artifacts = probe(path, Path(tmp) / "probe")
                walls.append(wall)
        print(f"{name}: {artifacts} artifacts, walls {', '.join(f'{w:.2f}' for w in walls)} s")
        figures.append(f"{name} {min(walls):.2f} s ({artifacts} artifacts)")
    print("vreact probe, every class, R1+R3, min wall: " + "; ".join(figures) + " (target < 60 s)")


if __name__ == "__main__":
    main()
