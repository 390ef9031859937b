"""Task families: what the core asks of a kind of task.

vreact's V, controller, budgets, verdict-only memory, records and report are the same for any
task; a family says what its tasks are. A family is a subclass of :class:`TaskFamily`
registered under its name (``@vreact.families``) when its module loads: built in (``qa``:
question answering over paragraphs, ``vreact/qa/``; ``code``, ``vreact/code/``: entry points of
the group ``vreact.families``, as an installed package's family), from a user's module
(``--plugin``, ``plugins:``) or from an installed package's entry point (group
``vreact.plugins``). The core imports no family: it finds one here, by name, and the installed
families' modules are imported the first time a name of any kind is asked for that is not
registered yet (``vreact.registry``).

A family provides its readers (record formats -> tasks, ``read``), its shapes (models of its L1
answer requirements, its dataset settings and its step settings: ``requirements``,
``dataset_settings``, ``step_settings``; a key another family declares is refused naming it), its scorer
(``score``: whether an attempt's answer is right and the family's own metrics, which a run
writes when each attempt ends, so reading a run never needs the machinery that made it), and
what an attempt asks of it: L1 as the judges read it (``l1``), the L3 design of the single task
(``single_task``), the executor's step kit for a try (``kit``: its tools' schema, how a step is
rendered, parsed and acted on, how a finish becomes an artifact), and the assembly of the final
answer from the accepted units (``final``, ``unit``).

A task of any family has an ``id`` and ``text``, what the roles read; its gold fields carry the
origin tag ``gold`` (``vreact.origin.tag``), which the context assembler refuses to every role.
"""

from __future__ import annotations

import inspect
import json
import re
import warnings
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vreact.inputs import DatasetError
from vreact.model import Message, ToolSpec, parse_json_object
from vreact.registry import FAMILY_GROUP, Registry, UnknownName, installed

#: The family a dataset is read with when nothing names one.
DEFAULT = "qa"


class UnknownFamily(UnknownName):
    """A family name nothing registered: one line with the closest."""


class Task(Protocol):
    """A task of any family, as the core reads it: its id and the text the roles read."""

    @property
    def id(self) -> str: ...

    @property
    def text(self) -> str: ...


class Shared(Protocol):
    """What a family opens once for a whole run and every task shares (qa: the corpus every
    task is searched in): its entries in the run's identity, and the tasks placed in it."""

    def identity(self) -> dict[str, Any]: ...

    def place(self, tasks: list[Any], source: str) -> list[Any]: ...


def select(tasks: list[Any], task_ids: list[str] | None, limit: int | None, source: str) -> list[Any]:
    """Keep ``task_ids`` in their order (an unknown id is an error naming ``source``), then the
    first ``limit``."""
    kept = tasks
    if task_ids:
        by_id = {t.id: t for t in kept}
        missing = [i for i in task_ids if i not in by_id]
        if missing:
            raise DatasetError(f"{source}: no task with id {', '.join(missing)} (after the filter)")
        kept = [by_id[i] for i in task_ids]
    return kept[:limit] if limit is not None else kept


def read_selection(family: Any, d: Any, limit: int | None = None) -> list[Any]:
    """A dataset selection's file read by its family, in its format. A file it refuses whose
    records are another family's or format's shape (``looks_like``), or a name another family
    ships, is refused saying so, with the flag to give."""
    family.check_selection(d)
    try:
        return list(family.read_dataset(d, limit))
    except DatasetError:
        other = elsewhere(family, d.record_format, str(d.path))
        if other is None:
            raise
        raise DatasetError(other) from None


def looks_like(record: Any) -> tuple[str, str] | None:
    """The (family, format) whose shape (``TaskFamily.shapes``) a record has, the one with the
    most fields when several match (2Wiki's is HotpotQA's and ``evidences``); None: none."""
    if not isinstance(record, dict):
        return None
    found = [
        (len(fields), name, fmt)
        for name in family_names()
        for fmt, fields in family_of(name).shapes.items()
        if fields <= record.keys()
    ]
    return max(found)[1:] if found else None


#: How much of a refused file ``first_record`` reads: enough for any one record of the built-in
#: families' datasets (a HotpotQA record is a few kilobytes), never a whole large file.
FIRST_RECORD_BYTES = 4_000_000


def first_record(path: str) -> Any:
    """The first record of a file of JSON lines or of a JSON array, from its first
    ``FIRST_RECORD_BYTES`` (None: no file, or no record can be read there)."""
    try:
        with open(path, "rb") as f:
            text = f.read(FIRST_RECORD_BYTES).decode("utf-8-sig", errors="replace")
    except OSError:
        return None
    stripped = text.lstrip()
    decoder = json.JSONDecoder()
    try:
        if stripped.startswith("["):
            rest = stripped[1:].lstrip()
            return decoder.raw_decode(rest)[0] if rest[:1] == "{" else None
        return decoder.raw_decode(stripped)[0] if stripped[:1] == "{" else None
    except (ValueError, RecursionError):
        return None


def elsewhere(family: Any, format: str, path: str) -> str | None:
    """What to say of ``path``, refused by ``family`` in ``format``, when it is another family's
    shipped name or its first record has another family's or format's shape: which, and the
    flag to give; None when it is none of these."""
    for name in family_names():
        if name != family.name and path in family_of(name).shipped:
            return f"{path}: the {name} family's shipped set, not a {family.name} file: {_give(family=name)}"
    seen = looks_like(first_record(path)) if Path(path).is_file() else None
    if seen is None or seen == (family.name, format):
        return None
    name, fmt = seen
    if name == family.name:
        return f"{path}: its records look like {fmt} records, not {format}: {_give(format=fmt)}"
    other = fmt if fmt != family_of(name).formats[0] else None
    said = f"its records look like the {name} family's ({fmt}), not {family.name}'s"
    return f"{path}: {said}: {_give(name, other)}"


