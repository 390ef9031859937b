"""docs/families.md's worked example, run verbatim as a script in an empty folder (a subprocess:
its family and gate register in a process of their own): it prints what the page says."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.conftest import REPO

PAGE = REPO / "docs" / "families.md"


def test_the_worked_example_runs_verbatim_and_prints_what_the_page_says(tmp_path):
    text = PAGE.read_text(encoding="utf-8")
    [example, *_] = re.findall(r"```python\n(.*?)```", text, re.S)
    [printed] = re.findall(r"It prints:\n\n```text\n(.*?)```", text, re.S)
    (tmp_path / "example.py").write_text(example)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == printed.splitlines()
    assert "VG: correct 2 of 2" in printed  # the gate's correction is what the page shows
