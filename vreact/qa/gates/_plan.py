"""Plan gates (L2): the plan parses, is a DAG whose references resolve, has one final
subtask, a bounded size, and a check (an answer type) on every subtask."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vreact.qa.gates._artifact import Plan, PlanArtifact, reference_ids
from vreact.verify.gates._registry import Check, GateResult, accept, gate, reject

if TYPE_CHECKING:
    import networkx as nx

# networkx (0.2 s) is imported when a plan is checked, not when the gates register: vreact
# validate and vreact --help do not need it.


def _plan(a: PlanArtifact) -> Plan:
    return Plan.model_validate(a.plan)


def plan_graph(plan: Plan) -> nx.DiGraph:
    """Subtasks as nodes, an edge from each dependency (declared or referenced) to its user."""
    import networkx as nx

    ids = [s.id for s in plan.subtasks]
    g = nx.DiGraph()
    g.add_nodes_from(ids)
    for s in plan.subtasks:
        for dep in [*s.depends_on, *reference_ids(s.objective, ids)]:
            if dep is not None:
                g.add_edge(dep, s.id)
    return g


@gate("plan_parses", kinds=("plan",))
def plan_parses() -> Check:
    """The plan is JSON of the plan schema, with unique subtask ids."""

    def check(a: PlanArtifact) -> GateResult:
        if not isinstance(a.plan, dict):
            return reject("format", "the plan is not a JSON object")
        try:
            plan = _plan(a)
        except ValueError as e:
            return reject("format", str(e).splitlines()[0][:200])
        ids = [s.id for s in plan.subtasks]
        if len(set(ids)) != len(ids):
            return reject("duplicate_ids", f"subtask ids repeat: {ids}")
        return accept()

    return check


@gate("plan_dag", kinds=("plan",))
def plan_dag() -> Check:
    """Every dependency and #reference names an earlier subtask, and there is no cycle."""

    def check(a: PlanArtifact) -> GateResult:
        import networkx as nx

        plan = _plan(a)
        ids = [s.id for s in plan.subtasks]
        for i, s in enumerate(plan.subtasks):
            refs = reference_ids(s.objective, ids)
            if None in refs:
                return reject("dangling_reference", f"{s.id} refers to a subtask that does not exist")
            unknown = [d for d in s.depends_on if d not in ids]
            if unknown:
                return reject("dangling_reference", f"{s.id} depends on unknown {unknown}")
            later = [d for d in [*s.depends_on, *refs] if d is not None and ids.index(d) >= i]
            if later:
                return reject("order", f"{s.id} depends on {later}, which do not come before it")
        if not nx.is_directed_acyclic_graph(plan_graph(plan)):
            return reject("cycle", "the dependencies form a cycle")
        return accept()

    return check


@gate("plan_single_final", kinds=("plan",))
def plan_single_final() -> Check:
    """Exactly one subtask is final: every other one feeds a later subtask."""

    def check(a: PlanArtifact) -> GateResult:
        g = plan_graph(_plan(a))
        sinks = [n for n in g.nodes if g.out_degree(n) == 0]
        if len(sinks) != 1:
            return reject("final_subtask", f"{len(sinks)} subtasks lead nowhere ({sinks}); one must be final")
        return accept()

    return check


@gate("plan_size", kinds=("plan",))
def plan_size(max_subtasks: int = 5) -> Check:
    """The plan has at most ``max_subtasks`` subtasks."""

    def check(a: PlanArtifact) -> GateResult:
        n = len(_plan(a).subtasks)
        if n > max_subtasks:
            return reject("too_many_subtasks", f"{n} subtasks; at most {max_subtasks}")
        return accept()

    return check


@gate("plan_checked", kinds=("plan",))
def plan_checked() -> Check:
    """Every subtask is a question with an answer type R1 can check."""

    def check(a: PlanArtifact) -> GateResult:
        for s in _plan(a).subtasks:
            if len(s.objective.split()) < 2:
                return reject("unchecked_subtask", f"{s.id}'s objective is not a question")
        return accept()

    return check
