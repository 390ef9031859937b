"""Properties of DeReAct's four configurations over random scripts of every role: each attempt
ends in exactly one outcome, and no role's prompt holds what its row of memory/roles.yaml
forbids (the critic and the context manager never see the brain's window; no role is given the
task's answer, aliases, supporting labels, decomposition, or whether the attempt is right)."""

from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import attempt, criticised, managed, role_of
from tests.properties.test_properties import step_outputs
from vreact.config import Configuration
from vreact.model import MockModel
from vreact.records import Store, read_run

PROPS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
BUDGETS = {"step_cap": 8, "steps": 8, "r1": 1}
CONFIGS = {
    "react": Configuration(name="react", budgets=BUDGETS),
    "dereact": Configuration(name="dereact", critic=True, context_manager=True, budgets=BUDGETS),
    "ablation_a": Configuration(name="ablation_a", context_manager=True, budgets=BUDGETS),
    "ablation_b": Configuration(name="ablation_b", critic=True, budgets=BUDGETS),
}


@pytest.fixture(scope="module")
def task(full_tasks):
    return next(t for t in full_tasks if t.answerable and len(t.question_decomposition) == 2)


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
@given(data=st.data(), name=st.sampled_from(sorted(CONFIGS)))
def test_one_outcome_and_every_role_within_its_row(data, name, task, spec, verifiers, roles):
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
        [a] = read_run(store).attempts
    forbidden = [task.answer, *task.answer_aliases, *(h.question for h in task.question_decomposition)]
    forbidden = [f for f in forbidden if len(f) > 3 and f not in task.question]
    for call in a.calls:
        prompt = "\n".join(m["content"] for m in call.messages or [])
        role = call.role
        if role in ("critic", "context_manager"):
            assert "Your steps so far" not in prompt  # never the brain's window
        if role == "context_manager":
            assert "Steps so far" not in prompt  # nor the raw steps
        if role == "critic" and name == "dereact":
            assert "Steps so far" not in prompt  # with a CM the critic reads the State, not the steps
        assert "is_supporting" not in prompt and "answer_aliases" not in prompt
        assert all(f not in prompt for f in forbidden if f not in _retrieved_text(task, prompt)), role
        assert "correct" not in prompt.lower() or role == "executor"


def _retrieved_text(task, prompt):
    """Paragraph text a prompt shows (a paragraph may state the answer: that is evidence)."""
    return "".join(p.paragraph_text + p.title for p in task.paragraphs if p.paragraph_text[:40] in prompt)
