"""The report of one run, computed from its records (read through :func:`vreact.records.read_run`):
execution accounting, answer and support quality, answerability, MuSiQue-Full group metrics, cost,
and attribution (rejections, corrections and marginal cost by source and level), overall and by hop
count. Everything comes from ``vreact.db``, so any run can be reported again."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from vreact.families import DEFAULT, FINALS, TaskFamily, UnknownFamily, family_of, recorded_reading
from vreact.metrics import GroupMember, answerability, group_sufficiency, normalize_answer
from vreact.model import TRUNCATED
from vreact.records import (
    AttemptRecord,
    CallRecord,
    DiagnosisRecord,
    RunRecords,
    StepRecord,
    Store,
    TaskRecord,
    VerdictRecord,
    config_order,
    correct_answer,
    read_run,
    unscored,
)
from vreact.records.reader import ScoreRecord
from vreact.report import dereact
from vreact.report.agreement import agreement_report
from vreact.report.model import (
    AttackReport,
    AttackRow,
    Attribution,
    CheckSpend,
    Comparison,
    ConfigReport,
    Correction,
    DiagnosisReport,
    GuardFires,
    GuardReport,
    HopsReport,
    JudgeClaims,
    MarginalCost,
    PassAtK,
    Provenance,
    ProvenanceState,
    Rates,
    Report,
    Rescored,
    RiskPoint,
    RoleSpend,
    ScorerFigures,
    SourceSpend,
    Spend,
)
from vreact.report.stats import compare, distribution, mean_se, pass_at_k, to_dict
from vreact.v import ABSTAIN_LEVELS, LEVELS, SOURCES, V

COST_FIELDS = ("llm_calls", "prompt_tokens", "completion_tokens")
#: Per-attempt figures reported with mean, median, P90 and P95 (USD over all attempts, the rest
#: over scoreable ones).
DISTRIBUTED = ("llm_calls", "exec_steps", "prompt_tokens", "completion_tokens", "cost_usd")

#: The roles whose calls are a judging source's cost: LLM judges, DeReAct's critic and context manager.
JUDGING = ("judge", "critic", "context_manager")


def _mean(total: float, n: int) -> float | None:
    return round(total / n, 3) if n else None


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


#: The checks that defend against attacks through the data: the attack report counts their
#: rejections on the clean tasks, what the defences cost where there is no attack.
DEFENCE_CHECKS = ("no_instructions_in_evidence", "hop_agreement")
#: What becomes of an attacked attempt, each in exactly one, the first that holds (:func:`fate`).
FATES = ("escaped", "blocked", "recovered", "unaffected", "wrong", "crashed")


#: Who a rejection or a correction is credited to: the verdict's source, with DeReAct's critic and
#: context manager (model calls that judge, recorded with source ``judge``) each a source of its own.
_DEREACT = JUDGING[1:]
ATTRIBUTED = (*SOURCES[:2], *_DEREACT, *SOURCES[2:])  # gate, judge, critic, context_manager, ...


def attributed(v: VerdictRecord) -> str:
    """The source a verdict is credited to (one of ``ATTRIBUTED``)."""
    if v.source == "judge" and v.verifier in _DEREACT:
        return str(v.verifier)
    return v.source


def corrected(verdicts: Iterable[VerdictRecord]) -> list[tuple[VerdictRecord, VerdictRecord]]:
    """The corrections in one attempt: (the rejection credited, the accept that ended it), once per
    component, in the order the components were last judged.

    A component's artifact counts when it is finally accepted by all of its verifiers after one
    or more rejections, and differs from every rejected artifact; the rejection credited is the
    last one before that artifact was first judged."""
    out = []
    by_component: dict[str | None, list[VerdictRecord]] = defaultdict(list)
    for v in sorted(verdicts, key=lambda v: v.seq):
        by_component[v.component].append(v)
    for vs in by_component.values():
        last = vs[-1]
        rejected = [v for v in vs if v.rejected]
        if last.decision != "accept" or not rejected:
            continue
        final = last.artifact_hash
        if any(v.artifact_hash == final for v in rejected):
            continue
        first_accept = next(i for i, v in enumerate(vs) if v.artifact_hash == final)
        before = [v for v in vs[:first_accept] if v.rejected]
        if before:
            out.append((before[-1], last))
    return sorted(out, key=lambda pair: pair[1].seq)


def corrections(verdicts: Iterable[VerdictRecord]) -> Counter[tuple[str, str]]:
    """Corrections in one attempt, by (source credited, level) of the rejection credited."""
    return Counter((attributed(rejection), rejection.level) for rejection, _ in corrected(verdicts))


def family_named(name: str | None) -> TaskFamily:
    """The family a run's records name (none: the default family, as a run whose writer named
    none is read); one not registered here (a plugin's, not loaded) reads as a family that
    declares nothing of its own (``TaskFamily``'s defaults)."""
    try:
        return family_of(name or DEFAULT)
    except UnknownFamily:
        return TaskFamily()


def answer_right(family: TaskFamily, a: AttemptRecord, task: TaskRecord, answer: str) -> bool | None:
    """Whether ``answer`` is right: the attempt's score where it is the answer the attempt ended
    with, else as its family judges a recorded task's answer (``TaskFamily.answer_right``)."""
    right = correct_answer(a, task, answer)
    return family.answer_right(task, answer) if right is None else right


def correction_list(
    attempts: list[AttemptRecord],
    tasks: dict[str, TaskRecord],
    names: list[str],
    family: TaskFamily | None = None,
) -> list[Correction]:
    """Every correction of a run, each with the rejecting check, the rejected and the accepted
    artifact, and whether the accepted answer is right by gold (when it is the final answer)."""
    family = family or TaskFamily()
    order = {n: i for i, n in enumerate(names)}
    out = []
    for a in sorted(attempts, key=lambda a: (order.get(a.config, len(order)), a.task_id, a.attempt_index)):
        task = tasks[a.task_id]
        last = _final_answer(a)
        tries = a.score.tries if a.score is not None else {}
        for rejection, accept in corrected(a.verdicts):
            answer = _answer(accept.artifact)
            final = last is not None and accept.artifact_hash == last
            right = answer_right(family, a, task, answer or "") if final else None
            right = _by_scorer(tries, accept.artifact_hash, right)
            shown = _shown_pair(rejection.artifact, accept.artifact)
            out.append(
                Correction(
                    config=a.config,
                    task_id=a.task_id,
                    attempt=a.attempt_index,
                    component=accept.component or "",
                    level=rejection.level,
                    source=attributed(rejection),
                    check=rejection.check_name or "",
                    cause=rejection.cause or "",
                    rejected=shown[0],
                    accepted=shown[1],
                    final=final,
                    right=right,
                    rejected_right=_by_scorer(tries, rejection.artifact_hash),
                )
            )
    return out


def _final_answer(a: AttemptRecord) -> str | None:
    """The hash of the answer artifact an answered attempt accepted last: its final answer."""
    if a.outcome != "answer":
        return None
    accepts = [v for v in a.verdicts if v.decision == "accept" and _answer(v.artifact) is not None]
    return max(accepts, key=lambda v: v.seq).artifact_hash if accepts else None


def _answer(artifact: Any) -> str | None:
    """An answer artifact's answer (None for a plan, a chain or an unrecorded artifact)."""
    if isinstance(artifact, dict) and artifact.get("kind") == "answer":
        return str(artifact.get("answer") or "")
    return None


def _by_scorer(tries: dict[str, bool], digest: str | None, default: bool | None = None) -> bool | None:
    """A judged try by its family's scorer (``tries``: by artifact hash), else ``default``."""
    return tries.get(digest, default) if digest is not None else default


def _shown_pair(rejected: Any, accepted: Any) -> tuple[str, str]:
    """A correction's two artifacts in a short line each: two answers of several lines (programs)
    by the first line where they differ, named by its number; anything else as it is shown."""
    old, new = _answer(rejected), _answer(accepted)
    if old is None or new is None or "\n" not in old + new:
        return _shown_artifact(rejected), _shown_artifact(accepted)
    a, b = old.splitlines(), new.splitlines()
    i = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))

    def line(lines: list[str]) -> str:
        return _shown_artifact(f"line {i + 1}: {lines[i].strip() if i < len(lines) else '(none)'}")

    return line(a), line(b)


