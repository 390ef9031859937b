"""docs/datasets.md's own-records example, run verbatim in an empty folder: its JSON lines file,
its commands (a probe of the gates, then a run on the embedded model) and its experiment file."""

from __future__ import annotations

import re
import shlex
import sqlite3
from contextlib import closing

import pytest

from tests.conftest import REPO
from tests.helpers import cli

PAGE = REPO / "docs" / "datasets.md"


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def _example_file(folder) -> None:
    """The page's JSON lines block, as my_questions.jsonl in ``folder``."""
    [records] = _blocks("jsonl")
    (folder / "my_questions.jsonl").write_text(records, encoding="utf-8")


def _commands() -> list[list[str]]:
    [block] = _blocks("bash")
    return [shlex.split(line)[1:] for line in block.splitlines() if line.startswith("vreact ")]


def test_the_example_file_probes_clean_and_its_experiment_file_plans(tmp_path):
    _example_file(tmp_path)
    probe, _ = _commands()
    done = cli(*probe, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with closing(sqlite3.connect(tmp_path / "probe-mine" / "vreact.db")) as db:
        verdicts = db.execute(
            "SELECT a.config, v.decision, v.cause FROM verdicts v JOIN attempts a ON a.id = v.attempt_id"
        ).fetchall()
    gold = [d for c, d, _ in verdicts if c == "gold"]
    assert gold and set(gold) == {"accept"}  # both gold answers, the "no" among them, pass
    assert ("one_side", "reject", "one_side") in verdicts  # the yes/no record's one-sided copy

    [experiment] = _blocks("yaml")
    (tmp_path / "mine.yaml").write_text(experiment, encoding="utf-8")
    plan = cli("experiment", "mine.yaml", "--dry-run", cwd=tmp_path)
    assert plan.returncode == 0, plan.stderr
    assert "2 task(s)" in plan.stdout + plan.stderr


@pytest.mark.real_model
def test_the_example_run_answers_on_the_embedded_model(tmp_path):
    _example_file(tmp_path)
    _, run = _commands()
    done = cli(*run, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with closing(sqlite3.connect(tmp_path / "runs" / "mine" / "vreact.db")) as db:
        outcomes = db.execute("SELECT config, task_id, outcome FROM attempts ORDER BY id").fetchall()
    assert sorted((c, t) for c, t, _ in outcomes) == [("N", "q1"), ("VG", "q1")]  # in either order
    assert all(o in ("answer", "abstain") for _, _, o in outcomes)
