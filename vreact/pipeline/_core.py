"""The step pipeline's vocabulary: a turn, the outcomes a member can give, the member base
class and its registry, and the pipeline that runs one phase of its members."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

from vreact.budget import BudgetStop
from vreact.families import FINALS, Step, StepKit
from vreact.model import Message
from vreact.registry import Registry, UnknownName
from vreact.v import Source

Phase = Literal["context", "call", "proposal", "result"]
PHASES: tuple[Phase, ...] = ("context", "call", "proposal", "result")
Kind = Literal["pass", "hint", "rollback", "block", "stop", "veto"]
#: What each phase may decide (pass and hint always): anything else is a member's bug.
ALLOWED: dict[str, frozenset[str]] = {
    "context": frozenset({"stop"}),
    "call": frozenset({"rollback", "stop"}),
    "proposal": frozenset({"rollback", "block", "stop", "veto"}),
    "result": frozenset({"stop", "veto"}),
}


@dataclass(frozen=True)
class StepOutcome:
    """What a member decided about one step.

    - ``pass``: nothing to say;
    - ``hint``: ``note`` is added to the step's observation;
    - ``rollback``: the step is dropped without being spent; ``note`` goes into the re-ask;
    - ``block``: the action does not run; ``note`` is its observation; the step is spent;
    - ``stop``: the try ends with a reject verdict, routed like an R1 reject;
    - ``veto``: a proposed final is not accepted; ``note`` is the next observation.

    A block, stop or veto with a ``cause`` leaves a reject verdict of the member in the records
    (its ``detail`` says why; ``artifact`` is what it is about, the step's call by default). A
    hint or a rollback is an event (``events``): never memory, never a rejection.
    """

    kind: Kind
    note: str = ""
    cause: str = ""
    detail: str = ""
    artifact: str | None = None
    args: dict[str, Any] = field(default_factory=dict)  # recorded with the verdict


PASS = StepOutcome("pass")


def hint(note: str) -> StepOutcome:
    return StepOutcome("hint", note)


def rollback(note: str, cause: str = "", detail: str = "") -> StepOutcome:
    return StepOutcome("rollback", note, cause, detail)


def block(feedback: str, cause: str = "", detail: str = "", **args: Any) -> StepOutcome:
    return StepOutcome("block", feedback, cause, detail, args=args)


def stop(cause: str, detail: str, observation: str = "", artifact: str | None = None) -> StepOutcome:
    return StepOutcome("stop", observation, cause, detail, artifact)


def veto(reason: str, cause: str = "", detail: str = "", **args: Any) -> StepOutcome:
    return StepOutcome("veto", reason, cause, detail, args=args)


@dataclass(frozen=True)
class MemberVerdict:
    """A verdict a member leaves beside its outcome (recorded by the try)."""

    member: Member
    decision: str
    cause: str = ""
    detail: str = ""
    check_name: str = ""  # default: the member's name
    source: str = ""  # default: the member's source
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class Turn:
    """One step of a try as it passes the phases: the messages (``context``), the model's
    reply (``call``), the parsed step (``proposal``; None when the reply is not a step) and the
    tool's observation (``result``; None for a final)."""

    component: str
    objective: str
    index: int
    messages: list[Message]
    history: list[tuple[str, str]]  # the try so far: (reply, observation)
    text: str = ""
    step: Step | None = None
    #: the provider's word for why the reply stopped when it stopped at its token allowance
    #: (``length``, ``max_tokens``; empty: it did not): the reply is cut, so the parse gate stops
    #: the try on it (cause ``truncated``), whatever it parses as
    truncated: str = ""
    observation: str | None = None
    cut: bool = False  # the observation shows something cut when it was read (qa: Paragraph.cut)
    seconds: float | None = None  # how long the action ran (None: no tool ran)
    #: why a reply is not a step, when the kit can say (a native reply: ``StepKit.parse_native``'s
    #: cause and detail); the parse gate's reject names it (else: ``format``)
    problem: tuple[str, str] | None = None
    #: what a context member adds to the executor's context (e.g. the DeReAct State)
    sources: dict[str, Any] = field(default_factory=dict)
    retrieved: frozenset[str] = frozenset()  # what this try has seen (the kit's; qa: paragraph ids)
    #: a role's call for members that ask a model (the critic, the context manager): its
    #: context is assembled under memory/roles.yaml and the call is recorded
    ask: (
        Callable[[str, dict[str, Any], Callable[[dict[str, Any]], list[Message]], dict[str, Any]], str] | None
    ) = None
    #: verdicts a member leaves beside its outcome (a critic's accept, a State gate's reject)
    verdicts: list[MemberVerdict] = field(default_factory=list)
    #: who proposed the step: the executor's model, or the L3 designer (a search it issues)
    source: Literal["executor", "designer"] = "executor"
    #: the try's step kit (its family's): how an older result is blanked, DeReAct's prompts
    kit: StepKit | None = None

    def accept(self, member: Member, **args: Any) -> None:
        """Record that ``member`` accepted this step (e.g. a critic's accept)."""
        self.verdicts.append(MemberVerdict(member, "accept", args=args))

    def reject(self, member: Member, cause: str, detail: str, check_name: str = "", source: str = "") -> None:
        """Record a reject by ``member`` (or one of its gates) that does not decide the step."""
        self.verdicts.append(MemberVerdict(member, "reject", cause, detail, check_name, source))

    @property
    def final(self) -> bool:
        return self.step is not None and self.step.action in FINALS


class Member:
    """A member of the step pipeline: override the phases it cares about. One instance per
    try (so it may keep the try's state); ``verifier`` and ``source`` name its verdicts."""

    name: ClassVar[str] = ""
    verifier: ClassVar[str] = "guard"
    source: ClassVar[Source] = "guard"

    def context(self, turn: Turn) -> StepOutcome:
        """Before the call: may reshape ``turn.messages``."""
        return PASS

    def call(self, turn: Turn) -> StepOutcome:
        """The model's reply, ``turn.text``."""
        return PASS

    def proposal(self, turn: Turn) -> StepOutcome:
        """Before anything runs: ``turn.step`` (None: the reply is not a step)."""
        return PASS

    def result(self, turn: Turn) -> StepOutcome:
        """After the tool ran (``turn.observation``) or a final was proposed."""
        return PASS


M = TypeVar("M", bound=type[Member])


class UnknownMember(UnknownName):
    pass


MEMBERS: Registry[type[Member]] = Registry("pipeline member", UnknownMember)


def member(name: str) -> Callable[[M], M]:
    """Register a member class by name, so configurations can name it (``pipeline:``)."""

    def make(member_name: str, cls: M) -> M:
        cls.name = member_name
        return cls

    return MEMBERS.register(name, make)


def member_names() -> list[str]:
    return MEMBERS.names()


def member_class(name: str) -> type[Member]:
    """A registered member's class; ``UnknownMember`` names the closest."""
    return MEMBERS[name]


def build_member(name: str, args: dict[str, Any] | None = None) -> Member:
    """A new instance of a registered member, suggesting the closest name on a typo."""
    return member_class(name)(**(args or {}))


@dataclass
class PhaseResult:
    """A phase's result: the first outcome other than pass or hint (with its member), and
    the hints given before it."""

    outcome: StepOutcome = PASS
    member: Member | None = None
    hints: list[tuple[Member, str]] = field(default_factory=list)


@dataclass
class Pipeline:
    """The members of one try, in order."""

    members: list[Member]

    def run(self, phase: Phase, turn: Turn) -> PhaseResult:
        """Each member's ``phase`` in order, until one gives more than pass or a hint. A member
        that raises stops the try with cause ``verifier_error`` (fail closed); a model call the
        attempt's budget refused (``BudgetStop``) ends the try as that budget's stop."""
        out = PhaseResult()
        for m in self.members:
            try:
                o = getattr(m, phase)(turn)
            except BudgetStop:
                raise
            except Exception as e:
                o = stop("verifier_error", f"{m.name}.{phase}: {type(e).__name__}: {e}"[:300])
            if (o.kind == "veto" and not turn.final) or o.kind not in ALLOWED[phase] | {"pass", "hint"}:
                o = stop("verifier_error", f"{m.name}.{phase} may not {o.kind} this step")
            if o.kind == "hint":
                out.hints.append((m, o.note))
            elif o.kind != "pass":
                out.outcome, out.member = o, m
                break
        return out
