"""``vreact probe``'s run: every class's artifacts of every record through the shipped gate
objects (the ones a run builds, with the same arguments), each gate on each artifact alone, then
the judges on what every gate cleared. A probe is a run folder: one attempt per (task, class,
artifact), its verdicts with each check's time, its judges' calls.

With ``concurrency`` above 1, the records' artifacts are built and their gates run that many at a
time, in threads (the code family's wait on the sandbox's subprocess, the GIL released), while
this thread records each artifact in the order a one-at-a-time probe would, and runs its judges:
the same records, whatever the concurrency, apart from the times."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from vreact.config import Configuration
from vreact.controller._context import AttemptContext, Recorder
from vreact.controller._outcome import Outcome
from vreact.families import DEFAULT, Artifact, FaultClass, Task, family_of
from vreact.memory import ContextAssembler
from vreact.model import Model, ModelError
from vreact.records import DB_NAME, Store, exclusive, provenance
from vreact.spec import DatasetSelection, RoleSchema, TaskSpec, VerifierSet
from vreact.v import V
from vreact.verdict import Decision, Verdict, artifact_hash
from vreact.verify.verifier import Verifiers, built_gates, run_gate

#: The verifiers a probe runs on a final answer, in the controller's order, and the component
#: each checks (R2 checks the gold artifact's chain: the record's gold decomposition).
LEVELS = ("R1", "R3")
ORDER = ("R1", "R2", "R3")
COMPONENT = {"R1": "executor.s1", "R2": "planner", "R3": "answer"}
KIND = "probe"


class ProbeMismatch(ValueError):
    """The folder holds another run (or another probe) than this one."""


@dataclass
class Probe:
    """What one probe checks: its records, classes, spec, verifiers, judge (None: gates only)."""

    tasks: list[Task]
    classes: tuple[FaultClass, ...]
    spec: TaskSpec
    verifiers: VerifierSet
    roles: RoleSchema
    judge: Model | None = None
    levels: tuple[str, ...] = LEVELS
    dataset: str = ""
    seed: int = 0
    family: str = DEFAULT  # the task family of its records, whose classes it builds
    #: made-up inputs each artifact also runs on beside the gold one (0: none; a family that
    #: compares candidates: ``TaskFamily.behaviours``)
    made: int = 0

    def identity(self) -> dict[str, Any]:
        """What makes two probes the same (a folder holding it is resumed, any other refused).
        Another family than question answering is named, with its classes' roles (which the
        probe's report reads without loading the family)."""
        named = (
            {"family": self.family, "roles": {c.name: c.role for c in self.classes}}
            if self.family != DEFAULT
            else {}  # as before families existed, so those probe folders still resume
        )
        return {
            "kind": KIND,
            "dataset": self.dataset,
            **named,
            "tasks": [t.id for t in self.tasks],
            "classes": [c.name for c in self.classes],
            "levels": list(self.levels),
            "spec": self.spec.model_dump(mode="json"),
            "verifiers": self.verifiers.model_dump(mode="json"),
            "judge": self.judge.name if self.judge else None,
            "seed": self.seed,
            **({"made": self.made} if self.made else {}),  # a probe made before it resumes
        }


OnArtifact = Callable[[int, int], None]  # (done, total)
_In = TypeVar("_In")
_Out = TypeVar("_Out")


def run_probe(
    probe: Probe, out_dir: Path, on_artifact: OnArtifact | None = None, concurrency: int = 1
) -> int:
    """Probe into ``out_dir/vreact.db``; return the run id. A folder holding this very probe is
    resumed (its finished attempts kept); one holding anything else is refused. ``concurrency``:
    how many records are built, and artifacts checked, at once (not the probe's identity: a
    folder resumes at any)."""
    out_dir = Path(out_dir)
    with exclusive(out_dir):
        store = Store(out_dir / DB_NAME)
        try:
            return _run(probe, store, out_dir, on_artifact, concurrency)
        finally:
            store.close()


