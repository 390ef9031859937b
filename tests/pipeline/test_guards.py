"""The loop guardrails of seed 003 on the step pipeline: each guard and budget fires on one
script and stays quiet on a similar, legitimate one; hints and rollbacks are events."""

from __future__ import annotations

import time

from tests.helpers import attempt, finish, last_support, read, search, solve
from vreact.config import Configuration
from vreact.records import read_run
from vreact.report import compute as report
from vreact.report.html import attempt_pages, render_html


def config(**kw):
    guard = kw.pop("guard", {})
    return Configuration(name="VG", gates=True, guards=True, guard=guard, **kw)


def rows(store, table, attempt_id):
    return list(store.query(f"select * from {table} where attempt_id = ? order by id", [attempt_id]))


def step(thought, query):
    return {**search(query), "thought": thought}


def test_text_repetition_hints_then_stops(task_nissedal, store, spec, verifiers, roles):
    same = [step("I should look for the river's direction", f"query {i}") for i in range(6)]
    g = {"text_repeat": True}
    _, row, _ = attempt(
        config(guard=g), task_nissedal, same + solve(task_nissedal), store, spec, verifiers, roles
    )
    [stop] = [v for v in rows(store, "verdicts", row["id"]) if v["check_name"] == "text_repetition"]
    assert (stop["verifier"], stop["source"], stop["cause"], stop["budget_left"]) == (
        "guard",
        "guard",
        "repeated_text",
        2,
    )
    hints = [e for e in rows(store, "events", row["id"]) if e["guard"] == "text_repetition"]
    assert [e["step"] for e in hints] == [2, 3]  # hint at 2 near-repeats, stop at 4 (step 4)
    assert row["outcome"] == "answer"  # the next try answered


def test_text_repetition_is_quiet_on_different_thoughts(task_nissedal, store, spec, verifiers, roles):
    varied = [
        step(t, f"query {i}") for i, t in enumerate(["find the river", "now the town", "which way", "check"])
    ]
    g = {"text_repeat": True}
    _, row, _ = attempt(
        config(guard=g), task_nissedal, varied + solve(task_nissedal), store, spec, verifiers, roles
    )
    assert not [v for v in rows(store, "verdicts", row["id"]) if v["check_name"] == "text_repetition"]
    assert not rows(store, "events", row["id"])
    assert row["outcome"] == "answer"


def test_alternating_searches_are_rolled_back_without_spending_steps(
    task_nissedal, store, spec, verifiers, roles
):
    """Acceptance 2: a script alternating two searches ran to the step cap with no guard firing."""
    alternating = [search("Nissedal"), search("river")] * 3  # 4 duplicates: 3 rolled back, then through
    repeating = [search("river")] * 5  # then one call repeated: the repetition guard stops it
    g = {"duplicate_search": True}
    _, row, _ = attempt(
        config(guard=g),
        task_nissedal,
        alternating + repeating + solve(task_nissedal),
        store,
        spec,
        verifiers,
        roles,
    )
    events = rows(store, "events", row["id"])
    rollbacks = [e for e in events if e["kind"] == "rollback" and e["try"] == 1]
    assert len(rollbacks) == 3 and all(e["guard"] == "duplicate_search" for e in rollbacks)
    assert "already searched 'Nissedal' at step 1" in rollbacks[0]["detail"]
    first_try = [s for s in rows(store, "steps", row["id"]) if s["try"] == 1]
    # 9 calls in the first try (6 alternating, 3 of the repeats); the 3 rolled back are not
    # steps: the indexes run without a gap, and the 4th duplicate ran (its budget was spent)
    assert [s["step"] for s in first_try] == list(range(6))
    assert [s["input"] for s in first_try] == ["Nissedal", "river", "river", "river", "river", "river"]
    [stop] = [v for v in rows(store, "verdicts", row["id"]) if v["source"] == "guard"]
    assert (stop["check_name"], stop["cause"]) == ("repetition_guard", "repeated_call")
    assert row["outcome"] == "answer"
    # the report's guard table counts them: rollbacks and hints as events, the stop as a verdict
    guards = report(store).configs["VG"].guards
    fires = {f.guard: (f.hints, f.rollbacks, f.stops, f.causes) for f in guards.fires}
    all_rollbacks = sum(e["kind"] == "rollback" for e in events)
    assert fires["duplicate_search"] == (0, all_rollbacks, 0, "")
    assert fires["repetition_guard"] == (2, 0, 1, "repeated_call")
    assert (guards.stopped_attempts, guards.stopped_then_correct) == (1, 1)
    assert report(store).configs["VG"].rejections["guard"] == 1  # events are not rejections


