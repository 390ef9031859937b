"""Runner throughput: attempts per minute against a loopback OpenAI-compatible server that
takes ``--latency`` seconds per reply, at several ``--concurrency`` values; then how long the
report and the HTML page of the largest run take, and the process's peak memory. The server
runs in a process of its own, so its work is not counted against vreact's (nor competes for
this process's GIL).

    .venv/bin/python benchmarks/runner_throughput.py [--latency 0.05] [--tasks 20] [--attempts 3]

Reads the real MuSiQue records shipped in tests/data/musique/.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fakes.chaos_server import ChaosServer  # noqa: E402
from vreact.experiment import ResolvedExperiment, run_experiment  # noqa: E402
from vreact.model import CallPolicy, get_model  # noqa: E402
from vreact.qa.dataset import load_tasks  # noqa: E402
from vreact.records import DB_NAME, Store  # noqa: E402
from vreact.report import compute  # noqa: E402
from vreact.report.html import write_html  # noqa: E402
from vreact.spec import load_roles, load_spec, load_verifiers, resolve_configs  # noqa: E402

MUSIQUE = REPO / "tests" / "data" / "musique"


def serve(conn: Any, latency: float) -> None:
    """The server, in its own process: sends its base URL, serves until told to stop."""
    with ChaosServer(mix={"nonsense": 1.0}, deterministic=True, latency=latency) as server:
        conn.send(server.base_url)
        conn.recv()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.05, help="seconds per server reply")
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--attempts", type=int, default=3)
    ap.add_argument("--configs", default="N,VG")
    ap.add_argument("--concurrency", default="1,4,8")
    args = ap.parse_args()

    tasks = load_tasks(MUSIQUE / "musique_full_train_80.jsonl", args.tasks)
    configs = resolve_configs(args.configs)
    spec, verifiers, roles = load_spec(), load_verifiers(), load_roles()
    total = len(tasks) * len(configs) * args.attempts
    print(
        f"{len(configs)} configs x {len(tasks)} tasks x {args.attempts} attempts = {total}; "
        f"server latency {args.latency * 1000:.0f} ms per reply; no response cache"
    )
    last = None
    rates: list[str] = []
    ours, theirs = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(target=serve, args=(theirs, args.latency))
    server.start()
    base_url = ours.recv()
    try:
        for c in map(int, args.concurrency.split(",")):
            model = get_model(
                "openai/bench", base_url=base_url, api_key="x", policy=CallPolicy(concurrency=c)
            )
            out = Path(tempfile.mkdtemp(prefix=f"bench-c{c}-"))
            started = time.perf_counter()
            models = {"default": model}
            experiment = ResolvedExperiment(
                tasks, configs, models, spec, verifiers, roles, attempts=args.attempts, concurrency=c
            )
            run_experiment(experiment, out)
            took = time.perf_counter() - started
            print(f"concurrency {c:>2}: {took:6.1f} s, {total / took * 60:7.0f} attempts/min")
            rates.append(f"{c}: {total / took * 60:.0f}")
            last = out
    finally:
        ours.send("stop")
        server.join()
    assert last is not None
    started = time.perf_counter()
    compute(Store(last / DB_NAME))
    report_s = time.perf_counter() - started
    started = time.perf_counter()
    page = write_html(last)
    view_s = time.perf_counter() - started
    print(f"report: {report_s:.2f} s; report.html: {view_s:.2f} s, {page.stat().st_size / 1e6:.1f} MB")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    print("attempts/min by concurrency: " + ", ".join(rates))


if __name__ == "__main__":
    main()
