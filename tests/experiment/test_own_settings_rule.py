"""The settings rule over a configuration's own models, spec and verifiers: what every
configuration replaces is refused in the experiment; a subset (``--configs``) drops what only
the left-out configurations read; a resumed subset of a run is the same run."""

from __future__ import annotations

import pytest

from tests.conftest import FULL
from tests.fakes.scripted_server import ScriptedServer
from vreact.experiment import resolve, run_experiment
from vreact.experiment.history import refusal
from vreact.records import Store, read_run
from vreact.spec import Experiment, only_configs

ABSTAIN = '{"thought": "", "action": "abstain", "input": "no idea", "evidence": []}'


def experiment(**body) -> Experiment:
    return Experiment.model_validate({"name": "x", **body})


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (  # every configuration that calls the executor names its own
            {
                "models": {"default": "openai/a", "executor": "openai/e"},
                "configurations": [{"name": "A", "planner": True, "models": {"executor": "openai/z"}}],
            },
            "models.executor is read by no configuration: each that calls the executor names its own",
        ),
        (  # a configuration's default that none of its roles takes: mixed sources
            {
                "models": {"judge": "openai/j"},
                "configurations": [
                    {"name": "A", "judges": True, "models": {"default": "openai/x", "executor": "openai/y"}}
                ],
            },
            "models.default is read by no role of A: each has a model of its own",
        ),
        (
            {"spec": "musique", "configurations": [{"name": "A", "spec": "musique"}]},
            "spec is read by no configuration: each names its own",
        ),
        (
            {"verifiers": "musique", "configurations": [{"name": "N"}]},
            "verifiers is read by no configuration: each names its own or runs no gates or judges",
        ),
    ],
)
def test_what_every_configuration_replaces_is_refused(body, says):
    with pytest.raises(ValueError, match=says):
        experiment(**body)


def test_a_subset_drops_what_only_the_left_out_configurations_read():
    e = experiment(
        models={"default": "openai/a"},
        base_url="http://127.0.0.1:9/v1",
        configurations=[{"name": "A"}, {"name": "B", "models": {"default": "llamacpp/smollm2-135m"}}],
    )
    [b] = only_configs(e, "B").configurations  # it reads neither the default nor the server
    assert b.models == {"default": "llamacpp/smollm2-135m"}
    subset = only_configs(e, "B")
    assert subset.models == {} and subset.base_url is None
    assert only_configs(e, "A").models == {"default": "openai/a"}


def test_a_run_resumed_with_a_subset_of_its_configurations_is_the_same_run(tmp_path, full_tasks):
    with ScriptedServer(lambda body: ABSTAIN) as server:
        body = {
            "name": "x",
            "dataset": {"path": str(FULL)},
            "models": {"default": "openai/a"},
            "base_url": server.base_url,
            "cache": False,
            "configurations": [{"name": "A"}, {"name": "B", "models": {"default": "openai/b"}}],
        }
        e = Experiment.model_validate(body)
        out = tmp_path / "out"
        first = run_experiment(resolve(e, tasks=full_tasks[:2]), out)
        only_b = only_configs(e, "B")  # every configuration of the subset has its own models
        assert run_experiment(resolve(only_b, tasks=full_tasks[:2]), out) == first
        grown = {**body, "configurations": [*body["configurations"], {"name": "C", "judges": True}]}
        assert run_experiment(resolve(Experiment.model_validate(grown), tasks=full_tasks[:2]), out) == first
    assert {a.config for a in read_run(out).attempts} == {"A", "B", "C"}
    stored = dict(Store(out / "vreact.db").run_configs())[first]
    other = {**stored, "models": {"default": "openai/other"}}
    assert "made with the default model openai/a" in str(refusal(out, first, stored, other))
