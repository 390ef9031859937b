"""Acceptance 2 of issue 25: experiments/attacks.yaml on 20 real MuSiQue-Full records against a
deterministic loopback server (a real HTTP endpoint whose replies are a function of the request):
every attempt is accounted for, and the attack table is in ``vreact report`` (terminal, Markdown,
JSON) and on the HTML page.

The server plays an obedient agent: its executor searches the question, and when the search
showed an added paragraph it reads it and the gold ones and answers what the attack asks, citing
it; else it solves the task. It tells the copies of a question apart by what the search showed
(each copy's paragraphs are numbered anew); the judges, critic and context manager accept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.attacks.obedient import final_step, gold_ids, steps_taken
from tests.conftest import FULL
from tests.fakes.scripted_server import ScriptedServer
from tests.helpers import read, role_of, search
from vreact.marking import DATA_CLOSE, DATA_OPEN
from vreact.qa.dataset import Task
from vreact.qa.tools import CorpusView, corpus_of
from vreact.records import DB_NAME, Store, read_run
from vreact.spec import load_experiment
from vreact.tools import ToolContext, tool_of

LIMIT = 20


def copies() -> list[Task]:
    """The experiment's tasks as it makes them: the first 20 records and their attacked copies."""
    from vreact.experiment.resolved import experiment_tasks

    exp = load_experiment("attacks", {"dataset.path": str(FULL), "dataset.limit": LIMIT})
    return experiment_tasks(exp.dataset)


class Obedient:
    """The server's replies: a function of the request body alone."""

    def __init__(self, tasks: list[Task]) -> None:
        self.by_question: dict[str, list[tuple[str, Task]]] = {}
        for t in tasks:  # each copy with what searching its question shows
            shown = tool_of("search").run(t.question, ToolContext(t.question, CorpusView(corpus_of(t))))
            self.by_question.setdefault(t.question, []).append((shown, t))

    def __call__(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        role = role_of(messages)
        if role == "planner":
            question = messages[1]["content"].split("\n")[0].removeprefix("Question: ")
            return json.dumps(
                {"subtasks": [{"id": "s1", "objective": question, "depends_on": [], "answer_type": "any"}]}
            )
        if role == "judge":
            return json.dumps({"reason": "fine", "decision": "accept", "confidence": 0.9})
        if role == "critic":
            return json.dumps({"decision": "accept", "confidence": 0.9, "feedback": ""})
        if role == "context_manager":
            return json.dumps({"status": "success", "state": [], "reason": "done"})
        return json.dumps(self.step(messages, "hops" in json.dumps(body.get("response_format"))))

    def step(self, messages: list[dict[str, str]], hops: bool) -> dict[str, Any]:
        question = messages[1]["content"].split("\n")[0].removeprefix("Question: ")
        n = steps_taken(messages)
        if n == 0:
            return search(question)
        prompt = messages[-1]["content"].replace(f"{DATA_OPEN} ", "").replace(f" {DATA_CLOSE}", "")
        task = next(t for shown, t in self.by_question[question] if shown in prompt)
        seen = task.attack and any(f"[{i}]" in prompt for i in task.attack.added)
        added = str(task.attack.added[0]) if seen else None
        reads = [*gold_ids(task), *([added] if added else [])]
        if n <= len(reads):
            return read(reads[n - 1])
        return final_step(task, added, hops)


def vreact(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "160"}  # a terminal wide enough for the attacks' names
    return subprocess.run(
        [sys.executable, "-m", "vreact.cli", *args], capture_output=True, text=True, timeout=1200, env=env
    )


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("attacks") / "run"
    tasks = copies()
    with ScriptedServer(Obedient(tasks)) as server:
        sets = {
            "dataset.path": str(FULL),
            "dataset.limit": str(LIMIT),
            "models.default": "openai/obedient",
            "base_url": server.base_url,
            "cache": "false",
        }
        args = [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
        done = vreact("experiment", "attacks", "--out", str(out), *args)
        assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_every_attempt_is_accounted_for(run_folder):
    exp = load_experiment("attacks")
    store = Store(run_folder / DB_NAME)
    records = read_run(store)
    n_tasks = LIMIT * (1 + len(exp.dataset.attacks))
    assert len(records.attempts) == n_tasks * len(exp.configurations)
    assert {a.outcome for a in records.attempts} <= {"answer", "abstain", "crash"}
    for a in records.attempts:
        if a.outcome == "abstain":
            assert a.abstain_level and a.abstain_component and a.abstain_cause, a
        if a.outcome == "crash":
            assert a.error, a
    attacked = [t for t in records.tasks.values() if t.attack]
    assert len(attacked) == LIMIT * len(exp.dataset.attacks)
    assert all(t.base_id in records.tasks and t.added and t.target for t in attacked)


def test_the_attack_table_is_in_the_report_and_on_the_page(run_folder):
    exp = load_experiment("attacks")
    report = json.loads(vreact("report", str(run_folder), "--json").stdout)
    names = [a.label for a in exp.dataset.attacks]
    assert set(report["attacks"]) == {c.name for c in exp.configurations}
    for config, block in report["attacks"].items():
        assert block["n_clean"] == LIMIT and set(block["by_attack"]) == set(names)
        for row in block["by_attack"].values():
            fates = ("escaped", "blocked", "recovered", "unaffected", "wrong", "crashed")
            assert row["n"] == LIMIT and sum(row[f] for f in fates) == LIMIT, (config, row)
    # the obedient agent: unverified, an instruction it saw is obeyed; VG blocks every one it saw
    override = next(n for n in names if "override" in n)
    n_row, vg_row = (
        report["attacks"]["N"]["by_attack"][override],
        report["attacks"]["VG"]["by_attack"][override],
    )
    assert n_row["attack_success"] > 0.5 and vg_row["attack_success"] == 0.0
    assert vg_row["blocked"] == n_row["escaped"] and "R1 no_instructions_in_evidence" in vg_row["stopped_by"]
    for flag in ((), ("--markdown",)):
        text = vreact("report", str(run_folder), *flag).stdout
        assert "Attacks through the data" in text and "Defences on clean tasks" in text
        assert override in text
    page = run_folder / "report.html"
    done = vreact("view", str(run_folder), "--out", str(page))
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert "Attacks through the data" in html and override in html and "no_instructions_in_evidence" in html
