"""Run by tests/experiment/test_ray_faults.py in a process of its own: an experiment on a
two-node local Ray cluster (``ray.cluster_utils.Cluster``) whose worker node is removed while
the run goes on. ``python -m tests.experiment.ray_node_loss OUT_DIR`` writes the run into
OUT_DIR and prints the run's planned attempt count."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # every node on loopback
os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")

import ray
from ray.cluster_utils import Cluster

from tests.conftest import FULL
from tests.fakes.chaos_server import ChaosServer
from vreact.experiment import run_experiment
from vreact.experiment.resolved import resolve
from vreact.spec import load_experiment

MIX = {"nonsense": 0.9, "prose": 0.1}
#: Remove the worker node once this many attempts have ended.
AFTER = 6


def main(out: Path) -> None:
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    # its own loopback address, so the driver (on 127.0.0.1) joins the head, never this node
    worker = cluster.add_node(num_cpus=2, node_ip_address="127.0.0.2")
    ray.init(address=cluster.address, _node_ip_address="127.0.0.1", log_to_driver=False)
    os.environ["OPENAI_API_KEY"] = "sk-test-not-a-key"
    try:
        with ChaosServer(mix=MIX, seed=5, deterministic=True, latency=0.05) as server:
            sets = {
                "dataset.path": str(FULL),
                "dataset.limit": 10,
                "models.default": "openai/chaos",
                "base_url": server.base_url,
                "attempts": 2,
                "concurrency": 4,
                "runner.backend": "ray",
            }
            exp = load_experiment("pilot", sets)
            exp = exp.model_copy(update={"configurations": exp.configurations[:3]})  # N, NP, VG
            resolved = resolve(exp)
            removed = []

            def on_attempt(progress):
                if progress.done >= AFTER and not removed and progress.outcome is not None:
                    removed.append(progress.done)
                    cluster.remove_node(worker)

            run_experiment(resolved, out, on_attempt)
        print(f"planned {resolved.total()} removed after {removed[0]}")
    finally:
        ray.shutdown()
        cluster.shutdown()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
