"""The gsm8k family end to end on GSM8K's first train problems in the real sandbox: N and VG
with a scripted ``mock/`` model, and N, VG and VG with agreement against a loopback server
through the command line. The scripted model writes a right program for each problem, except
that on train/1 its first reply claims 12 / 60 = 0.25 and prints 12.5 (N keeps it: a silent
error; VG's claims gate rejects it and the retry, told which claim, is right), and on train/2
its first program prints a sentence (N's answer is its last number, right; VG's print gate
rejects it). The worked solutions reach no prompt."""

from __future__ import annotations

import json
from typing import Any

import pytest

import vreact
from tests.conftest import REPO
from tests.fakes.scripted_server import ScriptedServer
from tests.helpers import cli
from vreact.families import family_of
from vreact.gsm8k.artifact import Solution
from vreact.gsm8k.data import read
from vreact.model import MockModel
from vreact.records import read_run

DATA = REPO / "tests" / "data" / "gsm8k"
TRAIN = DATA / "train_0_199.jsonl"
PROBLEMS = read(TRAIN, "gsm8k", 4)
#: each problem's right program, written from its question
RIGHT = {
    "train/0": "april = 48\nmay = april / 2\nprint(april + may)\n",
    "train/1": "per_minute = 12 / 60\nprint(per_minute * 50)\n",
    "train/2": "have = 100 / 2\nparents = 15\ngrandparents = 2 * parents\n"
    "print(100 - have - parents - grandparents)\n",
    "train/3": "today = 2 * 12\nremaining = 120 - 12 - today\nprint(remaining / 2)\n",
}


def fenced(program: str, prose: str = "") -> str:
    return f"{prose}\n```python\n{program}```\n"


def write(messages: list[dict[str, Any]]) -> str:
    prompt = "\n".join(m["content"] for m in messages)
    [problem] = [p for p in PROBLEMS if p.question in prompt]
    if "rejected" not in prompt:
        if problem.id == "train/1":
            return fenced("per_minute = 0.25\nprint(per_minute * 50)\n", "She earns 12 / 60 = 0.25 a minute.")
        if problem.id == "train/2":
            return fenced("print('The answer is', 100 - 50 - 15 - 30)\n")
    return fenced(RIGHT[problem.id], "Each quantity gets a name.")


def test_n_and_vg_with_a_scripted_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shipped = vreact.load_experiment("gsm8k")
    update = {
        "models": {"default": "openai/unused"},
        "base_url": "http://127.0.0.1:9/v1",
        "cache": False,
        "configurations": [c for c in shipped.configurations if c.name in ("N", "VG")],
        "dataset": shipped.dataset.model_copy(update={"path": str(TRAIN), "limit": 4}),
    }
    experiment = vreact.resolve(shipped.model_copy(update=update))
    experiment.models["default"] = MockModel(write)
    vreact.run_experiment(experiment, "runs/gsm8k")
    records = read_run("runs/gsm8k")
    assert len(records.attempts) == 8 and {a.outcome for a in records.attempts} == {"answer"}
    scores = {(a.config, a.task_id): a.score.correct for a in records.attempts if a.score}
    assert scores[("N", "train/1")] is False and scores[("VG", "train/1")] is True
    assert scores[("N", "train/2")] is True and sum(scores.values()) == 7
    rejections = sorted(
        (v.check_name, v.cause, v.detail)
        for a in records.attempts
        for v in a.verdicts
        if v.decision == "reject"
    )
    assert rejections == [
        ("claims_agree", "arithmetic_wrong", "12 / 60 = 0.25, but 12 / 60 is 0.2"),
        (
            "prints_a_number",
            "not_one_number",
            "the program printed 'The answer is 5': print the answer alone, one number",
        ),
    ]
    prompts = ["\n".join(m["content"] for m in c.messages or []) for a in records.attempts for c in a.calls]
    assert any("12 / 60 = 0.25, but 12 / 60 is 0.2" in p for p in prompts)  # the retry was told
    assert not any(str(p.solution).splitlines()[0] in q for p in PROBLEMS for q in prompts)  # no gold
    report = vreact.report("runs/gsm8k")
    n, vg = report.configs["N"], report.configs["VG"]
    assert (report.family, n.correct, n.silent_error, vg.correct, vg.silent_error) == ("gsm8k", 3, 1, 4, 0)
    assert n.family_metrics == {"match": 0.75} and vg.family_metrics == {"match": 1.0}
    # every judged try was scored: the rejected 12.5 wrong, the retry right (a confirmed correction)
    assert (
        vg.confirmed_corrections["gate"] == 1 and vg.false_rejections["gate"] == 1
    )  # the sentence printed 5