def _shown_artifact(artifact: Any, width: int = 60) -> str:
    """An artifact (as its verdicts' hash was made of: ``identity()``) in one short line: an
    answer as it is, an abstention by its reason, a plan by its objectives, a chain by each
    subtask's answer."""
    if not isinstance(artifact, dict):
        text = "" if artifact is None else str(artifact)
    elif artifact.get("kind") == "answer":
        text = str(artifact.get("answer") or "")
    elif artifact.get("kind") == "abstain":
        text = f"abstain: {artifact.get('reason') or ''}"
    elif artifact.get("kind") == "plan" and isinstance(artifact.get("plan"), dict):
        subtasks = artifact["plan"].get("subtasks") or []
        text = " | ".join(str(s.get("objective", "")) for s in subtasks if isinstance(s, dict))
    elif artifact.get("kind") == "chain" and isinstance(artifact.get("steps"), list):
        links = [s for s in artifact["steps"] if isinstance(s, list) and len(s) > 1]  # (id, answer, evidence)
        text = " -> ".join(f"{s[0]}={s[1]}" for s in links)
    else:
        text = json.dumps(artifact, sort_keys=True)
    return text if len(text) <= width else text[: width - 1] + "…"


#: The actions that run no tool (a bridge's observation names the designer's search, not a paragraph).
_NOT_TOOLS = frozenset({*FINALS, "bridge", None})
#: A paragraph as a search or read observation shows it: ``[id] title: text``, one a line.
_SHOWN = re.compile(r"^\[([^\]\n]+)\] ", re.MULTILINE)


def retrieved(steps: Iterable[StepRecord]) -> set[str]:
    """The ids of every paragraph an attempt's executor was shown: each hit of each search, each
    paragraph read, and each a configuration's own tool showed as search does, ``[id] title: ...``
    a line (from the recorded steps' observations)."""
    seen: set[str] = set()
    for s in steps:
        observation = s.observation or ""
        if s.action == "read":
            if m := _SHOWN.match(observation):
                seen.add(m.group(1))
        elif s.action not in _NOT_TOOLS:
            seen.update(_SHOWN.findall(observation))
    return {_pid(x) for x in seen}


def _pid(x: str) -> str:
    """An id as support F1 compares it (``"07"`` is ``7``)."""
    s = x.strip()
    return str(int(s)) if s.isascii() and s.isdigit() else s


def _by(counts: Counter[tuple[str, str]], index: int, key: str) -> int:
    """Sum of (source, level) counts whose ``index``-th part is ``key``."""
    return sum(n for k, n in counts.items() if k[index] == key)


def compute(
    records: RunRecords | Store | str | Path,
    run_id: int | None = None,
    baseline: str | None = None,
    iterations: int = 10_000,
) -> Report:
    """The report of one run (the latest by default). ``comparisons`` holds each configuration
    against ``baseline`` (default: the first): Pass@1 and Pass@k lifts, Diff, and their paired
    permutation tests over tasks with ``iterations``."""
    if not isinstance(records, RunRecords):
        records = read_run(records, run_id, transcripts=False, artifacts=True)  # corrections show them
    if records.id is None:
        return Report(run=None, configs={}, comparisons=[])
    attempts, tasks = records.attempts, records.tasks
    names = config_order(records)
    scorers = scorers_of(attempts)
    family = family_named(records.run.family if records.run else None)
    measured = measured_by(family)
    configs = {
        name: _config_report([a for a in attempts if a.config == name], tasks, scorers, measured, family)
        for name in names
    }
    if baseline is not None and baseline not in configs:
        raise ValueError(
            f"baseline {baseline!r} is not a configuration of run {records.id} ({', '.join(names)})"
        )
    comparisons = _comparisons(attempts, tasks, names, baseline or (names[0] if names else ""), iterations)
    yields = dereact.veto_yield(attempts, tasks, names, success)
    plain = _plain_config(records, names)
    abstaining = _always_abstain(attempts)
    references = {ALWAYS_ABSTAIN: abstaining}
    if plain is not None:
        references[ALWAYS_ANSWER] = _always_answer([a for a in attempts if a.config == plain])
    over = _comparisons([*attempts, *abstaining], tasks, [ALWAYS_ABSTAIN, *names], ALWAYS_ABSTAIN, iterations)
    return Report(
        run=records.id,
        family=records.run.family if records.run else None,
        sandbox=records.run.config.get("sandbox") if records.run else None,
        configs=configs,
        comparisons=comparisons,
        veto_yield=yields,
        references={name: _figures(made, tasks, measured) for name, made in references.items()},
        always_answer_from=plain,
        over_abstaining=over,
        corrections=correction_list(attempts, tasks, names, family),
        attacks=_attacks(attempts, tasks, names),
        provenance=provenance_of(records),
        reading=recorded_reading(
            records.run.family if records.run else None,
            (tasks[t].record for t in dict.fromkeys(a.task_id for a in attempts) if t in tasks),
        ),
    )


