"""A reply that stopped at its token allowance fails closed, whatever it parses as: the
executor's stops its try at the parse gate with cause ``truncated`` (a verdict where the run
verifies, the abstention's cause in N), a judge's rejects, a planner's is no plan; each call
records why its reply stopped (``model_calls.stop_reason``) and the report counts the cut ones
by role. A scripted ``Completion`` stands for the provider's reply (the loopback server's
``finish_reason: length`` is tests/model/test_stop_reason.py's)."""

from __future__ import annotations

import json

import pytest

from tests.helpers import attempt, by_role, finish, judged, plan, read, report_of, verdicts
from vreact.config import Configuration
from vreact.model import Completion
from vreact.spec import builtin_configs

CONFIGS = builtin_configs()
N, NP, VG, VPG = CONFIGS["N"], CONFIGS["NP"], CONFIGS["VG"], CONFIGS["VPG"]
VGJ = Configuration(name="VGJ", guards=True, gates=True, judges=True)
WHOLE = [read("10"), read("6"), finish("north", ["10", "6"])]
GOOD_PLAN = plan(
    ("s1", "Which country is Nissedal in?", [], "place"), ("s2", "What is #1 named after?", ["s1"], "any")
)


def cut(reply: object, reason: str = "length") -> Completion:
    """``reply`` as a provider gives a reply stopped at its allowance (complete as it reads)."""
    return Completion(reply if isinstance(reply, str) else json.dumps(reply), 10, 10, stop_reason=reason)


@pytest.fixture
def run(store, spec, verifiers, roles, task_nissedal):
    def go(config, model):
        return attempt(config, task_nissedal, model, store, spec, verifiers, roles)

    return go


def calls(store, attempt_id: int) -> list[tuple[str, str | None]]:
    rows = store.query(
        "select role, stop_reason from model_calls where attempt_id = ? order by id", [attempt_id]
    )
    return [(r["role"], r["stop_reason"]) for r in rows]


def rejection(store, attempt_id: int) -> dict:
    """The attempt's one rejecting verdict."""
    [rejected] = [v for v in verdicts(store, attempt_id) if v["decision"] == "reject"]
    return rejected


def test_in_n_a_truncated_finish_is_no_answer_but_an_abstention_saying_why(run, store):
    model = by_role(executor=[read("10"), read("6"), cut(finish("north", ["10", "6"]))])
    _, row, _ = run(N, model)
    assert (row["outcome"], row["abstain_level"], row["abstain_cause"]) == ("abstain", "cap", "truncated")
    assert calls(store, row["id"])[-1] == ("executor", "length")
    assert verdicts(store, row["id"]) == []  # N verifies nothing
    [step] = store.query(
        "select action, observation from steps where attempt_id = ? and step = 2", [row["id"]]
    )
    assert step["observation"] == "rejected by the parses gate (truncated)"
    report = report_of(store)["configs"]["N"]
    assert report["truncated"] == {"executor": 1} and report["format_failures"] == 0


def test_in_vg_it_is_the_parses_gates_rejection_and_the_retry_answers(run, store):
    model = by_role(executor=[read("10"), read("6"), cut(finish("north", ["10", "6"]), "max_tokens"), *WHOLE])
    _, row, _ = run(VG, model)
    assert (row["outcome"], row["answer"]) == ("answer", "north")
    rejected = rejection(store, row["id"])
    assert (rejected["verifier"], rejected["check_name"], rejected["cause"]) == (
        "R1",
        "parses",
        "truncated",
    )
    assert "'max_tokens'" in rejected["detail"]
    assert [r for _, r in calls(store, row["id"])].count("max_tokens") == 1


def test_every_try_truncated_abstains_at_l3_naming_it(run, store):
    model = by_role(executor=lambda m: cut(finish("north", ["10", "6"])))
    _, row, _ = run(VG, model)
    assert (row["outcome"], row["abstain_level"], row["abstain_cause"]) == (
        "abstain",
        "L3",
        "parses:truncated",
    )


def test_a_truncated_judge_reply_rejects(run, store):
    model = by_role(executor=WHOLE * 2, judge=[cut(judged()), judged(), judged()])
    _, row, _ = run(VGJ, model)
    assert (row["outcome"], row["answer"]) == ("answer", "north")
    rejected = rejection(store, row["id"])
    assert (rejected["source"], rejected["cause"]) == ("judge", "truncated")
    assert ("judge", "length") in calls(store, row["id"])


def test_a_truncated_plan_is_no_plan(run, store):
    # VPG: the plan verifier's rejection, then the next plan; NP: dropped without a verdict
    hop1 = [read("10"), finish("Norway", ["10"])]
    hop2 = [read("6"), finish("north", ["6"])]
    model = by_role(planner=[cut(GOOD_PLAN), GOOD_PLAN], executor=hop1 + hop2)
    _, row, _ = run(VPG, model)
    assert (row["outcome"], row["answer"]) == ("answer", "north")
    rejected = rejection(store, row["id"])
    assert (rejected["verifier"], rejected["check_name"], rejected["cause"]) == (
        "plan",
        "parses",
        "truncated",
    )
    model = by_role(planner=[cut(GOOD_PLAN), GOOD_PLAN], executor=hop1 + hop2)
    _, row, _ = run(NP, model)
    assert (row["outcome"], row["answer"], row["plan_fallback"]) == ("answer", "north", 0)
    assert verdicts(store, row["id"]) == []
