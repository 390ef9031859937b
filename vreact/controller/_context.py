"""The attempt context: what one attempt's state machine works with (its task, models by
role, budgets, the context assembler) and the one recorder of its calls, verdicts and steps."""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from typing import Any

from vreact.budget import Budgets, BudgetStop
from vreact.config import Configuration
from vreact.families import DEFAULT as DEFAULT_FAMILY
from vreact.families import TaskFamily, family_of
from vreact.memory import ContextAssembler, Scope
from vreact.model import (
    MAX_REPLY_CHARS,
    Completion,
    Cutoff,
    Interrupted,
    Message,
    Model,
    ModelError,
    OutOfTime,
    ReasoningRunaway,
    ToolSpec,
    acts_natively,
    called_at,
)
from vreact.records import Store
from vreact.records.store import RowId
from vreact.spec import steps_of
from vreact.verdict import Unit, UnitKind, Verdict, artifact_hash


@dataclass
class Recorder:
    """Writes one attempt's records: every model call (failed ones too), every verdict (the
    only writer of memory) and every executor step (for people and tools, never a role).

    The store holds them back and writes them together, at the latest when memory is read with
    a verdict held back (the assembler reads the failure index before each prompt) or when the
    attempt ends; each verdict with its memory row."""

    store: Store
    attempt_id: int
    last_call: RowId | None = None  # the id of the last model call recorded (once written)
    last_reject: dict[str, Verdict] = field(default_factory=dict)  # by component
    judged: dict[str, Any] = field(default_factory=dict)  # every artifact judged, by its hash

    def call(
        self,
        role: str,
        model: Model,
        messages: list[Message],
        c: Completion,
        verifier: str | None = None,
        caused_by: str | None = None,
    ) -> None:
        """A call that answered: what it cost, its transcript, and who it is charged to (a judge's
        ``verifier``; the check whose rejection ``caused_by`` the try it was made in)."""
        self.last_call = self.store.defer_call(
            self.attempt_id,
            role,
            model.name,
            c.prompt_tokens,
            c.completion_tokens,
            c.latency_ms,
            retries=c.retries,
            cached=c.cached,
            cost_usd=c.cost_usd,
            endpoint=called_at(model),
            messages=messages,
            response=c.text,
            cached_tokens=c.cached_tokens,
            cut=c.cut,
            verifier=verifier,
            caused_by=caused_by,
            stop_reason=c.stop_reason,
        )

    def failed_call(
        self,
        role: str,
        model: Model,
        messages: list[Message],
        e: ModelError,
        verifier: str | None = None,
        caused_by: str | None = None,
    ) -> None:
        """A call that failed: no tokens, and no money where the model has a price (a report
        then counts it as priced, not as a call whose cost is unknown)."""
        priced = getattr(model, "price", None) is not None
        self.store.defer_call(
            self.attempt_id,
            role,
            model.name,
            0,
            0,
            0.0,
            "error",
            str(e),
            retries=e.retries,
            cost_usd=0.0 if priced else None,
            endpoint=called_at(model),
            messages=messages,
            verifier=verifier,
            caused_by=caused_by,
        )

    def verdict(self, verdict: Verdict, artifact: Any = None, given: Any = None) -> None:
        self.verdicts([verdict], artifact, given)

    def verdicts(self, verdicts: list[Verdict], artifact: Any = None, given: Any = None) -> None:
        """Verdicts on one artifact, in order, written in one transaction (with the next
        record: the store holds them back until then, or until memory is read); ``given`` is
        the gate input they were reached on (kept for ``vreact replay``)."""
        if not verdicts:
            return
        self.store.defer_verdicts(self.attempt_id, verdicts, artifact, given)
        for verdict in verdicts:
            self.judged.setdefault(verdict.artifact_hash, artifact)
            if not verdict.accepted:
                self.last_reject[verdict.component] = verdict

    def budget_stop(self, component: str, cause: str, detail: str, left: int) -> None:
        """A spent budget's reject verdict (verifier and source ``budget``, the budget's name as its
        check), routed like an R1 reject."""
        verdict = Verdict(
            "budget", component, "budget", cause, "reject", cause, detail, left, artifact_hash(detail)
        )
        self.verdict(verdict, detail)

    def unit(self, kind: UnitKind, verifier: str, component: str, artifact: Any, slot: str = "") -> None:
        """Accepted work (a plan, a subtask's result, the final answer): its ledger row, whole,
        written after the verdicts that accepted it."""
        unit = Unit(kind, verifier, component, slot, artifact.gate_input(), artifact.identity())
        self.store.defer_unit(self.attempt_id, unit)

    def agreement(self, row: dict[str, Any]) -> None:
        """What the attempt made of its k candidates (the columns of ``agreements``)."""
        self.store.record_agreement(self.attempt_id, row)

    def event(self, component: str, try_: int, index: int, guard: str, kind: str, detail: str) -> None:
        """A hint or rollback of a pipeline member (never memory, never a rejection)."""
        self.store.record_event(self.attempt_id, component, try_, index, guard, kind, detail)

    def step(
        self, component: str, try_: int, index: int, observation: str, source: str = "executor", **fields: Any
    ) -> None:
        """One executor step of a try, tied to the call that proposed it (a designer's search:
        to none)."""
        call = None if source == "designer" else self.last_call
        self.store.record_step(
            self.attempt_id,
            component,
            try_,
            index,
            call_id=call,
            observation=observation,
            source=source,
            **fields,
        )


