"""docs/plugins.md's walkthrough, followed word for word in an empty folder: the three files it
shows (each a fenced block whose first line is a comment naming the file) are written as shown,
and each of its shell lines (```sh) is run there in order, through a shell, with this
interpreter's bin directory first on PATH; each must exit 0 and print every line of the
```text block shown under it (``...`` stands for anything: a part of a line, or, alone, any
lines). The run it makes is read back: its attempts, and the plugin record the page shows."""

from __future__ import annotations

import ast
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.markdown import blocks, section
from vreact.records import read_run

PAGE = REPO / "docs" / "plugins.md"
#: The walkthrough's section, and what it is made of, in order.
WALKTHROUGH = "From an empty folder"
FILES = ("lab_checks.py", "lab_verifiers.yaml", "lab.yaml")
COMMANDS = (
    "vreact validate lab.yaml lab_verifiers.yaml",
    "vreact plugins --plugin lab_checks",
    "vreact experiment lab.yaml --out runs/lab",
)
#: The first line of a block that is a file to save: a comment naming it.
FILE_NAME = re.compile(r"#\s*([\w.-]+\.(?:py|ya?ml))\s*")


def fenced(text: str) -> list[tuple[str, str]]:
    """The fenced blocks of ``text`` in order: (info string, content with a final newline)."""
    return [(info, body + "\n") for info, body in blocks(text)]


def walkthrough(text: str) -> tuple[dict[str, str], list[tuple[str, str | None]]]:
    """The walkthrough's files (name: content, in the order shown) and its shell lines, each with
    the ```text block right after its ```sh block (None: no output shown)."""
    blocks = fenced(section(text, WALKTHROUGH))
    files: dict[str, str] = {}
    commands: list[tuple[str, str | None]] = []
    for i, (info, body) in enumerate(blocks):
        first = body.split("\n", 1)[0]
        if info.split()[:1] in (["python"], ["yaml"]) and (named := FILE_NAME.fullmatch(first)):
            assert named[1] not in files, f"{named[1]} is shown twice"
            files[named[1]] = body
        elif info == "sh":
            after = blocks[i + 1] if i + 1 < len(blocks) else None
            shown = after[1] if after is not None and after[0] == "text" else None
            lines = [x.strip() for x in body.splitlines() if x.strip() and not x.lstrip().startswith("#")]
            commands += [(line, shown if j == len(lines) - 1 else None) for j, line in enumerate(lines)]
    return files, commands


def not_printed(shown: str, printed: str) -> list[str]:
    """The lines of ``shown`` that no line of ``printed`` matches, spaces aside; ``...`` in a line
    stands for anything, and a line that is only ``...`` (or empty) is not looked for."""
    lines = [" ".join(line.split()) for line in printed.splitlines()]
    missing = []
    for line in shown.splitlines():
        if line.strip() in ("", "..."):
            continue
        pattern = ".*".join(re.escape(" ".join(part.split())) for part in line.split("..."))
        if not any(re.search(pattern, x) for x in lines):
            missing.append(line)
    return missing


@pytest.fixture(scope="module")
def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def lab_folder(folder: Path, files: dict[str, str]) -> None:
    """The page's files, written exactly as shown into ``folder``."""
    for name, content in files.items():
        (folder / name).write_text(content, encoding="utf-8")


def shell(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``line`` run by a shell in ``cwd``, this interpreter's bin directory (its ``vreact``)
    first on PATH."""
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")])}
    return subprocess.run(line, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def run_shown(line: str, shown: str | None, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = shell(line, cwd)
    assert done.returncode == 0, f"{line}\n{done.stderr[-3000:]}"
    if shown is not None:
        missing = not_printed(shown, done.stdout + "\n" + done.stderr)
        assert not missing, f"{line}: shown but not printed: {missing}\n{done.stdout[-3000:]}"
    return done


def test_the_walkthrough_shows_three_files_and_three_commands_with_their_output(page):
    files, commands = walkthrough(page)
    assert tuple(files) == FILES
    assert tuple(line for line, _ in commands) == COMMANDS
    assert all(shown for _, shown in commands), "a command of the walkthrough shows no output"
    compile(files["lab_checks.py"], "lab_checks.py", "exec")
    for name in FILES[1:]:
        assert yaml.safe_load(files[name])["plugins"] == ["./lab_checks.py"], name
    experiment = yaml.safe_load(files["lab.yaml"])
    assert experiment["models"] == {"default": "llamacpp/smollm2-135m"}  # what make demo installs
    assert experiment["attempts"] == 1 and len(experiment["dataset"]["task_ids"]) == 1  # a small run


def test_the_output_check_finds_what_was_not_printed():
    printed = "gate    answer_in_cited          plugin lab_checks (name)\n"
    printed += "plugin  lab_checks               lab_checks (name)\n"
    assert not_printed("gate answer_in_cited plugin lab_checks (name)\n...\nplugin ... (name)", printed) == []
    assert not_printed("member  short_queries  plugin lab_checks (name)\n", printed) == [
        "member  short_queries  plugin lab_checks (name)"
    ]
    assert not_printed("gate ... (file)", printed) == ["gate ... (file)"]


def test_the_files_validate_list_the_plugin_and_plan_without_a_model(tmp_path, page):
    """The first two commands as shown, and the third as a dry run (no model is loaded): what
    runs where the embedded model is not allowed."""
    files, commands = walkthrough(page)
    lab_folder(tmp_path, files)
    for line, shown in commands[:2]:
        run_shown(line, shown, tmp_path)
    plan = run_shown(f"{commands[2][0]} --dry-run", None, tmp_path)
    assert "2 configuration(s) x 1 task(s) x 1 attempt(s) = 2" in plan.stdout + plan.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.real_model
def test_the_walkthrough_runs_word_for_word_in_an_empty_folder(tmp_path, page):
    files, commands = walkthrough(page)
    lab_folder(tmp_path, files)
    for line, shown in commands:
        run_shown(line, shown, tmp_path)
    records = read_run(tmp_path / "runs" / "lab")
    assert sorted((a.config, a.task_id) for a in records.attempts) == [
        ("N", "2hop__sample_1"),
        ("VG", "2hop__sample_1"),
    ]
    assert all(a.outcome in ("answer", "abstain") for a in records.attempts)  # none crashed
    # the run keeps the plugin and its version: the file's sha256, as the page shows it
    digest = hashlib.sha256((tmp_path / "lab_checks.py").read_bytes()).hexdigest()[:16]
    kept = [{"name": "./lab_checks.py", "version": f"sha256:{digest}"}]
    assert records.run is not None and records.run.config["plugins"] == kept
    [(_, shown)] = [b for b in fenced(section(page, "A run's records")) if b[0] == "python"]
    assert ast.literal_eval(shown) == kept
