"""Corrections you can list: ``vreact report --corrections`` names each correction's rejecting
check, the rejected and the accepted answer, and whether the accepted answer is right by gold;
DeReAct's critic is a source of its own in the attribution, not "judge"."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import FULL, assert_records_whole
from tests.helpers import by_role, by_source, criticised, finish, read, search
from vreact.config import Configuration
from vreact.experiment import ResolvedExperiment, run_experiment
from vreact.experiment.resolved import Setup
from vreact.qa.dataset import load_tasks
from vreact.report import compute

NISSEDAL = "2hop__269805_135710"  # hop 1 -> Norway (paragraph 10), hop 2 -> north (paragraph 6)
RETRIEVED = [search("Nissedal"), read("10"), read("6")]


@pytest.fixture(scope="module")
def run(tmp_path_factory, request):
    spec, verifiers, roles = (request.getfixturevalue(f) for f in ("spec", "verifiers", "roles"))
    tasks = [t for t in load_tasks(FULL) if t.id == NISSEDAL]
    # VG: a cited paragraph never retrieved is rejected (evidence_retrieved), then the right answer
    to_right = by_role(executor=[finish("south", ["6"]), *RETRIEVED, finish("north", ["10", "6"])])
    # VG-wrong: the same rejection, then a wrong answer the gates accept
    to_wrong = by_role(executor=[finish("south", ["6"]), *RETRIEVED, finish("Norway", ["10", "6"])])
    # the critic: it rejects a first guess before it runs, then accepts the answer that follows
    critic = by_role(
        executor=[finish("south", ["6"]), *RETRIEVED, finish("north", ["10", "6"])],
        critic=[criticised("reject", 0.9, "guessing"), *(criticised() for _ in range(9))],
    )
    configs = [
        Configuration(name="VG", gates=True, guards=True),
        Configuration(name="VG-wrong", gates=True, guards=True),
        Configuration(name="critic", critic=True),
    ]
    setups = {
        "VG": Setup({"default": to_right}, spec, verifiers),
        "VG-wrong": Setup({"default": to_wrong}, spec, verifiers),
        "critic": Setup({"default": critic}, spec, verifiers),
    }
    out = tmp_path_factory.mktemp("corrections") / "out"
    run_experiment(ResolvedExperiment(tasks, configs, {}, spec, verifiers, roles, setups=setups), out)
    assert_records_whole(out)
    return out


def test_each_correction_is_listed_with_its_check_and_gold_correctness(run):
    listed = subprocess.run(
        [sys.executable, "-m", "vreact.cli", "report", str(run), "--corrections", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    rows = {r["config"]: r for r in json.loads(listed.stdout)}
    shown = {
        name: (r["source"], r["check"], r["cause"], r["rejected"], r["accepted"], r["final"], r["right"])
        for name, r in rows.items()
    }
    assert shown["VG"] == (
        "gate",
        "evidence_retrieved",
        "evidence_not_retrieved",
        "south",
        "north",
        True,
        True,
    )
    assert shown["VG-wrong"][3:] == ("south", "Norway", True, False)  # corrected, and still wrong
    assert shown["critic"][:2] == ("critic", "critic")
    assert set(rows) == {"VG", "VG-wrong", "critic"}


def test_the_table_says_how_many_were_right(run):
    text = subprocess.run(
        [sys.executable, "-m", "vreact.cli", "report", str(run), "--corrections"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert "3 corrections; 2 of the final answer, 1 of those right by gold" in text.replace("\n", " ")


def test_the_critic_is_its_own_source_in_the_attribution(run):
    report = compute(run, iterations=200)
    a = report.configs["critic"].attribution
    assert a.by_source["critic"].rejections == 1 and a.by_source["critic"].corrections == 1
    assert a.by_source["judge"].rejections == 0
    assert a.marginal_cost["critic"].llm_calls > 0 and a.marginal_cost["judge"].llm_calls == 0
    assert report.configs["VG"].corrections == by_source(gate=1)


def test_the_page_shows_them(run):
    from vreact.records import DB_NAME, Store
    from vreact.report.html import render_html

    page = render_html(Store(run / DB_NAME))
    assert "Corrections: a rejected artifact, then another accepted in its place" in page
    assert 'data-key="corrections.1.accepted" data-value="&quot;Norway&quot;"' in page


@pytest.mark.parametrize(
    ("artifact", "shown"),
    [
        ({"kind": "answer", "answer": "north", "evidence": ["6"]}, "north"),
        ({"kind": "abstain", "reason": "not in the paragraphs"}, "abstain: not in the paragraphs"),
        (
            {
                "kind": "plan",
                "plan": {
                    "subtasks": [{"id": "s1", "objective": "Where?"}, {"id": "s2", "objective": "Why #1?"}]
                },
            },
            "Where? | Why #1?",
        ),
        (
            {"kind": "chain", "steps": [["s1", "Norway", ["10"]], ["s2", "north", ["6"]]], "final": "north"},
            "s1=Norway -> s2=north",
        ),
        (None, ""),
    ],
)
def test_each_kind_of_artifact_is_shown_in_one_line(artifact, shown):
    from vreact.report.compute import _shown_artifact

    assert _shown_artifact(artifact) == shown


def test_every_run_s_corrections_under_its_id(run):
    listed = subprocess.run(
        [sys.executable, "-m", "vreact.cli", "report", str(run), "--corrections", "--json", "--run", "all"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    [only] = json.loads(listed.stdout)
    assert only["run"] == 1 and len(only["corrections"]) == 3
