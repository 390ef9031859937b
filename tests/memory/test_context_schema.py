"""The per-role context schema (memory/roles.yaml), checked: each row's reads are served and
nothing else is, a value from an origin its row never reads is refused wherever it sits, every
row is used by a real call site, and the ledger carries what the controller reads back."""

from __future__ import annotations

import json

import pytest

from tests.helpers import (
    attempt,
    by_role,
    contexts_built,
    criticised,
    finish,
    judged,
    managed,
    plan,
    read,
    search,
)
from vreact.config import Configuration
from vreact.controller import Recorder
from vreact.memory import ContextAssembler, ContextSchemaError, Scope, Tagged, tag
from vreact.qa.gates import Artifact
from vreact.spec import CONTEXT_FIELDS, ORIGINS

ROLES = ("planner", "designer", "executor", "judge", "critic", "context_manager", "tester", "controller")
# 2hop__269805_135710: Nissedal -> Norway (paragraph 10) -> named after the north (paragraph 6)
PLAN = plan(
    ("s1", "Which country is Nissedal in?", [], "place"), ("s2", "What is #1 named after?", ["s1"], "any")
)
SCRIPTS = {
    "planner": [PLAN],
    "executor": [
        *(search("Nissedal country"), read("10"), finish("Norway", ["10"])),
        *(search("Norway name"), read("6"), finish("north", ["6"])),
    ],
    "judge": [judged()] * 8,
    "critic": [criticised()] * 8,
    "context_manager": [
        managed("continue", [("Nissedal is in Norway", ["10"])]),
        managed("continue", [("Nissedal is in Norway", ["10"])]),
        managed("success", [("Nissedal is in Norway", ["10"])]),
        managed("continue", [("Norway is named after the north", ["6"])]),
        managed("continue", [("Norway is named after the north", ["6"])]),
        managed("success", [("Norway is named after the north", ["6"])]),
    ],
}
EVERYTHING = Configuration(
    name="all", planner=True, gates=True, judges=True, critic=True, context_manager=True, budgets={"r1": 1}
)


def test_the_shipped_rows_are_exactly_the_roles_that_read(roles):
    assert sorted(roles.roles) == sorted(ROLES)
    for row in roles.roles.values():
        assert row.never_reads and set(row.never_reads) <= set(ORIGINS)
        assert "gold" in row.never_reads and "transcripts" in row.never_reads


@pytest.mark.parametrize("role", ROLES)
def test_a_row_serves_its_reads_and_refuses_everything_else(role, roles, store):
    assembler = ContextAssembler(roles, store)
    row = roles.roles[role]
    given = {name: [f"value of {name}"] for name in CONTEXT_FIELDS if name not in ("ledger",)}
    scope = Scope(1, ("executor.s1",), given)
    built = assembler.build(role, scope)
    assert set(built) == set(row.reads)  # each read served (memory fields from the store)
    for name in set(CONTEXT_FIELDS) - set(row.reads):
        with pytest.raises(ContextSchemaError, match="may not read"):
            assembler.read(role, name, scope)


def planted_in(field: str, value, store, monkeypatch) -> dict:
    """Sources that put ``value`` in ``field``: as the controller's value, or in the store's row
    that the assembler reads the field from (the ledger, the failure index)."""
    row = {"attempt_id": 1, "component": "executor.s1", "level": "L2", "verifier": "R2"}
    row |= {"check_name": "supported", "cause": "unsupported", "detail": value, "input": value}
    row |= {"artifact": value}
    if field == "ledger":
        monkeypatch.setattr(store, "ledger", lambda *a, **k: [row])
        return {}
    if field.startswith("failures."):
        monkeypatch.setattr(store, "failures", lambda *a, **k: [{**row, "id": 1}])
        return {}
    return {field: value}


