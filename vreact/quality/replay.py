"""``vreact replay``: a recorded run's verified artifacts checked again by another verifier set,
from the gate input stored with each verdict (and, for the final answer, with its ledger row),
without a model. The source is read only; the replay is a run folder of its own.

What it tells: for each check of each artifact, whether the new set's verdict differs from the
recorded one (accept -> reject, reject -> accept, unchanged, newly run, no longer run); for
each final answer, what the new set would have kept, with gold correctness, so each
configuration gets a post-hoc point (coverage, selective accuracy, silent errors) beside the
point it reached as run. It never claims to know what a retry would have produced: an added
rejection says only what the controller would have done next.

With ``examples="stated"`` (code), each entry point's recorded input is checked with the examples
its prompt states, as the parser reads them now, instead of those it was run with: what the gates
reject when nothing filtered the examples."""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from vreact.config import Configuration
from vreact.controller._context import AttemptContext, Recorder
from vreact.controller._outcome import Outcome
from vreact.families import DEFAULT, Score, TaskFamily, family_of, provides
from vreact.memory import ContextAssembler
from vreact.model import Model
from vreact.quality.probe import paired
from vreact.records import (
    DB_NAME,
    AttemptRecord,
    Store,
    TaskRecord,
    config_order,
    correct_answer,
    exclusive,
    open_to_read,
    provenance,
    read_run,
    unscored,
)
from vreact.spec import RoleSchema, TaskSpec, VerifierSet
from vreact.v import V, judge_name
from vreact.verdict import Decision, Verdict, artifact_hash
from vreact.verify.agreement import Group, witnesses
from vreact.verify.gates import Gate
from vreact.verify.verifier import Verifiers, built_gates, run_gate

KIND = "replay"
#: The verifiers whose gates a final answer passes through, in the controller's order.
FINAL = ("R1", "R3")


class ReplayError(ValueError):
    """A source that cannot be replayed (one line)."""


@dataclass(frozen=True)
class Event:
    """One check of one artifact by one verifier's gates, as recorded: its gates' verdicts in order."""

    verifier: str
    component: str
    input_hash: str
    verdicts: tuple[Any, ...]  # VerdictRecord


@dataclass
class Replayed:
    """One source attempt replayed: each check's flips, and the final answer under the new set."""

    attempt: AttemptRecord
    flips: list[dict[str, Any]] = field(default_factory=list)
    final_kept: bool | None = None  # None: no final answer to filter (an abstention, a crash)
    final_reject: str = ""  # "R3.multi_hop:single_hop"
    final_detail: str = ""  # that rejection's detail
    #: each check's verdict as a whole (any gate's reject rejects), recorded -> replayed, where it
    #: changed: (verifier, "accept->reject" | "reject->accept", the artifact right by gold or None)
    turned: list[tuple[str, str, bool | None]] = field(default_factory=list)
    #: the new set's verdicts: (verifier, component, gate input, [(gate, decision, cause, detail)])
    checks: list[tuple[str, str, dict[str, Any], list[Any]]] = field(default_factory=list)
    #: what R3's judge may run beside the answer (``AttemptContext.witnesses``): agreement's other
    #: undisputed groups' candidates, read back from their R1 verdicts' gate inputs
    witnesses: tuple[Any, ...] = ()


Unit = Callable[[dict[str, Any]], Any]


def input_of(data: dict[str, Any], unit: Unit | None = None) -> Any:
    """The artifact a gate input stands for, read back by ``unit`` (the run's task family's;
    None: question answering's)."""
    return (unit or unit_of(None))(data)


def unit_of(family: str | None) -> Unit:
    """How a run's artifacts read back from their gate inputs: its task family's ``unit``
    (question answering's for records made before families)."""
    return family_of(family or DEFAULT).unit


def check(gates: tuple[Gate, ...], artifact: Any) -> list[tuple[Gate, Decision, str, str]]:
    """The gates in order on ``artifact``, stopping at the first reject (as a run does)."""
    out: list[tuple[Gate, Decision, str, str]] = []
    for g in gates:
        if not g.applies_to(artifact):
            continue
        result = run_gate(g, artifact)[0]
        out.append((g, "accept" if result.ok else "reject", result.cause, result.detail))
        if not result.ok:
            break
    return out


