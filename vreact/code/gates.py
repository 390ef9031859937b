"""The code family's gates: free, deterministic, with ground truth. A rejection's detail is the
sentence the failure index carries to the next try: the example, what it should return and what
it returned, or the exception and its line. None reads the hidden test. The code-review judge
prompt (``code_review``) is registered here too."""

from __future__ import annotations

import ast
import json
from typing import Any

from pydantic import ValidationError

from vreact import syntax
from vreact.code.claims import weigh
from vreact.code.plan import split_objective
from vreact.code.sandboxes import DEFAULT, RunSandbox, of
from vreact.model import Message
from vreact.verify.gates import GateResult, accept, gate, judge_prompt, reject


def _call(entry_point: str, args: str) -> str:
    """``f(1, 2)`` from the arguments' tuple literal ``(1, 2)``."""
    inner = args[1:-1].rstrip(",") if args.startswith("(") and args.endswith(")") else args
    return f"{entry_point}({inner})"


@gate("code_parses")
def code_parses() -> Any:
    """The program is Python that parses."""

    def check(p: Any) -> GateResult:
        try:
            syntax.parse(str(p.answer))
        except SyntaxError as e:
            return reject("syntax_error", f"line {e.lineno}: {e.msg}")
        return accept()

    return check


@gate("defines_entry_point")
def defines_entry_point() -> Any:
    """The program defines the entry point with the prompt's parameters."""

    def check(p: Any) -> GateResult:
        try:
            tree = syntax.parse(str(p.answer))
        except SyntaxError as e:
            return reject("syntax_error", f"line {e.lineno}: {e.msg}")
        found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == p.entry_point]
        if not found:
            return reject("no_entry_point", f"the program defines no function {p.entry_point}")
        names = tuple(a.arg for a in found[-1].args.args)
        if p.parameters and len(names) != len(p.parameters):
            wanted = ", ".join(p.parameters)
            return reject("wrong_parameters", f"{p.entry_point} takes ({', '.join(names)}), not ({wanted})")
        return accept()

    return check


def examples_verdict(
    program: str, entry_point: str, examples: list[tuple[str, str]], sandbox: RunSandbox = DEFAULT
) -> GateResult:
    """``program`` loaded in a fresh run of ``sandbox`` (the run's) and ``entry_point`` run on
    each example, within its time: the first failure as a rejection whose detail names the call,
    what it should return and what it did."""
    result = sandbox.run(program, entry_point=entry_point, examples=examples)
    if not result.marked:
        return reject("sandbox_stopped", f"the program was stopped: {result.killed}")
    if not result.loaded:
        if result.stopped:
            return reject("timeout", f"the program did not finish loading: {result.stopped}")
        where = f" at line {result.line}" if result.line else ""
        return reject("does_not_load", f"the program raised {result.error}{where} when loaded")
    for (args, expected), got in zip(examples, result.examples, strict=False):
        if got.get("passed"):
            continue
        call = _call(entry_point, args)
        error = str(got.get("error") or "")
        if error.startswith("stopped:"):
            return reject("timeout", f"{call} did not return in time")
        if error:
            where = f" at line {got['line']}" if got.get("line") else ""
            return reject("example_failed", f"{call} should return {expected}; it raised {error}{where}")
        return reject("example_failed", f"{call} should return {expected}; it returned {got.get('actual')}")
    if result.stopped:
        return reject("timeout", f"the program was stopped: {result.stopped}")
    return accept()


@gate("examples_pass")
def examples_pass() -> Any:
    """The program passes every visible example of the prompt (a helper's: the ones its plan
    invented), in a fresh run of the run's sandbox, within its time; the code it builds on is
    loaded first."""

    def check(p: Any) -> GateResult:
        return examples_verdict(p.module, p.entry_point, list(p.examples), of(p))

    return check


@gate("assembly_passes", kinds=("chain",))
def assembly_passes() -> Any:
    """R2: the helpers and the function assembled into one module pass the prompt's real
    visible examples (where an invented helper example was wrong, these decide)."""

    def check(p: Any) -> GateResult:
        return examples_verdict(p.module, p.entry_point, list(p.examples), of(p))

    return check


def _parsed(a: Any) -> Any:
    """The plan as its schema reads it, or the rejection that says where it is not one (each plan
    gate rejects a plan that does not validate, whatever order a verifier file gives them in)."""
    from vreact.code.plan import HelperPlan

    if not isinstance(a.plan, dict):
        return reject("format", "the plan is not a JSON object")
    try:
        return HelperPlan.model_validate(a.plan)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the plan"
        return reject("format", f"{where}: {first['msg']}"[:200])


@gate("helpers_parse", kinds=("plan",))
def helpers_parse() -> Any:
    """The plan is JSON of the plan schema; each helper has a name that is no keyword and no
    function the prompt defines, a def line of that name, and examples that call it with
    literal arguments and return a literal; names are unique."""

    def check(a: Any) -> GateResult:
        from vreact.code.plan import plan_problems

        plan = _parsed(a)
        if isinstance(plan, GateResult):
            return plan
        problem = plan_problems(plan, a.text)
        return reject(*problem) if problem else accept()

    return check