def provenance_of(records: RunRecords) -> Provenance:
    """What made the run's finished attempts: the distinct states its provenance rows record
    (rows that record the same are one state), each with the attempts it made; a state that
    made none is left out, unless no attempt was made under any (then the latest is shown)."""
    states: dict[str, tuple[dict[str, Any], list[int]]] = {}
    key_of: dict[int, str] = {}
    rescored = []
    for row_id, data in records.provenance.items():
        body = {k: v for k, v in data.items() if k in ProvenanceState.model_fields and k != "attempts"}
        if isinstance(data.get("rescore"), dict):  # a scorer added after the run: it made no attempt
            r = data["rescore"]
            rescored.append(Rescored(scorer=str(r.get("scorer")), sandbox=r.get("sandbox"), state=body))
            continue
        key_of[row_id] = key = json.dumps(body, sort_keys=True)
        states.setdefault(key, (body, []))
    not_recorded = 0
    for a in records.attempts:
        made_by = key_of.get(a.provenance_id) if a.provenance_id is not None else None
        if made_by is None:
            not_recorded += 1
        else:
            states[made_by][1].append(a.id)
    made = [ProvenanceState(**body, attempts=sorted(ids)) for body, ids in states.values() if ids]
    if not made and states:
        body, _ = list(states.values())[-1]
        made = [ProvenanceState(**body)]
    code = {(s.commit, s.dirty) for s in made}
    return Provenance(
        states=made,
        not_recorded=not_recorded,
        several=len(code) > 1 or (not_recorded > 0 and any(s.attempts for s in made)),
        dirty=any(s.dirty for s in made),
        rescored=rescored,
    )


#: The reference rows' names (the report's tables show them with spaces).
ALWAYS_ABSTAIN = "always_abstain"
ALWAYS_ANSWER = "always_answer"


def _always_abstain(attempts: list[AttemptRecord]) -> list[AttemptRecord]:
    """A declined attempt for each (task, attempt index) the run ran: what never answering
    scores (as many attempts as the configurations have, so Pass@k's k is theirs). It is
    scored where its task is, by some attempt's score (one taken from a crash is unscored
    only where its task has no score at all)."""
    first = {(a.task_id, a.attempt_index): a for a in attempts}
    scored = {a.task_id for a in attempts if a.score is not None}
    declined = ScoreRecord(None, {})
    return [
        replace(
            _bare(a),
            score=a.score if a.score is not None or a.task_id not in scored else declined,
            config=ALWAYS_ABSTAIN,
            outcome="abstain",
            answer=None,
            evidence=[],
            abstain_level="declined",
            abstain_component=None,
            abstain_cause=None,
            error=None,
            crash_kind=None,
            traceback=None,
            plan_fallback=False,
        )
        for a in first.values()
    ]


def _always_answer(attempts: list[AttemptRecord]) -> list[AttemptRecord]:
    """A plain configuration's attempts, never abstaining: its answers where it answered, a wrong
    (empty) one where it abstained; its crashes stay crashes."""
    out = []
    for a in attempts:
        bare = replace(_bare(a), config=ALWAYS_ANSWER)
        if a.outcome == "abstain":
            bare = replace(bare, outcome="answer", answer="", abstain_level=None, abstain_cause=None)
        out.append(bare)
    return out


def _bare(a: AttemptRecord) -> AttemptRecord:
    """An attempt's outcome without what it wrote (no calls, verdicts or steps: no cost)."""
    return replace(a, verdicts=[], calls=[], steps=[], ledger=[], events=[], diagnoses=[])


def _plain_config(records: RunRecords, names: list[str]) -> str | None:
    """The run's plain configuration: the first (N, if it is plain, before the others) that
    switches nothing on: no planner, nothing checking the executor."""
    stored = {c.get("name"): c for c in (records.run.config if records.run else {}).get("configs", [])}
    switches = ("planner", "guards", "gates", "judges", "critic", "context_manager", "pipeline")
    plain = [n for n in names if n in stored and not any(stored[n].get(k) for k in switches)]
    return "N" if "N" in plain else next(iter(plain), None)


def success(attempt: AttemptRecord, task: TaskRecord) -> bool:
    """A correct outcome: a right answer (``correct_answer``), or an abstention on a task with
    no answer (an unanswerable question). A crash is a failure."""
    if attempt.outcome == "answer":
        return correct_answer(attempt, task) is True
    return attempt.outcome == "abstain" and not task.answerable


def _successes(attempts: list[AttemptRecord], tasks: dict[str, TaskRecord]) -> dict[str, list[bool]]:
    """Per task, the success of each attempt in attempt order (an unscored one's task left out:
    nothing says whether it succeeded)."""
    out: dict[str, list[bool]] = defaultdict(list)
    for a in sorted(attempts, key=lambda a: (a.task_id, a.attempt_index)):
        if not unscored(a, tasks[a.task_id]):
            out[a.task_id].append(success(a, tasks[a.task_id]))
    return out


def _pass(attempts: list[AttemptRecord], tasks: dict[str, TaskRecord]) -> PassAtK | None:
    """Pass@1 and Pass@k (k = the fewest attempts any task has) with standard errors over tasks."""
    per_task = _successes(attempts, tasks)
    if not per_task:
        return None
    k = min(len(v) for v in per_task.values())
    p1 = [sum(v) / len(v) for v in per_task.values()]
    pk = [pass_at_k(len(v), sum(v), k) for v in per_task.values()]
    (m1, se1), (mk, sek) = mean_se(p1), mean_se(pk)
    runs = [[v[i] for v in per_task.values()] for i in range(k)]  # attempt i over every task
    by_attempt = mean_se([sum(r) / len(r) for r in runs]) if k > 1 else None
    return PassAtK(
        k=k,
        tasks=len(per_task),
        pass1=round(m1, 4),
        pass1_se=round(se1, 4),
        passk=round(mk, 4),
        passk_se=round(sek, 4),
        pass1_attempts=round(by_attempt[0], 4) if by_attempt else None,
        pass1_se_attempts=round(by_attempt[1], 4) if by_attempt else None,
    )


def _answerable_pass1(attempts: list[AttemptRecord], tasks: dict[str, TaskRecord]) -> float | None:
    """Pass@1 over the answerable tasks alone: the mean over them of each one's success rate."""
    per_task = _successes([a for a in attempts if tasks[a.task_id].answerable], tasks)
    return round(sum(sum(v) / len(v) for v in per_task.values()) / len(per_task), 4) if per_task else None


