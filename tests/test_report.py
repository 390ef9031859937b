"""The report: outcome accounting and corrections, computed from records."""

from __future__ import annotations

from tests.helpers import attempt, solve
from vreact.config import BUILTIN_CONFIGS
from vreact.report import compute, corrections


def v(seq, decision, h, source="gate", component="executor.s1"):
    return {"seq": seq, "decision": decision, "artifact_hash": h, "source": source, "component": component}


def test_a_correction_is_a_different_artifact_accepted_after_rejection():
    assert corrections([v(0, "reject", "a", "guard"), v(1, "accept", "b")]) == {"guard": 1}
    # credited to the last rejection before the accept
    assert corrections([v(0, "reject", "a", "guard"), v(1, "reject", "c", "judge"), v(2, "accept", "b")]) == {
        "judge": 1
    }


def test_no_correction_without_rejection_or_for_the_same_artifact():
    assert corrections([v(0, "accept", "a")]) == {}
    assert corrections([v(0, "reject", "a"), v(1, "accept", "a")]) == {}
    # finally rejected: not a correction
    assert corrections([v(0, "reject", "a"), v(1, "accept", "b"), v(2, "reject", "b")]) == {}


def test_accounting_adds_up(full_tasks, store, spec, verifiers, roles):
    answerable = [t for t in full_tasks if t.answerable][:2]
    unanswerable = next(t for t in full_tasks if not t.answerable)
    vg = BUILTIN_CONFIGS["VG"]
    attempt(vg, answerable[0], solve(answerable[0]), store, spec, verifiers, roles)  # correct
    attempt(vg, answerable[1], [], store, spec, verifiers, roles)  # crash: empty script
    attempt(vg, unanswerable, [], store, spec, verifiers, roles)  # crash
    report = compute(store, run_id=None)
    # each helper call makes its own run; gather all of them
    rows = [compute(store, r["id"])["configs"]["VG"] for r in store.query("select id from runs")]
    assert [r["executed"] for r in rows] == [1, 1, 1]
    assert [(r["answered"], r["crash"]) for r in rows] == [(1, 0), (0, 1), (0, 1)]
    assert rows[0]["correct"] == 1 and rows[0]["em"] == 1.0 and rows[0]["coverage"] == 1.0
    assert rows[1]["scoreable"] == 0 and rows[1]["coverage"] is None
    assert report["run"] == 3
