"""``vreact demo`` ends with what verification did, in two lines (issue 24): the answers it kept,
and the wrong answers it stopped, by which check. Through the CLI and HTTP, against a loopback
server whose executor first names the bridge entity (Harrowgate Ironworks, a wrong answer), and
once a rejection is in its prompt, the founder with both hops."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.fakes.scripted_server import ScriptedServer
from vreact.cli import cli

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


def test_the_demo_ends_with_what_verification_did(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    with ScriptedServer(executor) as server:
        args = ["demo", "--limit", "1", "--model", "openai/x", "--base-url", server.base_url]
        args += ["--out", str(out)]
        result = CliRunner().invoke(cli, args, env={"OPENAI_API_KEY": "sk-none"})
    assert result.exit_code == 0, result.output
    *_, kept, stopped = result.stdout.strip().splitlines()
    assert kept == (
        "Verification (VG+chain) kept 1 right answer(s) of 1 question(s), let 0 wrong one(s) through "
        "and abstained on 0."
    )
    assert stopped.startswith("It stopped 1 wrong answer(s): R")