def test_a_search_that_found_nothing_may_be_repeated(task_nissedal, store, spec, verifiers, roles):
    g = {"duplicate_search": True}
    script = [search("?!"), search("?!"), *solve(task_nissedal)]  # no terms: no results
    _, row, _ = attempt(config(guard=g), task_nissedal, script, store, spec, verifiers, roles)
    assert not rows(store, "events", row["id"]) and row["outcome"] == "answer"


def slow(outputs, seconds):
    it = iter(outputs)

    def reply(messages):
        time.sleep(seconds)
        return next(it)

    return reply


def test_the_wall_clock_budget_ends_the_attempt_at_l3(task_nissedal, store, spec, verifiers, roles):
    c = config(budgets={"wall_clock_s": 0.05})
    _, row, _ = attempt(
        c, task_nissedal, slow([search(f"q{i}") for i in range(20)], 0.03), store, spec, verifiers, roles
    )
    [stop] = [v for v in rows(store, "verdicts", row["id"]) if v["source"] == "budget"]
    assert (stop["verifier"], stop["check_name"], stop["cause"], stop["budget_left"]) == (
        "budget",
        "wall_clock",
        "wall_clock",
        2,
    )
    assert (row["outcome"], row["abstain_level"], row["abstain_cause"]) == (
        "abstain",
        "L3",
        "wall_clock:wall_clock",
    )


def test_the_wall_clock_budget_in_n_is_a_cap(task_nissedal, store, spec, verifiers, roles):
    c = Configuration(name="N", budgets={"wall_clock_s": 0.05})
    _, row, _ = attempt(
        c, task_nissedal, slow([search(f"q{i}") for i in range(20)], 0.03), store, spec, verifiers, roles
    )
    assert (row["outcome"], row["abstain_level"], row["abstain_cause"]) == ("abstain", "cap", "wall_clock")
    assert not rows(store, "verdicts", row["id"])


def test_a_roomy_wall_clock_lets_the_attempt_answer(task_nissedal, store, spec, verifiers, roles):
    c = config(budgets={"wall_clock_s": 60})
    _, row, _ = attempt(c, task_nissedal, slow(solve(task_nissedal), 0.01), store, spec, verifiers, roles)
    assert row["outcome"] == "answer" and not rows(store, "failures", row["id"])


def test_the_token_budget_stops_then_abstains(task_nissedal, store, spec, verifiers, roles):
    c = config(budgets={"tokens": 400})
    _, row, _ = attempt(c, task_nissedal, [search(f"q{i}") for i in range(20)], store, spec, verifiers, roles)
    calls = rows(store, "model_calls", row["id"])
    used = sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls)
    [stop] = [v for v in rows(store, "verdicts", row["id"]) if v["source"] == "budget"]
    assert (stop["cause"], stop["budget_left"], row["abstain_level"]) == ("token_budget", 2, "L3")
    assert used >= 400 and sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls[:-1]) < 400


def test_a_roomy_token_budget_is_quiet(task_nissedal, store, spec, verifiers, roles):
    c = config(budgets={"tokens": 1_000_000})
    _, row, _ = attempt(c, task_nissedal, solve(task_nissedal), store, spec, verifiers, roles)
    assert row["outcome"] == "answer" and not rows(store, "failures", row["id"])


