"""Experiments: ``vreact experiment FILE --set ... --out DIR``; concurrent, resumable runs.

The acceptance test runs the 5-configuration ladder on 20 real MuSiQue-Full records with 3
attempts each (300 attempts) against a loopback server whose every reply is a function of the
request alone, kills the run with SIGKILL twice at random moments, resumes it, and compares the
result with an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import FULL, REPO
from tests.fakes.chaos_server import ChaosServer
from tests.processes import start
from vreact.cli import _run as cli_run
from vreact.cli import cli
from vreact.experiment import ResolvedExperiment
from vreact.model import CallPolicy
from vreact.qa.dataset import load_tasks
from vreact.records import exclusive

CONFIGS = ["N", "NP", "VG", "VPG", "VPGJ"]
#: Mostly schema-valid nonsense; the 500s and 429s repeat for the same request, so the calls
#: that meet one crash their attempt after the retry, the same way in every run.
MIX = {"nonsense": 0.86, "prose": 0.08, "http500": 0.03, "http429": 0.03}


def experiment_args(url: str, out: Path, *more: str) -> list[str]:
    sets = {
        "dataset.path": str(FULL),
        "dataset.limit": "20",
        "models.default": "openai/chaos",
        "base_url": url,
        "attempts": "3",
        "concurrency": "4",
        "limits.max_retries": "1",
        "limits.call_timeout": "60",
    }
    args = ["experiment", "pilot", "--out", str(out)]
    for key, value in sets.items():
        args += ["--set", f"{key}={value}"]
    return args + list(more)


def rows(db: Path, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    with closing(sqlite3.connect(db, timeout=30)) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute(sql, params or [])]


def finished(db: Path) -> int:
    if not db.is_file():
        return 0
    try:
        return rows(db, "select count(*) as n from attempts where outcome != 'running'")[0]["n"]
    except sqlite3.OperationalError:  # not created yet
        return 0


def spawn(args: list[str], cache: Path, log: Path) -> subprocess.Popen[bytes]:
    """``vreact ARGS`` in a process of its own (dies with pytest: tests.processes), its output
    appended to ``log``."""
    env = {**os.environ, "VREACT_CACHE_DIR": str(cache), "OPENAI_API_KEY": "sk-test-not-a-key"}
    env.pop("OPENAI_BASE_URL", None)
    with log.open("ab") as fh:
        return start([sys.executable, "-m", "vreact.cli", *args], cwd=REPO, env=env, stdout=fh, stderr=fh)


def report(out: Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["report", str(out), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    data.pop("run")
    # what made it, not what it found: one state of the code made every attempt, however many
    # times the run was stopped and resumed (its attempt ids are the folder's own)
    made = data.pop("provenance")
    assert [len(s["attempts"]) for s in made["states"]] == [
        sum(c["executed"] for c in data["configs"].values())
    ]
    assert made["not_recorded"] == 0 and not made["several"]
    return data


@pytest.fixture
def server():
    with ChaosServer(mix=MIX, seed=5, deterministic=True) as s:
        yield s


def killed_twice(args: list[str], cache: Path, log: Path) -> list[int]:
    """Run ``vreact`` with ``args`` and SIGKILL it at a random moment, twice (10 to 120 and 150 to
    270 attempts in): how many attempts had finished at each kill."""
    db = Path(args[args.index("--out") + 1]) / "vreact.db"
    rng = random.Random()
    kills = []
    for low, high in ((10, 120), (150, 270)):
        target = rng.randint(low, high)
        p = spawn(args, cache, log)
        while finished(db) < target and p.poll() is None:
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.2))  # any moment, not only between attempts
        assert p.poll() is None, log.read_text()[-3000:]
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        kills.append(finished(db))
    return kills


def test_killed_twice_and_resumed_equals_an_uninterrupted_run(server, tmp_path):
    # the uninterrupted run
    whole = tmp_path / "whole"
    log = tmp_path / "log.txt"
    p = spawn(experiment_args(server.base_url, whole), tmp_path / "cache-whole", log)
    assert p.wait(timeout=600) == 0, log.read_text()[-3000:]

    # the same experiment, killed twice at random moments and resumed
    killed = tmp_path / "killed"
    db = killed / "vreact.db"
    kills = killed_twice(experiment_args(server.base_url, killed), tmp_path / "cache-killed", log)
    print(f"killed with {kills[0]} and {kills[1]} of 300 attempts finished")
    assert all(0 < k < 300 for k in kills), f"the kills came too late to interrupt anything: {kills}"
    assert rows(db, "select status from runs") == [{"status": "running"}]  # died mid-run

    p = spawn(experiment_args(server.base_url, killed), tmp_path / "cache-killed", log)
    assert p.wait(timeout=600) == 0, log.read_text()[-3000:]
    assert f"{kills[-1]} of 300 attempts already done" in log.read_text()

    attempts = rows(db, "select * from attempts")
    keys = {(a["config"], a["task_id"], a["attempt_index"]) for a in attempts}
    assert len(attempts) == len(keys) == 300
    assert {a["outcome"] for a in attempts} <= {"answer", "abstain", "crash"}
    assert {a["seed"] - a["attempt_index"] for a in attempts} == {0}
    assert rows(db, "select id, status from runs") == [{"id": 1, "status": "completed"}]
    # nothing a killed attempt wrote survives it
    for table in ("verdicts", "model_calls", "ledger", "failures"):
        orphans = f"select count(*) as n from {table} where attempt_id not in (select id from attempts)"
        assert rows(db, orphans) == [{"n": 0}], table

    got, want = report(killed), report(whole)
    assert got == want
    configs = want["configs"]
    assert list(configs) == CONFIGS
    for r in configs.values():
        assert r["executed"] == 60 and r["pass"]["k"] == 3 and r["pass"]["tasks"] == 20
    assert sum(r["crash"] for r in configs.values()) > 0  # the server's errors were met
    assert [c["a"] for c in want["comparisons"]] == CONFIGS[1:]


def test_rerunning_a_finished_experiment_runs_nothing(server, tmp_path):
    out = tmp_path / "run"
    args = experiment_args(server.base_url, out, "--set", "dataset.limit=2", "--set", "attempts=2")
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    served = len(server.requests)
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0, again.output
    assert len(server.requests) == served
    assert "20 of 20 attempts already done" in again.stderr
    assert rows(out / "vreact.db", "select count(*) as n from attempts") == [{"n": 20}]
    # more attempts into the same folder: only the new ones run
    more = CliRunner().invoke(cli, [*args, "--set", "attempts=3"])
    assert more.exit_code == 0, more.output
    assert rows(out / "vreact.db", "select count(*) as n from attempts") == [{"n": 30}]
    assert rows(out / "vreact.db", "select count(*) as n from runs") == [{"n": 1}]


def test_attempts_run_concurrently(tmp_path):
    """With --concurrency 4 attempts overlap in time; with 1 they never do."""

    def overlaps(concurrency: int) -> int:
        out = tmp_path / f"c{concurrency}"
        with ChaosServer(mix={"nonsense": 1.0}, deterministic=True, latency=0.02) as s:
            args = ["run", "--dataset", str(FULL), "--configs", "N,VG", "--limit", "4", "--out", str(out)]
            args += ["--model", "openai/chaos", "--base-url", s.base_url, "--concurrency", str(concurrency)]
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 0, result.output
        spans = [(a["started"], a["finished"]) for a in rows(out / "vreact.db", "select * from attempts")]
        assert len(spans) == 8
        return sum(1 for a in spans for b in spans if a < b and b[0] < a[1])

    assert overlaps(1) == 0
    assert overlaps(4) > 0


def test_a_folder_in_use_is_refused(tmp_path):
    out = tmp_path / "busy"
    with exclusive(out), ChaosServer(mix={"nonsense": 1.0}) as server:
        # a server that is up (the run checks that before it starts) and never asked: the
        # folder is refused before any call
        args = ["run", "--dataset", str(FULL), "--limit", "1", "--out", str(out), "--model", "openai/x"]
        result = CliRunner().invoke(cli, [*args, "--base-url", server.base_url])
        assert server.requests == []
    assert result.exit_code == 2
    assert "another vreact process is running into this folder" in result.stderr


def test_dataset_filter_and_overrides(server, tmp_path):
    out = tmp_path / "f"
    args = experiment_args(server.base_url, out, "--set", "dataset.hops=[3]")
    args += ["--set", "dataset.answerable=false", "--set", "dataset.limit=3", "--set", "attempts=1"]
    args += ["--set", "configurations.0.name=plain"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    tasks = rows(out / "vreact.db", "select * from tasks")
    assert len(tasks) == 3 and {(t["hops"], t["answerable"]) for t in tasks} == {(3, 0)}
    configs = {r["config"] for r in rows(out / "vreact.db", "select config from attempts")}
    assert configs == {"plain", *CONFIGS[1:]}


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("attempts=0", "pilot.yaml: --set attempts: attempts: Input should be greater than or equal to 1"),
        ("atempts=3", "pilot.yaml: --set atempts: atempts: unknown field"),
        ("models.brain=openai/x", "--set models.brain: models: unknown role 'brain'"),
        ("dataset.hops=[9]", "no task passes the experiment's dataset filter"),
        ("attempts", "--set attempts: expected KEY=VALUE"),
    ],
)
def test_bad_overrides_are_one_line_errors(override, message, tmp_path):
    args = ["experiment", "pilot", "--out", str(tmp_path / "x"), "--set", f"dataset.path={FULL}"]
    result = CliRunner().invoke(cli, [*args, "--set", override])
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) == 1


def test_a_bad_experiment_file_names_file_and_line(tmp_path):
    bad = tmp_path / "exp.yaml"
    bad.write_text("kind: experiment\nname: x\nconfigurations:\n  - {name: N}\nattempts: many\n")
    result = CliRunner().invoke(cli, ["experiment", str(bad), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert f"{bad}:5: attempts: Input should be a valid integer" in result.stderr


class _Captured(Exception):
    """Raised in place of running: the resolved experiment has been seen."""


def resolved_by(args: list[str], monkeypatch: pytest.MonkeyPatch) -> ResolvedExperiment:
    """What the command would run: the ResolvedExperiment it hands the runner."""
    seen: list[ResolvedExperiment] = []

    def capture(
        experiment: ResolvedExperiment, out_dir: Path, on_attempt: Any = None, stop: Any = None
    ) -> int:
        seen.append(experiment)
        raise _Captured

    monkeypatch.setattr(cli_run, "run_experiment", capture)
    result = CliRunner().invoke(cli, args)
    assert isinstance(result.exception, _Captured), result.output
    return seen[0]


def test_run_flags_and_the_same_experiment_file_resolve_to_the_same_experiment(server, tmp_path, monkeypatch):
    ids = [t.id for t in load_tasks(FULL)][5:2:-1]  # three tasks, in an order of our own
    url = server.base_url  # up (a run checks); never asked: making the models makes no request
    same = {
        "attempts": "2",
        "seed": "3",
        "concurrency": "2",
        "max_retries": "1",
        "timeout": "30",
        "call_timeout": "60",
        "endpoint_concurrency": "2",
    }
    run = ["run", "--dataset", str(FULL), "--task-ids", ",".join(ids), "--configs", "VPGJ,N"]
    run += ["--model", "openai/x", "--role-model", "judge=openai/y", "--base-url", url]
    run += ["--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "a")]
    for flag, value in same.items():
        run += [f"--{flag.replace('_', '-')}", value]
    sets = {
        "dataset.path": str(FULL),
        "dataset.task_ids": f"[{', '.join(ids)}]",
        "models.default": "openai/x",
        "models.judge": "openai/y",
        "base_url": url,
        **{k if k in ("attempts", "seed", "concurrency") else f"limits.{k}": v for k, v in same.items()},
    }
    experiment = ["experiment", "pilot", "--configs", "VPGJ,N", "--cache-dir", str(tmp_path / "cache")]
    experiment += ["--out", str(tmp_path / "b")]
    for key, value in sets.items():
        experiment += ["--set", f"{key}={value}"]

    by_flags, by_file = resolved_by(run, monkeypatch), resolved_by(experiment, monkeypatch)
    assert [t.id for t in by_flags.tasks] == ids
    assert [c.name for c in by_flags.configs] == ["VPGJ", "N"]  # the judge has a model of its own
    assert by_flags.identity() == by_file.identity()  # the same run: one resumes the other's
    assert {r: m.name for r, m in by_flags.models.items()} == {"default": "openai/x", "judge": "openai/y"}
    assert by_flags.cache is not None and by_file.cache is not None
    assert by_flags.cache.path == by_file.cache.path
    assert replace(by_flags, models={}, cache=None) == replace(by_file, models={}, cache=None)
    assert by_flags.limits.policy() == CallPolicy(max_retries=1, call_timeout=60, concurrency=2)
    assert server.requests == []


def test_a_role_s_own_call_settings_reach_the_server(tmp_path, monkeypatch):
    """``calls.planner`` in an experiment file: the planner's requests carry its temperature
    and max_tokens, the executor's the configuration's."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    with ChaosServer(mix={"nonsense": 1.0}, deterministic=True) as server:
        sets = {
            "dataset.path": str(FULL),
            "dataset.limit": "1",
            "models.default": "openai/chaos",
            "base_url": server.base_url,
            "configurations.1.calls": "{planner: {temperature: 0.7, max_tokens: 512}}",
        }
        args = ["experiment", "pilot", "--configs", "NP", "--out", str(tmp_path / "run")]
        for key, value in sets.items():
            args += ["--set", f"{key}={value}"]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output[-3000:]
        bodies = list(server.requests)
    planner = [b["messages"][0]["content"].startswith("You are the planner") for b in bodies]
    asked = {(p, b["temperature"], b["max_tokens"]) for p, b in zip(planner, bodies, strict=True)}
    assert asked == {(True, 0.7, 512), (False, 0.2, 256)}


def test_configs_of_an_experiment_file_are_validated_as_a_whole(tmp_path):
    """``--configs`` picks configurations and validates the result again: a name twice is one
    line, exit 2; the file's judge model goes with the judged configuration left out."""
    from vreact.spec import load_experiment, only_configs

    path = tmp_path / "exp.yaml"
    path.write_text(
        "kind: experiment\nname: x\nmodels: {default: openai/x, judge: openai/j}\n"
        "configurations:\n  - {name: N}\n  - {name: VGJ, gates: true, judges: true}\n"
    )
    result = CliRunner().invoke(
        cli, ["experiment", str(path), "--configs", "N,N", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert result.stderr == "error: --configs N,N: configurations: configuration names repeat: N\n"
    assert only_configs(load_experiment(str(path)), "N").models == {"default": "openai/x"}
    assert only_configs(load_experiment(str(path)), "VGJ").models == {
        "default": "openai/x",
        "judge": "openai/j",
    }
