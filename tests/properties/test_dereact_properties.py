"""Properties of DeReAct's four configurations over random scripts of every role: each attempt
ends in exactly one outcome, and no role's prompt holds what its row of memory/roles.yaml
forbids (the critic and the context manager never see the brain's window; no role is given the
task's aliases, supporting labels, decomposition, or whether the attempt is right)."""

from __future__ import annotations

import re
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import attempt, criticised, managed, role_of
from tests.properties.test_properties import step_outputs
from vreact.config import Configuration
from vreact.diagnosis import diagnose
from vreact.model import MockModel
from vreact.qa.attacks import Attack, with_attacks
from vreact.records import Store, read_run

PROPS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
BUDGETS = {"step_cap": 8, "steps": 8, "r1": 1}
CONFIGS = {
    "react": Configuration(name="react", budgets={"step_cap": 8, "steps": 8}),  # one try: none re-tries
    "dereact": Configuration(name="dereact", critic=True, context_manager=True, budgets=BUDGETS),
    "ablation_a": Configuration(name="ablation_a", context_manager=True, budgets=BUDGETS),
    "ablation_b": Configuration(name="ablation_b", critic=True, budgets=BUDGETS),
}


@pytest.fixture(scope="module")
def tasks(full_tasks):
    """A two-hop task, and its copies under an injected override and a poisoned bridge."""
    task = next(t for t in full_tasks if t.answerable and len(t.question_decomposition) == 2)
    attacks = [Attack(kind="inject", style="override"), Attack(kind="poison", target="bridge", k=2)]
    return with_attacks([task], attacks, full_tasks)


def critic_outputs():
    return st.one_of(
        st.builds(
            criticised, st.sampled_from(["accept", "reject"]), st.sampled_from([0.3, 0.9]), st.just("fb")
        ),
        st.just("not json"),
    )


def cm_outputs(ids):
    facts = st.lists(
        st.tuples(st.just("a fact"), st.lists(st.sampled_from([*ids, "77"]), max_size=2)), max_size=2
    )
    return st.one_of(
        st.builds(managed, st.sampled_from(["success", "continue"]), facts, st.just("r")), st.just("{")
    )


@PROPS
@given(data=st.data(), name=st.sampled_from(sorted(CONFIGS)), which=st.sampled_from([0, 1, 2]))
def test_one_outcome_and_every_role_within_its_row(data, name, which, tasks, spec, verifiers, roles):
    task = tasks[which]
    ids = [str(p.idx) for p in task.paragraphs]
    scripts = {
        "executor": data.draw(st.lists(step_outputs(task), max_size=12)),
        "critic": data.draw(st.lists(critic_outputs(), min_size=12, max_size=12)),
        "context_manager": data.draw(st.lists(cm_outputs(ids), min_size=12, max_size=12)),
    }
    its = {role: iter(outputs) for role, outputs in scripts.items()}

    def reply(messages):
        return next(its[role_of(messages)], "out of script")

    with TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "vreact.db")
        _, row, _ = attempt(CONFIGS[name], task, MockModel(reply), store, spec, verifiers, roles)
        assert len(list(store.query("select * from attempts"))) == 1
        assert row["outcome"] in ("answer", "abstain", "crash")
        if row["outcome"] == "crash":  # only what the script injected
            assert row["crash_kind"] == "model", row
        judge = MockModel(["{}"], name="mock/judge")
        diagnose(Path(tmp), judge, sample=1)  # diagnose's judge reads the trajectory too
        [a] = read_run(store).attempts
    # what only the gold record holds: the decomposition's hop questions and its labels (the
    # answer's text itself may stand in a paragraph or in the agent's own proposal)
    forbidden = [h.question for h in task.question_decomposition]
    labels = ("is_supporting", "answer_aliases", "paragraph_support_idx", "question_decomposition")
    if task.attack is not None:  # nor which paragraphs were added, by whom, for what
        # the attack's record, by its labels (its bare list of added ids, '["7"]', is also what a
        # finish citing paragraph 7 reads as, which a context manager is rightly shown)
        forbidden += [task.id, task.attack.name]
        labels += ("attack_kind", "base_id", '"added"')
    for call in a.calls:
        prompt = "\n".join(m["content"] for m in call.messages or [])
        role = call.role
        if role in ("critic", "context_manager", "diagnosis"):
            assert "Your steps so far" not in prompt  # never the brain's window
        if role == "context_manager":
            assert "Steps so far" not in prompt  # nor the raw steps
        if role == "critic" and name == "dereact":
            assert "Steps so far" not in prompt  # with a CM the critic reads the State, not the steps
        assert not any(x in prompt for x in (*forbidden, *labels)), role
        # nor its correctness (the word, not an injected paragraph's "Correction: the answer is ...")
        assert "silent_error" not in prompt and not re.search(r"\bcorrect\b", prompt, re.I)