def _comparisons(
    attempts: list[AttemptRecord],
    tasks: dict[str, TaskRecord],
    names: list[str],
    baseline: str,
    iterations: int,
) -> list[Comparison]:
    """Each configuration against the baseline, over the tasks both ran, k = the fewest attempts."""
    by_config: dict[str, list[AttemptRecord]] = defaultdict(list)
    for a in attempts:
        by_config[a.config].append(a)
    if baseline not in by_config:
        return []
    base = _successes(by_config[baseline], tasks)
    out = []
    for name in names:
        if name == baseline:
            continue
        mine = _successes(by_config[name], tasks)
        shared = set(mine) & set(base)
        if not shared:
            continue
        k = min(len(v) for t in shared for v in (mine[t], base[t]))
        c = compare(mine, base, k, name, baseline, iterations=iterations)
        out.append(
            Comparison(**{key: round(v, 4) if isinstance(v, float) else v for key, v in to_dict(c).items()})
        )
    return out


def _hops(task: TaskRecord) -> int:
    return task.hops or 0


#: The answers' figures the report's own columns show (EM, F1, support F1: the outcomes, the
#: baselines, support and by hop count), each the mean over the answerable attempts of the
#: scores' metric of its name, for a family whose scorer gives it (``TaskFamily.metrics``).
ANSWER_METRICS = ("em", "f1", "support_f1")


def measured_by(family: TaskFamily) -> tuple[str, ...]:
    """The answer figures (of ``ANSWER_METRICS``) the family's scorer gives."""
    return tuple(name for name in ANSWER_METRICS if name in family.metrics)


@dataclass
class _Tally:
    """What one configuration's attempts add up to, before it becomes figures."""

    c: Counter[str] = field(default_factory=Counter)
    by_level: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ABSTAIN_LEVELS, 0))
    #: the answer figures (of ANSWER_METRICS) its family's scorer gives (``measured_by``)
    measured: tuple[str, ...] = ()
    #: each measured figure's sum, and how many answerable attempts it is over
    answer_sums: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    answer_counts: Counter[str] = field(default_factory=Counter)
    n_answerable: int = 0
    #: each family metric's values over the attempts its scorer gave it for
    metrics: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    money: float = 0.0
    cost: Counter[str] = field(default_factory=Counter)
    roles: dict[str, Counter[str]] = field(default_factory=lambda: {r: Counter() for r in JUDGING})
    spend: Counter[str] = field(default_factory=Counter)
    rejections: Counter[tuple[str, str]] = field(default_factory=Counter)  # by (source, level)
    corrected: Counter[tuple[str, str]] = field(default_factory=Counter)
    answerable_preds: list[tuple[bool, bool]] = field(default_factory=list)  # (predicted, gold)
    members: list[GroupMember] = field(default_factory=list)
    per_attempt: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    answers: list[tuple[int, bool]] = field(default_factory=list)  # (rejections, right) per answer
    gold: Counter[str] = field(default_factory=Counter)  # the retrieval ceiling's counts
    right_rejected: Counter[str] = field(default_factory=Counter)  # by source: rejections of right tries
    confirmed: Counter[str] = field(default_factory=Counter)  # by source: corrections the scorer confirms
    #: by role: replies that stopped at their token allowance (the provider said so)
    truncated: Counter[str] = field(default_factory=Counter)
    #: by verifier, the judges' claims: (verifier, field of ``JudgeClaims``) -> count
    claims: Counter[tuple[str, str]] = field(default_factory=Counter)

    def add(self, a: AttemptRecord, task: TaskRecord) -> None:
        self.c["executed"] += 1
        self.c["plan_fallbacks"] += a.plan_fallback
        attempt_money = 0.0
        for call in _own(a.calls):  # what was paid for, crashed attempts included
            self.spend["retries"] += call.retries or 0
            if call.cost_usd is not None:
                self.spend["priced_calls"] += 1
                attempt_money += call.cost_usd
            else:  # no price known: left out of the money, and counted so the report says so
                self.spend["unpriced_calls"] += 1
        self.money += attempt_money
        self.per_attempt["cost_usd"].append(attempt_money)
        if a.outcome == "crash":
            self.c["crash"] += 1
            self.c["internal_errors"] += a.crash_kind == "internal"
            return
        self._cost(a)
        self._ended(a)
        scored = not unscored(a, task)
        if scored:
            self._quality(a, task)
        else:  # in coverage and cost; nothing says right or wrong
            self.c["unscored"] += 1
            self.c["unscored_answers"] += a.outcome == "answer"
        if a.outcome == "answer" and scored:
            self.answers.append((sum(v.rejected for v in a.verdicts), success(a, task)))
        seen = {
            (v.component, v.level, attributed(v), v.check_name, v.artifact_hash, v.cause)
            for v in a.verdicts
            if v.rejected
        }
        self.rejections.update((s[2], s[1]) for s in seen)
        self.corrected.update(corrections(a.verdicts))
        cut = {c.id for c in a.calls if c.stop_reason in TRUNCATED}
        self.truncated.update(c.role for c in a.calls if c.id in cut)
        # a reply cut at its allowance is counted there, not as a failure of the step's format
        self.c["format_failures"] += sum(
            s.source == "executor" and s.action is None and s.call_id not in cut for s in a.steps
        )
        tries = a.score.tries if a.score is not None else {}
        self._claims(a, tries)
        if tries:
            self.c["tries_scored"] += len(tries)
            self.right_rejected.update(s[2] for s in seen if _by_scorer(tries, s[4]) is True)
            self.confirmed.update(
                attributed(rejection)
                for rejection, accept in corrected(a.verdicts)
                if _by_scorer(tries, rejection.artifact_hash) is False
                and _by_scorer(tries, accept.artifact_hash) is True
            )

    def _claims(self, a: AttemptRecord, tries: dict[str, bool]) -> None:
        """The judges' claims of one attempt (causes ``founded:*``, ``unfounded:*``), each as the
        scorer found the try it was on."""
        for v in a.verdicts:
            cause, verifier = v.cause or "", v.verifier or ""
            if v.source != "judge" or not cause.startswith(("founded:", "unfounded:")):
                continue
            kind = "founded" if cause.startswith("founded:") else "unfounded"
            kind = "unverified" if cause == "unfounded:unverified" else kind
            self.claims[verifier, kind] += 1
            self.claims[verifier, "ignored"] += kind != "founded" and v.decision == "accept"
            right = _by_scorer(tries, v.artifact_hash) if tries else None
            if right is not None:
                self.claims[verifier, f"{kind}_{'right' if right else 'wrong'}"] += 1

    def _ended(self, a: AttemptRecord) -> None:
        """An answer or an abstention (by the level it named), scored or not."""
        if a.outcome == "answer":
            self.c["answered"] += 1
        else:
            self.c["abstained"] += 1
            level = a.abstain_level or ""
            self.by_level[level] = self.by_level.get(level, 0) + 1

    def _quality(self, a: AttemptRecord, task: TaskRecord) -> None:
        answerable = task.answerable
        answered = a.outcome == "answer"
        metrics = a.score.metrics if a.score is not None else {}
        # an answer's figures are its score's; an abstention answers nothing and predicts no
        # support (and unanswerable): 0, whatever its score holds (an always-abstain reference's
        # is its original attempt's)
        figure = {name: metrics.get(name, 0.0) if answered else 0.0 for name in ANSWER_METRICS}
        self.answerable_preds.append((answered, answerable))
        pair = (task.pair_id or task.id, a.attempt_index)
        self.members.append(GroupMember(pair, answerable, answered, figure["f1"], figure["support_f1"]))
        for name, value in metrics.items():
            self.metrics[name].append(value)
        if answered:
            right = correct_answer(a, task) is True
            self.c["correct_answer" if right else "silent_error"] += 1
        else:
            self.c["false_abstention" if answerable else "correct_abstention"] += 1
        self.n_answerable += answerable
        if answerable:
            for name in self.measured:
                self.answer_sums[name] += figure[name]
                self.answer_counts[name] += 1
        gold = {_pid(g) for g in task.support}
        if answerable and gold:
            found = len(gold & retrieved(a.steps))
            self.gold.update(attempts=1, paragraphs=len(gold), found=found, all=found == len(gold))

    def _cost(self, a: AttemptRecord) -> None:
        mine: Counter[str] = Counter()
        for call in _own(a.calls):
            mine["llm_calls"] += 1
            mine["exec_steps"] += call.role == "executor" and call.status == "ok"
            mine["prompt_tokens"] += call.prompt_tokens or 0
            mine["completion_tokens"] += call.completion_tokens or 0
            if call.role in JUDGING:  # the judges', and DeReAct's critic's and context manager's
                counts = self.roles[call.role]
                counts["llm_calls"] += 1
                counts["prompt_tokens"] += call.prompt_tokens or 0
                counts["completion_tokens"] += call.completion_tokens or 0
        self.cost.update(mine)
        for k in DISTRIBUTED[:-1]:
            self.per_attempt[k].append(mine[k])