@gate("helpers_ordered", kinds=("plan",))
def helpers_ordered() -> Any:
    """A helper's contract names only earlier helpers (the calls form a DAG in plan order)."""

    def check(a: Any) -> GateResult:
        from vreact.code.plan import later_references

        plan = _parsed(a)
        if isinstance(plan, GateResult):
            return plan
        problem = later_references(plan)
        return reject(*problem) if problem else accept()

    return check


@gate("helpers_bounded", kinds=("plan",))
def helpers_bounded(max_helpers: int = 3) -> Any:
    """The plan has at most ``max_helpers`` helpers."""

    def check(a: Any) -> GateResult:
        plan = _parsed(a)
        if isinstance(plan, GateResult):
            return plan
        n = len(plan.helpers)
        if n > max_helpers:
            return reject("too_many_subtasks", f"{n} helpers; at most {max_helpers}")
        return accept()

    return check


#: The code-review judge on a program (R1, R2, R3), as tuned on HumanEval/0-81 (docs/code.md): a
#: 1.5B judge told only to reject a bug it can name rejected every right program it was shown; told
#: the program passes its examples, that most such programs are right, and to name the failing
#: input, it accepted 6 of 10 and still rejected all 6 wrong ones.
TESTER = (
    "You are a software tester. The program below already passes every example in its "
    "description, and most programs that do are correct. Decide if it is correct. Answer accept "
    "if it is, reject only if you found an input where it returns the wrong value: name it, what "
    "the program returns and what it should return."
)
#: The judge on a plan (L2): the helpers are not written yet.
PLAN_REVIEW = (
    "You review a plan of helper functions for a programming problem. The helpers are not written "
    "yet: the plan gives each one's signature, contract and examples. A plan of no helper is fine "
    "(the function is then written at once). Reject only when you can name an example whose value "
    "is wrong for its helper's contract: give the example and the value the contract gives. How "
    "the function will use the helpers is not yours to judge. If you cannot, accept. When you "
    "reject, the input is the example's call as the plan writes it, returns the value the plan "
    "gives it, expected the value the contract gives."
)


def _described(level: Any) -> str:
    """What was asked, as text: the function's description, and the helpers it may call (already
    written and checked, so not under review) by their def lines, not their code."""
    if isinstance(level, list):  # R2: the plan's subtasks, the function last
        level = level[-1] if level else {}
    if not isinstance(level, dict):
        return str(level)
    asked = str(level.get("objective") or level.get("question") or json.dumps(level))
    head, helpers = split_objective(asked)
    if helpers:
        head += "\n\nIt may call these helpers, already written and checked:\n" + "\n".join(
            signatures(helpers)
        )
    return head


def signatures(code: str) -> list[str]:
    """The def line of each function ``code`` defines at its top level (none when it does not parse)."""
    try:
        tree = syntax.parse(code)
    except SyntaxError:
        return []
    out = []
    for n in tree.body:
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
            returns = f" -> {ast.unparse(n.returns)}" if n.returns else ""
            head = "async def" if isinstance(n, ast.AsyncFunctionDef) else "def"
            out.append(f"{head} {n.name}({ast.unparse(n.args)}){returns}")
    return out


def _written(artifact: Any) -> str:
    """What was written, as text: a program as code, a plan as its helpers, one per line."""
    if isinstance(artifact, dict) and "program" in artifact:
        return f"```python\n{artifact['program']}\n```"
    if isinstance(artifact, dict) and isinstance(artifact.get("helpers"), list):
        lines = []
        for h in artifact["helpers"]:
            h = h if isinstance(h, dict) else {}
            lines.append(f"- {h.get('signature') or h.get('name') or '?'}: {h.get('contract') or ''}")
            examples = h.get("examples")
            for e in examples if isinstance(examples, list) else []:
                if isinstance(e, dict):
                    lines.append(f"    {e.get('call')} -> {e.get('returns')}")
        if not lines:
            return "No helper: the function is written at once."
        return "Helpers planned:\n" + "\n".join(lines)
    return json.dumps(artifact, indent=1)


#: The reply of a judge that shows its work: a rejection names the input, what it returns there
#: and what it should (``vreact.verify.judges.CLAIM_SCHEMA``), which ``vreact.code.claims`` checks.
CLAIM_REPLY = (
    '{"reason": "...", "input": "...", "returns": "...", "expected": "...", "decision": '
    '"accept|reject", "confidence": 0.0-1.0}. When you reject, input is the call you found, with '
    "literal arguments, such as name(1, [2, 3]); returns and expected are Python literals. When you "
    "accept, leave input, returns and expected empty."
)


@judge_prompt("code_review", claims=weigh)
def code_review(kind: str, context: dict[str, Any]) -> list[Message]:
    """A code review against the docstring: the description asked for beside the code (or the
    plan), each as text (not JSON-escaped), rejected only for a bug the judge can name: the input
    (on a plan: the helper example), what is returned there and what should be, which
    ``vreact.code.claims`` checks before the rejection counts."""
    system = f"{PLAN_REVIEW if kind == 'L2' else TESTER} Reply with JSON: {CLAIM_REPLY}"
    asked, shown = _described(context["paired_level"]), _written(context["artifact"])
    user = f"What was asked:\n{asked}\n\nWhat was written:\n{shown}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
