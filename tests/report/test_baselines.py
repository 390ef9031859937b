"""Honest baselines in every report, checked on a scripted MuSiQue-Full run: Pass@1 and accuracy on
the answerable records alone beside each configuration, the always-abstain and always-answer
reference rows computed from the tasks, and each configuration's lift over always abstaining."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FULL
from tests.helpers import abstain, finish
from vreact.experiment import ResolvedExperiment, run_experiment
from vreact.experiment.resolved import Setup
from vreact.model import MockModel
from vreact.qa.dataset import load_tasks
from vreact.report import compute, render_markdown

TASKS = load_tasks(FULL)[:8]
ANSWERABLE = [t for t in TASKS if t.answerable]  # five
UNANSWERABLE = [t for t in TASKS if not t.answerable]  # three


def task_of(messages) -> object:
    prompt = messages[-1]["content"]
    return next(t for t in TASKS if f"Question: {t.question}" in prompt)


def plain(messages):
    """N: right on three answerable tasks, wrong on the fourth, abstains on the fifth; answers
    the first unanswerable task (wrongly, whatever it says) and abstains on the others."""
    task = task_of(messages)
    support = [str(p.idx) for p in task.paragraphs if p.is_supporting][:2] or ["0"]
    if task in ANSWERABLE[:3]:
        return finish(task.answer, support)
    if task is ANSWERABLE[3] or task is UNANSWERABLE[0]:
        return finish("Atlantis", support)
    return abstain("not in the paragraphs")


@pytest.fixture
def report(spec, verifiers, roles, tmp_path):
    cautious = MockModel(lambda m: abstain("not sure"), name="mock/cautious")
    e = ResolvedExperiment(
        TASKS,
        [config for config in _configs()],
        {"default": MockModel(plain, name="mock/plain")},
        spec,
        verifiers,
        roles,
        setups={"VG": Setup({"default": cautious}, spec, verifiers)},
    )
    run_experiment(e, tmp_path / "out")
    return compute(tmp_path / "out", iterations=2000)


def _configs():
    from vreact.config import Configuration

    return [Configuration(name="N"), Configuration(name="VG", gates=True, guards=True)]


def test_each_configuration_shows_its_figures_on_the_answerable_tasks_alone(report):
    n, vg = report.configs["N"], report.configs["VG"]
    assert (n.pass_.pass1, n.answerable_tasks, n.pass1_answerable, n.em) == (0.625, 5, 0.6, 0.6)
    assert (vg.pass_.pass1, vg.pass1_answerable, vg.em, vg.coverage) == (0.375, 0.0, 0.0, 0.0)


def test_the_reference_rows_are_computed_from_the_tasks(report):
    abstaining, answering = report.references["always_abstain"], report.references["always_answer"]
    assert report.always_answer_from == "N"
    # declining everything: the unanswerable share, nothing on the answerable tasks
    assert (abstaining.pass_.pass1, abstaining.pass1_answerable, abstaining.coverage) == (0.375, 0.0, 0.0)
    assert abstaining.abstained_by_level["declined"] == len(TASKS)
    # N never abstaining: its three right answers; every unanswerable task and its abstention fail
    assert (answering.pass_.pass1, answering.pass1_answerable, answering.coverage) == (0.375, 0.6, 1.0)
    assert answering.silent_error == 5 and answering.llm_calls == 0  # no model was called for it


def test_lifts_are_shown_against_always_abstaining(report):
    over = {c.a: c for c in report.over_abstaining}
    assert set(over) == {"N", "VG"} and {c.b for c in over.values()} == {"always_abstain"}
    assert over["VG"].lift1 == 0.0  # abstaining on everything is what VG did
    assert over["N"].lift1 == 0.25 and over["N"].tasks == len(TASKS)


def test_the_tables_show_them(report):
    text = render_markdown(report)
    assert "## Against the trivial baselines" in text and "## Lift over always abstaining" in text
    assert "| always abstain | 8 | 0.38 | 5 | 0.00 | 0.00 | 0.00 | 0 |" in text
    assert "| always answer (N) | 8 | 0.38 | 5 | 0.60 | 0.60 | 1.00 | 5 |" in text
    data = json.loads(report.model_dump_json(by_alias=True))
    assert data["references"]["always_abstain"]["pass"]["pass@1"] == 0.375