def events(attempt: AttemptRecord) -> Iterator[Event]:
    """The attempt's checks in order: a run of gate verdicts (then its judge's) with one verifier,
    component and input; a check met again starts the next one (the same artifact proposed
    again)."""
    current: list[Any] = []
    for v in attempt.verdicts:
        if v.source not in ("gate", "judge") or v.input_hash is None:
            continue
        key = (v.verifier, v.component, v.input_hash)
        if current and (
            key != (current[0].verifier, current[0].component, current[0].input_hash)
            or any(c.check_name == v.check_name for c in current)
        ):
            yield Event(current[0].verifier, current[0].component, current[0].input_hash, tuple(current))
            current = []
        current.append(v)
    if current:
        yield Event(current[0].verifier, current[0].component, current[0].input_hash, tuple(current))


def final_input(attempt: AttemptRecord) -> dict[str, Any] | None:
    """The final answer's gate input: the last ledger row of kind ``answer`` (N's and NP's too)."""
    rows = [r for r in attempt.ledger if r.kind == "answer" and isinstance(r.input, dict)]
    return rows[-1].input if rows and attempt.outcome == "answer" else None


def what_next(verifier: str, budget_left: int | None) -> str:
    """What the controller does after a rejection by ``verifier`` with ``budget_left`` tries left."""
    v = V.get(verifier)
    if v is None:
        return "a rejection"
    if budget_left is None:
        return f"route to {v.route}"
    if budget_left > 0:
        return f"retry ({v.route}), {budget_left} left"
    return f"abstain naming {v.abstain}" if v.abstain else "fall back"


def mcnemar(before: list[bool], after: list[bool]) -> tuple[float, float]:
    """The paired difference in success rate (after - before) and McNemar's exact two-sided p
    (the binomial test on the discordant pairs)."""
    b = sum(x and not y for x, y in zip(before, after, strict=True))
    c = sum(y and not x for x, y in zip(before, after, strict=True))
    n = b + c
    diff = (c - b) / len(before) if before else 0.0
    if n == 0:
        return diff, 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return diff, min(1.0, 2 * tail)


@dataclass
class Replay:
    """What one replay checks: a source folder's run, the new spec and verifier set."""

    source: Path
    spec: TaskSpec
    verifiers: VerifierSet
    run_id: int | None = None
    judge: str | None = None  # the judges' model (None: gates only)
    #: the examples each entry point's input is checked with: None, those it was run with;
    #: ``stated``, those its prompt states (``TaskFamily.with_stated_examples``)
    examples: Literal["stated"] | None = None

    def identity(self, run_id: int, folder: Path) -> dict[str, Any]:
        """What the replay's run stores, written into ``folder``: the source by its path from
        there, so a replay and its source kept side by side (as under docs/evidence/) read each
        other in any clone, and no folder outside it is named."""
        stated = {"examples": self.examples} if self.examples else {}
        return {
            "kind": KIND,
            "source": os.path.relpath(self.source.resolve(), folder.resolve()),
            "source_run": run_id,
            "spec": self.spec.model_dump(mode="json"),
            "verifiers": self.verifiers.model_dump(mode="json"),
            "judge": self.judge,
            **stated,
        }


def source_sets(source: Path, run_id: int | None) -> tuple[int, TaskSpec, VerifierSet]:
    """The source run's id and its own spec and verifier set (what an identity replay uses)."""
    store = open_to_read(source / DB_NAME)
    try:
        runs = dict(store.run_configs())
        rid = run_id if run_id is not None else max(runs, default=None)
        if rid is None or rid not in runs:
            raise ReplayError(
                f"{source}: no run {'' if run_id is None else run_id} to replay".replace("  ", " ")
            )
        config = runs[rid]
        kind = config.get("kind") if isinstance(config, dict) else None
        if kind in ("probe", KIND):
            raise ReplayError(f"{source}: run {rid} is a {kind}, not a run: replay the run itself")
        if not isinstance(config, dict) or "verifiers" not in config or "spec" not in config:
            raise ReplayError(
                f"{source}: run {rid} records no verifier set (a probe or a replay is not replayed)"
            )
        return rid, *_sets(config, f"{source}: run {rid}")
    finally:
        store.close()


def _sets(
    config: dict[str, Any], where: str, remedy: str = "give --verifiers FILE or --plugin MODULE"
) -> tuple[TaskSpec, VerifierSet]:
    """The spec and verifier set a run's stored configuration holds (their plugins loaded);
    ``remedy`` says what the command that reads it can be given when a name is not registered."""
    try:
        return TaskSpec.model_validate(config["spec"]), VerifierSet.model_validate(config["verifiers"])
    except ValidationError as e:
        first = e.errors()[0]
        raise ReplayError(
            f"{where}: its stored verifier set cannot be loaded here ({first['msg']}); {remedy}"
        ) from None


