"""The code family end to end, on the first 10 HumanEval problems in the real sandbox: N and VG
with a scripted ``mock/`` model and against a loopback OpenAI-compatible server. The scripted
model writes each problem's canonical solution, except on one problem, where its first program
returns None: N keeps it (a silent error the hidden test finds), VG's examples gate rejects it
and the retry, told which example failed, passes; on another its first reply is prose, not a
step (a format failure in both configurations). Every attempt is accounted for, the report
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
from vreact.spec import SpecError

PROBLEMS = read_problems(SHIPPED, 10)
#: the problem whose first program is wrong (it has visible examples the wrong one fails)
TRAP = "HumanEval/0"
#: the problem whose first reply is prose, not a step (a format failure), then its program
PROSE = "HumanEval/2"


def step(action: str, text: str) -> str:
    return json.dumps({"thought": action, "action": action, "input": text})


def write(messages: list[dict[str, Any]]) -> str:
    """The scripted executor: the problem's canonical program; on the trap, a wrong one first."""
    prompt = "\n".join(m["content"] for m in messages)
    [problem] = [p for p in PROBLEMS if f"def {p.entry_point}(" in prompt]
    if problem.id == TRAP and "rejected" not in prompt:
        return step("finish", problem.prompt + "    return None\n")
    if problem.id == PROSE and "steps so far" not in prompt and "rejected" not in prompt:
        return "The decimal part is what is left after the integer part."
    return step("finish", problem.prompt + str(problem.canonical_solution))


def test_n_and_vg_with_a_scripted_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shipped = vreact.load_experiment("code")  # experiments/code.yaml, its model replaced by the script
    unused = {"models": {"default": "openai/unused"}, "base_url": "http://127.0.0.1:9/v1", "cache": False}
    unused["configurations"] = [c for c in shipped.configurations if c.name in ("N", "VG")]
    experiment = vreact.resolve(shipped.model_copy(update=unused))
    experiment.models["default"] = MockModel(write)
    vreact.run_experiment(experiment, "runs/code")
    records = read_run("runs/code")
    assert len(records.attempts) == 20 and {a.outcome for a in records.attempts} == {"answer"}
    scores = {(a.config, a.task_id): a.score.correct for a in records.attempts if a.score}
    assert len(scores) == 20
    assert scores[("N", TRAP)] is False and scores[("VG", TRAP)] is True
    assert sum(scores.values()) == 19
    rejections = [v for a in records.attempts for v in a.verdicts if v.decision == "reject"]
    assert sorted((v.check_name, v.cause) for v in rejections) == [
        ("examples_pass", "example_failed"),
        ("parses", "format"),  # the prose reply: a format failure, an R1 reject under VG
    ]
    [rejection] = [v for v in rejections if v.check_name == "examples_pass"]
    assert rejection.detail.startswith("has_close_elements([1.0, 2.0, 3.0], 0.5) should return False")
    # the retry's prompt carried that sentence, and no prompt holds a hidden test
    prompts = ["\n".join(m["content"] for m in c.messages or []) for a in records.attempts for c in a.calls]
    assert any(rejection.detail in p for p in prompts)
    # not the program it rejected: that is show_rejected's (tests/code/test_plan.py)
    assert not any("Your last program was rejected:" in p for p in prompts)
    hidden = [str(p.test).split("def check")[1][:80] for p in PROBLEMS]
    assert not any(h in p for h in hidden for p in prompts)
    report = vreact.report("runs/code")
    assert report.family == "code"
    n, vg = report.configs["N"], report.configs["VG"]
    assert (n.correct, n.silent_error, vg.correct, vg.silent_error) == (9, 1, 10, 0)
    assert n.family_metrics == {"pass": 0.9} and vg.family_metrics == {"pass": 1.0}
    assert (n.format_failures, vg.format_failures) == (1, 1)
    # the scorer ran the hidden test on every program VG's verifiers judged (N's judged none):
    # the rejected one fails it, the retry passes, so the gate's correction is confirmed
    assert (n.tries_scored, vg.tries_scored) == (0, 11)
    gate = (vg.corrections["gate"], vg.confirmed_corrections["gate"], vg.false_rejections["gate"])
    assert gate == (2, 1, 0)
    [correction] = [c for c in report.corrections if c.check == "examples_pass"]
    assert (correction.rejected_right, correction.right) == (False, True)
    assert correction.rejected == "line 12: return None"


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


def strict_server(body: dict[str, Any]) -> str:
    """HumanEval/0's canonical program first (right, and 17 lines long), then, told it was
    rejected, a right program of one line's body."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    [problem] = [p for p in PROBLEMS if p.id == TRAP]
    if "rejected" not in prompt:
        return step("finish", problem.prompt + str(problem.canonical_solution))
    short = "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n"
    return step("finish", problem.prompt.split('    """')[0] + short)


