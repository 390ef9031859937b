"""The code family end to end, on the first 10 HumanEval problems in the real sandbox: N and VG
with a scripted ``mock/`` model and against a loopback OpenAI-compatible server. The scripted
model writes each problem's canonical solution, except on one problem, where its first program
returns None: N keeps it (a silent error the hidden test finds), VG's examples gate rejects it
and the retry, told which example failed, passes. Every attempt is accounted for, the report
carries the family's pass rate, and a replay under a set without the examples gate lets the
wrong program through post hoc."""

from __future__ import annotations

import json
from typing import Any

import pytest

import vreact
from tests.fakes.scripted_server import ScriptedServer
from tests.helpers import cli
from vreact.code.data import SHIPPED, read_problems
from vreact.model import MockModel
from vreact.records import read_run

PROBLEMS = read_problems(SHIPPED, 10)
#: the problem whose first program is wrong (it has visible examples the wrong one fails)
TRAP = "HumanEval/0"


def step(action: str, text: str) -> str:
    return json.dumps({"thought": action, "action": action, "input": text})


def write(messages: list[dict[str, Any]]) -> str:
    """The scripted executor: the problem's canonical program; on the trap, a wrong one first."""
    prompt = "\n".join(m["content"] for m in messages)
    [problem] = [p for p in PROBLEMS if f"def {p.entry_point}(" in prompt]
    if problem.id == TRAP and "rejected" not in prompt:
        return step("finish", problem.prompt + "    return None\n")
    return step("finish", problem.prompt + str(problem.canonical_solution))


def test_n_and_vg_with_a_scripted_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shipped = vreact.load_experiment("code")  # experiments/code.yaml, its model replaced by the script
    unused = {"models": {"default": "openai/unused"}, "base_url": "http://127.0.0.1:9/v1", "cache": False}
    experiment = vreact.resolve(shipped.model_copy(update=unused))
    experiment.models["default"] = MockModel(write)
    vreact.run_experiment(experiment, "runs/code")
    records = read_run("runs/code")
    assert len(records.attempts) == 20 and {a.outcome for a in records.attempts} == {"answer"}
    scores = {(a.config, a.task_id): a.score.correct for a in records.attempts if a.score}
    assert len(scores) == 20
    assert scores[("N", TRAP)] is False and scores[("VG", TRAP)] is True
    assert sum(scores.values()) == 19
    [rejection] = [v for a in records.attempts for v in a.verdicts if v.decision == "reject"]
    assert (rejection.check_name, rejection.cause) == ("examples_pass", "example_failed")
    assert rejection.detail.startswith("has_close_elements([1.0, 2.0, 3.0], 0.5) should return False")
    # the retry's prompt carried that sentence, and no prompt holds a hidden test
    prompts = ["\n".join(m["content"] for m in c.messages or []) for a in records.attempts for c in a.calls]
    assert any(rejection.detail in p for p in prompts)
    hidden = [str(p.test).split("def check")[1][:80] for p in PROBLEMS]
    assert not any(h in p for h in hidden for p in prompts)
    report = vreact.report("runs/code")
    assert report.family == "code"
    n, vg = report.configs["N"], report.configs["VG"]
    assert (n.correct, n.silent_error, vg.correct, vg.silent_error) == (9, 1, 10, 0)
    assert n.family_metrics == {"pass": 0.9} and vg.family_metrics == {"pass": 1.0}
    assert vg.corrections["gate"] == 1


@pytest.fixture
def server():
    with ScriptedServer(lambda body: write(body["messages"])) as s:
        yield s


def test_n_and_vg_against_a_loopback_server_then_report_and_replay(server, tmp_path):
    out = tmp_path / "run"
    done = cli(
        "run",
        *("--family", "code", "--dataset", "humaneval", "--limit", "10"),
        *("--spec", "humaneval", "--verifiers", "humaneval", "--configs", "N,VG"),
        *("--model", "openai/coder", "--base-url", server.base_url, "--no-cache", "--out", str(out)),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(cli("report", str(out), "--json").stdout)
    assert report["family"] == "code"
    assert report["configs"]["N"]["family_metrics"] == {"pass": 0.9}
    assert report["configs"]["VG"]["family_metrics"] == {"pass": 1.0}
    # replayed under another set (the examples gate at acceptance only): N's wrong program,
    # which N took as it was, is rejected post hoc; VG's answers stand
    other = tmp_path / "examples-only.yaml"
    other.write_text(
        "kind: verifiers\nname: examples-only\nplan: {gates: []}\nR1: {gates: [code_parses]}\n"
        "R2: {gates: []}\nR3: {gates: [examples_pass, abstention_allowed]}\n"
    )
    replay = cli("replay", str(out), "--verifiers", str(other), "--out", str(tmp_path / "replay"), "--json")
    assert replay.returncode == 0, replay.stderr[-3000:]
    configs = {c["config"]: c for c in json.loads(replay.stdout)["configs"]}
    n, vg = configs["N"], configs["VG"]
    assert (n["as_run"]["silent_errors"], n["post_hoc"]["silent_errors"]) == (1, 0)
    assert (n["rejected_wrong"], n["rejected_right"]) == (1, 0)
    assert vg["post_hoc"] == vg["as_run"] and vg["rejected_right"] == 0
    assert (tmp_path / "replay" / "vreact.db").exists()


def test_the_probe_builds_the_familys_classes_and_its_gates_catch_them(tmp_path):
    """``vreact probe --family code`` on three problems: gold and the control pass every gate,
    each mutant class with a program here is caught by a gate, a mutant the hidden test cannot
    tell from the canonical solution is dropped as equivalent, and hard-coded examples escape
    (only the hidden test sees them: the scorer's, not a gate's)."""
    out = tmp_path / "probe"
    done = cli(
        "probe",
        *("--family", "code", "--format", "humaneval", "--dataset", "humaneval", "--limit", "3"),
        *("--spec", "humaneval", "--verifiers", "humaneval", "--out", str(out), "--json"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    classes = {c["fault_class"]: c for c in report["classes"]}
    assert report["false_rejections"] == []
    assert classes["gold"]["escaped"] == classes["control_reformatted"]["escaped"] == 3
    for name in ("wrong_return", "infinite_loop", "wrong_name", "exception", "equals_everything"):
        assert (classes[name]["caught_by_gate"], classes[name]["escaped"]) == (3, 0), name
    assert classes["hardcoded_examples"]["escaped"] == 3
    assert all(reason in ("no such node", "equivalent") for c in classes.values() for reason in c["skipped"])
