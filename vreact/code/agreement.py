"""What "the same behaviour" means for code: candidate programs run, in one sandbox start, on
every input the checker has (the stated examples' first, then the tester's and the made-up ones),
and compared on each; never against an expected output a model predicted.

Before grouping:

- **the precondition filter**: an input (not a stated one) that most of the loaded candidates
  refuse, raising, not ending in time or returning no value of the type the problem gives, is
  outside what the problem accepts, and is dropped (on 0-40, ``largest_divisor(1)``'s None and
  ``max_element([])``'s ValueError left every candidate out before the type counted);
- **property checks** on each candidate, over the inputs kept: it ends within its time, raises
  nothing, and returns the type the signature annotates (``-> List[int]``) or, without one, a
  type the stated examples return (an ``int`` where a ``float`` is asked is one). A candidate that
  breaks one is left out of every group: it counts against agreement, as an R1 rejection does.

The candidates left are grouped by their behaviour on every kept input
(``vreact.verify.agreement.grouped``); a group whose candidates fail a stated example is disputed.
HumanEval+'s ``contract`` and inputs, the canonical solution and the hidden test reach none of it."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vreact import syntax
from vreact.code.examples import definition
from vreact.code.generated import _hint_name, generated
from vreact.sandbox import Result
from vreact.verify.agreement import Group, grouped

#: The time one call of a candidate may take in the check (a right program answers the small
#: inputs here in milliseconds), and the whole check's wall clock: k candidates, each stopped at
#: most twice (``vreact.sandbox._harness.STOPS``), fit in it.
CALL_S, WALL_S = 1.0, 60.0
#: Where an input came from.
STATED, TESTER, MADE = "stated", "tester", "generated"
#: A type hint's outer name and the type names it allows (``Optional`` adds ``NoneType``).
_TYPE_NAMES = {"int": "int", "float": "float", "str": "str", "bool": "bool", "list": "list", "tuple": "tuple"}
_TYPE_NAMES |= {"dict": "dict", "set": "set", "none": "NoneType"}


@dataclass
class Inputs:
    """The inputs of one check, each an argument tuple, with where it came from."""

    args: list[tuple[Any, ...]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def add(self, source: str, found: Sequence[Sequence[Any]]) -> None:
        seen = {repr(a) for a in self.args}
        for a in found:
            a = tuple(a)
            if repr(a) not in seen:
                seen.add(repr(a))
                self.args.append(a)
                self.sources.append(source)


def inputs_for(problem: Any, tester: Sequence[Sequence[Any]] = (), made: int = 0, seed: int = 0) -> Inputs:
    """The stated examples' arguments (first, in order), then ``tester``'s, then up to ``made``
    made-up ones (``vreact.code.generated``, seeded), without repeats."""
    found = Inputs()
    for args, _ in problem.examples:
        found.args.append(syntax.literal_eval(args))
        found.sources.append(STATED)
    found.add(TESTER, tester)
    if made:
        found.add(MADE, generated(problem.prompt, problem.entry_point, problem.examples, n=made, seed_=seed))
    return found


def returned_types(hint: ast.expr | None) -> frozenset[str] | None:
    """The type names a return annotation allows (``Optional[X]``: X and None; ``float`` allows
    ``int``). None: no annotation, or one no check reads (``Any``, ``Callable``, a class)."""
    names: set[str] = set()
    if hint is not None:
        name, inner = _hint_name(hint)
        if name == "Optional" and inner:
            names = {"NoneType", _TYPE_NAMES.get(_hint_name(inner[0])[0].lower(), "")}
        elif name.lower() in _TYPE_NAMES:
            names = {_TYPE_NAMES[name.lower()]}
    return _widened(names) if names and "" not in names else None


def annotated_types(prompt: str, entry_point: str) -> frozenset[str] | None:
    """``returned_types`` of the return annotation of the prompt's ``def`` of ``entry_point``."""
    found = definition(prompt, entry_point)
    return returned_types(found.returns if found is not None else None)