@contextmanager
def _in_order(fn: Callable[[_In], _Out], items: Iterable[_In], concurrency: int) -> Iterator[Iterator[_Out]]:
    """``fn`` of each item, in the items' order: here, one after another, when ``concurrency`` is
    1 (as a probe always ran); else in that many threads, at most twice as many submitted ahead
    of the one read (so the reader's own work overlaps theirs, and memory stays bounded). On
    leaving, what was not started is cancelled and what was is waited for: no thread outlives
    the probe's store."""
    if concurrency <= 1:
        yield map(fn, items)
        return
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="vreact-probe")

    def results() -> Iterator[_Out]:
        pending: deque[Future[_Out]] = deque()
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) >= 2 * concurrency:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()

    try:
        yield results()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _run(
    probe: Probe, store: Store, out_dir: Path, on_artifact: OnArtifact | None, concurrency: int = 1
) -> int:
    store.discard_unfinished()
    identity = probe.identity()
    family = family_of(probe.family)
    run_id = store.find_run(identity)
    if run_id is None:
        if any(True for _ in store.run_configs()):
            raise ProbeMismatch(f"{out_dir}: holds another run; give the probe a folder of its own (--out)")
        judge = probe.judge.name if probe.judge else "gates"
        run_id = store.new_run(identity, judge, probe.dataset, family.record())
    else:
        store.reopen_run(run_id)
    selection = DatasetSelection(family=family.name, path=probe.dataset)  # its records' file alone
    store.record_provenance(
        run_id,
        provenance.collect(
            [probe.judge] if probe.judge else [],
            dataset_files=family.data_files(selection),
            libraries=family.libraries,
        ),
    )
    store.add_tasks([family.row(t) for t in probe.tasks])
    done = store.finished_attempts(run_id)
    work: list[tuple[Task, str, int, Artifact, Any]] = []
    skipped: dict[str, dict[str, int]] = {}

    def build(task: Task) -> tuple[Any, dict[tuple[str, int], Verdict]]:
        built = family.probe(task, probe.classes, probe.spec)
        return built, (beside_gold(family, task, built.artifacts, probe.made) if probe.made else {})

    with _in_order(build, probe.tasks, concurrency) as builds:
        made = list(zip(probe.tasks, builds, strict=True))
    compared = {(task.id, *key): v for task, (_, beside) in made for key, v in beside.items()}
    for task, (built, _) in made:
        for name, (reason, n) in built.skipped.items():
            skipped.setdefault(name, {}).setdefault(reason, 0)
            skipped[name][reason] += n
        for name, artifacts in built.artifacts.items():
            checked_chain = built.chain if name == "gold" and "R2" in probe.levels else None
            work += [
                (task, name, i, a, checked_chain)
                for i, a in enumerate(artifacts)
                if (name, task.id, i) not in done
            ]
    gates = built_gates(probe.spec, probe.verifiers)
    checker = _Checker(probe, store, run_id, gates)
    total = len(work) + len(done)

    def check(item: tuple[Task, str, int, Artifact, Any]) -> _Checked:
        checked = checker.check(item[3], item[4])
        beside = compared.get((item[0].id, item[1], item[2]))
        if beside is not None:  # beside the gate verdicts, at R3 (the agreement's level)
            artifact = item[3]
            checked.levels.append(([beside], artifact.identity(), artifact.gate_input()))
        return checked

    with _in_order(check, work, concurrency) as checks:
        for n, ((task, name, index, artifact, _), checked) in enumerate(zip(work, checks, strict=True), 1):
            checker.record(task, name, index, artifact, checked)
            if on_artifact is not None:
                on_artifact(len(done) + n, total)
    store.record_skips(run_id, skipped)
    store.finish_run(run_id)
    return run_id


def beside_gold(
    family: Any, task: Task, artifacts: dict[str, list[Artifact]], made: int
) -> dict[tuple[str, int], Verdict]:
    """Each artifact of ``task`` run beside the gold one, as agreement's comparison runs k
    candidates (``TaskFamily.behaviours``: code, on the stated examples' inputs and ``made``
    made-up ones, in one sandbox start): an R3 verdict of the check ``agreement`` each, accepted
    when it did what the gold artifact did on every input kept, else rejected (``left_out``: a
    property check or the comparison left it out; ``another_behaviour``: it did otherwise;
    ``unavailable``: the comparison failed). Where no input is left to compare on (none stated or
    made up, or most artifacts refused every one) no verdict is made: the comparison says nothing
    there. A gold or control artifact rejected is a false rejection of made-up inputs; a fault
    rejected, one agreement would tell from a right answer."""
    flat = [(name, i, a) for name, found in artifacts.items() for i, a in enumerate(found)]
    gold = next((k for k, (name, _, _) in enumerate(flat) if name == "gold"), None)
    if gold is None:
        return {}
    try:
        b = family.behaviours(task, {k: a for k, (_, _, a) in enumerate(flat)}, made=made, seed=0)
    except Exception as e:  # fail closed: every artifact is rejected with the cause
        b = None
        failed = f"{type(e).__name__}: {e}"[:300]
    if b is not None and b.nothing_to_compare:  # no input: it says nothing of any artifact here
        return {}
    reference = b.of.get(gold) if b is not None and not b.unavailable else None
    out = {}
    for k, (name, i, a) in enumerate(flat):
        if b is None or b.unavailable:
            cause, detail = "unavailable", failed if b is None else str(b.unavailable)
        elif k in b.left_out:
            cause, detail = "left_out", b.left_out[k]
        elif reference is None:
            cause, detail = "unavailable", "the gold artifact was left out"
        elif b.of.get(k) == reference:
            cause, detail = "", f"as the gold artifact on {sum(b.record.get('kept') or [])} inputs"
        else:
            cause, detail = "another_behaviour", "did otherwise than the gold artifact on an input kept"
        decision: Decision = "reject" if cause else "accept"
        v = Verdict(
            "R3",
            COMPONENT["R3"],
            "gate",
            "agreement",
            decision,
            cause,
            detail,
            None,
            artifact_hash(a.identity()),
            {"made": made},
        )
        out[(name, i)] = v
    return out


