"""DeReAct on code, in the real sandbox, with a scripted ``mock/`` model and through a loopback
OpenAI-compatible server (experiments/code.yaml's ``dereact``): the critic blocks a run that
reaches for the network before it runs, the context manager vetoes a finish no run has shown on
the prompt's examples, then certifies the finish after one has; the report gives both rates."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import vreact
from tests.fakes.scripted_server import ScriptedServer
from vreact.code.data import SHIPPED, read_problems
from vreact.code.dereact import CM_SYSTEM, CRITIC_SYSTEM
from vreact.model import MockModel
from vreact.records import read_run

[PROBLEM] = read_problems(SHIPPED, 1)  # HumanEval/0, has_close_elements
RIGHT = PROBLEM.prompt + str(PROBLEM.canonical_solution)
NETWORK = "# run\nimport socket\nsocket.create_connection(('example.com', 80))\n"
TRIED = f"# run\n{RIGHT}\nprint(has_close_elements([1.0, 2.0, 3.0], 0.5))\n"


def fenced(code: str) -> str:
    return f"```python\n{code}```"


def scripted(credulous: bool = False) -> Callable[[list[dict[str, Any]]], str]:
    """The executor reaches for the network, then finishes untried, then runs the examples, then
    finishes; the critic rejects code that imports socket; the context manager certifies a finish
    only once a run is among its facts."""
    executor = iter([NETWORK, RIGHT, TRIED, RIGHT])

    def reply(messages: list[dict[str, Any]]) -> str:
        system, user = messages[0]["content"], messages[-1]["content"]
        if system == CRITIC_SYSTEM:
            blocked = "import socket" in user
            decision = {"decision": "reject" if blocked else "accept", "confidence": 0.9}
            return json.dumps({**decision, "feedback": "no network" if blocked else ""})
        if system == CM_SYSTEM:
            facts = json.loads(user.split("Verified facts so far: ", 1)[1].split("\n", 1)[0])
            if "Step: finish" in user:
                done = "success" if facts or credulous else "continue"
                return json.dumps({"status": done, "state": facts, "reason": "run the examples first"})
            fact = {"fact": "has_close_elements([1.0, 2.0, 3.0], 0.5) printed False", "runs": ["r1"]}
            return json.dumps({"status": "continue", "state": [*facts, fact], "reason": ""})
        return fenced(next(executor))

    return reply


@pytest.mark.parametrize("through", ["mock", "server"])
def test_the_critic_blocks_the_network_and_the_context_manager_vetoes_an_untried_finish(through, tmp_path):
    reply = scripted()
    with ScriptedServer(lambda body: reply(body["messages"])) as server:
        shipped = vreact.load_experiment("code")
        update = {
            "configurations": [c for c in shipped.configurations if c.name == "dereact"],
            "dataset": shipped.dataset.model_copy(update={"limit": 1}),
            "models": {"default": "openai/scripted"},
            "base_url": server.base_url,
            "cache": False,
        }
        experiment = vreact.resolve(shipped.model_copy(update=update))
        if through == "mock":
            experiment.models["default"] = MockModel(reply)
        vreact.run_experiment(experiment, tmp_path / "run")
    [attempt] = read_run(tmp_path / "run").attempts
    assert attempt.outcome == "answer" and attempt.score is not None and attempt.score.correct
    critic = [(v.decision, v.cause) for v in attempt.verdicts if v.verifier == "critic"]
    assert critic[0] == ("reject", "critic_reject") and all(d == "accept" for d, _ in critic[1:])
    # the blocked run never reached the sandbox: its observation is the critic's feedback, and
    # the examples' run that came after is the first the sandbox numbered
    blocked, vetoed, tried, _ = attempt.steps
    assert (blocked.action, blocked.observation) == ("run", "critic: no network")
    assert (vetoed.action, vetoed.observation) == ("finish", "continue: run the examples first")
    assert tried.action == "run" and tried.observation.startswith("[r1] output:\nFalse")
    rates = vreact.report(tmp_path / "run").configs["dereact"].dereact
    assert rates is not None
    assert (rates.critic_rejections, rates.proposals) == (1, 4)
    assert (rates.vetoes, rates.finals) == (1, 2)


def test_a_context_manager_that_certifies_an_untried_finish_is_overruled(tmp_path):
    """The completion veto does not rest on the model's word: with no fact in the State (no run
    has shown anything), a finish the context manager certifies is still vetoed."""
    reply = scripted(credulous=True)
    shipped = vreact.load_experiment("code")
    update = {
        "configurations": [c for c in shipped.configurations if c.name == "dereact"],
        "dataset": shipped.dataset.model_copy(update={"limit": 1}),
        "models": {"default": "openai/unused"},
        "base_url": "http://127.0.0.1:9/v1",
        "cache": False,
    }
    experiment = vreact.resolve(shipped.model_copy(update=update))
    experiment.models["default"] = MockModel(reply)
    vreact.run_experiment(experiment, tmp_path / "run")
    [attempt] = read_run(tmp_path / "run").attempts
    assert attempt.outcome == "answer" and attempt.score is not None and attempt.score.correct
    _, vetoed, tried, certified = attempt.steps
    assert vetoed.observation == "continue: nothing has been shown yet; try it first"
    assert tried.action == "run" and certified.action == "finish" and certified.observation == ""


def test_the_code_context_manager_names_what_a_fact_cites_runs():
    """Its schema and prompt ask for ``runs``, read as the State's ``cites``; the State's own name,
    or qa's, cites nothing there (the State's gate rejects such a fact as ungrounded)."""
    from vreact.code.dereact import CONTEXT_MANAGER

    facts = CONTEXT_MANAGER.schema["properties"]["state"]["items"]
    assert list(facts["properties"]) == ["fact", "runs"] and facts["required"] == ["fact", "runs"]
    assert '"runs": ["r1"]' in CM_SYSTEM and "paragraph" not in CM_SYSTEM
    for name, cites in (("runs", ["r1"]), ("cites", []), ("paragraph_ids", [])):
        reply = {"status": "continue", "state": [{"fact": "f", name: ["r1"]}], "reason": ""}
        update = CONTEXT_MANAGER.parse(json.dumps(reply))
        assert update is not None and update.state[0].cites == cites, name
