"""Open-corpus retrieval end to end: ``vreact experiment`` with ``dataset.corpus`` against a
loopback server whose executor replies follow a script, the same script in a task's own
paragraphs; support F1, the gates and the retrieval ceiling on corpus ids."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.conftest import ANS, FULL, MUSIQUE
from tests.fakes.scripted_server import ScriptedServer
from vreact.cli import cli
from vreact.qa.tools import Corpus, OpenCorpus
from vreact.records import read_run

CORPUS = MUSIQUE / "musique_ans_train_100_corpus.json"
#: Two 2-hop tasks: (its own gold ids, the corpus's, the answer). The script reads both gold
#: paragraphs of the first and only the first of the second, so the ceiling is 3 of 4.
TASKS = {
    "2hop__205146_62031": (["3", "11"], ["63", "71"], "Victoria Falls"),
    "2hop__468258_495107": (["17", "18"], ["173", "174"], "Norway"),
}
READS = {"2hop__205146_62031": 2, "2hop__468258_495107": 1}


def questions() -> dict[str, str]:
    out = {}
    for line in ANS.read_text().splitlines():
        record = json.loads(line)
        if record["id"] in TASKS:
            out[record["question"]] = record["id"]
    return out


def executor(corpus: bool):
    """Search a word no paragraph has, read the gold paragraphs the plan says, finish citing them."""
    asked = questions()

    def reply(body: dict[str, Any]) -> str:
        prompt = "\n".join(m["content"] for m in body["messages"])
        task = next(t for q, t in asked.items() if q in prompt)
        own, ids, answer = TASKS[task]
        reads = (ids if corpus else own)[: READS[task]]
        if '"zzqx"' not in prompt:
            step = {"action": "search", "input": "zzqx"}
        else:
            todo = [pid for pid in reads if f'read "{pid}"' not in prompt]
            step = {"action": "read", "input": todo[0]} if todo else {"action": "finish", "input": answer}
        return json.dumps({"thought": "", "evidence": reads if step["action"] == "finish" else [], **step})

    return reply


def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corpus: bool, name: str) -> Path:
    result = invoke(tmp_path, monkeypatch, corpus, name)
    assert result.exit_code == 0, result.output
    return tmp_path / name


def invoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corpus: bool, name: str) -> Result:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    out = tmp_path / name
    with ScriptedServer(executor(corpus)) as server:
        experiment = {
            "kind": "experiment",
            "name": name,
            "dataset": {
                "path": str(ANS),
                "task_ids": list(TASKS),
                **({"corpus": str(CORPUS)} if corpus else {}),
            },
            "configurations": [{"name": "N"}, {"name": "VG", "guards": True, "gates": True}],
            "models": {"default": "openai/scripted"},
            "base_url": server.base_url,
            "attempts": 2,
            "concurrency": 4,
        }
        path = tmp_path / f"{name}.yaml"
        path.write_text(json.dumps(experiment))
        return CliRunner().invoke(cli, ["experiment", str(path), "--out", str(out)])


def report(out: Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["report", str(out), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many indexes were built: a task's own (rank-bm25), and corpora (bm25s)."""
    n = {"own": 0, "corpus": 0}
    own, whole = Corpus.__init__, OpenCorpus.__init__

    def own_init(self: Corpus, *a: Any, **k: Any) -> None:
        n["own"] += 1
        own(self, *a, **k)

    def corpus_init(self: OpenCorpus, *a: Any, **k: Any) -> None:
        n["corpus"] += 1
        whole(self, *a, **k)

    monkeypatch.setattr(Corpus, "__init__", own_init)
    monkeypatch.setattr(OpenCorpus, "__init__", corpus_init)
    return n


