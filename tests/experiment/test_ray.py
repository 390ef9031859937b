"""The Ray backend (issue 26): the same experiment on local threads and on a Ray cluster gives
the same records, table by table and row by row; a lab's own gate reaches the workers; the
runner's settings follow the settings rule. The node-loss and SIGKILL tests start clusters of
their own (tests/experiment/test_ray_faults.py)."""

from __future__ import annotations

import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import FULL
from tests.fakes.chaos_server import ChaosServer
from tests.fakes.scripted_server import ScriptedServer
from vreact.cli import cli
from vreact.spec import Experiment

MIX = {"nonsense": 0.86, "prose": 0.08, "http500": 0.03, "http429": 0.03}
#: What differs between two runs of one experiment by nature: ids (the rows' own and those that
#: name a row, turned into the row's place), times, and which of two identical concurrent calls
#: was served by the cache.
LEFT_OUT = {"id", "run_id", "attempt_id", "call_id", "verdict_id", "started", "finished", "latency_ms"}
LEFT_OUT |= {"cached", "seconds", "created", "applied"}


def pilot(out: Path, url: str, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VREACT_CACHE_DIR", str(out.parent / f"cache-{backend}"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    sets = {
        "dataset.path": str(FULL),
        "dataset.limit": "20",
        "models.default": "openai/chaos",
        "base_url": url,
        "attempts": "2",
        "concurrency": "4",
        "limits.max_retries": "1",
        "limits.call_timeout": "60",
    }
    args = ["experiment", "pilot", "--out", str(out), "--backend", backend]
    for key, value in sets.items():
        args += ["--set", f"{key}={value}"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output[-3000:]


def table_rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, ids replaced by the place of the row they name (an attempt by its
    configuration, task and index; a call or verdict by its attempt and order), sorted."""
    with closing(sqlite3.connect(db)) as conn:
        conn.row_factory = sqlite3.Row
        attempts = {
            r["id"]: (r["config"], r["task_id"], r["attempt_index"])
            for r in conn.execute("select * from attempts")
        }
        place: dict[str, dict[int, Any]] = {"attempt_id": attempts}
        for table, key in (("model_calls", "call_id"), ("verdicts", "verdict_id")):
            mine: dict[int, Any] = {}
            for r in conn.execute(f"select id, attempt_id from {table} order by id"):
                here = attempts[r["attempt_id"]]
                mine[r["id"]] = (here, sum(1 for v in mine.values() if v[0] == here))
            place[key] = mine
        tables = [r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")]
        out = {}
        for table in sorted(tables):
            rows = []
            for r in conn.execute(f"select * from {table}"):
                d = dict(r)
                row = {k: v for k, v in d.items() if k not in LEFT_OUT}
                row |= {k: place[k].get(d[k]) for k in place if k in d}
                rows.append(tuple(sorted((k, json.dumps(v, default=str)) for k, v in row.items())))
            out[table] = sorted(rows)
        return out


def test_local_and_ray_give_the_same_records(tmp_path, monkeypatch, ray_cluster):
    with ChaosServer(mix=MIX, seed=5, deterministic=True) as server:
        pilot(tmp_path / "local", server.base_url, "local", monkeypatch)
        pilot(tmp_path / "ray", server.base_url, "ray", monkeypatch)
    reports, made = {}, {}
    for backend in ("local", "ray"):
        result = CliRunner().invoke(cli, ["report", str(tmp_path / backend), "--json"])
        report = json.loads(result.stdout)
        report.pop("run")
        # the attempts a Ray worker made were recorded by the driver's state (its import), each
        [state] = report["provenance"]["states"]
        assert len(state.pop("attempts")) == 5 * 20 * 2
        made[backend] = report.pop("provenance")
        reports[backend] = report
    assert reports["local"] == reports["ray"]
    assert made["local"] == made["ray"]
    local, ray = table_rows(tmp_path / "local" / "vreact.db"), table_rows(tmp_path / "ray" / "vreact.db")
    assert set(local) == set(ray)
    assert len(local["attempts"]) == 5 * 20 * 2 and len(local["model_calls"]) > 500
    for table in local:
        if table in ("runs", "provenance"):  # a row of the run: its times differ; compared above
            continue
        assert local[table] == ray[table], table


def test_a_lab_gate_reaches_the_workers(tmp_path, ray_cluster):
    from tests.test_plugins import LAB, files, lab_records, server, vreact

    (tmp_path / "lab_checks.py").write_text(LAB)
    with server() as s:
        experiment = files(tmp_path, s.base_url, "plugins: [./lab_checks.py]")
        ran = vreact(
            "experiment",
            str(experiment),
            "--out",
            "out",
            "--backend",
            "ray",
            "--ray-address",
            ray_cluster,
            cwd=tmp_path,
        )
    assert ran.returncode == 0, ran.stderr[-3000:]
    attempt, verdicts, _ = lab_records(tmp_path / "out")
    assert (attempt["outcome"], attempt["answer"]) == ("answer", "north")
    assert [(v["decision"], v["cause"]) for v in verdicts] == [("reject", "forbidden_word"), ("accept", "")]


def test_the_runner_settings_follow_the_settings_rule():
    base = {"name": "x", "configurations": [{"name": "N"}]}
    assert Experiment.model_validate({**base, "runner": {"backend": "ray", "address": "127.0.0.1:6379"}})
    for field in ("address", "num_cpus_per_attempt", "resources"):
        value = {"address": "a:1", "num_cpus_per_attempt": 1, "resources": {"gpu_node": 1}}[field]
        with pytest.raises(ValueError, match=f"runner.{field} is read by the ray backend"):
            Experiment.model_validate({**base, "runner": {field: value}})


def test_the_backend_is_not_part_of_the_identity(tmp_path, monkeypatch, ray_cluster):
    """A run started locally resumes on Ray: the folder's run goes on, nothing runs twice."""
    with ChaosServer(mix=MIX, seed=5, deterministic=True) as server:
        out = tmp_path / "run"
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
        args = ["experiment", "pilot", "--out", str(out), "--set", f"base_url={server.base_url}"]
        args += [
            "--set",
            "models.default=openai/chaos",
            "--set",
            f"dataset.path={FULL}",
            "--set",
            "dataset.limit=2",
        ]
        first = CliRunner().invoke(cli, [*args, "--configs", "N,VG"])
        assert first.exit_code == 0, first.output
        again = CliRunner().invoke(cli, [*args, "--configs", "N,VG,VPG", "--backend", "ray"])
        assert again.exit_code == 0, again.output
    assert "4 of 6 attempts already done" in again.stderr
    with closing(sqlite3.connect(out / "vreact.db")) as conn:
        keys = conn.execute("select config, task_id, attempt_index from attempts").fetchall()
    assert len(keys) == len(set(keys)) == 6


def test_an_endpoint_pool_is_one_endpoint_and_each_call_records_its_server(
    tmp_path, monkeypatch, ray_cluster
):
    from tests.experiment.test_per_configuration import knowing

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    with ScriptedServer(knowing) as one, ScriptedServer(knowing) as two:
        first, urls = one.base_url, {one.base_url, two.base_url}
        (tmp_path / "models.yaml").write_text(
            f"kind: models\nmodels:\n  lab: {{model: openai/lab, pool: [{one.base_url}, {two.base_url}]}}\n"
        )
        served = {}
        for backend in ("local", "ray"):
            out = tmp_path / backend
            args = ["experiment", "pilot", "--configs", "N", "--out", str(out), "--backend", backend]
            sets = {"models_file": tmp_path / "models.yaml", "models.default": "lab", "dataset.path": FULL}
            sets |= {"dataset.limit": 8, "concurrency": 2, "cache": "false"}
            args += [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 0, result.output[-3000:]
            with closing(sqlite3.connect(out / "vreact.db")) as conn:
                served[backend] = {r[0] for r in conn.execute("select endpoint from model_calls")}
                [(config,)] = conn.execute("select config_json from runs").fetchall()
            assert json.loads(config)["endpoints"] == {"default": "pool:lab"}  # the pool, not a URL
    assert served["local"] == {first}  # one process: the first member
    assert served["ray"] == urls  # two workers on one node: one member each


def test_a_pool_and_a_base_url_are_refused_together():
    from vreact.spec import ModelsFile

    with pytest.raises(ValueError, match="a base_url or a pool, not both"):
        ModelsFile.model_validate(
            {"models": {"x": {"model": "openai/x", "base_url": "http://a:1/v1", "pool": ["http://b:1/v1"]}}}
        )


def test_no_cluster_at_the_address_or_no_ray_is_one_line(tmp_path, monkeypatch):
    from tests.conftest import free_port
    from vreact.experiment.ray_backend import ClusterUnavailable, connect
    from vreact.spec import RunnerSettings

    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    args = [
        "experiment",
        "pilot",
        "--configs",
        "N",
        "--set",
        "models.default=openai/x",
        "--out",
        str(tmp_path),
    ]
    result = CliRunner().invoke(cli, [*args, "--backend", "ray", "--ray-address", address])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1].startswith(f"error: no Ray cluster at {address} (")
    flags = CliRunner().invoke(cli, ["run", "--dataset", "sample", "--ray-address", address])
    assert flags.exit_code == 2
    assert "--ray-address: runner.address is read by the ray backend" in flags.stderr
    monkeypatch.setitem(sys.modules, "ray", None)  # as where vreact[ray] is not installed
    with pytest.raises(ClusterUnavailable, match=r"pip install 'vreact\[ray\]'"):
        connect(RunnerSettings(backend="ray"))


def test_cache_only_holds_on_the_workers(tmp_path, monkeypatch, ray_cluster):
    """--cache-only with an empty cache: no worker makes a request; each attempt ends not_cached."""
    from tests.experiment.test_per_configuration import knowing

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    with ScriptedServer(knowing) as server:
        args = ["experiment", "pilot", "--configs", "N", "--out", str(tmp_path / "run"), "--backend", "ray"]
        sets = {
            "models.default": "openai/x",
            "base_url": server.base_url,
            "dataset.path": FULL,
            "dataset.limit": 2,
        }
        args += [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
        result = CliRunner().invoke(cli, [*args, "--cache-only"])
        assert result.exit_code == 0, result.output[-3000:]
        assert server.requests == []
    with closing(sqlite3.connect(tmp_path / "run" / "vreact.db")) as conn:
        kinds = [r[0] for r in conn.execute("select crash_kind from attempts")]
    assert kinds == ["not_cached", "not_cached"]