def stored(config: Any, folder: Path) -> Replay | None:
    """The replay a replay folder's run stored (None: the run is no replay); its source, stored
    by its path from ``folder`` (an older replay's: an absolute one), as a path from here."""
    if not isinstance(config, dict) or config.get("kind") != KIND:
        return None
    # read back by report and view, which take no verifier set: only the plugin that names it
    remedy = "give --plugin MODULE, the plugin that registers it"
    spec, verifiers = _sets(config, f"replay of {config.get('source')}", remedy)
    return Replay(
        Path(os.path.normpath(folder / str(config["source"]))),
        spec,
        verifiers,
        int(config["source_run"]),
        config.get("judge"),
        config.get("examples"),
    )


@dataclass
class Result:
    """A replay computed (nothing written): the source run, each attempt replayed, the gates found
    non-deterministic."""

    setup: Replay
    run_id: int
    dataset: str
    tasks: dict[str, TaskRecord]
    replayed: list[Replayed]
    unstable: list[str]
    family: str | None = None  # the source run's task family (None: its writer named none)


def compute(setup: Replay, judged: Judged | None = None) -> Result:
    """The source run's checks and final answers under the new set, read-only (the source is
    opened read-only, and nothing is written). ``judged`` holds the judges' decisions a replay
    folder recorded (``judged_in``): they join the gates where every gate passed."""
    source_db = setup.source / DB_NAME
    if not source_db.is_file():
        raise ReplayError(f"{setup.source}: no {DB_NAME} here; give a folder made by 'vreact run'")
    source = open_to_read(source_db)  # once: an older vreact's records, one migrated copy
    try:
        records = read_run(source, setup.run_id, transcripts=False, artifacts=False)
        if records.id is None:
            raise ReplayError(f"{setup.source}: no run to replay")
        inputs = _inputs(source, records.id)
        before = _before_inputs(source, records.run.started if records.run else None)
    finally:
        source.close()
    if before:
        raise ReplayError(
            f"{setup.source}: run {records.id} was recorded before vreact kept each verdict's gate input"
            " (records migration 019); replay needs a run made since"
        )
    gates = built_gates(setup.spec, setup.verifiers)
    unstable: list[str] = []
    names = {v: judge_name(v) for v in FINAL if getattr(setup.verifiers, v).judge is not None}
    judges = _Judges(judged or {}, names, setup.verifiers)
    family = records.run.family if records.run else None
    unit = unit_of(family)
    restate = _restate(setup, family)
    of = family_of(family or DEFAULT)
    replayed = [
        _attempt(a, records.tasks.get(a.task_id), gates, inputs, unstable, judges, unit, restate, of)
        for a in records.attempts
    ]
    dataset = records.run.dataset if records.run else ""
    order = config_order(records)
    replayed.sort(key=lambda r: order.index(r.attempt.config))  # the run's order, not its finishing
    return Result(setup, records.id, dataset or "", records.tasks, replayed, unstable, family)


Restate = Callable[[str, dict[str, Any], "TaskRecord | None"], dict[str, Any]]


def _restate(setup: Replay, family: str | None) -> Restate | None:
    """How a recorded input is checked again: as recorded (None), or with the examples its task
    states (``--examples stated``: a family whose tasks state none is refused)."""
    if setup.examples is None:
        return None
    found = family_of(family or DEFAULT)
    if not provides(found, "with_stated_examples"):
        raise ReplayError(
            f"{setup.source}: a run of the {found.name} family, whose tasks state no examples:"
            " --examples stated re-checks the code family's programs"
        )

    def restate(verifier: str, data: dict[str, Any], task: TaskRecord | None) -> dict[str, Any]:
        return found.with_stated_examples(verifier, data, (task.question if task else "") or "")

    return restate


def _before_inputs(store: Store, started: float | None) -> bool:
    """Whether the run began before its folder kept gate inputs (migration 019 applied after it
    started: its verdicts and ledger rows hold none, and nothing can be checked again; applied
    now, to the private copy of a folder that lacks it)."""
    row = next(store.query("select applied from _migrations where name = '_m019_gate_inputs'"), None)
    return row is not None and started is not None and started < row["applied"]