def test_corpus_mode_end_to_end_with_the_real_corpus(tmp_path, monkeypatch, builds):
    out = run(tmp_path, monkeypatch, corpus=True, name="corpus")
    assert builds == {"own": 0, "corpus": 1}  # one index for the run's 8 attempts
    records = read_run(out)
    assert records.run is not None
    assert (
        records.run.config["corpus"]["paragraphs"] == 1890
        and len(records.run.config["corpus"]["sha256"]) == 64
    )
    assert {t: r.support for t, r in records.tasks.items()} == {t: v[1] for t, v in TASKS.items()}
    assert len(records.attempts) == 8 and all(a.outcome != "crash" for a in records.attempts)
    for a in records.attempts:
        searches = [s for s in a.steps if s.action == "search"]
        assert searches and all(s.observation == "no results; try other words" for s in searches)
        reads = [s for s in a.steps if s.action == "read"]
        assert reads and all(s.observation.startswith(f"[{s.input}] ") for s in reads)  # corpus ids
    plain = [a for a in records.attempts if a.config == "N"]
    assert all(a.outcome == "answer" and a.evidence == TASKS[a.task_id][1][: READS[a.task_id]] for a in plain)
    # VG's gates run on corpus ids: the two-paragraph answer passes, the one-paragraph answer
    # never does (R3 wants a multi-hop answer to cite two)
    vg = {a.task_id: a for a in records.attempts if a.config == "VG" and a.attempt_index == 0}
    assert vg["2hop__205146_62031"].outcome == "answer"
    assert vg["2hop__205146_62031"].evidence == ["63", "71"]
    assert vg["2hop__468258_495107"].outcome == "abstain"
    r = report(out)["configs"]
    assert r["N"]["support_f1"] == round((1 + 2 / 3) / 2, 3) and r["N"]["em"] == 1.0
    assert (r["N"]["retrieval_ceiling"], r["N"]["all_gold_retrieved"]) == (0.75, 0.5)
    assert (r["VG"]["retrieval_ceiling"], r["VG"]["all_gold_retrieved"]) == (0.75, 0.5)
    assert r["N"]["by_hops"]["2"]["retrieval_ceiling"] == 0.75


def test_a_tasks_own_paragraphs_give_the_same_figures_with_one_index_per_task(tmp_path, monkeypatch, builds):
    out = run(tmp_path, monkeypatch, corpus=False, name="own")
    assert builds == {"own": 2, "corpus": 0}  # one per task, for its 4 attempts
    records = read_run(out)
    assert records.run is not None and "corpus" not in records.run.config
    assert {t: r.support for t, r in records.tasks.items()} == {t: v[0] for t, v in TASKS.items()}
    for a in records.attempts:  # a task's own search shows its first 3 paragraphs, whatever the words
        assert all(s.observation.startswith("[0] ") for s in a.steps if s.action == "search")
    r = report(out)["configs"]
    assert r["N"]["support_f1"] == round((1 + 2 / 3) / 2, 3) and r["N"]["em"] == 1.0
    assert (r["N"]["retrieval_ceiling"], r["N"]["all_gold_retrieved"]) == (0.75, 0.5)
    result = CliRunner().invoke(cli, ["report", str(out)])
    assert result.exit_code == 0 and "ceiling" in result.output


def test_a_bad_corpus_is_a_one_line_error_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"title": "a", "text": "b"},\n {"title": "c", "txt": "d"}]')
    args = ["experiment", "pilot", "--set", f"dataset.path={ANS}", "--set", "models.default=openai/x"]
    result = CliRunner().invoke(cli, [*args, "--set", f"dataset.corpus={bad}", "--out", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert result.stderr == f"error: {bad}:2: [1].text: missing\n"
    missing = [
        "--set",
        f"dataset.path={FULL}",
        "--set",
        f"dataset.corpus={CORPUS}",
        "--out",
        str(tmp_path / "f"),
    ]
    result = CliRunner().invoke(cli, ["experiment", "pilot", "--set", "models.default=openai/x", *missing])
    assert result.exit_code == 2 and "is not in the corpus" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_folder_keeps_one_retrieval_mode(tmp_path, monkeypatch, builds):
    """Its tasks table holds one support list per task: a corpus run beside an own-paragraphs
    run is refused in one line, and the first run's support ids stay."""
    out = run(tmp_path, monkeypatch, corpus=False, name="one")
    refused = invoke(tmp_path, monkeypatch, corpus=True, name="one")
    assert refused.exit_code == 2 and refused.stderr.splitlines()[-1] == (
        f"error: {out}: run 1 searched the tasks' own paragraphs; this one searches the corpus"
        f" {CORPUS}: give it another --out"
    )
    records = read_run(out)
    assert {t: r.support for t, r in records.tasks.items()} == {t: v[0] for t, v in TASKS.items()}
    assert len(records.attempts) == 8
