"""Concurrency efficiency of `vreact run`: how close a run comes to the wall time of its model
calls laid end to end over ``concurrency`` lanes, against a loopback OpenAI-compatible server
that answers every request in exactly ``--latency`` seconds.

    .venv/bin/python benchmarks/concurrency.py [--concurrency 8,32,64] [--attempts 192]
    .venv/bin/python benchmarks/concurrency.py --concurrency 32      # quick
    .venv/bin/python benchmarks/concurrency.py --src ../old-checkout  # another tree's vreact

Each attempt is configuration N on a real MuSiQue record (tests/data/musique/) and makes
exactly ``--calls`` executor calls (default 5, so 192 attempts make 960 requests): the server
answers searches, each new, until the executor's history holds ``calls - 1`` of them, then a
finish. The real CLI runs in a subprocess with ``--concurrency C --endpoint-concurrency C``
and no response cache; its run's records give the wall time (runs.started to runs.finished)
and the request count (model_calls), so

    efficiency = requests x latency / C / wall        (1.0 is ideal)

The attempts are alike, so they run in waves of C: 192 attempts (a multiple of 8, 32 and 64)
keep the last wave full. With 200, the last wave at 32 would hold 8 attempts and cap the
figure at 200/32/7 = 0.89 whatever vreact did (at 64: 0.78).

Also printed: attempts that crashed, 'database is locked' anywhere (records or stderr), the
run process's peak RSS, its CPU time (start-up included) per request, a figure that other
load on the machine disturbs less than the wall time, and the mean latency of a call as the
records have it (the server's share is ``--latency``). The last line is the figure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.fakes.scripted_server import ScriptedServer  # noqa: E402

MUSIQUE = REPO / "tests" / "data" / "musique" / "musique_full_train_80.jsonl"
_SEARCH_LINE = re.compile(r"^\d+\. search ", re.MULTILINE)


def replier(calls: int) -> Callable[[dict[str, Any]], str]:
    """Searches until the executor's history holds ``calls - 1`` of them; then a finish."""

    def reply(body: dict[str, Any]) -> str:
        messages = body.get("messages") or []
        history = str(messages[2].get("content") or "") if len(messages) > 2 else ""
        searched = len(_SEARCH_LINE.findall(history))
        if searched + 1 >= calls:
            step = {"thought": "found it", "action": "finish", "input": "an answer", "evidence": ["1"]}
        else:
            step = {"thought": "look", "action": "search", "input": f"query {searched}", "evidence": []}
        return json.dumps(step)

    return reply


def run_once(url: str, concurrency: int, attempts: int, tasks: int, out: Path, src: Path) -> dict[str, Any]:
    """One `vreact run` in a subprocess; what its records and its rusage say."""
    per_task = attempts // tasks
    cmd = [
        *(sys.executable, "-m", "vreact.cli"),
        *("run", "--dataset", str(MUSIQUE), "--limit", str(tasks), "--configs", "N"),
        *("--attempts", str(per_task), "--model", "openai/bench", "--base-url", url, "--no-cache"),
        *("--concurrency", str(concurrency), "--endpoint-concurrency", str(concurrency)),
        *("--out", str(out / "run"), "--timeout", "60", "--call-timeout", "120"),
    ]
    env = {**os.environ, "VREACT_CACHE_DIR": str(out / "cache"), "PYTHONPATH": str(src)}
    env.pop("OPENAI_BASE_URL", None)
    with open(out / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=out)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    stderr = (out / "stderr.txt").read_text(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"vreact run exited {proc.returncode}:\n{stderr[-3000:]}")
    db = sqlite3.connect(out / "run" / "vreact.db")
    started, finished = db.execute("select started, finished from runs").fetchone()
    done, crashed = db.execute(
        "select count(*), count(*) filter (where outcome = 'crash') from attempts"
    ).fetchone()
    requests, call_ms = db.execute("select count(*), avg(latency_ms) from model_calls").fetchone()
    locked = (
        db.execute("select count(*) from attempts where error like '%locked%'").fetchone()[0]
        + db.execute("select count(*) from model_calls where error like '%locked%'").fetchone()[0]
    )
    db.close()
    locked += stderr.count("database is locked")
    return {
        "attempts": done,
        "crashed": crashed,
        "requests": requests,
        "wall": finished - started,
        "locked": locked,
        "rss_mb": usage.ru_maxrss / 1024,
        "cpu": usage.ru_utime + usage.ru_stime,
        "call_ms": call_ms,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--concurrency", default="8,32,64", help="comma-separated values")
    ap.add_argument("--attempts", type=int, default=192)
    ap.add_argument("--tasks", type=int, default=24, help="MuSiQue records the attempts share")
    ap.add_argument("--calls", type=int, default=5, help="model calls per attempt")
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per server reply")
    ap.add_argument("--src", type=Path, default=REPO, help="the vreact source tree to run (a before)")
    args = ap.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    if args.attempts % args.tasks:
        ap.error("--attempts must be a multiple of --tasks")
    print(
        f"{args.attempts} attempts of N x {args.calls} calls, server latency "
        f"{args.latency * 1000:.0f} ms, vreact run in a subprocess, no cache"
    )
    print(
        f"{'conc':>4} {'attempts':>8} {'requests':>8} {'wall s':>7} {'ideal s':>7} "
        f"{'effic.':>6} {'crashed':>7} {'locked':>6} {'RSS MB':>6} {'CPU ms/req':>10} {'call ms':>7}"
    )
    figures = []
    with ScriptedServer(replier(args.calls), latency=args.latency) as server:
        for c in levels:
            with tempfile.TemporaryDirectory(prefix=f"vreact-conc{c}-") as tmp:
                r = run_once(server.base_url, c, args.attempts, args.tasks, Path(tmp), args.src.resolve())
            ideal = r["requests"] * args.latency / c
            eff = ideal / r["wall"]
            figures.append(f"{c}: {eff:.2f}")
            print(
                f"{c:>4} {r['attempts']:>8} {r['requests']:>8} {r['wall']:>7.2f} {ideal:>7.2f} "
                f"{eff:>6.2f} {r['crashed']:>7} {r['locked']:>6} {r['rss_mb']:>6.0f} "
                f"{r['cpu'] * 1000 / r['requests']:>10.1f} {r['call_ms']:>7.0f}",
                flush=True,
            )
            if r["requests"] != r["attempts"] * args.calls:
                print(f"  note: {r['requests'] / r['attempts']:.2f} calls per attempt, not {args.calls}")
    print("concurrency efficiency (ideal wall / wall): " + ", ".join(figures))


if __name__ == "__main__":
    main()