def write(result: Result, out_dir: Path, judge: Model | None = None, roles: RoleSchema | None = None) -> int:
    """The replay as a run folder of its own: one attempt per source attempt (its outcome with the
    final answer filtered), the new set's verdicts with their gate inputs; its run names the
    source folder and run. With ``judge``, the set's R1 and R3 judges run through that model on
    each check every gate passed, recorded and costed as a run's calls (``compute`` with
    ``judged_in`` reads them back). Returns its run id."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with exclusive(out_dir):
        store = Store(out_dir / DB_NAME)
        try:
            if any(True for _ in store.run_configs()):
                raise ReplayError(
                    f"{out_dir}: holds a run already; give the replay a folder of its own (--out)"
                )
            family = {"family": result.family} if result.family else None
            identity = result.setup.identity(result.run_id, out_dir)
            run_id = store.new_run(identity, "gates", result.dataset, family)
            store.record_provenance(run_id, provenance.collect([judge] if judge is not None else []))
            store.add_tasks([_task_row(t) for t in result.tasks.values()])
            unit = unit_of(result.family)
            for r in result.replayed:
                a = r.attempt
                aid = store.start_attempt(run_id, a.config, a.task_id, a.attempt_index, a.seed or 0)
                for verifier, component, data, new in r.checks:
                    _record(store, aid, verifier, component, data, new, unit)
                if judge is not None and roles is not None:
                    _judge(store, aid, result, r, judge, roles)
                outcome = _outcome(a, r)
                store.finish_attempt(aid, outcome.record(), *_scores(a, outcome))
            store.finish_run(run_id)
        finally:
            store.close()
    return run_id


class _Read(SimpleNamespace):
    """A recorded task as its judges read it: an id and its text, and what its family records of
    it beyond the columns (code: ``entry_point``, ``examples``), as attributes."""

    def __init__(self, id: str, text: str, record: Any = None) -> None:
        fields = record if isinstance(record, dict) else {}
        super().__init__(**{**fields, "id": id, "text": text})


def _judge(store: Store, aid: int, result: Result, r: Replayed, judge: Model, roles: RoleSchema) -> None:
    """The set's R1 and R3 judges on each check of ``r`` whose gates all passed (a plan's and a
    chain's are not judged here: their paired level is the run's plan)."""
    setup, a = result.setup, r.attempt
    record = result.tasks.get(a.task_id)
    text = (record.question if record else "") or ""
    family = family_of(result.family or DEFAULT)
    task = _Read(a.task_id, text, record.record if record else None)  # what a paired level reads
    config = Configuration(name=a.config, gates=True, judges=True)
    recorder = Recorder(store, aid)
    models = {"judge": judge, "default": judge}
    ctx = AttemptContext(config, task, models, ContextAssembler(roles, store), recorder, family=family)
    verifiers = Verifiers(config, setup.spec, setup.verifiers)
    # a final answer is judged only where every gate of R1 and R3 passed it, as the probe does
    final_cleared = all(d == "accept" for _, c, _, new in r.checks if c == "final" for _, d, _, _ in new)
    for verifier, component, data, new in r.checks:
        cleared = final_cleared if component == "final" else all(d == "accept" for _, d, _, _ in new)
        if verifier not in FINAL or not cleared or verifiers.judges[verifier] is None:
            continue
        artifact = input_of(data, unit_of(result.family))  # the run's family's artifact
        ctx.witnesses = r.witnesses if verifier == "R3" else ()
        rejection = verifiers.judge(
            ctx, verifier, component, artifact, paired(verifier, task, setup.spec, verifiers, family.name)
        )
        if rejection is not None:
            recorder.verdict(rejection.verdict(component, 0), rejection.artifact, rejection.given)


def _inputs(store: Store, run_id: int) -> dict[str, Any]:
    sub = "(select id from attempts where run_id = ?)"
    rows = store.query(
        "select hash, json from inputs where hash in"
        f" (select input_hash from verdicts where attempt_id in {sub})",
        [run_id],
    )
    return {r["hash"]: json.loads(r["json"]) for r in rows}


def _task_row(t: TaskRecord) -> dict[str, Any]:
    return {
        "id": t.id,
        "question": t.question,
        "answer": t.answer,
        "aliases": json.dumps(t.aliases),
        "answerable": int(t.answerable),
        "hops": t.hops,
        "support": json.dumps(t.support),
        "pair_id": t.pair_id,
        "family": t.family,
        "record": json.dumps(t.record) if t.record is not None else None,
    }


def _attempt(
    a: AttemptRecord,
    task: TaskRecord | None,
    gates: dict[str, tuple[Gate, ...]],
    inputs: dict[str, Any],
    unstable: list[str],
    judges: _Judges,
    unit: Unit | None = None,
    restate: Restate | None = None,
    family: TaskFamily | None = None,
) -> Replayed:
    r = Replayed(a, witnesses=_witnesses(a, inputs, unit))
    for e in events(a):
        data = inputs.get(e.input_hash)
        if data is None or e.verifier not in gates:
            continue
        recorded = data
        data = restate(e.verifier, data, task) if restate is not None else data
        new = check(gates[e.verifier], input_of(data, unit))
        r.checks.append((e.verifier, e.component, data, new))
        new = new + judges.of(a, e.verifier, e.component, data, new)
        # a verdict on another input than the recorded one is no sign of a non-deterministic gate
        r.flips += _flips(a, e, new, unstable if data == recorded else [])
        was = "reject" if any(v.decision == "reject" for v in e.verdicts) else "accept"
        now = "reject" if any(d == "reject" for _, d, _, _ in new) else "accept"
        if was != now:
            r.turned.append((e.verifier, f"{was}->{now}", _right(data, task, family or TaskFamily())))
    final = final_input(a)
    if final is not None:
        first = None
        for verifier in FINAL:
            data = restate(verifier, final, task) if restate is not None else final
            verdicts = check(gates.get(verifier, ()), input_of(data, unit))
            r.checks.append((verifier, "final", data, verdicts))
            verdicts = verdicts + judges.of(a, verifier, "final", data, verdicts)
            if first is None:
                first = next(
                    ((f"{verifier}.{g.name}:{c}", t) for g, d, c, t in verdicts if d == "reject"), None
                )
        r.final_kept = first is None
        r.final_reject, r.final_detail = first or ("", "")
    return r


def _witnesses(a: AttemptRecord, inputs: dict[str, Any], unit: Unit | None) -> tuple[Any, ...]:
    """The candidates an attempt's agreement left beside the one R3 checked, as its run gave them
    to R3's judge (``vreact.controller._candidates``): the first of each undisputed group but the
    checked one's (none where no candidate reached R3)."""
    g = a.agreement
    if g is None or g.selected != "agree" or not g.groups or (g.chosen is None and g.cause != "r3"):
        return ()
    checked = g.chosen if g.chosen is not None else g.groups[0]["members"][0]  # R3 refused it: "r3"
    input_of_hash = {v.artifact_hash: v.input_hash for v in a.verdicts if v.verifier == "R1" and v.input_hash}
    groups = [Group(tuple(x["members"]), x["disputed"]) for x in g.groups]
    found = (inputs.get(input_of_hash.get(g.hashes.get(str(i)), "")) for i in witnesses(groups, checked))
    return tuple(input_of(data, unit) for data in found if data is not None)


