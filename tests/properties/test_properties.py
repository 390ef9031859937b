"""Invariants, checked with hypothesis over random scripts on real MuSiQue records."""

from __future__ import annotations

import json
import re
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import abstain, attempt, finish, read, search, solve
from vreact.budget import Budget, Budgets
from vreact.config import BudgetLimits
from vreact.memory import ContextAssembler, ContextSchemaError, Scope
from vreact.model import MockModel, ModelError
from vreact.records import Store
from vreact.spec import builtin_configs
from vreact.v import ABSTAIN_LEVELS as LEVELS
from vreact.verify.gates import build_gate

PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@given(st.lists(st.integers(min_value=-3, max_value=5), max_size=30), st.integers(1, 10))
def test_a_budget_never_decreases(amounts, limit):
    b = Budget("r1", limit)
    previous = b.used
    for amount in amounts:
        if amount < 0:
            with pytest.raises(ValueError):
                b.spend(amount)
        else:
            b.spend(amount)
        assert b.used >= previous and b.left == max(limit - b.used, 0)
        previous = b.used
    budgets = Budgets(BudgetLimits(r1=limit))
    assert budgets.r1("s1") is budgets.r1("s1")  # one budget per component, never re-created
    assert budgets.r1("s1").limit == limit and budgets.of("R1", "s1") is budgets.r1("s1")


def step_outputs(task):
    pid = str(task.question_decomposition[-1].paragraph_support_idx)
    ids = [str(p.idx) for p in task.paragraphs]
    words = task.paragraphs[0].paragraph_text.split()[:12]
    return st.one_of(
        st.sampled_from(words).map(search),
        st.sampled_from([*ids, "99", "x"]).map(read),
        st.builds(
            lambda a, e: finish(a, e),
            st.sampled_from([task.answer, *words, "", "I don't know"]),
            st.lists(st.sampled_from([pid, *ids, "42"]), max_size=3),
        ),
        st.sampled_from(["no reason", ""]).map(abstain),
        st.sampled_from(["prose, not JSON", '{"action": "fly"}', "{"]),
        st.just(ModelError("HTTP 500")),
    )


@pytest.fixture(scope="module")
def task(full_tasks):
    return next(t for t in full_tasks if t.answerable)


@PROPS
@given(data=st.data(), config=st.sampled_from(["N", "VG"]))
def test_every_attempt_ends_in_exactly_one_outcome_and_answers_only_through_verdicts(
    data, config, task, spec, verifiers, roles
):
    script = data.draw(st.lists(step_outputs(task), max_size=40))
    with TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "vreact.db")
        _, row, _ = attempt(builtin_configs()[config], task, script, store, spec, verifiers, roles)
        rows = list(store.query("select * from attempts"))
        assert len(rows) == 1 and row["outcome"] in ("answer", "abstain", "crash")
        if row["outcome"] == "abstain":
            assert row["abstain_level"] in LEVELS and row["abstain_component"] and row["abstain_cause"]
            assert row["error"] is None and row["answer"] is None
        elif row["outcome"] == "crash":  # only from a failure the script injected
            assert row["abstain_level"] is None
            assert (row["crash_kind"], row["error"]) in (
                ("model", "ModelError: HTTP 500"),
                (
                    "script",
                    f"MockScriptExhausted: mock/scripted: the script ran out after {len(script)} output(s)",
                ),
            ), row
        else:
            assert row["abstain_level"] is None and row["error"] is None
        vs = list(store.query("select * from verdicts order by seq"))
        if config == "VG" and row["outcome"] == "answer":
            # fail closed: the final answer passed every applicable R1 and R3 gate
            final = vs[-1]["artifact_hash"]
            accepted = {
                (v["level"], v["check_name"])
                for v in vs
                if v["artifact_hash"] == final and v["decision"] == "accept"
            }
            needed = {("L3", g.name) for g in verifiers.R1.gates if build_gate(g.name).kinds & {"answer"}}
            needed |= {("L1", g.name) for g in verifiers.R3.gates if build_gate(g.name).kinds & {"answer"}}
            assert needed <= accepted
            assert not any(v["artifact_hash"] == final and v["decision"] == "reject" for v in vs)
        # budgets only count up: what is left never grows, per level and component
        for key in {(v["level"], v["component"]) for v in vs}:
            lefts = [
                v["budget_left"]
                for v in vs
                if (v["level"], v["component"]) == key and v["decision"] == "reject"
            ]
            assert lefts == sorted(lefts, reverse=True)
        # the failure index is written by reject verdicts only, each with its row there
        by_id = {v["id"]: v for v in vs}
        for r in store.query("select * from failures"):
            v = by_id[r["verdict_id"]]
            assert v["decision"] == "reject" and v["attempt_id"] == r["attempt_id"]
            assert (v["level"], v["component"]) == (r["level"], r["component"])
        n_rejects = sum(v["decision"] == "reject" for v in vs)
        assert len(list(store.query("select id from failures"))) == n_rejects
        # the ledger: one unit per accepted subtask and the final answer, each tied to the accept
        # that let it through (none in N, where no verifier runs), and nothing for a rejected one
        units = list(store.query("select * from ledger order by id"))
        if row["outcome"] == "answer":
            assert [u["kind"] for u in units] == ["unit", "answer"]
            assert json.loads(units[-1]["input"])["answer"] == row["answer"]
        for u in units:
            assert u["attempt_id"] == row["id"]
            if config == "N":
                assert u["verdict_id"] is None
            else:
                v = by_id[u["verdict_id"]]
                assert (v["decision"], v["component"], v["artifact_hash"]) == (
                    "accept",
                    u["component"],
                    u["artifact_hash"],
                )


