"""``vreact probe --concurrency N``: the code family's probe, whose endless loops each wait out a
call limit in the sandbox, gives the same report and the same records at 2 as at 1 (apart from
the times), in the same order; a value that is no count of 1 or more is one line, exit 2, and
nothing is made."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.helpers import cli
from vreact.cli import cli as vreact_cli
from vreact.spec import MAX_CONCURRENCY

#: The fields that time something: the one thing allowed to differ between concurrencies.
TIMES = {"mean_us", "seconds", "started", "finished", "recorded"}
#: A gold program (must pass), the endless loop (the class each artifact of which waits out its
#: call limit) and one more fault, on the first two problems (each has a visible example).
PROBE = (
    *("--family", "code", "--dataset", "humaneval", "--limit", "2"),
    *("--faults", "gold,infinite_loop,wrong_return", "--json"),
)


def untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The probe's records, each table in the order written, without the columns that time."""
    conn = sqlite3.connect(db)
    try:
        out = {}
        for table in ("attempts", "verdicts", "failures", "probe_skips"):
            columns = [r[1] for r in conn.execute(f"pragma table_info({table})") if r[1] not in TIMES]
            out[table] = conn.execute(f"select {', '.join(columns)} from {table} order by rowid").fetchall()
        return out
    finally:
        conn.close()


def test_two_at_a_time_gives_the_same_report_and_records_as_one(tmp_path):
    reports, records = [], []
    for n in (1, 2):
        out = tmp_path / f"c{n}"
        done = cli("probe", *PROBE, "--concurrency", str(n), "--out", str(out))
        assert done.returncode == 0, done.stderr[-3000:]
        assert ("2 at a time" in done.stderr) == (n == 2), done.stderr
        reports.append(json.loads(done.stdout))
        records.append(rows(out / "vreact.db"))
    one, two = reports
    assert untimed(one) == untimed(two)
    assert records[0] == records[1]
    classes = {c["fault_class"]: c for c in one["classes"]}
    assert [c["fault_class"] for c in one["classes"]] == ["gold", "wrong_return", "infinite_loop"]
    assert classes["infinite_loop"]["caught_by_gate"] == 2 and classes["gold"]["escaped"] == 2
    assert all(c["mean_us"] is not None for c in one["checks"])  # timed, and only that differs


@pytest.mark.parametrize("value", ["0", "-1", "abc", "1.5", "", str(MAX_CONCURRENCY + 1)])
def test_a_concurrency_that_is_no_count_is_refused_in_one_line_with_nothing_made(
    value, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    args = ["probe", "--dataset", "sample", "--concurrency", value, "--out", "out"]
    result = CliRunner().invoke(vreact_cli, args)
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.output
    [line] = result.stderr.strip().splitlines()
    shown = value or "''"
    assert line == f"error: --concurrency: {shown} is not a whole number from 1 to {MAX_CONCURRENCY}"
    assert list(tmp_path.iterdir()) == []
