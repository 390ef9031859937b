"""vreact/v.py, the one definition of the V, agrees with what reads it."""

from __future__ import annotations

from vreact.budget import Budgets
from vreact.config import BudgetLimits
from vreact.spec import VerifierSet
from vreact.v import CONFIGURED, LEVELS, PAIRS, V
from vreact.verify.gates import _prompts


def test_every_row_names_a_budget_a_judge_prompt_and_a_level_that_exist():
    budgets = Budgets(BudgetLimits(plan=4, r1=5, r2=6, r3=7, steps=8))
    limits = {"plan": 4, "r1": 5, "r2": 6, "r3": 7, "steps": 8}
    for row in V.values():
        assert row.level in LEVELS
        assert budgets.of(row.id, "executor.s1").limit == limits[row.budget]
        assert row.judge is None or row.judge in _prompts.WHAT
        assert row.abstain in (None, row.level)  # a spent budget abstains naming its own level
    assert set(CONFIGURED) <= set(VerifierSet.model_fields)


def test_the_drawn_v_pairs_each_level_with_its_verifier():
    assert [lv for lv, *_ in PAIRS] == list(LEVELS)
    assert all(V[verifier].level == level for level, _, verifier, _ in PAIRS)
