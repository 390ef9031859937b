"""The report of a fixed experiment, pinned before the code is re-laid (issue 11).

The pilot ladder (N, NP, VG, VPG, VPGJ) on 20 real MuSiQue-Full records, 2 attempts, against
the deterministic loopback chaos server: each reply is a function of the request body alone,
so any change to a prompt, a schema, a gate, a route or a figure changes the report. A change
that means to (a new prompt, say) re-records the fixture on purpose and says so:

    VREACT_RECORD_GOLDEN=1 .venv/bin/python -m pytest tests/experiment/test_golden_report.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import FULL, REPO
from tests.fakes.chaos_server import ChaosServer
from vreact.cli import cli

GOLDEN = REPO / "tests" / "data" / "golden" / "pilot_report.json"
MODELS = GOLDEN.parent / "models.yaml"
#: Mostly schema-valid nonsense, some prose, and errors that repeat for the same request.
MIX = {"nonsense": 0.86, "prose": 0.08, "http500": 0.03, "http429": 0.03}


def run_pilot(out: Path, monkeypatch: pytest.MonkeyPatch, *more: str) -> dict[str, Any]:
    monkeypatch.setenv("VREACT_CACHE_DIR", str(out / "cache"))  # no reply from an earlier run
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with ChaosServer(mix=MIX, seed=5, deterministic=True) as server:
        sets = {
            "dataset.path": str(FULL),
            "dataset.limit": "20",
            "models.default": "chaos",  # openai/chaos, priced: the dollars are pinned too
            "models_file": str(MODELS),
            "base_url": server.base_url,
            "attempts": "2",
            "concurrency": "4",
            "limits.max_retries": "1",
            "limits.call_timeout": "60",
        }
        args = ["experiment", "pilot", "--out", str(out / "run"), *more]
        for key, value in sets.items():
            args += ["--set", f"{key}={value}"]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output[-3000:]
    result = CliRunner().invoke(cli, ["report", str(out / "run"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    report.pop("run")
    return report


def differences(golden: Any, current: Any, path: str = "") -> list[str]:
    """Where ``current`` differs from ``golden``; keys only ``current`` has are new fields."""
    if isinstance(golden, dict) and isinstance(current, dict):
        out = [f"{path}.{k}: missing" for k in golden if k not in current]
        for k in golden:
            if k in current:
                out += differences(golden[k], current[k], f"{path}.{k}")
        return out
    if isinstance(golden, list) and isinstance(current, list) and len(golden) == len(current):
        pairs = enumerate(zip(golden, current, strict=True))
        return [d for i, (g, c) in pairs for d in differences(g, c, f"{path}[{i}]")]
    return [] if golden == current else [f"{path}: {golden!r} -> {current!r}"]


@pytest.mark.parametrize("backend", ["local", "ray"])
def test_the_pilot_report_is_unchanged(backend, tmp_path, monkeypatch, request):
    if backend == "ray":
        request.getfixturevalue("ray_cluster")  # the session's local cluster, which the run joins
    report = run_pilot(tmp_path, monkeypatch, "--backend", backend)
    if os.environ.get("VREACT_RECORD_GOLDEN") == "1" and backend == "local":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    golden = json.loads(GOLDEN.read_text())
    # the fixture is not trivial: every configuration ran, and each way an attempt ends occurs
    configs = golden["configs"]
    assert set(configs) == {"N", "NP", "VG", "VPG", "VPGJ"}
    assert all(c["executed"] == 40 for c in configs.values())
    assert sum(c["answered"] for c in configs.values()) and sum(c["crash"] for c in configs.values())
    assert sum(c["rejections"]["gate"] for c in configs.values())
    assert differences(golden, report) == []


def test_a_changed_figure_is_a_difference():
    golden = {"configs": {"VG": {"answered": 3, "rejections": {"gate": 2}}}}
    with_new = {"configs": {"VG": {"answered": 3, "rejections": {"gate": 2}, "new": 1}}}
    assert differences(golden, with_new) == []
    assert differences(golden, {"configs": {"VG": {"answered": 4, "rejections": {"gate": 2}}}}) == [
        ".configs.VG.answered: 3 -> 4"
    ]
    assert differences(golden, {"configs": {"VG": {"answered": 3}}}) == [".configs.VG.rejections: missing"]