def _give(family: str | None = None, format: str | None = None) -> str:
    """The flags that name ``family`` and ``format``, and an experiment file's keys for them."""
    given = {"family": family, "format": format}
    flags = " ".join(f"--{k} {v}" for k, v in given.items() if v)
    keys = " and ".join(f"dataset.{k}" for k, v in given.items() if v)
    return f"give {flags} ({keys} in an experiment file)"


@dataclass(frozen=True)
class Score:
    """An attempt's score under its family: ``correct`` (None: the attempt gave no answer or its
    task cannot be scored) and the family's metrics, each a number."""

    correct: bool | None
    metrics: Mapping[str, float] = field(default_factory=dict)
    #: each judged try the family could score, by its artifact's hash: right by gold (what tells a
    #: gate's false rejection, and a correction the scorer confirms, from the rest)
    tries: Mapping[str, bool] = field(default_factory=dict)
    #: the scorer that gave it: a family with more than one names each (``TaskFamily.scorers``);
    #: empty: the family's own, its only one
    scorer: str = ""


#: The actions that end a try, in every family: a finish (an answer) or an abstain (a reason).
FINALS = ("finish", "abstain")
#: The reply text of a history entry that stands for the steps a context profile folded away.
SUMMARY = "\x00summary"


class Step(BaseModel):
    """One executor step in any family: a thought, an action (one of the kit's tools, or
    ``finish`` / ``abstain``) and its input; ``evidence``: what a finish cites. A family's step
    may narrow the actions and add fields."""

    model_config = ConfigDict(extra="ignore")

    thought: str = ""
    action: str
    input: str = ""
    evidence: list[str] = Field(default_factory=list)

    @field_validator("input", mode="before")
    @classmethod
    def _text(cls, v: Any) -> Any:
        """A number as its text; a tool's arguments (an object) as canonical JSON."""
        if isinstance(v, dict):
            return json.dumps(v, sort_keys=True)
        return "" if v is None else str(v) if isinstance(v, int | float) else v

    def cited(self) -> list[str]:
        """What a finish rests on."""
        return list(self.evidence)

    def call(self) -> str:
        """The tool call as one canonical string (for the repetition guard)."""
        return json.dumps([self.action, self.input.strip(), sorted(self.cited())])


#: A reply's fenced code blocks (```python, ```py or a bare ```), for families whose executor
#: writes Python (``fenced_step``).
FENCED = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL | re.IGNORECASE)
#: The first line of a block that is a ``run`` (tried first), not the answer.
RUN_MARK = re.compile(r"\A\s*#\s*run\b", re.IGNORECASE)
#: The actions of a step written as fenced Python: a ``run`` of a block, a finish, an abstain.
FENCED_ACTIONS = ("run", *FINALS)


def fenced_step(text: str, limit: int = 4000, thought: int = 200) -> Step | None:
    """The step in a reply of fenced Python (the executors of ``code`` and ``gsm8k``): a JSON
    step (``{"thought", "action", "input"}``, as scripted tests write; another action than
    ``run``, ``finish`` or ``abstain`` is none), ``ABSTAIN: why``, or its last ```python block, a
    ``run`` when the block's first line is ``# run`` and else a finish, its thought the reply's
    text around the blocks (the first ``thought`` characters). The input is cut to ``limit``
    characters. None: none of these (``fenced_blocks`` tells a reply without a block)."""
    data = parse_json_object(text)
    if data is not None:
        if data.get("action") not in FENCED_ACTIONS:
            return None
        try:
            return Step.model_validate(data)
        except ValidationError:
            return None
    stripped = text.strip()
    if stripped[:7].upper() == "ABSTAIN":
        return Step(thought="", action="abstain", input=stripped[7:].lstrip(" :").strip()[:limit])
    found = fenced_blocks(text)
    if not found:
        return None
    code = found[-1]
    action = "run" if RUN_MARK.match(code) else "finish"
    return Step(thought=FENCED.sub("", text).strip()[:thought], action=action, input=code[:limit] + "\n")


def steps_so_far(
    steps: Sequence[tuple[str, str]], parse: Callable[[str], Step | None], next_step: str
) -> Message | None:
    """The try's steps as one user message (each read with ``parse``, its input cut to 600
    characters, and what it returned), ending with ``next_step``; None: no step yet."""
    if not steps:
        return None
    history = ["Your steps so far and what they returned:"]
    for i, (text, obs) in enumerate(steps, 1):
        step = parse(text)
        shown = f"{step.action}: {step.input[:600]}" if step is not None else "(not a step)"
        history.append(f"{i}. {shown}\n-> {obs}")
    history.append(next_step)
    return {"role": "user", "content": "\n".join(history)}


def fenced_blocks(text: str) -> list[str]:
    """The reply's fenced code blocks that hold something, in order."""
    return [b.strip("\n") for b in FENCED.findall(text) if b.strip()]


@dataclass(frozen=True)
class Subtask:
    """One L3 step design (any family): objective, contract and the checks R1 applies."""

    id: str
    objective: str
    contract: str
    checks: tuple[str, ...]
    component: str
    depends_on: tuple[str, ...] = ()
    final: bool = True
    plan_ids: tuple[str, ...] = ()

    def l3(self) -> dict[str, str]:
        """The level R1's judge reads beside the artifact."""
        return {"objective": self.objective, "contract": self.contract}


