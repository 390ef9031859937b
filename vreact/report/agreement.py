"""What k candidates per attempt came to, from the records alone (the ``agreements`` rows, the
scores and the calls): nothing is run again and no model is called.

The tau curve answers, at each threshold, the attempts whose largest group is decided (not
disputed, not tied), holds two or more and at least tau of its k; an answer is right as its
family scored the group's first candidate when the attempt ended (a chosen one's score, else the
scored try of its artifact hash, else the family's ``answer_right`` on its recorded answer)."""

from __future__ import annotations

from collections import Counter

from vreact.families import TaskFamily
from vreact.records import AttemptRecord, TaskRecord
from vreact.report.model import AgreementFigures, AgreementReport, TauPoint
from vreact.verify.agreement import tau_curve


def agreement_report(
    attempts: list[AttemptRecord], tasks: dict[str, TaskRecord], family: TaskFamily
) -> AgreementReport | None:
    """A configuration's candidates, overall and by what each task states (None: it made one
    candidate at a time)."""
    made = [a for a in attempts if a.agreement is not None]
    if not made:
        return None
    first = made[0].agreement
    assert first is not None
    states: dict[str, list[AttemptRecord]] = {}
    for a in attempts:
        said = family.states(tasks[a.task_id]) if a.task_id in tasks else None
        if said is not None:
            states.setdefault(said, []).append(a)
    return AgreementReport(
        **dict(_figures(attempts, tasks, family)),
        k=first.k,
        tau=first.tau,
        selected=first.selected,
        by_states={s: _figures(states[s], tasks, family) for s in sorted(states)},
    )


def _figures(
    attempts: list[AttemptRecord], tasks: dict[str, TaskRecord], family: TaskFamily
) -> AgreementFigures:
    made = [a for a in attempts if a.agreement is not None]
    fates: Counter[str] = Counter()
    causes: Counter[str] = Counter()
    curve: list[tuple[int, int, bool, bool]] = []
    groups = disputed = over_right = 0
    for a in made:
        g = a.agreement
        assert g is not None
        fates.update(g.candidates.values())
        if len(g.candidates) < g.k:  # best of k stops at the first that passes
            fates["not made"] += g.k - len(g.candidates)
        if g.cause:
            causes[g.cause] += 1
        groups += len(g.groups)
        top = g.groups[0] if g.groups else None
        disputed += bool(top and top.get("disputed"))
        if top is not None and a.task_id in tasks and a.score is not None:  # over the scoreable
            tied = len(g.groups) > 1 and len(g.groups[1]["members"]) == len(top["members"])
            right = _right(a, tasks[a.task_id], family, top["members"][0])
            curve.append((len(top["members"]), g.k, bool(top.get("disputed")) or tied, right is True))
        over_right += _over_right(a, tasks, family)
    scoreable = sum(a.score is not None for a in attempts)
    points, area = tau_curve(curve, scoreable) if curve else ([], None)
    calls = [c for a in attempts for c in a.calls]
    n = len(attempts)
    tokens = sum((c.prompt_tokens or 0) + (c.completion_tokens or 0) for c in calls)
    return AgreementFigures(
        attempts=len(made),
        candidates=dict(sorted(fates.items())),
        answered=sum(a.outcome == "answer" for a in made),
        correct=sum(a.outcome == "answer" and a.score is not None and a.score.correct is True for a in made),
        wrong_over_right=over_right,
        causes=dict(sorted(causes.items())),
        groups_per_attempt=round(groups / len(made), 4) if made else None,
        disputed=disputed,
        llm_calls_per_attempt=round(len(calls) / n, 4) if n else None,
        tokens_per_attempt=round(tokens / n, 1) if n else None,
        tau_curve=[
            TauPoint(
                tau=p.tau,
                coverage=p.coverage,
                risk=round(1 - p.selective_accuracy, 4) if p.selective_accuracy is not None else 1.0,
            )
            for p in points
        ],
        tau_area=area,
    )


def _over_right(a: AttemptRecord, tasks: dict[str, TaskRecord], family: TaskFamily) -> bool:
    """Whether ``a`` answered wrong while another of its candidates passed R1 and was right."""
    g = a.agreement
    assert g is not None
    if a.outcome != "answer" or a.score is None or a.score.correct is not False or a.task_id not in tasks:
        return False
    passed = [int(i) for i, fate in g.candidates.items() if fate == "answer" and int(i) != g.chosen]
    return any(_right(a, tasks[a.task_id], family, i) is True for i in passed)


def _right(a: AttemptRecord, task: TaskRecord, family: TaskFamily, i: int) -> bool | None:
    """Whether candidate ``i`` of ``a`` was right, as its family scored it when ``a`` ended."""
    g = a.agreement
    assert g is not None
    if g.chosen == i and a.outcome == "answer" and a.score is not None:
        return a.score.correct
    digest = g.hashes.get(str(i))
    if a.score is not None and digest in a.score.tries:
        return a.score.tries[digest]
    said = (g.record.get("answers") or {}).get(str(i))  # question answering keeps each answer
    return family.answer_right(task, said) if isinstance(said, str) and said else None
