"""Tools the executor may call: a function of typed arguments that returns an observation,
registered by name (``@vreact.tool("calc")``) the way gates and members are: built in, from a
user's module (``--plugin``, ``plugins:``) or an installed package's entry point. A
configuration offers a family's executor the tools it names (``tools: [search, read,
date_diff]``); each call is recorded as a step (its arguments as the step's input, its
observation, the seconds it took) and passes the critic and the loop guards like any step.

A tool's arguments are its function's parameters: their annotations make its JSON schema
(pydantic's, as pydantic-ai and smolagents derive theirs), which a grammar-constrained model
is asked for and a native tool call declares. A parameter named ``ctx`` is not an argument: it
receives the try's :class:`ToolContext` (the question, the corpus it searches, the paragraphs
it has seen; never the task's gold). A tool with one string argument takes the step's ``input``
as that string (search's query, read's id); one with several takes ``input`` as a JSON object
of them.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from vreact.registry import Registry, UnknownName

#: The name of the parameter that receives the try's context, never an argument.
CONTEXT = "ctx"


@dataclass
class ToolContext:
    """What a tool may read of the try that calls it: the ``question`` (the task's text, what the
    roles read: a tool is never given the task, whose gold no role may see), the ``corpus`` it
    searches (qa: a ``vreact.qa.tools.CorpusView``, without the dataset's labels), the ids of
    what it has seen (``retrieved``: a tool that shows paragraphs adds theirs,
    so a finish may cite them), whether what it shows is delimited as data (``marked``:
    ``vreact.marking.mark``), and ``cut``, which a tool sets when what it shows was cut when it
    was read."""

    question: str = ""
    corpus: Any = None
    retrieved: set[str] = field(default_factory=set)
    marked: bool = False
    cut: bool = False


class ToolError(ValueError):
    """A call the tool cannot take (its arguments do not fit): the observation says why."""


@dataclass(frozen=True)
class Tool:
    """A registered tool: its ``name``, the line the executor is told (``description``), its
    arguments' JSON schema (``parameters``, an object) and the function."""

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any]
    arguments_model: type[BaseModel]
    takes_context: bool = False

    @cached_property
    def input_key(self) -> str | None:
        """The one argument the step's ``input`` holds as it is (None: it holds a JSON object)."""
        props = self.parameters.get("properties") or {}
        if len(props) == 1:
            ((name, schema),) = props.items()
            if schema.get("type") == "string":
                return str(name)
        return None

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of a step's ``input`` when it calls this tool."""
        key = self.input_key
        return dict(self.parameters["properties"][key]) if key else dict(self.parameters)

    def arguments(self, text: str) -> dict[str, Any]:
        """The arguments a step's ``input`` holds, validated (``ToolError`` says what is wrong)."""
        key = self.input_key
        if key is not None:
            return {key: text}  # a step's input is a string: nothing to validate
        try:
            raw = json.loads(text)
        except ValueError:
            raise ToolError(f"input is not a JSON object of {self._names()}") from None
        if not isinstance(raw, dict):
            raise ToolError(f"input is not a JSON object of {self._names()}")
        try:
            valid = self.arguments_model.model_validate(raw)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "input"
            raise ToolError(f"{where}: {first['msg']}") from None
        return {name: getattr(valid, name) for name in type(valid).model_fields}  # as validated

    def run(self, text: str, context: ToolContext) -> str:
        """The observation of a call with the step's ``input``. Arguments that do not fit, or a
        tool that raises, is an observation that says so (the model may call again: the step is
        spent)."""
        try:
            args = self.arguments(text)
            out = self.fn(**args, **({CONTEXT: context} if self.takes_context else {}))
            observation = out if isinstance(out, str) else json.dumps(out, default=str)
        except ToolError as e:
            observation = f"{self.name}: bad arguments ({e})"
        except Exception as e:  # a tool's failure is what the model sees, not a crash
            observation = f"{self.name} failed: {type(e).__name__}: {e}"[:300]
        return observation

    def _names(self) -> str:
        return ", ".join(self.parameters.get("properties") or {}) or "its arguments"


#: A name every provider takes for a native tool (OpenAI's and Anthropic's rule).
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each ``$ref`` into its ``$defs`` replaced by the definition (a tool's
    arguments sit inside the step's schema, where a reference to the root would not resolve)."""
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        """A schema node with its references inlined and its ``title`` (pydantic's label) dropped."""
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return walk(dict(defs[ref.removeprefix("#/$defs/")]))
        out = {k: walk(v) for k, v in node.items() if k not in ("title", "properties")}
        if isinstance(node.get("properties"), dict):  # names, not schema keys: a "title" argument stays
            out["properties"] = {name: walk(v) for name, v in node["properties"].items()}
        return out

    return walk(schema)  # type: ignore[no-any-return]


class UnknownTool(UnknownName):
    """A tool name nothing registered: one line with the closest."""


TOOLS: Registry[Tool] = Registry("tool", UnknownTool)


def tool(name: str, *, description: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a function as the tool ``name``. Its parameters (but ``ctx``) are its arguments,
    each annotated; ``description`` (default: the docstring's first line) is what the executor
    is told the tool does. The last registration of a name wins, so a plugin may replace a
    built-in tool."""

    if not _NAME.match(name):
        raise TypeError(f"tool {name!r}: a name of letters, digits, _ and - (at most 64), as providers take")

    def make(name: str, fn: Callable[..., Any]) -> Tool:
        fields: dict[str, Any] = {}
        takes_context = False
        for p in inspect.signature(fn, eval_str=True).parameters.values():  # its module's names
            if p.name == CONTEXT:
                takes_context = True
                continue
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"tool {name!r}: *args and **kwargs are not arguments a schema can name")
            if p.annotation is inspect.Parameter.empty:
                raise TypeError(f"tool {name!r}: argument {p.name!r} has no type annotation")
            default = ... if p.default is inspect.Parameter.empty else p.default
            fields[p.name] = (p.annotation, default)
        model = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
        schema = _inlined(model.model_json_schema())
        text = description or (inspect.getdoc(fn) or "").split("\n")[0].strip()
        if not text:
            raise TypeError(f"tool {name!r}: say what it does (a docstring or description=)")
        return Tool(name, text, schema, fn, model, takes_context)

    return TOOLS.register(name, make)


def tools_by_name() -> dict[str, Tool]:
    """The registered tools by name, as registered so far (nothing installed is loaded for it)."""
    return TOOLS.registered()


def tool_names() -> list[str]:
    """Every registered tool's name (what is installed is loaded first)."""
    return TOOLS.names()


def tool_of(name: str) -> Tool:
    """The tool registered as ``name``; ``UnknownTool`` names the closest."""
    return TOOLS[name]
