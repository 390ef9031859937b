"""DeReAct on the step pipeline (seed 000, Algorithm 1), with mock models per role: the critic
blocks before anything runs, the context manager keeps an evidence-only State and certifies or
vetoes a final, and the brain sees the State and a window of its raw steps."""

from __future__ import annotations

import pytest

from tests.helpers import attempt, by_role, criticised, finish, managed, read, search
from vreact.config import Configuration
from vreact.pipeline import window
from vreact.qa.tools import Corpus
from vreact.records import read_run
from vreact.report import compute

DEREACT = Configuration(name="dereact", critic=True, context_manager=True, budgets={"r1": 1})
CRITIC = Configuration(name="ablation_b", critic=True, budgets={"r1": 1})
CM = Configuration(name="ablation_a", context_manager=True, budgets={"r1": 1})


@pytest.fixture
def searched(monkeypatch):
    calls: list[str] = []
    real = Corpus.search
    monkeypatch.setattr(Corpus, "search", lambda self, q, *a, **k: calls.append(q) or real(self, q))
    return calls


def verdicts(store, check):
    return list(store.query("select * from verdicts where check_name = ? order by seq", [check]))


def test_a_critic_reject_runs_nothing_spends_a_step_and_says_why(
    task_nissedal, store, spec, verifiers, roles, searched
):
    model = by_role(
        executor=[search("bad idea"), read("6"), finish("north", ["6"])],
        critic=[criticised("reject", 0.9, "search for Nissedal instead"), criticised(), criticised()],
    )
    outcome, row, model = attempt(CRITIC, task_nissedal, model, store, spec, verifiers, roles)
    assert searched == []  # the rejected search never ran
    [reject] = [v for v in verdicts(store, "critic") if v["decision"] == "reject"]
    assert (reject["verifier"], reject["source"], reject["level"], reject["cause"]) == (
        "critic",
        "judge",
        "L3",
        "critic_reject",
    )
    assert reject["budget_left"] == 40 - 1  # the attempt's steps: the blocked step was spent
    steps = list(store.query("select * from steps where attempt_id = ? order by id", [row["id"]]))
    assert steps[0]["observation"] == "critic: search for Nissedal instead" and steps[0]["step"] == 0
    executor_prompts = [m for m in model.calls if m[0]["content"].startswith("You answer")]
    assert "critic: search for Nissedal instead" in executor_prompts[1][-1]["content"]
    # the critic also authorised the read and the finish
    assert [v["decision"] for v in verdicts(store, "critic")] == ["reject", "accept", "accept"]
    assert outcome.kind == "answer"


@pytest.mark.parametrize(
    ("reply", "cause"),
    [(criticised("accept", 0.5), "low_confidence"), ("I think it is fine", "critic_format")],
)
def test_low_confidence_and_unreadable_critic_output_reject(
    reply, cause, task_nissedal, store, spec, verifiers, roles, searched
):
    model = by_role(executor=[search("Nissedal"), abstain_step()], critic=[reply, criticised()])
    attempt(CRITIC, task_nissedal, model, store, spec, verifiers, roles)
    assert [v["cause"] for v in verdicts(store, "critic") if v["decision"] == "reject"] == [cause]
    assert searched == []


def abstain_step():
    return {"thought": "", "action": "abstain", "input": "not found", "evidence": []}


def test_a_cm_veto_then_a_certified_finish(task_nissedal, store, spec, verifiers, roles):
    model = by_role(
        executor=[read("6"), finish("Norway", ["6"]), read("10"), finish("north", ["6", "10"])],
        context_manager=[
            managed("continue", [("Norway is named after the north", ["6"])]),
            managed("continue", [("Norway is named after the north", ["6"])], "the answer is not Norway"),
            managed(
                "continue", [("Norway is named after the north", ["6"]), ("Nissedal is in Norway", ["10"])]
            ),
            managed(
                "success", [("Norway is named after the north", ["6"]), ("Nissedal is in Norway", ["10"])]
            ),
        ],
    )
    outcome, row, _ = attempt(CM, task_nissedal, model, store, spec, verifiers, roles)
    assert (outcome.kind, outcome.answer) == ("answer", "north")
    cm = verdicts(store, "context_manager")
    assert [(v["decision"], v["cause"], v["level"]) for v in cm] == [
        ("reject", "cm_continue", "L1"),
        ("accept", "", "L1"),
    ]
    steps = list(store.query("select * from steps where attempt_id = ? order by id", [row["id"]]))
    assert steps[1]["observation"] == "continue: the answer is not Norway"  # the veto's reason