class Artifact(Protocol):
    """What a try ends in and the verifiers check: a finish (``kind`` ``answer``: its
    ``answer`` and ``evidence``) or an abstain (``reason``)."""

    @property
    def kind(self) -> str: ...

    @property
    def answer(self) -> Any: ...

    @property
    def evidence(self) -> Any: ...

    @property
    def reason(self) -> str: ...

    def identity(self) -> dict[str, Any]:
        """What makes two artifacts the same (for hashes and corrections)."""
        ...

    def gate_input(self) -> dict[str, Any]:
        """Everything a gate reads of it, as JSON (the ledger keeps it)."""
        ...

    def shown(self, marked: bool = False) -> Any:
        """What a judge is shown of it (its material delimited as data when ``marked``)."""
        ...


@dataclass
class Behaviours:
    """What a family says k candidates of one task did, for agreement at R3
    (``vreact.verify.agreement``): each compared candidate's behaviour (equal where two did the
    same), those that fail what the task itself states (their group is disputed), those left
    out of every group and why, what to keep in the records (JSON), and, when no candidate could
    be compared at all, why (a reject, never a silent accept)."""

    of: Mapping[int, Hashable]
    disputed: set[int] = field(default_factory=set)
    left_out: dict[int, str] = field(default_factory=dict)
    record: dict[str, Any] = field(default_factory=dict)
    unavailable: str | None = None
    #: with ``unavailable``: no input was left to compare the candidates on (none stated, made
    #: up or given, or most refused all): the comparison says nothing for or against any of them
    #: (a run still rejects; a probe makes no verdict of it)
    nothing_to_compare: bool = False


@dataclass(frozen=True)
class Tester:
    """L1's test design for a family whose answers run on inputs (agreement at R3): what the
    tester role is asked, from the L1 its row lets it read (never a program, never gold), the
    reply's JSON Schema, and the inputs a reply gives (each an argument tuple; what a reply does
    not give well is dropped, never guessed)."""

    messages: Callable[[dict[str, Any]], list[Any]]
    schema: dict[str, Any]
    inputs: Callable[[str], list[tuple[Any, ...]]]


#: What a probe's class is: the gold artifact, a control that must pass, or a fault that should not.
Role = Literal["gold", "control", "fault"]


@dataclass(frozen=True)
class FaultClass:
    """One of a family's probe classes (``vreact probe``): its name, its role and one line on
    what its artifacts are. A family's class may carry more (how it is built, its table's
    columns)."""

    name: str
    role: Role
    definition: str


class Finding(BaseModel):
    """One entry of a dataset audit: a task, what its gates read from it (``read``: code, a
    stated example), and what the task's own gold gives instead (``gold``)."""

    model_config = ConfigDict(extra="forbid")

    task: str
    read: str
    gold: str


class Reading(BaseModel):
    """What a family's gates read from a run's tasks, said once wherever the run is shown (the
    terminal as it starts, the report, the page): a line for each thing it says (code: how many
    examples the prompts state, each run as stated; the tasks that run unscored), and the dataset
    audit's findings on these tasks."""

    model_config = ConfigDict(extra="forbid")

    lines: list[str]
    findings: list[Finding] = []


@dataclass
class Probed:
    """A probe's artifacts of one task: each class's (none where it yields nothing); for each
    class that yielded fewer than it could, why and how many it left out; and the chain R2
    checks of the gold artifact (None: none)."""

    artifacts: dict[str, list[Any]]
    skipped: dict[str, tuple[str, int]] = field(default_factory=dict)
    chain: Any = None


class PlanKit(Protocol):
    """A family's L2: what the controller asks of its planner."""

    #: the plan's JSON schema, and the tools the planner is told the executor has
    schema: dict[str, Any]
    tools: tuple[str, ...]

    def messages(self, context: dict[str, Any]) -> list[Message]:
        """The planner's chat messages, from its assembled context only."""
        ...

    def proposal(self, text: str, reply: str) -> Artifact:
        """The planner's reply to the task ``text`` as the artifact the plan gates check."""
        ...

    def plan(self, proposal: Any) -> Any | None:
        """The plan the designer designs from (None: the proposal plans nothing)."""
        ...


class CriticKit(Protocol):
    """DeReAct's critic for a family's steps: shown a proposed step, it authorises it or not."""

    schema: dict[str, Any]

    def messages(self, context: dict[str, Any]) -> list[Message]: ...

    def decide(self, text: str, kappa_min: float) -> tuple[bool, str, str, float | None]:
        """(authorised, cause, feedback, confidence) from the critic's reply (fail closed)."""
        ...


class ContextManagerKit(Protocol):
    """DeReAct's context manager for a family's steps: the evidence-only State, each fact citing
    what the try retrieved. ``cites`` (optional, default ``cites``): the name its schema and
    messages give a fact's citations (qa: ``paragraph_ids``; code: ``runs``), under which the
    roles are shown the State. ``certifies_empty`` (optional, default True): whether it may
    certify a finish on an empty State; False makes "nothing shown yet" a veto whatever the model
    says (code: no finish before a run)."""

    schema: dict[str, Any]

    def messages(self, context: dict[str, Any]) -> list[Message]: ...

    def parse(self, text: str) -> Any | None:
        """The update (``status`` and ``state``: facts with ``fact`` and ``cites``, read from the
        kit's name for them: ``vreact.dereact.parse``), or None when the reply is not one."""
        ...


