"""Question answering's majority agreement, through real HTTP to a loopback OpenAI-compatible
server whose executor answers by the seed each request carries (candidate i: the attempt's seed
+ i): with the gates off (every candidate compared) and on (R1's gates filter first, and a
rejected candidate counts against), and best of k by gate on the same candidates."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.fakes.scripted_server import ScriptedServer
from tests.helpers import abstain, finish, solve
from vreact import load_experiment, resolve, run_experiment
from vreact.config import Configuration
from vreact.qa.dataset import Task
from vreact.records import read_run

DECLINE = "<decline>"


def served(task: Task, answers: list[str | None]) -> tuple[ScriptedServer, dict[int, Any]]:
    """A server whose candidate i solves ``task`` answering ``answers[i]`` (None: it finishes
    at once with no evidence read, which R1's gates reject; DECLINE: it abstains at once)."""
    steps: dict[int, Iterator[dict[str, Any]]] = {}

    def reply(body: dict[str, Any]) -> str:
        i = int(body.get("seed") or 0)
        if i not in steps:
            a = answers[i]
            steps[i] = iter(
                [finish("nothing", ["0"])]
                if a is None
                else [abstain("not found")]
                if a == DECLINE
                else solve(task, a)
            )
        return json.dumps(next(steps[i]))

    return ScriptedServer(reply), steps


def run(tmp_path: Path, task: Task, answers: list[str | None], **config: Any) -> Any:
    exp = load_experiment("pilot")
    configuration = Configuration.model_validate({"name": "K", **config})
    with served(task, answers)[0] as server:
        update = {
            "models": {"default": "openai/scripted"},
            "base_url": server.base_url,
            "cache": False,
            "seed": 0,
            "attempts": 1,
            "configurations": [configuration],
        }
        experiment = resolve(exp.model_copy(update=update), tasks=[task])
        run_experiment(experiment, tmp_path / config.get("name", "K"))
        requests = list(server.requests)
    [attempt] = read_run(tmp_path / "K").attempts
    return attempt, requests


def test_majority_with_the_gates_off_compares_every_candidate(tmp_path, task_nissedal):
    gold = task_nissedal.answer
    a, requests = run(tmp_path, task_nissedal, [gold, "Oslo", gold.upper() + ".", None], agreement={"k": 4})
    assert a.outcome == "answer" and a.answer == gold
    g = a.agreement
    # no gate: the empty-handed candidate's answer is compared too (and stands alone)
    assert g.candidates == {"0": "answer", "1": "answer", "2": "answer", "3": "answer"}
    assert [x["members"] for x in g.groups] == [[0, 2], [1], [3]]
    assert sorted({r["seed"] for r in requests}) == [0, 1, 2, 3]
    assert not any(c.role == "tester" for c in a.calls)  # question answering has no tester


def test_majority_with_the_gates_on_counts_a_rejected_candidate_against(tmp_path, task_nissedal):
    gold = task_nissedal.answer
    answers = [gold, None, None, "Oslo"]
    a, _ = run(tmp_path, task_nissedal, answers, gates=True, agreement={"k": 4, "tau": 0.5})
    assert a.agreement.candidates["1"] == "rejected" and a.agreement.candidates["2"] == "rejected"
    # the largest group is one candidate of four: no agreement, an abstention naming L1
    assert a.outcome == "abstain" and a.abstain_level == "L1" and a.abstain_cause == "agreement:no_agreement"
    a, _ = run(tmp_path / "2", task_nissedal, [gold, None, gold, "Oslo"], gates=True, agreement={"k": 4})
    assert a.outcome == "answer" and a.answer == gold and a.agreement.groups[0]["members"] == [0, 2]


def test_best_of_k_by_gate_takes_the_first_that_passes(tmp_path, task_nissedal):
    answers = [None, "Oslo", task_nissedal.answer, task_nissedal.answer]
    a, requests = run(tmp_path, task_nissedal, answers, gates=True, agreement={"k": 4, "select": "first"})
    assert a.outcome == "answer" and a.answer == task_nissedal.answer
    assert a.agreement.candidates == {"0": "rejected", "1": "rejected", "2": "answer"}
    assert a.agreement.chosen == 2 and a.agreement.groups == []  # nothing grouped
    causes = [v.cause for v in a.verdicts if v.decision == "reject"]
    assert causes == ["evidence_not_retrieved", "unsupported"]  # R1's, one per candidate
    assert 3 not in {r["seed"] for r in requests}  # made only until one passed


def test_candidates_that_all_decline_end_as_a_decline_does(tmp_path, task_nissedal):
    """As VG's: R3 allows declining (the musique spec), so the attempt ends declined."""
    a, _ = run(tmp_path, task_nissedal, [DECLINE, None, DECLINE], gates=True, agreement={"k": 3})
    assert a.outcome == "abstain" and a.abstain_level == "declined"
    assert a.agreement.candidates == {"0": "declined", "1": "rejected", "2": "declined"}
    assert (a.agreement.chosen, a.agreement.cause) == (0, None)
    b, _ = run(
        tmp_path / "b", task_nissedal, [None, DECLINE], gates=True, agreement={"k": 2, "select": "first"}
    )
    assert b.outcome == "abstain" and b.abstain_level == "declined" and b.agreement.chosen == 1


def test_a_budget_spent_among_the_candidates_keeps_what_was_made(tmp_path, task_nissedal):
    gold = task_nissedal.answer
    a, _ = run(tmp_path, task_nissedal, [gold, gold, gold], agreement={"k": 3}, budgets={"steps": 6})
    assert a.outcome == "abstain" and a.abstain_level == "L3"  # a verified attempt: the budget names L3
    assert a.agreement.cause == "budget" and a.agreement.candidates["0"] == "answer"
