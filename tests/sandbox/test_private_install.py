"""The sandbox wherever vreact is installed: a copy of the package in a folder only its owner may
enter (a clone under ``/root``, a ``mktemp -d`` folder), run as root, runs its programs and holds
the hostile battery; a private ``TMPDIR`` is passed over; and when bubblewrap is given a path the
sandbox's users cannot reach, ``unavailable()`` names the path, the folder in the way and the fix,
apart from bubblewrap missing or unable to start."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from vreact import sandbox as sandbox_module
from vreact.sandbox import Sandbox, closed_folder, unavailable, work_parent

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root's runs take another user")


@pytest.fixture
def private() -> Iterator[Path]:
    """A folder only its owner may enter, in the system's temporary folder (which others may)."""
    folder = Path(tempfile.mkdtemp(prefix="vreact-private-", dir="/tmp"))
    assert folder.stat().st_mode & 0o777 == 0o700
    yield folder
    shutil.rmtree(folder)


def copy_of_the_checkout(into: Path) -> Path:
    """The package, its tests and its settings, copied as a clone would hold them."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("vreact", "tests"):
        shutil.copytree(REPO / name, into / name, symlinks=True, ignore=ignore)
    shutil.copy(REPO / "pyproject.toml", into / "pyproject.toml")
    return into


@as_root
def test_a_copy_in_a_private_folder_runs_its_sandbox_and_holds_the_hostile_battery(private):
    checkout = copy_of_the_checkout(private)
    assert closed_folder(checkout / "vreact" / "sandbox" / "_harness.py") == str(checkout)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    program = (
        "import vreact.sandbox as s\n"
        "print(s.__file__)\n"
        "print(s.unavailable())\n"
        "r = s.Sandbox().run('def f(x):\\n    return 2 * x\\n', entry_point='f', examples=[('(1,)', '2')])\n"
        "print(r.passed, r.killed)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=checkout, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported, why, result = done.stdout.splitlines()
    assert imported == str(checkout / "vreact" / "sandbox" / "__init__.py")
    assert why == "None"
    assert result == "True None"

    battery = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/sandbox/test_hostile.py",
    ]
    done = subprocess.run(battery, cwd=checkout, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout and "error" not in done.stdout


def test_a_private_tmpdir_is_passed_over_and_a_program_runs(private, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    assert tempfile.gettempdir() == str(private)
    expected = sandbox_module.SYSTEM_TMP if os.geteuid() == 0 else str(private)
    assert work_parent() == expected
    assert unavailable() is None
    result = Sandbox().run("print('hello')", mode="run")
    assert result.marked and result.output == "hello\n", result


@as_root
def test_a_work_folder_the_users_cannot_reach_is_named_with_the_fix(private, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    monkeypatch.setattr(sandbox_module, "SYSTEM_TMP", str(private / "tmp"))
    why = unavailable()
    assert why is not None
    assert why.startswith(
        f"bubblewrap is installed, but the sandbox's users (uid 61000 and up) cannot reach {private}/tmp: "
    )
    assert f"others may not enter {private}" in why and f"chmod o+x {private}" in why and "TMPDIR" in why


@as_root
def test_bubblewraps_own_words_for_a_path_it_cannot_reach_are_read_as_that_path(private, monkeypatch):
    """A path bubblewrap is given that the run's user may not walk to: bubblewrap's real refusal,
    read back as the path and the folder in the way, not as "cannot start"."""
    hidden = private / "data.txt"
    hidden.write_text("x")
    command = Sandbox._command

    def with_a_bind(self, work, *fds):
        args = command(self, work, *fds)
        at = args.index("--unshare-all")
        return [*args[:at], "--ro-bind", str(hidden), "/data.txt", *args[at:]]

    monkeypatch.setattr(Sandbox, "_command", with_a_bind)
    why = unavailable()
    assert why is not None
    assert f"cannot reach {hidden}: others may not enter {private}" in why
    assert "Can't find source path" in why and f"chmod o+x {private}" in why


def test_bubblewrap_missing_is_said_apart_from_a_path(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert unavailable() == "bubblewrap is not installed: apt-get install bubblewrap (or say sandbox: none)"


def test_bubblewrap_that_cannot_start_says_so_with_its_own_words(monkeypatch):
    command = Sandbox._command

    def broken(self, work, *fds):
        args = command(self, work, *fds)
        return [args[0], "--no-such-option", *args[1:]]

    monkeypatch.setattr(Sandbox, "_command", broken)
    why = unavailable()
    assert why is not None and why.startswith("bubblewrap is installed but cannot start here: ")
    assert "no-such-option" in why


def test_closed_folder_is_the_first_folder_others_may_not_enter(private):
    inner = private / "a" / "b"
    inner.mkdir(parents=True)
    inner.chmod(0o755)
    assert closed_folder("/usr/bin") is None
    assert closed_folder("/tmp") is None
    assert closed_folder(inner) == str(private)
    private.chmod(0o711)
    assert closed_folder(inner) is None
