"""A family's executor defaults (``Settings.executor_defaults`` of its step settings): a code
experiment without ``calls`` gives its executor the code family's 768 tokens and its calls
1200 s, as experiments/code.yaml does, so its requests are that file's and the response cache
serves one from the other; the file wins where it says, then the family, then vreact. A run
folder made before the family gave them (256 tokens) resumes as it was made, its stored
identity kept, and reads as 256."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml

import vreact
from tests.conftest import REPO
from tests.fakes.scripted_server import ScriptedServer
from vreact.code.data import SHIPPED, read_problems
from vreact.code.kit import CodeSteps
from vreact.experiment.resolved import in_todays_terms
from vreact.families import ExecutorDefaults
from vreact.model import MockModel
from vreact.records import read_run
from vreact.spec import Experiment, only_configs

SHIPPED_FILE = REPO / "experiments" / "code.yaml"
PROBLEMS = read_problems(SHIPPED, 2)


def write(messages: list[dict[str, Any]]) -> str:
    """Each problem's canonical program, as the executor's reply."""
    prompt = "\n".join(m["content"] for m in messages)
    [problem] = [p for p in PROBLEMS if f"def {p.entry_point}(" in prompt]
    return f"```python\n{problem.prompt}{problem.canonical_solution}```"


def code_yaml(without: tuple[str, ...] = (), **more: Any) -> Experiment:
    """experiments/code.yaml as written, less the keys ``without``, with ``more``."""
    data = yaml.safe_load(SHIPPED_FILE.read_text())
    for key in without:
        data.pop(key)
    return Experiment.model_validate({**data, **more})


def test_without_calls_a_code_experiment_makes_the_shipped_files_requests(tmp_path):
    shipped, bare = code_yaml(), code_yaml(("calls", "limits"))
    assert "calls" in yaml.safe_load(SHIPPED_FILE.read_text())  # the file names what the family now gives
    for a, b in zip(shipped.configurations, bare.configurations, strict=True):
        for role in ("executor", "judge", "critic", "planner"):
            assert a.settings_for(role, 3) == b.settings_for(role, 3), (a.name, role)
        assert a.settings_for("executor").max_tokens == 768
    assert shipped.limits.policy() == bare.limits.policy() and bare.limits.call_timeout == 1200
    assert "call_timeout" not in bare.limits.model_fields_set  # the family's: no rule reads it as given
    with ScriptedServer(lambda body: write(body["messages"])) as server:
        run = {
            "models": {"default": "openai/coder"},
            "base_url": server.base_url,
            "configurations": [{"name": "N"}, {"name": "VG", "guards": True, "gates": True}],
            "dataset": {"family": "code", "path": "humaneval", "limit": 2},
            "concurrency": 1,
        }
        first = vreact.resolve(code_yaml(**run), cache_dir=tmp_path / "cache")
        second = vreact.resolve(code_yaml(("calls", "limits"), **run), cache_dir=tmp_path / "cache")
        assert first.identity() == second.identity()  # the same run: one resumes the other's folder
        vreact.run_experiment(first, tmp_path / "shipped")
        asked = list(server.requests)
        vreact.run_experiment(second, tmp_path / "bare")
        assert server.requests == asked  # every request of the second was the cache's: the same keys
    assert {r["max_tokens"] for r in asked} == {768}
    calls = [c for a in read_run(tmp_path / "bare").attempts for c in a.calls]
    assert calls and all(c.cached and c.stop_reason == "stop" for c in calls)
    stored = read_run(tmp_path / "bare").run.config["configs"]
    assert {json.dumps(c["calls"]) for c in stored} == {
        '{"executor": {"temperature": null, "max_tokens": 768}}'
    }


def test_the_file_wins_then_the_family_then_vreact():
    def executor(*configs: dict[str, Any], family: str = "code", **more: Any) -> list[int]:
        dataset = {"family": "code", "path": "humaneval"} if family == "code" else {"path": "sample"}
        exp = Experiment.model_validate(
            {"name": "x", "dataset": dataset, "configurations": list(configs), **more}
        )
        return [c.settings_for("executor").max_tokens for c in exp.configurations]

    assert executor({"name": "N"}) == [768]
    assert executor({"name": "N", "max_tokens": 300}) == [300]  # the configuration's own, every role's
    assert executor({"name": "N", "calls": {"executor": {"max_tokens": 400}}}) == [400]
    assert executor({"name": "N"}, calls={"default": {"max_tokens": 500}}) == [500]
    assert executor({"name": "N"}, calls={"executor": {"max_tokens": 600}}) == [600]
    assert executor({"name": "N"}, calls={"default": {"temperature": 0.0}}) == [768]
    assert executor({"name": "N"}, family="qa") == [256]  # a family that gives none: vreact's
    j = Experiment.model_validate(
        {
            "name": "x",
            "dataset": {"family": "code", "path": "humaneval"},
            "configurations": [{"name": "J", "judges": True}],
        }
    ).configurations[0]
    assert (j.settings_for("executor").max_tokens, j.settings_for("judge").max_tokens) == (768, 256)

    def tester(config: dict[str, Any], **more: Any) -> int:
        exp = Experiment.model_validate(
            {
                "name": "x",
                "dataset": {"family": "code", "path": "humaneval"},
                "configurations": [config],
                **more,
            }
        )
        return exp.configurations[0].settings_for("tester").max_tokens

    agree = {"name": "A", "gates": True, "agreement": {"k": 3}}
    assert tester(agree) == 768  # the family's: a list of 20 inputs in JSON is cut at 256
    assert tester(agree, calls={"tester": {"max_tokens": 300}}) == 300
    assert tester(agree, calls={"default": {"max_tokens": 200}}) == 200
    assert tester({**agree, "calls": {"tester": {"max_tokens": 100}}}) == 100
    timeouts = [
        Experiment.model_validate(
            {"name": "x", "dataset": d, "configurations": [{"name": "N"}], **more}
        ).limits.call_timeout
        for d, more in (
            ({"family": "code", "path": "humaneval"}, {}),
            ({"family": "code", "path": "humaneval"}, {"limits": {"call_timeout": 30}}),
            ({"path": "sample"}, {}),
        )
    ]
    assert timeouts == [1200, 30, 600]
    # --configs: a subset validated again takes the family's as the whole did
    [vg] = only_configs(code_yaml(("calls",)), "VG").configurations
    assert vg.settings_for("executor").max_tokens == 768


def old_code_run(
    folder: Path, limit: int, monkeypatch: pytest.MonkeyPatch | None = None
) -> tuple[Any, MockModel]:
    """A code run of N without ``calls`` into ``folder`` on ``limit`` problems, by a mock model;
    with ``monkeypatch``, as vreact made it before the code family gave its executor's tokens."""
    if monkeypatch is not None:
        monkeypatch.setattr(CodeSteps, "executor_defaults", ExecutorDefaults())
    exp = Experiment.model_validate(
        {
            "name": "old",
            "dataset": {"family": "code", "path": "humaneval", "limit": limit},
            "configurations": [{"name": "N"}],
            "models": {"default": "openai/unused"},  # replaced by the script once resolved
            "base_url": "http://127.0.0.1:9/v1",
            "cache": False,
            "concurrency": 1,
        }
    )
    if monkeypatch is not None:
        monkeypatch.undo()
    run = vreact.resolve(exp)
    model = run.models["default"] = MockModel(write, name="mock/coder")
    notices: list[str] = []
    vreact.run_experiment(run, folder, on_attempt=lambda p: notices.append(p.notice or ""))
    return notices, model