def _record(
    store: Store,
    aid: int,
    verifier: str,
    component: str,
    data: dict[str, Any],
    new: list[Any],
    unit: Unit | None = None,
) -> None:
    ident = input_of(data, unit).identity()
    h = artifact_hash(ident)
    verdicts = [
        Verdict(verifier, component, "gate", g.name, d, cause, detail, None, h, g.args)
        for g, d, cause, detail in new
    ]
    store.record_verdicts(aid, verdicts, ident, given=data)


Judged = dict[tuple[str, str, int, str, str, str], tuple[str, str, str]]


@dataclass(frozen=True)
class JudgeCheck:
    """A judge in a replay's list of checks (beside the gates: a name and its arguments)."""

    name: str
    args: dict[str, Any]
    source: str = "judge"

    def applies_to(self, artifact: Any) -> bool:
        return True


@dataclass
class _Judges:
    """The judges' decisions a replay recorded, by attempt, verifier, component and input."""

    judged: Judged
    names: dict[str, str]  # verifier -> its judge's check name, for the set's judges
    verifiers: VerifierSet

    def of(self, a: AttemptRecord, verifier: str, component: str, data: Any, gates: list[Any]) -> list[Any]:
        """The judge's verdict as a check after ``gates`` (none: no judge, a gate rejected, or not judged)."""
        if verifier not in self.names or any(d == "reject" for _, d, _, _ in gates):
            return []
        found = self.judged.get(
            (a.config, a.task_id, a.attempt_index, verifier, component, artifact_hash(data))
        )
        if found is None:
            return []
        spec = getattr(self.verifiers, verifier).judge
        check = JudgeCheck(self.names[verifier], spec.model_dump() if spec else {})
        return [(check, *found)]


