"""Bad input, one line (issue 22): every case of tests/data/bad/ (scripts/make_bad_inputs.py
writes them and their manifest) through the command that reads it: exit 2, one line on
standard error naming the file and the problem, no traceback, under 2 s, and no run folder
or cache entry made. Every case runs in process (CliRunner); some of each kind also run in a
real subprocess, timed without the interpreter's start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import ANS, FULL, REPO
from vreact.cli import cli
from vreact.qa.corpus import read_corpus
from vreact.qa.dataset import DatasetError, load_tasks
from vreact.spec import SpecError, load_file, parse_overrides

BAD = REPO / "tests" / "data" / "bad"
CASES: list[dict[str, Any]] = json.loads((BAD / "manifest.json").read_text())
KINDS = ("spec", "verifiers", "experiment", "models", "dataset", "corpus")
YAML_KINDS = KINDS[:4]
#: A case of each kind (the slowest kinds of problem among them) run in a real subprocess.
IN_SUBPROCESS = {
    ("spec", "alias_bomb"),
    ("verifiers", "deep_nesting"),
    ("experiment", "symlink_loop"),
    ("models", "not_utf8"),
    ("dataset", "unknown_field"),
    ("dataset", "empty"),
    ("corpus", "too_big"),
}


def _id(case: dict[str, Any]) -> str:
    return f"{case['kind']}-{case['case']}"


def _argv(case: dict[str, Any], out: Path) -> list[str]:
    return [a.replace("{OUT}", str(out)) for a in case["argv"]]


def check(case: dict[str, Any], code: int, stderr: str, seconds: float, out: Path, cache: Path) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert code == 2, stderr
    assert len(lines) == 1 and stderr.strip() == lines[0], stderr
    assert case["expect"] in lines[0] and case["file"] in lines[0], lines[0]
    assert "Traceback" not in stderr
    assert seconds < 2.0, f"{seconds:.2f} s"
    assert not out.exists(), "a run folder was made"
    assert not cache.exists() or not any(cache.iterdir()), "a cache entry was made"


def test_the_corpus_covers_every_kind_of_file():
    assert len(CASES) >= 40
    assert {c["kind"] for c in CASES} == set(KINDS)
    for c in CASES:
        assert os.path.lexists(REPO / c["file"]), c["file"]
        assert any(c["file"] in a for a in c["argv"]), c
    assert all((kind, case) in {(c["kind"], c["case"]) for c in CASES} for kind, case in IN_SUBPROCESS)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_a_bad_file_is_one_line_exit_2(case, tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    cache = Path(os.environ["VREACT_CACHE_DIR"])
    out = tmp_path / "out"
    commands = [_argv(case, out)]
    if case["kind"] in YAML_KINDS and commands[0][0] != "validate":
        commands.append(["validate", case["file"]])
    for argv in commands:
        started = time.monotonic()
        result = CliRunner().invoke(cli, argv, env=case["env"])
        seconds = time.monotonic() - started
        assert isinstance(result.exception, SystemExit | None), result.exception
        check(case, result.exit_code, result.stderr, seconds, out, cache)


def _startup(env: dict[str, str]) -> float:
    """The interpreter's start and vreact's imports: ``vreact run --help``, the fastest of two."""
    times = []
    for _ in range(2):
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "vreact.cli", "run", "--help"], env=env, capture_output=True)
        times.append(time.monotonic() - started)
    return min(times)


def test_in_a_real_process(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    startup = _startup(env)
    cache = Path(os.environ["VREACT_CACHE_DIR"])
    for case in (c for c in CASES if (c["kind"], c["case"]) in IN_SUBPROCESS):
        out = tmp_path / case["kind"] / "out"
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "vreact.cli", *_argv(case, out)],
            env={**env, **case["env"]},
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
        check(case, done.returncode, done.stderr, time.monotonic() - started - startup, out, cache)


# what must still load


def test_real_musique_files_load_with_unknown_fields_refused():
    assert len(load_tasks(FULL)) == 80 and len(load_tasks(ANS)) == 100 and len(load_tasks("sample")) == 12
    paragraphs, _ = read_corpus(REPO / "tests" / "data" / "musique" / "musique_ans_train_100_corpus.json")
    assert len(paragraphs) == 1890


def test_extra_fields_are_admitted_on_request(monkeypatch):
    path = BAD / "dataset" / "unknown_field.jsonl"
    with pytest.raises(DatasetError, match="did you mean 'answerable'"):
        load_tasks(path)
    monkeypatch.setenv("VREACT_DATASET_EXTRA_FIELDS", "allow")
    (task,) = load_tasks(path)
    assert task.answerable  # the misspelt field is ignored: the default stands
    monkeypatch.setenv("VREACT_DATASET_EXTRA_FIELDS", "yes")
    with pytest.raises(DatasetError, match="expected allow or forbid"):
        load_tasks(path)


def test_a_cap_raised_admits_the_file(monkeypatch):
    monkeypatch.setenv("VREACT_MAX_FILE_MB", "1")
    assert len(load_tasks(BAD / "dataset" / "too_big.jsonl")) == 4
    monkeypatch.setenv("VREACT_MAX_YAML_MB", "1")
    assert load_file(BAD / "spec" / "too_big.yaml").name == "bad"  # type: ignore[attr-defined]
    monkeypatch.setenv("VREACT_MAX_FILE_MB", "lots")
    with pytest.raises(DatasetError, match="expected a positive number of megabytes"):
        load_tasks(BAD / "dataset" / "too_big.jsonl")


def test_a_bom_is_accepted_and_a_few_aliases_still_expand(tmp_path):
    path = tmp_path / "specs" / "bom.yaml"
    path.parent.mkdir()
    text = "kind: spec\nname: &n bom\ndescription: *n\nrequirements:\n  task: t\n"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    spec = load_file(path)
    assert (spec.name, spec.description) == ("bom", "bom")  # type: ignore[attr-defined]
    data = tmp_path / "bom.jsonl"
    data.write_bytes(b"\xef\xbb\xbf" + FULL.read_bytes().splitlines(keepends=True)[0])
    assert len(load_tasks(data)) == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_being_opened(tmp_path):
    """A FIFO cannot be committed: made here. Opening one would wait for a writer forever."""
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    for argv in (
        ["validate", str(fifo)],
        ["run", "--dataset", str(fifo), "--configs", "N", "--out", str(out), "--model", "openai/none"],
    ):
        started = time.monotonic()
        result = CliRunner().invoke(cli, argv)
        case = {"expect": "not a regular file", "file": str(fifo)}
        check(case, result.exit_code, result.stderr, time.monotonic() - started, out, tmp_path / "none")
    with pytest.raises(DatasetError, match="not a regular file"):
        read_corpus(fifo)


def test_an_alias_bomb_given_by_set_is_refused_too():
    levels = ["&a0 [x, x, x, x, x, x, x, x, x]"]
    levels += [f"&a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 7)]
    started = time.monotonic()
    with pytest.raises(SpecError, match="alias bomb"):
        parse_overrides([f"description=[{', '.join(levels)}]"])
    assert time.monotonic() - started < 2.0
    assert parse_overrides(["dataset.hops=[2, 3]"]) == {"dataset.hops": [2, 3]}


def test_an_unknown_shipped_name_is_one_line_listing_the_shipped_ones(tmp_path):
    from tests.helpers import cli

    done = cli("experiment", "pilto", "--dry-run", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "pilto: no shipped experiment of that name (shipped: " in line, line
    shipped = line.split("(shipped: ")[1].split(")")[0].split(", ")
    assert {"pilot", "attacks", "tools"} <= set(shipped) and not (tmp_path / "runs").exists()