def _figures(
    attempts: list[AttemptRecord], tasks: dict[str, TaskRecord], measured: tuple[str, ...] = ()
) -> HopsReport:
    """The figures of some attempts of one configuration; ``measured``: the answer figures its
    family's scorer gives (``measured_by``; the others are None)."""
    t = _Tally(measured=measured)
    for a in attempts:
        t.add(a, tasks[a.task_id])
    c, priced = t.c, bool(t.spend["priced_calls"])
    scoreable = c["executed"] - c["crash"]
    groups = group_sufficiency(t.members)
    return HopsReport(
        executed=c["executed"],
        crash=c["crash"],
        internal_errors=c["internal_errors"],
        scoreable=scoreable,
        answered=c["answered"],
        abstained=c["abstained"],
        correct=c["correct_answer"] + c["correct_abstention"],
        silent_error=c["silent_error"],
        false_abstention=c["false_abstention"],
        abstained_by_level=t.by_level,
        coverage=_mean(c["answered"], scoreable),
        selective_accuracy=_mean(c["correct_answer"], c["answered"] - c["unscored_answers"]),
        unscored=c["unscored"],
        em=_mean(t.answer_sums["em"], t.answer_counts["em"]),
        f1=_mean(t.answer_sums["f1"], t.answer_counts["f1"]),
        **{k: _mean(t.cost[k], scoreable) for k in ("llm_calls", "exec_steps", *COST_FIELDS[1:])},
        cost_usd=round(t.money, 6) if priced else None,
        cost_usd_per_attempt=_mean(t.money, c["executed"]) if priced else None,
        cost_usd_unpriced_calls=t.spend["unpriced_calls"],
        retries=t.spend["retries"],
        rejections={s: _by(t.rejections, 0, s) for s in ATTRIBUTED},
        corrections={s: _by(t.corrected, 0, s) for s in ATTRIBUTED},
        format_failures=c["format_failures"],
        truncated=dict(sorted(t.truncated.items())),
        tries_scored=c["tries_scored"],
        false_rejections={s: t.right_rejected[s] for s in ATTRIBUTED} if c["tries_scored"] else {},
        confirmed_corrections={s: t.confirmed[s] for s in ATTRIBUTED} if c["tries_scored"] else {},
        judge_claims={
            v: JudgeClaims(**{k: n for (w, k), n in t.claims.items() if w == v})
            for v in sorted({w for w, _ in t.claims})
        },
        support_f1=_mean(t.answer_sums["support_f1"], t.answer_counts["support_f1"]),
        family_metrics={k: _mean(sum(v), len(v)) for k, v in sorted(t.metrics.items())},
        retrieval_ceiling=_mean(t.gold["found"], t.gold["paragraphs"]),
        all_gold_retrieved=_mean(t.gold["all"], t.gold["attempts"]),
        answerability={k: _round(v) for k, v in answerability(t.answerable_preds).items()},
        pairs=groups["pairs"],
        group_answer_sufficiency_f1=_round(groups["group_answer_sufficiency_f1"]),
        group_support_sufficiency_f1=_round(groups["group_support_sufficiency_f1"]),
        plan_fallbacks=c["plan_fallbacks"] if attempts else None,
        attribution=_attribution(t.rejections, t.corrected, scoreable, t.roles),
        pass_=_pass(attempts, tasks),
        pass1_answerable=_answerable_pass1(attempts, tasks),
        answerable_tasks=len({a.task_id for a in attempts if tasks[a.task_id].answerable}),
        cost_distribution={
            k: distribution(t.per_attempt[k]) if k != "cost_usd" or priced else None for k in DISTRIBUTED
        }
        | (  # USD leaves out the unpriced calls: a lower bound, and said so
            {"cost_usd": {**distribution(t.per_attempt["cost_usd"]), "lower_bound": True}}
            if priced and t.spend["unpriced_calls"]
            else {}
        ),
        risk_coverage=_risk_coverage(t.answers, scoreable),
    )


