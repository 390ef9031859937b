"""The controller's paths, driven by a scripted mock model on real MuSiQue records."""

from __future__ import annotations

import json

import pytest

from tests.helpers import (
    abstain,
    attempt,
    by_role,
    by_source,
    finish,
    last_support,
    plan,
    read,
    report_of,
    search,
    solve,
    support_ids,
    verdicts,
)
from vreact.config import Configuration
from vreact.model import ContextLengthError, ModelError
from vreact.spec import VerifierSet, builtin_configs
from vreact.verify.gates import gate

N, VG = builtin_configs()["N"], builtin_configs()["VG"]


@pytest.fixture
def task(full_tasks):
    # "What year did the writer of Crazy Little Thing Called Love die?" has no support;
    # use the first answerable record whose final hop has a paragraph.
    return next(t for t in full_tasks if t.answerable)


@pytest.fixture
def run(store, spec, verifiers, roles):
    def go(config, task, outputs, verifier_set=None):
        return attempt(config, task, outputs, store, spec, verifier_set or verifiers, roles)

    return go


def test_n_answers_without_any_verdict(run, task, store):
    _outcome, row, _ = run(N, task, solve(task))
    assert (row["outcome"], row["answer"]) == ("answer", task.answer)
    assert verdicts(store, row["id"]) == []


def test_n_ends_at_the_step_cap_as_abstention_cap(run, task, store):
    _outcome, row, model = run(N, task, [search(f"query {i}") for i in range(12)])
    assert (row["outcome"], row["abstain_level"], row["abstain_cause"]) == ("abstain", "cap", "step_cap")
    assert len(model.calls) == 12


def test_n_treats_unparseable_output_as_an_observation(run, task):
    _outcome, row, model = run(N, task, ["I think it is Paris.", *solve(task)])
    assert row["outcome"] == "answer"
    assert "not a JSON step" in model.calls[1][-1]["content"]


def test_vg_accepts_the_truth(run, task, store):
    _outcome, row, _ = run(VG, task, solve(task))
    assert row["outcome"] == "answer"
    vs = verdicts(store, row["id"])
    assert {v["decision"] for v in vs} == {"accept"}
    assert {v["level"] for v in vs} == {"L1", "L3"}
    assert store.ledger(row["id"]) and not store.failures(row["id"])


def test_an_id_cut_by_the_schema_or_written_as_shown_still_cites_that_paragraph(run, task, store):
    """Qwen 1.5B wrote the correct "Bexford" citing "[6] Quillmoor ..." (its evidence item cut
    at 6 characters: "[6] Qu"); the id was read as "6] Qu", never retrieved, and the right
    answer was rejected by evidence_retrieved. The cited id is the leading one."""
    first, second = support_ids(task)
    shown = [f"[{first}] {task.paragraphs[int(first)].title}"[:6], f"P{second}"]
    script = [read(first), read(second), finish(task.answer, shown)]
    _outcome, row, _ = run(VG, task, script)
    assert (row["outcome"], row["answer"]) == ("answer", task.answer), store.failures(row["id"])
    assert json.loads(row["evidence"]) == [first, second]


def test_r1_gate_reject_then_new_try_is_a_gate_correction(run, task, store):
    _outcome, row, model = run(VG, task, solve(task, answer="Zanzibar") + solve(task))
    assert row["outcome"] == "answer"
    [failure] = store.failures(row["id"])
    assert (failure["level"], failure["verifier"], failure["check_name"], failure["cause"]) == (
        "L3",
        "R1",
        "supported",
        "unsupported",
    )
    # the second try is told why, but starts from a fresh transcript
    second_try_prompt = model.calls[len(solve(task))]
    assert len(second_try_prompt) == 2 and "unsupported" in second_try_prompt[1]["content"]
    report = report_of(store)["configs"]["VG"]
    assert report["corrections"] == by_source(gate=1)
    assert report["rejections"]["gate"] == 1


def test_unparseable_output_is_a_format_reject(run, task, store):
    _outcome, row, _ = run(VG, task, ["Well, the answer might be Paris.", *solve(task)])
    assert row["outcome"] == "answer"
    [failure] = store.failures(row["id"])
    assert (failure["verifier"], failure["check_name"], failure["cause"]) == ("R1", "parses", "format")


