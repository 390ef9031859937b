"""``vreact demo`` ends with what verification did, in two lines (issue 24): the answers it kept,
and the wrong answers it stopped, by which check; then the commands to look further. It prints
only the report's tables with a figure that is not zero, and names those it left out. Through
the CLI and HTTP, against a loopback server whose executor first names the bridge entity
(Harrowgate Ironworks, a wrong answer), and once a rejection is in its prompt, the founder with
both hops."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.fakes.scripted_server import ScriptedServer
from vreact.cli import cli
from vreact.records import DB_NAME
from vreact.report import compute, tables, zero_tables

WRONG = {
    "thought": "",
    "action": "finish",
    "input": "Harrowgate Ironworks",
    "hops": [{"entity": "Harrowgate Ironworks", "paragraph": 8}],
}
RIGHT = {
    "thought": "",
    "action": "finish",
    "input": "Edwin Marlow",
    "hops": [
        {"entity": "Harrowgate Ironworks", "paragraph": 8},
        {"entity": "Edwin Marlow", "paragraph": 1},
    ],
}


def executor(body: dict) -> str:
    prompt = "\n".join(m["content"] for m in body["messages"])
    if "Your steps so far" not in prompt:  # the try's first model step: read the founder's paragraph
        return json.dumps({"thought": "", "action": "read", "input": "1"})
    return json.dumps(RIGHT if "Earlier tries were rejected" in prompt else WRONG)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    """The demo's folder and what it printed."""
    tmp = tmp_path_factory.mktemp("demo")
    out = tmp / "demo"
    with ScriptedServer(executor) as server:
        args = ["demo", "--limit", "1", "--model", "openai/x", "--base-url", server.base_url]
        args += ["--out", str(out)]
        env = {"OPENAI_API_KEY": "sk-none", "VREACT_CACHE_DIR": str(tmp / "cache")}
        result = CliRunner().invoke(cli, args, env=env)
    assert result.exit_code == 0, result.output
    return out, result


def test_the_demo_ends_with_what_verification_did(demo: tuple[Path, Result]) -> None:
    out, result = demo
    *_, kept, stopped, view, corrections = result.stdout.strip().splitlines()
    assert kept == (
        "Verification (VG+chain) kept 1 right answer(s) of 1 question(s), let 0 wrong one(s) through "
        "and abstained on 0."
    )
    assert stopped.startswith("It stopped 1 wrong answer(s): R")
    assert view == f"next: vreact view {out}   (a page of every attempt: its steps, verdicts and retries)"
    assert corrections == (
        f"      vreact report {out} --corrections   (each correction: what a check rejected, what was"
        " accepted in its place)"
    )
    assert "next:" not in result.stderr


def printed(title: str, text: str) -> bool:
    """Whether ``text`` prints the table of ``title`` (a title starts a line; a long one wraps)."""
    return any(line.startswith(title[:25]) for line in text.splitlines())


def test_the_demo_prints_only_the_tables_that_are_not_all_zero(demo: tuple[Path, Result]) -> None:
    """No guard fired: the loop guards' table is all zero and left out, named in one line; every
    table with a figure is printed, Pass@k's among them (VG+chain's answer is right) though N's
    row is zero; ``vreact report`` prints every table, as before."""
    out, result = demo
    report = compute(out / DB_NAME)
    zero = [t.title for t in zero_tables(report)]
    assert zero == ["Loop guards: fires, and the attempts a guard or budget stopped that still ended correct"]
    full = CliRunner().invoke(cli, ["report", str(out)])
    assert full.exit_code == 0, full.output
    every = [t.title for t in tables(report)]
    assert len(every) > 10 and zero[0] in every
    for title in every:
        assert printed(title, full.stdout), title
        assert printed(title, result.stdout) == (title not in zero), title
    assert printed("Pass@1 and Pass@k", result.stdout)
    left_out = f"Left out, all zero: Loop guards (vreact report {out} prints every table)"
    assert left_out in result.stdout.splitlines()
    assert "Left out" not in full.stdout
