"""Every configuration switch that is accepted does what it says, alone and in any combination;
every switch that has no implementation yet is refused at validation."""

from __future__ import annotations

import itertools
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import attempt, by_role, finish, judged, plan, read, search
from vreact.cli import cli
from vreact.config import Configuration
from vreact.controller._try import pipeline_of
from vreact.records import Store
from vreact.spec import load_file

SWITCHES = ("planner", "guards", "gates", "judges")
COMBINATIONS = [dict(zip(SWITCHES, on, strict=True)) for on in itertools.product((False, True), repeat=4)]

# 2hop__269805_135710: "What is the country where Nissedal is located named after?"
# hop 1 -> Norway (paragraph 10), hop 2 -> north (paragraph 6)
NISSEDAL = "2hop__269805_135710"
PLAN = plan(
    ("s1", "Which country is Nissedal in?", [], "place"), ("s2", "What is #1 named after?", ["s1"], "any")
)


def scripts(planner: bool, repeats: int) -> dict[str, list]:
    """Scripts that reach every enabled component: the first (or only) subtask starts with
    ``repeats`` byte-identical searches (a guard stops the try there, and the next try goes on
    with the rest of the script; without guards the same try goes on), then every subtask
    finishes with an answer that passes every gate, so R1 and R3 (and the plan and R2) are
    reached; the judge accepts everything."""
    if planner:
        executor = [search("Nissedal country")] * repeats + [read("10"), finish("Norway", ["10"])]
        executor += [read("6"), finish("north", ["6"])]
    else:
        executor = [search("Nissedal named after")] * repeats
        executor += [read("10"), read("6"), finish("north", ["10", "6"])]
    return {"planner": [PLAN], "executor": executor, "judge": [judged()] * 10}


@pytest.fixture(scope="module")
def task(full_tasks):
    return next(t for t in full_tasks if t.id == NISSEDAL)


@pytest.mark.parametrize(
    "switches", COMBINATIONS, ids=lambda s: "+".join(k for k, v in s.items() if v) or "N"
)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stop_at=st.integers(2, 6), extra=st.integers(0, 2))
def test_each_accepted_switch_leaves_its_trace_and_no_other(
    switches, stop_at, extra, task, spec, verifiers, roles
):
    guard = {"guard": {"repeat_hint": 2, "repeat_stop": stop_at}} if switches["guards"] else {}
    config = Configuration(name="X", **switches, **guard, budgets={"step_cap": 12})
    model = by_role(**scripts(switches["planner"], stop_at + extra))
    with TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "vreact.db")
        _, row, _ = attempt(config, task, model, store, spec, verifiers, roles)
        vs = list(store.query("select * from verdicts order by seq"))
        calls = list(store.query("select role from model_calls"))
    assert (row["outcome"], row["answer"]) == ("answer", "north"), row
    sources = {v["source"] for v in vs}
    judged_levels = {v["level"] for v in vs if v["source"] == "judge"}
    judge_calls = sum(c["role"] == "judge" for c in calls)
    planner_calls = sum(c["role"] == "planner" for c in calls)

    assert (planner_calls == 1) is switches["planner"]
    assert ("gate" in sources) is switches["gates"]
    guard_stops = [v for v in vs if v["check_name"] == "repetition_guard"]
    assert bool(guard_stops) is switches["guards"]
    assert all(v["decision"] == "reject" and v["cause"] == "repeated_call" for v in guard_stops)
    if switches["gates"]:  # R1 and R3 gates each passed the answer (and the plan gates the plan)
        gated = {v["level"] for v in vs if v["source"] == "gate" and v["decision"] == "accept"}
        assert gated == ({"L1", "L2", "L3"} if switches["planner"] else {"L1", "L3"})
    if switches["judges"]:  # one judge call per verified artifact, the plan's too
        # single task: R1 and R3; planned: the plan, R1 twice, R2 and R3
        assert judge_calls == (5 if switches["planner"] else 2)
        assert judged_levels == ({"L1", "L2", "L3"} if switches["planner"] else {"L1", "L3"})
        names = {v["check_name"] for v in vs if v["source"] == "judge"}
        assert names == (
            {"plan_judge", "R1_judge", "R2_judge", "R3_judge"}
            if switches["planner"]
            else {
                "R1_judge",
                "R3_judge",
            }
        )
    else:
        assert judge_calls == 0 and "judge" not in sources
    if not any(switches[s] for s in ("guards", "gates", "judges")):
        assert vs == []  # N and NP: plain ReAct, nothing verifies


def test_a_judge_reject_without_gates_changes_the_outcome(task, spec, verifiers, roles, store):
    """judges alone are not dropped: a judge that rejects the only answer every time makes the
    attempt abstain, naming the level."""
    config = Configuration(name="J", judges=True, budgets={"r1": 2})
    model = by_role(executor=[read("6"), finish("north", ["6"])] * 2, judge=[judged("reject")] * 2)
    _, row, _ = attempt(config, task, model, store, spec, verifiers, roles)
    assert (row["outcome"], row["abstain_level"], row["abstain_cause"]) == (
        "abstain",
        "L3",
        "R1_judge:judge_reject",
    )


@pytest.mark.parametrize(("switch", "member"), [("critic", "Critic"), ("context_manager", "ContextManager")])
def test_the_dereact_switches_are_accepted_and_add_their_member(switch, member, tmp_path):
    """They were refused while not built (the trust issue); now each adds its pipeline member."""
    path = tmp_path / "exp.yaml"
    path.write_text(
        "kind: experiment\nname: x\ndataset: {path: sample}\nconfigurations:\n"
        f"  - name: D\n    {switch}: true\n"
    )
    [config] = load_file(path).configurations
    assert config.verified
    assert member in [type(m).__name__ for m in pipeline_of(config).members]
    assert CliRunner().invoke(cli, ["validate", str(path)]).exit_code == 0