def test_a_gate_that_rejects_a_right_program_is_a_false_rejection_the_report_shows(tmp_path):
    """A gate stricter than the problem (a test plugin's ``short_program``) rejects the canonical
    program: the scorer, which runs the hidden test on every judged try, finds that try right,
    so the report counts a false rejection and an unconfirmed correction, and the page shows
    both programs with the hidden test's verdict on each."""
    verifiers = tmp_path / "strict.yaml"
    verifiers.write_text(
        "kind: verifiers\nname: strict\nplan: {gates: []}\n"
        "R1: {gates: [code_parses, defines_entry_point, short_program, examples_pass]}\n"
        "R2: {gates: []}\nR3: {gates: [examples_pass, abstention_allowed]}\n"
    )
    out = tmp_path / "run"
    with ScriptedServer(strict_server) as s:
        done = cli(
            "run",
            *("--plugin", "tests.code.strict", "--family", "code", "--dataset", "humaneval", "--limit", "1"),
            *("--verifiers", str(verifiers), "--configs", "VG", "--model", "openai/coder"),
            *("--base-url", s.base_url, "--no-cache", "--out", str(out)),
        )
    assert done.returncode == 0, done.stderr[-3000:]
    report = vreact.report(out)
    vg = report.configs["VG"]
    assert (vg.correct, vg.tries_scored) == (1, 2)
    assert (vg.rejections["gate"], vg.false_rejections["gate"]) == (1, 1)
    assert (vg.corrections["gate"], vg.confirmed_corrections["gate"]) == (1, 0)
    [correction] = report.corrections
    assert (correction.check, correction.rejected_right, correction.right) == ("short_program", True, True)
    shown = cli("report", str(out))
    assert "Rejections checked by the scorer" in shown.stdout and "Retrieval ceiling" not in shown.stdout
    assert cli("view", str(out)).returncode == 0
    from vreact.report.html import attempt_pages

    [page] = attempt_pages((out / "report.html").read_text()).values()
    assert page.count('hidden test: <b class="acc">passes</b>') == 2
    assert "short_program</code> too_long: the program has" in page


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


def test_without_a_sandbox_the_run_is_refused_unless_the_experiment_says_sandbox_none(server, tmp_path):
    """No bubblewrap on the PATH: a code run is refused in one line that says what to do, and
    makes nothing; with ``--sandbox none`` it runs, the run records it and every report says so.
    Question answering runs no model-written code: the setting is refused there."""
    import os

    bare = {**os.environ, "PATH": str(tmp_path)}  # no bwrap on it
    args = [*("--family", "code", "--dataset", "humaneval", "--limit", "2", "--configs", "VG")]
    args += [*("--model", "openai/coder", "--base-url", server.base_url, "--no-cache")]
    out = tmp_path / "run"
    refused = cli("run", *args, "--out", str(out), env=bare)
    assert refused.returncode == 2
    [line] = refused.stderr.strip().splitlines()
    assert "only in a sandbox: bubblewrap is not installed" in line and "sandbox: none" in line
    assert not out.exists()
    done = cli("run", *args, "--sandbox", "none", "--out", str(out), env=bare)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "sandbox: none: this run's model-written code ran WITHOUT isolation" in done.stdout
    report = json.loads(cli("report", str(out), "--json").stdout)
    assert report["sandbox"] == "none" and report["configs"]["VG"]["correct"] == 2
    assert read_run(out).run.config["sandbox"] == "none"
    assert "sandbox none" in (cli("view", str(out)) and (out / "report.html").read_text())
    markdown = cli("report", str(out), "--markdown").stdout
    assert "**sandbox: none:" in markdown
    # a sandboxed run of the same says where its code ran
    sandboxed = tmp_path / "sandboxed"
    assert cli("run", *args, "--out", str(sandboxed)).returncode == 0
    assert json.loads(cli("report", str(sandboxed), "--json").stdout)["sandbox"] == "bwrap"
    qa = cli("run", "--dataset", "sample", "--limit", "1", "--sandbox", "none", "--model", "mock/x")
    assert qa.returncode == 2 and "runs no model-written code" in qa.stderr


def test_show_rejected_is_a_setting_of_the_code_familys_steps(tmp_path):
    """Refused for question answering, naming the configuration's line."""
    path = tmp_path / "qa.yaml"
    path.write_text(
        "kind: experiment\nname: qa\ndataset: {path: sample}\n"
        "configurations:\n  - {name: VG, gates: true, show_rejected: true}\nmodels: {default: mock/x}\n"
    )
    with pytest.raises(SpecError, match=r"qa.yaml:5: configurations.0.show_rejected: a setting of the code"):
        vreact.load_experiment(str(path))


def test_observation_marking_is_the_cores_and_a_code_configuration_takes_it(tmp_path):
    """Read by the core for every family (a program's cited runs are marked as data), so a code
    configuration is not refused it; qa's own step settings are."""
    path = tmp_path / "code.yaml"
    body = "kind: experiment\nname: c\ndataset: {family: code, limit: 1}\nmodels: {default: mock/x}\n"
    path.write_text(body + "configurations:\n  - {name: VG, gates: true, observation_marking: true}\n")
    [config] = vreact.load_experiment(str(path)).configurations
    assert config.observation_marking and not config.model_extra
    path.write_text(body + "configurations:\n  - {name: VG, gates: true, finish: hops}\n")
    refused = r"code.yaml:6: configurations.0.finish: a setting of the qa family's steps"
    with pytest.raises(SpecError, match=refused):
        vreact.load_experiment(str(path))
