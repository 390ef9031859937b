"""The sandbox a code run runs its programs in: what the code family opens once for the run
(``Code.shared``, of the kind the experiment chose: ``bwrap``, or ``none``) and every task is
placed in, so each attempt's runs, gates and scorer, the probe and the dataset audit use the run's
own, and two runs in one process never share a choice. A problem or a program outside any run
(a replay's gates, ``vreact audit``, a test) runs in ``DEFAULT``, bubblewrap's."""

from __future__ import annotations

from typing import Any

from vreact.code.data import audit_with
from vreact.sandbox import shared


class RunSandbox(shared.RunSandbox):
    """A code run's sandbox (``vreact.sandbox.shared.RunSandbox``), whose problems are audited
    where they are placed in it."""

    family = "code"

    def place(self, tasks: list[Any], source: str) -> list[Any]:
        """The problems run in it; those whose dataset audit is not made yet (a user's file's:
        the shipped sets' is shipped) audited now, in it."""
        audit = audit_with(self)
        return [p.in_sandbox(self, None if p.audited else audit(p)) for p in tasks]


#: Where a problem or a program outside any run runs (bubblewrap's sandbox).
DEFAULT = RunSandbox("bwrap")


def of(holder: Any) -> RunSandbox:
    """The sandbox ``holder`` (a problem, a program) runs in: its run's, else ``DEFAULT``."""
    return getattr(holder, "sandbox", None) or DEFAULT


def opened(kind: str) -> RunSandbox:
    """A run's sandbox of the kind an experiment names (``none``: unsandboxed; else bubblewrap)."""
    return RunSandbox(shared.kind_of(kind))
