"""Report and view at 1,000 attempts (issue 14, target 6): how long ``vreact report`` (compute
and the tables) and ``vreact view`` (the HTML page) take on runs of ``--sizes`` attempts, the
page's size and each measurement's peak memory, so that linearity shows; then a cProfile of
the slowest part at the largest size.

    .venv/bin/python benchmarks/report_view.py [--tree DIR] [--sizes 250,500,1000] [--repeat 3]

The run folders are written by the project's own runner (``run_attempt``) with scripted mock
models on the real MuSiQue records shipped in tests/data/musique/, configurations N, VG, VPG
and VPGJ, two attempts a task: answers, wrong answers retried then abstained, plans, judges,
and the scenarios of tests/report/test_html.py (gate, judge and guard rejections, L1 and L2
abstentions, a crash). The folder of each size is the previous one plus more attempts. Each
measurement runs in its own process (so its peak RSS is its own). ``--tree`` is the checkout
whose ``vreact`` is measured (default: this one), e.g. an older one for a BEFORE figure. The
figure line is printed last.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CONFIGS = ("N", "VG", "VPG", "VPGJ")
ATTEMPTS = 2


def _tree() -> Path:
    """``--tree`` before argparse runs: the checkout put first on sys.path."""
    if "--tree" in sys.argv:
        return Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()
    return REPO


sys.path.insert(0, str(_tree()))


# --- the run folders ------------------------------------------------------------------------------


def _jobs(tasks: list[Any]) -> list[tuple[str, Any, Any, int]]:
    """(configuration, task, scripted model, attempt index) for every attempt, task by task."""
    from tests.helpers import by_role, judged, plan, solve
    from vreact.model import MockModel

    out = []
    for n, t in enumerate(tasks):
        for index in range(ATTEMPTS):
            right = (n + index) % 3 != 0  # a third of the attempts answer wrongly
            answer = None if right and t.answerable else "Paris"
            tries = solve(t, answer=answer) * 3
            one_step = plan(("s1", t.question, [], "any"))
            out += [
                ("N", t, MockModel(solve(t, answer=answer)), index),
                ("VG", t, MockModel(tries), index),
                ("VPG", t, by_role(planner=[one_step] * 3, executor=tries * 3), index),
                (
                    "VPGJ",
                    t,
                    by_role(planner=[one_step] * 3, executor=tries * 3, judge=[judged()] * 9),
                    index,
                ),
            ]
    return out


def build_runs(sizes: list[int], root: Path) -> dict[int, Path]:
    """A run folder of each size (attempts), each the previous one plus more attempts."""
    from tests.conftest import ANS, FULL
    from tests.report.test_html import CONFIGS as HTML_CONFIGS
    from tests.report.test_html import scenarios
    from vreact.experiment import Job, ResolvedExperiment, run_attempt
    from vreact.qa.dataset import load_tasks
    from vreact.records import DB_NAME, Store
    from vreact.spec import load_roles, load_spec, load_verifiers

    spec, verifiers, roles = load_spec(), load_verifiers(), load_roles()
    full = load_tasks(FULL)
    tasks = full + load_tasks(ANS)
    special = [(c, t, m, 100 + i) for i, (c, t, m, _, _) in enumerate(scenarios(full))]
    jobs = special + _jobs(tasks)
    if max(sizes) > len(jobs):
        raise SystemExit(f"at most {len(jobs)} attempts: {len(tasks)} tasks")
    configs = {c: HTML_CONFIGS[c] for c in dict.fromkeys([*CONFIGS, *(j[0] for j in special)])}
    work = root / "building"
    work.mkdir(parents=True)
    store = Store(work / DB_NAME)
    resolved = {
        "configs": [c.model_dump() for c in configs.values()],
        "spec": spec.model_dump(),
        "verifiers": verifiers.model_dump(),
        "roles": roles.model_dump(),
        "models": {"default": "mock/scripted"},
        "dataset": "musique (tests/data)",
    }
    run_id = store.new_run(resolved, "mock/scripted", "musique (tests/data)")
    store.add_tasks([t.record() for t in {j[1].id: j[1] for j in jobs}.values()])
    folders, done = {}, 0
    for size in sorted(sizes):
        for config, task, model, index in jobs[done:size]:
            experiment = ResolvedExperiment(
                [task], [configs[config]], {"default": model}, spec, verifiers, roles
            )
            run_attempt(experiment, Job(configs[config], task, index, seed=index), store, run_id)
        done = size
        store.finish_run(run_id)
        store.close()
        folders[size] = root / f"run-{size}"
        shutil.copytree(work, folders[size])
        store = Store(work / DB_NAME)
        store.reopen_run(run_id)
    store.close()
    return folders


# --- one measurement, in its own process -----------------------------------------------------------


def _report(run_dir: Path) -> None:
    """``vreact report DIR``: compute, then the tables as the terminal prints them."""
    from rich.console import Console

    from vreact.records import DB_NAME, Store
    from vreact.report import compute, render

    data = compute(Store(run_dir / DB_NAME), None, None)
    console = Console(file=io.StringIO(), width=160)
    for table in render(data):
        console.print(table)


def _report_json(run_dir: Path) -> None:
    """``vreact report DIR --json``."""
    from vreact.records import DB_NAME, Store
    from vreact.report import compute

    json.dumps(compute(Store(run_dir / DB_NAME), None, None).model_dump(mode="json"), indent=2)


def _view(run_dir: Path) -> None:
    """``vreact view DIR``."""
    from vreact.report.html import write_html

    write_html(run_dir)


WHAT = {"report": _report, "report --json": _report_json, "view": _view}


def measure(what: str, run_dir: Path, repeat: int, profile: Path | None) -> dict[str, Any]:
    """The minimum of ``repeat`` runs of one command (imports done by a first, untimed run)."""
    fn = WHAT[what]
    fn(run_dir)
    took, cpu = [], []
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        fn(run_dir)
        took.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    if profile is not None:
        cProfile.runctx("fn(run_dir)", globals(), {"fn": fn, "run_dir": run_dir}, str(profile))
    return {
        "seconds": min(took),
        "cpu": min(cpu),
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def in_process(what: str, run_dir: Path, repeat: int, profile: Path | None = None) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--tree", str(_tree()), "--measure", what, str(run_dir)]
    argv += ["--repeat", str(repeat)] + (["--profile-to", str(profile)] if profile else [])
    done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    if done.returncode != 0:
        raise SystemExit(f"{what} on {run_dir} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def top(profile: Path, n: int = 18) -> str:
    out = io.StringIO()
    stats = pstats.Stats(str(profile), stream=out)
    stats.strip_dirs().sort_stats("cumulative").print_stats(n)
    text = out.getvalue()
    return text[text.index("   ncalls") :].rstrip() if "   ncalls" in text else text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", type=Path, default=REPO, help="the checkout to measure (default: this one)")
    ap.add_argument("--sizes", default="250,500,1000", help="attempts per run folder")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per measurement; the minimum is kept")
    ap.add_argument("--keep", type=Path, default=None, help="write the run folders here and keep them")
    ap.add_argument("--measure", nargs=2, metavar=("WHAT", "DIR"), help=argparse.SUPPRESS)
    ap.add_argument("--profile-to", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        what, run_dir = args.measure
        print(json.dumps(measure(what, Path(run_dir), args.repeat, args.profile_to)))
        return

    import vreact

    where = Path(vreact.__file__).resolve()
    if not where.is_relative_to(args.tree.resolve()):
        raise SystemExit(f"vreact is imported from {where}, not from {args.tree}")
    sizes = sorted(int(s) for s in args.sizes.split(","))
    root = args.keep or Path(tempfile.mkdtemp(prefix="vreact-report-view-"))
    started = time.perf_counter()
    folders = build_runs(sizes, root)
    print(f"vreact from {where.parent}; {os.cpu_count()} cpu(s)")
    print(
        f"run folders of {', '.join(map(str, sizes))} attempts built in {time.perf_counter() - started:.0f} s"
    )
    print(
        f"minimum of {args.repeat} runs each, each command in its own process (peak RSS: that "
        "process's); seconds of wall time (CPU time)"
    )
    head = (
        f"{'attempts':>8} {'report s':>12} {'--json s':>12} {'view s':>12} {'HTML MB':>8} {'KB/attempt':>10}"
    )
    print(head + f" {'report RSS':>10} {'view RSS':>9}")
    rows = {}
    for size in sizes:
        d = folders[size]
        r, j, v = (in_process(w, d, args.repeat) for w in ("report", "report --json", "view"))
        html = (d / "report.html").stat().st_size
        rows[size] = (r, j, v, html)
        wc = " ".join(f"{m['seconds']:5.2f} ({m['cpu']:4.2f})" for m in (r, j, v))
        print(
            f"{size:>8} {wc} {html / 1e6:8.2f} "
            f"{html / size / 1e3:10.1f} {r['rss_mb']:8.0f}MB {v['rss_mb']:7.0f}MB"
        )
    big = sizes[-1]
    r, j, v, html = rows[big]
    slow = "view" if v["seconds"] >= r["seconds"] else "report"
    profile = root / f"{slow}.prof"
    in_process(slow, folders[big], 1, profile)
    print(f"\ncProfile of {slow} at {big} attempts (cumulative):\n{top(profile)}")
    small = sizes[0]
    growth = ", ".join(
        f"{name} CPU x{rows[big][i]['cpu'] / max(rows[small][i]['cpu'], 1e-9):.1f}"
        for i, name in ((0, "report"), (2, "view"))
    )
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)
    print(
        f"\nat {big:,} attempts: vreact report {r['seconds']:.2f} s (--json {j['seconds']:.2f} s), "
        f"vreact view {v['seconds']:.2f} s (CPU {r['cpu']:.2f}, {j['cpu']:.2f}, {v['cpu']:.2f} s), "
        f"report.html {html / 1e6:.2f} MB, peak RSS report "
        f"{r['rss_mb']:.0f} MB / view {v['rss_mb']:.0f} MB; {small} -> {big} attempts "
        f"(x{big / small:.0f}): {growth}"
    )


if __name__ == "__main__":
    main()
