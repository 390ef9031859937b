"""A judge's prompt as a plugin: registered with ``@vreact.judge_prompt``, named in a verifier set
(``judge: {prompt: NAME}``), asked through ``vreact experiment`` in a subprocess against a loopback
server; an unknown name is a FILE:LINE error; a prompt that raises rejects (fail closed) without
calling the judge's model; ``vreact plugins`` lists it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import FULL
from tests.fakes.scripted_server import ScriptedServer
from tests.helpers import attempt, by_role, finish, judged, read, search, verdicts
from vreact.config import Configuration
from vreact.records import read_run
from vreact.spec import VerifierSet
from vreact.verify.gates import _prompts, judge_prompt

NISSEDAL = "2hop__269805_135710"
LAB = textwrap.dedent(
    '''
    import json
    import vreact


    @vreact.judge_prompt("lab_terse")
    def terse(kind, context):
        """The lab's judge: one line of instructions, the artifact as JSON."""
        return [
            {"role": "system", "content": f"LAB JUDGE ({kind}). Reply in JSON."},
            {"role": "user", "content": json.dumps(context["artifact"])},
        ]
    '''
)
SOLVE = [
    {"thought": "", "action": "search", "input": "Nissedal", "evidence": []},
    {"thought": "", "action": "read", "input": "10", "evidence": []},
    {"thought": "", "action": "read", "input": "6", "evidence": []},
    {"thought": "", "action": "finish", "input": "north", "evidence": ["10", "6"]},
]
ACCEPT = json.dumps({"reason": "ok", "decision": "accept", "confidence": 0.9})


def vreact(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vreact.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def lab_files(tmp_path: Path, base_url: str, prompt: str = "lab_terse") -> Path:
    (tmp_path / "lab_prompts.py").write_text(LAB)
    (tmp_path / "lab_verifiers.yaml").write_text(
        f"plugins: [./lab_prompts.py]\nkind: verifiers\nname: lab\nR3:\n  judge: {{prompt: {prompt}}}\n"
    )
    experiment = tmp_path / "lab.yaml"
    experiment.write_text(
        "kind: experiment\nname: lab\n"
        f"dataset: {{path: {FULL}, task_ids: [{NISSEDAL}]}}\n"
        "verifiers: lab_verifiers.yaml\n"
        "configurations:\n  - {name: J, judges: true}\n"
        f"models: {{default: openai/lab}}\nbase_url: {base_url}\ncache: false\nconcurrency: 1\n"
    )
    return experiment


def test_a_lab_judge_prompt_is_what_the_judge_is_asked(tmp_path):
    steps = iter(SOLVE)

    def reply(body: dict) -> str:
        lab = body["messages"][0]["content"].startswith("LAB JUDGE")
        return ACCEPT if lab else json.dumps(next(steps))

    with ScriptedServer(reply) as server:
        experiment = lab_files(tmp_path, server.base_url)
        ran = vreact("experiment", str(experiment), "--out", "out", cwd=tmp_path)
        asked = [r["messages"][0]["content"] for r in server.requests]
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert [s for s in asked if s.startswith("LAB JUDGE")] == ["LAB JUDGE (L1). Reply in JSON."]
    [a] = read_run(tmp_path / "out").attempts
    judge = [v for v in a.verdicts if v.source == "judge"]
    assert (a.outcome, [(v.verifier, v.decision) for v in judge]) == ("answer", [("R3", "accept")])
    assert judge[0].args == {"min_confidence": 0.7, "prompt": "lab_terse"}  # the verdict says which
    listed = vreact("plugins", "--plugin", "lab_prompts", cwd=tmp_path)
    assert listed.returncode == 0 and "prompt   lab_terse" in listed.stdout


def test_an_unknown_prompt_is_one_line_naming_its_file_and_line(tmp_path):
    lab_files(tmp_path, "http://127.0.0.1:9/v1", prompt="lab_terce")
    checked = vreact("validate", "lab_verifiers.yaml", cwd=tmp_path)
    assert checked.returncode == 2
    assert checked.stderr.strip().splitlines() == [
        "lab_verifiers.yaml:5: R3.judge.prompt: unknown judge prompt 'lab_terce'; did you mean 'lab_terse'?"
        " (known: code_review, default, lab_terse)"
    ]


def test_a_prompt_that_raises_rejects_without_calling_the_judge(
    store, spec, roles, task_nissedal, monkeypatch
):
    monkeypatch.setattr(_prompts.PROMPTS, "_items", dict(_prompts.PROMPTS.registered()))  # for this test only

    @judge_prompt("lab_broken")
    def broken(kind, context):
        raise KeyError("paired_level")

    verifiers = VerifierSet.model_validate({"name": "broken", "R3": {"judge": {"prompt": "lab_broken"}}})
    model = by_role(
        executor=[search("Nissedal"), read("10"), read("6"), finish("north", ["10", "6"])] * 3,
        judge=[judged()] * 20,
    )
    outcome, row, _ = attempt(
        Configuration(name="J", judges=True), task_nissedal, model, store, spec, verifiers, roles
    )
    rejected = [v for v in verdicts(store, row["id"]) if v["verifier"] == "R3"]
    assert {(v["source"], v["decision"], v["cause"]) for v in rejected} == {
        ("judge", "reject", "verifier_error")
    }
    assert "KeyError" in rejected[0]["detail"]
    assert outcome.kind == "abstain" and outcome.level == "L1"  # R3's budget spent on rejects
    calls = list(store.query("select role from model_calls where attempt_id = ?", [row["id"]]))
    assert {c["role"] for c in calls} == {"executor"}  # R1's judge has no judge here; R3's was never called
