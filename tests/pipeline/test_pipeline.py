"""The executor's step pipeline: members from outside the package, named in an experiment
file; the outcomes (block, rollback, veto, hint, stop); a member that raises fails closed."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import vreact
from tests.conftest import FULL
from tests.fakes.scripted_server import ScriptedServer
from tests.helpers import attempt, search, solve
from vreact.cli import cli
from vreact.config import Configuration
from vreact.qa.tools import Corpus
from vreact.records import read_run

FEEDBACK = "searching for 'forbidden' is not allowed here; search other words"


@vreact.member("no_forbidden")
class NoForbidden(vreact.Member):
    """The toy member of the issue: blocks any search for "forbidden", with feedback."""

    def proposal(self, turn: vreact.Turn) -> vreact.StepOutcome:
        step = turn.step
        if step is not None and step.action == "search" and "forbidden" in step.input.lower():
            return vreact.block(FEEDBACK, cause="forbidden_search", detail=f"search {step.input!r}")
        return vreact.PASS


@vreact.member("explodes")
class Explodes(vreact.Member):
    def proposal(self, turn: vreact.Turn) -> vreact.StepOutcome:
        raise RuntimeError("a bug in a user's member")


def _executor_reply(body: dict) -> str:
    """Search for the forbidden word until told not to, then finish."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    if FEEDBACK in prompt:
        return json.dumps({"thought": "", "action": "finish", "input": "north", "evidence": []})
    return json.dumps({"thought": "", "action": "search", "input": "forbidden lore", "evidence": []})


def test_a_member_from_outside_named_in_an_experiment_file_blocks_the_tool(tmp_path, monkeypatch):
    searched: list[str] = []
    real_search = Corpus.search
    monkeypatch.setattr(Corpus, "search", lambda self, q, *a, **k: searched.append(q) or real_search(self, q))
    with ScriptedServer(_executor_reply) as server:
        path = tmp_path / "forbidden.yaml"
        experiment = {
            "kind": "experiment",
            "name": "forbidden",
            "dataset": {"path": str(FULL), "limit": 1},
            "configurations": [{"name": "VG-forbid", "gates": True, "pipeline": ["no_forbidden"]}],
            "models": {"default": "openai/scripted"},
            "base_url": server.base_url,
            "concurrency": 1,
        }
        path.write_text(json.dumps(experiment))  # YAML is a superset of JSON
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
        result = CliRunner().invoke(cli, ["experiment", str(path), "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    [a] = read_run(tmp_path / "run").attempts
    blocks = [v for v in a.verdicts if v.check_name == "no_forbidden"]
    assert blocks and all(
        (v.verifier, v.source, v.decision, v.cause) == ("guard", "guard", "reject", "forbidden_search")
        for v in blocks
    )
    blocked = [s for s in a.steps if s.action == "search"]
    assert blocked and all(s.observation == FEEDBACK for s in blocked)  # its feedback, not results
    assert searched == []  # the tool was never called


def test_a_member_that_raises_is_a_verifier_error_reject(task_nissedal, store, spec, verifiers, roles):
    config = Configuration(name="VG", gates=True, pipeline=["explodes"])
    outcome, row, _ = attempt(config, task_nissedal, [search("x")] * 3, store, spec, verifiers, roles)
    vs = list(store.query("select * from verdicts where attempt_id = ?", [row["id"]]))
    assert {(v["verifier"], v["check_name"], v["cause"]) for v in vs} == {
        ("guard", "explodes", "verifier_error")
    }
    assert "RuntimeError: a bug in a user's member" in vs[0]["detail"]
    assert (outcome.kind, outcome.level, outcome.cause) == ("abstain", "L3", "explodes:verifier_error")


def test_an_unknown_member_is_a_one_line_error_naming_the_closest():
    with pytest.raises(ValueError, match="did you mean 'no_forbidden'"):
        Configuration(name="x", pipeline=["no_forbiden"])


@vreact.member("second_thoughts")
class SecondThoughts(vreact.Member):
    """Rolls back the first search of a try, vetoes the first finish, hints on reads."""

    def __init__(self) -> None:
        self.rolled = self.vetoed = False

    def proposal(self, turn: vreact.Turn) -> vreact.StepOutcome:
        if turn.step is not None and turn.step.action == "search" and not self.rolled:
            self.rolled = True
            return vreact.rollback("think again before searching", cause="rolled_back", detail="first search")
        return vreact.PASS

    def result(self, turn: vreact.Turn) -> vreact.StepOutcome:
        if turn.step is not None and turn.step.action == "finish" and not self.vetoed:
            self.vetoed = True
            return vreact.veto("check the answer once more", cause="vetoed", detail="first finish")
        if turn.step is not None and turn.step.action == "read":
            return vreact.hint("(read noted)")
        return vreact.PASS


def test_rollback_veto_and_hint(task_nissedal, store, spec, verifiers, roles):
    steps = solve(task_nissedal)
    script = [steps[0], *steps, steps[-1]]  # the first search is rolled back, the first finish vetoed
    config = Configuration(name="VG", gates=True, pipeline=["second_thoughts"])
    outcome, row, model = attempt(config, task_nissedal, script, store, spec, verifiers, roles)
    assert outcome.kind == "answer"
    run_steps = list(store.query("select * from steps where attempt_id = ? order by id", [row["id"]]))
    # the rolled-back search is not a step of the try: the re-ask says why, and indexes go on from 0
    assert [s["step"] for s in run_steps] == list(range(len(steps) + 1))
    assert model.calls[1][-1]["content"] == "think again before searching"
    reads = [s for s in run_steps if s["action"] == "read"]
    assert reads and all(s["observation"].endswith("\n(read noted)") for s in reads)
    finishes = [s for s in run_steps if s["action"] == "finish"]
    assert finishes[0]["observation"] == "check the answer once more" and finishes[1]["observation"] == ""
    causes = [v["cause"] for v in store.query("select * from verdicts where check_name = 'second_thoughts'")]
    assert causes == ["vetoed"]  # the rollback and the hints are events, never verdicts
    events = [(e["kind"], e["detail"]) for e in store.query("select * from events order by id")]
    assert events[0] == ("rollback", "think again before searching")
    assert events[1:] == [("hint", "(read noted)")] * len(reads)


def test_the_built_in_members_are_registered():
    assert {"parses", "repetition_guard"} <= set(vreact.member_names())