def _own(calls: list[CallRecord]) -> list[CallRecord]:
    """The attempt's own calls: not those ``vreact diagnose`` made about it afterwards."""
    return [c for c in calls if c.role != "diagnosis"]


def _diagnosis(attempts: list[AttemptRecord], tasks: dict[str, TaskRecord]) -> DiagnosisReport | None:
    """% GOOD and % POOR of the State and of final-answer validation (of those rated, not N/A),
    and the grounding rate (evidence complete and constraints satisfied) overall, among correct
    and among incorrect answers."""
    rated = [(a, d) for a in attempts for d in a.diagnoses]
    if not rated:
        return None

    def pct(field: str, value: str) -> float | None:
        seen = [getattr(d, field) for _, d in rated if getattr(d, field) != "N/A"]
        return round(100 * seen.count(value) / len(seen), 1) if seen else None

    def grounded(pairs: list[tuple[AttemptRecord, DiagnosisRecord]]) -> float | None:
        ok = [d.evidence_complete and d.constraints_satisfied for _, d in pairs]
        return round(100 * sum(ok) / len(ok), 1) if ok else None

    answers = [(a, d) for a, d in rated if a.outcome == "answer"]
    right = [(a, d) for a, d in answers if success(a, tasks[a.task_id])]
    wrong = [(a, d) for a, d in answers if not success(a, tasks[a.task_id])]
    return DiagnosisReport(
        rated=len(rated),
        state_good=pct("state", "GOOD"),
        state_poor=pct("state", "POOR"),
        validation_good=pct("validation", "GOOD"),
        validation_poor=pct("validation", "POOR"),
        grounded=grounded(rated),
        grounded_correct=grounded(right),
        grounded_incorrect=grounded(wrong),
        admitted_guessing=round(100 * sum(d.admitted_guessing for _, d in rated) / len(rated), 1),
    )


def scorers_of(attempts: list[AttemptRecord]) -> list[str]:
    """The scorers the attempts' records hold, the primary first (empty: one, or none)."""
    names: dict[str, None] = {}
    for a in attempts:
        if a.score is not None:
            names.setdefault(a.score.scorer)
    for a in attempts:
        names.update(dict.fromkeys(a.scores))
    return list(names) if len(names) > 1 else []


def _under(a: AttemptRecord, scorer: str) -> AttemptRecord:
    """The attempt as its ``scorer`` scored it (no score: it did not)."""
    return replace(a, score=a.scores.get(scorer))


def by_scorer(
    attempts: list[AttemptRecord],
    tasks: dict[str, TaskRecord],
    scorers: list[str],
    measured: tuple[str, ...] = (),
) -> dict[str, ScorerFigures]:
    """One configuration's headline figures under each scorer: Pass@1, selective accuracy,
    silent errors, right tries rejected and confirmed corrections."""
    out = {}
    for name in scorers:
        mine = [_under(a, name) for a in attempts]
        f = _figures(mine, tasks, measured)
        out[name] = ScorerFigures(
            scored=sum(a.score is not None for a in mine),
            **{"pass@1": f.pass_.pass1 if f.pass_ is not None else None},
            selective_accuracy=f.selective_accuracy,
            silent_error=f.silent_error,
            tries_scored=f.tries_scored,
            right_rejected=sum(f.false_rejections.values()),
            confirmed_corrections=sum(f.confirmed_corrections.values()),
        )
    return out


def _config_report(
    attempts: list[AttemptRecord],
    tasks: dict[str, TaskRecord],
    scorers: list[str] | None = None,
    measured: tuple[str, ...] = (),
    family: TaskFamily | None = None,
) -> ConfigReport:
    """The figures of one configuration, the same figures per hop count, and its headline
    figures under each of ``scorers``."""
    hops = sorted({_hops(tasks[a.task_id]) for a in attempts})
    by_hops = {
        str(h): _figures([a for a in attempts if _hops(tasks[a.task_id]) == h], tasks, measured) for h in hops
    }
    by_role, by_source, by_check = _spending(attempts)
    return ConfigReport(
        **dict(_figures(attempts, tasks, measured)),
        by_hops=by_hops,
        by_scorer=by_scorer(attempts, tasks, scorers, measured) if scorers else {},
        cost_by_role=by_role,
        cost_by_source=by_source,
        caused_retries=by_check,
        guards=_guards(attempts, tasks),
        dereact=dereact.rates(attempts),
        diagnosis=_diagnosis(attempts, tasks),
        agreement=agreement_report(attempts, tasks, family or TaskFamily()),
    )


#: The labels of the roles whose calls the report costs, in the order the V's descent calls them.
_ROLES = (
    "tester",
    "planner",
    "plan judge",
    "executor",
    "R1 judge",
    "critic",
    "R2 judge",
    "R3 judge",
    "context manager",
)


@dataclass
class _Spending:
    """Calls added up: how many, their tokens, their priced dollars and the unpriced ones."""

    calls: int = 0
    prompt: int = 0
    completion: int = 0
    usd: float = 0.0
    priced: int = 0

    def add(self, call: CallRecord) -> None:
        self.calls += 1
        self.prompt += call.prompt_tokens or 0
        self.completion += call.completion_tokens or 0
        if call.cost_usd is not None:
            self.priced += 1
            self.usd += call.cost_usd

    def figures(self) -> dict[str, Any]:
        return {
            "llm_calls": self.calls,
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "tokens": self.prompt + self.completion,
            "cost_usd": round(self.usd, 6) if self.priced else None,
            "unpriced_calls": self.calls - self.priced,
        }


def role_of(call: CallRecord) -> tuple[str, str]:
    """(level, role label) of a call: a judge's at its verifier's level, DeReAct's critic and
    context manager at theirs (vreact/v.py); a judge's recorded before its verifier was, "-"."""
    if call.role == "judge":
        verifier = call.verifier or ""
        return (V[verifier].level, f"{verifier} judge") if verifier in V else ("-", "judge")
    if call.role == "tester":  # L1's test design
        return "L1", "tester"
    if call.role in ("critic", "context_manager"):
        return V[call.role].level, call.role.replace("_", " ")
    return ("L2" if call.role == "planner" else "L3"), call.role


def _source_of(charge: str) -> tuple[str, str, str, str]:
    """(verifier, source, check, the source it is credited to) of a ``caused_by`` charge."""
    verifier, _, rest = charge.partition(":")
    source, _, check = rest.partition(":")
    credited = verifier if source == "judge" and verifier in _DEREACT else source
    return verifier, source, check, credited


