"""A folder's history, with one rule: one run per identity. Running a folder again with more
configurations, or with some of them, resumes within its run; any other difference (spec,
verifier set, seed, models, a configuration's body, endpoint, corpus, dataset) is refused in
one line that names it, and the folder is left as it was. Folders made before the rule, with
several runs, still resume each of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FULL, MUSIQUE, REPO
from tests.fakes.chaos_server import ChaosServer
from tests.helpers import abstain, plan, role_of
from vreact.config import Configuration
from vreact.experiment import ResolvedExperiment, RunMismatch, run_experiment
from vreact.experiment.history import plain
from vreact.model import MockModel
from vreact.qa.tools import load_corpus
from vreact.records import DB_NAME, Store
from vreact.spec import builtin_configs

LADDER = builtin_configs()


def reply(messages: list[dict[str, str]]) -> Any:
    """Every attempt the same way: a one-subtask plan, and an executor that declines."""
    if role_of(messages) == "planner":
        return plan(("s1", "Answer the question.", [], "any"))
    return abstain("no paragraph says")


@pytest.fixture
def make(full_tasks, spec, verifiers, roles):
    """An experiment of two real tasks with the named configurations, on a fresh mock model."""

    def experiment(names: str, **changes: Any) -> ResolvedExperiment:
        model = MockModel(reply)
        configs = [LADDER[n] for n in names.split(",")]
        e = ResolvedExperiment(full_tasks[:2], configs, {"default": model}, spec, verifiers, roles)
        return replace(e, dataset="musique_full_train_80", **changes)

    return experiment


def runs(out: Path) -> list[dict[str, Any]]:
    """The folder's runs: id, the configurations its stored identity lists, status."""
    store = Store(out / DB_NAME)
    rows = list(store.query("select id, config_json, status from runs order by id"))
    return [
        {
            "id": r["id"],
            "configs": [c["name"] for c in json.loads(r["config_json"])["configs"]],
            "status": r["status"],
        }
        for r in rows
    ]


def attempts(out: Path) -> list[tuple[int, int, str, str]]:
    """Every attempt of the folder: (id, run id, configuration, task id)."""
    store = Store(out / DB_NAME)
    return [
        (a["id"], a["run_id"], a["config"], a["task_id"])
        for a in store.query("select * from attempts order by id")
    ]


def asked(e: ResolvedExperiment) -> list[str]:
    """The role of each call the experiment's mock model answered."""
    model = e.models["default"]
    assert isinstance(model, MockModel)
    return [role_of(m) for m in model.calls]


def test_one_more_configuration_resumes_within_the_run(tmp_path, make):
    out = tmp_path / "run"
    assert run_experiment(make("N,VG"), out) == 1
    before = attempts(out)
    assert len(before) == 4
    more = make("N,VG,VPG")
    assert run_experiment(more, out) == 1
    assert runs(out) == [{"id": 1, "configs": ["N", "VG", "VPG"], "status": "completed"}]
    after = attempts(out)
    assert after[:4] == before  # N and VG are not run again
    assert [(run, config) for _, run, config, _ in after[4:]] == [(1, "VPG"), (1, "VPG")]
    assert "planner" in asked(more)  # only VPG ran: N and VG never plan
    # a new configuration beside some of the old ones: added after them, in the run's order
    assert run_experiment(make("VPGJ,VG"), out) == 1
    assert runs(out)[0]["configs"] == ["N", "VG", "VPG", "VPGJ"]
    assert [config for _, _, config, _ in attempts(out)[6:]] == ["VPGJ", "VPGJ"]


def test_a_subset_resumes_within_the_run_and_runs_nothing_done(tmp_path, make):
    out = tmp_path / "run"
    run_experiment(make("N,VG,VPG"), out)
    before = attempts(out)
    for names in ("VG", "VPG,N"):
        subset = make(names)
        assert run_experiment(subset, out) == 1
        assert asked(subset) == []
    assert attempts(out) == before
    assert runs(out) == [{"id": 1, "configs": ["N", "VG", "VPG"], "status": "completed"}]


def test_a_subset_finishes_what_a_killed_run_left_of_it(tmp_path, make):
    """A run that stopped part-way (an attempt left running) resumes with a subset too: the
    subset's unfinished attempts run again, the others wait for their own rerun."""
    out = tmp_path / "run"
    run_experiment(make("N,VG"), out)
    store = Store(out / DB_NAME)
    store.db.execute(
        "update attempts set outcome = 'running' where config = 'VG'"
    )  # as a SIGKILL leaves them
    store.db.conn.commit()
    vg = make("VG")
    assert run_experiment(vg, out) == 1
    assert asked(vg)
    assert sorted(config for _, _, config, _ in attempts(out)) == ["N", "N", "VG", "VG"]


