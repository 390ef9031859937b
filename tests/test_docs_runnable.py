"""The code blocks the docs mark as runnable run as written. A page marks a block with the line
``<!-- runnable -->`` right above its fence (Markdown hides the comment): each page's marked
blocks run in order in an empty folder that holds only the clone's ``.venv`` and ``tests``
(the records the pages name), with ``.venv/bin`` first on the path. A ```sh block runs line by
line (continuations joined); a ```python block runs as a script, or, when its first line is
``# NAME.py``, is written as that file for the blocks after it. A model server a page starts is
replaced by a loopback server, whose URL replaces the page's ``http://127.0.0.1:PORT/v1``; the
lines that install something are not run (make test installed it), nor the wait for the model
server to listen (the loopback server is up already). docs/plugins.md and the
README have tests of their own that also compare what they print."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.fakes.chaos_server import ChaosServer

DOCS = REPO / "docs"
MARK = "<!-- runnable -->"
#: Lines a page may mark runnable that no test runs: installs (make test did them), and the model
#: server the loopback server stands in for.
NOT_RUN = re.compile(
    r"^(?:(?:\.venv/bin/)?(?:pip install |python -m llama_cpp\.server )|until curl -s http://127\.0\.0\.1:\d+/)"
)
SERVER_URL = re.compile(r"http://127\.0\.0\.1:\d+/v1")
FILE = re.compile(r"^# ([\w.-]+\.py)$")


def runnable(text: str) -> list[tuple[str, str]]:
    """The blocks of ``text`` marked runnable, in order, as (language, body)."""
    out, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == MARK:
            fence = lines[i + 1]
            assert fence.startswith("```"), f"{MARK} must sit right above a fence, not {fence!r}"
            end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
            out.append((fence[3:].strip(), "\n".join(lines[i + 2 : end])))
    return out


def shell_lines(body: str) -> list[str]:
    joined = re.sub(r"\\\n\s*", "", body)
    return [c for c in (re.sub(r"\s+#.*$", "", line).strip() for line in joined.splitlines()) if c]


PAGES = sorted(p for p in DOCS.glob("*.md") if MARK in p.read_text(encoding="utf-8").splitlines())


def run_blocks(blocks: list[tuple[str, str]], here: Path, base_url: str) -> list[str]:
    """Run ``blocks`` in ``here``; what ran. A block that fails fails the test, with its output."""
    env = {**os.environ, "VREACT_CACHE_DIR": str(here / ".cache")}
    env["PATH"] = os.pathsep.join([str(here / ".venv" / "bin"), env.get("PATH", "")])
    env.pop("OPENAI_BASE_URL", None)
    ran = []
    for language, body in blocks:
        if language == "python" and FILE.match(body.splitlines()[0]):
            (here / FILE.match(body.splitlines()[0]).group(1)).write_text(body + "\n")  # type: ignore[union-attr]
            continue
        if language == "python":
            (here / "block.py").write_text(body + "\n")
            commands = [f"{here / '.venv' / 'bin' / 'python'} block.py"]
        else:
            assert language == "sh", f"a runnable block is sh or python, not {language!r}"
            commands = [SERVER_URL.sub(base_url, c) for c in shell_lines(body) if not NOT_RUN.match(c)]
        for command in commands:
            done = subprocess.run(
                ["bash", "-c", command], cwd=here, env=env, capture_output=True, text=True, timeout=600
            )
            assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
            ran.append(command)
    return ran


def folder(tmp_path: Path) -> Path:
    here = tmp_path / "work"
    here.mkdir()
    venv = Path(sys.executable).parent.parent
    (here / ".venv").symlink_to(venv if (venv / "bin" / "vreact").exists() else REPO / ".venv")
    (here / "tests").symlink_to(REPO / "tests")
    return here


def test_the_pages_mark_blocks_and_the_marks_are_read():
    assert {p.name for p in PAGES} >= {"probe.md", "results.md", "models.md", "quickstart.md"}
    blocks = runnable(
        "x\n<!-- runnable -->\n```sh\nvreact a \\\n  --b 1   # c\nvreact d\n```\n```sh\nno\n```"
    )
    assert blocks == [("sh", "vreact a \\\n  --b 1   # c\nvreact d")]
    assert shell_lines(blocks[0][1]) == ["vreact a --b 1", "vreact d"]
    assert NOT_RUN.match(".venv/bin/pip install -e '.[server]'") and not NOT_RUN.match("vreact run")
    assert NOT_RUN.match("until curl -s http://127.0.0.1:8765/v1/models >/dev/null; do sleep 1; done")


def test_a_failing_block_fails(tmp_path):
    with pytest.raises(AssertionError, match="vreact run --no-such-option"):
        run_blocks([("sh", "vreact --version\nvreact run --no-such-option")], folder(tmp_path), "http://x")


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_the_runnable_blocks_run(page, tmp_path):
    blocks = runnable(page.read_text(encoding="utf-8"))
    with ChaosServer(mix={"nonsense": 1.0}, seed=3, deterministic=True) as server:
        ran = run_blocks(blocks, folder(tmp_path), server.base_url)
    assert ran