class StepKit:
    """One executor try's kit: the step's JSON schema (None: the reply is free text, which
    ``parse`` reads), the checks the executor is told, the
    steps the designer issues before the model's (no call), how the prompt is rendered from the
    assembled context, how a reply is parsed, how a tool step is acted on, and how a final step
    becomes the try's artifact. ``retrieved``: what the try has seen (for the members that
    check a citation against it)."""

    def __init__(
        self, schema: dict[str, Any] | None, checks: tuple[str, ...] = (), recover: str = ""
    ) -> None:
        self.schema = schema
        self.checks = checks
        #: what final-answer recovery asks when a try hits its step cap
        self.recover = recover
        self.designed: list[Step] = []
        self.retrieved: set[str] = set()

    #: whether this try's actions are the provider's native tool calls (a family whose
    #: ``native_actions`` is true sets it, for an executor model with ``actions: native``)
    native: bool = False
    #: DeReAct's critic and context manager for this family's steps (``CriticKit``,
    #: ``ContextManagerKit``; None: it has none, and an attempt whose configuration runs them
    #: crashes naming the family)
    critic: Any = None
    context_manager: Any = None
    #: the family's own loop guards (pipeline members), run first among the guards when the
    #: configuration runs guards (qa: the duplicate-search rollback)
    guards: tuple[Any, ...] = ()

    def stub(self, observation: str) -> str:
        """An older tool result as a context profile blanks it (default: its first 80 characters)."""
        return observation if len(observation) <= 80 else observation[:77] + "..."

    def summary(self, history: list[tuple[str, str]]) -> str:
        """The steps a context profile folds away, as one line (default: how many)."""
        return f"{len(history)} earlier step(s)"

    def parse(self, text: str) -> Step | None:
        """The step in a model's reply, or None (not a step: fail closed upstream)."""
        raise NotImplementedError

    def native_tools(self) -> list[ToolSpec]:
        """The step's actions as a provider's native tools (a family whose ``native_actions``
        is true gives them; each ``ToolSpec.input`` names the argument that is the step's input,
        its other arguments the step's fields of the same names)."""
        raise NotImplementedError

    def parse_native(self, text: str) -> tuple[str | None, str, str]:
        """A native reply (``vreact.model.native_reply``'s text) as the JSON step it stands for
        (what ``parse`` reads and the history shows), or None with the cause and detail of a
        reply that is no single call of an offered tool: ``no_tool_call`` (it answered in text),
        ``parallel_calls`` (several calls at once), ``unknown_tool``, ``bad_arguments``."""
        data = parse_json_object(text) or {}
        calls = data.get("tool_calls")
        if not isinstance(calls, list) or not calls:
            said = str(data.get("content") or text)
            return None, "no_tool_call", f"answered in text, not a tool call: {said[:120]!r}"
        offered = {t.name: t for t in self.native_tools()}
        if len(calls) > 1:
            names = ", ".join(str(c.get("name")) for c in calls if isinstance(c, dict))
            return None, "parallel_calls", f"{len(calls)} tool calls at once ({names}): one per step"
        call = calls[0] if isinstance(calls[0], dict) else {}
        name, args = str(call.get("name")), call.get("arguments")
        spec = offered.get(name)
        if spec is None:
            return None, "unknown_tool", f"called {name!r}, which is not offered ({', '.join(offered)})"
        if not isinstance(args, dict):
            return None, "bad_arguments", f"{name}'s arguments are not a JSON object: {str(args)[:120]!r}"
        missing = [k for k in spec.parameters.get("required") or () if k not in args]
        if missing:
            return None, "bad_arguments", f"{name} was called without {', '.join(missing)}"
        if spec.input is None:
            fields: dict[str, Any] = {"input": json.dumps(args, sort_keys=True)}
        else:  # the other arguments are the step's fields of their names (finish's evidence), no more
            fields = {k: v for k, v in args.items() if k not in (spec.input, "thought", "action", "input")}
            fields["input"] = args.get(spec.input, "")
        step = {"thought": str(data.get("content") or ""), "action": name, **fields}
        return json.dumps(step), "", ""

    def messages(self, context: dict[str, Any]) -> list[Message]:
        """The executor's chat messages, from its assembled context only."""
        raise NotImplementedError

    def act(self, step: Step) -> tuple[str, bool]:
        """Run a tool step: its observation, and whether what it shows was cut."""
        raise NotImplementedError

    def artifact(self, step: Step) -> Artifact:
        """The try's artifact from its final step (a finish or an abstain)."""
        raise NotImplementedError

    def record(self, step: Step) -> dict[str, Any]:
        """The step's columns in the records' ``steps`` table beyond thought, action, input and
        evidence (none by default)."""
        return {}