@pytest.mark.parametrize("role", ROLES)
def test_a_value_from_an_excluded_origin_fails_closed_inside_an_allowed_field(
    role, roles, store, monkeypatch
):
    """A string tagged with an origin the row never reads is refused wherever it is planted in a
    field the row may read: at the top, in a list, as a dict value or key, in an object's field."""
    assembler = ContextAssembler(roles, store)
    row = roles.roles[role]
    for field in row.reads:
        for origin in row.never_reads:
            planted = tag("Norway", origin)
            inside = Artifact("answer", "q", answer=planted)  # a field of an object
            for value in (planted, ["fine", planted], {"step": planted}, {planted: 1}, inside):
                scope = Scope(1, ("executor.s1",), planted_in(field, value, store, monkeypatch))
                with pytest.raises(ContextSchemaError, match=f"value from {origin!r}"):
                    assembler.read(role, field, scope)
        # an untagged value, or one from an origin the row reads, passes
        fine = ["fine", tag("x", CONTEXT_FIELDS[field][1])]
        assert assembler.read(
            role, field, Scope(1, ("executor.s1",), planted_in(field, fine, store, monkeypatch))
        )


def test_the_gold_answer_is_tagged_and_refused_in_any_prompt(task_nissedal, roles, store):
    assert isinstance(task_nissedal.answer, Tagged) and task_nissedal.answer.origin == "gold"
    assert all(isinstance(a, Tagged) for a in task_nissedal.answer_aliases)
    assert all(isinstance(i, Tagged) for i in task_nissedal.supporting_ids)
    assert task_nissedal.answer == "north" and task_nissedal.record()["answer"] == "north"
    assembler = ContextAssembler(roles, store)
    leak = Scope(1, ("executor.s1",), {"subtask.objective": f"{task_nissedal.question}", "try.steps": []})
    assembler.build("executor", leak)  # the question is not gold
    leak.sources["try.steps"] = [("thought", task_nissedal.answer)]
    with pytest.raises(ContextSchemaError, match="'gold'"):
        assembler.build("executor", leak)


def test_every_row_is_read_through_the_assembler_by_a_real_attempt(
    task_nissedal, store, spec, verifiers, roles, monkeypatch
):
    """A planned, gated, judged DeReAct attempt reads each role's context through its row, and
    only the fields each call site asks for."""
    built = contexts_built(monkeypatch)
    outcome, _, _ = attempt(EVERYTHING, task_nissedal, by_role(**SCRIPTS), store, spec, verifiers, roles)
    assert outcome.kind == "answer" and outcome.answer == "north", outcome
    # the tester's row is read by a code attempt with agreement (tests/code/test_candidates.py)
    assert set(built) == set(ROLES) - {"tester"}
    for role, fields in built.items():
        assert fields <= set(roles.roles[role].reads), role
    assert built["designer"] == {"l1", "l2", "subtask.checks"}
    assert built["controller"] == {"ledger"}


def test_the_ledger_carries_each_accepted_unit_whole(task_nissedal, store, spec, verifiers, roles):
    """One row per accepted component (the plan, each subtask, the chain, the final answer) with everything
    its gates read, tied to the accept verdict that let it through; no row for a gate accept."""
    _, row, _ = attempt(EVERYTHING, task_nissedal, by_role(**SCRIPTS), store, spec, verifiers, roles)
    units = list(store.query("select * from ledger where attempt_id = ? order by id", [row["id"]]))
    assert [(u["kind"], u["component"], u["slot"]) for u in units] == [
        ("plan", "planner", ""),
        ("unit", "executor.p1.s1", "s1"),
        ("unit", "executor.p1.s2", "s2"),
        ("chain", "planner", ""),
        ("answer", "answer", ""),
    ]
    s1 = json.loads(units[1]["input"])
    assert (s1["answer"], s1["evidence"], s1["searches"]) == ("Norway", ["10"], 1)
    assert "Tveitsund is a village in Nissedal" in s1["cited"]["10"]
    assert set(s1["retrieved"]) >= {"10"}
    final = json.loads(units[-1]["input"])
    assert (final["answer"], final["evidence"]) == ("north", ["10", "6"])
    accepts = {v["id"]: v for v in store.query("select * from verdicts where decision = 'accept'")}
    for u in units:  # the judge's accept (the last of its verifier) let each through
        v = accepts[u["verdict_id"]]
        assert (v["component"], v["source"], v["artifact_hash"]) == (
            u["component"],
            "judge",
            u["artifact_hash"],
        )
    assert len(units) < len(accepts)  # gate accepts are verdicts only


