"""The gates every family may use: they read only what any artifact has (its kind, answer,
evidence and reason). Each is free, deterministic and fails closed."""

from __future__ import annotations

from vreact.families import Artifact
from vreact.metrics import normalize_answer
from vreact.verify.gates._registry import Check, GateResult, accept, gate, reject


def _tokens(text: str) -> list[str]:
    return normalize_answer(text).split()


@gate("parses", kinds=("answer", "abstain"))
def parses() -> Check:
    """The artifact has the fields of its schema with the right types."""

    def check(a: Artifact) -> GateResult:
        if a.kind == "abstain":
            return accept() if isinstance(a.reason, str) else reject("format", "reason is not text")
        if not isinstance(a.answer, str):
            return reject("format", f"answer is {type(a.answer).__name__}, not text")
        if not isinstance(a.evidence, list) or not all(isinstance(e, str) for e in a.evidence):
            return reject("format", "evidence is not a list of paragraph ids")
        return accept()

    return check


@gate("non_empty")
def non_empty() -> Check:
    """The answer holds at least one letter or digit."""

    def check(a: Artifact) -> GateResult:
        return accept() if _tokens(str(a.answer)) else reject("empty_answer", "the answer is empty")

    return check


@gate("max_words")
def max_words(max_words: int = 15) -> Check:
    """The answer is at most ``max_words`` words long (as its family counts them, when its
    artifact says: ``answer_words()``; qa counts a choice the question offers as one)."""

    def check(a: Artifact) -> GateResult:
        count = getattr(a, "answer_words", None)
        n = count() if callable(count) else len(str(a.answer).split())
        if n > max_words:
            return reject("too_long", f"the answer has {n} words; at most {max_words} allowed")
        return accept()

    return check


@gate("abstention_allowed", kinds=("abstain",))
def abstention_allowed(abstention_allowed: bool = True) -> Check:
    """Abstaining is allowed by the task's requirements (L1)."""

    def check(a: Artifact) -> GateResult:
        return (
            accept() if abstention_allowed else reject("abstention_forbidden", "the task requires an answer")
        )

    return check