@dataclass
class _Checked:
    """What the gates made of one artifact, not yet recorded: when its checks began, and each
    probed verifier's verdicts in order, with the identity and gate input they checked."""

    started: float
    levels: list[tuple[list[Verdict], Any, Any]]


@dataclass
class _Checker:
    probe: Probe
    store: Store
    run_id: int
    gates: dict[str, Any]

    def check(self, artifact: Artifact, chain: Any = None) -> _Checked:
        """Every gate of every probed verifier on one artifact alone (R2's on its chain), each
        verdict with its time. It touches neither the store nor a model, so several artifacts
        may be checked at once, in threads (the gates are shared by a run's threads too)."""
        started = time.time()
        levels = []
        for verifier in self.probe.levels:
            checked = chain if verifier == "R2" else artifact
            if checked is None:  # R2 checks the gold artifact's chain only
                continue
            ident, data = checked.identity(), checked.gate_input()
            h = artifact_hash(ident)  # as in a run; the whole gate input is kept beside it
            verdicts = []
            for g in self.gates[verifier]:
                if not g.applies_to(checked):
                    continue
                result, seconds = run_gate(g, checked)
                decision: Decision = "accept" if result.ok else "reject"
                v = Verdict(
                    verifier,
                    COMPONENT[verifier],
                    "gate",
                    g.name,
                    decision,
                    result.cause,
                    result.detail,
                    None,
                    h,
                    g.args,
                    seconds,
                )
                verdicts.append(v)
            levels.append((verdicts, ident, data))
        return _Checked(started, levels)

    def record(self, task: Task, name: str, index: int, artifact: Artifact, checked: _Checked) -> None:
        """One checked artifact as an attempt: its verdicts, then each verifier's judge when
        every gate cleared it (in this thread: the store and the judge's calls are one
        probe's, in order); its outcome is what the controller's first reject, in order, would
        have made of it."""
        store = self.store
        attempt_id = store.start_attempt(
            self.run_id, name, task.id, index, self.probe.seed, started=checked.started
        )
        recorder = Recorder(store, attempt_id)
        first: Verdict | None = None
        for verdicts, ident, data in checked.levels:
            recorder.verdicts(verdicts, ident, data)
            first = first or next((v for v in verdicts if v.decision == "reject"), None)
        outcome: Outcome
        try:
            if first is None and self.probe.judge is not None:
                first = self._judges(task, name, recorder, artifact)
            outcome = _outcome(artifact, first)
        except ModelError as e:  # the judge's model failed: this attempt crashed, the probe goes on
            outcome = Outcome("crash", error=f"{type(e).__name__}: {e}"[:2000], crash_kind="model")
        store.finish_attempt(attempt_id, outcome.record())

    def _judges(self, task: Task, name: str, recorder: Recorder, artifact: Artifact) -> Verdict | None:
        """Each probed verifier's judge on an artifact every gate cleared, through the judge's
        model (and the response cache), recorded and costed as a run's; the first reject."""
        probe = self.probe
        assert probe.judge is not None
        config = Configuration(name=name, gates=True, judges=True)
        ctx = AttemptContext(
            config,
            task,
            {"judge": probe.judge, "default": probe.judge},
            ContextAssembler(probe.roles, self.store),
            recorder,
            probe.seed,
            family=family_of(probe.family),
        )
        verifiers = Verifiers(config, probe.spec, probe.verifiers)
        first = None
        for verifier in (lvl for lvl in probe.levels if lvl != "R2"):  # R2's judge reads a plan: none here
            paired_level = paired(verifier, task, probe.spec, verifiers, probe.family)
            rejection = verifiers.judge(ctx, verifier, COMPONENT[verifier], artifact, paired_level)
            if rejection is not None:
                v = rejection.verdict(COMPONENT[verifier], ctx.budgets.of(verifier, COMPONENT[verifier]).left)
                recorder.verdict(v, rejection.artifact, rejection.given)
                first = first or v
        return first


def paired(verifier: str, task: Any, spec: TaskSpec, verifiers: Verifiers, family: str = DEFAULT) -> Any:
    """What the verifier's judge reads beside the artifact: L3's design of the whole task for
    R1, L1 for R3 (as in a run without a plan)."""
    of = family_of(family)
    l1 = of.l1(task, spec)
    if verifier == "R3":
        return l1
    return of.designer(l1, verifiers.answer_checks()).single_task(task.text).l3()


def _outcome(artifact: Artifact, first: Verdict | None) -> Outcome:
    if first is not None:
        cause = f"{first.check_name}:{first.cause}"
        return Outcome("abstain", level=V[first.verifier].abstain, component=first.component, cause=cause)
    if artifact.kind == "abstain":
        return Outcome("abstain", level="declined", component=COMPONENT["R1"], cause="agent_declined")
    return Outcome("answer", answer=str(artifact.answer), evidence=list(artifact.evidence))
