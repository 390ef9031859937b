"""L2 and L3 on code: a plan of helper functions, each with a signature, a contract and examples
the planner invents; the designer makes each helper a subtask whose R1 runs those examples, and
the whole function the final subtask, which calls the helpers; R2 runs the assembled module on the
prompt's real examples (``assembly_passes``). An invented example can be wrong: a right helper it
rejects is a false rejection, which the scorer tells by putting the rejected helper into the
attempt's final program and running the hidden test (``Code.score_try``)."""

from __future__ import annotations

import ast
import builtins
import keyword
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vreact import syntax
from vreact.families import Subtask
from vreact.model import Message, parse_json_object

MAX_HELPERS = 3
MAX_EXAMPLES = 3
#: Where a subtask's objective hands it the code it builds on (the accepted upstream helpers).
#: Names a helper may not take: it would replace the builtin in the whole assembled module.
BUILTINS = frozenset(dir(builtins))
WRITTEN = "These helper functions are already written; call them, do not rewrite them:"

PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "helpers": {
            "type": "array",
            "maxItems": MAX_HELPERS,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 40},
                    "signature": {"type": "string", "maxLength": 160},
                    "contract": {"type": "string", "maxLength": 240},
                    "examples": {
                        "type": "array",
                        "maxItems": MAX_EXAMPLES,
                        "items": {
                            "type": "object",
                            "properties": {
                                "call": {"type": "string", "maxLength": 160},
                                "returns": {"type": "string", "maxLength": 120},
                            },
                            "required": ["call", "returns"],
                            "additionalProperties": False,
                        },
                    },
                },
                "required": ["name", "signature", "contract", "examples"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["helpers"],
    "additionalProperties": False,
}

SYSTEM = (
    "You plan a Python function as at most 3 helper functions that it will call. For each helper "
    "give its name, its signature (a def line), a contract (what it returns) and 1 to 3 examples, "
    "each a call of the helper and the value it returns as a Python literal, which must follow "
    "from the contract alone. A helper may call an earlier one. A function simple enough to write "
    "at once needs no helper: an empty list.\n"
    'Reply with JSON: {"helpers": [{"name": "is_vowel", "signature": "def is_vowel(c: str) -> bool", '
    '"contract": "True when c is a vowel", "examples": [{"call": "is_vowel(\'a\')", "returns": "True"}]}]}'
)


class HelperExample(BaseModel):
    model_config = ConfigDict(extra="forbid")

    call: str
    returns: str


class Helper(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    signature: str
    contract: str
    examples: list[HelperExample] = Field(default_factory=list)

    def stub(self) -> str:
        """The helper as a prompt states a function: its def line, and its contract and
        examples as the docstring."""
        header = self.signature.strip().rstrip(":")
        header = header if header.startswith("def ") else f"def {header}"
        lines = [f"{header}:", f'    """{self.contract.strip()}']
        lines += [f"    >>> {e.call.strip()}\n    {e.returns.strip()}" for e in self.examples]
        return "\n".join([*lines, '    """'])

    def cases(self) -> tuple[tuple[str, str], ...]:
        """Its examples as the examples gate runs them: (arguments as a tuple literal, expected);
        an example that is not a call of this helper with literal arguments is left out (the plan
        gates reject a plan that has one)."""
        out = []
        for e in self.examples:
            arguments = call_arguments(e.call, self.name)
            if arguments is not None:
                out.append((arguments, e.returns.strip()))
        return tuple(out)


class HelperPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    helpers: list[Helper] = Field(max_length=10)


def is_literal(node: ast.expr | str) -> bool:
    """Whether ``node`` (or the text) is a Python literal ``ast.literal_eval`` can build: it also
    raises TypeError (``{[1]: 2}``), MemoryError and RecursionError, not only ValueError."""
    try:
        syntax.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def call_arguments(call: str, name: str) -> str | None:
    """``(1, 'a')`` from ``name(1, 'a')`` when every argument is a literal; else None."""
    try:
        node = syntax.parse(call.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name):
        return None
    if node.keywords:
        return None
    if not all(is_literal(a) for a in node.args):
        return None
    parts = [ast.unparse(a) for a in node.args]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def signature_name(signature: str) -> tuple[str, tuple[str, ...]] | None:
    """The name and parameter names a signature declares (None: not a def line)."""
    header = signature.strip().rstrip(":")
    header = header if header.startswith("def ") else f"def {header}"
    try:
        tree = syntax.parse(header + ":\n    pass\n")
    except SyntaxError:
        return None
    node = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(node, ast.FunctionDef):
        return None
    return node.name, tuple(a.arg for a in node.args.args)


@dataclass(frozen=True)
class CodePlan:
    """The planner's proposal (kind ``plan``): the JSON it replied (None: not JSON) for the
    problem's prompt ``text``."""

    text: str
    plan: Any
    kind: str = "plan"
    answer: Any = None
    reason: str = ""
    evidence: tuple[str, ...] = ()

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "plan": self.plan}

    def gate_input(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "plan": self.plan}

    @classmethod
    def from_input(cls, data: dict[str, Any]) -> CodePlan:
        return cls(data["text"], data.get("plan"))

    def shown(self, marked: bool = False) -> Any:
        return {"helpers": self.plan.get("helpers") if isinstance(self.plan, dict) else self.plan}

    def parsed(self) -> HelperPlan:
        """The plan as its schema reads it (a ValueError when it is not one)."""
        if not isinstance(self.plan, dict):
            raise ValueError("the plan is not a JSON object")
        return HelperPlan.model_validate(self.plan)


