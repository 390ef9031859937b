"""An experiment's ``calls``: the call settings every configuration takes where it gives none of
its own (``default``: temperature and max_tokens; or one role's), seen in the requests a loopback
server gets; refused where no configuration takes them; the same under ``--configs``."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FULL
from tests.fakes.scripted_server import ScriptedServer
from vreact.config import Configuration
from vreact.experiment import resolve, run_experiment
from vreact.spec import Experiment, SpecError, load_file, only_configs

NISSEDAL = "2hop__269805_135710"
FINISH = json.dumps({"thought": "", "action": "finish", "input": "north", "evidence": ["10", "6"]})
ACCEPT = json.dumps({"decision": "accept", "cause": "", "confidence": 0.9, "reason": "fine"})


def role(body: dict) -> str:
    return "judge" if body["messages"][0]["content"].startswith("You are a strict judge") else "executor"


def reply(body: dict) -> str:
    return ACCEPT if role(body) == "judge" else FINISH


def pair(config: Configuration, role: str) -> tuple[float, int]:
    s = config.settings_for(role)
    return s.temperature, s.max_tokens


def experiment(base_url: str, **more) -> Experiment:
    return Experiment.model_validate(
        {
            "kind": "experiment",
            "name": "calls",
            "dataset": {"path": str(FULL), "task_ids": [NISSEDAL]},
            "models": {"default": "openai/m"},
            "base_url": base_url,
            "cache": False,
            "concurrency": 1,
            "calls": {"default": {"temperature": 0.0, "max_tokens": 300}, "judge": {"temperature": 0.9}},
            "configurations": [
                {"name": "N"},
                {"name": "warm", "temperature": 0.7},
                {"name": "J", "judges": True, "calls": {"judge": {"max_tokens": 100}}},
            ],
            **more,
        }
    )


def test_every_configuration_takes_the_experiments_call_settings_unless_it_gives_its_own(tmp_path):
    with ScriptedServer(reply) as server:
        run_experiment(resolve(experiment(server.base_url)), tmp_path / "out")
        asked = server.requests
    by_role: dict[str, set[tuple[float, int]]] = {}
    for r in asked:
        by_role.setdefault(role(r), set()).add((r.get("temperature"), r.get("max_tokens")))
    # N and J: the experiment's default; warm: its own temperature with the experiment's max_tokens
    assert by_role["executor"] == {(0.0, 300), (0.7, 300)}
    # J's judge: the experiment's judge temperature, its own max_tokens; vreact's (0.2, 256) nowhere
    assert by_role["judge"] == {(0.9, 100)}


def test_the_settings_each_role_is_called_with():
    configs = {c.name: c for c in experiment("http://127.0.0.1:9/v1").configurations}
    assert pair(configs["N"], "executor") == (0.0, 300)
    assert pair(configs["warm"], "executor") == (0.7, 300)
    assert pair(configs["J"], "executor") == (0.0, 300)
    assert pair(configs["J"], "judge") == (0.9, 100)  # its own max_tokens, the file's temperature
    assert pair(Configuration(name="plain"), "executor") == (0.2, 256)  # vreact's defaults


def test_a_subset_of_the_configurations_keeps_what_it_takes():
    e = experiment("http://127.0.0.1:9/v1")
    [warm] = only_configs(e, "warm").configurations
    assert pair(warm, "executor") == (0.7, 300)
    [j] = only_configs(e, "J").configurations
    assert pair(j, "judge") == (0.9, 100)


@pytest.mark.parametrize(
    ("calls", "line", "says"),
    [
        ("{default: {temperature: 0.1}}", 3, "calls.default.temperature is read by no configuration"),
        ("{critic: {max_tokens: 99}}", 3, "calls.critic.max_tokens is read by no configuration"),
        ("{planer: {max_tokens: 99}}", 3, "unknown role 'planer'"),
    ],
)
def test_call_settings_no_configuration_takes_are_refused(tmp_path, calls, line, says):
    path = tmp_path / "x.yaml"
    path.write_text(
        f"kind: experiment\nname: x\ncalls: {calls}\nconfigurations:\n  - {{name: N, temperature: 0.5}}\n"
    )
    with pytest.raises(SpecError) as e:
        load_file(path)
    [message] = e.value.lines
    assert message.startswith(f"{path}:{line}: calls") and says in message


def test_a_configurations_own_temperature_wins_over_the_experiments_role_setting():
    e = Experiment.model_validate(
        {
            "name": "x",
            "calls": {"executor": {"temperature": 0.5, "max_tokens": 400}},
            "configurations": [{"name": "A", "temperature": 0.0}, {"name": "B"}],
        }
    )
    a, b = e.configurations
    assert pair(a, "executor") == (0.0, 400)  # its own temperature; the experiment's max_tokens
    assert pair(b, "executor") == (0.5, 400)
    assert a.model_dump(exclude_unset=True) == {"name": "A", "temperature": 0.0}  # kept as given
