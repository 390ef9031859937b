"""docs/gsm8k.md's own maths problems, run as the page writes them (the block under "Your own
maths problems", in bash, in an empty folder), against a loopback server in place of the model
server the page names: a user's JSON lines read through a field map, N and VG, and the report."""

from __future__ import annotations

import json
import os
import re
import subprocess
from typing import Any

from tests.conftest import REPO
from tests.fakes.scripted_server import ScriptedServer
from tests.helpers import cli

PAGE = REPO / "docs" / "gsm8k.md"


def block() -> str:
    section = PAGE.read_text(encoding="utf-8").split("## Your own maths problems", 1)[1]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def reply(body: dict[str, Any]) -> str:
    """The apples right at once; the teams first with a wrong claim carried into its answer, then,
    told why it was rejected, right."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    if "apples" in prompt:
        program = "bags = 3\napples = bags * 4\nprint(apples - 2)\n"
    elif "rejected" not in prompt:
        program = "teams = 8  # 28 / 4 = 8\nprint(teams)\n"
    else:
        program = "pupils = 28\nprint(pupils // 4)\n"
    return f"```python\n{program}```"


def test_a_users_problems_through_a_field_map_run_as_the_page_says(tmp_path):
    text = block()
    assert "--fields id=qid,question=problem,answer=solution" in text
    with ScriptedServer(reply) as server:
        script = re.sub(r"http://127\.0\.0\.1:\d+/v1", server.base_url, text)
        env = {**os.environ, "PATH": os.pathsep.join([str(REPO / ".venv" / "bin"), os.environ["PATH"]])}
        env["VREACT_CACHE_DIR"] = str(tmp_path / "cache")
        done = subprocess.run(
            ["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "N" in done.stdout and "VG" in done.stdout  # the report the block prints
    report = json.loads(cli("report", str(tmp_path / "runs" / "mine"), "--json").stdout)
    assert report["family"] == "gsm8k"
    n, vg = report["configs"]["N"], report["configs"]["VG"]
    assert (n["correct"], n["silent_error"], vg["correct"], vg["silent_error"]) == (1, 1, 2, 0)


def test_a_record_that_cannot_be_read_is_one_line_and_makes_nothing(tmp_path):
    bad = tmp_path / "problems.jsonl"
    bad.write_text(
        '{"qid": "a", "problem": "How many?", "solution": 3}\n'
        '{"qid": "b", "problem": "How many?", "solution": "seven"}\n'
    )
    out = tmp_path / "runs" / "mine"
    done = cli(
        "run", "--family", "gsm8k", "--format", "jsonl",
        "--fields", "id=qid,question=problem,answer=solution", "--dataset", str(bad), "--configs", "N",
        "--model", "openai/unused", "--base-url", "http://127.0.0.1:9/v1", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.endswith(
        f"{bad}:2: solution: expected a number, or a worked solution ending #### N, got 'seven'"
    ), line
    assert not out.exists()
