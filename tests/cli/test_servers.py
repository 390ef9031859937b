"""A run whose models cannot be called is refused before anything starts: a model at a server
without its API key, or a server where nothing listens, is one line naming where it was given
(``FILE:LINE: field``, ``FILE: --set KEY``, the flag, the models file's line or the environment
variable), exit 2, with no run folder, no records and no response cache made. A server that is
up is not refused, and is sent nothing by the check. A dry run checks nothing (it contacts no
server), nor does the Python API: a script that puts its own model in place of the file's runs."""

from __future__ import annotations

import dataclasses
import socket
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import vreact
from tests.helpers import cli as spawn
from vreact.cli import cli
from vreact.cli._servers import Served, unanswered
from vreact.model import MockModel


def free_port() -> int:
    """A loopback port where nothing listens (bound, then let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


DEAD = f"http://127.0.0.1:{free_port()}/v1"
WHY = "nothing answers at {} (Connection refused), the server of {}: start it or fix the address,"


def lab(folder: Path, base_url: str | None = DEAD, model: str = "openai/unused") -> Path:
    """An experiment file naming ``model`` (line 6) at ``base_url`` (line 7)."""
    path = folder / "lab.yaml"
    text = "kind: experiment\nname: lab\ndataset: {path: sample, limit: 1}\nconfigurations:\n  - {name: N}\n"
    text += f"models: {{default: {model}}}\n" + (f"base_url: {base_url}\n" if base_url else "")
    path.write_text(text)
    return path


@pytest.fixture(autouse=True)
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VREACT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    for var in ("OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


def refused(result: Result, tmp_path: Path) -> str:
    """The one line of a refusal that made nothing; its text after ``error:``."""
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.output
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: ")
    assert sorted(p.name for p in tmp_path.iterdir()) in (["lab.yaml"], ["lab.yaml", "models.yaml"], [])
    return line.removeprefix("error: ")


def test_a_file_naming_a_server_where_nothing_listens_is_refused_in_one_line(tmp_path):
    """In a process of its own, as a user runs it: nothing is made (no runs/lab, no cache)."""
    path = lab(tmp_path)
    done = spawn("experiment", str(path), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"error: {path}:7: base_url: " + WHY.format(DEAD, "openai/unused") + " then run the same command"
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["lab.yaml"]


def test_where_the_server_was_given_is_named(tmp_path):
    path = lab(tmp_path, base_url=None)
    by_set = CliRunner().invoke(cli, ["experiment", str(path), "--set", f"base_url={DEAD}"])
    line = refused(by_set, tmp_path)
    assert line.startswith(f"{path}: --set base_url: " + WHY.format(DEAD, "openai/unused"))
    flags = ["run", "--dataset", "sample", "--limit", "1", "--configs", "N", "--model", "openai/x"]
    by_flag = CliRunner().invoke(cli, [*flags, "--base-url", DEAD, "--out", "run"])
    assert refused(by_flag, tmp_path).startswith("--base-url: " + WHY.format(DEAD, "openai/x"))
    by_env = CliRunner().invoke(cli, [*flags, "--out", "run"], env={"OPENAI_BASE_URL": DEAD})
    assert refused(by_env, tmp_path).startswith("OPENAI_BASE_URL: " + WHY.format(DEAD, "openai/x"))
    (tmp_path / "models.yaml").write_text(
        f"kind: models\nmodels:\n  lab:\n    model: openai/lab\n    base_url: {DEAD}\n"
    )
    in_models = lab(tmp_path, base_url=None, model="lab")
    path.write_text(in_models.read_text() + "models_file: models.yaml\n")
    by_entry = CliRunner().invoke(cli, ["experiment", str(path)])
    assert refused(by_entry, tmp_path).startswith(
        "models.yaml:5: models.lab.base_url: " + WHY.format(DEAD, "openai/lab")
    )


def test_a_model_without_its_api_key_is_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    path = lab(tmp_path, base_url=None, model="openai/gpt-4o-mini")
    result = CliRunner().invoke(cli, ["experiment", str(path)])
    assert refused(result, tmp_path) == (
        f"{path}:6: models.default: openai/gpt-4o-mini needs an API key: set OPENAI_API_KEY, or give"
        " base_url for a local server"
    )
    flags = ["run", "--dataset", "sample", "--limit", "1", "--configs", "VPGJ", "--out", "run"]
    judge = CliRunner().invoke(cli, [*flags, "--role-model", "judge=anthropic/claude-x"])
    assert refused(judge, tmp_path) == (
        "--role-model judge: anthropic/claude-x needs an API key: set ANTHROPIC_API_KEY, or give"
        " --base-url for a local server"
    )


def test_a_server_that_is_up_is_not_refused_and_is_sent_nothing():
    """The check connects and sends nothing: the server sees a connection, and no byte."""
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        url = f"http://127.0.0.1:{listening.getsockname()[1]}/v1"
        received: list[bytes] = []

        def accept() -> None:
            conn, _ = listening.accept()
            with conn:
                received.append(conn.recv(1024))  # b"" once the check closes it

        thread = threading.Thread(target=accept)
        thread.start()
        up = Served("openai/x", "openai/x", "--model", url, "--base-url")
        dead = Served("openai/y", "openai/y", "--model", DEAD, "--base-url")
        said = unanswered([up, dead])
        assert said == ["--base-url: " + WHY.format(DEAD, "openai/y") + " then run the same command"]
        thread.join(timeout=10)
    assert received == [b""]


def test_a_dry_run_checks_no_server(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    path = lab(tmp_path)
    result = CliRunner().invoke(cli, ["experiment", str(path), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "nothing was created" in result.stdout
    assert [p.name for p in tmp_path.iterdir()] == ["lab.yaml"]


def test_the_python_api_runs_a_file_whose_model_it_replaces(tmp_path):
    """The README's way: the file names openai/unused where nothing listens; resolve checks no
    server, and the run calls the script put in its place."""
    experiment = vreact.resolve(vreact.load_experiment(str(lab(tmp_path))))
    model = MockModel(['{"thought": "", "action": "abstain", "input": "no idea"}'] * 10)
    replaced = dataclasses.replace(experiment, models={"default": model})
    run_id = vreact.run_experiment(replaced, tmp_path / "run")
    [attempt] = vreact.read_run(tmp_path / "run", run_id).attempts
    assert attempt.outcome == "abstain"