@dataclass(frozen=True)
class ExecutorDefaults:
    """How a family's executor calls are made where an experiment says nothing: its completion
    tokens per call (``max_tokens``: what a configuration's ``calls.executor.max_tokens`` sets)
    and the seconds for all tries of one call (``call_timeout``: what an experiment's
    ``limits.call_timeout`` sets); None leaves vreact's own (256 tokens, 600 seconds). A family
    whose executor writes more than a step says needs them: at vreact's 256 tokens a coding
    model's program is cut mid-function, and a cut program reads as a wrong one. The file wins
    wherever it says (a configuration's ``max_tokens`` or ``calls``, the experiment's ``calls``,
    its ``limits``), then the family, then vreact."""

    #: the executor's completion tokens per call (at least 16, as a file's ``max_tokens``)
    max_tokens: int | None = None
    #: seconds for all tries of one call, waits included (0: none)
    call_timeout: float | None = None
    #: the tester's completion tokens per call (its inputs, in JSON: at 256, a list of 20 is
    #: cut), where the file names none (``calls.tester.max_tokens``, ``calls.default``)
    tester_max_tokens: int | None = None

    def __post_init__(self) -> None:
        """Refused when the family is defined, not when a run reads it: the bounds a file's own
        ``max_tokens`` and ``call_timeout`` are held to."""
        if self.max_tokens is not None and (isinstance(self.max_tokens, bool) or self.max_tokens < 16):
            raise ValueError(f"executor_defaults.max_tokens is at least 16, not {self.max_tokens!r}")
        t = self.tester_max_tokens
        if t is not None and (isinstance(t, bool) or t < 16):
            raise ValueError(f"executor_defaults.tester_max_tokens is at least 16, not {t!r}")
        if self.call_timeout is not None and self.call_timeout < 0:
            raise ValueError(f"executor_defaults.call_timeout is at least 0, not {self.call_timeout!r}")


class Settings(BaseModel):
    """The base of a family's own settings models (its L1 answer requirements, its dataset
    settings, its step settings): each field a setting, validated where the file names it, and
    no other key (a typo is refused naming the closest)."""

    model_config = ConfigDict(extra="forbid")

    #: how the executor's calls are made where an experiment says nothing (read from a family's
    #: ``step_settings`` model: its steps are what the executor writes); none by default
    executor_defaults: ClassVar[ExecutorDefaults] = ExecutorDefaults()

    def identity(self) -> dict[str, Any]:
        """What of these settings a run's identity keeps (default: nothing): a family's dataset
        settings may name what makes two runs' tasks differ."""
        return {}

    @classmethod
    def said(cls, key: str) -> Callable[[Any], str] | None:
        """How a part ``identity`` adds to a run's identity reads in a message (``key``'s value
        -> words), when a run folder's run differs in it (None: it adds no such part)."""
        return None

    @classmethod
    def read_back(cls, key: str, value: Any) -> Any:
        """A part ``identity`` adds, as a run folder's stored identity holds it, in the shape
        ``identity`` gives it now, which a resume compares (default: as stored). A part stored
        before one of its fields existed reads with that field's default, so those run folders
        still resume."""
        return value


class Acceptable(Settings):
    """L1's answer requirements every family has: whether the agent may decline (R3's gate
    ``abstention_allowed`` reads it). A family's L1 model (``TaskFamily.requirements``) adds its
    own; the gates take their conditions from it by name."""

    abstention_allowed: bool = Field(True, description="the agent may decline to answer")


class NoSettings(Settings):
    """A family that declares no settings of this kind."""