@PROPS
@given(
    marker=st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZ", min_size=12, max_size=20),
    wrong=st.sampled_from(["Zanzibar", "I don't know", ""]),
)
def test_no_earlier_try_leaks_into_a_later_prompt(marker, wrong, task, spec, verifiers, roles):
    """A marker the model writes in its first try (in a search its later steps are shown)
    never reaches a later try's prompt, while that try's failure entry does."""
    first = solve(task, answer=wrong, thought=f"MARK-{marker}")
    first[0] = search(f"{task.question} MARK-{marker}", f"MARK-{marker}")
    script = first + solve(task)
    with TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "vreact.db")
        _, row, model = attempt(
            builtin_configs()["VG"], task, MockModel(script), store, spec, verifiers, roles
        )
        assert row["outcome"] == "answer"
        first_try, later = model.calls[: len(first)], model.calls[len(first) :]
        assert any(f"MARK-{marker}" in m["content"] for call in first_try for m in call)
        [failure] = store.failures(row["id"])
        for call in later:
            text = json.dumps(call)
            assert f"MARK-{marker}" not in text
            assert failure["cause"] in text
            assert spec.requirements.task not in text  # never L1's requirements


def test_assembler_refuses_reads_outside_a_role_row(roles, store):
    assembler = ContextAssembler(roles, store)
    scope = Scope(1, ("executor.s1",), {"subtask.objective": "q", "l1": "the requirements"})
    context = assembler.build("executor", scope)
    assert "l1" not in context and set(context) <= set(roles.roles["executor"].reads)
    for role, field in (
        ("executor", "l1"),
        ("executor", "l2"),
        ("judge", "try.steps"),
        ("planner", "try.steps"),
        ("controller", "l1"),
        ("nobody", "l1"),
    ):
        with pytest.raises(ContextSchemaError):
            assembler.read(role, field, scope)
    assert assembler.read("executor", "subtask.objective", scope) == "q"


@PROPS
@given(
    fields=st.lists(
        st.sampled_from(
            [
                "l1",
                "l2",
                "tools",
                "failures.l2",
                "subtask.objective",
                "subtask.contract",
                "try.steps",
                "artifact",
                "state",
                "paired_level",
            ]
        ),
        unique=True,
    )
)
def test_no_assembled_context_holds_anything_outside_its_row(fields, roles, store):
    assembler = ContextAssembler(roles, store)
    scope = Scope(1, ("executor.s1",), {f: f"value of {f}" for f in fields})
    for role, row in roles.roles.items():
        assert set(assembler.build(role, scope)) <= set(row.reads)


# --- the whole V ----------------------------------------------------------------------------

NISSEDAL = "2hop__269805_135710"


def whole_v_scripts(task):
    ids = [str(p.idx) for p in task.paragraphs]
    steps = st.one_of(
        st.sampled_from(["Nissedal", "Norway", "named after", "country"]).map(search),
        st.sampled_from(["10", "6", *ids[:3]]).map(read),
        st.builds(
            finish,
            st.sampled_from(["Norway", "north", "Tveitsund", "Oslo", ""]),
            st.lists(st.sampled_from(["10", "6", "0"]), max_size=2),
        ),
        st.sampled_from(["no idea"]).map(abstain),
        st.just("prose, not JSON"),
    )
    good = {
        "subtasks": [
            {
                "id": "s1",
                "objective": "Which country is Nissedal in?",
                "depends_on": [],
                "answer_type": "place",
            },
            {"id": "s2", "objective": "What is #1 named after?", "depends_on": ["s1"], "answer_type": "any"},
        ]
    }
    plans = st.sampled_from(
        [
            good,
            good,
            "prose",
            {"subtasks": []},
            {
                "subtasks": [
                    {"id": "s1", "objective": "Where is #2?", "depends_on": [], "answer_type": "place"}
                ]
            },
        ]
    )
    judgements = st.sampled_from(
        [
            {"reason": "ok", "decision": "accept", "confidence": 0.9},
            {"reason": "no", "decision": "reject", "confidence": 0.9},
            {"reason": "hm", "decision": "accept", "confidence": 0.3},
            "garbage",
        ]
    )
    return st.fixed_dictionaries(
        {
            "planner": st.lists(plans, max_size=4),
            "executor": st.lists(steps, max_size=30),
            "judge": st.lists(judgements, max_size=12),
        }
    )


