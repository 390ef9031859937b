"""The sandbox a code run runs its programs in: what the code family opens once for the run
(``Code.shared``, of the kind the experiment chose: ``bwrap``, or ``none``) and every task is
placed in, so each attempt's runs, gates and scorer, the probe and the dataset audit use the run's
own, and two runs in one process never share a choice. A problem or a program outside any run
(a replay's gates, ``vreact audit``, a test) runs in ``DEFAULT``, bubblewrap's."""

from __future__ import annotations

import threading
from typing import Any

from vreact.code.data import audit_with
from vreact.sandbox import Kind, Limits, Result, Sandbox, SandboxUnavailable, unavailable

#: The kinds whose start this process has seen (each is checked once).
_STARTED: set[str] = set()
_STARTED_LOCK = threading.Lock()


def started(kind: Kind) -> None:
    """Check once per process that a sandbox of ``kind`` starts here: a ``SandboxUnavailable``
    naming why it cannot (checked again next time)."""
    with _STARTED_LOCK:
        if kind in _STARTED:
            return
        why = unavailable(kind)
        if why is not None:
            raise SandboxUnavailable(f"the code family runs model-written code only in a sandbox: {why}")
        _STARTED.add(kind)


class RunSandbox:
    """A run's sandbox (a ``vreact.families.Shared``): one ``Sandbox`` of ``kind``, made on first
    use and shared by every thread of the run; pickled as its kind alone, so a Ray worker that
    receives the run's tasks makes its own, once."""

    def __init__(self, kind: Kind = "bwrap") -> None:
        self.kind: Kind = kind
        self._made: Sandbox | None = None
        self._lock = threading.Lock()

    def sandbox(self) -> Sandbox:
        """The sandbox, its start checked (``started``) when it is first made."""
        with self._lock:
            if self._made is None:
                started(self.kind)
                self._made = Sandbox(Limits(), self.kind)
            return self._made

    def run(self, program: str, **options: Any) -> Result:
        """``Sandbox.run`` in it."""
        return self.sandbox().run(program, **options)

    def identity(self) -> dict[str, Any]:
        """Nothing of its own: a code run's identity names its sandbox already (``sandbox``)."""
        return {}

    def place(self, tasks: list[Any], source: str) -> list[Any]:
        """The problems run in it; those whose dataset audit is not made yet (a user's file's:
        the shipped sets' is shipped) audited now, in it."""
        audit = audit_with(self)
        return [p.in_sandbox(self, None if p.audited else audit(p)) for p in tasks]

    def __getstate__(self) -> dict[str, Any]:
        return {"kind": self.kind}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["kind"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"RunSandbox({self.kind!r})"


#: Where a problem or a program outside any run runs (bubblewrap's sandbox).
DEFAULT = RunSandbox("bwrap")


def of(holder: Any) -> RunSandbox:
    """The sandbox ``holder`` (a problem, a program) runs in: its run's, else ``DEFAULT``."""
    return getattr(holder, "sandbox", None) or DEFAULT


def opened(kind: str) -> RunSandbox:
    """A run's sandbox of the kind an experiment names (``none``: unsandboxed; else bubblewrap)."""
    return RunSandbox("none" if kind == "none" else "bwrap")
