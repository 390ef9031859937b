"""The V as data: specification levels, the verifiers paired with them, and what a rejection
costs and where it goes. Every other module reads this table instead of keeping its own.

    verifier  checks                    level  budget  a rejection goes to     when spent
    plan      a proposed plan           L2     plan    the planner (new plan)  fall back to one task
    R1        one subtask's answer      L3     r1      that executor (new try) abstain naming L3
    guard     the executor's loop       L3     r1      that executor (new try) abstain naming L3
    budget    a try's or attempt's cost L3     r1      that executor (new try) abstain naming L3
    critic    a proposed action         L3     steps   that executor (next step): feedback
    context_manager  a proposed final   L1     steps   that executor (next step): a veto
    R2        the chain of answers      L2     r2      the planner (re-plan)   abstain naming L2
    R3        the final answer          L1     r3      the top (re-descend)    abstain naming L1

A verdict records both its ``verifier`` (a row of this table) and its ``check_name`` (the gate,
judge or guard that decided). The critic and the context manager of DeReAct join as rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["L1", "L2", "L3"]
#: A verifier id: one row of ``V``.
VerifierId = Literal["plan", "R1", "R2", "R3", "guard", "budget", "critic", "context_manager"]
#: What kind of check decided a verdict.
Source = Literal["gate", "judge", "guard", "budget"]
#: Where a rejection is routed.
Route = Literal["planner", "executor", "top"]

#: The specification levels, top to bottom.
LEVELS: tuple[Level, ...] = ("L1", "L2", "L3")
#: Where an abstention can come from: a level whose budget ran out, the agent declining, or
#: the step cap of an unverified run.
ABSTAIN_LEVELS = (*LEVELS, "declined", "cap")
SOURCES: tuple[Source, ...] = ("gate", "judge", "guard", "budget")


@dataclass(frozen=True)
class Verifier:
    """One row of the V."""

    id: VerifierId
    level: Level
    budget: str  # the budget a rejection spends (a name of ``BudgetLimits``)
    route: Route
    judge: str | None  # the judge's prompt kind (vreact.verify.judges), None: no judge
    #: What a spent budget means: the level named in the abstention, or None (fall back).
    abstain: Level | None


V: dict[str, Verifier] = {
    v.id: v
    for v in (
        Verifier("plan", "L2", "plan", "planner", "L2", None),
        Verifier("R1", "L3", "r1", "executor", "L3", "L3"),
        Verifier("guard", "L3", "r1", "executor", None, "L3"),
        Verifier("budget", "L3", "r1", "executor", None, "L3"),
        # DeReAct's critic and context manager: a block or a veto spends a step, not a re-descent
        Verifier("critic", "L3", "steps", "executor", None, None),
        Verifier("context_manager", "L1", "steps", "executor", None, None),
        Verifier("R2", "L2", "r2", "planner", "integration", "L2"),
        Verifier("R3", "L1", "r3", "top", "L1", "L1"),
    )
}
#: The verifiers a verifier set (verifiers/*.yaml) configures, in the order they run.
CONFIGURED: tuple[VerifierId, ...] = ("plan", "R1", "R2", "R3")
#: The V as drawn: each specification level beside the verifier it pairs with (and the
#: heading of that side, which also holds the verifiers sharing its level).
PAIRS: tuple[tuple[Level, str, VerifierId, str], ...] = (
    ("L1", "Requirements", "R3", "Acceptance"),
    ("L2", "Plan", "R2", "Integration · plan verifier"),
    ("L3", "Step design", "R1", "Unit · guards"),
)


def judge_name(verifier: str) -> str:
    """The ``check_name`` of a verifier's judge."""
    return f"{verifier}_judge"


def legacy_verifier(level: str, source: str, name: str, verifier_of_gate: dict[str, str]) -> str:
    """Which verifier decided a verdict recorded before verdicts named it (migration 009):
    ``verifier_of_gate`` maps each "VERIFIER:gate" of the run's verifier set (a gate it names
    under that verifier) to the verifier."""
    if source == "guard":
        return "guard"
    if source == "judge" and name.endswith("_judge"):
        return name[: -len("_judge")]
    if level == "L2":
        for verifier in ("plan", "R2"):
            if f"{verifier}:{name}" in verifier_of_gate:
                return verifier
        return "plan" if name.startswith("plan") else "R2"
    return {"L1": "R3", "L3": "R1"}.get(level, "")
