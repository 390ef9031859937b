"""HumanEval+'s scorer: a program is right when it answers every one of its problem's HumanEval+
inputs as the reference solution does, compared as EvalPlus 0.3.1 compares.

The expected outputs come from HumanEval+'s own ``canonical_solution``, run once in the sandbox
on ``base_input`` and ``plus_input`` (the outputs, as ``repr``, and each call's time), and kept
in the cache folder (``humanevalplus/`` under ``vreact.model.default_cache_dir``), one file a
problem, keyed by the sha256 of the problem's HumanEval+ data (its file's bytes for that
problem: prompt, reference solution, inputs, tolerance), its id and the sandbox's Python
version; an entry that cannot be read, or that does not match, is computed again. A program is
then run once in the sandbox over every input, each call in its own time (EvalPlus's: four
times the reference's, at least a second; a call that runs out fails), the whole run in a wall
clock and an output limit that grow with the number of inputs. The comparison is the sandbox
runner's (``vreact.sandbox._harness.compare``), outside the program's process. Everything here
is gold: the scorer's alone, never a prompt, a gate or a judge.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vreact.model import default_cache_dir
from vreact.sandbox import PYTHON, Kind, Limits, Sandbox, SandboxUnavailable, unavailable

#: EvalPlus 0.3.1's own constants (``evalplus.config``, ``evalplus.eval.untrusted_check``): a
#: call's time is ``max(MIN_TIME_LIMIT, TIME_LIMIT_FACTOR * the reference's time)``; the base
#: inputs and the plus inputs each get at most ``TASK_TIMEOUT`` seconds in all.
MIN_TIME_LIMIT = 1.0
TIME_LIMIT_FACTOR = 4.0
TASK_TIMEOUT = 60.0
#: EvalPlus's memory cap (``EVALPLUS_MAX_MEMORY_BYTES``'s default: 4 GiB).
MEMORY_MB = 4096
#: The reference solution's run: a call's time, and the whole run's.
ORACLE_CALL_S = 30.0
ORACLE_WALL_S = 300.0
#: The cache folder's subfolder, and the version of its entries' form (a new one computes them
#: again).
CACHE = "humanevalplus"
FORM = 2


class ScorerError(RuntimeError):
    """HumanEval+ cannot score here: no inputs for the problem, no sandbox, or a reference
    solution that fails its own inputs (one line saying which)."""


@dataclass(frozen=True)
class Oracle:
    """A problem's inputs (base first, then plus), the reference's output on each (``repr``)
    and its time on each (seconds); ``base``: how many are HumanEval's own."""

    inputs: list[list[Any]]
    outputs: list[str]
    seconds: list[float]
    base: int
    atol: float

    def limits(self) -> list[float]:
        """Each call's time, as EvalPlus gives it."""
        return [max(MIN_TIME_LIMIT, TIME_LIMIT_FACTOR * t) for t in self.seconds]

    def wall(self) -> float:
        """The whole run's: the base and the plus inputs' times each capped as EvalPlus caps
        them (``TASK_TIMEOUT``, plus its second), and the sandbox's start."""
        limits = self.limits()
        parts = (limits[: self.base], limits[self.base :])
        return sum(min(TASK_TIMEOUT, sum(p)) + 1.0 for p in parts) + 5.0


def data_of(problem: Any) -> dict[str, Any]:
    """The problem's HumanEval+ data (``Problem.plus``), or a ``ScorerError`` naming it."""
    text = str(getattr(problem, "plus", "") or "")
    if not text:
        raise ScorerError(f"{problem.id}: no HumanEval+ inputs (read it with --format humanevalplus)")
    return json.loads(text)


