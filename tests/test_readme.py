"""The README is a front page that works as written: at most 250 lines, and every command of its
shell blocks runs, in order, in an empty folder beside the clone's ``.venv``, printing what the
text block under it shows: its numbers aside, and the checks that stopped answers (both are the
model's, and a llama.cpp build on other CPUs may answer otherwise). The model server it starts
is replaced by a loopback server; the commands a test cannot run are listed here by name. The
reference text lives in docs/ (tests/test_docs_pages.py checks it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.fakes.chaos_server import ChaosServer
from tests.markdown import blocks

README = REPO / "README.md"
#: Commands the README shows that no test runs: they are the two commands themselves (make test
#: runs this test; make demo builds and downloads), each run on a fresh clone before a release.
NOT_RUN = ("make demo", "make test")
#: The README's model server, and its wait for the server to listen: a loopback server, up
#: already, stands in for both, at a free port.
SERVER = re.compile(
    r"^(?:\.venv/bin/python -m llama_cpp\.server .*&|until curl -s http://127\.0\.0\.1:8000/.*done)$"
)
SERVER_URL = "http://127.0.0.1:8000/v1"
#: Printed lines that are the model's own: which checks stopped its answers.
THE_MODELS = ("It stopped ",)


def steps(text: str) -> list[tuple[list[str], list[str]]]:
    """Each ```sh block's command lines (continuations joined, comments cut), with the lines of
    the ```text block right after it (what it prints), if any."""
    out: list[tuple[list[str], list[str]]] = []
    for kind, body in blocks(text):
        if kind == "sh":
            joined = re.sub(r"\\\n\s*", "", body)
            lines = [re.sub(r"\s+#.*$", "", line).strip() for line in joined.splitlines()]
            out.append(([line for line in lines if line], []))
        elif kind == "text" and out and not out[-1][1]:
            out[-1] = (out[-1][0], body.splitlines())
    return out


def masked(line: str) -> str:
    """A printed line with its numbers (the plural they take, and the spacing tables pad them
    with) made alike."""
    line = re.sub(r"\b(correction)s\b", r"\1", re.sub(r"\d+(?:\.\d+)?", "N", line))
    return re.sub(r"\s+", " ", line).strip()


def test_the_readme_is_a_front_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, len(lines)
    assert lines[0] == "# vreact"


def test_the_steps_are_found_with_what_they_print():
    found = steps(README.read_text(encoding="utf-8"))
    commands = [c for cs, _ in found for c in cs]
    assert commands[:2] == list(NOT_RUN)
    assert len([c for c in commands if c.startswith(".venv/bin/vreact ")]) >= 5
    assert len([c for c in commands if SERVER.match(c)]) == 2  # the server, and the wait for it
    shown = [c for cs, printed in found for c in cs if printed and c.startswith(".venv/bin/vreact ")]
    assert len(shown) >= 5  # each of the next steps shows a line of what it prints
    assert masked("VG  0.50 coverage, 12 calls") == "VG N coverage, N calls"
    assert masked("run 1: 1 correction;") == masked("run 2: 0 corrections;")


@pytest.mark.real_model
def test_every_readme_command_runs_in_order_and_prints_what_it_shows(tmp_path):
    here = tmp_path / "clone"
    here.mkdir()
    (here / ".venv").symlink_to(Path(sys.executable).resolve().parent.parent)
    if not (here / ".venv" / "bin" / "vreact").exists():  # the suite runs from another interpreter
        (here / ".venv").unlink()
        (here / ".venv").symlink_to(REPO / ".venv")
    env = {**os.environ, "VREACT_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("OPENAI_BASE_URL", None)
    with ChaosServer(mix={"nonsense": 1.0}, seed=3, deterministic=True) as server:
        ran = []
        for commands, printed in steps(README.read_text(encoding="utf-8")):
            output = ""
            for command in commands:
                if command in NOT_RUN:
                    continue
                if SERVER.match(command):
                    continue  # the loopback server is up already
                command = command.replace(SERVER_URL, server.base_url)
                done = subprocess.run(
                    ["bash", "-c", command], cwd=here, env=env, capture_output=True, text=True, timeout=900
                )
                assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
                output += done.stdout + done.stderr
                ran.append(command)
            if not output:  # make demo's block: what it prints is a fresh clone's, not this test's
                continue
            said = {masked(line) for line in output.splitlines()}
            for line in printed:
                if line.strip() and line.strip() != "..." and not line.startswith(THE_MODELS):
                    assert masked(line) in said, f"{commands}: {line!r} not printed:\n{output[-3000:]}"
    assert len(ran) >= 5