class TaskFamily:
    """A kind of task. Subclass it, set ``name`` (and ``version``, ``formats``, its settings
    models, ``metrics``), implement ``read`` and ``score``, and register it with
    ``@vreact.families``."""

    #: its registered name (``dataset: {family: NAME}``, ``--family NAME``)
    name: ClassVar[str] = ""
    #: recorded with every run it makes
    version: ClassVar[str] = "1"
    #: the record formats its readers take (``--format``), the default first
    formats: ClassVar[tuple[str, ...]] = ()
    #: its L1 answer requirements (a spec's ``requirements.answer``): ``Acceptable`` and its own
    #: (a ``Settings`` with ``abstention_allowed``)
    requirements: ClassVar[type[Settings]] = Acceptable
    #: its dataset settings beyond the core's (family, format, path, task_ids, limit): flat keys of
    #: an experiment's ``dataset``, used with another family each refused naming its line
    dataset_settings: ClassVar[type[Settings]] = NoSettings
    #: its step settings beyond the core's: flat keys of a configuration (a key of its ``guard``
    #: group too), which its kits receive typed (``kit``'s ``settings``)
    step_settings: ClassVar[type[Settings]] = NoSettings
    #: the L1 spec and verifier set its runs and probes take when none is named (shipped names;
    #: None: a run of its records names its own, ``spec:`` and ``verifiers:``)
    default_spec: ClassVar[str | None] = None
    default_verifiers: ClassVar[str | None] = None

    #: the fields that mark a record of each of its formats, by format: a record holding all of
    #: a format's fields looks like one (``looks_like``), so a file refused by another family or
    #: format is named as this one's, with the flag to give; a format left out is not recognised
    shapes: ClassVar[Mapping[str, frozenset[str]]] = MappingProxyType({})
    #: the names ``read`` takes in place of a file (qa: ``sample``; code: its shipped sets)
    shipped: ClassVar[tuple[str, ...]] = ()
    #: the rejections, ``check:cause``, that say a candidate disagrees with what the task itself
    #: states (code: a stated example it fails): such a candidate is still compared in
    #: agreement, and its group is disputed; any other rejection leaves it out
    stated_checks: ClassVar[frozenset[str]] = frozenset()

    def spec_for(self, format: str) -> str | None:
        """The L1 spec its runs and probes of records in ``format`` take when none is named."""
        return self.default_spec

    #: the names of the metrics ``score`` gives, in the order a report shows them
    metrics: ClassVar[tuple[str, ...]] = ()
    #: whether its step kit offers its actions as a provider's native tools (``StepKit.native_tools``),
    #: so its executor's model may take ``actions: native``
    native_actions: ClassVar[bool] = False
    #: whether its tries run model-written code: then a run needs a sandbox (``vreact.sandbox``)
    #: unless the experiment says ``sandbox: none``, and its runs record which one they used;
    #: ``shared`` and ``rescore_tasks`` take ``sandbox=``, the kind its programs run in
    runs_code: ClassVar[bool] = False
    #: how the built-in judge prompt words what each kind of judge checks (L1, L2, L3,
    #: integration) for its artifacts (None: the generic wording, ``vreact.verify.gates.WHAT``)
    judged: ClassVar[Mapping[str, str] | None] = None
    #: how ``vreact diagnose``'s audit names its task (``task``), what an answer cites
    #: (``cited``) and the task's label (``label``) (None: the wording for any task)
    audited: ClassVar[Mapping[str, str] | None] = None
    #: what the report calls its tasks in a sentence (qa: question, code: problem)
    noun: ClassVar[str] = "task"
    #: the report's tables it has beyond every family's, by name (``vreact.report.tables``):
    #: ``metrics``, its metrics' means a row each; ``support``, support F1, answerability,
    #: MuSiQue-Full pairs and the retrieval ceiling; ``hops``, accounting and quality by hop
    #: count; ``official``, HotpotQA's and 2Wiki's official metrics
    report_tables: ClassVar[tuple[str, ...]] = ("metrics",)

    def states(self, task: Any) -> str | None:
        """What a recorded task (a ``vreact.records.TaskRecord``) states of its own checks, for
        the report's splits (code: its prompt's examples, ``doctest``, ``prose`` or ``none``).
        None: the family does not split its tasks so (the default)."""
        return None

    def answer_right(self, task: Any, answer: str) -> bool | None:
        """Whether ``answer``, one no scorer scored when its attempt ended (a judged try's, where
        the family scores no tries), is right by the recorded task (a
        ``vreact.records.TaskRecord``): for the report and ``vreact replay``. None: the family
        cannot say without its scorer (the default)."""
        return None

    def read(self, path: str, format: str, limit: int | None = None) -> list[Any]:
        """The tasks of the file ``path`` (a family may take names such as ``sample``), in
        ``format`` (the first ``limit`` only, when given); a bad record raises a ``ValueError``
        that names its file, line and field."""
        raise NotImplementedError

    def read_dataset(self, selection: Any, limit: int | None = None) -> list[Any]:
        """A dataset selection's file read in its format (the first ``limit`` tasks, when given);
        a family whose dataset settings shape reading (qa's field map) applies them."""
        return list(self.read(selection.path, selection.record_format, limit))

    def check_selection(self, selection: Any) -> None:
        """Refuse, with a ``DatasetError`` of one line, a dataset selection whose settings
        contradict each other for this family, before anything is read (default: none does)."""

    def tasks(self, selection: Any) -> list[Any]:
        """An experiment's tasks from its ``dataset`` selection: the file read in its format,
        then ``task_ids`` and ``limit`` (a family with settings of its own applies them too)."""
        d = selection
        return select(read_selection(self, d), d.task_ids, d.limit, d.path)

    def shared(self, selection: Any) -> Shared | None:
        """What the selection opens once for the whole run (None: nothing). A family that runs
        code (``runs_code``) also takes ``sandbox=``, the kind the experiment names (``bwrap``,
        ``none``): what it opens is where the run's programs run."""
        return None

    #: the libraries beyond the core's (``vreact.records.provenance.LIBRARIES``) whose versions
    #: can change its results: recorded with every run it makes
    libraries: ClassVar[tuple[str, ...]] = ()

    def data_files(self, selection: Any) -> list[Path]:
        """The files an experiment's ``dataset`` selection reads, whose sha256 every run records:
        its ``path`` when that is a file (a family that ships sets under names says which files a
        name stands for)."""
        file = Path(selection.path)
        return [file] if file.is_file() else []

    def score(self, task: Any, answer: str | None, evidence: list[str]) -> Score | None:
        """An attempt's answer (None: it gave none) and the evidence it cited, scored. A family
        that names its scorers (``scorers``) also takes ``scorer=``, one of the names. None: the
        task has nothing to score by (code: no hidden test), so its attempts run unscored: no
        score is written, and the report leaves them out of every figure that needs gold."""
        raise NotImplementedError

    #: the scorers it names (``scorers``' names), each one ``vreact rescore`` may add to a run's
    #: records; empty: it has one, its own
    scorer_names: ClassVar[tuple[str, ...]] = ()

    def rescore_tasks(self, scorer: str, records: Iterable[Any]) -> dict[str, Any]:
        """The tasks of a recorded run (``TaskRecord``s) as ``scorer`` reads them, by id, for
        ``vreact rescore`` (code: each problem with its HumanEval+ inputs; a family that runs code
        also takes ``sandbox=``, the kind they run in); a ``ValueError`` names the tasks it has
        nothing to score by."""
        raise ValueError(f"the {self.name} family's runs cannot be scored again")

    def scorer_files(self, scorer: str) -> list[Path]:
        """The files ``scorer`` reads (their sha256 recorded with a rescore)."""
        return []

    def scorers(self, selection: Any) -> tuple[str, ...]:
        """The scorers a run of the dataset ``selection`` records, by name, its primary first
        (which decides what is correct); each attempt and judged try is scored by every one.
        The default: the family's own, its only one (``score`` takes no ``scorer=``)."""
        return (self.name,)

    def score_try(self, task: Any, artifact: Any, answer: str | None = None) -> bool | None:
        """Whether one judged try is right by the task's gold: ``artifact`` is what a verdict's
        hash is of (the artifact's identity, as recorded); ``answer``, the attempt's (None: it
        gave none), where a try is a part of it (code: a helper function). Called once per
        distinct artifact when the attempt ends; None: the family cannot say (the default)."""
        return None

    def row(self, task: Any) -> dict[str, Any]:
        """The task's row in the records' ``tasks`` table: its id, the text the roles read (the
        ``question`` column, whatever the family), its family and its record as JSON (a pydantic
        model's dump; a family may add columns of its own)."""
        record = task.model_dump(mode="json") if hasattr(task, "model_dump") else dict(vars(task))
        return {
            "id": task.id,
            "question": task.text,
            "family": self.name,
            "record": json.dumps(record, sort_keys=True),
        }

    def audit(self, tasks: list[Any]) -> list[Finding]:
        """The dataset audit, run now: what the family's gates read from each task that the
        task's own gold contradicts (code: a stated example its reference solution fails). Gold
        is read here to say something about the dataset, never to change what a gate runs."""
        raise NotImplementedError(f"the {self.name} family has no dataset audit")

    def with_stated_examples(self, verifier: str, data: dict[str, Any], question: str) -> dict[str, Any]:
        """A recorded gate input of ``verifier`` with the examples its task's text (``question``)
        states, for ``vreact replay --examples stated`` (code: an entry point's program); an
        input it does not concern comes back as it is."""
        raise NotImplementedError(f"the {self.name} family's tasks state no examples to run")

    def reading(self, records: list[Mapping[str, Any]]) -> Reading | None:
        """What its gates read from the tasks whose stored records these are (the ``record``
        column of ``row``, as JSON), with the audit's findings on them; None: nothing to say (the
        default)."""
        return None

    def record(self) -> dict[str, str]:
        """What a run records of the family that made it."""
        return {"family": self.name, "family_version": self.version}

    # --- what an attempt asks of it -------------------------------------------------------

    def l1(self, task: Any, spec: Any) -> dict[str, Any]:
        """L1 as the roles and judges read it: the task's text and the spec's requirements (qa
        calls the text the question, code adds the entry point)."""
        return {"text": task.text, "task": spec.requirements.task}

    def designer(self, l1: dict[str, Any], checks: tuple[str, ...]) -> Any:
        """The L3 designer, from L1 as the designer reads it and R1's checks: its
        ``single_task(text)`` is the task as one subtask (a ``vreact.qa.roles.designer.Subtask``), its
        ``design(plan, n)`` the subtasks of the ``n``-th plan."""
        raise NotImplementedError

    def kit(self, ctx: Any, subtask: Any, retry: bool, settings: Any) -> StepKit:
        """A new try's step kit, for ``subtask`` of the attempt ``ctx`` (``retry``: not the
        unit's first try), under the configuration's step settings as the family declares them
        (``settings``: a ``step_settings`` instance). A family's ``kit(ctx, subtask, retry)``
        without ``settings`` still works, with one ``DeprecationWarning``."""
        raise NotImplementedError

    def unit(self, data: dict[str, Any]) -> Artifact:
        """An accepted unit's artifact, read back from its gate input."""
        raise NotImplementedError

    def final(self, task: Any, accepted: list[Any]) -> Artifact:
        """The final answer from the accepted units, in plan order: the last one's by default."""
        return accepted[-1]

    def planner(self, settings: Any = None) -> Any:
        """L2's kit (a ``PlanKit``), under the configuration's step settings: the planner's
        schema, the tools it is told the executor has, its messages, its reply as the plan
        artifact the plan gates check, and that artifact as the plan the designer designs from.
        A family without one runs no planner."""
        raise NotImplementedError(f"the {self.name} family has no planner")

    def chain(self, task: Any, done: list[Any], subtasks: list[Any], units: dict[str, Any]) -> Any:
        """The chain R2 checks (with a planner): each accepted subtask's link, from its unit."""
        raise NotImplementedError(f"the {self.name} family assembles no chain: it runs without a planner")

    def substitute(self, objective: str, plan_ids: list[str], answers: dict[str, str]) -> str:
        """A planned subtask's objective with the accepted answers of the subtasks it names."""
        return objective

    def declined(self, task: Any, artifact: Any) -> Artifact:
        """A unit's abstain as the attempt's (R3 checks that declining is allowed)."""
        return artifact

    def behaviours(
        self,
        task: Any,
        candidates: Mapping[int, Artifact],
        inputs: Sequence[Any] = (),
        made: int = 0,
        seed: int = 0,
    ) -> Behaviours:
        """What ``candidates`` (index -> a try's final) did, compared (agreement at R3): ``inputs``
        are a tester's (argument tuples, for a family whose answers are functions), ``made`` how
        many inputs to make up, ``seed`` theirs. A family that cannot compare its candidates has
        none (the default): a configuration that asks it for agreement is refused."""
        raise NotImplementedError(f"the {self.name} family cannot compare candidates")

    def tester(self, task: Any) -> Tester | None:
        """The tester of ``task`` (agreement's inputs from L1), or None: a family whose answers
        take no inputs (question answering) has none, and its configurations ask for none."""
        return None

    # --- what a probe asks of it ----------------------------------------------------------

    def fault_classes(self) -> tuple[FaultClass, ...]:
        """Its probe classes, in the order they are built and listed: at least a ``gold`` one (a
        family without them cannot be probed)."""
        return ()

    def probe(self, task: Any, classes: tuple[FaultClass, ...], spec: Any) -> Probed:
        """Each of ``classes``' artifacts for ``task``, built without a model, under ``spec``."""
        raise NotImplementedError(f"the {self.name} family has no probe classes")