@functools.cache
def sandbox_python(kind: Kind) -> str:
    """The version of the Python the sandbox runs programs with (``3.11``): part of a cache key."""
    done = subprocess.run(
        [PYTHON, "-I", "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return done.stdout.strip() or "unknown"


@functools.cache
def _checked(kind: Kind) -> Kind:
    """``kind``, once it was seen to start in this process (a failure is checked again)."""
    why = unavailable(kind)
    if why is not None:
        raise SandboxUnavailable(f"HumanEval+ runs programs only in a sandbox: {why}")
    return kind


def _sandbox(limits: Limits, kind: Kind) -> Sandbox:
    return Sandbox(limits, _checked(kind))


def _entry(problem: Any, digest: str, cache_dir: Path | None, kind: Kind) -> Path:
    python = sandbox_python(kind)
    safe = str(problem.id).replace("/", "-")
    folder = Path(cache_dir or default_cache_dir()) / CACHE / f"v{FORM}-py{python}"
    return folder / f"{safe}-{digest[:20]}.json"


def _read(path: Path, n: int) -> tuple[list[str], list[float]] | None:
    """A cache entry's outputs and times, or None when it is missing or damaged."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        outputs, seconds = data["outputs"], data["seconds"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not (isinstance(outputs, list) and isinstance(seconds, list) and len(outputs) == len(seconds) == n):
        return None
    if not all(isinstance(o, str) for o in outputs) or not all(
        isinstance(t, int | float) and t >= 0 for t in seconds
    ):
        return None
    return outputs, [float(t) for t in seconds]


def _write(path: Path, data: dict[str, Any]) -> None:
    """Write a cache entry whole or not at all (a crash leaves the old one, or none)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".entry-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def oracle(problem: Any, cache_dir: Path | None = None, kind: Kind = "bwrap") -> Oracle:
    """The problem's expected outputs and the reference's times: from the cache, or computed in
    a sandbox of ``kind`` and kept there."""
    data = data_of(problem)
    inputs = [*data["base_input"], *data["plus_input"]]
    digest = hashlib.sha256(str(problem.plus).encode()).hexdigest()
    path = _entry(problem, digest, cache_dir, kind)
    found = _read(path, len(inputs))
    if found is None:
        program = str(data["prompt"]) + str(data["canonical_solution"])
        limits = Limits(
            wall_s=ORACLE_WALL_S, call_s=ORACLE_CALL_S, cpu_s=int(ORACLE_WALL_S), memory_mb=MEMORY_MB
        )
        result = _sandbox(limits, kind).run(
            program, mode="oracle", entry_point=problem.entry_point, inputs=inputs
        )
        reply = result.inputs or {}
        if not (result.marked and result.loaded and reply.get("passed")):
            why = reply.get("error") or result.error or result.stopped or result.killed or "no reply"
            where = f" on input {reply['index']}" if "index" in reply else ""
            raise ScorerError(f"{problem.id}: HumanEval+'s reference solution fails{where}: {why}")
        found = list(reply["outputs"]), [float(t) for t in reply["seconds"]]
        _write(path, {"task_id": problem.id, "digest": digest, "outputs": found[0], "seconds": found[1]})
    return Oracle(inputs, found[0], found[1], len(data["base_input"]), float(data.get("atol") or 0))


def passes(problem: Any, program: str, cache_dir: Path | None = None, kind: Kind = "bwrap") -> bool:
    """Whether ``program`` answers every HumanEval+ input of ``problem`` as its reference does,
    run in a sandbox of ``kind`` (the run's)."""
    o = oracle(problem, cache_dir, kind)
    wall = o.wall()
    limits = Limits(
        wall_s=wall,
        call_s=max(o.limits(), default=MIN_TIME_LIMIT),
        cpu_s=int(wall) + 1,
        memory_mb=MEMORY_MB,
        file_mb=4 + len(o.inputs) // 64,  # what the program prints grows with its calls
    )
    result = _sandbox(limits, kind).run(
        program,
        mode="inputs",
        entry_point=problem.entry_point,
        inputs=o.inputs,
        expected=o.outputs,
        limits=o.limits(),
        atol=o.atol,
    )
    reply = result.inputs or {}
    return bool(result.marked and result.loaded and result.stopped is None and reply.get("passed") is True)
