"""``vreact demo --family code`` (what ``make demo`` runs second): HumanEval problems, N beside
VG, on Qwen2.5-Coder-0.5B in-process (a test extra), through the real path: the report, what
verification did, and the commands to look further. Where no sandbox can start it is skipped in
one line and exits 0, so ``make demo`` goes on."""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers import cli
from vreact.cli._run import CODE_DEMO
from vreact.records import read_run


def test_without_bubblewrap_the_code_demo_says_why_it_is_skipped_and_exits_0(tmp_path):
    bare = {**os.environ, "PATH": str(tmp_path)}  # no bwrap on it
    done = cli("demo", "--family", "code", "--out", str(tmp_path / "demo"), env=bare)
    assert done.returncode == 0, done.stderr[-2000:]
    *_, skipped, then = done.stdout.strip().splitlines()  # make demo's last words
    assert skipped.startswith("The code part of the demo is skipped: bubblewrap is not installed")
    assert then.startswith("Only the sample questions above ran") and "vreact demo --family code" in then
    assert not (tmp_path / "demo").exists()


@pytest.mark.real_model
def test_the_code_demo_on_a_real_coding_model(tmp_path):
    """One problem (--limit 1), N and VG on the real 0.5B model in the real sandbox."""
    out = tmp_path / "demo"
    env = {**os.environ, "VREACT_CACHE_DIR": str(tmp_path / "cache")}
    done = cli("demo", "--family", "code", "--limit", "1", "--out", str(out), env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "sandbox: bwrap" in done.stdout
    assert "Verification (VG) kept" in done.stdout and "problem(s)" in done.stdout
    assert f"vreact view {out}" in done.stdout
    report = json.loads(cli("report", str(out), "--json").stdout)
    assert report["family"] == "code" and list(report["configs"]) == ["N", "VG"]
    for config in report["configs"].values():
        assert config["executed"] == 1 and config["crash"] == 0
    assert {a.task_id for a in read_run(out).attempts} == {CODE_DEMO[0]}