@dataclass(frozen=True)
class CodeSubtask(Subtask):
    """A subtask of a code plan: the function it writes (``entry_point``), the examples its R1
    runs (a helper's invented ones; none for the whole function, whose real examples are R2's),
    and whether it is a helper."""

    entry_point: str = ""
    examples: tuple[tuple[str, str], ...] = ()
    parameters: tuple[str, ...] = ()
    helper: bool = False


def imports_of(prompt: str) -> str:
    """The prompt's top-level imports (what a helper's signature may name, e.g. ``List``)."""
    try:
        tree = syntax.parse(prompt + "\n    pass\n")
    except SyntaxError:
        return ""
    return "\n".join(ast.unparse(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom))


def design(
    plan: HelperPlan,
    prompt: str,
    entry_point: str,
    parameters: tuple[str, ...],
    checks: tuple[str, ...],
    n: int,
) -> list[Subtask]:
    """L3 from the ``n``-th plan: each helper a subtask (its stub, its invented examples under
    R1), then the whole function, which depends on every helper."""
    subtasks: list[Subtask] = []
    names: list[str] = []
    ids = (*(h.name for h in plan.helpers), entry_point)
    for h in plan.helpers:
        declared = signature_name(h.signature)
        subtasks.append(
            CodeSubtask(
                id=h.name,
                objective=h.stub(),
                contract=f"a program that defines {h.name}",
                checks=checks,
                component=f"executor.p{n}.{h.name}",
                depends_on=tuple(names),
                final=False,
                plan_ids=ids,
                entry_point=h.name,
                examples=h.cases(),
                parameters=declared[1] if declared else (),
                helper=True,
            )
        )
        names.append(h.name)
    subtasks.append(
        CodeSubtask(
            id=entry_point,
            objective=prompt,
            contract=f"a program that defines {entry_point}" + (", calling the helpers" if names else ""),
            checks=checks,
            component=f"executor.p{n}.{entry_point}",
            depends_on=tuple(names),
            final=True,
            plan_ids=ids,
            entry_point=entry_point,
            parameters=parameters,
        )
    )
    return subtasks


def with_helpers(objective: str, code: list[str]) -> str:
    """A subtask's objective with the accepted code it builds on."""
    if not code:
        return objective
    return f"{objective}\n{WRITTEN}\n```python\n" + "\n\n".join(c.strip("\n") for c in code) + "\n```"


def split_objective(objective: str) -> tuple[str, str]:
    """(the function to write, the helpers' code it builds on) of a subtask's objective."""
    if WRITTEN not in objective:
        return objective, ""
    head, _, rest = objective.partition(f"\n{WRITTEN}\n")
    return head, rest.removeprefix("```python\n").removesuffix("\n```")


class Planner:
    """The code family's L2 kit: helper functions with contracts and invented examples."""

    schema = PLAN_SCHEMA
    tools = ("run",)

    def messages(self, context: dict[str, Any]) -> list[Message]:
        lines = ["Plan helpers for this function:", str(context["l1"]["question"])]
        failures = (context.get("failures.l2") or [])[-3:]
        if failures:
            lines += ["Earlier plans or programs were rejected:"]
            lines += [f"- {f['cause']}: {f['detail']}" for f in failures]
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(lines)}]

    def proposal(self, text: str, reply: str) -> CodePlan:
        return CodePlan(text, parse_json_object(reply))

    def plan(self, proposal: CodePlan) -> HelperPlan | None:
        try:
            return proposal.parsed()
        except (ValueError, ValidationError):
            return None


def defined_in(prompt: str) -> set[str]:
    """The functions a prompt defines (the entry point, and any helper it gives)."""
    try:
        tree = syntax.parse(prompt + "\n    pass\n")
    except SyntaxError:
        return set()
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def plan_problems(plan: HelperPlan, prompt: str) -> tuple[str, str] | None:
    """What the plan gates find wrong with a parsed plan for ``prompt`` ((cause, detail)), or None."""
    names = [h.name for h in plan.helpers]
    given = defined_in(prompt)
    for h in plan.helpers:
        if not h.name.isidentifier() or keyword.iskeyword(h.name):
            return "bad_name", f"{h.name!r} is not a function name"
        if h.name in BUILTINS:
            return "bad_name", f"{h.name} is a Python builtin; a helper is a new function"
        if h.name in given:
            return "bad_name", f"{h.name} is a function the prompt defines; a helper is a new one"
        declared = signature_name(h.signature)
        if declared is None:
            return "bad_signature", f"{h.name}'s signature {h.signature!r} is not a def line"
        if declared[0] != h.name:
            return "bad_signature", f"{h.name}'s signature defines {declared[0]}"
        if not h.examples:
            return "no_examples", f"{h.name} has no example"
        for e in h.examples:
            if call_arguments(e.call, h.name) is None:
                return "bad_example", f"{e.call!r} is not a call of {h.name} with literal arguments"
            if not is_literal(e.returns.strip()):
                return "bad_example", f"{h.name}'s example returns {e.returns!r}, not a Python literal"
    if len(set(names)) != len(names):
        return "duplicate_ids", f"helper names repeat: {names}"
    return None


def later_references(plan: HelperPlan) -> tuple[str, str] | None:
    """A helper whose contract calls a later helper (``name(``: the helpers call only earlier ones,
    a DAG in plan order), as (cause, detail); None when every reference resolves. A name as a
    plain word ("all digits of n") is not a call."""
    names = [h.name for h in plan.helpers]
    for i, h in enumerate(plan.helpers):
        called = set(re.findall(r"([A-Za-z_]\w*)\s*\(", h.contract))
        later = [n for n in names[i + 1 :] if n in called]
        if later:
            return "order", f"{h.name} calls {', '.join(later)}, which do not come before it"
    return None
