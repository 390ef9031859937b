"""At 80 columns the tables and listings keep every name whole: the report's tables (a
configuration such as ``always abstain`` or ``VG+chain``, a figure such as ``1741.35``), the
corrections (task ids, checks, the rejected and accepted text), ``vreact models`` (the aliases and
pip commands a user copies). A table wider than the terminal is drawn in parts beside its labels,
or a block per row (``vreact.terminal.Fitted``). Read from copies of committed evidence runs."""

from __future__ import annotations

import json
import re
import shutil
from io import StringIO
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from tests.conftest import REPO
from vreact.cli import cli
from vreact.terminal import Fitted

EVIDENCE = REPO / "docs" / "evidence"
CODE_RUN = "2026-12-04-code-evaluation-vpgj-1.5b"  # VPGJ on HumanEval: long figures, corrections
CHAIN_RUN = "2026-12-02-qwen1.5b-chain-eval"  # N, N+retrieval, VG+chain on MuSiQue


def copied(name: str, tmp_path: Path) -> Path:
    folder = tmp_path / name
    shutil.copytree(EVIDENCE / name, folder)
    return folder


def at_80(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.stdout


def tables_of(text: str) -> list[str]:
    """The lines of the report's tables: from the first table's title to the folder's line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Execution accounting"))
    end = next(i for i, line in enumerate(lines) if line.startswith("Run folder:"))
    return lines[start:end]


def cells(line: str) -> list[str]:
    """A table row's cells (apart by two spaces or more)."""
    return [c for c in re.split(r"\s{2,}", line.strip()) if c]


@pytest.mark.parametrize("name", [CODE_RUN, CHAIN_RUN])
def test_the_report_at_80_columns_cuts_no_name_and_no_figure(name, tmp_path):
    folder = copied(name, tmp_path)
    lines = tables_of(at_80("report", str(folder)))
    report = json.loads(at_80("report", str(folder), "--json"))
    assert max(map(len, lines)) <= 80
    assert not any("…" in line for line in lines)
    for config in [*report["configs"], "always abstain"]:
        assert any(config in cells(line)[:1] for line in lines), config  # whole, first in its row
    # every figure of the cost by role, each in a cell of its own on its role's row (CHAIN_RUN's
    # configurations each have theirs)
    rows = [cells(line) for line in lines]
    for config, r in report["configs"].items():
        for role, cost in r["cost_by_role"].items():
            figures = [str(cost[k]) for k in ("llm_calls", "prompt_tokens", "completion_tokens")]
            assert any(row[:1] == [config] and role in row and set(figures) <= set(row) for row in rows), (
                config,
                role,
                figures,
            )


def test_a_table_too_wide_for_80_columns_is_drawn_in_parts_beside_its_labels(tmp_path):
    lines = tables_of(at_80("report", str(copied(CODE_RUN, tmp_path))))
    title = "Attribution: by source and level; model calls and tokens, total and per attempt"
    at = lines.index(title)
    more = next(i for i, line in enumerate(lines) if i > at and line.rstrip().endswith("(continued)"))
    assert lines[more - 1].rstrip() == title
    first, second = (
        cells(next(ln for ln in lines[i:] if ln.strip().startswith("config"))) for i in (at, more)
    )
    assert first[:2] == second[:2] == ["config", "by"]  # the labels, repeated
    assert set(first[2:]).isdisjoint(second[2:]) and "c tok/a" in first + second
    assert any(cells(line)[:2] == ["VPGJ", "judge"] and "1741.35" in cells(line) for line in lines)


def test_the_corrections_at_80_columns_are_a_block_each_with_every_text_whole(tmp_path):
    folder = copied(CODE_RUN, tmp_path)
    text = at_80("report", str(folder), "--corrections")
    corrections = json.loads(at_80("report", str(folder), "--corrections", "--json"))
    assert corrections and max(map(len, text.splitlines())) <= 80
    lines = [line.strip() for line in text.splitlines()]
    squeezed = re.sub(r"\s+", "", text)
    for c in corrections:
        assert f"{c['config']} · {c['task_id']} · {c['attempt']}" in lines
        assert f"check {c['check']}" in [" ".join(line.split()) for line in lines]
        for part in ("rejected", "accepted"):  # long text wraps under itself, nothing left out
            assert re.sub(r"\s+", "", c[part]) in squeezed, (part, c[part])


def test_vreact_models_at_80_columns_keeps_each_alias_and_pip_command_on_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("VREACT_MODELS_DIR", str(tmp_path))
    lines = [line.strip() for line in at_80("models").splitlines()]
    assert max(map(len, lines)) <= 80
    for alias, extra in (
        ("smollm2-135m", "local"),
        ("qwen2.5-coder-0.5b", "qwen-0.5b"),
        ("qwen2.5-coder-1.5b", "qwen-1.5b"),
    ):
        assert alias in lines
        after = lines[lines.index(alias) :]
        assert f"install with pip install 'vreact[{extra}]'" in [" ".join(ln.split()) for ln in after[:6]]


# --- the layout rule --------------------------------------------------------------------------

TABLE = Fitted(
    "Costs",
    ["config", "calls", "prompt tokens", "completion tokens", "retries"],
    [["VG+chain", "12", "3435.45", "972.73", "0"], ["always abstain", "0", "0.00", "0.00", "0"]],
    labels=1,
    right=frozenset({"calls", "prompt tokens", "completion tokens", "retries"}),
)


def drawn(table: Fitted, width: int) -> list[str]:
    out = StringIO()
    Console(file=out, width=width, color_system=None).print(table)
    return out.getvalue().splitlines()


def test_a_table_that_fits_is_one_table():
    assert [cols for _, cols in TABLE.parts(80)] == [[0, 1, 2, 3, 4]]
    lines = drawn(TABLE, 80)
    assert lines[0] == "Costs" and any(
        cells(line) == ["VG+chain", "12", "3435.45", "972.73", "0"] for line in lines
    )


def test_narrower_it_is_parts_each_with_the_labels_and_evened_out():
    parts = TABLE.parts(50)
    assert [title for title, _ in parts] == ["Costs", "Costs (continued)"]
    assert [cols[0] for _, cols in parts] == [0, 0]
    assert sorted(c for _, cols in parts for c in cols[1:]) == [1, 2, 3, 4]
    lines = drawn(TABLE, 50)
    assert max(map(len, lines)) <= 50
    assert sum(cells(line)[:1] == ["always abstain"] for line in lines) == 2


def test_narrower_still_it_is_a_block_per_row_with_long_values_wrapped_whole():
    wide = Fitted("Corrections", ["task", "rejected"], [["HumanEval/27", "x" * 70]])
    assert wide.parts(40) == [("Corrections", None)]
    lines = drawn(wide, 40)
    assert max(map(len, lines)) <= 40
    assert "HumanEval/27" in [line.strip() for line in lines]
    assert "".join(line.split("rejected")[-1].strip() for line in lines if "x" in line) == "x" * 70


def test_cells_are_text_not_markup():
    lines = drawn(Fitted("", ["alias", "install with"], [["a", "pip install 'vreact[local]'"]]), 80)
    assert any("pip install 'vreact[local]'" in line for line in lines)


def test_a_tab_is_measured_as_it_is_drawn():
    tabbed = Fitted("", ["name", "code"], [["a", "if x:\n\treturn 1"]])
    assert tabbed.widths() == [4, 16]
    lines = drawn(Fitted("", ["task", "program"], [["HumanEval/27", "\treturn x" + " y" * 20]]), 60)
    assert max(map(len, lines)) <= 60 and "…" not in "".join(lines)
