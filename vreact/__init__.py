"""vreact: a V-model verification layer for LLM agents.

The short API: write a gate (``gate``, ``accept``, ``reject``), a member of the executor's
step pipeline (``member``, ``Member`` and its outcomes), a tool (``tool``, ``ToolContext``) or
a task family (``family``, ``TaskFamily``, ``Score``), name them in an experiment file, run it,
and read the run back::

    import vreact

    experiment = vreact.resolve(vreact.load_experiment("experiments/pilot.yaml"))
    vreact.run_experiment(experiment, "runs/pilot")
    report = vreact.report("runs/pilot")          # the typed report of vreact report
    for attempt in vreact.read_run("runs/pilot").attempts:
        print(attempt.outcome, [v.check_name for v in attempt.verdicts])
"""

from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vreact.experiment import ResolvedExperiment, resolve, run_experiment
    from vreact.families import Artifact, Score, Step, StepKit, Subtask, TaskFamily, family, family_names
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
    from vreact.tools import ToolContext, tool, tool_names
    from vreact.verify.gates import GateResult, accept, gate, gate_names, judge_prompt, reject

#: Where each public name lives, as ``(module, attribute)``: imported on first use, so that
#: ``import vreact`` (and every ``vreact`` command, which imports this package first) loads
#: only what it needs.
_EXPORTS: dict[str, tuple[str, str]] = {
    **{n: ("vreact.experiment", n) for n in ("ResolvedExperiment", "resolve", "run_experiment")},
    **{
        n: ("vreact.pipeline", n)
        for n in (
            "PASS",
            "Member",
            "StepOutcome",
            "Turn",
            "block",
            "hint",
            "member",
            "member_names",
            "rollback",
            "stop",
            "veto",
        )
    },
    **{
        n: ("vreact.families", n)
        for n in ("Artifact", "Score", "Step", "StepKit", "Subtask", "TaskFamily", "family", "family_names")
    },
    **{n: ("vreact.records", n) for n in ("RunRecords", "read_run")},
    "Report": ("vreact.report", "Report"),
    "load_experiment": ("vreact.spec", "load_experiment"),
    **{n: ("vreact.tools", n) for n in ("ToolContext", "tool", "tool_names")},
    **{
        n: ("vreact.verify.gates", n)
        for n in ("GateResult", "accept", "gate", "gate_names", "judge_prompt", "reject")
    },
}


def __getattr__(name: str) -> Any:
    try:
        module, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'vreact' has no attribute {name!r}") from None
    value = getattr(import_module(module), attribute)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(ModuleType):
    """This package's module: ``vreact.report`` is the report function (``vreact.report.compute``),
    as it was when this package imported it eagerly, even though the import system binds the
    subpackage ``vreact.report`` to the same attribute once something imports it."""

    @property
    def report(self) -> Any:
        chosen = self.__dict__.get("_report")
        if chosen is None:
            from vreact.report import compute as chosen
        return chosen

    @report.setter
    def report(self, value: Any) -> None:
        if isinstance(value, ModuleType) and value.__name__ == "vreact.report":
            return  # the import system binding the subpackage: the name stays the function
        self.__dict__["_report"] = value  # e.g. a test's monkeypatch


sys.modules[__name__].__class__ = _Package


__all__ = [
    "PASS",
    "Artifact",
    "GateResult",
    "Member",
    "Report",
    "ResolvedExperiment",
    "RunRecords",
    "Score",
    "Step",
    "StepKit",
    "StepOutcome",
    "Subtask",
    "TaskFamily",
    "ToolContext",
    "Turn",
    "accept",
    "block",
    "family",
    "family_names",
    "gate",
    "gate_names",
    "hint",
    "judge_prompt",
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
    "tool",
    "tool_names",
    "veto",
]
