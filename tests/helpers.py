"""Scripted executor steps for mock-model tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from vreact.config import Configuration
from vreact.experiment import Job, ResolvedExperiment, run_attempt
from vreact.model import MockModel
from vreact.qa.dataset import Task
from vreact.records import Store
from vreact.report import compute
from vreact.spec import RoleSchema, TaskSpec, VerifierSet


def search(query: str, thought: str = "") -> dict[str, Any]:
    return {"thought": thought, "action": "search", "input": query, "evidence": []}


def read(pid: str, thought: str = "") -> dict[str, Any]:
    return {"thought": thought, "action": "read", "input": pid, "evidence": []}


def finish(answer: str, evidence: list[str], thought: str = "") -> dict[str, Any]:
    return {"thought": thought, "action": "finish", "input": answer, "evidence": evidence}


def hops_finish(answer: str, hops: list[tuple[str, str]], thought: str = "") -> dict[str, Any]:
    """A finish that names its hops (finish: hops): (entity, paragraph id) each, the answer last."""
    chain = [{"entity": e, "paragraph": p} for e, p in hops]
    return {"thought": thought, "action": "finish", "input": answer, "hops": chain}


def bridge(entity: str) -> dict[str, Any]:
    """The executor names an intermediate entity for the designer to search for."""
    return {"thought": "", "action": "bridge", "input": entity, "evidence": []}


def abstain(reason: str) -> dict[str, Any]:
    return {"thought": "", "action": "abstain", "input": reason, "evidence": []}


def last_support(task: Task) -> str:
    """The paragraph id that supports the final hop."""
    return str(task.question_decomposition[-1].paragraph_support_idx)


def support_ids(task: Task) -> list[str]:
    """The ids of the paragraphs that support the hops, in hop order."""
    return list(dict.fromkeys(str(h.paragraph_support_idx) for h in task.question_decomposition))


def solve(task: Task, answer: str | None = None, thought: str = "") -> list[dict[str, Any]]:
    """Search, read each hop's paragraph, finish with the gold (or given) answer citing them
    all (R3's multi_hop gate wants two or more)."""
    pids = support_ids(task)
    return [
        search(task.question, thought),
        *(read(p) for p in pids),
        finish(task.answer if answer is None else answer, pids),
    ]


def attempt(
    config: Configuration,
    task: Task,
    outputs: Any,
    store: Store,
    spec: TaskSpec,
    verifiers: VerifierSet,
    roles: RoleSchema,
    seed: int = 0,
):
    """Run one attempt against a mock model; return (outcome, attempt row, model)."""
    model = outputs if isinstance(outputs, MockModel) else MockModel(outputs)
    run_id = store.new_run({}, model.name, "test")
    store.add_tasks([task.record()])
    experiment = ResolvedExperiment([task], [config], {"default": model}, spec, verifiers, roles, seed=seed)
    outcome = run_attempt(experiment, Job(config, task, seed=seed), store, run_id)
    row = next(store.query("select * from attempts order by id desc limit 1"))
    return outcome, row, model


def verdicts(store: Store, attempt_id: int) -> list[dict[str, Any]]:
    return list(store.query("select * from verdicts where attempt_id = ? order by seq", [attempt_id]))


def role_of(messages: list[dict[str, str]]) -> str:
    """Which role a prompt is for, from its system message."""
    system = messages[0]["content"]
    if system.startswith("You are the planner"):
        return "planner"
    if system.startswith("You are a strict judge"):
        return "judge"
    if system.startswith("You check one proposed action"):
        return "critic"
    if system.startswith("You keep the verified facts"):
        return "context_manager"
    if system.startswith("You are a software tester"):
        return "tester"
    return "executor"


def by_role(**scripts: Any) -> MockModel:
    """A mock model with one script per role (planner, executor, judge, critic, context_manager,
    tester):
    an iterable of outputs, or a function of the messages that gives each one."""
    from vreact.model import MockScriptExhausted

    its = {role: s if callable(s) else iter(s) for role, s in scripts.items()}

    def answer(messages: list[dict[str, str]]) -> Any:
        role = role_of(messages)
        try:
            script = its[role]
            return script(messages) if callable(script) else next(script)
        except (KeyError, StopIteration):
            raise MockScriptExhausted(f"the {role} script ran out") from None

    return MockModel(answer)


def plan(*subtasks: tuple[str, str, list[str], str]) -> dict[str, Any]:
    return {
        "subtasks": [{"id": i, "objective": o, "depends_on": d, "answer_type": t} for i, o, d, t in subtasks]
    }


def judged(decision: str = "accept", confidence: float = 0.9, reason: str = "fine") -> dict[str, Any]:
    return {"reason": reason, "decision": decision, "confidence": confidence}


def criticised(decision: str = "accept", confidence: float = 0.9, feedback: str = "") -> dict[str, Any]:
    return {"decision": decision, "confidence": confidence, "feedback": feedback}


def managed(
    status: str = "continue", facts: list[tuple[str, list[str]]] = (), reason: str = ""
) -> dict[str, Any]:
    state = [{"fact": f, "paragraph_ids": ids} for f, ids in facts]  # qa's name for what a fact cites
    return {"status": status, "state": state, "reason": reason}


def report_of(store: Store, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """The report of a run as ``vreact report --json`` prints it."""
    return compute(store, *args, **kwargs).model_dump(mode="json")


def by_source(**counts: int) -> dict[str, int]:
    """A report's rejections or corrections by source: ``counts``, and 0 for every other source."""
    from vreact.report.compute import ATTRIBUTED

    return {s: counts.get(s, 0) for s in ATTRIBUTED}


def installed_plugin(tmp_path: Any, distribution: str, version: str, module: str, source: str) -> Any:
    """A package holding ``source`` as its module ``module``, registered in the entry-point group
    vreact.plugins under ``distribution``'s first word, installed into a new venv under
    ``tmp_path`` that sees this one's packages: that venv's python."""
    import subprocess
    import sys

    from tests.conftest import REPO

    package = tmp_path / f"{module}_pkg"
    (package / module).mkdir(parents=True)
    (package / module / "__init__.py").write_text(source)
    name = distribution.split("-")[0]
    (package / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "{distribution}"\nversion = "{version}"\n'
        f'[project.entry-points."vreact.plugins"]\n{name} = "{module}"\n'
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = next((venv / "lib").glob("python3*/site-packages"))
    ours = [p for p in sys.path if p.endswith("site-packages")]
    (site / "vreact_parent.pth").write_text("\n".join([str(REPO), *ours]) + "\n")  # vreact and its deps
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", str(package)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stderr[-2000:]
    return python


def cli(
    *args: str,
    cwd: Any = None,
    python: str = sys.executable,
    env: dict[str, str] | None = None,
    imported_from: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """``vreact ARGS`` in a subprocess of ``python`` (default: this one), run from ``cwd``
    (default: the repository), in ``env`` (default: this process's environment), with the
    repository on its import path (the tests' plugins), after ``imported_from`` (a checkout
    vreact is imported from instead of this one) when given. It dies with pytest
    (tests.processes): a run can take minutes, never more than the test that asked for it."""
    from tests.conftest import REPO
    from tests.processes import run

    env = dict(os.environ if env is None else env)
    first = [str(imported_from)] if imported_from is not None else []
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [*first, str(REPO), env.get("PYTHONPATH")]))
    return run(
        [python, "-m", "vreact.cli", *args],
        cwd=cwd or REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def contexts_built(monkeypatch: Any) -> dict[str, set[str]]:
    """The context fields each role's context was built with from now on (the assembler spied
    on), by role."""
    from vreact.memory import ContextAssembler

    built: dict[str, set[str]] = {}
    build = ContextAssembler.build

    def spying(self: Any, role: str, scope: Any) -> dict[str, Any]:
        out = build(self, role, scope)
        built.setdefault(role, set()).update(out)
        return out

    monkeypatch.setattr(ContextAssembler, "build", spying)
    return built
