"""The whole V with a scripted mock model on a real 2-hop MuSiQue record: planner and plan
gates (L2), step design (L3), R1, R2, R3, judges, routing and budgets."""

from __future__ import annotations

import json

import pytest

from tests.helpers import attempt, by_role, finish, judged, plan, read, report_of, role_of, search, verdicts
from vreact.config import CallSettings, Configuration
from vreact.model import GenerateSettings
from vreact.spec import builtin_configs

CONFIGS = builtin_configs()
VPG, VPGJ, NP = CONFIGS["VPG"], CONFIGS["VPGJ"], CONFIGS["NP"]
VGJ = Configuration(name="VGJ", guards=True, gates=True, judges=True)

# 2hop__269805_135710: "What is the country where Nissedal is located named after?"
# hop 1 "Nissedal >> country" -> Norway (paragraph 10, Tveitsund); hop 2 -> north (paragraph 6, Norway)
GOOD_PLAN = plan(
    ("s1", "Which country is Nissedal in?", [], "place"), ("s2", "What is #1 named after?", ["s1"], "any")
)
HOP1 = [search("Nissedal country"), read("10"), finish("Norway", ["10"])]
HOP2 = [read("6"), finish("north", ["6"])]
# the whole question in one try: both hops' paragraphs cited (R3's multi_hop gate wants 2)
WHOLE = [read("10"), read("6"), finish("north", ["10", "6"])]


@pytest.fixture
def task(full_tasks):
    return next(t for t in full_tasks if t.id == "2hop__269805_135710")


@pytest.fixture
def run(store, spec, verifiers, roles):
    def go(config, task, model):
        return attempt(config, task, model, store, spec, verifiers, roles)

    return go


def test_vpg_plans_executes_each_subtask_and_passes_r2_and_r3(run, task, store):
    model = by_role(planner=[GOOD_PLAN], executor=HOP1 + HOP2)
    _, row, _ = run(VPG, task, model)
    assert (row["outcome"], row["answer"], json.loads(row["evidence"])) == ("answer", "north", ["10", "6"])
    vs = verdicts(store, row["id"])
    assert {v["decision"] for v in vs} == {"accept"}
    seen = {(v["level"], v["component"]) for v in vs}
    assert seen == {("L2", "planner"), ("L3", "executor.p1.s1"), ("L3", "executor.p1.s2"), ("L1", "answer")}
    assert {v["check_name"] for v in vs if v["level"] == "L2"} >= {"plan_dag", "chain_bridges", "chain_final"}
    # the second subtask's objective had the first answer substituted in
    s2_prompt = [c for c in model.calls if role_of(c) == "executor"][3]
    assert "Question: What is Norway named after?" in s2_prompt[1]["content"]


def test_r1_judge_reject_then_new_try_is_a_judge_correction(run, task, store):
    first_try = [read("10"), read("6"), finish("the north", ["10", "6"])]  # differs from the second
    model = by_role(
        executor=first_try + WHOLE, judge=[judged("reject", reason="thin evidence"), judged(), judged()]
    )
    _, row, _ = run(VGJ, task, model)
    assert (row["outcome"], row["answer"]) == ("answer", "north")
    [failure] = store.failures(row["id"])
    assert (failure["source"], failure["cause"], failure["detail"]) == (
        "judge",
        "judge_reject",
        "thin evidence",
    )
    report = report_of(store)["configs"]["VGJ"]
    assert report["corrections"]["judge"] == 1 and report["rejections"]["judge"] == 1


def test_unparseable_or_unsure_judge_output_is_a_reject(run, task, store):
    model = by_role(
        executor=WHOLE * 3, judge=["I think it is fine", judged(confidence=0.4), judged(), judged()]
    )
    _, row, _ = run(VGJ, task, model)
    assert row["outcome"] == "answer"
    causes = [f["cause"] for f in store.failures(row["id"])]
    assert causes == ["judge_format", "low_confidence"]


def test_r2_reject_goes_back_to_the_planner_and_the_new_plan_is_accepted(run, task, store):
    # plan 1: s1 answers "Tveitsund" (supported), but s2's evidence never mentions it
    bad_hop1 = [search("Nissedal"), read("10"), finish("Tveitsund", ["10"])]
    model = by_role(planner=[GOOD_PLAN, GOOD_PLAN], executor=bad_hop1 + HOP2 + HOP1 + HOP2)
    _, row, _ = run(VPG, task, model)
    assert (row["outcome"], row["answer"]) == ("answer", "north")
    [failure] = store.failures(row["id"])
    assert (failure["level"], failure["component"], failure["cause"]) == ("L2", "planner", "bridge_missing")
    # the planner's second prompt carries the R2 failure (a cause, not a transcript)
    second_plan_prompt = [c for c in model.calls if role_of(c) == "planner"][1][1]["content"]
    assert "bridge_missing" in second_plan_prompt and "Tveitsund is a village" not in second_plan_prompt
    components = {v["component"] for v in verdicts(store, row["id"])}
    assert {"executor.p1.s1", "executor.p2.s1"} <= components  # a new plan's subtasks are new components
    assert report_of(store)["configs"]["VPG"]["corrections"]["gate"] >= 1