def judged_in(store: Store, run_id: int) -> Judged:
    """The judges' decisions a replay folder's run recorded."""
    rows = store.query(
        "select a.config, a.task_id, a.attempt_index, v.verifier, v.component, v.input_hash, v.decision,"
        " v.cause, v.detail from verdicts v join attempts a on a.id = v.attempt_id"
        " where a.run_id = ? and v.source = 'judge' and v.input_hash is not null",
        [run_id],
    )
    return {
        (r["config"], r["task_id"], r["attempt_index"], r["verifier"], r["component"], r["input_hash"]): (
            r["decision"],
            r["cause"] or "",
            r["detail"] or "",
        )
        for r in rows
    }


def _right(data: dict[str, Any], task: TaskRecord | None, family: TaskFamily) -> bool | None:
    """Whether an answer artifact's answer is right by gold, as the run's family judges a
    recorded task's answer (``TaskFamily.answer_right``; None: not an answer, no task, or a
    family whose answers are scored only when an attempt ends)."""
    if task is None or data.get("kind") != "answer":
        return None
    return family.answer_right(task, str(data.get("answer") or ""))


def _flips(a: AttemptRecord, e: Event, new: list[Any], unstable: list[str]) -> list[dict[str, Any]]:
    """Each gate of one check, recorded against replayed: its change, and for an added
    rejection what the controller would have done next."""
    was = {v.check_name: v for v in e.verdicts}
    now = {g.name: (g, d) for g, d, _, _ in new}
    budget = next((v.budget_left for v in e.verdicts), None)
    out = []
    for name in dict.fromkeys([*was, *now]):
        old, cur = was.get(name), now.get(name)
        if old is None:
            change = "newly run"
        elif cur is None:
            change = "no longer run"
        elif old.decision == cur[1]:
            change = "unchanged"
        else:
            change = f"{old.decision}->{cur[1]}"
            if old.source == "gate" and _same_args(old.args, cur[0].args):  # a judge may differ
                unstable.append(
                    f"{e.verifier}.{name} on attempt {a.id} ({a.config}, {a.task_id}): "
                    f"recorded {old.decision}, now {cur[1]}"
                )
        out.append(
            {
                "config": a.config,
                "verifier": e.verifier,
                "check": name,
                "change": change,
                "next": what_next(e.verifier, budget) if change == "accept->reject" else "",
            }
        )
    return out


def _same_args(recorded: Any, built: dict[str, Any]) -> bool:
    return json.dumps(recorded or {}, sort_keys=True, default=str) == json.dumps(
        built, sort_keys=True, default=str
    )


def _scores(a: AttemptRecord, outcome: Outcome) -> list[Score]:
    """The source attempt's scores (each scorer's, the primary first), as the replayed outcome
    keeps them: its answer's where the new set kept it, none for an answer it turned into an
    abstention (nothing was answered)."""
    if a.score is None or outcome.kind == "crash":
        return []
    scores = [a.score, *(s for s in a.scores.values() if s is not a.score)]
    if outcome.kind == "abstain" and a.outcome == "answer":
        return [Score(None, {}, scorer=s.scorer) for s in scores]
    return [Score(s.correct, s.metrics, scorer=s.scorer) for s in scores]


def _outcome(a: AttemptRecord, r: Replayed) -> Outcome:
    """The source attempt's outcome with its final answer filtered by the new set."""
    if a.outcome == "crash":
        return Outcome("crash", error=a.error or "", crash_kind=a.crash_kind)  # type: ignore[arg-type]
    if a.outcome == "answer" and r.final_kept is False:
        verifier = r.final_reject.partition(".")[0]
        level = V[verifier].abstain if verifier in V else None
        return Outcome("abstain", level=level, component="answer", cause=r.final_reject)
    if a.outcome == "answer":
        return Outcome("answer", answer=a.answer, evidence=list(a.evidence))
    return Outcome(
        "abstain",
        level=a.abstain_level,
        component=a.abstain_component,
        cause=a.abstain_cause or "",
    )


# --- the tables ---------------------------------------------------------------------------------


class Point(BaseModel):
    """A configuration's point on the risk-coverage chart, over its scoreable attempts."""

    attempts: int
    answered: int
    coverage: float | None
    selective_accuracy: float | None  # right answers over answers
    silent_errors: int  # answers that are wrong (or given where none exists)


class ConfigReplay(BaseModel):
    """A configuration as run, and with its final answers filtered by the new set post hoc; the
    answers the new set rejects by gold correctness; the paired difference in success (a right
    answer or an abstention where none exists) with McNemar's exact p."""

    config: str
    as_run: Point
    post_hoc: Point
    rejected_right: int
    rejected_wrong: int
    diff: float
    p: float


