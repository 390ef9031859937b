"""The tester, L1's test design for code: from the problem's prompt alone (its signature and
docstring; never a program, never a hidden test) it proposes inputs that exercise the requirement
(edge cases, boundaries, empties, duplicates, large values) as literal argument tuples, and never
an expected output: what a right program returns on them is what agreement among candidates
decides. Its reply is JSON; an input that is no literal tuple of the entry point's arity is
dropped (one holding ``...``, the prompt's placeholder copied, too), and so is a repeat."""

from __future__ import annotations

from typing import Any

from vreact import syntax
from vreact.code.examples import parameters
from vreact.model import Message, parse_json_object

#: The most inputs one reply may give (more are dropped).
MOST = 20
#: The tester's reply: inputs, each the call's arguments as one Python tuple literal.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "inputs": {
            "type": "array",
            "items": {"type": "string", "maxLength": 400},
            "maxItems": MOST,
        }
    },
    "required": ["inputs"],
    "additionalProperties": False,
}
SYSTEM = (
    "You are a software tester. You read a function's signature and description, and propose "
    "inputs that test it: edge cases, boundaries, empty values, duplicates, large values, and "
    "the cases the description singles out. Give each input as the call's arguments, one Python "
    'tuple literal such as "([1, 2], 3)" or "(\'abc\', 2)" (a single argument as "(x,)", a '
    'string in quotes). Give no expected output. Reply with JSON: {"inputs": ["(...)", "(...)"]}'
)


def messages(prompt: str, entry_point: str) -> list[Message]:
    """What the tester is asked: the prompt as stated, and the function to test."""
    names = ", ".join(parameters(prompt, entry_point)) or "its parameters"
    user = (
        f"{prompt.strip()}\n\nPropose up to {MOST} inputs for {entry_point}({names}): each its"
        " arguments as one Python tuple literal."
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def inputs(text: str, prompt: str, entry_point: str) -> list[tuple[Any, ...]]:
    """The argument tuples a reply gives, in order: each a literal tuple (one bare value is read as
    a single argument) of the entry point's arity, without repeats; anything else is dropped."""
    data = parse_json_object(text)
    given = data.get("inputs") if isinstance(data, dict) else None
    if not isinstance(given, list):
        return []
    arity = len(parameters(prompt, entry_point))
    out: list[tuple[Any, ...]] = []
    for item in given[:MOST]:
        try:
            value = syntax.literal_eval(item) if isinstance(item, str) else item
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if arity == 1:  # "(x,)" as asked, or the bare value
            args = value if isinstance(value, tuple) and len(value) == 1 else (value,)
        elif isinstance(value, tuple) and (not arity or len(value) == arity):
            args = value
        else:
            continue
        if repr(args) not in {repr(a) for a in out}:
            out.append(args)
    return out
