"""The report: outcome accounting, support and answerability, MuSiQue-Full groups, hop counts
and attribution, computed from records of real MuSiQue tasks."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from tests.helpers import attempt, finish, read, report_of, search
from vreact.records import VerdictRecord
from vreact.report import compute, corrections, render, render_markdown, tables
from vreact.spec import builtin_configs
from vreact.verdict import Verdict


def v(seq, decision, h, source="gate", component="executor.s1", level="L3"):
    return VerdictRecord(
        id=seq,
        attempt_id=1,
        seq=seq,
        level=level,
        component=component,
        source=source,
        verifier=None,
        check_name=None,
        args={},
        decision=decision,
        cause=None,
        detail=None,
        budget_left=None,
        artifact_hash=h,
    )


def test_a_correction_is_a_different_artifact_accepted_after_rejection():
    assert corrections([v(0, "reject", "a", "guard"), v(1, "accept", "b")]) == {("guard", "L3"): 1}
    # credited to the source and level of the last rejection before the accept
    assert corrections(
        [v(0, "reject", "a", "guard"), v(1, "reject", "c", "judge", level="L1"), v(2, "accept", "b")]
    ) == {("judge", "L1"): 1}


def test_no_correction_without_rejection_or_for_the_same_artifact():
    assert corrections([v(0, "accept", "a")]) == {}
    assert corrections([v(0, "reject", "a"), v(1, "accept", "a")]) == {}
    # finally rejected: not a correction
    assert corrections([v(0, "reject", "a"), v(1, "accept", "b"), v(2, "reject", "b")]) == {}


def test_accounting_adds_up(full_tasks, store, spec, verifiers, roles):
    answerable = [t for t in full_tasks if t.answerable][:2]
    unanswerable = next(t for t in full_tasks if not t.answerable)
    vg = builtin_configs()["VG"]
    # 2hop__269805_135710 has support {6, 10}; citing 6, 10 and 0: P = 2/3, R = 1 -> F1 = 0.8
    cites_three = [search(answerable[0].question), read("0"), read("6"), read("10")]
    cites_three.append(finish(answerable[0].answer, ["6", "10", "0"]))
    attempt(vg, answerable[0], cites_three, store, spec, verifiers, roles)  # correct
    attempt(vg, answerable[1], [], store, spec, verifiers, roles)  # crash: empty script
    attempt(vg, unanswerable, [], store, spec, verifiers, roles)  # crash
    report = report_of(store, run_id=None)
    # each helper call makes its own run; gather all of them
    rows = [report_of(store, r["id"])["configs"]["VG"] for r in store.query("select id from runs")]
    assert [r["executed"] for r in rows] == [1, 1, 1]
    assert [(r["answered"], r["crash"]) for r in rows] == [(1, 0), (0, 1), (0, 1)]
    assert rows[0]["correct"] == 1 and rows[0]["em"] == 1.0 and rows[0]["coverage"] == 1.0
    assert rows[1]["scoreable"] == 0 and rows[1]["coverage"] is None
    assert report["run"] == 3
    assert answerable[0].id == "2hop__269805_135710" and answerable[0].supporting_ids == ["6", "10"]
    assert rows[0]["support_f1"] == 0.8
    # a crash predicts nothing: no figure at all
    assert rows[1]["support_f1"] is None and rows[1]["answerability"]["precision"] is None


# --- runs written into a store directly, on real MuSiQue tasks ---------------------------------


@pytest.fixture
def tasks(full_tasks):
    return {t.id: t for t in full_tasks}


def record(
    store, run_id, task, outcome, answer=None, evidence=(), level=None, config="VG", index=0, calls=(), **more
):
    """One finished attempt, as the runner writes it: its model ``calls`` (each the arguments of
    ``Store.record_call`` after the attempt id) first, then its outcome."""
    store.add_tasks([task.record()])
    aid = store.start_attempt(run_id, config, task.id, index, seed=0)
    for call in calls:
        args, kwargs = (call[0], call[1]) if isinstance(call[-1], dict) else (call, {})
        store.record_call(aid, *args, **kwargs)
    fields = {"outcome": outcome, "answer": answer, "evidence": json.dumps(list(evidence))}
    if outcome == "abstain":
        fields |= {"abstain_level": level, "abstain_component": "executor.s1", "abstain_cause": "x:y"}
    if outcome == "crash":
        fields |= {"error": "RuntimeError: boom", "crash_kind": "internal"}
    store.finish_attempt(aid, fields | more)
    return aid


@pytest.fixture
def mixed_run(store, tasks):
    """Answerable (one with an alias answer) and unanswerable real tasks, 2- and 3-hop."""
    run = store.new_run({}, "mock/x", "test")
    t = tasks
    # 3-hop, answerable, support {7, 15, 17}: right answer, cites {17, 7}: support F1 0.8
    record(store, run, t["3hop1__107866_146715_19973"], "answer", "KaDeWe", ["17", "7"])
    # 2-hop, answerable ('north', aliases North, N), support {6, 10}: the alias "N", cites
    # {10}: P = 1, R = 1/2 -> support F1 2/3
    record(store, run, t["2hop__269805_135710"], "answer", "N", ["10"])
    # 2-hop, answerable, support {0, 17}: abstains -> false abstention; an abstention predicts
    # no support, whatever it had cited: support F1 0
    record(store, run, t["2hop__568389_161223"], "abstain", evidence=["0", "17"], level="L3")
    # 2-hop, unanswerable: answered with the (removed) answer -> silent error
    record(store, run, t["2hop__42543_20093"], "answer", "1991", ["3"])
    # 2-hop, unanswerable, its one remaining support {9} cited: a silent error, and no support
    # score (support F1 is over answerable tasks)
    record(store, run, t["2hop__130463_609442"], "answer", "Sawatch Range", ["9"])
    # 2-hop, unanswerable: abstains -> correct abstention
    record(store, run, t["2hop__150985_444333"], "abstain", level="L1")
    # a crash counts as executed and nowhere else
    record(store, run, t["2hop__131693_45439"], "crash")
    return run


def test_support_f1_and_answerability_on_real_records(store, mixed_run):
    r = report_of(store, mixed_run)["configs"]["VG"]
    assert (r["executed"], r["crash"], r["scoreable"]) == (7, 1, 6)
    assert (r["answered"], r["correct"], r["silent_error"], r["false_abstention"]) == (4, 3, 2, 1)
    # EM over the 3 answerable tasks: KaDeWe 1, "N" 1 (an alias), abstention 0 -> 2/3
    assert r["em"] == 0.667
    # support F1 over the same 3: (0.8 + 2/3 + 0) / 3 = 0.4889
    assert r["support_f1"] == 0.489
    # answerability, positive = answerable: answered 4, of which answerable 2; answerable 3
    # P = 2/4, R = 2/3 -> F1 = 2 * (1/2) * (2/3) / (7/6) = 4/7
    assert r["answerability"] == {"precision": 0.5, "recall": 0.667, "f1": 0.571}
    # no two tasks share an id: no MuSiQue-Full pair, no group figures
    assert r["pairs"] == 0
    assert r["group_answer_sufficiency_f1"] is None and r["group_support_sufficiency_f1"] is None


def test_by_hops_splits_real_two_and_three_hop_records(store, mixed_run):
    r = report_of(store, mixed_run)["configs"]["VG"]
    assert set(r["by_hops"]) == {"2", "3"}
    three, two = r["by_hops"]["3"], r["by_hops"]["2"]
    assert "by_hops" not in three and "by_hops" not in two
    # 3-hop: KaDeWe alone
    assert (three["executed"], three["answered"], three["em"], three["support_f1"]) == (1, 1, 1.0, 0.8)
    assert three["answerability"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    # 2-hop: 6 executed, 1 crash; answered N, 1991, Sawatch Range (one answerable); answerable: N, abstention
    assert (two["executed"], two["crash"], two["answered"], two["abstained"]) == (6, 1, 3, 2)
    assert two["em"] == 0.5  # (1 + 0) / 2
    assert two["support_f1"] == 0.333  # (2/3 + 0) / 2
    # P = 1/3, R = 1/2 -> F1 = (1/3) / (5/6) = 0.4
    assert two["answerability"] == {"precision": 0.333, "recall": 0.5, "f1": 0.4}
    # the splits add up to the whole
    for k in ("executed", "crash", "answered", "abstained", "correct", "silent_error"):
        assert three[k] + two[k] == r[k], k


def test_group_metrics_on_complete_pairs(store, tasks):
    """A pair is an answerable and an unanswerable record of one question, held under two ids
    that share ``pair_id`` (as the dataset loader splits MuSiQue-Full pairs)."""
    run = store.new_run({}, "mock/x", "test")

    def pair(task_id, answer, evidence, twin_answers):
        task = tasks[task_id]
        task = task.model_copy(update={"pair_id": task.id})
        twin = task.model_copy(update={"id": f"{task.id}__unanswerable", "answerable": False})
        store.add_tasks([task.record(), twin.record()])
        record(store, run, task, "answer", answer, evidence)
        if twin_answers:
            record(store, run, twin, "answer", answer, evidence)
        else:
            record(store, run, twin, "abstain", level="L1")

    # both right: answer F1 1 ("North" is an alias), support {6, 10} cited: 1
    pair("2hop__269805_135710", "North", ["6", "10"], twin_answers=False)
    # the twin answered: the pair scores 0 on both
    pair("3hop1__107866_146715_19973", "KaDeWe", ["7"], twin_answers=True)
    # both right: "1,400" vs "1,400 metres": P = 1, R = 1/2 -> F1 2/3; support {0, 17}: 1
    pair("2hop__568389_161223", "1,400", ["0", "17"], twin_answers=False)
    # a real unanswerable record without its twin: in no pair
    record(store, run, tasks["2hop__42543_20093"], "abstain", level="L1")

    r = report_of(store, run)["configs"]["VG"]
    assert r["pairs"] == 3
    # answer: (1 + 0 + 2/3) / 3 = 0.5556; support: (1 + 0 + 1) / 3 = 0.6667
    assert r["group_answer_sufficiency_f1"] == 0.556
    assert r["group_support_sufficiency_f1"] == 0.667
    assert r["by_hops"]["3"]["pairs"] == 1 and r["by_hops"]["3"]["group_answer_sufficiency_f1"] == 0.0


def test_attribution_by_source_and_level_with_judge_cost(store, tasks):
    run = store.new_run({}, "mock/x", "test")
    kadewe_calls = [
        (role, "mock/x", p, c, 1.0)
        for role, p, c in (("executor", 1000, 40), ("judge", 100, 10), ("judge", 50, 5))
    ]
    kadewe = record(
        store,
        run,
        tasks["3hop1__107866_146715_19973"],
        "answer",
        "KaDeWe",
        ["7", "15", "17"],
        calls=kadewe_calls,
    )

    def verdict(level, component, source, check, decision, h, cause=""):
        verifier = "guard" if source == "guard" else {"L1": "R3", "L2": "plan", "L3": "R1"}[level]
        store.record_verdict(
            kadewe, Verdict(verifier, component, source, check, decision, cause, artifact_hash=h)
        )

    # executor.s1: a gate rejects "a" twice (identical: counts once), a judge rejects "b", then
    # "c" is accepted by both -> a correction credited to (judge, L3)
    verdict("L3", "executor.s1", "gate", "max_words", "reject", "a", "too_long")
    verdict("L3", "executor.s1", "gate", "max_words", "reject", "a", "too_long")
    verdict("L3", "executor.s1", "judge", "r1_judge", "reject", "b", "unsupported")
    verdict("L3", "executor.s1", "gate", "max_words", "accept", "c")
    verdict("L3", "executor.s1", "judge", "r1_judge", "accept", "c")
    # executor.s2: a guard stop on "g", then "h" accepted -> (guard, L3)
    verdict("L3", "executor.s2", "guard", "repeat", "reject", "g", "repeat")
    verdict("L3", "executor.s2", "gate", "non_empty", "accept", "h")
    # answer: the R3 judge rejects "x" at L1, then "y" is accepted -> (judge, L1)
    verdict("L1", "answer", "judge", "r3_judge", "reject", "x", "wrong")
    verdict("L1", "answer", "gate", "answer_type", "accept", "y")
    verdict("L1", "answer", "judge", "r3_judge", "accept", "y")
    # plan: a gate rejects at L2 and nothing is accepted -> no correction
    verdict("L2", "plan", "gate", "plan_shape", "reject", "p1", "shape")
    # a second scoreable attempt, an unanswerable task abstained on, with one judge call
    judged = [("judge", "mock/x", 30, 3, 1.0)]
    record(store, run, tasks["2hop__42543_20093"], "abstain", level="L1", plan_fallback=1, calls=judged)
    # a crashed attempt's calls and verdicts count nowhere
    lost = [("judge", "mock/x", 999, 999, 1.0)]
    crashed = record(store, run, tasks["2hop__150985_444333"], "crash", plan_fallback=1, calls=lost)
    store.record_verdict(
        crashed, Verdict("R1", "executor.s1", "judge", "r1_judge", "reject", artifact_hash="z")
    )

    r = report_of(store, run)["configs"]["VG"]
    a = r["attribution"]
    # rejections: gate {a@L3, p1@L2} = 2, judge {b@L3, x@L1} = 2, guard {g@L3} = 1
    assert a["by_source"] == {
        "gate": {"rejections": 2, "corrections": 0, "correction_rate": 0.0},
        "judge": {"rejections": 2, "corrections": 2, "correction_rate": 1.0},
        "critic": {"rejections": 0, "corrections": 0, "correction_rate": None},
        "context_manager": {"rejections": 0, "corrections": 0, "correction_rate": None},
        "guard": {"rejections": 1, "corrections": 1, "correction_rate": 1.0},
        "budget": {"rejections": 0, "corrections": 0, "correction_rate": None},
    }
    assert a["by_level"] == {
        "L1": {"rejections": 1, "corrections": 1, "correction_rate": 1.0},
        "L2": {"rejections": 1, "corrections": 0, "correction_rate": 0.0},
        "L3": {"rejections": 3, "corrections": 2, "correction_rate": 0.667},
    }
    # the totals by source the report always had
    none = {"critic": 0, "context_manager": 0}  # no DeReAct member ran
    assert r["rejections"] == {"gate": 2, "judge": 2, **none, "guard": 1, "budget": 0}
    assert r["corrections"] == {"gate": 0, "judge": 2, **none, "guard": 1, "budget": 0}
    # judge cost over 2 scoreable attempts: 3 calls, 100 + 50 + 30 prompt, 10 + 5 + 3 completion
    assert a["marginal_cost"]["judge"] == {
        "llm_calls": 3,
        "prompt_tokens": 180,
        "completion_tokens": 18,
        "llm_calls_per_attempt": 1.5,
        "prompt_tokens_per_attempt": 90.0,
        "completion_tokens_per_attempt": 9.0,
    }
    for free in ("gate", "guard"):
        assert set(a["marginal_cost"][free].values()) == {0}
    # all calls per scoreable attempt: 4 calls, (1000 + 150 + 30) / 2 prompt tokens
    assert (r["llm_calls"], r["prompt_tokens"]) == (2.0, 590.0)
    # plan fallbacks are counted on every executed attempt that recorded one
    assert r["plan_fallbacks"] == 2


def test_render_fits_80_columns_and_shows_every_table(store, mixed_run):
    out = StringIO()
    console = Console(file=out, width=80, color_system=None)
    for table in render(compute(store, mixed_run)):
        console.print(table)
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    for title in ("Support F1", "Attribution", "Execution accounting by hop count", "Quality by hop count"):
        assert title in text, title
    # the 3-hop row: config, hops, scoreable 1, answered 1, abstained 0, correct 1, EM, F1, sup F1 0.80
    assert any(line.split()[:2] == ["VG", "3"] and "0.80" in line for line in text.splitlines())


# --- Pass@k, lifts and permutation tests from the records ---------------------------------------

#: Four answerable real tasks; A and B each ran every task three times (True = the gold answer).
#: A: t1 TFF, t2 FTF, t3 TTF, t4 TTT   B: t1 FFF, t2 FFF, t3 FFF, t4 FTT
#:   Pass@1: A = (1/3 + 1/3 + 2/3 + 1) / 4 = 7/12;  B = (0 + 0 + 0 + 2/3) / 4 = 1/6
#:   Pass@3: A = 4/4 = 1;  B = 1/4 (only t4 is solved at least once)
#:   lift@1 = 7/12 - 2/12 = 5/12;  lift@3 = 3/4;  Diff = 3/4 - 5/12 = 1/3
#: Per-task differences: d1 = (1/3, 1/3, 2/3, 1/3), d3 = (1, 1, 1, 0), Diff = (2/3, 2/3, 1/3, -1/3).
#: 4 tasks -> all 16 sign assignments are enumerated (16 <= 10,000), so p is exact:
#:   d1: only ++++ and ---- reach |sum| = 5/3                    -> p = 2/16 = 0.125
#:   d3: +++ and --- on the first three, either sign on t4's 0    -> p = 4/16 = 0.25
#:   Diff (x3: 2, 2, 1, -1; observed 4): |sum| >= 4 needs the two 2s with one sign and the
#:   1 and -1 terms adding 0 or that sign: 3 ways for each sign   -> p = 6/16 = 0.375
A_SUCCESS = {0: "TFF", 1: "FTF", 2: "TTF", 3: "TTT"}
B_SUCCESS = {0: "FFF", 1: "FFF", 2: "FFF", 3: "FTT"}


def test_pass_at_k_and_lift_against_hand_computed_values(store, full_tasks):
    answerable = [t for t in full_tasks if t.answerable][:4]
    run = store.new_run({}, "mock/x", "test")
    for config, table in (("A", A_SUCCESS), ("B", B_SUCCESS)):
        for i, task in enumerate(answerable):
            for k, mark in enumerate(table[i]):
                answer = task.answer if mark == "T" else "certainly not the answer"
                record(store, run, task, "answer", answer, config=config, index=k)
    report = report_of(store, run, baseline="B")
    a, b = report["configs"]["A"]["pass"], report["configs"]["B"]["pass"]
    assert (a["k"], a["tasks"], a["pass@1"], a["pass@k"]) == (3, 4, round(7 / 12, 4), 1.0)
    assert (b["pass@1"], b["pass@k"]) == (round(1 / 6, 4), 0.25)
    # standard error of Pass@1 over tasks: sd of (1/3, 1/3, 2/3, 1) = 0.3191 / sqrt(4)
    assert a["pass@1_se"] == 0.1596
    (c,) = report["comparisons"]
    assert (c["a"], c["b"], c["tasks"], c["k"], c["exact"]) == ("A", "B", 4, 3, True)
    assert (c["lift1"], c["liftk"], c["diff"]) == (round(5 / 12, 4), 0.75, round(1 / 3, 4))
    assert (c["p1"], c["pk"], c["p_diff"]) == (0.125, 0.25, 0.375)
    # against the other baseline (the default: the first configuration) the lifts change sign
    # and the p-values stay
    (r,) = report_of(store, run)["comparisons"]
    assert (r["a"], r["lift1"], r["p1"], r["p_diff"]) == ("B", round(-5 / 12, 4), 0.125, 0.375)
    with pytest.raises(ValueError, match="baseline 'C'"):
        compute(store, run, baseline="C")


def test_a_correct_abstention_is_a_success_and_a_crash_is_not(store, tasks):
    run = store.new_run({}, "mock/x", "test")
    record(store, run, tasks["2hop__150985_444333"], "abstain", level="L1", index=0)  # unanswerable
    record(store, run, tasks["2hop__150985_444333"], "crash", index=1)
    record(store, run, tasks["2hop__568389_161223"], "abstain", level="L3", index=0)  # answerable
    record(store, run, tasks["2hop__568389_161223"], "answer", "Wrong", index=1)
    p = report_of(store, run)["configs"]["VG"]["pass"]
    # task 1: 1 of 2, task 2: 0 of 2 -> Pass@1 = 1/4; Pass@2: task 1 solved once -> 1/2
    assert (p["k"], p["pass@1"], p["pass@k"]) == (2, 0.25, 0.5)


def test_cost_distribution_and_risk_coverage(store, tasks):
    run = store.new_run({}, "mock/x", "test")
    call = ("executor", "mock/x", 100, 10, 1.0)
    record(store, run, tasks["2hop__269805_135710"], "answer", "north", ["10"], calls=[call])
    wrong = record(store, run, tasks["2hop__42543_20093"], "answer", "1991", ["3"], calls=[call] * 4)
    record(store, run, tasks["2hop__568389_161223"], "abstain", level="L3")
    store.record_verdict(wrong, Verdict("R1", "executor.s1", "gate", "g", "reject", "c", "", 1, "h"))
    r = report_of(store, run)["configs"]["VG"]
    # calls per scoreable attempt: 1, 4, 0 -> mean 5/3, median 1, P90 = 1 + 0.8 * 3 = 3.4
    calls = r["cost_distribution"]["llm_calls"]
    assert (round(calls["mean"], 3), calls["median"], round(calls["p90"], 3)) == (1.667, 1.0, 3.4)
    assert r["cost_distribution"]["cost_usd"] is None  # no prices known
    # answers ranked by rejections: the right one (0) first, then the wrong one (1)
    assert r["risk_coverage"] == [{"coverage": 0.3333, "risk": 0.0}, {"coverage": 0.6667, "risk": 0.5}]


def test_markdown_holds_every_table(store, mixed_run):
    md = render_markdown(compute(store, mixed_run))
    titles = [line for line in md.splitlines() if line.startswith("## ")]
    assert [t.title for t in tables(compute(store, mixed_run))] == [t[3:] for t in titles]
    assert "| config | exec | score | crash | answer | abstain | L1 | L2 | L3 | declined | cap |" in md
    # 7 executed, 1 crash, 4 answered, 2 abstained (one at L1, one at L3)
    assert "| VG | 7 | 6 | 1 | 4 | 2 | 1 | 0 | 1 | 0 | 0 |" in md


def test_configurations_keep_the_order_the_run_named(store, tasks):
    """Concurrent attempts finish in any order; the tables (and the default baseline) follow
    the run's own list of configurations."""
    run = store.new_run({"configs": [{"name": "N"}, {"name": "VG"}]}, "mock/x", "test")
    record(store, run, tasks["2hop__150985_444333"], "abstain", level="L1", config="VG")
    record(store, run, tasks["2hop__150985_444333"], "answer", "x", config="N")
    report = report_of(store, run)
    assert list(report["configs"]) == ["N", "VG"]
    assert [(c["a"], c["b"]) for c in report["comparisons"]] == [("VG", "N")]


def test_the_report_json_follows_its_published_schema(store, mixed_run):
    import jsonschema

    from vreact.report import Report

    schema = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "report.schema.json").read_text())
    assert schema == Report.model_json_schema(mode="serialization")
    data = report_of(store, mixed_run)
    jsonschema.validate(data, schema)
    assert "pass@1" in data["configs"]["VG"]["pass"] and "by_hops" in data["configs"]["VG"]
    # the typed report round-trips through its JSON
    assert Report.model_validate(data).model_dump(mode="json") == data
