"""``vreact run`` and ``vreact experiment`` end as the demo does: under the report, what
verification did (two lines per verified configuration), then the commands to look further,
naming the run's folder as it was given (quoted for a shell where it needs to be). Through the
CLI and HTTP, against a loopback server whose executor answers wrong first and right once a
rejection is in its prompt (the demo test's); the commands it names run on the folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.cli.test_demo import executor
from tests.fakes.chaos_server import ChaosServer
from tests.fakes.scripted_server import ScriptedServer
from vreact.cli import cli
from vreact.records import DB_NAME
from vreact.report import TABLES, all_zero, compute

VIEW = "   (a page of every attempt: its steps, verdicts and retries)"
CORRECTIONS = "   (each correction: what a check rejected, what was accepted in its place)"
KEPT = (
    "Verification ({}) kept 1 right answer(s) of 1 question(s), let 0 wrong one(s) through and"
    " abstained on 0."
)


@pytest.fixture(autouse=True)
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test in a folder of its own, where a relative --out lands; no key of the user's."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("VREACT_CACHE_DIR", str(tmp_path / "cache"))


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output[-3000:]
    return result


def test_vreact_run_ends_with_what_verification_did_and_the_next_commands() -> None:
    with ScriptedServer(executor) as server:
        args = ["--dataset", "sample", "--limit", "1", "--model", "openai/x"]
        args += ["--experiment", "chain", "--configs", "N,VG+chain"]  # the demo's
        result = invoke("run", *args, "--base-url", server.base_url, "--out", "my runs/first")
    *_, folder, kept, stopped, view, corrections = result.stdout.strip().splitlines()
    assert folder.startswith("Run folder: my runs/first")
    assert kept == KEPT.format("VG+chain")
    assert stopped.startswith("It stopped 1 wrong answer(s): R")
    assert view == "next: vreact view 'my runs/first'" + VIEW
    assert corrections == "      vreact report 'my runs/first' --corrections" + CORRECTIONS
    assert "next:" not in result.stderr and "Verification" not in result.stderr
    # what it names runs: the folder's corrections, and its page
    listed = invoke("report", "my runs/first", "--corrections")
    assert "run 1: 1 correction; 1 of the final answer, 1 of those right by gold" in listed.stdout
    invoke("view", "my runs/first")
    assert (Path("my runs/first") / "report.html").is_file()


def test_vreact_experiment_ends_the_same_way(tmp_path: Path) -> None:
    with ScriptedServer(executor) as server:
        (tmp_path / "lab.yaml").write_text(
            "kind: experiment\nname: lab\ndataset: {path: sample, limit: 1}\n"
            "configurations:\n  - {name: N}\n"
            "  - name: VG\n    guards: true\n    gates: true\n    finish: hops\n"
            "    designer: {first_search: question, follow_up: bridge}\n"
            f"models: {{default: openai/x}}\nbase_url: {server.base_url}\n"
        )
        result = invoke("experiment", "lab.yaml")  # into runs/lab, its default
    *_, kept, stopped, view, corrections = result.stdout.strip().splitlines()
    assert kept == KEPT.format("VG")
    assert stopped.startswith("It stopped 1 wrong answer(s): R")
    assert view == "next: vreact view runs/lab" + VIEW
    assert corrections == "      vreact report runs/lab --corrections" + CORRECTIONS


def test_a_run_without_a_verified_configuration_ends_with_its_page_and_tables() -> None:
    """Nothing was verified: no line on what verification did, and no corrections to list; its
    report keeps every table, those of zeros only too (the demo alone leaves them out)."""
    with ChaosServer(mix={"nonsense": 1.0}, deterministic=True) as server:
        args = ["--dataset", "sample", "--limit", "2", "--configs", "N", "--model", "openai/chaos"]
        result = invoke("run", *args, "--base-url", server.base_url, "--out", "plain")
    *_, folder, view, tables = result.stdout.strip().splitlines()
    assert folder.startswith("Run folder: plain")
    assert view == "next: vreact view plain" + VIEW
    assert tables == "      vreact report plain   (these tables again; --markdown or --json)"
    assert "Verification (" not in result.stdout
    report = compute(Path("plain") / DB_NAME)
    pass_k = next(t for t in TABLES if t.title.startswith("Pass@1 and Pass@k"))
    assert all_zero(report, pass_k)  # nonsense answers: zero (its tasks and k are sizes, not figures)
    assert "Pass@1 and Pass@k" in result.stdout and "Left out" not in result.stdout


def test_what_verification_did_follows_the_runs_order_of_configurations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attempts end in any order (several in flight); the lines keep the file's order."""
    import dataclasses
    import importlib

    module = importlib.import_module("vreact.report.compute")  # vreact.report.compute is also a function

    with ScriptedServer(executor) as server:
        (tmp_path / "two.yaml").write_text(
            "kind: experiment\nname: two\ndataset: {path: sample, limit: 1}\n"
            "configurations:\n  - {name: VG, guards: true, gates: true}\n"
            "  - {name: VG2, guards: true, gates: true}\n"
            f"models: {{default: openai/x}}\nbase_url: {server.base_url}\n"
        )
        invoke("experiment", "two.yaml", "--out", "two")
    read = module.read_run

    def backwards(*args, **kwargs):  # the last configuration's attempts first
        records = read(*args, **kwargs)
        return dataclasses.replace(records, attempts=records.attempts[::-1])

    monkeypatch.setattr(module, "read_run", backwards)
    assert [d.config for d in module.what_verification_did(Path("two") / DB_NAME)] == ["VG", "VG2"]
