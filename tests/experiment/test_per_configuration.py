"""One run compares two models and two verifier sets as configurations: each configuration
names its own models (aliases of a models file, each on its own loopback server) or verifier
set, the run goes through ``vreact experiment`` in a subprocess, and the report's paired test
is computed between them. A models-file entry's own ``base_url`` wins over the experiment's,
which serves only the models without one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import FULL
from tests.fakes.scripted_server import ScriptedServer
from vreact.qa.dataset import load_tasks
from vreact.records import read_run

TASKS = load_tasks(FULL)[:8]  # five answerable, three not
BY_QUESTION = {t.question: t for t in TASKS}


def knowing(body: dict) -> str:
    """A model that knows the gold: it finishes with the answer, citing the supporting
    paragraphs (never retrieved, which the shipped gates reject), or abstains."""
    prompt = body["messages"][-1]["content"]
    task = next(t for q, t in BY_QUESTION.items() if f"Question: {q}" in prompt)
    if not task.answerable:
        return json.dumps(
            {"thought": "", "action": "abstain", "input": "not in the paragraphs", "evidence": []}
        )
    support = [str(p.idx) for p in task.paragraphs if p.is_supporting]
    return json.dumps({"thought": "", "action": "finish", "input": task.answer, "evidence": support})


def abstaining(body: dict) -> str:
    return json.dumps({"thought": "", "action": "abstain", "input": "no idea", "evidence": []})


def vreact(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vreact.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_one_run_compares_two_models_and_two_verifier_sets(tmp_path):
    ids = ", ".join(t.id for t in TASKS)
    (tmp_path / "none.yaml").write_text("kind: verifiers\nname: none\n")  # no gate, no judge
    with (
        ScriptedServer(knowing) as good,
        ScriptedServer(abstaining) as bad,
        ScriptedServer(abstaining) as other,
    ):
        (tmp_path / "models.yaml").write_text(
            "kind: models\nmodels:\n"
            f"  good: {{model: openai/good, base_url: {good.base_url}}}\n"
            f"  bad: {{model: openai/bad, base_url: {bad.base_url}}}\n"
        )
        (tmp_path / "compare.yaml").write_text(
            "kind: experiment\nname: compare\n"
            f"dataset: {{path: {FULL}, task_ids: [{ids}]}}\n"
            "models_file: models.yaml\n"
            f"base_url: {other.base_url}\n"  # only for the model without a server of its own
            "cache: false\nconcurrency: 2\n"
            "configurations:\n"
            "  - {name: N-good, models: {default: good}}\n"
            "  - {name: N-bad, models: {default: bad}}\n"
            "  - {name: N-other, models: {default: openai/other}}\n"
            "  - {name: G-shipped, gates: true, models: {default: good}}\n"
            "  - {name: G-none, gates: true, models: {default: good}, verifiers: none.yaml}\n"
        )
        valid = vreact("validate", "compare.yaml", cwd=tmp_path)
        assert valid.returncode == 0, valid.stdout + valid.stderr
        ran = vreact("experiment", "compare.yaml", "--out", "out", cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr[-3000:]
        served = len(good.requests), len(bad.requests), len(other.requests)
        urls = good.base_url, bad.base_url, other.base_url

    records = read_run(tmp_path / "out")
    models = {(a.config, c.model, c.endpoint) for a in records.attempts for c in a.calls}
    assert models == {
        ("N-good", "openai/good", urls[0]),
        ("N-bad", "openai/bad", urls[1]),
        ("N-other", "openai/other", urls[2]),
        ("G-shipped", "openai/good", urls[0]),
        ("G-none", "openai/good", urls[0]),
    }
    assert served[1] == served[2] == len(TASKS)  # one abstention each; the entries' servers win
    # the shipped gates reject an answer citing paragraphs never retrieved; an empty set does not
    outcomes = {c: {a.outcome for a in records.attempts if a.config == c} for c in ("G-shipped", "G-none")}
    assert outcomes == {"G-shipped": {"abstain"}, "G-none": {"abstain", "answer"}}
    identity = {c["name"]: c for c in records.run.config["configs"]}
    assert identity["G-none"]["resolved"]["verifiers"]["name"] == "none"
    assert identity["N-bad"]["resolved"]["endpoints"]["default"] == urls[1]
    assert "verifiers" not in identity["N-good"]["resolved"]  # it runs the experiment's

    answerable = sum(t.answerable for t in TASKS)
    for baseline, config in (("N-bad", "N-good"), ("G-shipped", "G-none")):
        shown = vreact("report", "out", "--json", "--baseline", baseline, cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        [row] = [c for c in json.loads(shown.stdout)["comparisons"] if c["a"] == config]
        assert (row["b"], row["tasks"]) == (baseline, len(TASKS))
        assert row["pass1_a"] == 1.0 and row["lift1"] == round(answerable / len(TASKS), 4)
        assert 0 < row["p1"] < 0.1  # five tasks moved one way, none the other