def test_an_ungrounded_state_is_rejected_and_the_old_one_kept(task_nissedal, store, spec, verifiers, roles):
    good = [("Norway is named after the north", ["6"])]
    model = by_role(
        executor=[read("6"), search("Nissedal"), finish("north", ["6"]), finish("north", ["6", "10"])],
        context_manager=[
            managed("continue", good),
            managed("continue", [("made up", ["17"])]),  # 17 was never retrieved
            managed("success", [("made up", ["17"])]),
            managed("success", good),
        ],
    )
    outcome, _, model = attempt(CM, task_nissedal, model, store, spec, verifiers, roles)
    gate = verdicts(store, "state_grounded")
    assert [(v["source"], v["cause"]) for v in gate] == [("gate", "state_ungrounded")] * 2
    vetoes = [v for v in verdicts(store, "context_manager") if v["decision"] == "reject"]
    assert [v["cause"] for v in vetoes] == ["state_ungrounded"]  # the success that came with it
    # the brain's prompts hold the latest grounded State only, never the made-up fact
    executor_prompts = [
        "\n".join(c["content"] for c in m) for m in model.calls if m[0]["content"].startswith("You answer")
    ]
    assert all("made up" not in p for p in executor_prompts)
    assert "- Norway is named after the north [6]" in executor_prompts[-1]
    assert outcome.kind == "answer"
    # the report's veto rate counts the CM's decisions on finals, not its State gate's rejects
    rates = compute(store).configs["ablation_a"].dereact
    assert rates is not None and (rates.finals, rates.vetoes, rates.veto_rate) == (2, 1, 0.5)


def test_the_brain_prompt_holds_only_the_latest_state(task_nissedal, store, spec, verifiers, roles):
    model = by_role(
        executor=[read("6"), read("10"), abstain_step()],
        context_manager=[
            managed("continue", [("first fact", ["6"])]),
            managed("continue", [("second fact", ["10"])]),
            managed("success", [("second fact", ["10"])]),
        ],
    )
    _, _, model = attempt(CM, task_nissedal, model, store, spec, verifiers, roles)
    last = [m for m in model.calls if m[0]["content"].startswith("You answer")][-1][-1]["content"]
    assert "- second fact [10]" in last and "first fact" not in last


def test_the_window_keeps_the_first_m_and_last_w_minus_m_steps():
    history = [(f"t{i}", f"o{i}") for i in range(40)]
    kept = window(history, 25, 5)
    assert kept == history[:5] + history[-20:]
    assert window(history[:25], 25, 5) == history[:25]


def test_the_brain_sees_the_window_the_critic_and_cm_never_do(task_nissedal, store, spec, verifiers, roles):
    config = DEREACT.model_copy(
        update={"dereact": DEREACT.dereact.model_copy(update={"window": 3, "initial": 1})}
    )
    searches = [search(f"query{i}") for i in range(5)]
    model = by_role(
        executor=[*searches, abstain_step()],
        critic=[criticised()] * 6,
        context_manager=[managed("continue")] * 5 + [managed("success")],
    )
    attempt(config, task_nissedal, model, store, spec, verifiers, roles)
    [a] = read_run(store).attempts
    brain = [c for c in a.calls if c.role == "executor"][-1].messages[-1]["content"]
    assert '"query0"' in brain and '"query3"' in brain and '"query4"' in brain
    assert '"query1"' not in brain and '"query2"' not in brain  # the middle is trimmed
    for c in a.calls:
        if c.role in ("critic", "context_manager"):
            assert "Your steps so far" not in c.messages[-1]["content"]