def edited(model: Any, path: str, value: Any) -> Any:
    """A copy of a pydantic model with one field of its dump (a dotted path) set to ``value``."""
    data = model.model_dump()
    *parents, last = path.split(".")
    node = data
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    node[last] = value
    return type(model).model_validate(data)


def fewer_r1_tries(config: Configuration) -> Configuration:
    return config.model_copy(update={"budgets": config.budgets.model_copy(update={"r1": 2})})


def another_endpoint() -> MockModel:
    model = MockModel(reply)
    model.endpoint = "http://127.0.0.1:9/v1"
    return model


#: Each difference a folder refuses: how the second run differs, and the line that names it.
DIFFERENCES: dict[str, tuple[Any, str]] = {
    "spec": (
        lambda e: {"spec": edited(e.spec, "requirements.answer.min_paragraphs", 1)},
        "run 1 was made with the spec musique where requirements.answer.min_paragraphs is 2; this one has 1",
    ),
    "verifiers": (
        lambda e: {"verifiers": edited(e.verifiers, "R1.gates.4.args.min_cited", 2)},
        "run 1 was made with the verifier set musique where R1.gates[4].args.min_cited is 1; this one has 2",
    ),
    "seed": (lambda e: {"seed": 1}, "run 1 was made with seed 0; this one has seed 1"),
    "models": (
        lambda e: {"models": {"default": MockModel(reply, name="mock/other")}},
        "run 1 was made with the default model mock/scripted; this one uses the default model mock/other",
    ),
    "a configuration's body": (
        lambda e: {"configs": [fewer_r1_tries(c) if c.name == "VG" else c for c in e.configs]},
        "run 1 ran VG with budgets.r1 3; this one's VG has budgets.r1 2",
    ),
    "endpoint": (
        lambda e: {"models": {"default": another_endpoint()}},
        "run 1 was made with default at mock; this one uses http://127.0.0.1:9/v1",
    ),
    "corpus": (
        lambda e: {"shared": load_corpus(MUSIQUE / "musique_ans_train_100_corpus.json")},
        "run 1 searched the tasks' own paragraphs; this one searches the corpus"
        f" {MUSIQUE / 'musique_ans_train_100_corpus.json'}",
    ),
    "dataset": (
        lambda e: {"dataset": "musique_ans_train_100"},
        "run 1 was made on the dataset musique_full_train_80; this one is on musique_ans_train_100",
    ),
}


@pytest.mark.parametrize("what", list(DIFFERENCES))
def test_each_other_difference_is_refused_in_one_line_naming_it(tmp_path, make, what):
    out = tmp_path / "run"
    run_experiment(make("N,VG"), out)
    before = attempts(out)
    change, line = DIFFERENCES[what]
    for names in ("N,VG", "N,VG,VPG", "VG"):  # whichever configurations it runs
        other = make(names)
        other = replace(other, **change(other))
        with pytest.raises(RunMismatch) as refused:
            run_experiment(other, out)
        assert str(refused.value) == f"{out}: {line}: give it another --out"
        assert asked(other) == []
    assert attempts(out) == before
    assert runs(out) == [{"id": 1, "configs": ["N", "VG"], "status": "completed"}]


def test_an_old_folder_with_several_runs_still_resumes_each(tmp_path, make):
    """Before the rule a changed seed or one more configuration started another run beside the
    first; each of those runs still resumes: the one with exactly this identity first, else the
    latest that differs in its configurations alone. Anything else is refused against the latest."""
    out = tmp_path / "old"
    run_experiment(make("N"), out)  # run 1
    store = Store(out / DB_NAME)
    for e in (make("N,VG", seed=1), make("N,VG")):  # runs 2 and 3, as the old runner made them
        store.new_run(plain(e.identity()), "mock/scripted", e.dataset)
    store.close()
    assert run_experiment(make("N,VG", seed=1), out) == 2
    assert run_experiment(make("N,VG"), out) == 3
    assert run_experiment(make("N"), out) == 1  # exactly run 1's identity
    assert run_experiment(make("VG"), out) == 3  # the latest that has VG as this one has it
    grown = make("N,VPG", seed=1)
    assert run_experiment(grown, out) == 2
    assert [r["configs"] for r in runs(out)] == [["N"], ["N", "VG", "VPG"], ["N", "VG"]]
    with pytest.raises(RunMismatch, match=r"run 3 was made with seed 0; this one has seed 2"):
        run_experiment(make("N", seed=2), out)
    assert [r["id"] for r in runs(out)] == [1, 2, 3]


