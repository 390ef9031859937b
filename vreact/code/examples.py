"""A problem's visible examples, read from its prompt's text by a fixed rule, in the forms
HumanEval's prompts state them (each example is tagged with its form, ``FORMS``):

- ``doctest``: ``>>> f(x)`` and the next line (nothing printed, a blank line or the next
  ``>>>``, is ``None``), or ``>>> f(x) == y``;
- ``arrow``: ``f(x) == y``, ``f(x) ==> y``, ``f(x) => y``, ``f(x) -> y``, ``f(x) ➞ y``, ``f(x)
  should return y``, ``f(x) returns y``, each also after a ``#`` (``f(x)  # => y``);
- ``for``: ``For lst = [1, 2] the output should be 3`` (or ``the result should be``);
- ``input_output``: ``Input: arr = [1, 2], k = 3`` then ``Output: [2]``, on one line or several
  (``Example 1:`` before it, names as ``name = v`` or ``name : v``, or one bare value);
- ``assignment``: lines ``arr = [1, 2]`` naming the parameters, then ``return [...]``;
- ``misnamed``: the arrow form calling another name than the entry point (``grade_equation(x)
  ==> y`` in ``numerical_letter_grade``'s prompt), read only when the prompt states no example
  of the entry point, defines no function of that name and calls no other.

A call counts only with literal arguments and a literal expected value (``true``/``false``
read as booleans; an expected ``a - b = c`` as its last ``c``; prose or a ``#`` comment after the
value ignored). Arguments named as in the signature are put in its order; named otherwise, in the
order stated when there are as many as it has parameters. Nothing else of the problem is read:
the hidden tests are not. The forms were found by reading HumanEval's prompts, all 164 of them."""

from __future__ import annotations

import ast
import builtins
import re
from typing import NamedTuple

from vreact import syntax

#: Each form an example can be stated in, as ``Example.form`` names it.
FORMS = ("doctest", "arrow", "for", "input_output", "assignment", "misnamed")
#: What may stand between a call and its expected value, longest first.
_ARROWS = ("should return", "returns", "==>", "==", "=>", "->", "➞", "→", "=")
_BULLET = re.compile(r"^\s*(?:>>>|\*|-|\d+\.)?\s*(?:assert\s+)?")
_FOR = re.compile(r"^\s*for\s+(.*?)\s*,?\s+the (?:output|result) should be\s+(.*)$", re.I)
_NAMED = re.compile(r"\s*,?\s*([A-Za-z_]\w*)\s*[=:]\s*")
_INPUT = re.compile(r"^\s*(?:example\s*\d*\s*:\s*)?input\s*:\s*(.*)$", re.I)
_OUTPUT = re.compile(r"^\s*output\s*:\s*(.*)$", re.I)
_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*(.+)$")
#: A line that starts by calling a name (after a docstring's quotes or ``assert``).
_LEADING_CALL = re.compile(r"^\s*(?:[\"']{3})?\s*(?:assert\s+)?([A-Za-z_]\w*)\(")
_RETURN = re.compile(r"^\s*return\s*=?\s*(.+)$")
_NOT_LITERAL = (ValueError, SyntaxError, TypeError, MemoryError, RecursionError)


class Example(NamedTuple):
    """One stated example: its arguments (a tuple) and expected value, both Python literals as
    ``repr`` gives them, and the form it was stated in (one of ``FORMS``)."""

    args: str
    expected: str
    form: str


def _close(text: str, start: int) -> int | None:
    """The index just past the bracket that closes the one at ``start``."""
    depth, quote = 0, ""
    for i in range(start, len(text)):
        c = text[i]
        if quote:
            if c == quote and text[i - 1] != "\\":
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _eval(text: str) -> object:
    text = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", text.strip()))
    return syntax.literal_eval(text)


#: What may follow a literal that prose goes on after: a word, a comment, punctuation; never an
#: operator (``3 * 2`` is no ``3``).
_AFTER = re.compile(r"\s*(?:$|#|[,;.)(]|[A-Za-z])")


def _leading(text: str) -> tuple[object, int]:
    """The longest literal ``text`` starts with and where it ends; prose or a comment after it
    is left, an expression is not (a prefix ending in a comma is not taken: ``1, k`` is not the
    tuple ``(1,)``)."""
    stripped = len(text) - len(text.lstrip())
    cuts = [i for i in range(len(text), stripped, -1) if i == len(text) or text[i] in " \t,#;.)"]
    for cut in cuts:
        head = text[stripped:cut].rstrip()
        if not head or head.endswith(",") or not _AFTER.match(text, cut):
            continue
        try:
            return _eval(head), cut
        except _NOT_LITERAL:
            continue
    raise ValueError(text)