@PROPS
@given(data=st.data(), config=st.sampled_from(["NP", "VPG", "VPGJ"]))
def test_whole_v_invariants(data, config, full_tasks, spec, verifiers, roles):
    """Under random scripts for every role: judges only see gate-cleared artifacts, and the
    executor never reads L1's requirements, the plan, another subtask's evidence or an
    earlier try's transcript."""
    from tests.helpers import by_role, role_of

    task = next(t for t in full_tasks if t.id == NISSEDAL)
    scripts = data.draw(whole_v_scripts(task))
    # each executor step carries a unique marker in its thought (never in what it cites)
    scripts["executor"] = [
        {**s, "thought": f"MK{i}Z"} if isinstance(s, dict) else f"{s} MK{i}Z"
        for i, s in enumerate(scripts["executor"])
    ]
    model = by_role(**scripts)
    with TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "vreact.db")
        _, row, _ = attempt(builtin_configs()[config], task, model, store, spec, verifiers, roles)
        assert row["outcome"] in ("answer", "abstain", "crash")
        if row["outcome"] == "crash":  # only a script running out: these scripts inject no error
            assert row["crash_kind"] == "script" and "script ran out" in row["error"], row
        vs = list(store.query("select * from verdicts order by seq"))
        for v in vs:
            if v["source"] == "judge":
                assert any(
                    g["source"] == "gate"
                    and g["decision"] == "accept"
                    and g["seq"] < v["seq"]
                    and (g["level"], g["component"], g["artifact_hash"])
                    == (v["level"], v["component"], v["artifact_hash"])
                    for g in vs
                ), v
    executor_calls = [c for c in model.calls if role_of(c) == "executor"]
    paragraphs = {str(p.idx): p.paragraph_text for p in task.paragraphs}
    try_start = 0
    for i, call in enumerate(executor_calls):
        text = json.dumps(call)
        if len(call) == 2:  # a fresh try: system + objective
            try_start = i
        own = {f"MK{j}Z" for j in range(try_start, i)}
        found = set(re.findall(r"MK\d+Z", text))
        assert found <= own, (i, found - own)  # nothing from an earlier try or another subtask
        assert spec.requirements.task not in text  # never L1's requirements
        assert '"subtasks"' not in text and "depends_on" not in text  # never the plan
        header = call[1]["content"]
        assert not any(p[:60] in header for p in paragraphs.values())  # no evidence in its brief


@PROPS
@given(data=st.data(), config=st.sampled_from(["N", "NP", "VG", "VPGJ"]))
def test_no_role_reads_another_attempts_ledger(data, config, full_tasks, spec, verifiers, roles, monkeypatch):
    """Two attempts in one store under random scripts: whatever a role reads of the ledger (the
    controller: the ascent's units) is its own attempt's, and an attempt's prompts hold nothing
    the other attempt's model wrote."""
    from tests.helpers import by_role

    task = next(t for t in full_tasks if t.id == NISSEDAL)
    reads: list[tuple[int, list[dict]]] = []
    read = ContextAssembler.read

    def spying(self, role, name, scope):
        value = read(self, role, name, scope)
        if name == "ledger":
            reads.append((scope.attempt_id, value))
        return value

    monkeypatch.setattr(ContextAssembler, "read", spying)
    with TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "vreact.db")
        models = []
        for k in range(2):
            scripts = data.draw(whole_v_scripts(task))
            scripts["executor"] = [  # each attempt's steps carry its own marker
                {**s, "input": f"{s['input']} ATT{k}X"}
                if isinstance(s, dict) and s["action"] == "finish"
                else s
                for s in scripts["executor"]
            ]
            _, row, model = attempt(
                builtin_configs()[config], task, by_role(**scripts), store, spec, verifiers, roles, seed=k
            )
            models.append((row["id"], model))
    for attempt_id, rows in reads:
        assert all(r["attempt_id"] == attempt_id for r in rows)
    for k, (_, model) in enumerate(models):
        other = f"ATT{1 - k}X"
        assert not any(other in m["content"] for call in model.calls for m in call)