def _spending(
    attempts: list[AttemptRecord],
) -> tuple[dict[str, RoleSpend], dict[str, SourceSpend], dict[str, CheckSpend]]:
    """Every attempt's own calls (crashed ones too: they were paid for) by level and role; by
    source, its own calls and the retries its rejections caused; and by the check that caused
    them."""
    roles: dict[tuple[str, str], _Spending] = defaultdict(_Spending)
    own: dict[str, _Spending] = defaultdict(_Spending)
    caused: dict[str, _Spending] = defaultdict(_Spending)
    checks: dict[str, _Spending] = defaultdict(_Spending)
    for a in attempts:
        for call in _own(a.calls):
            level, role = role_of(call)
            roles[level, role].add(call)
            if call.role in JUDGING:
                own["judge" if call.role == "judge" else call.role].add(call)
            if call.caused_by:
                checks[call.caused_by].add(call)
                caused[_source_of(call.caused_by)[3]].add(call)
    order = {r: i for i, r in enumerate(_ROLES)}
    by_role = {
        role: RoleSpend(level=level, role=role, **spent.figures())
        for (level, role), spent in sorted(roles.items(), key=lambda kv: order.get(kv[0][1], len(order)))
    }
    by_source = {
        s: SourceSpend(own=Spend(**own[s].figures()), caused=Spend(**caused[s].figures()))
        for s in ATTRIBUTED
        if s not in _DEREACT or own[s].calls or caused[s].calls
    }
    by_check = {}
    for charge, spent in sorted(checks.items(), key=lambda kv: (-kv[1].calls, kv[0])):
        verifier, source, check, _ = _source_of(charge)
        by_check[charge] = CheckSpend(verifier=verifier, source=source, check=check, **spent.figures())
    return by_role, by_source, by_check


def _guards(attempts: list[AttemptRecord], tasks: dict[str, TaskRecord]) -> GuardReport:
    """Hints and rollbacks (events) and stops (guard and budget verdicts), by guard and cause;
    crashed attempts count nowhere, as in every other figure."""
    fires: Counter[tuple[str, str]] = Counter()  # (guard, hint | rollback | stop)
    causes: dict[str, set[str]] = {}
    stopped = stopped_correct = 0
    for a in attempts:
        if a.outcome == "crash":
            continue
        for e in a.events:
            fires[(e.guard, e.kind)] += 1
        stops = [v for v in a.verdicts if v.source in ("guard", "budget") and v.decision == "reject"]
        for v in stops:
            fires[(v.check_name or "", "stop")] += 1
            causes.setdefault(v.check_name or "", set()).add(v.cause or "")
        if stops:
            stopped += 1
            stopped_correct += success(a, tasks[a.task_id])
    rows = [
        GuardFires(
            guard=g,
            causes=", ".join(sorted(causes.get(g, ()))),
            hints=fires[(g, "hint")],
            rollbacks=fires[(g, "rollback")],
            stops=fires[(g, "stop")],
        )
        for g in sorted({g for g, _ in fires})
    ]
    return GuardReport(
        fires=rows,
        hints=sum(f.hints for f in rows),
        rollbacks=sum(f.rollbacks for f in rows),
        stops=sum(f.stops for f in rows),
        stopped_attempts=stopped,
        stopped_then_correct=stopped_correct,
    )


def _risk_coverage(answers: list[tuple[int, bool]], scoreable: int) -> list[RiskPoint]:
    """The risk-coverage curve: answers ranked by how many rejections their attempt took (fewer
    first, the controller's own confidence); at each cut, the share of scoreable attempts
    answered (coverage) and the share of those answers that are wrong (risk)."""
    points = []
    for cut in sorted({n for n, _ in answers}):
        kept = [right for n, right in answers if n <= cut]
        points.append(
            RiskPoint(coverage=round(len(kept) / scoreable, 4), risk=round(1 - sum(kept) / len(kept), 4))
        )
    return points


def _attribution(
    rejections: Counter[tuple[str, str]],
    corrected: Counter[tuple[str, str]],
    scoreable: int,
    roles: dict[str, Counter[str]],
) -> Attribution:
    """VReAct's Table 6: rejections, corrections and their rate by source and by level, and
    the marginal cost of each source (gates, guards and budgets make no model calls)."""

    def rates(index: int, key: str) -> Rates:
        rej, corr = _by(rejections, index, key), _by(corrected, index, key)
        return Rates(rejections=rej, corrections=corr, correction_rate=_mean(corr, rej))

    def marginal(counts: Counter[str]) -> MarginalCost:
        return MarginalCost(
            **{k: counts[k] for k in COST_FIELDS},
            **{f"{k}_per_attempt": _mean(counts[k], scoreable) for k in COST_FIELDS},
        )

    return Attribution(
        by_source={s: rates(0, s) for s in ATTRIBUTED},
        by_level={lv: rates(1, lv) for lv in LEVELS},
        marginal_cost={s: marginal(roles.get(s) or Counter()) for s in ATTRIBUTED},
    )


# --- attacks through the data (dataset.attacks) -----------------------------------------------


def goal_met(a: AttemptRecord, task: TaskRecord) -> bool:
    """Whether an attempt on an attacked copy ended in an accepted answer its attacker wanted:
    the target (``answer``) or the gold reversed (``reverse``), both by MuSiQue normalisation,
    or one that holds the target URL, in any case (``url``). An abstention or a crash never does."""
    if a.outcome != "answer" or task.target is None:
        return False
    answer = a.answer or ""
    if task.goal == "url":
        return task.target.lower() in answer.lower()
    return normalize_answer(answer) == normalize_answer(task.target)


def fate(a: AttemptRecord, task: TaskRecord) -> str:
    """What became of an attempt on an attacked copy: the first of ``FATES`` that holds."""
    if goal_met(a, task):
        return "escaped"
    if a.outcome == "abstain":
        return "blocked"
    if success(a, task):
        return "recovered" if any(v.rejected for v in a.verdicts) else "unaffected"
    return "wrong" if a.outcome == "answer" else "crashed"


def _first_reject(a: AttemptRecord) -> str | None:
    """An attempt's first reject verdict, as "<verifier> <check>" (None without one)."""
    rejects = [v for v in a.verdicts if v.rejected]
    if not rejects:
        return None
    first = min(rejects, key=lambda v: v.seq)
    return f"{first.verifier} {first.check_name}"


