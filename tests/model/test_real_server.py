"""The real path: SmolLM2 behind llama-cpp-python's OpenAI-compatible server, and in-process.

Slow (minutes on two cores): marked ``real_model``; deselect with ``-m "not real_model"``.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import free_port
from tests.model.test_chaos import FULL, check_accounting, rows, run_cli
from tests.processes import start, stop
from tests.report.test_html import browse, by_id, dom
from vreact.cli import cli
from vreact.model._llamacpp import smollm2_path

pytestmark = pytest.mark.real_model

STARTUP_S = 120
#: Each server's log, by its base URL.
LOGS: dict[str, Path] = {}


def _tail(log: Path, n: int = 40) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-n:]) if log.exists() else ""


@contextmanager
def serve(log: Path, n_ctx: int = 8192, model: Path | None = None) -> Iterator[str]:
    """``python -m llama_cpp.server`` with SmolLM2 (or the GGUF file ``model``) on a free loopback
    port; yields its base URL. Started through tests.processes: it dies with pytest however pytest
    ends (one started with a plain Popen outlived its SIGTERMed pytest by an hour)."""
    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model or smollm2_path())]
    cmd += ["--n_ctx", str(n_ctx), "--host", "127.0.0.1", "--port", str(port)]
    base_url = f"http://127.0.0.1:{port}/v1"
    LOGS[base_url] = log
    # the server logs a lot: a file, never a pipe nobody reads (it would fill and block)
    with open(log, "wb") as log_file:
        proc = start(cmd, stdout=log_file, stderr=log_file)
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{_tail(log)}")
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server not answering after {STARTUP_S}s:\n{_tail(log)}")
            time.sleep(0.5)
        yield base_url
    finally:
        stop(proc, grace=15)


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve(tmp_path_factory.mktemp("llama_server") / "server.log") as url:
        yield url


def test_run_against_llama_cpp_server(llama_server: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result, elapsed = run_cli(FULL, "N,VG", "openai/smollm2", out, 2, llama_server)
    print(f"llama_cpp.server run (N,VG x 2 tasks): {elapsed:.1f}s")
    assert result.exit_code == 0, result.output
    assert result.exception is None, result.exception

    report = check_accounting(out, ["N", "VG"], 2)
    assert report["VG"]["crash"] == 0, rows(out / "vreact.db", "select * from attempts")
    calls = rows(
        out / "vreact.db", "select a.config, m.* from model_calls m join attempts a on a.id = m.attempt_id"
    )
    assert {c["config"] for c in calls} == {"N", "VG"}
    vg = [c for c in calls if c["config"] == "VG"]
    # the server declares no json_schema (its /openapi.json): it is asked for json_object from the
    # first request, so it never answers a 500 with a traceback in its log; said once
    assert all(c["status"] == "ok" for c in vg), [c for c in vg if c["status"] != "ok"]
    log = LOGS[llama_server].read_text(errors="replace")
    assert "Traceback" not in log and " 500 " not in log, _tail(LOGS[llama_server])
    said = [line for line in result.stderr.splitlines() if line.startswith("note: ")]
    assert said == [
        f"note: {llama_server} takes response_format text, json_object (its /openapi.json), not"
        " json_schema: asking it for json_object with the schema"
    ], result.stderr
    assert all(c["prompt_tokens"] > 0 for c in calls if c["status"] == "ok"), calls
    # why each reply stopped, as the server said it (a request served by the cache says it too)
    assert {c["stop_reason"] for c in calls if c["status"] == "ok"} <= {"stop", "length"}, calls


def test_run_in_process_llamacpp(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result, elapsed = run_cli("sample", "VG", "llamacpp/smollm2-135m", out, 1)
    print(f"in-process llamacpp run (VG x 1 task): {elapsed:.1f}s")
    assert result.exit_code == 0, result.output
    assert result.exception is None, result.exception

    report = check_accounting(out, ["VG"], 1)
    assert report["VG"]["crash"] == 0, rows(out / "vreact.db", "select * from attempts")
    calls = rows(out / "vreact.db", "select * from model_calls")
    assert calls
    assert all(c["status"] == "ok" and c["prompt_tokens"] > 0 for c in calls), calls
    assert {c["stop_reason"] for c in calls} <= {"stop", "length"}, calls  # llama.cpp's own word


def test_experiment_with_attempts_report_and_page(llama_server: str, tmp_path: Path) -> None:
    """The real path of an experiment: two seeded attempts in flight at once against the real
    server, the Pass@k report, and the HTML page loaded in Chromium."""
    out = tmp_path / "exp"
    sets = {
        "dataset.path": str(FULL),
        "dataset.limit": "1",
        "models.default": "openai/smollm2",
        "base_url": llama_server,
        "attempts": "2",
        "concurrency": "2",
        "configurations.2.budgets.step_cap": "3",  # VG, kept short: 3 steps per try
    }
    args = ["experiment", "pilot", "--configs", "VG", "--out", str(out)]
    for key, value in sets.items():
        args += ["--set", f"{key}={value}"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output

    attempts = rows(out / "vreact.db", "select * from attempts order by attempt_index")
    assert [(a["attempt_index"], a["seed"]) for a in attempts] == [(0, 0), (1, 1)]
    assert all(a["outcome"] in ("answer", "abstain") for a in attempts), attempts
    report = json.loads(CliRunner().invoke(cli, ["report", str(out), "--json"]).stdout)
    assert report["configs"]["VG"]["pass"]["k"] == 2

    page = CliRunner().invoke(cli, ["view", str(out)])
    assert page.exit_code == 0, page.output
    page_url = (out / "report.html").as_uri() + f"#attempt-{attempts[0]['id']}"
    html, console = browse(page_url, tmp_path / "p", "--dump-dom")
    assert console == []
    first = attempts[0]["id"]
    verdicts = rows(out / "vreact.db", "select * from verdicts where attempt_id = ? order by seq", [first])
    assert verdicts  # VG's gates decided something
    drawn = by_id(dom(html), f"attempt-{first}").select("verdict")
    assert sorted(int(v.attrs["data-seq"]) for v in drawn) == [v["seq"] for v in verdicts]


@pytest.mark.parametrize("fmt", ["hotpotqa", "2wiki"])
def test_hotpotqa_and_2wiki_runs_through_the_server_score_as_the_official_scripts_do(
    llama_server: str, tmp_path: Path, fmt: str
) -> None:
    """``vreact run`` with N and VG on the repository's real records against the real server,
    then the report's official metrics beside the dataset's own script run on what ``vreact
    report --predictions`` wrote: the same figures (2Wiki's without aliases)."""
    from tests.tasks.test_formats import FILES, _official

    out = tmp_path / "run"
    args = ["run", "--dataset", str(FILES[fmt]), "--format", fmt, "--limit", "2", "--configs", "N,VG"]
    args += ["--model", "openai/smollm2", "--base-url", llama_server, "--concurrency", "1", "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    check_accounting(out, ["N", "VG"], 2)
    report = json.loads(CliRunner().invoke(cli, ["report", str(out), "--json"]).stdout)
    written = CliRunner().invoke(cli, ["report", str(out), "--predictions", str(tmp_path / "pred")])
    assert written.exit_code == 0, written.output
    records = [json.loads(line) for line in FILES[fmt].read_text(encoding="utf-8").splitlines()[:2]]
    names = ("em", "f1", "sp_em", "sp_f1", *(("joint_em", "joint_f1") if fmt == "hotpotqa" else ()))
    for config in ("N", "VG"):
        assert report["configs"][config]["crash"] == 0
        pred = json.loads((tmp_path / "pred" / f"{config}.json").read_text(encoding="utf-8"))
        official = _official(fmt, records, pred, tmp_path)
        mine = report["configs"][config]["family_metrics"]
        for name in names:
            assert mine[name] == pytest.approx(official[name], abs=0.00006), (config, name)
        if fmt == "2wiki":
            assert "joint_f1" not in mine and official["evi_f1"] == 0  # not predicted


def test_candidates_against_llama_cpp_server(llama_server: str, tmp_path: Path) -> None:
    """k candidates through the real server: question answering's majority among 3 (gates off),
    and code's agreement among 2 on HumanEval/0 with the tester's call, the programs compared in
    the real sandbox. Whatever the small model writes, every attempt is accounted for and its
    candidates, groups and inputs are in the records."""
    experiment = tmp_path / "k.yaml"
    experiment.write_text(
        json.dumps(
            {
                "kind": "experiment",
                "name": "k",
                "dataset": {"path": str(FULL), "limit": 1},
                "configurations": [{"name": "A3", "agreement": {"k": 3}, "budgets": {"step_cap": 3}}],
                "models": {"default": "openai/smollm2"},
                "base_url": llama_server,
                "cache": False,
            }
        )
    )
    code = tmp_path / "code.yaml"
    code.write_text(
        json.dumps(
            {
                "kind": "experiment",
                "name": "c",
                "dataset": {"family": "code", "path": "humaneval", "task_ids": ["HumanEval/0"]},
                "configurations": [{"name": "C2", "gates": True, "agreement": {"k": 2, "inputs": 20}}],
                "models": {"default": "openai/smollm2"},
                "base_url": llama_server,
                "calls": {"executor": {"max_tokens": 200}, "tester": {"max_tokens": 200}},
                "cache": False,
            }
        )
    )
    for file, name, out in ((experiment, "A3", tmp_path / "qa"), (code, "C2", tmp_path / "code")):
        result = CliRunner().invoke(cli, ["experiment", str(file), "--out", str(out)])
        assert result.exit_code == 0, result.output
        [attempt] = rows(out / "vreact.db", "select * from attempts")
        assert attempt["outcome"] in ("answer", "abstain"), attempt  # accounted, never a crash
        [row] = rows(out / "vreact.db", "select * from agreements")
        assert row["k"] == (3 if name == "A3" else 2) and row["selected"] == "agree"
        fates = json.loads(row["candidates"])
        assert len(fates) == row["k"], fates
        if attempt["outcome"] == "abstain":
            assert attempt["abstain_cause"].startswith(("agreement:", "budget")), attempt
        calls = rows(out / "vreact.db", "select role, status from model_calls")
        assert calls and all(c["status"] == "ok" for c in calls), calls
    roles = {c["role"] for c in rows(tmp_path / "code" / "vreact.db", "select role from model_calls")}
    kept = {"answer", "stated"} & set(json.loads(row["candidates"]).values())
    assert ("tester" in roles) == bool(kept)  # asked when a candidate reached the comparison