def _literal(text: str) -> object:
    """An expected value: a literal, with prose after it ignored; ``a - b = c`` is its ``c``."""
    text = text.strip().rstrip(".,;").strip()
    try:
        return _eval(text)
    except _NOT_LITERAL:
        pass
    if "=" in text and not text.lstrip().startswith(("'", '"')):  # ``19 - 5 - 6 = 8``
        return _literal(text.rsplit("=", 1)[1])
    return _leading(text)[0]


def definition(prompt: str, entry_point: str) -> ast.FunctionDef | None:
    """The entry point's ``def`` line in the prompt (its return hint too), parsed with ``ast``,
    never run; None when the prompt does not define it. Only that line is read, so a prompt whose
    whole text does not parse still gives it."""
    at = re.search(rf"^\s*def\s+{re.escape(entry_point)}\s*\(", prompt, re.M)
    end = _close(prompt, at.end() - 1) if at is not None else None
    if at is None or end is None:
        return None
    returns = re.match(r"\s*(->[^:\n]*)?:", prompt[end:])
    try:
        tree = syntax.parse(
            f"def f{prompt[at.end() - 1 : end]}{returns.group(1) or '' if returns else ''}: pass"
        )
    except SyntaxError:
        return None
    found = tree.body[0]
    return found if isinstance(found, ast.FunctionDef) else None


def parameters(prompt: str, entry_point: str) -> list[str]:
    """The entry point's parameter names, from its ``def`` in the prompt (``definition``); empty
    when the prompt does not define it."""
    found = definition(prompt, entry_point)
    return [] if found is None else [a.arg for a in (*found.args.posonlyargs, *found.args.args)]


def _named(text: str) -> list[tuple[str | None, object]]:
    """``a = 1, b = "x"`` (or ``a : 1``) as ``[(a, 1), (b, "x")]``; one bare value as ``[(None,
    v)]``; prose after the last value ignored."""
    pairs: list[tuple[str | None, object]] = []
    rest = text
    while True:
        name = _NAMED.match(rest)
        if name is None:
            break
        try:
            value, end = _leading(rest[name.end() :])
        except ValueError:
            break
        pairs.append((name.group(1), value))
        rest = rest[name.end() + end :]
    if pairs:
        return pairs
    return [(None, _leading(text)[0])]


def _arguments(pairs: list[tuple[str | None, object]], params: list[str]) -> tuple[object, ...]:
    """The arguments ``pairs`` name, in the signature's order when named as its parameters, else
    as stated when there are as many as it has (or it is not known)."""
    names = [n for n, _ in pairs]
    if params and None not in names and sorted(names) == sorted(params):  # type: ignore[type-var]
        given = dict(pairs)
        return tuple(given[p] for p in params)
    if params and len(pairs) != len(params):
        raise ValueError(pairs)
    return tuple(v for _, v in pairs)


def _call(line: str, at: int, end: int, params: list[str]) -> tuple[object, ...]:
    call = syntax.parse(line[at:end], mode="eval").body
    if not isinstance(call, ast.Call):
        raise ValueError(line)
    args = [syntax.literal_eval(a) for a in call.args]
    if not call.keywords:
        return tuple(args)
    given = {k.arg: syntax.literal_eval(k.value) for k in call.keywords}
    rest = params[len(args) : len(args) + len(given)]
    if sorted(map(str, given)) != sorted(rest):  # every parameter after the positional ones, none skipped
        raise ValueError(line)
    return (*args, *(given[p] for p in rest))


def _calls(lines: list[str], name: str, params: list[str]) -> list[Example]:
    """The doctest and arrow forms: each line calling ``name`` with its expected value."""
    out = []
    for n, raw in enumerate(lines):
        doctest = raw.strip().startswith(">>>")
        line = _BULLET.sub("", raw, count=1)
        at = line.find(name + "(")
        if at < 0 or (at > 0 and (line[at - 1].isalnum() or line[at - 1] in "_.")):
            continue
        end = _close(line, at + len(name))
        if end is None:
            continue
        rest = line[end:].strip()
        commented = rest.startswith("#")
        if commented:
            rest = rest[1:].strip()
        arrow = next((a for a in _ARROWS if rest.startswith(a)), None)
        form = "doctest" if doctest else "arrow"
        if arrow is not None:
            expected_text = rest[len(arrow) :]
        elif doctest and (not rest or commented) and n + 1 < len(lines):
            following = lines[n + 1].strip()
            silent = not following or following.startswith(">>>") or following in ('"""', "'''")
            expected_text = "None" if silent else following  # a call that prints nothing returns None
        else:
            continue
        try:
            out.append(Example(repr(_call(line, at, end, params)), repr(_literal(expected_text)), form))
        except _NOT_LITERAL:
            continue
    return out