class CheckReplay(BaseModel):
    """One check of one configuration, recorded against replayed: how often each change, and what
    the controller would have done next after each added rejection."""

    config: str
    verifier: str
    check: str
    unchanged: int = 0
    accept_to_reject: int = 0
    reject_to_accept: int = 0
    newly_run: int = 0
    no_longer_run: int = 0
    next: dict[str, int] = {}


class Turned(BaseModel):
    """One verifier of one configuration: the checks whose verdict as a whole changed, by the
    gold correctness of the artifact's answer (right, wrong; unscored: not an answer)."""

    config: str
    verifier: str
    accept_to_reject: dict[str, int]
    reject_to_accept: dict[str, int]


class Rejected(BaseModel):
    """A final answer of the run the set rejects post hoc: which attempt, the first check that
    rejects it and why, and whether it is right under each scorer the run records (None: not
    scored)."""

    config: str
    task_id: str
    attempt: int
    rejected_by: str  # "R1.examples_pass:example_failed"
    detail: str
    right: dict[str, bool | None]


class ReplayReport(BaseModel):
    """``vreact replay --json`` (and ``vreact report --json`` of a replay folder)."""

    kind: Literal["replay"] = "replay"
    source: str
    source_run: int
    verifiers: str
    #: the examples each entry point's input was checked with: None, as run; ``stated``, as its
    #: prompt states them
    examples: str | None = None
    configs: list[ConfigReplay]
    #: each answer the set rejects post hoc
    rejected: list[Rejected] = []
    verdicts: list[Turned]
    checks: list[CheckReplay]
    nondeterministic: list[str]


_CHANGES = {
    "unchanged": "unchanged",
    "accept->reject": "accept_to_reject",
    "reject->accept": "reject_to_accept",
    "newly run": "newly_run",
    "no longer run": "no_longer_run",
}


def point(rows: list[tuple[bool, bool, bool]]) -> Point:
    """(answered, right, answerable) per scoreable attempt."""
    kept = [right for answered, right, _ in rows if answered]
    n, right = len(rows), sum(kept)
    return Point(
        attempts=n,
        answered=len(kept),
        coverage=round(len(kept) / n, 3) if n else None,
        selective_accuracy=round(right / len(kept), 3) if kept else None,
        silent_errors=len(kept) - right,
    )


def report(result: Result) -> ReplayReport:
    configs: dict[str, list[Replayed]] = defaultdict(list)
    for r in result.replayed:
        if r.attempt.outcome != "crash" and r.attempt.task_id in result.tasks:
            configs[r.attempt.config].append(r)
    rows, rejected = [], []
    for name, rs in configs.items():
        asrun, post, before, after = [], [], [], []
        rejected_right = rejected_wrong = 0
        for r in rs:
            task = result.tasks[r.attempt.task_id]
            if unscored(r.attempt, task):  # nothing says right or wrong: out of the points
                continue
            answered = r.attempt.outcome == "answer"
            right = answered and correct_answer(r.attempt, task) is True
            kept = answered and r.final_kept is not False
            asrun.append((answered, right, task.answerable))
            post.append((kept, right and kept, task.answerable))
            before.append(right if answered else not task.answerable)
            after.append(right if kept else not task.answerable)
            if answered and not kept:
                rejected_right += right
                rejected_wrong += not right
                rejected.append(_rejected(r, right))
        diff, p = mcnemar(before, after)
        rows.append(
            ConfigReplay(
                config=name,
                as_run=point(asrun),
                post_hoc=point(post),
                rejected_right=rejected_right,
                rejected_wrong=rejected_wrong,
                diff=round(diff, 3),
                p=round(p, 4),
            )
        )
    checks: dict[tuple[str, str, str], CheckReplay] = {}
    for r in result.replayed:
        for f in r.flips:
            key = (f["config"], f["verifier"], f["check"])
            row = checks.setdefault(key, CheckReplay(config=key[0], verifier=key[1], check=key[2]))
            field_name = _CHANGES[f["change"]]
            setattr(row, field_name, getattr(row, field_name) + 1)
            if f["next"]:
                row.next[f["next"]] = row.next.get(f["next"], 0) + 1
    turned: dict[tuple[str, str], Turned] = {}
    for r in result.replayed:
        for verifier, change, is_right in r.turned:
            t = turned.setdefault(
                (r.attempt.config, verifier),
                Turned(config=r.attempt.config, verifier=verifier, accept_to_reject={}, reject_to_accept={}),
            )
            counts = t.accept_to_reject if change == "accept->reject" else t.reject_to_accept
            score = "unscored" if is_right is None else "right" if is_right else "wrong"
            counts[score] = counts.get(score, 0) + 1
    return ReplayReport(
        source=str(result.setup.source),
        source_run=result.run_id,
        verifiers=result.setup.verifiers.name,
        examples=result.setup.examples,
        configs=rows,
        rejected=rejected,
        verdicts=list(turned.values()),
        checks=list(checks.values()),
        nondeterministic=result.unstable,
    )


