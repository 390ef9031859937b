"""Every declared setting does something: one scripted scenario per setting, run at its default
and at another value, in the smallest configurations that run the component it declares as its
reader (issue 20, acceptance 1). Each asserts the figure the setting governs (steps, tries,
planner calls, a verdict, an event, a prompt, a call's settings) and the way it moved.

The configurations come from the declarations (``read_by`` and ``COMPONENTS``' ``runs``), not
from a list here, so a wrong declaration runs its scenario where the setting does nothing and
fails; a new setting without a scenario fails ``test_every_declared_setting_has_a_scenario``.
Where a declared reader runs and still cannot spend the setting (``IDLE``), the case is a strict
expected failure that says why: a declaration to fix, kept visible.
The experiment's own settings (models, base_url, limits) run through ``resolve`` and
``run_experiment`` against the loopback fakes."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tests.code.test_agreement import CLOSE_LOOP
from tests.fakes.chaos_server import ChaosServer
from tests.fakes.reasoning_server import ReasoningServer
from tests.fakes.scripted_server import ScriptedServer
from tests.helpers import (
    abstain,
    attempt,
    bridge,
    by_role,
    criticised,
    finish,
    hops_finish,
    judged,
    managed,
    plan,
    read,
    role_of,
    search,
)
from tests.model.test_workers import SlowModel
from tests.test_settings import SWITCHES, bases, declared, merged, nested
from tests.test_settings import reader as field_reader
from vreact import load_experiment
from vreact.config import COMPONENTS, MODEL_ROLES, ROLE_COMPONENT, Configuration
from vreact.experiment import ResolvedExperiment, run_experiment
from vreact.experiment.resolved import resolve
from vreact.families import family_of, settings_of_families
from vreact.model import MockModel
from vreact.model._registry import HTTP_SETTINGS, RETRY_SETTINGS, WATCHDOG_SETTINGS, provider_reads
from vreact.qa.dataset import Task
from vreact.records import AttemptRecord, CallRecord, Store, read_run
from vreact.spec import Experiment, RoleSchema, RunLimits, TaskSpec, VerifierSet

# --- the smallest configurations that run a reader, from the declarations -----------------------


reader = field_reader  # the component a setting declares as its reader


def switched_on(base: dict[str, Any]) -> tuple[str, ...]:
    """What one of the sweep's base configurations switches on, in the switches' order."""
    on = [k for k in SWITCHES if base[k]]
    on += [f"profile={base['profile']}"] if base["profile"] else []
    on += [f"agreement.{k}={v}" for k, v in base.get("agreement", {}).items()]
    return (*on, *(f"guard.{k}" for k in base.get("guard", {})))


@cache
def sweep() -> tuple[tuple[dict[str, Any], Configuration], ...]:
    """Every combination of the switches (test_settings' sweep), with its configuration."""
    return tuple((b, Configuration.model_validate(b)) for b in bases())


@cache
def smallest(component: str) -> tuple[dict[str, Any], ...]:
    """The sweep's base configurations that run ``component`` (by its declared ``runs``) and
    switch on nothing that one of the others also running it leaves off."""
    running = [b for b, config in sweep() if COMPONENTS[component].runs(config)]
    ons = [set(switched_on(b)) for b in running]
    return tuple(b for b, on in zip(running, ons, strict=True) if not any(o < on for o in ons))


def label(base: dict[str, Any]) -> str:
    return "+".join(switched_on(base)) or "N"


# --- scripts ----------------------------------------------------------------------------------

# 2hop__269805_135710: "What is the country where Nissedal is located named after?"
# hop 1 -> Norway (paragraph 10), hop 2 -> north (paragraph 6)
WHOLE = [read("10"), read("6"), finish("north", ["10", "6"])]


def solve_nissedal() -> list[dict[str, Any]]:
    """Search, read both hops' paragraphs, finish citing them (what every verifier accepts)."""
    return [search("Nissedal country"), *WHOLE]


TWO_HOPS = plan(
    ("s1", "Which country is Nissedal in?", [], "place"), ("s2", "What is #1 named after?", ["s1"], "any")
)
#: What each verifier's judge prompt says it checks (vreact/verify/judges.py).
JUDGED = {
    "plan": "a plan (the artifact)",
    "R1": "one subtask's answer",
    "R2": "the chain of subtask answers",
    "R3": "a final answer",
}


def judge(rejects: str = "") -> Callable[[list[dict[str, str]]], dict[str, Any]]:
    """A judge that accepts everything but what verifier ``rejects`` shows it."""
    return lambda m: judged("reject" if rejects and JUDGED[rejects] in m[0]["content"] else "accept")


def model(executor: Any, planner: Any = (), **members: Any) -> MockModel:
    """A mock model per role: the executor's and planner's scripts, and members (judge, critic,
    context manager) that accept everything unless told otherwise; so one script runs in any
    configuration."""
    accept = {
        "judge": judge(),
        "critic": lambda m: criticised(),
        "context_manager": lambda m: managed("success"),
    }
    return by_role(executor=executor, planner=planner, **{**accept, **members})


def searches() -> Iterator[dict[str, Any]]:
    """Distinct searches, without end (no guard fires on them)."""
    return (search(f"query{i}") for i in itertools.count())


def thinking(thoughts: list[str]) -> list[dict[str, Any]]:
    """Searches for distinct words, each with its thought."""
    return [{**search(f"query {i}"), "thought": t} for i, t in enumerate(thoughts)]


def slowly(seconds: float) -> Callable[[list[dict[str, str]]], dict[str, Any]]:
    def step(messages: list[dict[str, str]]) -> dict[str, Any]:
        time.sleep(seconds)
        return search(f"query{len(messages)}")

    return step


# --- what a run recorded ----------------------------------------------------------------------


@dataclass(frozen=True)
class Trial:
    """One run's records (its attempts) and the mock model that answered it."""

    attempts: list[AttemptRecord]
    model: MockModel

    @property
    def a(self) -> AttemptRecord:
        return self.attempts[-1]

    def calls(self, role: str) -> list[Any]:
        return [c for c in self.a.calls if c.role == role]

    def prompt(self, role: str = "executor") -> str:
        """The last prompt ``role`` was shown."""
        return "\n".join(m["content"] for m in self.calls(role)[-1].messages)

    def settings(self, role: str) -> set[tuple[float, int]]:
        """How ``role``'s calls were made (the mock model keeps each call's settings)."""
        pairs = zip(self.model.calls, self.model.settings, strict=True)
        return {(s.temperature, s.max_tokens) for m, s in pairs if role_of(m) == role}

    @property
    def tries(self) -> int:
        return len({(s.component, s.try_) for s in self.a.steps})

    def first_try(self) -> int:
        """The steps of the first try."""
        return sum(s.try_ == 1 for s in self.a.steps)

    def events(self, guard: str, kind: str = "hint") -> list[int]:
        """The steps at which ``guard`` gave a ``kind`` (in the first try)."""
        return [e.step for e in self.a.events if e.guard == guard and e.kind == kind and e.try_ == 1]

    def rejects(self, check: str) -> list[str]:
        return [v.cause or "" for v in self.a.verdicts if v.check_name == check and v.rejected]

    def rejected_by(self, verifier: str) -> int:
        return sum(v.verifier == verifier and v.rejected for v in self.a.verdicts)

    def decisions(self, verifier: str) -> set[tuple[str, str]]:
        return {(v.decision, v.cause or "") for v in self.a.verdicts if v.verifier == verifier}

    def shown(self, n: int) -> tuple[int, ...]:
        """Which of the searches query0..query<n-1> the executor's last prompt shows."""
        return tuple(i for i in range(n) if f'"query{i}"' in self.prompt())


@dataclass(frozen=True)
class Effect:
    """What a setting governs: ``figure`` of a run is ``expect[0]`` with the setting left at its
    default and ``expect[1]`` with it at ``value``; ``extra`` are settings the scenario needs in
    both runs. ``tasks``: how many tasks the runner is given (the runner's settings)."""

    value: Any
    script: Callable[[], MockModel]
    figure: Callable[[Trial], Any]
    expect: tuple[Any, Any]
    extra: dict[str, Any] = field(default_factory=dict)
    tasks: int = 0  # 0: one attempt on Nissedal; n: run_experiment over n tasks
    code: bool = False  # one attempt on HumanEval/0 (the code family: its tester, its inputs)


def code_experiment(config: Configuration, mock: MockModel) -> ResolvedExperiment:
    """One attempt of ``config`` on HumanEval/0 against ``mock``."""
    body = {"kind": "experiment", "name": "code", "configurations": [config.model_dump(exclude_unset=True)]}
    body |= {"dataset": CODE, "models": {"default": "openai/unused"}, "cache": False}
    resolved = resolve(Experiment.model_validate({**body, "base_url": "http://127.0.0.1:9/v1"}))
    resolved.models["default"] = mock
    return resolved


#: HumanEval/0 (has_close_elements), the code family's scenarios' one task.
CODE = {"family": "code", "path": "humaneval", "task_ids": ["HumanEval/0"]}


def writes(*programs: str, inputs: tuple[str, ...] = ("([1.0, 2.0], 0.5)",)) -> MockModel:
    """The code executor: candidate i (its call's seed) writes ``programs[i]`` (the last repeats);
    the tester proposes ``inputs``."""
    m: MockModel

    def reply(messages: list[dict[str, str]]) -> dict[str, Any]:
        if role_of(messages) == "tester":
            return {"inputs": list(inputs)}
        i = m.settings[-1].seed or 0
        return {"thought": "", "action": "finish", "input": programs[min(i, len(programs) - 1)]}

    m = MockModel(reply)
    return m


def code_reply(body: dict[str, Any]) -> str:
    """A served code model: the tester proposes one input; the executor writes a right program."""
    if role_of(body["messages"]) == "tester":
        return json.dumps({"inputs": ["([1.0, 2.0], 0.5)"]})
    return json.dumps({"thought": "", "action": "finish", "input": CLOSE_LOOP})


def on_code(code: bool) -> dict[str, Any]:
    """An experiment body's dataset: HumanEval/0 for a code scenario (else the test's tasks)."""
    return {"dataset": CODE} if code else {}


def answers(*said: str) -> MockModel:
    """The qa executor: candidate i (its call's seed) solves Nissedal answering ``said[i]`` (the
    last repeats)."""
    m: MockModel
    steps: dict[int, Iterator[dict[str, Any]]] = {}

    def reply(messages: list[dict[str, str]]) -> dict[str, Any]:
        i = m.settings[-1].seed or 0
        if i not in steps:
            steps[i] = iter([search("Nissedal country"), read("10"), read("6")])
        return next(steps[i], None) or finish(said[min(i, len(said) - 1)], ["10", "6"])

    m = MockModel(reply)
    return m


def executor_calls(t: Trial) -> tuple[int, str | None]:
    return len(t.calls("executor")), t.a.abstain_cause


def tries(t: Trial) -> tuple[int, str | None]:
    return t.tries, t.a.abstain_level


def own_settings(role: str) -> Effect:
    """``calls.<role>``: that role's calls are made with its own temperature and max_tokens."""
    return Effect(
        {"temperature": 0.1, "max_tokens": 512},
        lambda: model(WHOLE, planner=["no plan"]),
        lambda t: t.settings(role),
        ({(0.2, 256)}, {(0.1, 512)}),
    )


SAME = "look for the country of nissedal"

SCENARIOS: dict[str, Effect] = {
    # the executor's budgets (N): every try is endless searching unless said
    "budgets.step_cap": Effect(
        3, lambda: model(searches()), executor_calls, ((12, "step_cap"), (3, "step_cap"))
    ),
    "budgets.steps": Effect(
        3, lambda: model(searches()), executor_calls, ((12, "step_cap"), (3, "step_budget"))
    ),
    "budgets.wall_clock_s": Effect(
        0.05, lambda: model(slowly(0.02)), lambda t: t.a.abstain_cause, ("step_cap", "wall_clock")
    ),
    "budgets.tokens": Effect(
        400, lambda: model(searches()), lambda t: t.a.abstain_cause, ("step_cap", "token_budget")
    ),
    # R1: a try ends at its step cap (routed like an R1 reject) and the next one starts
    "budgets.r1": Effect(
        1, lambda: model(searches()), tries, ((3, "L3"), (1, "L3")), extra={"budgets": {"step_cap": 2}}
    ),
    # L2: the planner's proposals are not plans; the plan gates or the plan judge reject them
    "budgets.plan": Effect(
        1,
        lambda: model(WHOLE, planner=itertools.repeat("no plan"), judge=judge("plan")),
        lambda t: (len(t.calls("planner")), t.a.plan_fallback),
        ((3, True), (1, True)),
    ),
    # R2: the first subtask answers Tveitsund, which the second's evidence never mentions
    "budgets.r2": Effect(
        0,
        lambda: model(
            itertools.cycle(
                [
                    search("Nissedal"),
                    read("10"),
                    finish("Tveitsund", ["10"]),
                    read("6"),
                    finish("north", ["6"]),
                ]
            ),
            planner=itertools.repeat(TWO_HOPS),
            judge=judge("R2"),
        ),
        lambda t: (t.rejected_by("R2"), len(t.calls("planner")), t.a.abstain_level),
        ((3, 3, "L2"), (1, 1, "L2")),
    ),
    # R3: the answer cites one paragraph (R3's multi_hop wants two) or R3's judge rejects it
    "budgets.r3": Effect(
        0,
        lambda: model(itertools.cycle([read("6"), finish("north", ["6"])]), judge=judge("R3")),
        lambda t: (t.rejected_by("R3"), t.tries, t.a.abstain_level),
        ((3, 3, "L1"), (1, 1, "L1")),
    ),
    # the loop guards
    "guard.repeat_hint": Effect(
        2,
        lambda: model([search("Nissedal")] * 4 + solve_nissedal()),
        lambda t: t.events("repetition_guard"),
        ([2, 3], [1, 2, 3]),
    ),
    "guard.repeat_stop": Effect(
        3,
        lambda: model([search("Nissedal")] * 6 + solve_nissedal()),
        lambda t: (t.first_try(), t.rejects("repetition_guard")[:1]),
        ((5, ["repeated_call"]), (3, ["repeated_call"])),
    ),
    "guard.text_repeat": Effect(
        True,
        lambda: model(thinking([SAME] * 6) + solve_nissedal()),
        lambda t: (t.events("text_repetition"), t.rejects("text_repetition")),
        (([], []), ([2, 3], ["repeated_text"])),
    ),
    "guard.text_similarity": Effect(
        0.5,
        lambda: model(
            thinking(["which country is nissedal in", "which river is nissedal near"] * 2) + solve_nissedal()
        ),
        lambda t: t.events("text_repetition"),
        ([], [2, 3]),
    ),
    "guard.text_hint": Effect(
        1,
        lambda: model(thinking([SAME] * 3) + solve_nissedal()),
        lambda t: t.events("text_repetition"),
        ([2], [1, 2]),
    ),
    "guard.text_stop": Effect(
        3,
        lambda: model(thinking([SAME] * 6) + solve_nissedal()),
        lambda t: (t.first_try(), t.rejects("text_repetition")),
        ((5, ["repeated_text"]), (4, ["repeated_text"])),
    ),
    "guard.duplicate_search": Effect(
        True,
        lambda: model([search("Nissedal"), search("Nissedal"), *solve_nissedal()]),
        lambda t: len(t.events("duplicate_search", "rollback")),
        (0, 1),
    ),
    "guard.duplicate_rollbacks": Effect(
        1,
        lambda: model([search("Nissedal"), search("river")] * 3 + solve_nissedal()),
        lambda t: len(t.events("duplicate_search", "rollback")),
        (3, 1),
    ),
    # the executor's other settings (N)
    "final_answer_recovery": Effect(
        True,
        lambda: model([search(f"query{i}") for i in range(12)] + [finish("north", ["6"])]),
        lambda t: (t.a.outcome, len(t.calls("executor"))),
        (("abstain", 12), ("answer", 13)),
    ),
    "pipeline": Effect(
        ["repetition_guard"],
        lambda: model([search("Nissedal")] * 5 + solve_nissedal()),
        lambda t: t.rejects("repetition_guard"),
        ([], ["repeated_call"]),
    ),
    "temperature": Effect(
        0.7, lambda: model(WHOLE), lambda t: t.settings("executor"), ({(0.2, 256)}, {(0.7, 256)})
    ),
    "max_tokens": Effect(
        512, lambda: model(WHOLE), lambda t: t.settings("executor"), ({(0.2, 256)}, {(0.2, 512)})
    ),
    **{f"calls.{role}": own_settings(role) for role in ROLE_COMPONENT},
    "calls.tester": Effect(  # the code family's tester
        {"temperature": 0.1, "max_tokens": 512},
        lambda: writes(CLOSE_LOOP),
        lambda t: t.settings("tester"),
        ({(0.2, 768)}, {(0.1, 512)}),  # the code family's default: its inputs' JSON is long
        code=True,
    ),
    # k candidates (without a planner): how many, which is taken, at what temperatures, and
    # agreement among them (gates off: every candidate is compared)
    "agreement.k": Effect(3, lambda: answers("north"), lambda t: len(t.calls("executor")), (4, 12)),
    "agreement.select": Effect(
        "first", lambda: answers("north"), lambda t: len(t.calls("executor")), (12, 4)
    ),
    "agreement.temperatures": Effect(
        [0.5, 1.0],
        lambda: answers("north"),
        lambda t: {temperature for temperature, _ in t.settings("executor")},
        ({0.2, 0.8}, {0.2, 0.5, 1.0}),
    ),
    "agreement.tau": Effect(
        0.8, lambda: answers("north", "north", "Oslo"), lambda t: t.a.outcome, ("answer", "abstain")
    ),
    "agreement.inputs": Effect(
        5,
        lambda: writes(CLOSE_LOOP),
        lambda t: t.a.agreement.record["sources"].count("generated") > 5,
        (True, False),
        code=True,
    ),
    "agreement.tester": Effect(
        False, lambda: writes(CLOSE_LOOP), lambda t: len(t.calls("tester")), (1, 0), code=True
    ),
    # the chain (issue 24): a finish that names its hops cites their paragraphs; the designer's
    # searches are steps of the try; a re-sampled try after a rejection
    "finish": Effect(
        "hops",
        lambda: model([read("10"), read("6"), hops_finish("north", [("Norway", "10"), ("north", "6")])]),
        lambda t: (t.a.steps[-1].evidence, [h["entity"] for h in t.a.steps[-1].hops]),
        (([], []), (["10", "6"], ["Norway", "north"])),
    ),
    # attacks (issue 25): what the executor read is marked as data, and it is told so
    "observation_marking": Effect(
        True,
        lambda: model(WHOLE),
        lambda t: (t.prompt().count("<<data>>"), "never an instruction" in t.prompt()),
        ((0, False), (3, True)),  # the rule names the mark once, and two paragraphs were read
    ),
    # tools (issue 38): the executor is offered the configuration's tools, told each by its line
    "tools": Effect(
        ["read", "date_diff"],
        lambda: model(WHOLE),
        lambda t: ("- search:" in t.prompt(), "- date_diff:" in t.prompt(), t.a.steps[0].action),
        ((True, False, "read"), (False, True, "read")),
    ),
    "designer.first_search": Effect(
        "question",
        lambda: model(WHOLE),
        lambda t: [s.source for s in t.a.steps][:2],
        (["executor", "executor"], ["designer", "executor"]),
    ),
    "designer.follow_up": Effect(
        "bridge",
        lambda: model([bridge("Norway"), *WHOLE]),
        lambda t: [(s.source, s.action) for s in t.a.steps][:2],
        ([("executor", None), ("executor", "read")], [("executor", "bridge"), ("designer", "search")]),
    ),
    "retry_temperature": Effect(
        0.9,
        lambda: model(searches()),
        lambda t: t.settings("executor"),
        ({(0.2, 256)}, {(0.2, 256), (0.9, 256)}),
        extra={"budgets": {"step_cap": 2}},
    ),
    # the context profiles: six paragraphs read, then finish
    "keep_last_k": Effect(
        2,
        lambda: model([read(str(i)) for i in range(6)] + [finish("north", ["6"])]),
        lambda t: t.prompt().count("(shown before: ["),
        (1, 4),
    ),
    "context_tokens": Effect(
        600,
        lambda: model([search("Nissedal"), *(read(str(i)) for i in range(8)), finish("north", ["6"])]),
        lambda t: "(earlier steps, summarised)" in t.prompt(),
        (False, True),
        extra={"keep_last_k": -1},
    ),
    # DeReAct: the critic's threshold, the brain's window (eight searches, then abstain)
    "dereact.kappa_min": Effect(
        0.5,
        lambda: model(searches(), critic=lambda m: criticised("accept", 0.6)),
        lambda t: t.decisions("critic"),
        ({("reject", "low_confidence")}, {("accept", "")}),
        extra={"budgets": {"step_cap": 2}},
    ),
    "dereact.window": Effect(
        6,
        lambda: model([*(search(f"query{i}") for i in range(8)), abstain("not found")]),
        lambda t: t.shown(8),
        (tuple(range(8)), (0, 1, 2, 3, 4, 7)),
    ),
    "dereact.initial": Effect(
        1,
        lambda: model([*(search(f"query{i}") for i in range(8)), abstain("not found")]),
        lambda t: t.shown(8),
        ((0, 1, 2, 3, 4, 7), (0, 3, 4, 5, 6, 7)),
        extra={"dereact": {"window": 6}},
    ),
    # the runner: a configuration's limit runs it on its first tasks only
    "limit": Effect(
        1, lambda: model(lambda m: abstain("not found")), lambda t: len(t.attempts), (2, 1), tasks=2
    ),
}


def cases() -> Iterator[Any]:
    for path in declared():
        if ".".join(path) not in SCENARIOS:
            continue  # a configuration's own models, spec or verifiers (OWN, below)
        for base in smallest(reader(path)):
            yield pytest.param(path, base, id=f"{'.'.join(path)}@{label(base)}")


@dataclass
class Bench:
    """What a scenario runs with: the fixtures of one test."""

    store: Store
    spec: TaskSpec
    verifiers: VerifierSet
    roles: RoleSchema
    tasks: list[Task]  # Nissedal first
    tmp_path: Path
    runs: Iterator[int] = field(default_factory=itertools.count)

    def run(self, config: Configuration, effect: Effect) -> Trial:
        mock = effect.script()
        if effect.code:
            out = self.tmp_path / f"run{next(self.runs)}"
            run_experiment(code_experiment(config, mock), out)
            return Trial(read_run(out).attempts, mock)
        if not effect.tasks:
            attempt(config, self.tasks[0], mock, self.store, self.spec, self.verifiers, self.roles)
            return Trial(read_run(self.store).attempts, mock)
        e = ResolvedExperiment(
            self.tasks[: effect.tasks], [config], {"default": mock}, self.spec, self.verifiers, self.roles
        )
        out = self.tmp_path / f"run{next(self.runs)}"
        run_experiment(e, out)
        return Trial(read_run(out).attempts, mock)


@pytest.fixture
def bench(store, spec, verifiers, roles, task_nissedal, full_tasks, tmp_path):
    others = [t for t in full_tasks if t.id != task_nissedal.id]
    return Bench(store, spec, verifiers, roles, [task_nissedal, *others], tmp_path)


@pytest.mark.parametrize(("path", "base"), list(cases()))
def test_changing_a_setting_moves_the_figure_it_governs(path, base, bench):
    effect = SCENARIOS[".".join(path)]
    assert effect.expect[0] != effect.expect[1]
    body = merged({**base, "name": label(base)}, effect.extra)
    default = Configuration.model_validate(body)
    changed = Configuration.model_validate(merged(body, nested(path, effect.value)))
    assert COMPONENTS[reader(path)].runs(changed)
    figures = (effect.figure(bench.run(default, effect)), effect.figure(bench.run(changed, effect)))
    assert figures == effect.expect, (label(base), figures)


# --- the experiment's settings: through resolve and run_experiment, against loopback servers ---

NISSEDAL = "What is the country where Nissedal is located named after?"
#: Every role's reply, whatever it is asked: one subtask, an abstention, accepts.
ANSWERS = model(lambda m: abstain("not found"), planner=lambda m: plan(("s1", NISSEDAL, [], "any")))


def reply(body: dict[str, Any]) -> str:
    return ANSWERS.generate(body["messages"]).text


def counting_server() -> ScriptedServer:
    """A server whose replies take 0.15 s; ``server.slow.peak``: the most it answered at once."""
    slow = SlowModel(delay=0.15)

    def counted(body: dict[str, Any]) -> str:
        slow.generate(body["messages"])
        return reply(body)

    server = ScriptedServer(counted)
    server.slow = slow  # type: ignore[attr-defined]
    return server


@dataclass(frozen=True)
class Served:
    """An experiment setting's scenario: as ``Effect``, with the server the run's models call
    (``value`` may be a function of it); ``extra`` are experiment fields, ``config`` the
    configuration's, the same in both runs."""

    value: Any
    figure: Callable[[list[AttemptRecord], Any], Any]
    expect: tuple[Any, Any]
    server: Callable[[], Any] = lambda: ScriptedServer(reply)
    extra: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    tasks: int = 1
    code: bool = False  # on HumanEval/0, not Nissedal (the code family's tester)


def first_call(attempts: list[AttemptRecord]) -> CallRecord:
    return attempts[0].calls[0]


def models_of(role: str) -> Callable[[list[AttemptRecord], Any], set[str | None]]:
    """The models ``role``'s calls were made with (``default``: every call's)."""
    return lambda attempts, _: {c.model for c in attempts[0].calls if role in ("default", c.role)}


def ended(attempts: list[AttemptRecord], server: ReasoningServer) -> tuple[int, str | None]:
    """How many replies the server streamed, and how the attempt ended (a cause or a crash)."""
    a = attempts[0]
    return server.streamed, a.abstain_cause or a.crash_kind


#: The reasoning server never answers a call that does not stream: the call timeout ends it.
WATCHED = {"limits": {"call_timeout": 0.5, "max_retries": 0}}

SERVED: dict[str, Served] = {
    # models.default's own default is a local GGUF model: its scenario compares two served ones
    **{
        f"models.{r}": Served(
            "openai/other",
            models_of(r),
            ({"openai/scripted"}, {"openai/other"}),
            server=(lambda: ScriptedServer(code_reply)) if r == "tester" else (lambda: ScriptedServer(reply)),
            code=r == "tester",
        )
        for r in MODEL_ROLES
    },
    "base_url": Served(  # at its default, OPENAI_BASE_URL (another server) is asked
        lambda server: server.base_url,
        lambda attempts, server: (
            len(server.requests),
            {c.endpoint for c in attempts[0].calls} == {server.base_url},
        ),
        ((0, False), (1, True)),
    ),
    "limits.max_retries": Served(
        1,
        lambda attempts, server: (
            first_call(attempts).status,
            first_call(attempts).retries,
            attempts[0].crash_kind,
        ),
        (("ok", 2, None), ("error", 1, "model")),
        server=lambda: ChaosServer(script=["http500", "http500", "nonsense"]),
        config={"budgets": {"step_cap": 1}},
    ),
    "limits.timeout": Served(
        0.1,
        lambda attempts, server: (
            first_call(attempts).status,
            "APITimeoutError" in (first_call(attempts).error or ""),
        ),
        (("ok", False), ("error", True)),
        server=lambda: ScriptedServer(reply, latency=0.3),
        extra={"limits": {"max_retries": 0}},
    ),
    "limits.call_timeout": Served(
        0.1,
        lambda attempts, _: (attempts[0].outcome, attempts[0].crash_kind),
        (("abstain", None), ("crash", "timeout")),
        server=lambda: ScriptedServer(reply, latency=0.3),
    ),
    "limits.endpoint_concurrency": Served(
        1,
        lambda _, server: min(server.slow.peak, 2),
        (2, 1),
        server=counting_server,
        extra={"concurrency": 4},
        tasks=4,
    ),
    "limits.reasoning_only_max_tokens": Served(
        200, ended, ((0, "timeout"), (1, "reasoning_runaway")), server=ReasoningServer, extra=WATCHED
    ),
    "limits.reasoning_only_timeout_s": Served(
        0.2, ended, ((0, "timeout"), (1, "reasoning_runaway")), server=ReasoningServer, extra=WATCHED
    ),
}


def experiment_settings() -> set[str]:
    """The experiment settings the providers declare they read (``limits.*`` and ``base_url``),
    and a model per role."""
    read = (*HTTP_SETTINGS, *RETRY_SETTINGS, *WATCHDOG_SETTINGS)
    return {s if s == "base_url" else f"limits.{s}" for s in read} | {f"models.{r}" for r in MODEL_ROLES}


def test_every_experiment_setting_has_a_scenario():
    assert set(SERVED) == experiment_settings()
    assert {f"limits.{k}" for k in RunLimits.model_fields} <= experiment_settings()


@pytest.fixture
def elsewhere(monkeypatch):
    """The server an openai/ model asks when the experiment names none (OPENAI_BASE_URL)."""
    with ScriptedServer(reply) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        yield server


@pytest.mark.parametrize("name", sorted(SERVED))
def test_changing_an_experiment_setting_moves_the_figure_it_governs(name, bench, elsewhere):
    served = SERVED[name]
    path = tuple(name.split("."))
    role = path[1] if path[0] == "models" else None
    assert role is not None or provider_reads("openai", path[-1])  # the scenario's models read it
    # the executor always runs: with a model of its own, the planner is what still reads the
    # default (a default no role reads is refused)
    runs = {"executor": "planner"}.get(role or "", role)
    config = {**(smallest(ROLE_COMPONENT[runs])[0] if runs in ROLE_COMPONENT else {}), "name": "C"}
    figures = []
    for changed in (False, True):
        with served.server() as server:
            body = {
                "kind": "experiment",
                "name": "effects",
                "configurations": [merged(config, served.config)],
                "models": {"default": "openai/scripted"},
                "cache": False,
                "concurrency": 1,
                **({} if name == "base_url" else {"base_url": server.base_url}),
            }
            body = merged(body, served.extra)
            if changed:
                value = served.value(server) if callable(served.value) else served.value
                body = merged(body, nested(path, value))
            tasks = None if served.code else bench.tasks[: served.tasks]
            resolved = resolve(Experiment.model_validate({**body, **on_code(served.code)}), tasks=tasks)
            out = bench.tmp_path / f"run{next(bench.runs)}"
            run_experiment(resolved, out)
            figures.append(served.figure(read_run(out).attempts, server))
    assert tuple(figures) == served.expect


# --- a configuration's own models, spec and verifiers: through resolve, against a loopback server --

#: The executor finishes at once, citing a paragraph it never retrieved (the shipped gates reject
#: that); every other role accepts.
FINISHES = model(lambda m: finish("north", ["6"]))


@dataclass(frozen=True)
class Own:
    """A configuration's own model, spec or verifier set: as ``Served``, with ``value`` made in
    the test's folder."""

    value: Callable[[Path], Any]
    figure: Callable[[list[AttemptRecord]], Any]
    expect: tuple[Any, Any]
    reply: Callable[[dict[str, Any]], str] = reply
    code: bool = False  # on HumanEval/0, not Nissedal (the code family's tester)


def prompt_says(text: str) -> Callable[[list[AttemptRecord]], bool]:
    return lambda attempts: text in "\n".join(m["content"] for m in attempts[0].calls[0].messages)


def written(name: str, body: str) -> Callable[[Path], str]:
    def write(folder: Path) -> str:
        path = folder / name
        path.write_text(body)
        return str(path)

    return write


def checked(attempts: list[AttemptRecord]) -> bool:
    """Whether a gate or a judge of the verifier set gave a verdict."""
    return any(v.source in ("gate", "judge") for v in attempts[0].verdicts)


OWN: dict[str, Own] = {
    **{
        f"models.{r}": Own(
            lambda _: "openai/other",
            lambda attempts, r=r: models_of(r)(attempts, None),
            ({"openai/scripted"}, {"openai/other"}),
            reply=code_reply if r == "tester" else reply,
            code=r == "tester",
        )
        for r in MODEL_ROLES
    },
    "spec": Own(
        written(
            "short.yaml",
            "kind: spec\nname: short\nrequirements:\n  task: Answer.\n  answer: {max_words: 4}\n",
        ),
        prompt_says("at most 4 words"),
        (False, True),
    ),
    "verifiers": Own(
        written("none.yaml", "kind: verifiers\nname: none\n"),
        checked,
        (True, False),
        reply=lambda body: FINISHES.generate(body["messages"]).text,
    ),
}


# --- settings only one family's steps read: run on that family -----------------------------


def code_retry_shows_the_rejected_program(tmp_path: Path, show_rejected: bool) -> bool:
    """VG on HumanEval/0 (the real sandbox): the scripted executor's first program returns None,
    the examples gate rejects it; the figure is whether the retry's prompt shows that program."""
    from vreact.code.data import SHIPPED, read_problems

    [problem] = read_problems(SHIPPED, 1)
    wrong = problem.prompt + "    return None\n"

    def write(messages: list[dict[str, Any]]) -> str:
        prompt = "\n".join(m["content"] for m in messages)
        body = wrong if "rejected" not in prompt else problem.prompt + str(problem.canonical_solution)
        return json.dumps({"thought": "t", "action": "finish", "input": body})

    shipped = load_experiment("code")  # experiments/code.yaml, its model replaced by the script
    experiment = resolve(
        shipped.model_copy(
            update={
                "configurations": [Configuration(name="VG", gates=True, show_rejected=show_rejected)],
                "dataset": shipped.dataset.model_copy(update={"limit": 1}),
                "models": {"default": "openai/unused"},
                "base_url": "http://127.0.0.1:9/v1",
                "cache": False,
            }
        )
    )
    experiment.models["default"] = MockModel(write)
    out = tmp_path / f"code-{show_rejected}"
    run_experiment(experiment, out)
    [record] = read_run(out).attempts
    assert record.score is not None and record.score.correct  # the retry was accepted, and right
    prompts = ["\n".join(m["content"] for m in c.messages or []) for c in record.calls]
    return any("Your last program was rejected:" in p and wrong.strip() in p for p in prompts)


#: a setting only one family's step kit reads -> (its family, the scenario, its figure at the
#: default and at the other value)
FAMILY: dict[str, tuple[str, Callable[[Path, Any], Any], tuple[Any, Any]]] = {
    "show_rejected": ("code", code_retry_shows_the_rejected_program, (False, True)),
}


@pytest.mark.parametrize("name", sorted(FAMILY))
def test_a_familys_own_setting_moves_what_its_steps_show(name, tmp_path):
    family, scenario, expect = FAMILY[name]
    assert settings_of_families(step=True)[name] == {family}
    default = family_of(family).step_settings.model_fields[name].default
    assert (scenario(tmp_path, default), scenario(tmp_path, not default)) == expect


def test_every_setting_has_one_scenario():
    """Each declared configuration setting has exactly one scenario: run by the attempt alone,
    through ``resolve`` (a configuration's own models, spec and verifiers), or on the one family
    whose steps read it."""
    assert not set(SCENARIOS) & set(OWN) and not (set(SCENARIOS) | set(OWN)) & set(FAMILY)
    families = {".".join(p) for f in ("qa", "code") for p in leaves(family_of(f).step_settings)}
    assert set(SCENARIOS) | set(OWN) | set(FAMILY) == {".".join(p) for p in declared()} | families


def leaves(model: type[BaseModel], path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The path of every setting of a family's step settings model (its groups walked into)."""
    for name, info in model.model_fields.items():
        group = info.annotation if isinstance(info.annotation, type) else None
        if group is not None and issubclass(group, BaseModel):
            yield from leaves(group, (*path, name))
        else:
            yield (*path, name)


def own_cases() -> Iterator[Any]:
    for name in sorted(OWN):
        for base in smallest(reader(tuple(name.split(".")))):
            yield pytest.param(name, base, id=f"{name}@{label(base)}")


@pytest.mark.parametrize(("name", "base"), list(own_cases()))
def test_a_configurations_own_models_spec_and_verifiers_move_what_it_runs_with(name, base, bench):
    own = OWN[name]
    path = tuple(name.split("."))
    config = {**base, "name": "C"}
    figures = []
    for changed in (False, True):
        with ScriptedServer(own.reply) as server:
            mine = merged(config, nested(path, own.value(bench.tmp_path))) if changed else config
            body = {
                "kind": "experiment",
                "name": "own",
                # D reads the experiment's default model, whatever C's own models say
                "configurations": [mine, {"name": "D"}],
                "models": {"default": "openai/scripted"},
                "base_url": server.base_url,
                "cache": False,
                "concurrency": 1,
            }
            tasks = None if own.code else bench.tasks[:1]
            resolved = resolve(Experiment.model_validate({**body, **on_code(own.code)}), tasks=tasks)
            out = bench.tmp_path / f"run{next(bench.runs)}"
            run_experiment(resolved, out)
            figures.append(own.figure([a for a in read_run(out).attempts if a.config == "C"]))
    assert tuple(figures) == own.expect
