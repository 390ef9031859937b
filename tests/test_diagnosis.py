"""``vreact diagnose``: an independent judge rates sampled trajectories, blind to the gold answer
and the outcome; its calls and ratings go into the records and its table into the report."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tests.fakes.scripted_server import ScriptedServer
from tests.helpers import abstain, attempt, by_role, finish, managed, read, search
from vreact.cli import cli
from vreact.config import Configuration
from vreact.diagnosis import diagnose
from vreact.model import MockModel
from vreact.records import Store, read_run
from vreact.report import compute

RATED = {
    "state": "GOOD",
    "validation": "MIXED",
    "evidence_complete": True,
    "constraints_satisfied": True,
    "admitted_guessing": False,
    "reason": "fine",
}


def folder(tmp_path, task, spec, verifiers, roles):
    """A run folder with two finished attempts: plain N (a wrong answer) and one with a CM."""
    store = Store(tmp_path / "vreact.db")
    attempt(
        Configuration(name="N"), task, [read("0"), finish("Zanzibar", ["0"])], store, spec, verifiers, roles
    )
    cm = Configuration(name="A", context_manager=True, budgets={"r1": 1})
    model = by_role(
        executor=[search("Nissedal"), abstain("no paragraph says")],
        context_manager=[managed(), managed("success")],
    )
    attempt(cm, task, model, store, spec, verifiers, roles)
    store.db.execute("update attempts set run_id = (select max(id) from runs)")  # one run of both
    store.db.conn.commit()
    return store


def test_diagnose_rates_blind_records_and_reports(tmp_path, task_nissedal, spec, verifiers, roles):
    store = folder(tmp_path, task_nissedal, spec, verifiers, roles)
    before = compute(store)
    judge = MockModel([RATED] * 4, name="mock/judge")
    rows = diagnose(tmp_path, judge, sample=8, seed=1)
    assert len(rows) == 2
    records = read_run(tmp_path)
    by_config = {a.config: a for a in records.attempts}
    for a in records.attempts:
        [d] = a.diagnoses
        assert d.judge == "mock/judge"
        [call] = [c for c in a.calls if c.role == "diagnosis"]
        prompt = "\n".join(m["content"] for m in call.messages or [])
        # blind: neither the gold answer nor the outcome or its correctness
        assert task_nissedal.answer not in prompt.lower() and "abstain_level" not in prompt
        assert a.outcome not in ("answer",) or "outcome" not in prompt
    assert (by_config["N"].diagnoses[0].state, by_config["N"].diagnoses[0].validation) == ("N/A", "N/A")
    assert (by_config["A"].diagnoses[0].state, by_config["A"].diagnoses[0].validation) == ("GOOD", "MIXED")
    after = compute(store)
    assert after.configs["N"].llm_calls == before.configs["N"].llm_calls  # diagnosis calls count nowhere
    n = after.configs["N"].diagnosis
    assert n is not None and (n.rated, n.state_good, n.grounded, n.grounded_incorrect) == (
        1,
        None,
        100.0,
        100.0,
    )
    # a rerun with the same judge replaces its rows
    diagnose(tmp_path, MockModel([RATED] * 4, name="mock/judge"), sample=8, seed=1)
    assert len(list(store.query("select * from diagnoses"))) == 2


def test_an_unreadable_rating_fails_closed(tmp_path, task_nissedal, spec, verifiers, roles):
    folder(tmp_path, task_nissedal, spec, verifiers, roles)
    diagnose(tmp_path, MockModel(["no idea"] * 2, name="mock/judge"), sample=1)
    [d] = [d for a in read_run(tmp_path).attempts for d in a.diagnoses]
    assert (d.state, d.evidence_complete, d.constraints_satisfied) == ("POOR", False, False)


def test_the_command_against_a_server(tmp_path, task_nissedal, spec, verifiers, roles, monkeypatch):
    folder(tmp_path, task_nissedal, spec, verifiers, roles)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    with ScriptedServer(lambda body: json.dumps(RATED)) as server:
        args = [
            "diagnose",
            str(tmp_path),
            "--judge",
            "openai/judge",
            "--base-url",
            server.base_url,
            "--sample",
            "2",
        ]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        assert all(
            r["messages"][0]["content"].startswith("You audit one agent trajectory") for r in server.requests
        )
    assert "2 trajectories rated by openai/judge" in result.output and "Diagnosis" in result.output