#: each family class -> whether its ``kit`` takes the step settings (looked at once)
_KIT_TAKES_SETTINGS: dict[type, bool] = {}


def open_kit(family: TaskFamily, ctx: Any, subtask: Any, retry: bool) -> StepKit:
    """A new try's step kit from ``family``, handed the attempt's step settings (``ctx.steps``);
    a family whose ``kit`` takes no ``settings`` (the door before families declared them) is
    called without, and warned once."""
    cls = type(family)
    takes = _KIT_TAKES_SETTINGS.get(cls)
    if takes is None:
        takes = _KIT_TAKES_SETTINGS[cls] = "settings" in inspect.signature(cls.kit).parameters
        if not takes:
            warnings.warn(
                f"family {family.name!r}: kit(ctx, subtask, retry) is deprecated; take the step"
                " settings too, kit(ctx, subtask, retry, settings) (docs/families.md, Migrating a"
                " family)",
                DeprecationWarning,
                stacklevel=2,
            )
    return family.kit(ctx, subtask, retry, ctx.steps) if takes else family.kit(ctx, subtask, retry)  # type: ignore[call-arg]


def provides(family: TaskFamily, hook: str) -> bool:
    """Whether ``family`` gives an optional hook of its own (``reading``, ``audit``,
    ``with_stated_examples``) rather than ``TaskFamily``'s default."""
    return getattr(type(family), hook) is not getattr(TaskFamily, hook)


