"""A researcher's own gate and pipeline member, in a module outside the package, used from the
command line: named in the files (``plugins:``), given as ``--plugin``, or installed as a package
with an entry point. Each run is a real ``vreact`` subprocess against a loopback server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import FULL
from tests.fakes.scripted_server import ScriptedServer
from tests.helpers import installed_plugin
from vreact.cli import cli
from vreact.records import DB_NAME, Store
from vreact.spec import builtin_dir

NISSEDAL = "2hop__269805_135710"
LAB = textwrap.dedent(
    '''
    """A lab's own checks."""
    import vreact
    from vreact.pipeline import PASS, Member, hint, member


    @vreact.gate("no_forbidden", kinds=("answer",))
    def no_forbidden(word: str = "forbidden"):
        """Reject an answer that holds a word."""

        def check(artifact):
            if word in str(artifact.answer).lower():
                return vreact.reject("forbidden_word", f"the answer says {word!r}")
            return vreact.accept()

        return check


    @member("first_step_note")
    class FirstStepNote(Member):
        """A hint on each try's first step."""

        verifier = "guard"
        source = "guard"

        def proposal(self, turn):
            return hint("lab: cite both paragraphs") if turn.index == 0 else PASS
    '''
)
#: The executor's replies, in order: a first try that answers with the forbidden word (the lab's
#: gate rejects it), then one that answers right.
STEPS = [
    {"thought": "", "action": "read", "input": "10", "evidence": []},
    {"thought": "", "action": "read", "input": "6", "evidence": []},
    {"thought": "", "action": "finish", "input": "forbidden north", "evidence": ["10", "6"]},
    {"thought": "", "action": "read", "input": "10", "evidence": []},
    {"thought": "", "action": "read", "input": "6", "evidence": []},
    {"thought": "", "action": "finish", "input": "north", "evidence": ["10", "6"]},
]


def files(tmp_path: Path, base_url: str, plugins: str) -> Path:
    """The lab's verifier set (the shipped one plus its gate) and an experiment naming it."""
    verifiers = (builtin_dir("verifiers") / "musique.yaml").read_text()
    verifiers = verifiers.replace("    - not_refusal\n", "    - not_refusal\n    - no_forbidden\n", 1)
    (tmp_path / "lab_verifiers.yaml").write_text(f"{plugins}\n{verifiers}")
    experiment = tmp_path / "lab.yaml"
    experiment.write_text(
        f"kind: experiment\nname: lab\n{plugins}\n"
        f"dataset: {{path: {FULL}, task_ids: [{NISSEDAL}]}}\n"
        "verifiers: lab_verifiers.yaml\n"
        "configurations:\n  - {name: VG, gates: true, guards: true, pipeline: [first_step_note]}\n"
        f"models: {{default: openai/lab}}\nbase_url: {base_url}\ncache: false\nconcurrency: 1\n"
    )
    return experiment


def vreact(*args: str, cwd: Path, pythonpath: str = "") -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [pythonpath, os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run(
        [sys.executable, "-m", "vreact.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def server() -> ScriptedServer:
    steps = iter(STEPS)
    return ScriptedServer(lambda body: json.dumps(next(steps)))


def lab_records(out: Path) -> tuple[dict, list[dict], list[dict]]:
    store = Store(out / DB_NAME)
    [attempt] = store.query("select * from attempts")
    verdicts = list(store.query("select * from verdicts where check_name = 'no_forbidden' order by seq"))
    events = list(store.query("select * from events where guard = 'first_step_note'"))
    return attempt, verdicts, events


@pytest.mark.parametrize("how", ["plugins:", "--plugin"])
def test_a_lab_gate_and_member_run_from_the_command_line(tmp_path, how):
    (tmp_path / "lab_checks.py").write_text(LAB)
    named = how == "plugins:"
    flags = [] if named else ["--plugin", "lab_checks"]
    pythonpath = "" if named else str(tmp_path)  # --plugin names a module on the path
    with server() as s:
        experiment = files(tmp_path, s.base_url, "plugins: [./lab_checks.py]" if named else "")
        valid = vreact(
            "validate",
            str(experiment),
            str(tmp_path / "lab_verifiers.yaml"),
            *flags,
            cwd=tmp_path,
            pythonpath=pythonpath,
        )
        assert valid.returncode == 0, valid.stderr
        ran = vreact(
            "experiment", str(experiment), "--out", "out", *flags, cwd=tmp_path, pythonpath=pythonpath
        )
    assert ran.returncode == 0, ran.stderr[-3000:]
    attempt, verdicts, events = lab_records(tmp_path / "out")
    assert (attempt["outcome"], attempt["answer"]) == ("answer", "north")
    assert [(v["decision"], v["cause"]) for v in verdicts] == [("reject", "forbidden_word"), ("accept", "")]
    assert [e["detail"] for e in events] == ["lab: cite both paragraphs"] * 2  # each try's first step
    config = json.loads(
        next(Store(tmp_path / "out" / DB_NAME).query("select config_json from runs"))["config_json"]
    )
    [plugin] = config["plugins"]  # the run says which plugin made it
    assert plugin["name"] == ("./lab_checks.py" if named else "lab_checks")
    report = vreact("report", "out", "--json", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    vg = json.loads(report.stdout)["configs"]["VG"]
    assert (vg["correct"], vg["rejections"]["gate"], vg["corrections"]["gate"]) == (
        1,
        1,
        1,
    )  # the lab's catch


def test_without_the_plugin_the_gate_is_unknown_and_a_broken_plugin_is_one_line(tmp_path):
    (tmp_path / "lab_checks.py").write_text(LAB)
    experiment = files(tmp_path, "http://127.0.0.1:9/v1", "")
    unknown = vreact("validate", str(tmp_path / "lab_verifiers.yaml"), cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown gate 'no_forbidden'" in unknown.stderr
    (tmp_path / "broken.py").write_text("raise RuntimeError('boom')\n")
    experiment.write_text(
        experiment.read_text().replace("name: lab\n", "name: lab\nplugins: [./broken.py]\n")
    )
    broken = vreact("validate", str(experiment), cwd=tmp_path)
    assert broken.returncode == 2
    assert broken.stderr.strip().splitlines() == [
        f"{experiment}:3: plugins.0: plugin './broken.py': RuntimeError: boom"
    ]
    flag = vreact("validate", str(experiment), "--plugin", "no_such_lab", cwd=tmp_path)
    assert flag.returncode == 2
    assert (
        flag.stderr.strip()
        == "error: plugin 'no_such_lab': ModuleNotFoundError: No module named 'no_such_lab'"
    )


def test_plugin_finds_a_module_in_the_current_folder_as_python_m_does(tmp_path):
    """The console script, unlike ``python -m``, has no current folder on its path: ``--plugin``
    finds the module there all the same, with no PYTHONPATH; a name found nowhere is one line."""
    script = Path(sys.executable).with_name("vreact")
    assert script.is_file(), script  # make test installs the package, with its console script
    (tmp_path / "lab_here.py").write_text(LAB)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(script), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )

    found = run("plugins", "--plugin", "lab_here")
    assert found.returncode == 0, found.stderr
    assert any(
        line.split()[:2] == ["gate", "no_forbidden"] and "lab_here" in line
        for line in found.stdout.splitlines()
    )
    missing = run("plugins", "--plugin", "no_such_lab")
    assert missing.returncode == 2
    assert (
        missing.stderr.strip()
        == "error: plugin 'no_such_lab': ModuleNotFoundError: No module named 'no_such_lab'"
    )


def test_an_installed_package_is_loaded_through_its_entry_point(tmp_path):
    """A package installed into a temporary venv (seeing this one's packages) registers its
    module in the entry-point group vreact.plugins: its gate is known without naming it."""
    python = installed_plugin(tmp_path, "lab-ep", "1.2.3", "lab_ep", LAB)
    env = {**os.environ}
    listed = subprocess.run(
        [str(python), "-m", "vreact.cli", "plugins"], capture_output=True, text=True, timeout=120, env=env
    )
    assert listed.returncode == 0, listed.stderr
    assert "gate     no_forbidden             plugin lab 1.2.3 (entry point)" in listed.stdout
    files(tmp_path, "http://127.0.0.1:9/v1", "")
    valid = subprocess.run(
        [str(python), "-m", "vreact.cli", "validate", str(tmp_path / "lab_verifiers.yaml")],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert valid.returncode == 0, valid.stderr


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder``, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_replay_under_a_plugin_s_gate_reports_with_plugin(tmp_path, monkeypatch):
    """A replay folder's verifier set names the lab's gate: report and view read it back with
    ``--plugin`` (as replay made it), and say in one line to give it when it is missing. An
    unknown plugin on each command that reads a run's records is one line, exit 2, and nothing
    is created (not the page, not a folder for the copy)."""
    (tmp_path / "lab_checks.py").write_text(LAB)
    here = {"cwd": tmp_path, "pythonpath": str(tmp_path)}
    with server() as s:
        files(tmp_path, s.base_url, "")
        ran = vreact("run", "--dataset", str(FULL), "--task-ids", NISSEDAL, "--configs", "VG",
                     "--verifiers", "lab_verifiers.yaml", "--model", "openai/lab", "--base-url", s.base_url,
                     "--no-cache", "--out", "out", "--plugin", "lab_checks", **here)  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    replay = ("replay", "out", "--verifiers", "lab_verifiers.yaml", "--out", "rep", "--json")
    replayed = vreact(*replay, "--plugin", "lab_checks", **here)
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    assert "no_forbidden" in replayed.stdout
    before = tree(tmp_path)

    missing = vreact("report", "rep", "--json", **here)
    assert missing.returncode == 2 and missing.stdout == "", missing.stderr
    [line] = missing.stderr.strip().splitlines()
    assert "unknown gate 'no_forbidden'" in line and line.endswith(
        "give --plugin MODULE, the plugin that registers it"
    )

    reported = vreact("report", "rep", "--json", "--plugin", "lab_checks", **here)
    assert reported.returncode == 0, reported.stderr
    assert json.loads(reported.stdout)["configs"] == json.loads(replayed.stdout)["configs"]
    text = vreact("report", "rep", "--plugin", "lab_checks", **here)
    assert text.returncode == 0 and "R1.no_forbidden" in text.stdout, text.stderr
    viewed = vreact("view", "rep", "--out", "page.html", "--plugin", "./lab_checks.py", **here)
    assert viewed.returncode == 0 and (tmp_path / "page.html").is_file(), viewed.stderr
    (tmp_path / "page.html").unlink()
    assert tree(tmp_path) == before  # the replay and its source as they were

    unknown = "error: plugin 'no_such_lab': ModuleNotFoundError: No module named 'no_such_lab'"
    monkeypatch.chdir(tmp_path)
    for args in (
        ("report", "rep"),
        ("view", "rep"),
        ("rescore", "out", "--scorer", "x", "--out", "copy"),
        ("diagnose", "out", "--judge", "openai/lab", "--base-url", "http://127.0.0.1:9/v1"),
    ):
        # in this process: a plugin that is not found registers nothing
        done = CliRunner().invoke(cli, [*args, "--plugin", "no_such_lab"])
        assert (done.exit_code, done.stdout, done.stderr.strip()) == (2, "", unknown), args
    assert tree(tmp_path) == before
