"""DeReAct's figures (seed 000, Tables 2, 4, 9, 14, 19, 21): the critic's rejection rate, the
context manager's veto rate, and the veto yield over (task, attempt) pairs matched with the
``react`` configuration."""

from __future__ import annotations

from collections.abc import Callable, Sized

from vreact.records import AttemptRecord, TaskRecord, VerdictRecord
from vreact.report.model import DeReActRates, VetoYield

#: The configuration veto yield is measured against (the brain alone).
REACT = "react"


def _cm_decision(v: VerdictRecord) -> bool:
    """The context manager's own decision on a proposed final (not its State gate's)."""
    return v.verifier == "context_manager" and v.source == "judge"


def rates(attempts: list[AttemptRecord]) -> DeReActRates | None:
    """Critic rejections / proposed actions (its decisions); CM vetoes / proposed finals (its
    decisions on a finish or abstain). None when neither ran."""
    scored = [a for a in attempts if a.outcome != "crash"]
    critic = [v for a in scored for v in a.verdicts if v.verifier == "critic"]
    finals = [
        v for a in scored for v in a.verdicts if v.verifier == "context_manager" and v.source == "judge"
    ]
    if not critic and not finals:
        return None
    rejected = sum(v.decision == "reject" for v in critic)
    vetoed = sum(v.decision == "reject" for v in finals)
    return DeReActRates(
        proposals=len(critic),
        critic_rejections=rejected,
        critic_rejection_rate=round(rejected / len(critic), 3) if critic else None,
        finals=len(finals),
        vetoes=vetoed,
        veto_rate=round(vetoed / len(finals), 3) if finals else None,
    )


def veto_yield(
    attempts: list[AttemptRecord],
    tasks: dict[str, TaskRecord],
    names: list[str],
    success: Callable[[AttemptRecord, TaskRecord], bool],
) -> list[VetoYield]:
    """For each configuration with vetoes, over the (task, attempt) pairs both it and react ran:
    the share of pairs with a veto, its success and react's on those pairs (yield = the
    difference), and on the pairs it failed, how often react succeeded (Pass@1 parity)."""
    if REACT not in names:
        return []
    ok = success
    react = {(a.task_id, a.attempt_index): a for a in attempts if a.config == REACT and a.outcome != "crash"}
    out = []
    for name in names:
        mine = {
            (a.task_id, a.attempt_index): a for a in attempts if a.config == name and a.outcome != "crash"
        }
        pairs = [k for k in mine if k in react]
        if name == REACT or not pairs:
            continue
        vetoed = [
            k for k in pairs if any(_cm_decision(v) and v.decision == "reject" for v in mine[k].verdicts)
        ]
        if not any(_cm_decision(v) for k in pairs for v in mine[k].verdicts):
            continue
        won = [k for k in vetoed if ok(mine[k], tasks[k[0]])]
        theirs = [k for k in vetoed if ok(react[k], tasks[k[0]])]
        failed = [k for k in pairs if not ok(mine[k], tasks[k[0]])]
        parity = [k for k in failed if ok(react[k], tasks[k[0]])]
        out.append(
            VetoYield(
                config=name,
                pairs=len(pairs),
                vetoed_pairs=len(vetoed),
                vetoed_share=round(len(vetoed) / len(pairs), 3),
                success_vetoed=_share(won, vetoed),
                react_success_vetoed=_share(theirs, vetoed),
                yield_=None if not vetoed else round((len(won) - len(theirs)) / len(vetoed), 3),
                failed_pairs=len(failed),
                react_success_on_failed=_share(parity, failed),
            )
        )
    return out


def _share(part: Sized, whole: Sized) -> float | None:
    return round(len(part) / len(whole), 3) if whole else None