def stored(folder: Path) -> list[str]:
    conn = sqlite3.connect(folder / "vreact.db")
    try:
        return [r[0] for r in conn.execute("select config_json from runs order by id")]
    finally:
        conn.close()


def test_a_run_folder_made_before_resumes_as_it_was_made(tmp_path, monkeypatch):
    old = tmp_path / "old"
    old_code_run(old, 1, monkeypatch)  # 256 tokens, no calls recorded: as vreact made it before
    [before] = stored(old)
    assert '"calls"' not in before and json.loads(before)["configs"][0]["max_tokens"] == 256
    notices, model = old_code_run(old, 2)  # the same command now, on one more problem
    assert stored(old) == [before]  # the same run, its identity kept (no refusal, no second run)
    assert [s.max_tokens for s in model.settings] == [256]  # it went on as it was made
    assert any("was made before the code family gave its executor 768" in n for n in notices)
    records = read_run(old)
    assert len(records.attempts) == 2 and records.run.config == json.loads(before)
    # a new folder: the family's
    _, model = old_code_run(tmp_path / "new", 1)
    assert [s.max_tokens for s in model.settings] == [768]
    [new] = stored(tmp_path / "new")
    assert json.loads(new)["configs"][0]["calls"] == {"executor": {"temperature": None, "max_tokens": 768}}


def test_an_old_evidence_run_made_without_calls_still_reads_as_256():
    # the code tuning's step a: `vreact run --family code ... --configs N,VG`, no calls (256 tokens)
    db = REPO / "docs" / "evidence" / "2026-12-03-qwen0.5b-code-tuning-a" / "vreact.db"
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        [(config,)] = conn.execute("select config_json from runs").fetchall()
    finally:
        conn.close()
    today = in_todays_terms(json.loads(config))
    assert [(c["name"], c["max_tokens"], "calls" in c) for c in today["configs"]] == [
        ("N", 256, False),
        ("VG", 256, False),
    ]


def test_a_familys_defaults_are_held_to_a_files_bounds_when_it_is_defined():
    with pytest.raises(ValueError, match="at least 16"):
        ExecutorDefaults(max_tokens=8)
    with pytest.raises(ValueError, match="at least 0"):
        ExecutorDefaults(call_timeout=-1)
    with pytest.raises(ValueError, match="tester_max_tokens is at least 16"):
        ExecutorDefaults(tester_max_tokens=8)
    assert ExecutorDefaults() == ExecutorDefaults(None, None)  # vreact's own, a family that gives none