def test_r2_budget_spent_abstains_naming_l2(run, task, store):
    bad_hop1 = [search("Nissedal"), read("10"), finish("Tveitsund", ["10"])]
    model = by_role(planner=[GOOD_PLAN] * 3, executor=(bad_hop1 + HOP2) * 3)
    _, row, _ = run(VPG, task, model)
    assert (row["outcome"], row["abstain_level"], row["abstain_component"]) == ("abstain", "L2", "planner")
    assert row["abstain_cause"] == "chain_bridges:bridge_missing"


def test_plan_budget_spent_falls_back_to_a_single_task(run, task, store):
    cyclic = plan(("s1", "Where is #2?", ["s2"], "place"), ("s2", "What is #1 named after?", ["s1"], "any"))
    model = by_role(
        planner=["no plan, sorry", cyclic, plan(("s1", "x", [], "any"), ("s2", "y", [], "any"))],
        executor=WHOLE,
    )
    _, row, _ = run(VPG, task, model)
    assert (row["outcome"], row["answer"], row["plan_fallback"]) == ("answer", "north", 1)
    causes = [f["cause"] for f in store.failures(row["id"])]
    assert causes[:2] == ["format", "dangling_reference"] or causes[:2] == ["format", "order"]
    assert len(causes) == 3 and all(f["component"] == "planner" for f in store.failures(row["id"]))
    executor_prompts = [c for c in model.calls if role_of(c) == "executor"]
    assert executor_prompts[0][1]["content"].startswith(f"Question: {task.question}")


def test_r3_budget_spent_with_a_planner_abstains_naming_l1(run, full_tasks, store):
    task = next(t for t in full_tasks if t.answerable and t.question.lower().startswith("when"))
    pid = str(task.question_decomposition[-1].paragraph_support_idx)
    word = next(w for w in task.paragraphs[int(pid)].paragraph_text.split() if w.isalpha() and len(w) > 5)
    one_step = plan(("s1", task.question, [], "date"))
    model = by_role(planner=[one_step] * 3, executor=[read(pid), finish(word, [pid])] * 3)
    _, row, _ = run(VPG, task, model)
    assert (row["outcome"], row["abstain_level"], row["abstain_component"]) == ("abstain", "L1", "answer")
    assert [v["budget_left"] for v in verdicts(store, row["id"]) if v["decision"] == "reject"] == [1, 0, 0]


def test_np_runs_the_plan_without_verdicts(run, task, store):
    model = by_role(planner=[GOOD_PLAN], executor=HOP1 + HOP2)
    _, row, _ = run(NP, task, model)
    assert (row["outcome"], row["answer"]) == ("answer", "north")
    assert verdicts(store, row["id"]) == []


def test_vpgj_judges_only_what_gates_cleared(run, task, store):
    model = by_role(planner=[GOOD_PLAN], executor=HOP1 + HOP2, judge=[judged()] * 5)
    _, row, _ = run(VPGJ, task, model)
    assert row["outcome"] == "answer"
    vs = verdicts(store, row["id"])
    judge_verdicts = [v for v in vs if v["source"] == "judge"]
    assert [v["check_name"] for v in judge_verdicts] == [
        "plan_judge",
        "R1_judge",
        "R1_judge",
        "R2_judge",
        "R3_judge",
    ]
    calls = list(store.query("select role from model_calls where attempt_id = ?", [row["id"]]))
    assert [c["role"] for c in calls].count("judge") == 5


def test_np_takes_an_empty_plan_as_no_plan(run, task, store):
    """Without plan gates nothing rejects a plan of no subtasks: it falls back to the single
    task (it used to raise IndexError in the step design, recorded as an ordinary crash)."""
    model = by_role(planner=[{"subtasks": []}], executor=[read("6"), finish("north", ["6"])])
    _, row, _ = run(NP, task, model)
    assert (row["outcome"], row["answer"], row["plan_fallback"]) == ("answer", "north", 1)


def test_a_role_s_own_call_settings_reach_its_model_calls(store, task, spec, verifiers, roles):
    judge = CallSettings(temperature=0.1, max_tokens=512)
    config = VGJ.model_copy(update={"name": "VGJ-cool", "calls": {"judge": judge}})
    model = by_role(executor=WHOLE, judge=[judged(), judged(), judged()])
    _, row, _ = attempt(config, task, model, store, spec, verifiers, roles, seed=7)
    assert row["outcome"] == "answer"
    asked = {(role_of(m), s) for m, s in zip(model.calls, model.settings, strict=True)}
    assert asked == {
        ("executor", GenerateSettings(temperature=0.2, max_tokens=256, seed=7)),  # the configuration's
        ("judge", GenerateSettings(temperature=0.1, max_tokens=512, seed=7)),
    }
    assert config.settings_for("planner", 3) == GenerateSettings(0.2, 256, 3)
