"""Costs that say what they leave out: ``cost_usd`` sums the calls that have a price,
``cost_usd_unpriced_calls`` counts the others, and the tables show USD as a lower bound while
that count is not zero; with no priced call USD is null."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from click.testing import CliRunner
from rich.console import Console

from tests.conftest import FULL
from tests.fakes.chaos_server import ChaosServer
from tests.model.test_chaos import rows
from tests.report.test_report import record
from vreact.cli import cli
from vreact.report import compute, render, render_markdown

NISSEDAL, KADEWE = "2hop__269805_135710", "3hop1__107866_146715_19973"


@pytest.fixture
def tasks(full_tasks):
    return {t.id: t for t in full_tasks}


def calls(store, run, tasks, prices):
    """An answered attempt on Nissedal (2 hops) whose calls cost ``prices`` (None: no price),
    and a crashed attempt on KaDeWe (3 hops) with one priced and one unpriced call: money is
    counted over every executed attempt, crashed ones too."""
    priced = [(("executor", "mock/x", 100, 10, 1.0), {"cost_usd": cost}) for cost in prices]
    record(store, run, tasks[NISSEDAL], "answer", "north", ["6", "10"], calls=priced)
    crashed = [
        (("executor", "mock/x", 100, 10, 1.0), {"cost_usd": 0.5}),
        ("judge", "mock/x", 0, 0, 1.0, "error", "HTTP 500"),  # failed: no price
    ]
    record(store, run, tasks[KADEWE], "crash", calls=crashed)


def text_of(report) -> str:
    out = StringIO()
    console = Console(file=out, width=80, color_system=None)
    for table in render(report):
        console.print(table)
    return out.getvalue()


def usd_cell(text: str, config: str = "VG") -> str:
    """The USD cell of the cost table (its cells are apart by two spaces or more; the last
    two are USD and retries)."""
    start = text.index("Cost per scoreable attempt")
    line = next(ln for ln in text[start:].splitlines() if ln.split()[:1] == [config])
    return re.split(r"\s{2,}", line.strip())[-2]


def test_a_mixed_run_counts_its_unpriced_calls_and_shows_usd_as_a_lower_bound(store, tasks):
    run = store.new_run({}, "mock/x", "test")
    calls(store, run, tasks, [0.25, None, 0.125])
    report = compute(store, run)
    r = report.model_dump(mode="json")["configs"]["VG"]
    assert (r["cost_usd"], r["cost_usd_unpriced_calls"]) == (0.875, 2)
    assert r["cost_usd_per_attempt"] == 0.438  # 0.875 over 2 executed attempts
    assert (r["by_hops"]["2"]["cost_usd"], r["by_hops"]["2"]["cost_usd_unpriced_calls"]) == (0.375, 1)
    assert (r["by_hops"]["3"]["cost_usd"], r["by_hops"]["3"]["cost_usd_unpriced_calls"]) == (0.5, 1)
    assert usd_cell(text_of(report)) == ">= $0.8750"
    assert "| VG | 3.00 | 3.00 | 300.00 | 30.00 | >= $0.8750 | 0 |" in render_markdown(report)


def test_with_every_call_priced_usd_is_exact(store, tasks):
    run = store.new_run({}, "mock/x", "test")
    priced = (("executor", "mock/x", 100, 10, 1.0), {"cost_usd": 0.25})
    record(store, run, tasks[NISSEDAL], "answer", "north", ["6", "10"], calls=[priced])
    report = compute(store, run)
    r = report.model_dump(mode="json")["configs"]["VG"]
    assert (r["cost_usd"], r["cost_usd_unpriced_calls"]) == (0.25, 0)
    assert usd_cell(text_of(report)) == "$0.2500"


def test_with_no_call_priced_usd_is_null(store, tasks):
    run = store.new_run({}, "mock/x", "test")
    unpriced = ("executor", "mock/x", 100, 10, 1.0)
    record(store, run, tasks[NISSEDAL], "answer", "north", ["6", "10"], calls=[unpriced] * 3)
    report = compute(store, run)
    r = report.model_dump(mode="json")["configs"]["VG"]
    assert (r["cost_usd"], r["cost_usd_per_attempt"], r["cost_usd_unpriced_calls"]) == (None, None, 3)
    assert r["cost_distribution"]["cost_usd"] is None
    assert usd_cell(text_of(report)) == "-"


def test_a_planner_without_a_price_makes_the_run_s_usd_a_lower_bound(tmp_path):
    """Through ``vreact run`` with a models file that prices the default model and not the
    planner's: the planner's calls are the unpriced ones, and USD sums the others."""
    models = tmp_path / "models.yaml"
    models.write_text(
        "kind: models\n"
        "models:\n"
        "  brain: {model: openai/big, price: {input: 1.0, output: 2.0}}\n"
        "  small: {model: openai/tiny}\n"
        "roles: {default: brain, planner: small}\n"
    )
    out = tmp_path / "run"
    with ChaosServer(mix={"nonsense": 1.0}, deterministic=True) as server:
        args = ["run", "--dataset", str(FULL), "--configs", "VPGJ", "--limit", "2", "--models", str(models)]
        result = CliRunner().invoke(
            cli, [*args, "--base-url", server.base_url, "--out", str(out)], env={"OPENAI_API_KEY": None}
        )
    assert result.exit_code == 0, result.output
    by_role = rows(out / "vreact.db", "select role, cost_usd from model_calls")
    planned = [c for c in by_role if c["role"] == "planner"]
    assert planned and all(c["cost_usd"] is None for c in planned)
    assert all(c["cost_usd"] is not None for c in by_role if c["role"] != "planner")
    report = json.loads(CliRunner().invoke(cli, ["report", str(out), "--json"]).stdout)["configs"]["VPGJ"]
    assert report["cost_usd_unpriced_calls"] == len(planned)
    priced = sum(c["cost_usd"] for c in by_role if c["cost_usd"] is not None)
    assert report["cost_usd"] == pytest.approx(priced, abs=1e-6)
    shown = CliRunner().invoke(cli, ["report", str(out)], terminal_width=200)
    assert f">= ${report['cost_usd']:.4f}" in shown.output


def test_a_failed_call_of_a_priced_model_is_priced_at_nothing(store):
    """A failed request is billed nothing: with the model's price known it costs $0, so a fully
    priced run with a 5xx stays exact; without a price it stays unknown."""
    from vreact.controller import Recorder
    from vreact.model import ModelError, Price

    class Failing:
        name, endpoint = "openai/x", "http://127.0.0.1:1/v1"

        def __init__(self, price):
            self.price = price

    run = store.new_run({}, "openai/x", "test")
    store.add_tasks(
        [{"id": "t", "question": "q?", "answer": "a", "aliases": "[]", "answerable": 1, "hops": 2}]
    )
    attempt_id = store.start_attempt(run, "N", "t", 0, 0)
    recorder = Recorder(store, attempt_id)
    for price in (Price(1.0, 2.0), None):
        recorder.failed_call("executor", Failing(price), [], ModelError("HTTP 500"))
    costs = [r["cost_usd"] for r in store.query("select cost_usd from model_calls order by id")]
    assert costs == [0.0, None]


def test_the_usd_distribution_of_a_mixed_run_is_a_lower_bound(store, tasks):
    run = store.new_run({}, "mock/x", "test")
    calls(store, run, tasks, [0.25, None, 0.125])
    report = compute(store, run)
    d = report.model_dump(mode="json")["configs"]["VG"]["cost_distribution"]["cost_usd"]
    assert d["lower_bound"] is True and d["mean"] == pytest.approx(0.4375)
    assert "| VG | >= $0.4375 | >= $0.4375 |" in render_markdown(report)  # never a bare $0.00
    run = store.new_run({}, "mock/x", "test")
    record(
        store,
        run,
        tasks[NISSEDAL],
        "answer",
        "north",
        ["6", "10"],
        calls=[(("executor", "mock/x", 1, 1, 1.0), {"cost_usd": 0.00012})],
    )
    exact = compute(store, run)
    assert (
        "lower_bound" not in exact.model_dump(mode="json")["configs"]["VG"]["cost_distribution"]["cost_usd"]
    )
    assert "| VG | $0.0001 |" in render_markdown(exact)


def test_cost_by_level_and_role_charges_each_judge_to_its_verifier(store, tasks):
    run = store.new_run({}, "mock/x", "test")
    made = [
        (("planner", "mock/x", 100, 10, 1.0), {"cost_usd": 0.1}),
        (("judge", "mock/x", 50, 5, 1.0), {"cost_usd": 0.01, "verifier": "plan"}),
        (("executor", "mock/x", 200, 20, 1.0), {"cost_usd": 0.2}),
        (("judge", "mock/x", 60, 6, 1.0), {"cost_usd": None, "verifier": "R1"}),
        (("judge", "mock/x", 70, 7, 1.0), {"cost_usd": 0.03, "verifier": "R3"}),
        (("critic", "mock/x", 80, 8, 1.0), {"cost_usd": 0.04}),
        (("context_manager", "mock/x", 90, 9, 1.0), {"cost_usd": 0.05}),
    ]
    record(store, run, tasks[NISSEDAL], "answer", "north", ["6", "10"], calls=made)
    by_role = compute(store, run).model_dump(mode="json")["configs"]["VG"]["cost_by_role"]
    assert [(r["level"], role) for role, r in by_role.items()] == [
        ("L2", "planner"),
        ("L2", "plan judge"),
        ("L3", "executor"),
        ("L3", "R1 judge"),
        ("L3", "critic"),
        ("L1", "R3 judge"),
        ("L1", "context manager"),
    ]
    assert by_role["R1 judge"] == {
        "level": "L3",
        "role": "R1 judge",
        "llm_calls": 1,
        "prompt_tokens": 60,
        "completion_tokens": 6,
        "tokens": 66,
        "cost_usd": None,
        "unpriced_calls": 1,
    }
    assert by_role["planner"]["cost_usd"] == 0.1


def test_a_retry_s_calls_are_charged_to_the_check_that_caused_it(tmp_path):
    """VG on one real task through the runner and a scripted model: the first try finishes with
    evidence it never retrieved (R1's evidence_retrieved rejects), the second solves it. Every call
    of the second try is charged to that check; the first try's calls to nothing."""
    from tests.conftest import FULL
    from tests.helpers import finish, solve
    from vreact.config import Configuration
    from vreact.experiment import ResolvedExperiment, run_experiment
    from vreact.model import MockModel
    from vreact.qa.dataset import load_tasks
    from vreact.spec import load_roles, load_spec, load_verifiers

    task = next(t for t in load_tasks(FULL) if t.id == NISSEDAL)
    model = MockModel([finish(task.answer, ["6", "10"]), *solve(task)])
    config = Configuration(name="VG", guards=True, gates=True)
    experiment = ResolvedExperiment(
        [task], [config], {"default": model}, load_spec("musique"), load_verifiers("musique"), load_roles()
    )
    run_experiment(experiment, tmp_path)
    db = tmp_path / "vreact.db"
    report = compute(db).model_dump(mode="json")["configs"]["VG"]
    assert list(report["caused_retries"]) == ["R1:gate:evidence_retrieved"]
    retry = report["caused_retries"]["R1:gate:evidence_retrieved"]
    assert retry["llm_calls"] == len(solve(task)) and (retry["verifier"], retry["source"]) == ("R1", "gate")
    assert report["cost_by_source"]["gate"]["caused"]["llm_calls"] == len(solve(task))
    assert report["cost_by_source"]["gate"]["own"]["llm_calls"] == 0
    rows_ = [
        r[0]
        for r in __import__("sqlite3").connect(db).execute("select caused_by from model_calls order by id")
    ]
    assert rows_ == [None] + ["R1:gate:evidence_retrieved"] * len(solve(task))
    text = render_markdown(compute(db))
    assert "| VG | gate | R1 evidence_retrieved |" in text
