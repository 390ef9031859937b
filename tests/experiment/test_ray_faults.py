"""The Ray backend under faults (issue 26), each in clusters of their own: a worker node removed
mid-run (a two-node ``ray.cluster_utils.Cluster``), and a driver SIGKILLed twice mid-run on a
cluster that outlives it (``ray start --head``) and resumed."""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner

from tests.conftest import REPO, ray_head
from tests.experiment.test_experiment import experiment_args, killed_twice, report, rows, spawn
from tests.fakes.chaos_server import ChaosServer
from tests.processes import run
from vreact.cli import cli

MIX = {"nonsense": 0.86, "prose": 0.08, "http500": 0.03, "http429": 0.03}


def test_a_worker_node_lost_mid_run_loses_and_repeats_no_attempt(tmp_path):
    out = tmp_path / "run"
    done = run(  # its cluster's processes go with it, and with pytest
        [sys.executable, "-m", "tests.experiment.ray_node_loss", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    planned = int(done.stdout.split("planned ")[1].split()[0])
    assert "a Ray worker was lost" in done.stderr  # attempts in flight on the node ran again
    attempts = rows(out / "vreact.db", "select * from attempts")
    keys = {(a["config"], a["task_id"], a["attempt_index"]) for a in attempts}
    assert len(attempts) == len(keys) == planned == 60
    assert {a["outcome"] for a in attempts} <= {"answer", "abstain", "crash"}
    checked = CliRunner().invoke(cli, ["check", str(out)])
    assert checked.exit_code == 0 and checked.output.startswith("OK:"), checked.output


@pytest.fixture
def head(tmp_path):
    """A cluster started by ``ray start --head`` (it outlives the drivers that join it)."""
    with ray_head(tmp_path / "head.log") as address:
        yield address


def test_a_driver_killed_twice_resumes_to_the_records_of_an_uninterrupted_run(tmp_path, head):
    with ChaosServer(mix=MIX, seed=5, deterministic=True) as server:
        whole = tmp_path / "whole"
        log = tmp_path / "log.txt"
        p = spawn(experiment_args(server.base_url, whole), tmp_path / "cache-whole", log)
        assert p.wait(timeout=600) == 0, log.read_text()[-3000:]

        ray = ["--backend", "ray", "--ray-address", head]
        killed = tmp_path / "killed"
        db = killed / "vreact.db"
        kills = killed_twice(experiment_args(server.base_url, killed, *ray), tmp_path / "cache-killed", log)
        assert all(0 < k < 300 for k in kills), f"the kills came too late to interrupt anything: {kills}"
        p = spawn(experiment_args(server.base_url, killed, *ray), tmp_path / "cache-killed", log)
        assert p.wait(timeout=600) == 0, log.read_text()[-3000:]
    assert f"{kills[-1]} of 300 attempts already done" in log.read_text()
    attempts = rows(db, "select * from attempts")
    keys = {(a["config"], a["task_id"], a["attempt_index"]) for a in attempts}
    assert len(attempts) == len(keys) == 300
    assert rows(db, "select id, status from runs") == [{"id": 1, "status": "completed"}]
    for table in ("verdicts", "model_calls", "ledger", "failures"):
        orphans = f"select count(*) as n from {table} where attempt_id not in (select id from attempts)"
        assert rows(db, orphans) == [{"n": 0}], table
    assert report(killed) == report(whole)
