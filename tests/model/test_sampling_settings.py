"""Sampling settings a provider never sends (issue 33): an explicit temperature for a model whose
API version takes none is refused, naming it; the experiment's seed is never refused (it numbers
the attempts), and a run on a provider without seeds says so once."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.conftest import FULL
from tests.fakes.anthropic_server import AnthropicServer
from vreact.cli import cli
from vreact.model import refused_by
from vreact.model._anthropic import installed_api_version, takes_temperature

ANTHROPIC = "anthropic/claude-test"


def test_the_installed_sdk_s_api_version_is_read_without_importing_it():
    import anthropic

    assert installed_api_version() == anthropic._constants.ANTHROPIC_API_VERSION  # what its client sends
    assert refused_by(ANTHROPIC, "seed") == "the Messages API has no seed"
    assert refused_by("openai/x", "temperature") is None and refused_by("openai/x", "seed") is None


@pytest.mark.skipif(
    takes_temperature(installed_api_version()), reason="this anthropic SDK sends a temperature"
)
@pytest.mark.parametrize(
    "config, where",
    [
        ("{name: VG, guards: true, gates: true, temperature: 0.5}", "temperature"),
        (
            "{name: VG, guards: true, gates: true, calls: {executor: {temperature: 0.1}}}",
            "calls.executor.temperature",
        ),
        ("{name: VG, guards: true, gates: true, retry_temperature: 0.7}", "retry_temperature"),
    ],
)
def test_an_explicit_anthropic_temperature_is_refused_naming_the_api_version(tmp_path, config, where):
    path = tmp_path / "exp.yaml"
    path.write_text(
        f"kind: experiment\nname: x\nconfigurations:\n  - {config}\nmodels: {{default: {ANTHROPIC}}}\n"
    )
    for args in (["validate", str(path)], ["experiment", str(path), "--out", str(tmp_path / "run")]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code in (1, 2), result.output  # validate: 1 with its errors; a run: 2
        assert f"{path}:4: configurations.0.{where}: {where}: {ANTHROPIC}" in result.output, result.output
        assert f"speaks ({installed_api_version()}) refuses a temperature" in result.output
    assert not (tmp_path / "run").exists()


@pytest.mark.skipif(
    takes_temperature(installed_api_version()), reason="this anthropic SDK sends a temperature"
)
def test_an_experiment_wide_temperature_for_an_anthropic_role_is_refused(tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text(
        "kind: experiment\nname: x\nconfigurations: [{name: NP, planner: true}]\n"
        f"models: {{default: openai/x, executor: {ANTHROPIC}}}\ncalls: {{executor: {{temperature: 0.3}}}}\n"
    )
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert (
        "calls.executor.temperature: anthropic/claude-test (the executor's model) takes no temperature"
        in (result.output)
    )


def test_the_default_temperature_and_the_seed_are_never_refused(tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text(
        "kind: experiment\nname: x\nconfigurations: [{name: N}]\n"
        f"models: {{default: {ANTHROPIC}}}\nseed: 7\n"
    )
    result = CliRunner().invoke(cli, ["validate", str(path)])
    assert result.exit_code == 0, result.output


def test_a_shipped_experiment_with_a_seed_runs_on_anthropic_and_says_once_it_takes_no_seed(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    with AnthropicServer(mix={"nonsense": 1.0}, seed=2) as server:
        sets = {
            "dataset.path": str(FULL),
            "dataset.limit": "2",
            "models.default": ANTHROPIC,
            "base_url": server.base_url,
            "seed": "7",
            "concurrency": "2",
        }
        args = ["experiment", "pilot", "--out", str(tmp_path / "run")]
        for key, value in sets.items():
            args += ["--set", f"{key}={value}"]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output[-3000:]
        assert server.requests and all(
            "temperature" not in body and "seed" not in body for body in server.requests
        )
    note = f"note: {ANTHROPIC} is sent no seed (the Messages API has no seed)"
    assert result.output.count(note) == 1, result.output[:2000]
