"""Acceptance: a run against an OpenAI-compatible server that misbehaves on purpose (schema-valid
nonsense, prose, HTTP 500, HTTP 429) still ends every attempt in exactly one accounted outcome.

The runs go through the CLI (``vreact run`` then ``vreact report --json``) on real MuSiQue
records, and the records in ``vreact.db`` are checked against the report.
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.conftest import FULL
from tests.fakes.chaos_server import KINDS, ChaosServer
from vreact.cli import cli

LEVELS = {"L1", "L2", "L3", "declined", "cap"}
#: No key and no base URL from the environment: the run must work from --base-url alone.
NO_OPENAI_ENV: dict[str, str | None] = {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None}


def vreact(*args: str) -> Result:
    """``vreact ARGS`` in-process, with no OpenAI key or base URL in the environment."""
    return CliRunner().invoke(cli, list(args), env=NO_OPENAI_ENV)


def run_args(
    dataset: Path | str, configs: str, model: str, out: Path, limit: int, base_url: str | None, *extra: str
) -> list[str]:
    """The arguments of a sequential ``vreact run``: the seeded servers' replies follow the order
    of requests, so concurrent attempts would meet a different mix each run."""
    args = ["run", "--dataset", str(dataset), "--configs", configs, "--model", model]
    args += ["--limit", str(limit), "--out", str(out), "--concurrency", "1"]
    return args + (["--base-url", base_url] if base_url else []) + list(extra)


def run_cli(
    dataset: Path | str, configs: str, model: str, out: Path, limit: int, base_url: str | None = None
) -> tuple[Result, float]:
    """``vreact run``; returns the result and the wall time in seconds."""
    started = time.perf_counter()
    result = vreact(*run_args(dataset, configs, model, out, limit, base_url))
    return result, time.perf_counter() - started


def rows(db: Path, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    with closing(sqlite3.connect(db)) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute(sql, params or [])]


def check_accounting(out: Path, configs: list[str], executed: int) -> dict[str, Any]:
    """The accounting invariants, from the records and from ``vreact report --json``;
    returns the report's per-configuration dicts."""
    result = vreact("report", str(out), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    db = out / "vreact.db"
    run_id = report["run"]
    assert rows(db, "select status from runs where id = ?", [run_id]) == [{"status": "completed"}]
    assert rows(db, "select id from attempts where outcome = 'running'") == []
    assert list(report["configs"]) == configs

    for name in configs:
        r = report["configs"][name]
        attempts = rows(db, "select * from attempts where run_id = ? and config = ?", [run_id, name])
        by_outcome = {k: [a for a in attempts if a["outcome"] == k] for k in ("answer", "abstain", "crash")}
        # every attempt ends in exactly one outcome, once per task
        assert len(attempts) == r["executed"] == executed, name
        assert r["answered"] + r["abstained"] + r["crash"] == r["executed"], (name, r)
        assert sum(len(v) for v in by_outcome.values()) == executed, attempts
        assert len({a["task_id"] for a in attempts}) == executed
        assert (len(by_outcome["answer"]), len(by_outcome["abstain"]), len(by_outcome["crash"])) == (
            r["answered"],
            r["abstained"],
            r["crash"],
        ), (name, r)
        assert r["scoreable"] == executed - r["crash"]
        # abstentions name exactly one level, the component and the cause
        assert set(r["abstained_by_level"]) == LEVELS
        assert sum(r["abstained_by_level"].values()) == r["abstained"], (name, r)
        for a in by_outcome["abstain"]:
            assert a["abstain_level"] in LEVELS, a
            assert a["abstain_component"], a
            assert a["abstain_cause"], a
            assert not a["error"], a
        for level in LEVELS:
            n = sum(a["abstain_level"] == level for a in by_outcome["abstain"])
            assert r["abstained_by_level"][level] == n, (name, level, r)
        # crashes say why; answers and crashes name no abstention level
        for a in by_outcome["crash"]:
            assert a["error"], a
        for a in by_outcome["answer"] + by_outcome["crash"]:
            assert a["abstain_level"] is None, a
    return dict(report["configs"])


@pytest.mark.timeout(300)
@pytest.mark.parametrize("reject_json_schema", [False, True], ids=["json_schema", "json_object"])
def test_chaos_run_accounts_for_every_attempt(tmp_path: Path, reject_json_schema: bool) -> None:
    out = tmp_path / "run"
    with ChaosServer(reject_json_schema=reject_json_schema) as server:
        url = server.base_url
        result, elapsed = run_cli(FULL, "N,VG", "openai/chaos", out, 10, url)
    print(
        f"chaos run (reject_json_schema={reject_json_schema}): {elapsed:.1f}s, "
        f"{len(server.requests)} requests, {server.counts}"
    )
    assert result.exit_code == 0, result.output
    assert result.exception is None, result.exception
    # The server asks for 1 ms between retries (retry-after-ms), so the run is quick.
    assert elapsed < 60, f"chaos run took {elapsed:.0f}s"

    # every kind of misbehaviour was served
    assert all(server.counts[k] > 0 for k in KINDS), server.counts
    report = check_accounting(out, ["N", "VG"], 10)
    assert all(r["executed"] == 10 for r in report.values())

    formats = [(q.get("response_format") or {}).get("type") for q in server.requests]
    said = [line for line in result.stderr.splitlines() if line.startswith("note: ")]
    if not reject_json_schema:
        # transient 500/429 on the first call must not switch the format, nor say anything
        assert set(formats) == {"json_schema"}, formats
        assert said == [], said
        return
    # the fallback is said once, naming the server and what its refusal was
    assert said == [
        f"note: {url} refused response_format json_schema (HTTP 400): asking it for"
        " json_object with the schema from now on (a models file's structured_output: json_object"
        " skips the first try)"
    ], result.stderr
    # one rejected json_schema request, then json_object with the same schema from then on
    first, second = server.requests[0], server.requests[1]
    assert formats[0] == "json_schema"
    assert set(formats[1:]) == {"json_object"}, formats
    assert second["response_format"]["schema"] == first["response_format"]["json_schema"]["schema"]
    for q in server.requests[1:]:
        schema = q["response_format"]["schema"]
        assert isinstance(schema, dict) and schema.get("properties"), q["response_format"]


@pytest.mark.timeout(120)
def test_prose_only_fails_closed_under_vg_and_hits_the_cap_under_n(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with ChaosServer(script=["prose"] * 4) as server:
        result, elapsed = run_cli(FULL, "N,VG", "openai/chaos", out, 2, server.base_url)
    print(f"prose-only run: {elapsed:.1f}s, {len(server.requests)} requests")
    assert result.exit_code == 0, result.output
    assert server.counts == {"nonsense": 0, "prose": len(server.requests), "http500": 0, "http429": 0}

    report = check_accounting(out, ["N", "VG"], 2)
    for name, level in (("N", "cap"), ("VG", "L3")):
        assert report[name]["crash"] == 0
        assert report[name]["abstained"] == 2
        assert report[name]["abstained_by_level"][level] == 2, report[name]

    db = out / "vreact.db"
    vg = rows(db, "select * from attempts where config = 'VG'")
    assert [a["abstain_level"] for a in vg] == ["L3", "L3"]
    assert all("format" in a["abstain_cause"] for a in vg), vg
    # fail closed: every VG step was rejected by the parse gate, none accepted
    verdicts = rows(
        db, "select v.* from verdicts v join attempts a on a.id = v.attempt_id where a.config = 'VG'"
    )
    assert verdicts, "VG recorded no verdicts"
    assert {(v["decision"], v["check_name"], v["cause"]) for v in verdicts} == {
        ("reject", "parses", "format")
    }
    n = rows(db, "select * from attempts where config = 'N'")
    assert [a["abstain_level"] for a in n] == ["cap", "cap"]


LADDER = ["N", "NP", "VG", "VPG", "VPGJ"]


@pytest.mark.timeout(300)
def test_the_five_configurations_account_for_every_attempt(tmp_path: Path) -> None:
    """The pilot ladder on 20 records against the misbehaving server: every attempt
    accounted, crashes only from provider errors, every abstention under one level."""
    out = tmp_path / "run"
    with ChaosServer(seed=3) as server:
        result, elapsed = run_cli(FULL, ",".join(LADDER), "openai/chaos", out, 20, server.base_url)
    print(f"five-configuration chaos run: {elapsed:.1f}s, {len(server.requests)} requests, {server.counts}")
    assert result.exit_code == 0, result.output
    report = check_accounting(out, LADDER, 20)
    db = out / "vreact.db"
    for a in rows(db, "select * from attempts where outcome = 'crash'"):
        # the provider's 500/429 after the SDK's retries, never a bug of ours
        assert a["error"].startswith("ModelError: ") and (
            "Error code: 500" in a["error"] or "Error code: 429" in a["error"]
        ), a["error"]
    planned = rows(db, "select distinct role from model_calls where role = 'planner'")
    judged = rows(db, "select distinct role from model_calls where role = 'judge'")
    assert planned and judged  # the planner and judges really ran
    assert all(r["executed"] == 20 for r in report.values())


@pytest.mark.timeout(120)
def test_each_role_may_name_its_own_model(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with ChaosServer(mix={"nonsense": 1.0}) as server:
        result = vreact(
            "run",
            "--dataset",
            str(FULL),
            "--configs",
            "VPGJ",
            "--model",
            "openai/brain",
            "--role-model",
            "judge=openai/small-judge",
            "--limit",
            "2",
            "--out",
            str(out),
            "--base-url",
            server.base_url,
            "--concurrency",
            "1",  # the seeded mix in request order, which reaches a judge
        )
    assert result.exit_code == 0, result.output
    by_role = {
        (r["role"], r["model"]) for r in rows(out / "vreact.db", "select role, model from model_calls")
    }
    assert ("judge", "openai/small-judge") in by_role
    assert {m for role, m in by_role if role != "judge"} == {"openai/brain"}
    assert {q["model"] for q in server.requests} == {"brain", "small-judge"}