@pytest.mark.parametrize("config", ["NP", "VPG"])
def test_a_unit_missing_from_the_ledger_gives_the_dependent_subtask_nothing(
    config, task_nissedal, store, spec, verifiers, roles, monkeypatch
):
    """The ``#1`` substitution is read from the ledger: delete s1's unit as soon as it is written
    and s2's objective keeps its reference; with the row kept, s2 reads Norway there."""
    planned = Configuration(name=config, planner=True, gates=config == "VPG")
    seen: dict[bool, list[str]] = {}
    unit = Recorder.unit
    for delete in (False, True):

        def deleting(self, kind, verifier, component, artifact, slot="", delete=delete):
            unit(self, kind, verifier, component, artifact, slot)
            if delete and slot == "s1":  # from the file, and from what the store keeps of it
                self.store.flush()
                self.store.db.execute("delete from ledger where slot = 's1'")
                self.store.db.conn.commit()
                kept = self.store._units[self.attempt_id]
                kept[:] = [u for u in kept if u["slot"] != "s1"]

        monkeypatch.setattr(Recorder, "unit", deleting)
        scripts = {k: v for k, v in SCRIPTS.items() if k in ("planner", "executor")}
        _, _, model = attempt(planned, task_nissedal, by_role(**scripts), store, spec, verifiers, roles)
        seen[delete] = [c[1]["content"] for c in model.calls if c[0]["content"].startswith("You answer")]
    assert any("What is Norway named after?" in p for p in seen[False])
    assert not any("Norway named" in p for p in seen[True])
    assert any("What is #1 named after?" in p for p in seen[True])


def test_a_final_unit_missing_from_the_ledger_is_a_crash_not_another_answer(
    task_nissedal, store, spec, verifiers, roles, monkeypatch
):
    """NP's final answer is read from the final subtask's unit: without it the attempt crashes
    saying so, and never answers with s1's Norway."""
    from vreact.experiment import RAISE_INTERNAL

    monkeypatch.setenv(RAISE_INTERNAL, "0")  # the crash is the record under test
    unit = Recorder.unit

    def losing_s2(self, kind, verifier, component, artifact, slot=""):
        if slot != "s2":
            unit(self, kind, verifier, component, artifact, slot)

    monkeypatch.setattr(Recorder, "unit", losing_s2)
    scripts = {k: v for k, v in SCRIPTS.items() if k in ("planner", "executor")}
    planned = Configuration(name="NP", planner=True)
    outcome, row, _ = attempt(planned, task_nissedal, by_role(**scripts), store, spec, verifiers, roles)
    assert (outcome.kind, outcome.crash_kind) == ("crash", "internal")
    assert "no accepted unit of executor.p1.s2, the final subtask" in outcome.error
    assert row["answer"] is None


def test_an_attacked_copys_added_ids_and_target_are_refused_in_any_prompt(full_tasks, roles, store):
    from vreact.qa.attacks import Attack, with_attacks

    [_, copy] = with_attacks(full_tasks[1:2], [Attack(kind="inject", style="override")], full_tasks)
    assert all("attack" in row.never_reads for row in roles.roles.values())
    assembler = ContextAssembler(roles, store)
    for leaked in (copy.attack.target, copy.attack.added[0]):
        for role, field in (("executor", "try.steps"), ("judge", "artifact"), ("critic", "proposal")):
            leak = Scope(1, ("executor.s1",), {field: [("thought", leaked)]})
            with pytest.raises(ContextSchemaError, match="'attack'"):
                assembler.read(role, field, leak)