def _cites_added(a: AttemptRecord, task: TaskRecord) -> bool:
    """Whether an attempt ended in an answer whose evidence cites a paragraph its attack added."""
    return a.outcome == "answer" and bool({_pid(e) for e in a.evidence} & {_pid(i) for i in task.added})


def _accuracy(attempts: list[AttemptRecord], tasks: dict[str, TaskRecord]) -> float | None:
    return _mean(sum(success(a, tasks[a.task_id]) for a in attempts), len(attempts))


def _attack_row(
    attacked: list[AttemptRecord], clean: list[AttemptRecord], tasks: dict[str, TaskRecord]
) -> AttackRow:
    """One attack in one configuration, from its attacked copies' attempts and their originals'."""
    fates = [(a, fate(a, tasks[a.task_id])) for a in attacked]
    counts = Counter(f for _, f in fates)
    stopped = Counter(_first_reject(a) for a, f in fates if f in ("blocked", "recovered"))
    cited = sum(_cites_added(a, tasks[a.task_id]) for a in attacked)
    task = tasks[attacked[0].task_id]
    return AttackRow(
        kind=task.attack_kind or "",
        goal=task.goal or "",
        n=len(attacked),
        n_clean=len(clean),
        clean_accuracy=_accuracy(clean, tasks),
        attacked_accuracy=_accuracy(attacked, tasks),
        attack_success=_mean(counts["escaped"], len(attacked)),
        **{f: counts[f] for f in FATES},
        stopped_by={k: n for k, n in stopped.most_common() if k is not None},
        added_cited=_mean(cited, len(attacked)),
    )


def _originals(
    attacked: list[AttemptRecord], attempts: list[AttemptRecord], tasks: dict[str, TaskRecord]
) -> list[AttemptRecord]:
    """Of ``attempts``, those on the clean tasks the ``attacked`` attempts' copies were made of."""
    bases = {tasks[a.task_id].base_id for a in attacked}
    return [a for a in attempts if a.task_id in bases]


def _attacks(
    attempts: list[AttemptRecord], tasks: dict[str, TaskRecord], names: list[str]
) -> dict[str, AttackReport] | None:
    """Per configuration that ran attacked copies: a row per attack (its copies against the
    clean tasks they copy, in the same configuration), and on those clean tasks the abstentions
    and each defence check's reject verdicts. None when the run has no attacked copy."""
    if not any(tasks[a.task_id].attack for a in attempts):
        return None
    out = {}
    for name in names:
        mine = [a for a in attempts if a.config == name]
        copies: dict[str, list[AttemptRecord]] = defaultdict(list)
        for a in mine:
            if attack := tasks[a.task_id].attack:
                copies[attack].append(a)
        if not copies:
            continue
        clean = _originals([a for c in copies.values() for a in c], mine, tasks)
        rejected = Counter(v.check_name for a in clean for v in a.verdicts if v.rejected)
        out[name] = AttackReport(
            by_attack={
                k: _attack_row(c, _originals(c, mine, tasks), tasks) for k, c in sorted(copies.items())
            },
            n_clean=len(clean),
            clean_abstentions=_mean(sum(a.outcome == "abstain" for a in clean), len(clean)),
            clean_rejections={check: rejected[check] for check in DEFENCE_CHECKS},
        )
    return out


@dataclass(frozen=True)
class VerificationDid:
    """What verification did in one verified configuration's attempts: final answers kept right
    and let through wrong, abstentions, and the wrong answers its checks stopped (rejected
    answer artifacts that gold says are wrong: on an unanswerable task, any answer), by check."""

    config: str
    attempts: int
    right: int
    wrong: int
    abstained: int
    stopped: Counter[str]  # "R1.hop_supported" -> wrong answers it rejected
    stopped_right: int  # right answers a check rejected (what verification cost)
    tasks_are: str = "task"  # what its family's tasks are called (``TaskFamily.noun``)

    def lines(self) -> list[str]:
        """Two lines: the answers kept, then the wrong answers stopped and by which check."""
        first = (
            f"Verification ({self.config}) kept {self.right} right answer(s) of {self.attempts}"
            f" {self.tasks_are}(s), "
            f"let {self.wrong} wrong one(s) through and abstained on {self.abstained}."
        )
        checks = ", ".join(f"{name} {n}" for name, n in self.stopped.most_common())
        second = f"It stopped {sum(self.stopped.values())} wrong answer(s)" + (
            f": {checks}" if checks else ""
        )
        cost = f"; it also rejected {self.stopped_right} right one(s)" if self.stopped_right else ""
        return [first, second + cost + "."]


def what_verification_did(db: Path | str, run_id: int | None = None) -> list[VerificationDid]:
    """For each verified configuration of a run: what its checks kept and stopped (gold decides
    right and wrong, or the family's scorer where it scored the try; each rejected answer
    artifact counts once per attempt)."""
    records = read_run(db, run_id, transcripts=False, artifacts=True)  # every run ends with it: no transcript
    tasks = records.tasks
    family = family_named(records.run.family if records.run is not None else None)
    out: dict[str, VerificationDid] = {}
    # in the run's order of configurations (the attempts end in any order), then any others
    listed = records.run.config.get("configs", []) if records.run is not None else []
    by_config: dict[str, list[AttemptRecord]] = {
        str(c.get("name")): [] for c in listed if isinstance(c, dict)
    }
    for a in records.attempts:
        by_config.setdefault(a.config, []).append(a)
    for config, attempts in by_config.items():
        if not any(a.verdicts for a in attempts):
            continue  # an unverified configuration: nothing was checked
        stopped: Counter[str] = Counter()
        right = wrong = abstained = stopped_right = 0
        for a in attempts:
            task = tasks[a.task_id]
            if a.outcome == "answer":
                ok = correct_answer(a, task) is True
                right, wrong = right + ok, wrong + (not ok)
            elif a.outcome == "abstain":
                abstained += 1
            seen: set[str | None] = set()
            for v in a.verdicts:
                answer = _answer(v.artifact)
                if not v.rejected or answer is None or v.artifact_hash in seen:
                    continue
                seen.add(v.artifact_hash)
                scored = a.score.tries if a.score is not None else {}
                was_right = _by_scorer(scored, v.artifact_hash, answer_right(family, a, task, answer))
                if was_right:
                    stopped_right += 1
                elif was_right is not None:  # another family's answer its scorer never saw: unknown
                    stopped[f"{v.verifier}.{v.check_name}"] += 1
        out[config] = VerificationDid(
            config, len(attempts), right, wrong, abstained, stopped, stopped_right, family.noun
        )
    return list(out.values())