def allowed_types(problem: Any) -> frozenset[str] | None:
    """The type names a candidate may return: the return annotation's, else the stated examples'
    expected values'; ``float`` allows ``int``. None: nothing says (no annotation, no example)."""
    annotated = annotated_types(problem.prompt, problem.entry_point)
    if annotated is not None:
        return annotated
    names = {type(syntax.literal_eval(e)).__name__ for _, e in problem.examples}
    return _widened(names) if names else None


def _widened(names: set[str]) -> frozenset[str]:
    return frozenset(names | ({"int"} if "float" in names else set()))


@dataclass
class Checked:
    """One problem's candidates checked together: the inputs and which were kept, each candidate's
    behaviour on the kept ones (its labels), the property it broke (left out), the stated inputs it
    fails, and the groups."""

    inputs: Inputs
    kept: list[bool]
    behaviours: dict[int, tuple[int, ...]]
    broke: dict[int, str]
    fails: dict[int, list[int]]
    groups: tuple[Group, ...]
    shown: dict[int, list[str]]
    #: why no candidate could be compared at all (the sandbox stopped): None when they were
    unavailable: str | None = None


def check(
    problem: Any,
    programs: Mapping[int, str],
    inputs: Inputs,
    sandbox: Any,
) -> Checked:
    """``programs`` (candidate index -> program) run on ``inputs`` in one start of ``sandbox``
    (``run``, mode ``behaviours``), filtered and grouped as the module says."""
    order = sorted(programs)
    stated = [e for _, e in problem.examples]
    result: Result = sandbox.run(
        "",
        mode="behaviours",
        entry_point=problem.entry_point,
        programs=[programs[i] for i in order],
        inputs=[list(a) for a in inputs.args],
        expected=stated,
        call_s=CALL_S,
        wall_s=WALL_S,
    )
    if not result.marked:
        why = f"the candidates' check was stopped: {result.killed}"
        return Checked(inputs, [], {}, {}, {}, (), {}, unavailable=why)
    done = dict(zip(order, result.behaviours, strict=True))
    loaded = [i for i in order if done[i].get("loaded")]
    allowed = allowed_types(problem)
    kept = []
    for j, source in enumerate(inputs.sources):
        refused = sum(1 for i in loaded if _refuses(done[i]["shown"][j], done[i]["types"][j], allowed))
        kept.append(source == STATED or refused * 2 <= len(loaded))
    if not any(kept):  # nothing to compare them on: no agreement is any evidence
        why = "no input to compare the candidates on (none stated, none made up or given, or all refused)"
        return Checked(inputs, kept, {}, {}, {}, (), {}, unavailable=why)
    broke: dict[int, str] = {}
    for i in order:
        if not done[i].get("loaded"):
            broke[i] = f"does not load: {done[i].get('error')}"
            continue
        for j, did in enumerate(done[i]["shown"]):
            if not kept[j]:
                continue
            typed = done[i]["types"][j]
            if did == "stopped":
                broke[i] = f"stopped on input {j + 1}"
            elif did.startswith("raised") or did == "no value":
                broke[i] = f"{did} on input {j + 1}"
            elif allowed is not None and typed not in allowed:
                broke[i] = f"returned a {typed} on input {j + 1} (not {', '.join(sorted(allowed))})"
            if i in broke:
                break
    labels = {i: tuple(result.labels[j][k] for j in range(len(kept)) if kept[j]) for k, i in enumerate(order)}
    behaviours = {i: labels[i] for i in order if i not in broke}
    fails = {i: list(done[i].get("fails") or []) for i in order if done[i].get("loaded")}
    groups = grouped(behaviours, disputed={i for i in behaviours if fails.get(i)})
    shown = {i: list(done[i].get("shown") or []) for i in order}
    return Checked(inputs, kept, behaviours, broke, fails, groups, shown)


def _refuses(did: str, typed: str, allowed: frozenset[str] | None) -> bool:
    """Whether a candidate refused an input: it raised, did not end in time, or returned no
    value of a type the problem gives (``largest_divisor(1)``'s None, where every right
    program's answer is undefined)."""
    if did.startswith("raised") or did in ("stopped", "no value"):
        return True
    return allowed is not None and typed not in allowed


def sources_kept(checked: Checked) -> Counter[str]:
    """How many inputs of each source the precondition filter kept."""
    return Counter(s for s, k in zip(checked.inputs.sources, checked.kept, strict=True) if k)