def test_r1_budget_spent_abstains_naming_l3(run, task, store):
    wrong = solve(task, answer="Zanzibar")
    _outcome, row, _ = run(VG, task, wrong * 3)
    assert (row["outcome"], row["abstain_level"]) == ("abstain", "L3")
    assert row["abstain_component"] == "executor.s1"
    assert row["abstain_cause"] == "supported:unsupported"
    lefts = [v["budget_left"] for v in verdicts(store, row["id"]) if v["decision"] == "reject"]
    assert lefts == [2, 1, 0]


def test_r3_reject_redescends_then_abstains_naming_l1(run, full_tasks, store):
    # a "when/what year" question answered with a supported word that is no date
    task = next(t for t in full_tasks if t.answerable and t.question.lower().startswith("when"))
    pid = last_support(task)
    word = next(w for w in task.paragraphs[int(pid)].paragraph_text.split() if w.isalpha() and len(w) > 5)
    script = [read(pid), finish(word, [pid])] * 3
    _outcome, row, _ = run(VG, task, script)
    assert (row["outcome"], row["abstain_level"]) == ("abstain", "L1")
    assert row["abstain_cause"] == "answer_type:answer_type"
    rejects = [v for v in verdicts(store, row["id"]) if v["decision"] == "reject"]
    assert [(v["level"], v["budget_left"]) for v in rejects] == [("L1", 1), ("L1", 0), ("L1", 0)]


def test_a_gate_that_raises_rejects_with_verifier_error(run, task, store, verifiers):
    @gate("explodes")
    def explodes():
        def check(artifact):
            raise RuntimeError("boom")

        return check

    broken = VerifierSet.model_validate({"name": "t", "R1": {"gates": ["explodes"]}})
    _outcome, row, _ = run(VG, task, solve(task) * 3, broken)
    assert (row["outcome"], row["abstain_level"]) == ("abstain", "L3")
    failures = store.failures(row["id"])
    assert {f["cause"] for f in failures} == {"verifier_error"}
    assert "RuntimeError: boom" in failures[0]["detail"]


def test_repetition_guard_hints_at_3_and_stops_at_5(run, task, store):
    same = search("crazy little thing")
    _outcome, row, model = run(VG, task, [same] * 5 + solve(task))
    assert row["outcome"] == "answer"
    history = model.calls[4][-1]["content"]  # the try so far, step by step
    second, third = history.split("\n2. ")[1].split("\n3. ")
    assert "3 times in a row" in third and "times in a row" not in second
    [stop] = [v for v in verdicts(store, row["id"]) if v["source"] == "guard"]
    assert (stop["verifier"], stop["check_name"], stop["cause"], stop["level"]) == (
        "guard",
        "repetition_guard",
        "repeated_call",
        "L3",
    )
    assert report_of(store)["configs"]["VG"]["corrections"]["guard"] == 1


def test_step_cap_in_vg_is_a_budget_stop_routed_like_r1(run, task, store):
    capped = [search(f"q{i}") for i in range(12)]
    _outcome, row, _ = run(VG, task, capped + solve(task))
    assert row["outcome"] == "answer"
    [stop] = store.failures(row["id"])
    assert (stop["verifier"], stop["source"], stop["check_name"], stop["cause"]) == (
        "budget",
        "budget",
        "step_cap",
        "step_cap",
    )
    [verdict] = [v for v in verdicts(store, row["id"]) if v["check_name"] == "step_cap"]
    assert verdict["budget_left"] == 2  # R1 tries left after the capped one


def test_attempt_step_budget_ends_in_l3_abstention(run, task, store):
    config = Configuration(name="VG", guards=True, gates=True, budgets={"steps": 5, "r1": 3})
    _outcome, row, _ = run(config, task, [search(f"q{i}") for i in range(5)])
    assert (row["outcome"], row["abstain_level"]) == ("abstain", "L3")
    assert row["abstain_cause"] == "step_budget:step_budget"


def test_agent_abstention_is_verified_then_declined(run, full_tasks, store):
    task = next(t for t in full_tasks if not t.answerable)
    _outcome, row, _ = run(
        VG, task, [abstain("too early"), search(task.question), abstain("no paragraph says")]
    )
    assert (row["outcome"], row["abstain_level"], row["abstain_component"]) == (
        "abstain",
        "declined",
        "executor.s1",
    )
    assert "no paragraph says" in row["abstain_cause"]
    [failure] = store.failures(row["id"])
    assert failure["cause"] == "premature_abstention"
    assert report_of(store)["configs"]["VG"]["correct"] == 1  # abstaining on unanswerable is right


