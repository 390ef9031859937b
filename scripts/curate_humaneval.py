"""Curate HumanEval's visible examples once, against the canonical solutions, in vreact's
sandbox: writes vreact/code/humaneval.json (task id -> the examples kept and those dropped) and
prints the dropped ones. Run it again only when the extraction rule (vreact/code/examples.py)
changes: `.venv/bin/python scripts/curate_humaneval.py`."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from vreact.code import data
from vreact.code.data import CURATED, SHIPPED, curate_with
from vreact.code.examples import examples
from vreact.sandbox import Limits, Sandbox


def main() -> None:
    rows = data.rows(SHIPPED)
    curate = curate_with(Sandbox(Limits(wall_s=30, call_s=10)))

    def one(row: dict) -> tuple[str, list, list]:
        problem = data.problem_of(row)
        kept, dropped = curate(problem, examples(problem.prompt, problem.entry_point))
        return problem.id, kept, dropped

    with ThreadPoolExecutor(2) as pool:
        done = list(pool.map(one, [r for _, r in rows]))
    entries = [
        f"{json.dumps(k)}: {json.dumps({'examples': kept, 'dropped': dropped})}" for k, kept, dropped in done
    ]
    CURATED.write_text("{\n" + ",\n".join(entries) + "\n}\n")  # a problem a line
    print(f"{sum(1 for _, kept, _ in done if kept)} of {len(done)} problems keep a visible example")
    for k, _, dropped in done:
        for args, expected in dropped:
            print(f"dropped {k}: {args} -> {expected}")


if __name__ == "__main__":
    main()