def test_final_answer_recovery_in_n(task_nissedal, store, spec, verifiers, roles):
    pid = last_support(task_nissedal)
    c = Configuration(name="N", budgets={"step_cap": 3}, final_answer_recovery=True)
    script = [search("a"), read(pid), search("b"), finish(task_nissedal.answer, [pid])]
    outcome, _, model = attempt(c, task_nissedal, script, store, spec, verifiers, roles)
    assert (outcome.kind, outcome.answer) == ("answer", task_nissedal.answer)
    assert "Your steps for this question are spent" in model.calls[-1][-1]["content"]
    # without it, the same script ends at the cap
    c = Configuration(name="N", budgets={"step_cap": 3})
    outcome, _, _ = attempt(c, task_nissedal, script, store, spec, verifiers, roles)
    assert (outcome.kind, outcome.level, outcome.cause) == ("abstain", "cap", "step_cap")


def test_recovery_still_goes_through_r1(task_nissedal, store, spec, verifiers, roles):
    c = config(budgets={"step_cap": 2, "r1": 1}, final_answer_recovery=True)
    script = [search("a"), search("b"), finish("north", ["99"])]  # cites nothing it retrieved
    outcome, row, _ = attempt(c, task_nissedal, script, store, spec, verifiers, roles)
    [reject] = rows(store, "failures", row["id"])
    assert (reject["verifier"], reject["source"]) == ("R1", "gate") and outcome.level == "L3"


def test_a_simple_profile_keeps_the_last_k_results_in_full(task_nissedal, store, spec, verifiers, roles):
    pids = [str(p.idx) for p in task_nissedal.paragraphs][:6]
    c = Configuration(name="N", profile="simple", keep_last_k=2)
    script = [read(p) for p in pids] + [finish("north", pids[-2:])]
    attempt(c, task_nissedal, script, store, spec, verifiers, roles)
    [a] = read_run(store).attempts
    last_prompt = a.calls[-1].messages[-1]["content"]  # the 7th call: 6 steps so far
    texts = {str(p.idx): p.paragraph_text for p in task_nissedal.paragraphs}
    full = [p for p in pids if texts[p] in last_prompt]
    assert full == pids[-2:]
    assert last_prompt.count("(shown before: [") == 4
    # and without a profile every result is there in full
    attempt(Configuration(name="N"), task_nissedal, script, store, spec, verifiers, roles)
    prompt = read_run(store, 2).attempts[0].calls[-1].messages[-1]["content"]
    assert all(texts[p] in prompt for p in pids)


def test_a_benchmark_profile_summarises_the_oldest_steps(task_nissedal, store, spec, verifiers, roles):
    pids = [str(p.idx) for p in task_nissedal.paragraphs][:8]
    c = Configuration(name="N", profile="benchmark", keep_last_k=-1, context_tokens=600)
    script = [search("Nissedal"), *(read(p) for p in pids), finish("north", pids[-2:])]
    attempt(c, task_nissedal, script, store, spec, verifiers, roles)
    [a] = read_run(store).attempts
    last = "\n".join(m["content"] for m in a.calls[-1].messages)
    assert "(earlier steps, summarised)" in last and "searched 'Nissedal'" in last
    assert len(last) / 4 <= 0.75 * 600 + 200  # near the budget: what is left is one step at most


def test_the_attempt_page_shows_hints_and_rollbacks_where_they_happened(
    task_nissedal, store, spec, verifiers, roles
):
    g = {"duplicate_search": True}
    script = [search("Nissedal"), search("Nissedal"), search("river"), *solve(task_nissedal)]
    attempt(config(guard=g), task_nissedal, script, store, spec, verifiers, roles)
    [page] = attempt_pages(render_html(store)).values()  # the attempt's page, as the browser unpacks it
    assert 'data-kind="rollback">step 1 · duplicate_search rollback: You already searched' in page


def test_steps_without_a_thought_never_trigger_the_text_guard(task_nissedal, store, spec, verifiers, roles):
    silent = [search(f"query {i}") for i in range(6)]  # thought ""
    g = {"text_repeat": True}
    _, row, _ = attempt(
        config(guard=g), task_nissedal, silent + solve(task_nissedal), store, spec, verifiers, roles
    )
    assert not [e for e in rows(store, "events", row["id"]) if e["guard"] == "text_repetition"]
    assert not [v for v in rows(store, "verdicts", row["id"]) if v["check_name"] == "text_repetition"]
