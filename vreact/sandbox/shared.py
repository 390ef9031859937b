"""A run's sandbox, for any family whose tries run model-written code (``runs_code``): what the
family opens once for the run (``TaskFamily.shared``, of the kind the experiment chose:
``bwrap``, or ``none``), shared by every thread of the run, and checked to start the first time
it is used. A family places its tasks in it (``place``) so that each attempt's runs, gates and
scorer use the run's own, and two runs in one process never share a choice."""

from __future__ import annotations

import threading
from typing import Any

from vreact.sandbox import Kind, Limits, Result, Sandbox, SandboxUnavailable, unavailable

#: The kinds whose start this process has seen (each is checked once).
_STARTED: set[str] = set()
_STARTED_LOCK = threading.Lock()


def started(kind: Kind, family: str = "") -> None:
    """Check once per process that a sandbox of ``kind`` starts here: a ``SandboxUnavailable``
    naming ``family`` (when given) and why it cannot (checked again next time)."""
    with _STARTED_LOCK:
        if kind in _STARTED:
            return
        why = unavailable(kind)
        if why is not None:
            who = f"the {family} family runs model-written code" if family else "model-written code runs"
            raise SandboxUnavailable(f"{who} only in a sandbox: {why}")
        _STARTED.add(kind)


class RunSandbox:
    """A run's sandbox (a ``vreact.families.Shared``): one ``Sandbox`` of ``kind``, made on first
    use and shared by every thread of the run; pickled as its kind and family alone, so a Ray
    worker that receives the run's tasks makes its own, once. ``place`` leaves the tasks as they
    are: a family whose tasks carry their sandbox (``vreact.code``, ``vreact.gsm8k``) overrides it."""

    #: the family whose run it is, named when the sandbox cannot start
    family = ""

    def __init__(self, kind: Kind = "bwrap") -> None:
        self.kind: Kind = kind
        self._made: Sandbox | None = None
        self._lock = threading.Lock()

    def sandbox(self) -> Sandbox:
        """The sandbox, its start checked (``started``) when it is first made."""
        with self._lock:
            if self._made is None:
                started(self.kind, self.family)
                self._made = Sandbox(Limits(), self.kind)
            return self._made

    def run(self, program: str, **options: Any) -> Result:
        """``Sandbox.run`` in it."""
        return self.sandbox().run(program, **options)

    def identity(self) -> dict[str, Any]:
        """Nothing of its own: a run's identity names its sandbox already (``sandbox``)."""
        return {}

    def place(self, tasks: list[Any], source: str) -> list[Any]:
        return tasks

    def __getstate__(self) -> dict[str, Any]:
        return {"kind": self.kind}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["kind"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.kind!r})"


def kind_of(name: str) -> Kind:
    """The kind an experiment's ``sandbox`` names (``none``: unsandboxed; else bubblewrap)."""
    return "none" if name == "none" else "bwrap"


__all__ = ["RunSandbox", "SandboxUnavailable", "kind_of", "started"]
