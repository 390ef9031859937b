"""The controller: the V's state machine (``Controller``), the attempt context it works in,
and one executor try as a step pipeline."""

from vreact.controller._context import AttemptContext, Recorder
from vreact.controller._machine import PLANNER, Controller
from vreact.controller._outcome import CrashKind, Outcome, OutcomeKind
from vreact.controller._try import ANSWER, ExecutorTry

__all__ = [
    "ANSWER",
    "PLANNER",
    "AttemptContext",
    "Controller",
    "CrashKind",
    "ExecutorTry",
    "Outcome",
    "OutcomeKind",
    "Recorder",
]
