"""Integration gates (R2): the assembled chain against the plan (L2)."""

from __future__ import annotations

from vreact.metrics import normalize_answer
from vreact.qa.gates._answer import support_score
from vreact.qa.gates._artifact import ChainArtifact
from vreact.verify.gates._registry import Check, GateResult, accept, gate, reject


@gate("chain_bridges", kinds=("chain",))
def chain_bridges(min_overlap: float = 0.5) -> Check:
    """The answer accepted at a subtask appears in the evidence used by each subtask that
    depends on it (the bridge entity carries over)."""

    def check(a: ChainArtifact) -> GateResult:
        by_id = {s.id: s for s in a.steps}
        for step in a.steps:
            for dep in step.depends_on:
                upstream = by_id.get(dep)
                if upstream is None:
                    return reject("broken_chain", f"{step.id} depends on {dep}, which has no result")
                best = max((support_score(upstream.answer, t) for t in step.cited.values()), default=0.0)
                if best < min_overlap:
                    return reject(
                        "bridge_missing",
                        f"{dep}'s answer {upstream.answer!r} is not in the evidence of {step.id}",
                    )
        return accept()

    return check


@gate("chain_final", kinds=("chain",))
def chain_final() -> Check:
    """The final answer is the final subtask's accepted answer."""

    def check(a: ChainArtifact) -> GateResult:
        final = next((s for s in a.steps if s.id == a.final_id), None)
        if final is None or normalize_answer(final.answer) != normalize_answer(a.final_answer):
            return reject("final_mismatch", "the final answer is not the final subtask's answer")
        return accept()

    return check


@gate("chain_distinct", kinds=("chain",))
def chain_distinct(min_overlap: float = 0.5) -> Check:
    """No two subtasks are answered by the same string unless each is supported by its own
    evidence (a copied, unsupported answer)."""

    def check(a: ChainArtifact) -> GateResult:
        seen: dict[str, str] = {}
        for step in a.steps:
            key = normalize_answer(step.answer)
            if key in seen:
                for s in (step, next(x for x in a.steps if x.id == seen[key])):
                    if max((support_score(s.answer, t) for t in s.cited.values()), default=0.0) < min_overlap:
                        return reject(
                            "repeated_answer",
                            f"{seen[key]} and {step.id} share the answer "
                            f"{step.answer!r}, unsupported at {s.id}",
                        )
            seen[key] = step.id
        return accept()

    return check
