"""CLI errors a user can fix: one line, exit 2, no traceback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from vreact.cli import cli


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--dataset", "nope.jsonl"], "nope.jsonl: no such dataset file"),
        (["run", "--dataset", "sample", "--configs", "N,XX"], "unknown configuration 'XX'"),
        (["run", "--dataset", "sample", "--configs", "N,N"], "--configs: configuration names repeat: N"),
        (["run", "--dataset", "sample", "--model", "gpt4"], "not provider/model nor a known alias"),
        (["run", "--dataset", "sample", "--spec", "nope.yaml"], "nope.yaml:0: (file): cannot read"),
        (["report", "nowhere"], "no vreact.db here"),
    ],
)
def test_user_errors_are_one_line(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_bad_dataset_line_names_file_line_and_field(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "question": "q?", "paragraphs": []}\n{"id": "x", "question": 3}\n')
    result = CliRunner().invoke(cli, ["run", "--dataset", str(bad), "--model", "mock/x"])
    assert result.exit_code == 2
    assert f"{bad}:2: question: Input should be a valid string" in result.output