@pytest.fixture
def server():
    with ScriptedServer(lambda body: write(body["messages"])) as s:
        yield s


def test_n_vg_and_agreement_against_a_loopback_server(server, tmp_path):
    out = tmp_path / "run"
    done = cli(
        "experiment", "gsm8k",
        *("--set", "models.default=openai/coder", "--set", f"base_url={server.base_url}"),
        *("--set", f"dataset.path={TRAIN}", "--set", "dataset.limit=3", "--set", "cache=false"),
        "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(cli("report", str(out), "--json").stdout)
    configs = report["configs"]
    assert list(configs) == ["N", "VG", "VG-agree-5"]
    assert configs["N"]["family_metrics"] == {"match": 0.667}
    assert configs["VG"]["family_metrics"] == {"match": 1.0}
    # five candidates, each its first try: on train/0 all print 72 and agree; on train/1 and
    # train/2 the scripted first program of every candidate is rejected by a gate, so nothing is
    # left to compare and the attempt abstains (fail closed)
    agreement = {
        a.task_id: (a.outcome, [v.decision for v in a.verdicts if v.check_name == "agreement"])
        for a in read_run(out).attempts
        if a.config == "VG-agree-5"
    }
    assert agreement == {
        "train/0": ("answer", ["accept"]),
        "train/1": ("abstain", ["reject"]),
        "train/2": ("abstain", ["reject"]),
    }


def test_candidates_agree_on_their_numbers():
    family = family_of("gsm8k")

    def printed(answer: str) -> Solution:
        return Solution("answer", "print(x)\n", answer=answer)

    candidates = {
        0: printed("72"),
        1: printed("72.0"),
        2: printed("71"),
        3: Solution("abstain", reason="no"),
        4: printed(""),
    }
    b = family.behaviours(PROBLEMS[0], candidates)
    assert b.of[0] == b.of[1] != b.of[2] and set(b.of) == {0, 1, 2}
    assert b.left_out == {3: "declined", 4: "printed no number"} and b.unavailable is None
    none = family.behaviours(PROBLEMS[0], {0: Solution("abstain", reason="no")})
    assert none.of == {} and none.unavailable == "no candidate printed a number"


def test_the_scorer_compares_numbers():
    family = family_of("gsm8k")
    first = PROBLEMS[0]  # #### 72
    assert [family.score(first, a, []).correct for a in ("72", "72.0", "$72", "71", "seventy-two")] == [
        True,
        True,
        True,
        False,
        False,
    ]
    assert family.score(first, None, []).correct is None


def test_the_probe_on_train_problems_rejects_no_gold_nor_control(tmp_path):
    out = tmp_path / "probe"
    done = cli(
        "probe", "--family", "gsm8k", "--dataset", str(TRAIN), "--limit", "12",
        "--out", str(out), "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    classes = {c["fault_class"]: c for c in report["classes"]}
    assert report["false_rejections"] == []
    built = 12 - sum(n for n in classes["gold"]["skipped"].values())
    assert classes["gold"]["escaped"] == classes["paraphrased"]["escaped"] == built > 0
    wrong = classes["arithmetic_wrong"]
    assert wrong["caught_by_gate"] == built and wrong["escaped"] == 0  # its claim is recomputed
    assert classes["sub_question"]["caught_by_gate"] == 0  # a consistent program: no free check sees it


def test_an_unfenced_program_that_prints_is_a_step_and_prose_is_none():
    from vreact.gsm8k.kit import parse_step

    run = parse_step("# run\ntotal = 48 + 48 / 2\nprint(total)")
    assert (run.action, run.input) == ("run", "# run\ntotal = 48 + 48 / 2\nprint(total)\n")
    assert parse_step("total = 48 + 48 / 2\nprint(total)").action == "finish"
    assert parse_step("# run\nNatalia sold clips to 48 of her friends.") is None  # prose, not Python
    assert parse_step("total = 72") is None  # prints nothing: no answer to read
    assert parse_step('```json\n{"answer": 120}\n```') is None  # JSON, not a step
