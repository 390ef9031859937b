"""The code family's step kit: the executor's actions (``run``, a snippet in the run's sandbox;
``finish``, the whole program; ``abstain``), a reply read as a step, what a run shows it, and
what its steps read of a configuration (``CodeSteps``)."""

from __future__ import annotations

import ast
from typing import Any, ClassVar

from pydantic import Field

from vreact import syntax
from vreact.code.artifact import Program, parameters_of
from vreact.code.data import Problem
from vreact.code.plan import CodeSubtask, imports_of, split_objective
from vreact.code.sandboxes import of
from vreact.families import (
    ExecutorDefaults,
    Settings,
    Step,
    StepKit,
    Subtask,
    fenced_blocks,
    fenced_step,
    steps_so_far,
)
from vreact.model import Message, parse_json_object

#: The longest program or snippet a step may carry (characters).
MAX_CODE = 4000
SYSTEM = (
    "You write a Python function for a programming problem.\n"
    "Reply with the whole program in one ```python block: the function with its imports, "
    "complete, without repeating its docstring.\n"
    "To try code before you answer, reply with a ```python block whose first line is `# run`: "
    "you will see its output, the value of its last line, or its error and line.\n"
    "If you cannot write it, reply: ABSTAIN: why"
)
RECOVER = "Your steps are spent. Reply now with the whole program in one ```python block, or ABSTAIN: why."
#: What an observation of a run shows at most (characters).
SHOWN = 1500


def parse_step(text: str) -> Step | None:
    """The step in a reply (``vreact.families.fenced_step``): a ```python block (a ``run`` when
    its first line is ``# run``, else the whole program: a finish), ``ABSTAIN: why``, a JSON step
    (``{"thought", "action", "input"}``, as the scripted tests write), or a reply that is Python
    defining a function (a finish); None else."""
    step = fenced_step(text, MAX_CODE)
    if step is not None or fenced_blocks(text) or parse_json_object(text) is not None:
        return step
    stripped = text.strip()
    try:  # Python itself, when it defines a function (a word of prose parses too)
        tree = syntax.parse(stripped)
    except SyntaxError:
        return None
    defines = any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) for n in tree.body)
    return Step(thought="", action="finish", input=stripped[:MAX_CODE]) if defines else None


def observed(result: Any) -> str:
    """What a ``run`` shows the executor: its output, its last value, or its error and line."""
    parts = []
    if result.output:
        parts.append("output:\n" + result.output[:SHOWN])
    if not result.marked:
        parts.append(f"the run was stopped: {result.killed}")
    elif result.stopped:
        parts.append(f"the run was stopped: {result.stopped}")
    elif result.error:
        where = f" (line {result.line})" if result.line else ""
        parts.append(f"error{where}: {result.error}")
    elif result.value is not None:
        parts.append(f"value: {result.value[:SHOWN]}")
    return "\n".join(parts) or "(no output)"


class CodeKit(StepKit):
    """One try: the sandbox's ``run``, and a finish that becomes a ``Program``."""

    def __init__(
        self, problem: Problem, subtask: Subtask, deadline: float | None = None, show_rejected: bool = False
    ) -> None:
        super().__init__(None, subtask.checks, RECOVER)
        self.problem, self.subtask = problem, subtask
        self.sandbox = of(problem)  # the run's, where its runs and its programs' gates run
        self.deadline = deadline  # the attempt's wall clock, which a run's time counts against
        self.show_rejected = show_rejected  # a retry sees the program it is a retry of
        self.runs = 0

    def parse(self, text: str) -> Step | None:
        return parse_step(text)

    def messages(self, context: dict[str, Any]) -> list[Message]:
        lines = ["Write this function:", str(context["subtask.objective"])]
        failures = (context.get("failures.own") or [])[-3:]
        rejected = context.get("failures.rejected")
        shown = self.show_rejected and isinstance(rejected, dict) and rejected.get("kind") == "answer"
        rejected = rejected if shown else None
        if rejected and rejected.get("answer"):
            program = str(rejected["answer"]).strip("\n")[:SHOWN]
            lines += ["Your last program was rejected:", f"```python\n{program}\n```"]
        if failures:
            lines += [
                "Why programs were rejected:" if rejected else "Earlier programs were rejected:",
                *(f"- {f['cause']}: {f['detail']}" for f in failures),
            ]
            if rejected:
                lines.append("Fix the program so that it passes.")
        messages: list[Message] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "\n".join(lines)},
        ]
        history = steps_so_far(
            context.get("try.steps") or [],
            parse_step,
            "Next: run more code, or reply with the whole program.",
        )
        return [*messages, history] if history else messages

    @property
    def critic(self) -> Any:  # type: ignore[override]
        from vreact.code.dereact import CRITIC

        return CRITIC

    @property
    def context_manager(self) -> Any:  # type: ignore[override]
        from vreact.code.dereact import CONTEXT_MANAGER

        return CONTEXT_MANAGER

    def act(self, step: Step) -> tuple[str, bool]:
        """Run the snippet; its observation starts with the run's id (``[r1]``), which the
        context manager's facts cite."""
        self.runs += 1
        run = f"r{self.runs}"
        self.retrieved.add(run)
        result = self.sandbox.run(step.input, mode="run", deadline=self.deadline)
        return f"[{run}] {observed(result)}", len(result.output) > SHOWN

    def artifact(self, step: Step) -> Program:
        p, st = self.problem, self.subtask
        if step.action == "abstain":
            return Program("abstain", p.entry_point, reason=step.input or step.thought, sandbox=self.sandbox)
        if not isinstance(st, CodeSubtask):  # the problem as one subtask
            parameters = parameters_of(p.prompt, p.entry_point)
            return Program(
                "answer", p.entry_point, step.input, "", parameters, tuple(p.examples), sandbox=self.sandbox
            )
        _, helpers = split_objective(st.objective)
        setup = "\n\n".join(c for c in (imports_of(p.prompt), helpers) if c)
        helper = st.entry_point if st.helper else ""
        return Program(
            "answer",
            st.entry_point,
            step.input,
            "",
            st.parameters,
            st.examples,
            setup=setup,
            helper=helper,
            sandbox=self.sandbox,
        )


class CodeSteps(Settings):
    """What the code family's executor steps read of a configuration, and how its executor's
    calls are made where an experiment says nothing (``executor_defaults``)."""

    #: a whole program needs room: at vreact's 256 tokens 103 of 265 replies of
    #: Qwen2.5-Coder-0.5B on HumanEval/0-81 stopped at the limit, cut mid-function, at 768 4 of 233
    #: (docs/evidence/2026-12-03-qwen0.5b-code-tuning.md); and a 1.5B model on 2 cores takes up
    #: to a minute a reply, so one call has 1200 s before it is a time-out (as experiments/code.yaml)
    executor_defaults: ClassVar[ExecutorDefaults] = ExecutorDefaults(
        max_tokens=768, call_timeout=1200, tester_max_tokens=768
    )

    show_rejected: bool = Field(
        False,
        description="a retry is shown the program its last rejection was of (failures.rejected); off by"
        " default: on HumanEval/0-81 Qwen2.5-Coder-0.5B then repeated it (17 of 24 retries)",
    )