def test_context_overflow_in_n_is_a_crash_with_cause(run, task, store):
    _outcome, row, _ = run(N, task, [search("a"), ContextLengthError("context_length: 9000 > 8192")])
    assert row["outcome"] == "crash" and row["error"].startswith("ContextLengthError: context_length")
    calls = list(store.query("select status from model_calls where attempt_id = ?", [row["id"]]))
    assert [c["status"] for c in calls] == ["ok", "error"]


def test_provider_error_is_a_crash_and_the_script_running_out_is_loud(run, task):
    _, row, _ = run(VG, task, [ModelError("HTTP 500")])
    assert row["outcome"] == "crash" and "HTTP 500" in row["error"]
    _, row, _ = run(VG, task, [search("x")])
    assert row["outcome"] == "crash" and "script ran out after 1 output" in row["error"]


@pytest.mark.parametrize(
    "switches",
    [{"name": "N"}, {"name": "NP", "planner": True}, {"name": "react", "budgets": {"step_cap": 30}}],
    ids=["N", "NP", "react"],
)
def test_the_step_budget_ends_unverified_configurations_at_cap(
    switches, task_nissedal, store, spec, verifiers, roles
):
    """``budgets.steps`` holds in N, NP and react as in verified configurations: the attempt's
    third step is its last, and it ends at ``cap`` with cause ``step_budget``."""
    budgets = {"step_cap": 12, **switches.get("budgets", {}), "steps": 3}
    config = Configuration(**{**switches, "budgets": budgets})
    searches = [search(f"query {i}") for i in range(12)]
    two = plan(("q1", "Who founded it?", [], "name"), ("q2", "Where was #1 born?", ["q1"], "place"))
    model = by_role(planner=[two], executor=searches) if config.planner else searches
    outcome, row, _ = attempt(config, task_nissedal, model, store, spec, verifiers, roles)
    assert (outcome.kind, outcome.level, outcome.cause) == ("abstain", "cap", "step_budget")
    steps = list(store.query("select * from steps where attempt_id = ?", [row["id"]]))
    assert len(steps) == 3
    executor_calls = [c for c in store.query("select role from model_calls") if c["role"] == "executor"]
    assert len(executor_calls) == 3


def test_final_answer_recovery_never_spends_past_the_step_budget(
    task_nissedal, store, spec, verifiers, roles
):
    config = Configuration(name="N", budgets={"step_cap": 3, "steps": 3}, final_answer_recovery=True)
    script = [search(f"query {i}") for i in range(3)] + [finish("north", ["6"])]
    outcome, _, model = attempt(config, task_nissedal, script, store, spec, verifiers, roles)
    assert (outcome.kind, outcome.level, outcome.cause) == ("abstain", "cap", "step_budget")
    assert len(model.calls) == 3  # the recovery call was not made
    roomy = Configuration(name="N", budgets={"step_cap": 3, "steps": 4}, final_answer_recovery=True)
    outcome, _, model = attempt(roomy, task_nissedal, script, store, spec, verifiers, roles)
    assert (outcome.kind, outcome.answer, len(model.calls)) == ("answer", "north", 4)


def test_a_cut_paragraph_is_flagged_on_the_steps_that_show_it_and_the_gates_see_it_cut(run, task, store):
    """A paragraph past MAX_PARAGRAPH_CHARS is cut when the dataset is read; each step whose
    observation shows it carries ``cut = 1``, and the gate input in the ledger holds the same cut
    text the executor read."""
    from vreact.qa.dataset import MAX_PARAGRAPH_CHARS, Task

    long_pid = last_support(task)
    record = task.model_dump()
    for p in record["paragraphs"]:
        if str(p["idx"]) == long_pid:
            p["paragraph_text"] += " filler" * MAX_PARAGRAPH_CHARS
    long_task = Task.model_validate(record)
    _outcome, row, _ = run(VG, long_task, solve(long_task))
    assert row["outcome"] == "answer"
    steps = list(
        store.query("select action, input, cut, observation from steps where attempt_id = ?", [row["id"]])
    )
    reads = {s["input"]: s for s in steps if s["action"] == "read"}
    assert reads[long_pid]["cut"] == 1 and reads[long_pid]["observation"].endswith("kept]")
    assert all(s["cut"] == 0 for pid, s in reads.items() if pid != long_pid)
    assert next(s for s in steps if s["action"] == "finish")["cut"] == 0
    answer = next(r for r in store.ledger(row["id"]) if r["kind"] == "answer")
    cited = json.loads(answer["input"])["cited"]
    assert cited[long_pid].endswith("kept]") and len(cited[long_pid]) < MAX_PARAGRAPH_CHARS + 200
