"""The folder's runs above the tables: ``vreact report DIR`` lists them (id, date, status,
attempts, configurations), ``--run all`` prints each (``--json``: a list of report objects, with
its schema), and ``vreact view`` shows the list too. A folder made before the one-run rule may
hold several runs, and a run recorded without its configurations lists those its attempts name."""

from __future__ import annotations

import json
import time
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from tests.conftest import REPO
from tests.report.test_report import record
from vreact.cli import cli
from vreact.records import DB_NAME, Store
from vreact.report import compute, render_markdown
from vreact.report.html import write_html

NISSEDAL, UNANSWERABLE = "2hop__269805_135710", "2hop__150985_444333"


@pytest.fixture
def tasks(full_tasks):
    return {t.id: t for t in full_tasks}


def when(store: Store, run: int) -> str:
    [row] = store.query("select started from runs where id = ?", [run])
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(row["started"]))


@pytest.fixture
def folder(tmp_path, tasks):
    """Three runs in one folder, as the runner made them before the rule: N and VG; then N
    again with another seed; then a run recorded without its configurations (its attempts
    name VG)."""
    store = Store(tmp_path / DB_NAME)
    first = store.new_run({"configs": [{"name": "N"}, {"name": "VG"}], "seed": 0}, "mock/x", "test")
    record(store, first, tasks[NISSEDAL], "answer", "north", ["6", "10"], config="N")
    record(store, first, tasks[NISSEDAL], "abstain", level="L3", config="VG")
    store.finish_run(first)
    second = store.new_run({"configs": [{"name": "N"}], "seed": 1}, "mock/x", "test")
    record(store, second, tasks[UNANSWERABLE], "abstain", level="L1", config="N")
    store.finish_run(second, "interrupted")
    third = store.new_run({}, "mock/x", "test")
    record(store, third, tasks[NISSEDAL], "answer", "north", ["6"], config="VG")
    record(store, third, tasks[UNANSWERABLE], "crash", config="VG")
    return tmp_path, store


def report(*args: str):
    return CliRunner().invoke(cli, ["report", *args], terminal_width=120)


def test_the_report_lists_the_folder_s_runs_above_the_tables(folder):
    out, store = folder
    result = report(str(out))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:4] == [
        "3 runs in this folder (--run ID for one, --run all for each):",
        f"  run 1 · {when(store, 1)} · completed · 2 attempts · N, VG",
        f"  run 2 · {when(store, 2)} · interrupted · 1 attempt · N",
        f"  run 3 · {when(store, 3)} · running · 2 attempts · VG (shown)",
    ]
    assert lines[5:7] == ["provenance: not recorded (the run was made before vreact recorded it)", ""]
    assert lines[7].startswith("Execution accounting (run 3)")
    assert "Execution accounting (run 1)" not in result.output
    # another run: the list marks it
    second = report(str(out), "--run", "2").output.splitlines()
    assert second[2].endswith("· N (shown)") and not second[3].endswith("(shown)")
    assert "Execution accounting (run 2)" in "\n".join(second)


def test_run_all_prints_each_run(folder):
    out, _ = folder
    text = report(str(out), "--run", "all").output
    assert [n for n in (1, 2, 3) if f"Execution accounting (run {n})" in text] == [1, 2, 3]
    assert text.count("(shown)") == 3
    markdown = report(str(out), "--run", "all", "--markdown").output
    assert markdown.startswith("3 runs in this folder (--run ID for one, --run all for each):\n\n- run 1 · ")
    assert [line for line in markdown.splitlines() if line.startswith("# ")] == [
        f"# vreact report, run {n}" for n in (1, 2, 3)
    ]


def test_run_all_json_is_a_list_of_report_objects_with_its_schema(folder):
    out, _ = folder
    result = report(str(out), "--run", "all", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [r["run"] for r in data] == [1, 2, 3]
    for r in data:  # each as --run ID --json prints it
        assert r == json.loads(report(str(out), "--run", str(r["run"]), "--json").stdout)
    assert list(data[0]["configs"]) == ["N", "VG"] and list(data[2]["configs"]) == ["VG"]
    schema = json.loads((REPO / "schemas" / "reports.schema.json").read_text())
    jsonschema.validate(data, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data[0], schema)  # one report is not the list form
    # one run's JSON stays one object
    assert isinstance(json.loads(report(str(out), "--json").stdout), dict)


@pytest.mark.parametrize(
    ("run", "message"),
    [("9", "no run 9 here (its runs: 1, 2, 3)"), ("latest", "'latest' is neither a run id nor 'all'")],
)
def test_a_run_the_folder_does_not_hold_is_refused(folder, run, message):
    out, _ = folder
    result = report(str(out), "--run", run)
    assert result.exit_code == 2 and message in result.output
    assert "Traceback" not in result.output


def test_one_run_s_tables_are_unchanged_under_its_run_line(tmp_path, tasks):
    store = Store(tmp_path / DB_NAME)
    run = store.new_run({"configs": [{"name": "VG"}]}, "mock/x", "test")
    record(store, run, tasks[NISSEDAL], "answer", "north", ["6", "10"])
    store.finish_run(run)
    text = report(str(tmp_path)).output
    listed = f"1 run in this folder:\n  run 1 · {when(store, 1)} · completed · 1 attempt · VG\n\n"
    unrecorded = "provenance: not recorded (the run was made before vreact recorded it)\n\n"
    assert text.startswith(listed + unrecorded + "Execution accounting (run 1)")
    markdown = report(str(tmp_path), "--markdown").output
    listed = f"1 run in this folder:\n\n- run 1 · {when(store, 1)} · completed · 1 attempt · VG\n\n"
    assert markdown == listed + render_markdown(compute(store, run)) + "\n"


def test_the_page_lists_the_folder_s_runs(folder):
    out, store = folder
    html = write_html(out, 2, out / "two.html").read_text()
    assert '<section class="card runs"><h3>Runs in this folder</h3>' in html
    assert f"<li class=shown>run 2 · {when(store, 2)} · interrupted · 1 attempt · N (shown)</li>" in html
    assert f"<li>run 3 · {when(store, 3)} · running · 2 attempts · VG</li>" in html
    assert "<code>vreact view DIR --run ID</code> writes another's" in html


def test_an_empty_folder_lists_nothing(tmp_path):
    Store(tmp_path / DB_NAME)
    assert json.loads(report(str(tmp_path), "--run", "all", "--json").stdout) == []
    one = report(str(tmp_path), "--json")
    assert one.exit_code == 0 and json.loads(one.stdout)["run"] is None
    assert "runs in this folder" not in report(str(tmp_path)).output
    assert Path(tmp_path / DB_NAME).is_file()
