"""vreact: a V-model verification layer for LLM agents.

The short API: write a gate (``gate``, ``accept``, ``reject``) or a member of the executor's
step pipeline (``member``, ``Member`` and its outcomes), name them in an experiment file, run
it, and read the run back::

    import vreact

    experiment = vreact.resolve(vreact.load_experiment("experiments/pilot.yaml"))
    vreact.run_experiment(experiment, "runs/pilot")
    report = vreact.report("runs/pilot")          # the typed report of vreact report
    for attempt in vreact.read_run("runs/pilot").attempts:
        print(attempt.outcome, [v.check_name for v in attempt.verdicts])
"""

from vreact.experiment import ResolvedExperiment, resolve, run_experiment
from vreact.pipeline import (
    PASS,
    Member,
    StepOutcome,
    Turn,
    block,
    hint,
    member,
    member_names,
    rollback,
    stop,
    veto,
)
from vreact.records import RunRecords, read_run
from vreact.report import Report
from vreact.report import compute as report
from vreact.spec import load_experiment
from vreact.verify.gates import Artifact, GateResult, accept, gate, gate_names, reject

__all__ = [
    "PASS",
    "Artifact",
    "GateResult",
    "Member",
    "Report",
    "ResolvedExperiment",
    "RunRecords",
    "StepOutcome",
    "Turn",
    "accept",
    "block",
    "gate",
    "gate_names",
    "hint",
    "load_experiment",
    "member",
    "member_names",
    "read_run",
    "reject",
    "report",
    "resolve",
    "rollback",
    "run_experiment",
    "stop",
    "veto",
]