def _rejected(r: Replayed, right: bool) -> Rejected:
    a = r.attempt
    by = {name: s.correct for name, s in a.scores.items()} or {"": right}
    return Rejected(
        config=a.config,
        task_id=a.task_id,
        attempt=a.attempt_index,
        rejected_by=r.final_reject,
        detail=r.final_detail,
        right=by,
    )


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def tables(r: ReplayReport) -> list[tuple[str, list[str], list[list[str]]]]:
    points = []
    for c in r.configs:
        for label, p in (("as run", c.as_run), ("post hoc", c.post_hoc)):
            points.append(
                [
                    c.config,
                    label,
                    str(p.attempts),
                    str(p.answered),
                    _f(p.coverage),
                    _f(p.selective_accuracy),
                    str(p.silent_errors),
                ]
            )
    rejected = [
        [c.config, str(c.rejected_right), str(c.rejected_wrong), f"{c.diff * 100:+.1f}", f"{c.p:.3f}"]
        for c in r.configs
    ]
    checks = [
        [
            c.config,
            f"{c.verifier}.{c.check}",
            str(c.unchanged),
            str(c.accept_to_reject),
            str(c.reject_to_accept),
            str(c.newly_run),
            str(c.no_longer_run),
            "; ".join(f"{k} x{n}" for k, n in c.next.items()) or "-",
        ]
        for c in r.checks
    ]

    def counts(c: dict[str, int]) -> list[str]:
        return [str(c.get("right", 0)), str(c.get("wrong", 0)), str(c.get("unscored", 0))]

    turned = [
        [t.config, t.verifier, *counts(t.accept_to_reject), *counts(t.reject_to_accept)] for t in r.verdicts
    ]

    def right(x: bool | None) -> str:
        return "-" if x is None else "right" if x else "wrong"

    scorers = list(dict.fromkeys(k for x in r.rejected for k in x.right))
    rejects = []
    for x in r.rejected:
        scored = [right(x.right.get(k)) for k in scorers]
        rejects.append([x.config, x.task_id, str(x.attempt), x.rejected_by, *scored, x.detail])
    stated = ", each entry point's examples as its prompt states them" if r.examples == "stated" else ""
    out = [
        (
            f"Replay of run {r.source_run} ({r.source}) with the verifier set {r.verifiers}{stated}: each"
            " configuration as run and with its final answers filtered post hoc",
            ["config", "point", "scoreable", "answered", "coverage", "sel. acc", "silent err"],
            points,
        ),
        (
            "The final answers the set rejects post hoc, by gold; the paired difference in success (points)"
            " with McNemar's exact p",
            ["config", "right rejected", "wrong rejected", "diff", "p"],
            rejected,
        ),
        (
            "Each answer the set rejects post hoc: the first check that rejects it, and the answer by"
            " each scorer the run records",
            ["config", "task", "attempt", "rejected by", *(k or "score" for k in scorers), "why"],
            rejects or [["-", "none", "", "", *("" for _ in scorers), ""]],
        ),
        (
            "Verdicts that changed, by the gold correctness of the answer checked (unscored: a plan, a chain,"
            " an abstention)",
            [
                "config",
                "verifier",
                "acc->rej right",
                "wrong",
                "unscored",
                "rej->acc right",
                "wrong",
                "unscored",
            ],
            turned or [["-", "none", "", "", "", "", "", ""]],
        ),
        (
            "Each check, recorded against replayed (an added rejection: what the controller would do next;"
            " never what the retry would give)",
            ["config", "check", "same", "acc->rej", "rej->acc", "new", "gone", "next"],
            checks,
        ),
    ]
    if r.nondeterministic:
        out.append(
            (
                "Non-deterministic gates: the same gate and arguments, another verdict on the same input",
                ["gate, attempt: recorded, now"],
                [[line] for line in r.nondeterministic],
            )
        )
    return out
