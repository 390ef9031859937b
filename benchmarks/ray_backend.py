"""The Ray backend against local threads: the same in-flight slots, the same attempts, against a
loopback OpenAI-compatible server answering every request in exactly ``--latency`` seconds.

    .venv/bin/python benchmarks/ray_backend.py [--concurrency 8] [--attempts 96]

Each attempt is configuration N on a real MuSiQue record making exactly ``--calls`` executor
calls (benchmarks/concurrency.py's server). ``vreact run`` runs in a subprocess three times:
``--backend local``; ``--backend ray`` joining a local cluster of one node; and of two simulated
nodes (``ray.cluster_utils.Cluster``, the head and one more, each with the machine's CPUs). The
run's records give the wall time and the request count, so

    efficiency = requests x latency / concurrency / wall        (1.0 is ideal)

CPU per attempt is the driver's (its rusage), and for Ray the total of every process the run
used: the driver, and the cluster's processes (workers, raylets, GCS and Ray's agents), whose
CPU times /proc is sampled for every 0.2 s from the cluster's start to its shutdown (a process
that ends between two samples loses at most its last 0.2 s). The last line is the figure.
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # every node on loopback
os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")

from benchmarks.concurrency import MUSIQUE, replier  # noqa: E402
from tests.fakes.scripted_server import ScriptedServer  # noqa: E402


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class ClusterCPU(threading.Thread):
    """The CPU seconds of every Ray process on the machine, sampled from /proc until stopped:
    each process's last seen utime + stime, summed."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.seen: dict[int, float] = {}
        self.done = threading.Event()
        self.tick = os.sysconf("SC_CLK_TCK")

    def run(self) -> None:
        while not self.done.is_set():
            self.sample()
            time.sleep(0.2)

    def sample(self) -> None:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                if "ray" not in cmd or "benchmarks/ray_backend.py" in cmd or "vreact.cli" in cmd:
                    continue
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            self.seen[int(pid)] = (int(fields[11]) + int(fields[12])) / self.tick

    def stop(self) -> float:
        self.sample()
        self.done.set()
        return sum(self.seen.values())


def run_once(url: str, args: argparse.Namespace, out: Path, *backend: str) -> dict[str, Any]:
    cmd = [
        *(sys.executable, "-m", "vreact.cli"),
        *("run", "--dataset", str(MUSIQUE), "--limit", str(args.tasks), "--configs", "N"),
        *("--attempts", str(args.attempts // args.tasks), "--model", "openai/bench", "--base-url", url),
        *(
            "--no-cache",
            "--concurrency",
            str(args.concurrency),
            "--endpoint-concurrency",
            str(args.concurrency),
        ),
        *("--out", str(out / "run"), "--timeout", "60", "--call-timeout", "120", *backend),
    ]
    env = {**os.environ, "VREACT_CACHE_DIR": str(out / "cache")}
    env.pop("OPENAI_BASE_URL", None)
    with open(out / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=out)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit((out / "stderr.txt").read_text(errors="replace")[-3000:])
    db = sqlite3.connect(out / "run" / "vreact.db")
    started, finished = db.execute("select started, finished from runs").fetchone()
    attempts = db.execute("select count(*) from attempts").fetchone()[0]
    requests = db.execute("select count(*) from model_calls").fetchone()[0]
    db.close()
    return {
        "attempts": attempts,
        "requests": requests,
        "wall": finished - started,
        "driver": usage.ru_utime + usage.ru_stime,
    }


def on_ray(url: str, args: argparse.Namespace, nodes: int) -> dict[str, Any]:
    """A run joining a fresh local cluster of ``nodes`` nodes, with the cluster's CPU."""
    from ray.cluster_utils import Cluster

    cpu = ClusterCPU()
    cpu.start()
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": os.cpu_count(), "include_dashboard": False}
    )
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=os.cpu_count())
    cluster.wait_for_nodes()
    try:
        with tempfile.TemporaryDirectory(prefix="vreact-ray-") as tmp:
            r = run_once(url, args, Path(tmp), "--backend", "ray", "--ray-address", cluster.address)
    finally:
        cluster_cpu = cpu.stop()
        cluster.shutdown()
    r["total"] = r["driver"] + cluster_cpu
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--attempts", type=int, default=96)
    ap.add_argument("--tasks", type=int, default=24)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--latency", type=float, default=0.2)
    args = ap.parse_args()
    print(
        f"{args.attempts} attempts of N x {args.calls} calls, {args.concurrency} in flight, server latency "
        f"{args.latency * 1000:.0f} ms, vreact run in a subprocess, no cache"
    )
    print(
        f"{'backend':<14} {'attempts':>8} {'wall s':>7} {'ideal s':>7} {'effic.':>6} "
        f"{'driver CPU ms/a':>15} {'total CPU ms/a':>14}"
    )
    figures = []
    with ScriptedServer(replier(args.calls), latency=args.latency) as server:
        runs = []
        with tempfile.TemporaryDirectory(prefix="vreact-local-") as tmp:
            before = children_cpu()
            r = run_once(server.base_url, args, Path(tmp))
            r["total"] = children_cpu() - before
            runs.append(("local", r))
        for nodes in (1, 2):
            runs.append(
                (f"ray, {nodes} node{'s' if nodes > 1 else ''}", on_ray(server.base_url, args, nodes))
            )
        for name, r in runs:
            ideal = r["requests"] * args.latency / args.concurrency
            eff = ideal / r["wall"]
            figures.append(f"{name}: {eff:.2f}")
            print(
                f"{name:<14} {r['attempts']:>8} {r['wall']:>7.2f} {ideal:>7.2f} {eff:>6.2f} "
                f"{r['driver'] * 1000 / r['attempts']:>15.1f} {r['total'] * 1000 / r['attempts']:>14.1f}",
                flush=True,
            )
    print("efficiency (ideal wall / wall): " + ", ".join(figures))


if __name__ == "__main__":
    main()
