"""A verifier at work: its gates in order, then its judge on what they all cleared. Fail
closed: a gate that raises rejects with cause ``verifier_error``; anything but a confident
accept from the judge rejects."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

from vreact.budget import Budgets
from vreact.config import Configuration
from vreact.families import TaskFamily
from vreact.marking import told
from vreact.memory import ContextAssembler
from vreact.model import Completion, Message
from vreact.spec import JudgeSpec, TaskSpec, VerifierSet
from vreact.v import CONFIGURED, Source, V, judge_name
from vreact.verdict import Verdict, artifact_hash
from vreact.verify import judges
from vreact.verify.gates import Gate, GateResult, build_gate, prompt_of, reject
from vreact.verify.gates._prompts import ClaimCheck, claims_of


class Recording(Protocol):
    """Where an attempt's verdicts are written (the controller's recorder)."""

    def verdict(self, verdict: Verdict, artifact: Any = None, given: Any = None) -> None: ...

    def verdicts(self, verdicts: list[Verdict], artifact: Any = None, given: Any = None) -> None: ...


class AttemptContext(Protocol):
    """What a verifier uses of the attempt it checks (``vreact.controller``'s context): its
    budgets, recorder, assembler and family, a scope of the records, the judge's call, and the
    artifacts a judge's claim check may run beside the one judged (``witnesses``)."""

    @property
    def budgets(self) -> Budgets: ...

    @property
    def recorder(self) -> Recording: ...

    @property
    def assembler(self) -> ContextAssembler: ...

    @property
    def family(self) -> TaskFamily: ...

    @property
    def witnesses(self) -> tuple[Any, ...]: ...

    def scope(self, components: tuple[str, ...], sources: dict[str, Any]) -> Any: ...

    def call(
        self,
        role: str,
        messages: list[Message],
        schema: dict[str, Any],
        temperature: float | None = None,
        verifier: str | None = None,
    ) -> Completion: ...


@dataclass
class Rejection:
    """A verifier's first rejection, not yet recorded: the caller spends the budget first, so
    the verdict carries what is left."""

    verifier: str
    source: Source
    check_name: str
    result: GateResult
    args: dict[str, Any]
    artifact: Any  # its identity: what the verdict's hash is of
    seconds: float | None = None  # how long the check took
    given: Any = None  # the gate input it was reached on

    def verdict(self, component: str, budget_left: int) -> Verdict:
        return Verdict(
            self.verifier,
            component,
            self.source,
            self.check_name,
            "reject",
            self.result.cause,
            self.result.detail,
            budget_left,
            artifact_hash(self.artifact),
            self.args,
            self.seconds,
        )


#: Gates built once per spec and verifier set (by identity), not per attempt: a gate's check
#: keeps no state between calls, so every attempt of a run shares them. A spec or verifier set
#: is not edited in place once loaded (a changed one is a new object, and builds anew).
_BUILT: dict[tuple[int, int], tuple[TaskSpec, VerifierSet, dict[str, tuple[Gate, ...]]]] = {}
_BUILT_MAX = 32


def built_gates(spec: TaskSpec, verifiers: VerifierSet) -> dict[str, tuple[Gate, ...]]:
    """Each configured verifier's gates, built from ``verifiers`` with the L1 answer
    requirements of ``spec`` as defaults (made on first use, then shared)."""
    key = (id(spec), id(verifiers))
    hit = _BUILT.get(key)
    if hit is not None and hit[0] is spec and hit[1] is verifiers:
        return hit[2]
    defaults = spec.requirements.answer.model_dump()
    gates: dict[str, tuple[Gate, ...]] = {
        k: tuple(build_gate(g.name, g.args, defaults) for g in getattr(verifiers, k).gates)
        for k in CONFIGURED
    }
    if len(_BUILT) >= _BUILT_MAX:
        _BUILT.clear()
    _BUILT[key] = (spec, verifiers, gates)  # the objects are kept, so their ids stay theirs
    return gates


class Verifiers:
    """The configured verifiers (plan, R1, R2, R3) of one configuration: gates when gates are
    on, judges when judges are on."""

    def __init__(self, config: Configuration, spec: TaskSpec, verifiers: VerifierSet) -> None:
        specs = {k: getattr(verifiers, k) for k in CONFIGURED}
        built = built_gates(spec, verifiers) if config.gates else {}
        self.gates: dict[str, list[Gate]] = {k: list(built.get(k, ())) for k in specs}
        self.judges: dict[str, JudgeSpec | None] = {
            k: v.judge if config.judges else None for k, v in specs.items()
        }
        self.marked = config.observation_marking  # judges read cited text marked as data

    def answer_checks(self) -> tuple[str, ...]:
        """R1's gates on an answer, as the executor is told them (the parse gate is a step's)."""
        return tuple(g.name for g in self.gates["R1"] if "answer" in g.kinds and g.name != "parses")

    def check(
        self, ctx: AttemptContext, verifier: str, component: str, artifact: Any, paired: Any
    ) -> Rejection | None:
        """Run ``verifier`` on ``artifact``: its gates in order, then its judge on what they all
        cleared; each accept is recorded (with the check's time), the first rejection returned."""
        ident, given = artifact.identity(), artifact.gate_input()
        h = artifact_hash(ident)
        left = ctx.budgets.of(verifier, component).left
        accepts: list[Verdict] = []  # recorded together (one transaction), before what follows
        for g in self.gates[verifier]:
            if not g.applies_to(artifact):
                continue
            result, seconds = run_gate(g, artifact)
            if not result.ok:
                ctx.recorder.verdicts(accepts, ident, given)
                return Rejection(verifier, "gate", g.name, result, g.args, ident, seconds, given)
            accepts.append(
                Verdict(verifier, component, "gate", g.name, "accept", "", "", left, h, g.args, seconds)
            )
        ctx.recorder.verdicts(accepts, ident, given)
        return self.judge(ctx, verifier, component, artifact, paired)

    def judge(
        self,
        ctx: AttemptContext,
        verifier: str,
        component: str,
        artifact: Any,
        paired: Any,
        ident: Any = None,
    ) -> Rejection | None:
        """``verifier``'s judge on ``artifact`` (None: no judge, or it accepted, which is
        recorded); ``ident`` is what the verdict's hash is of (default: the artifact's identity)."""
        judge = self.judges[verifier]
        if judge is None:
            return None
        ident = artifact.identity() if ident is None else ident
        given = artifact.gate_input()
        kind = V[verifier].judge
        assert kind is not None
        start = time.perf_counter()
        scope = ctx.scope((component,), {"artifact": artifact.shown(self.marked), "paired_level": paired})
        args = judge.model_dump()
        name = judge_name(verifier)
        context = ctx.assembler.build("judge", scope)  # a context-schema breach raises, as it must
        try:
            messages = _messages(prompt_of(judge.prompt, ctx.family.judged)(kind, context))
            messages = told(messages) if self.marked else messages
        except Exception as e:  # fail closed: a judge's prompt that raises rejects, uncalled
            prompt = judge.prompt or "built-in"
            result = reject("verifier_error", f"judge prompt {prompt}: {type(e).__name__}: {e}")
            return Rejection(verifier, "judge", name, result, args, ident, time.perf_counter() - start, given)
        claims = claims_of(judge.prompt)
        schema = judges.CLAIM_SCHEMA if claims is not None else judges.JUDGE_SCHEMA
        completion = ctx.call("judge", messages, schema, verifier=verifier)
        if completion.truncated:  # cut: whatever it parses as, no decision (fail closed)
            why = f"the judge's reply stopped at its token allowance ({completion.stop_reason})"
            result, judgement = reject("truncated", why), None
        else:
            result, judgement = judges.read(completion.text, judge.min_confidence)
        cause = ""  # an accept's: why a rejection was not acted on
        if claims is not None and judgement is not None and result.cause == "judge_reject":
            result, cause = weighed(claims, judge, kind, artifact, paired, judgement, result, ctx.witnesses)
        seconds = time.perf_counter() - start
        if not result.ok:
            return Rejection(verifier, "judge", name, result, args, ident, seconds, given)
        left = ctx.budgets.of(verifier, component).left
        accept = Verdict(
            verifier,
            component,
            "judge",
            name,
            "accept",
            cause,
            result.detail,
            left,
            artifact_hash(ident),
            args,
            seconds,
        )
        ctx.recorder.verdict(accept, ident, given)
        return None


def weighed(
    claims: ClaimCheck,
    judge: JudgeSpec,
    kind: str,
    artifact: Any,
    paired: Any,
    judgement: judges.Judgement,
    rejection: GateResult,
    witnesses: tuple[Any, ...] = (),
) -> tuple[GateResult, str]:
    """A rejecting judge's claim as its prompt's check weighs it: founded, a rejection that says
    what the check found; refuted or unverified, an accept with its cause (``unfounded: ignore``)
    or the judge's rejection with that cause (``keep``). A check that raises, or answers no
    ``Claim``, leaves the rejection standing (fail closed). ``witnesses``: the attempt's other
    behaviour groups' artifacts (``AttemptContext.witnesses``), given to the check."""
    try:
        claim = claims(kind, artifact, paired, judgement, witnesses)
        if not isinstance(claim, judges.Claim):
            raise TypeError(f"the check answered a {type(claim).__name__}, not a Claim")
    except Exception as e:
        why = f"{rejection.detail} (its claim could not be checked: {type(e).__name__}: {e})"
        return reject(rejection.cause, why[:300]), ""
    if claim.status == "founded":
        return reject(claim.cause, claim.detail), ""
    if judge.unfounded == "keep":
        return reject(claim.cause, rejection.detail), ""
    return GateResult(True, "", claim.detail), claim.cause


def run_gate(g: Gate, artifact: Any) -> tuple[GateResult, float]:
    """One gate on one artifact, failing closed (a gate that raises rejects with cause
    ``verifier_error``), and how long it took in seconds."""
    start = time.perf_counter()
    try:
        result = g(artifact)
    except Exception as e:  # fail closed: a verifier that raises rejects
        result = reject("verifier_error", f"{type(e).__name__}: {e}")
    return result, time.perf_counter() - start


def _messages(messages: Any) -> list[Message]:
    """A judge prompt's messages, checked: a non-empty list of ``{role, content}`` strings."""
    ok = (
        isinstance(messages, list)
        and messages
        and all(
            isinstance(m, dict)
            and m.get("role") in ("system", "user", "assistant")
            and isinstance(m.get("content"), str)
            for m in messages
        )
    )
    if not ok:
        raise TypeError("a judge prompt returns a list of {role, content} messages")
    return messages
