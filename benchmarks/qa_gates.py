"""The question-answering gates on records they were not written on: ``vreact probe`` (gates
only, the shipped spec and verifiers of each format) on the HotpotQA and 2Wiki dev records of
``benchmarks/data/qa-unseen/`` and, beside them, on the tests' own (the records the rules were
written from). Prints, per file, the gold and control artifacts, how many a gate rejected and
their share, and each such false rejection with the check and why; ``--out`` keeps the probe
folders (a temporary folder otherwise).

    .venv/bin/python benchmarks/qa_gates.py [--only unseen|tests] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
UNSEEN = REPO / "benchmarks" / "data" / "qa-unseen"
TESTS = REPO / "tests" / "data" / "qa"
FILES = {
    "unseen": [
        ("hotpotqa", UNSEEN / "hotpotqa_dev_distractor_1303.jsonl"),
        ("2wiki", UNSEEN / "2wiki_dev_941.jsonl"),
    ],
    "tests": [
        ("hotpotqa", TESTS / "hotpotqa_dev_distractor_100.jsonl"),
        ("2wiki", TESTS / "2wiki_dev_100.jsonl"),
    ],
}


def probe(form: str, dataset: Path, out: Path) -> dict:
    command = ["probe", "--dataset", str(dataset), "--format", form, "--out", str(out), "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "vreact.cli", *command],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    if done.returncode != 0:
        sys.exit(f"{dataset.name}: vreact probe exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(FILES), help="one set of records (default: both)")
    parser.add_argument("--out", type=Path, help="keep the probe folders here")
    args = parser.parse_args()
    base = args.out or Path(tempfile.mkdtemp(prefix="qa-gates-"))
    for kind in [args.only] if args.only else list(FILES):
        for form, dataset in FILES[kind]:
            report = probe(form, dataset, base / dataset.stem)
            must_pass = [c for c in report["classes"] if c["role"] != "fault"]
            artifacts = sum(c["artifacts"] for c in must_pass)
            rejected = report["false_rejections"]
            distinct = {(r["task_id"], r["fault_class"]) for r in rejected}
            print(
                f"{kind:6} {dataset.name}: {report['tasks']} records, {artifacts} gold and control artifacts,"
                f" {len(distinct)} rejected by a gate ({len(distinct) / max(artifacts, 1):.2%})"
            )
            for r in rejected:
                where = f"{r['task_id']} {r['fault_class']}: {r['verifier']}.{r['check']}"
                print(f"    {where} {r['cause']}: {r['detail']}")
    print(f"probe folders: {base}")


if __name__ == "__main__":
    main()
