"""The gsm8k family through the real path: N, VG and VG with agreement among 5 on GSM8K's first
train problems, with Qwen2.5-Coder-0.5B in-process and behind llama.cpp's OpenAI-compatible server
on loopback, its programs run in the real sandbox. A small model's answers vary: what is checked is
that every attempt is accounted for (an answer or an abstention naming its level, none crashed),
every answer is scored against the gold number, each agreeing attempt records its 5 candidates'
fates, and the run records the data file's sha256."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from tests.helpers import cli
from tests.model.test_real_server import serve
from vreact.model._llamacpp import resolve_gguf
from vreact.records import read_run

pytestmark = pytest.mark.real_model

TRAIN = Path(__file__).parents[1] / "data" / "gsm8k" / "train_0_199.jsonl"


def accounted(out: Path, problems: int) -> None:
    records = read_run(out)
    by_config: dict[str, list] = {}
    for a in records.attempts:
        by_config.setdefault(a.config, []).append(a)
    assert sorted(by_config) == ["N", "VG", "VG-agree-5"]
    assert all(len(attempts) == problems for attempts in by_config.values())
    for a in records.attempts:
        assert a.outcome in ("answer", "abstain"), (a.config, a.task_id, a.outcome, a.error)
        if a.outcome == "answer":
            assert a.score is not None and a.score.correct in (True, False)
        else:
            assert a.abstain_level and a.abstain_cause
    for a in by_config["VG-agree-5"]:  # its 5 candidates, each made and its fate recorded
        assert a.agreement is not None and len(a.agreement.candidates) == 5, a.task_id
    digest = hashlib.sha256(TRAIN.read_bytes()).hexdigest()
    assert records.provenance and all(digest in json.dumps(p) for p in records.provenance.values())
    report = json.loads(cli("report", str(out), "--json").stdout)
    assert report["family"] == "gsm8k" and all(
        "match" in c["family_metrics"] for c in report["configs"].values() if c["answered"]
    )


def run(out: Path, tmp_path: Path, limit: int, *extra: str) -> None:
    env = {**os.environ, "VREACT_CACHE_DIR": str(tmp_path / "cache")}
    done = cli(
        "experiment", "gsm8k", "--set", f"dataset.path={TRAIN}", "--set", f"dataset.limit={limit}",
        *extra, "--out", str(out), env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]


def test_in_process(tmp_path):
    out = tmp_path / "run"
    run(out, tmp_path, 2)  # the experiment's default model: the 0.5B in-process
    accounted(out, 2)


def test_behind_llama_cpp_server(tmp_path):
    model = resolve_gguf("qwen2.5-coder-0.5b")
    with serve(tmp_path / "server.log", n_ctx=4096, model=model) as url:
        out = tmp_path / "run"
        run(out, tmp_path, 1, "--set", "models.default=openai/qwen2.5-coder-0.5b", "--set", f"base_url={url}")
    accounted(out, 1)
