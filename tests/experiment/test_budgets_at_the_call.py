"""Budgets that hold at every model call (issue 33): the attempt's tokens and wall clock, for
every configuration of the ladder and of DeReAct, against a slow loopback server through the real
HTTP path. Tokens never exceed the budget by more than the last call's prompt; the wall clock
never by more than a second; each stop is a ``budget`` verdict (verified configurations) or an
abstention with that cause (those that verify nothing), and the attribution table counts it."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from tests.conftest import FULL, assert_records_whole
from tests.fakes._loopback import JSON
from tests.fakes.chaos_server import ChaosServer, _completion
from vreact.cli import cli

LADDER = [
    {"name": "N"},
    {"name": "NP", "planner": True},
    {"name": "VG", "guards": True, "gates": True},
    {"name": "VPG", "planner": True, "guards": True, "gates": True},
    {"name": "VPGJ", "planner": True, "guards": True, "gates": True, "judges": True},
]
DEREACT = [
    {"name": "react"},
    {"name": "dereact", "critic": True, "context_manager": True, "budgets": {"r1": 1}},
    {"name": "ablation_a", "context_manager": True, "budgets": {"r1": 1}},
    {"name": "ablation_b", "critic": True, "budgets": {"r1": 1}},
    {"name": "VG+dereact", "gates": True, "guards": True, "critic": True, "context_manager": True},
]
UNVERIFIED = {"N", "NP", "react"}
TOKENS, WALL_CLOCK = 1000, 1.5


class Searching(ChaosServer):
    """An executor that searches and never finishes (another query each step, so no loop guard
    stops it); every other role's reply is schema-valid nonsense. Replies honour max_tokens."""

    def __init__(self, latency: float) -> None:
        super().__init__(
            mix={"nonsense": 1.0}, seed=3, deterministic=True, latency=latency, honour_max_tokens=True
        )

    def handle_completion(self, body: JSON, authorization: str | None = None) -> Any:
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}
        if "action" not in schema.get("properties", {}):
            return super().handle_completion(body, authorization)
        reply = {"thought": "look further", "action": "search", "input": f"query {len(body['messages'])}"}
        time.sleep(self.latency)
        return 200, _completion(body, json.dumps({**reply, "evidence": []}), 0, body.get("max_tokens")), {}


def run(tmp_path: Path, server: ChaosServer, budget: dict[str, Any], tasks: int = 4) -> Path:
    configs = [{**c, "budgets": {**c.get("budgets", {}), **budget}} for c in LADDER + DEREACT]
    experiment = {
        "kind": "experiment",
        "name": "limits",
        "dataset": {"path": str(FULL), "limit": tasks},
        "configurations": configs,
        "models": {"default": "openai/chaos"},
        "base_url": server.base_url,
        "cache": False,
        "concurrency": 10,
        "limits": {"max_retries": 0, "endpoint_concurrency": 10},
    }
    path = tmp_path / "limits.yaml"
    path.write_text(yaml.safe_dump(experiment))
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, ["experiment", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output[-3000:]
    assert_records_whole(out)
    return out


def attempts(out: Path) -> list[dict[str, Any]]:
    db = sqlite3.connect(out / "vreact.db")
    db.row_factory = sqlite3.Row
    rows = [dict(r) for r in db.execute("select * from attempts order by id")]
    for a in rows:
        a["calls"] = [
            dict(c)
            for c in db.execute("select * from model_calls where attempt_id = ? order by id", [a["id"]])
        ]
        a["budget_verdicts"] = [
            dict(v)
            for v in db.execute(
                "select * from verdicts where attempt_id = ? and source = 'budget'", [a["id"]]
            )
        ]
    return rows


def report(out: Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["report", str(out), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def stopped_by(a: dict[str, Any], cause: str) -> bool:
    """The attempt ended because ``cause`` (token_budget, wall_clock) ran out, as its kind says."""
    if a["config"] in UNVERIFIED:
        return a["outcome"] == "abstain" and a["abstain_level"] == "cap" and a["abstain_cause"] == cause
    return (
        a["outcome"] == "abstain"
        and a["abstain_level"] == "L3"
        and a["abstain_cause"] == f"{cause}:{cause}"
        and any(v["cause"] == cause for v in a["budget_verdicts"])
    )


def test_a_token_budget_holds_at_every_call(tmp_path):
    with Searching(latency=0.05) as server:
        out = run(tmp_path, server, {"tokens": TOKENS})
    rows = attempts(out)
    assert {a["config"] for a in rows} == {c["name"] for c in LADDER + DEREACT}
    for a in rows:
        calls = [c for c in a["calls"] if c["status"] == "ok"]
        used = sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls)
        last = calls[-1]["prompt_tokens"] + calls[-1]["completion_tokens"]
        assert TOKENS <= used <= TOKENS + calls[-1]["prompt_tokens"], (a["config"], used)
        assert used - last < TOKENS, a  # no call starts once the tokens are spent
        assert stopped_by(a, "token_budget"), a
    in_the_table(report(out))


def test_a_wall_clock_holds_at_every_call(tmp_path):
    # every reply takes 0.9 s: a call in flight when the clock ends is cut, not waited for
    with Searching(latency=0.9) as server:
        out = run(tmp_path, server, {"wall_clock_s": WALL_CLOCK})
    rows = attempts(out)
    for a in rows:
        took = a["finished"] - a["started"]
        assert WALL_CLOCK <= took <= WALL_CLOCK + 1.0, (a["config"], took)
        assert stopped_by(a, "wall_clock"), a
    in_the_table(report(out))


def in_the_table(report: dict[str, Any]) -> None:
    """Every stop is counted: a budget rejection in the attribution table of each verified
    configuration, an abstention at ``cap`` in each of the others."""
    for name, figures in report["configs"].items():
        if name in UNVERIFIED:
            assert figures["abstained_by_level"]["cap"] == figures["executed"], name
        else:
            assert figures["attribution"]["by_source"]["budget"]["rejections"] >= figures["executed"], name