def _for(lines: list[str], params: list[str]) -> list[Example]:
    """``For a = 1, b = 2 the output should be 3``."""
    out = []
    for line in lines:
        found = _FOR.match(line)
        if found is None:
            continue
        try:
            args = _arguments(_named(found.group(1)), params)
            out.append(Example(repr(args), repr(_literal(found.group(2))), "for"))
        except _NOT_LITERAL:
            continue
    return out


def _input_output(lines: list[str], params: list[str]) -> list[Example]:
    """``Input: ...`` (on its line and the ones after it) then ``Output: ...`` (on its line or
    the next that holds anything)."""
    out = []
    n = 0
    while n < len(lines):
        found = _INPUT.match(lines[n])
        n += 1
        if found is None:
            continue
        same_line = re.search(r"output\s*:", found.group(1), re.I)
        parts = [found.group(1)[: same_line.start()] if same_line else found.group(1)]
        expected = found.group(1)[same_line.end() :] if same_line else None
        while expected is None and n < len(lines) and not _INPUT.match(lines[n]):
            output = _OUTPUT.match(lines[n])
            n += 1
            if output is not None:
                expected = output.group(1)
                while not expected.strip() and n < len(lines):
                    expected = lines[n]
                    n += 1
            else:
                parts.append(lines[n - 1])
        if expected is None:
            continue
        try:
            args = _arguments(_named(" ".join(p.strip() for p in parts if p.strip())), params)
            out.append(Example(repr(args), repr(_literal(expected)), "input_output"))
        except _NOT_LITERAL:
            continue
    return out


def _assignment(lines: list[str], params: list[str]) -> list[Example]:
    """Lines assigning each parameter (``arr = [1, 2]``), then ``return x`` (or ``return = x``)."""
    out = []
    given: dict[str, object] = {}
    for line in lines:
        assigned = _ASSIGN.match(line)
        returned = _RETURN.match(line)
        if assigned is not None and assigned.group(1) in params:
            try:
                given[assigned.group(1)] = _leading(assigned.group(2))[0]
            except ValueError:
                given.clear()
        elif returned is not None and given:
            if sorted(given) == sorted(params):
                try:
                    args = tuple(given[p] for p in params)
                    out.append(Example(repr(args), repr(_literal(returned.group(1))), "assignment"))
                except _NOT_LITERAL:
                    pass
            given = {}
    return out


def _misnamed(prompt: str, lines: list[str], entry_point: str, params: list[str]) -> list[Example]:
    """The arrow form calling one name the prompt neither defines nor is the entry point."""
    defined = set(re.findall(r"^\s*def\s+(\w+)", prompt, re.M)) | set(dir(builtins))
    called = {
        m.group(1)
        for line in lines
        for m in [_LEADING_CALL.match(line)]
        if m and m.group(1) not in defined and m.group(1) != entry_point
    }
    if len(called) != 1:
        return []
    found = [e for e in _calls(lines, called.pop(), params) if e.form == "arrow"]
    if params and any(len(syntax.literal_eval(e.args)) != len(params) for e in found):
        return []
    return [e._replace(form="misnamed") for e in found]


def stated(prompt: str, entry_point: str) -> list[Example]:
    """Each visible example of ``entry_point`` in ``prompt``, with its form, in the order the
    forms are read (``FORMS``) and then as they stand, without repeats."""
    lines = prompt.splitlines()
    params = parameters(prompt, entry_point)
    found = [
        *_calls(lines, entry_point, params),
        *_for(lines, params),
        *_input_output(lines, params),
        *_assignment(lines, params),
    ]
    if not found:
        found = _misnamed(prompt, lines, entry_point, params)
    out: list[Example] = []
    seen = set()
    for example in found:
        if (example.args, example.expected) not in seen:
            seen.add((example.args, example.expected))
            out.append(example)
    return out


def examples(prompt: str, entry_point: str) -> list[tuple[str, str]]:
    """Each visible example of ``entry_point`` in ``prompt``: ``(arguments, expected)``, both as
    Python literals (the arguments a tuple), without repeats (``stated`` gives their forms)."""
    return [(e.args, e.expected) for e in stated(prompt, entry_point)]
