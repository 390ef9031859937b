"""How big a run's records get with transcripts: 1,000 attempts (N, VG, VPGJ over real
MuSiQue-Full records) against a loopback server of schema-valid nonsense, then the size of
vreact.db, by table, and what storing each message once saves.

    .venv/bin/python benchmarks/records_size.py [--attempts 1000]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fakes.chaos_server import ChaosServer  # noqa: E402
from vreact.experiment import ResolvedExperiment, run_experiment  # noqa: E402
from vreact.model import CallPolicy, get_model  # noqa: E402
from vreact.qa.dataset import load_tasks  # noqa: E402
from vreact.records import DB_NAME  # noqa: E402
from vreact.spec import load_roles, load_spec, load_verifiers, resolve_configs  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--attempts", type=int, default=1000, help="attempts in all (tasks x configs)")
    ap.add_argument("--configs", default="N,VG,VPGJ")
    args = ap.parse_args()
    configs = resolve_configs(args.configs)
    n_tasks = max(1, args.attempts // len(configs))
    pool = load_tasks(REPO / "tests" / "data" / "musique" / "musique_full_train_80.jsonl")
    repeats = -(-n_tasks // len(pool))
    attempts = repeats  # attempts per task and configuration, to reach the total on 80 tasks
    tasks = pool[: min(n_tasks, len(pool))]
    total = len(tasks) * len(configs) * attempts
    out = Path(tempfile.mkdtemp(prefix="records-size-"))
    with ChaosServer(mix={"nonsense": 1.0}, deterministic=True) as server:
        model = get_model(
            "openai/bench", base_url=server.base_url, api_key="x", policy=CallPolicy(concurrency=8)
        )
        started = time.perf_counter()
        experiment = ResolvedExperiment(
            tasks,
            configs,
            {"default": model},
            load_spec(),
            load_verifiers(),
            load_roles(),
            attempts=attempts,
            concurrency=8,
        )
        run_experiment(experiment, out)
        took = time.perf_counter() - started
    db = out / DB_NAME
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("VACUUM")
    size = os.path.getsize(db)
    print(f"{total} attempts ({len(configs)} configs x {len(tasks)} tasks x {attempts}) in {took:.0f} s")
    print(f"vreact.db: {size / 1e6:.1f} MB, {size / total / 1e3:.1f} kB per attempt")
    sizes = dict(conn.execute("select name, sum(pgsize) from dbstat group by name"))
    for name in ("model_calls", "messages", "steps", "artifacts", "verdicts", "ledger", "failures"):
        print(f"  {name:<12} {sizes.get(name, 0) / 1e6:6.1f} MB")
    calls, refs = conn.execute(
        "select count(*), sum(json_array_length(messages)) from model_calls"
    ).fetchone()
    chars_once = conn.execute("select sum(length(content)) from messages").fetchone()[0]
    chars_all = conn.execute(
        "select sum(length(m.content)) from model_calls c, json_each(c.messages) j"
        " join messages m on m.hash = j.value"
    ).fetchone()[0]
    print(
        f"{calls} calls referring to {refs} messages; text stored once {chars_once / 1e6:.1f} MB"
        f" instead of {chars_all / 1e6:.1f} MB ({chars_all / max(chars_once, 1):.0f}x less)"
    )


if __name__ == "__main__":
    main()
