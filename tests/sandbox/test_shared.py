"""A run's sandbox is the core's (``vreact.sandbox.shared``), so a family outside vreact's own
runs its model-written code as the code family does: made once, checked to start, named in the
one line that says it cannot, and sent to a Ray worker as its kind alone."""

from __future__ import annotations

import pickle

import pytest

from vreact.code.sandboxes import RunSandbox as CodeSandbox
from vreact.sandbox import SandboxUnavailable, shared


class Sums(shared.RunSandbox):
    family = "sums"


def test_a_familys_own_run_sandbox_runs_a_program_once_made():
    box = Sums("none")
    result = box.run("print(6 * 7)", mode="run")
    assert result.marked and result.output.strip() == "42"
    assert box.sandbox() is box.sandbox()  # made once, shared
    assert box.place(["t"], "file") == ["t"] and box.identity() == {}


def test_it_travels_as_its_kind_alone():
    box = Sums("none")
    box.sandbox()
    copy = pickle.loads(pickle.dumps(box))
    assert type(copy) is Sums and copy.kind == "none" and copy._made is None


def test_a_sandbox_that_cannot_start_is_one_line_naming_the_family(monkeypatch):
    monkeypatch.setattr(shared, "unavailable", lambda kind: "bubblewrap is not installed")
    monkeypatch.setattr(shared, "_STARTED", set())
    with pytest.raises(SandboxUnavailable, match=r"^the sums family runs model-written code only in a"):
        Sums("bwrap").sandbox()
    with pytest.raises(SandboxUnavailable, match=r"^the code family runs model-written code only in a"):
        CodeSandbox("bwrap").sandbox()
    with pytest.raises(SandboxUnavailable, match=r"^model-written code runs only in a sandbox: bubblewrap"):
        shared.RunSandbox("bwrap").sandbox()


def test_the_kind_an_experiment_names():
    assert shared.kind_of("none") == "none" and shared.kind_of("bwrap") == "bwrap"