@dataclass
class AttemptContext:
    """One attempt of one configuration on one task."""

    config: Configuration
    task: Any  # a task of its family: an id and the text the roles read
    models: dict[str, Model]  # by role, with "default" for the others
    assembler: ContextAssembler
    recorder: Recorder
    seed: int = 0
    #: set when the run is asked to stop (Ctrl-C): no call starts, and one in flight ends at once
    stop: threading.Event | None = None
    #: the task's family (vreact.families): the designer, the step kit, the assembly of the answer
    family: TaskFamily = field(default_factory=lambda: family_of(DEFAULT_FAMILY))
    budgets: Budgets = field(init=False)
    cutoff: Cutoff | None = field(init=False)
    #: the configuration's step settings as its family reads them (``TaskFamily.step_settings``)
    steps: Any = field(init=False)
    #: the check whose rejection caused the work now under way (a try, a plan, a re-descent), as
    #: VERIFIER:SOURCE:CHECK: every call made for it is charged to it (None: nothing caused it)
    caused_by: str | None = field(default=None, init=False)
    #: artifacts that behave otherwise than the one now judged: agreement's other behaviour
    #: groups, one candidate each (disputed ones left out), while R3 checks the chosen one; a
    #: judge's claim check may run them to corroborate the value it expects (empty otherwise)
    witnesses: tuple[Any, ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        self.budgets = Budgets(self.config.budgets)
        self.steps = steps_of(self.family, self.config)
        deadline = self.budgets.deadline
        self.cutoff = Cutoff(deadline, self.stop) if deadline is not None or self.stop is not None else None

    @property
    def attempt_id(self) -> int:
        return self.recorder.attempt_id

    def scope(self, components: tuple[str, ...], sources: dict[str, Any]) -> Scope:
        return Scope(self.attempt_id, components, sources)

    def acts_natively(self, role: str = "executor") -> bool:
        """Whether ``role``'s model takes its actions as native tool calls (``actions: native``)."""
        return acts_natively(self.models.get(role) or self.models["default"])

    def call(
        self,
        role: str,
        messages: list[Message],
        schema: dict[str, Any] | None,
        temperature: float | None = None,
        verifier: str | None = None,
        tools: list[ToolSpec] | None = None,
    ) -> Completion:
        """The only way a model is invoked, and its guard: no call starts once the attempt's
        tokens or wall clock are spent (``BudgetStop``), a call's completion tokens are capped
        by the tokens left, and it is cut at the wall clock's deadline (a ``BudgetStop`` too,
        never a time-out); once the run is asked to stop, none starts and one in flight ends
        (``Interrupted``). Every call is recorded, failed ones too. ``temperature`` overrides
        the role's (a re-sampled try's, ``retry_temperature``); a judge's call names its
        ``verifier``; ``tools``, the executor's actions offered natively (``actions: native``).
        An in-process llama.cpp call cannot be interrupted mid-generation: the
        attempt stops waiting for it, and its completion cap bounds it."""
        if self.stop is not None and self.stop.is_set():
            raise Interrupted
        model = self.models.get(role) or self.models["default"]
        settings = self.config.settings_for(role, self.seed)
        max_tokens = self.budgets.allowance(settings.max_tokens)
        if temperature is not None or max_tokens != settings.max_tokens:
            temperature = settings.temperature if temperature is None else temperature
            settings = dataclasses.replace(settings, temperature=temperature, max_tokens=max_tokens)
        more: dict[str, Any] = {"tools": tools} if tools else {}  # only to a model that reads actions
        try:
            if self.cutoff is not None and getattr(
                model, "takes_cutoff", False
            ):  # the retry layer's, the mock's
                more["cutoff"] = self.cutoff
            c = model.generate(messages, schema, settings, **more)  # type: ignore[call-arg]
            c = c.within(MAX_REPLY_CHARS)
        except OutOfTime as e:
            self.recorder.failed_call(role, model, messages, e, verifier, self.caused_by)
            raise BudgetStop("wall_clock", self.budgets.wall_clock_detail()) from None
        except ReasoningRunaway as e:
            self.recorder.failed_call(role, model, messages, e, verifier, self.caused_by)
            if role == "executor":
                raise  # the try's guard stop
            return Completion("")  # the planner's or a judge's unparseable output: it fails closed
        except ModelError as e:
            self.recorder.failed_call(role, model, messages, e, verifier, self.caused_by)
            raise
        self.recorder.call(role, model, messages, c, verifier, self.caused_by)
        self.budgets.tokens.spend(c.prompt_tokens + c.completion_tokens)
        return c
