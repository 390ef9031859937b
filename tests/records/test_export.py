"""``vreact export`` and ``RunRecords.to_pandas``: each table of the pilot's run (against a
loopback server) in each format, read back, equals the records ``read_run`` gives, field by
field, straight from its dataclasses; and a pandas analysis of the run reads what the report
says."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.conftest import REPO
from tests.experiment.test_experiment import experiment_args
from tests.fakes.chaos_server import ChaosServer
from vreact.records import read_run
from vreact.records.export import FORMATS, TABLES

MIX = {"nonsense": 0.9, "prose": 0.1}
CHILDREN = {"verdicts", "calls", "steps", "ledger", "events", "diagnoses", "score", "scores", "agreement"}


def vreact(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vreact.cli", *args],
        cwd=REPO,
        env=env or dict(os.environ),
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "pilot"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-not-a-key", "VREACT_CACHE_DIR": str(out.parent / "c")}
    with ChaosServer(mix=MIX, seed=3, deterministic=True) as server:
        args = experiment_args(server.base_url, out, "--set", "dataset.limit=4", "--set", "attempts=1")
        done = vreact(*args, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def expected(out: Path, table: str) -> list[dict[str, Any]]:
    """The table's rows, built here from read_run's dataclasses (not by the exporter)."""
    records = read_run(out)
    if table == "tasks":
        return [asdict(records.tasks[k]) for k in sorted(records.tasks)]
    if table == "attempts":
        return [
            {
                **{f.name: getattr(a, f.name) for f in fields(a) if f.name not in CHILDREN},
                "correct": a.score.correct if a.score else None,
                "metrics": a.score.metrics if a.score else None,
            }
            for a in records.attempts
        ]
    return [asdict(r) for a in records.attempts for r in getattr(a, table)]


def flat(value: Any) -> Any:
    """A value as a CSV or Parquet cell holds it: a list or a dict as JSON, None as empty."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True) if isinstance(value, list | dict) else value


def as_text(value: Any) -> str:
    return "" if value is None else str(flat(value))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("table", TABLES)
def test_each_table_in_each_format_equals_read_runs_records(run: Path, table: str, fmt: str, tmp_path: Path):
    want = expected(run, table)
    assert want, table  # the pilot wrote rows of every table
    out = tmp_path / f"{table}.{fmt}"
    done = vreact("export", str(run), "--table", table, "--format", fmt, "--out", str(out))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert done.stderr.strip() == f"wrote {len(want)} {table} row(s) of run 1 to {out}"
    if fmt == "jsonl":
        got = [json.loads(line) for line in out.read_text().splitlines()]
        assert got == json.loads(json.dumps(want))  # tuples as lists, nothing else changed
        assert vreact("export", str(run), "--table", table, "--format", "jsonl").stdout == out.read_text()
    elif fmt == "csv":
        got = list(csv.DictReader(io.StringIO(out.read_text())))
        assert [list(r) for r in got[:1]] == [list(want[0])]
        assert got == [{k: as_text(v) for k, v in r.items()} for r in want]
    else:
        frame = pd.read_parquet(out)
        assert list(frame.columns) == list(want[0]) and len(frame) == len(want)
        for column in frame.columns:
            cells = [None if pd.isna(v) else v for v in frame[column].tolist()]
            assert cells == [flat(r[column]) for r in want], column


def test_to_pandas_gives_the_same_rows_and_an_analysis_reads_the_report(run: Path):
    records = read_run(run)
    attempts = records.to_pandas()
    assert len(attempts) == len(records.attempts) and list(attempts["id"]) == [a.id for a in records.attempts]
    verdicts = records.to_pandas("verdicts")
    assert len(verdicts) == sum(len(a.verdicts) for a in records.attempts)
    # what docs/results.md shows: outcomes by configuration, rejections by check
    outcomes = attempts.groupby("config")["outcome"].value_counts().unstack(fill_value=0)
    report = json.loads(vreact("report", str(run), "--json").stdout)
    assert sorted(report["configs"]) == sorted(outcomes.index)
    for config, row in report["configs"].items():
        counts = outcomes.loc[config]
        assert int(counts.get("answer", 0)) == row["answered"], config
        assert int(counts.get("abstain", 0)) == row["abstained"], config
        assert int(counts.get("crash", 0)) == row["crash"], config
    rejected = verdicts[verdicts["decision"] == "reject"].groupby(["verifier", "check_name"]).size()
    assert rejected.sum() == sum(1 for a in records.attempts for v in a.verdicts if v.decision == "reject")


def test_a_folder_without_records_and_parquet_without_a_file_are_one_line(tmp_path: Path, run: Path):
    empty = vreact("export", str(tmp_path))
    assert empty.returncode == 2 and empty.stderr.strip().splitlines() == [
        f"error: {tmp_path}: no vreact.db here; give a folder made by 'vreact run'"
    ]
    parquet = vreact("export", str(run), "--format", "parquet")
    assert parquet.returncode == 2
    assert parquet.stderr.strip() == "error: --format parquet is written to a file: give --out FILE"


def test_docs_results_names_every_column_of_every_table(run: Path):
    """docs/results.md's table of columns is the exporter's, table by table (no drift)."""
    import re

    page = (REPO / "docs" / "results.md").read_text()
    records = read_run(run)
    for table in TABLES:
        [row] = [line for line in page.splitlines() if line.startswith(f"| `{table}` |")]
        named = re.findall(r"`([a-z_]+)`", row.split("|")[3])
        columns = list(records.to_pandas(table).columns)
        assert [n for n in named if n in columns] == columns, table
