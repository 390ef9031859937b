"""The gsm8k family's step kit: the executor writes a short Python program whose variables name
the problem's quantities and which prints the answer (a finish: run once in the run's sandbox,
its answer the number it printed) or abstains (a block whose first line is ``# run`` is run and
shown, though the prompt does not offer it);
what its steps read of a configuration (``MathsSteps``)."""

from __future__ import annotations

import ast
from typing import Any, ClassVar

from vreact import syntax
from vreact.families import (
    RUN_MARK,
    ExecutorDefaults,
    Settings,
    Step,
    StepKit,
    Subtask,
    fenced_blocks,
    fenced_step,
    steps_so_far,
)
from vreact.gsm8k.artifact import Solution, ran, solution
from vreact.gsm8k.data import Problem
from vreact.model import Message, parse_json_object

#: The longest program or snippet a step may carry (characters).
MAX_CODE = 4000
#: No ``# run`` step is offered: on train/0-49 the 1.5B began 39 of 50 first replies with one and
#: declined after every one of the 29 it could not turn into a finish (the finish runs the
#: program anyway; docs/evidence/2026-12-07-gsm8k-tuning.md, step a). A ``# run`` block is still
#: read as a run, for a model that writes one.
SYSTEM = (
    "You solve a grade-school maths word problem by writing a short Python program.\n"
    "Reply with one ```python block whose variables name the quantities of the problem, that "
    "computes the answer from them and prints it: one number, nothing else.\n"
    "If the problem cannot be solved, reply: ABSTAIN: why"
)
RECOVER = "Your steps are spent. Reply now with the program in one ```python block, or ABSTAIN: why."
#: What an observation of a run shows at most (characters).
SHOWN = 800


def parse_step(text: str) -> Step | None:
    """The step in a reply (``vreact.families.fenced_step``): its last ```python block (a
    ``run`` when its first line is ``# run``, else the program: a finish, whose ``thought`` is the
    reply's text around the blocks, which the claims gate reads), ``ABSTAIN: why``, a JSON step,
    or a reply that is Python itself and prints (a ``run`` when its first line is ``# run``);
    None else."""
    step = fenced_step(text, MAX_CODE, thought=MAX_CODE)
    if step is not None or fenced_blocks(text) or parse_json_object(text) is not None:
        return step
    stripped = text.strip()
    try:  # Python itself, unfenced, when it prints (a small model often leaves out the fence)
        tree = syntax.parse(stripped)
    except SyntaxError:
        return None
    prints = any(isinstance(n, ast.Call) and getattr(n.func, "id", "") == "print" for n in ast.walk(tree))
    if not prints:
        return None
    action = "run" if RUN_MARK.match(stripped) else "finish"
    return Step(thought="", action=action, input=stripped[:MAX_CODE] + "\n")


class MathsKit(StepKit):
    """One try: the sandbox's ``run``, and a finish that becomes a ``Solution``."""

    def __init__(
        self, problem: Problem, subtask: Subtask, sandbox: Any, deadline: float | None = None
    ) -> None:
        super().__init__(None, subtask.checks, RECOVER)
        self.problem, self.subtask, self.sandbox = problem, subtask, sandbox
        self.deadline = deadline  # the attempt's wall clock, which a run's time counts against
        self.runs = 0

    def parse(self, text: str) -> Step | None:
        return parse_step(text)

    def messages(self, context: dict[str, Any]) -> list[Message]:
        lines = ["Solve this problem:", str(context["subtask.objective"])]
        failures = (context.get("failures.own") or [])[-3:]
        if failures:
            lines += [
                "Earlier programs were rejected:",
                *(f"- {f['cause']}: {f['detail']}" for f in failures),
            ]
        messages: list[Message] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "\n".join(lines)},
        ]
        history = steps_so_far(
            context.get("try.steps") or [],
            parse_step,
            "Next: run more code, or reply with the program that prints the answer.",
        )
        return [*messages, history] if history else messages

    def act(self, step: Step) -> tuple[str, bool]:
        """Run the snippet; its observation starts with the run's id (``[r1]``)."""
        self.runs += 1
        run = f"r{self.runs}"
        self.retrieved.add(run)
        result = self.sandbox.run(step.input, mode="run", deadline=self.deadline)
        output, error = ran(step.input, result)
        parts = [f"output:\n{output[:SHOWN]}"] if output else []
        if error:
            parts.append(f"error: {error}")
        elif result.value is not None:
            parts.append(f"value: {result.value[:SHOWN]}")
        return f"[{run}] " + ("\n".join(parts) or "(no output)"), len(result.output or "") > SHOWN

    def artifact(self, step: Step) -> Solution:
        if step.action == "abstain":
            return Solution("abstain", reason=step.input or step.thought, question=self.problem.question)
        return solution(step.input, step.thought, self.problem.question, self.sandbox, self.deadline)


class MathsSteps(Settings):
    """What the gsm8k family's executor steps read of a configuration (nothing yet), and how its
    executor's calls are made where an experiment says nothing (``executor_defaults``)."""

    #: a program with its reasoning needs more than vreact's 256 tokens, and a 1.5B model on 2
    #: cores takes up to a minute a reply (as the code family's)
    executor_defaults: ClassVar[ExecutorDefaults] = ExecutorDefaults(max_tokens=512, call_timeout=1200)