# --- through the command line -------------------------------------------------------------------


def vreact(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {"VREACT_CACHE_DIR": str(cache), "OPENAI_API_KEY": "sk-test-not-a-key"}
    return subprocess.run(
        [sys.executable, "-m", "vreact.cli", *args],
        cwd=REPO,
        env={**{k: v for k, v in os.environ.items() if k != "OPENAI_BASE_URL"}, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_rule_through_vreact_run(tmp_path):
    out = tmp_path / "run"
    with ChaosServer(mix={"nonsense": 1.0}, deterministic=True) as server:
        common = ["--dataset", str(FULL), "--limit", "2", "--model", "openai/chaos"]
        common += ["--base-url", server.base_url, "--out", str(out), "--no-cache"]
        first = vreact("run", *common, "--configs", "N,VG", cache=tmp_path / "cache")
        assert first.returncode == 0, first.stderr[-3000:]
        asked = len(server.requests)
        more = vreact("run", *common, "--configs", "N,VG,VPG", cache=tmp_path / "cache")
        assert more.returncode == 0, more.stderr[-3000:]
        assert "Resuming run 1: 4 of 6 attempts already done" in more.stderr
        planned = [b for b in server.requests[asked:] if "You are the planner" in b["messages"][0]["content"]]
        assert planned  # VPG ran
        refused = vreact("run", *common, "--configs", "N,VG", "--seed", "1", cache=tmp_path / "cache")
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1] == (
        f"error: {out}: run 1 was made with seed 0; this one has seed 1: give it another --out"
    )
    assert "Traceback" not in refused.stderr
    assert runs(out) == [{"id": 1, "configs": ["N", "VG", "VPG"], "status": "completed"}]


def test_a_new_configuration_may_bring_a_model_for_a_role_only_it_calls(tmp_path, make):
    """N then N,VPGJ with a judge model of its own resumes (no attempt of the run called a
    judge); a judge model that differs from the one VPGJ's attempts were judged by is refused."""
    out = tmp_path / "run"
    run_experiment(make("N"), out)
    judged = make(
        "N,VPGJ", models={"default": MockModel(reply), "judge": MockModel(reply, name="mock/judge")}
    )
    assert run_experiment(judged, out) == 1
    stored = json.loads(next(Store(out / DB_NAME).query("select config_json from runs"))["config_json"])
    assert stored["models"] == {"default": "mock/scripted", "judge": "mock/judge"}
    other = make("N,VPGJ", models={"default": MockModel(reply), "judge": MockModel(reply, name="mock/other")})
    with pytest.raises(
        RunMismatch, match="the judge model mock/judge; this one uses the judge model mock/other"
    ):
        run_experiment(other, out)


def test_a_stored_identity_is_read_in_todays_terms_only_where_nothing_changes():
    """A configuration stored before a step setting existed has it at its value then; a role
    schema stored before the executor read failures.rejected reads it, unless a configuration
    shows a rejected artifact (then the field changes what the executor is shown)."""
    from vreact.experiment.resolved import in_todays_terms

    reads = ["subtask.objective", "failures.own", "try.steps"]
    stored = {
        "configs": [{"name": "N", "guard": {"max_steps": 9}}],
        "roles": {"kind": "roles", "roles": {"executor": {"reads": reads, "never_reads": []}}},
        "seed": 0,
    }
    today = in_todays_terms(stored)
    assert today["configs"] == [
        {
            "finish": "answer",
            "designer": {"first_search": None, "follow_up": None},
            "show_rejected": False,
            "agreement": {
                "k": 1,
                "select": "agree",
                "temperatures": [0.8],
                "tau": 0.5,
                "inputs": 100,
                "tester": True,
            },
            "name": "N",
            "guard": {"duplicate_search": False, "duplicate_rollbacks": 3, "max_steps": 9},
        }
    ]
    assert today["roles"]["roles"]["executor"]["reads"] == [
        "subtask.objective",
        "failures.own",
        "failures.rejected",
        "try.steps",
    ]
    assert stored["roles"]["roles"]["executor"]["reads"] == reads and today["seed"] == 0  # a copy
    # the tester's row, added since, when no configuration calls the tester; not when one does
    assert today["roles"]["roles"]["tester"]["reads"] == ["l1"] and "tester" not in stored["roles"]["roles"]
    calls = {**stored, "configs": [{"name": "A", "agreement": {"k": 3}}]}
    assert "tester" not in in_todays_terms(calls)["roles"]["roles"]
    shown = {**stored, "configs": [{"name": "VG", "show_rejected": True}]}
    assert in_todays_terms(shown)["roles"]["roles"]["executor"] == stored["roles"]["roles"]["executor"]