def reading_of(family: TaskFamily, tasks: list[Any]) -> Reading | None:
    """``family.reading`` of tasks not yet recorded (their records as ``row`` stores them)."""
    if not provides(family, "reading"):  # says nothing: no record is made for it
        return None
    return family.reading([json.loads(family.row(t).get("record") or "{}") for t in tasks])


def recorded_reading(name: str | None, records: Iterable[Mapping[str, Any] | None]) -> Reading | None:
    """``reading`` of recorded tasks by the family that made them (None: it says nothing, or it
    is a plugin's that is not loaded here)."""
    try:
        family = family_of(name or DEFAULT)
    except UnknownFamily:
        return None
    return family.reading([r or {} for r in records]) if provides(family, "reading") else None


FAMILIES: Registry[TaskFamily] = Registry("task family", UnknownFamily)


def family(cls: type[TaskFamily]) -> type[TaskFamily]:
    """Register a :class:`TaskFamily` subclass under its ``name`` (a class decorator); the
    last registration of a name wins, so a plugin may replace a built-in family."""
    if not (isinstance(cls, type) and issubclass(cls, TaskFamily)) or not cls.name:
        raise TypeError("@vreact.families decorates a TaskFamily subclass with a name")
    if not cls.formats:
        raise TypeError(f"family {cls.name!r} names no record format (formats = ('...',))")
    for kind in ("requirements", "dataset_settings", "step_settings"):
        model = getattr(cls, kind)
        if not (isinstance(model, type) and issubclass(model, Settings)):
            raise TypeError(
                f"family {cls.name!r}: {kind} is a model class (a subclass of vreact.families.Settings),"
                f" not {model!r} (docs/families.md, Migrating a family)"
            )
    if not isinstance(cls.step_settings.executor_defaults, ExecutorDefaults):
        raise TypeError(
            f"family {cls.name!r}: its step settings' executor_defaults is a"
            f" vreact.families.ExecutorDefaults, not {cls.step_settings.executor_defaults!r}"
        )
    if "abstention_allowed" not in cls.requirements.model_fields:
        raise TypeError(
            f"family {cls.name!r}: its requirements have no abstention_allowed (every family's: subclass"
            " vreact.families.Acceptable, or declare it)"
        )
    if "settings" in vars(cls):
        raise TypeError(
            f"family {cls.name!r}: settings (a tuple of names) is now dataset_settings, a model class"
            " (docs/families.md, Migrating a family)"
        )
    return FAMILIES.register(cls.name, lambda _, c: c())(cls)


def built_in() -> dict[str, str]:
    """The installed families, by name -> the module that registers each (the entry points of
    ``FAMILY_GROUP``: vreact's own, and any an installed package declares)."""
    return installed(FAMILY_GROUP)


def family_of(name: str) -> TaskFamily:
    """The family registered as ``name`` (what is installed is loaded on the first name not
    registered yet); ``UnknownFamily`` names the closest."""
    return FAMILIES[name]


def family_names() -> list[str]:
    """Every family's name: the installed ones and those registered so far."""
    return FAMILIES.names()


def settings_of_families(step: bool = False) -> dict[str, set[str]]:
    """Each dataset setting (``step``: step setting) a family declares -> the families that
    declare it (the built-in ones are loaded)."""
    out: dict[str, set[str]] = {}
    for f in map(family_of, family_names()):
        for s in (f.step_settings if step else f.dataset_settings).model_fields:
            out.setdefault(s, set()).add(f.name)
    return out


def score_outcome(
    family: Any, scorer: str, task: Any, outcome: Any, judged: dict[str, Any] | None = None
) -> Score | None:
    """One scorer's score of an attempt's answer (``outcome.kind``, ``answer``, ``evidence``)
    and of its judged tries; ``scorer=`` is given to a family that names its scorers. None: the
    task has nothing the scorer needs (the attempt runs unscored)."""
    named = {} if scorer == family.name else {"scorer": scorer}
    answer = outcome.answer if outcome.kind == "answer" else None
    score = family.score(task, answer, list(outcome.evidence) if answer is not None else [], **named)
    if score is None:
        return None
    tries = {h: family.score_try(task, a, answer, **named) for h, a in (judged or {}).items()}
    right = {h: r for h, r in tries.items() if r is not None}
    return replace(score, tries=right, scorer=scorer if named else "")
