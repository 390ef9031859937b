"""The gsm8k family's gates: free and deterministic, reading a ``Solution`` (its program as it
ran in the sandbox, what it printed, the prose around it) and the question, never gold. A
rejection's detail is the sentence the failure index carries to the next try."""

from __future__ import annotations

import re
from typing import Any

from vreact import syntax
from vreact.gsm8k.artifact import one_number
from vreact.gsm8k.numbers import NUMBER, claims, number, same, shown
from vreact.verify.gates import GateResult, accept, gate, reject

#: Where prose asserts its final answer: ``the answer is 42``, ``Answer: 42``, ``#### 42``,
#: ``\boxed{42}``.
ASSERTED = re.compile(
    r"(?:answer\s*(?:is|:|=)|####|\\boxed\{)\s*\**\s*(" + NUMBER.pattern + r")", re.IGNORECASE
)
#: A question that asks for a count.
COUNT = re.compile(r"\bhow\s+many\b", re.IGNORECASE)


@gate("prints_a_number")
def prints_a_number() -> Any:
    """The program parses, runs to its end in the sandbox and prints one number, nothing else."""

    def check(s: Any) -> GateResult:
        try:
            syntax.parse(s.program)
        except SyntaxError as e:
            return reject("syntax_error", f"line {e.lineno}: {e.msg}")
        if s.error.startswith("stopped:"):
            return reject("timeout", f"the program was {s.error}")
        if s.error:
            return reject("raised", f"the program raised {s.error}")
        if not s.output.strip():
            return reject("printed_nothing", "the program printed nothing: print the answer")
        if not one_number(s.output):
            return reject(
                "not_one_number",
                f"the program printed {s.output.strip()[:120]!r}: print the answer alone, one number",
            )
        return accept()

    return check


@gate("claims_agree")
def claims_agree() -> Any:
    """Each arithmetic claim the reply states, in its prose or its program's comments
    ("3 * 12 = 36"), agrees with its value recomputed by the calculator (to the decimals the
    claim states)."""

    def check(s: Any) -> GateResult:
        for claim in claims(f"{s.prose}\n{s.comments()}"):
            if not claim.agrees:
                return reject("arithmetic_wrong", claim.said())
        return accept()

    return check


@gate("answer_is_printed")
def answer_is_printed() -> Any:
    """A final answer the prose asserts ("the answer is 42") is the number the program printed."""

    def check(s: Any) -> GateResult:
        printed = s.printed()
        for m in ASSERTED.finditer(s.prose):
            said = number(m.group(1))
            if said is not None and (printed is None or not same(said, printed)):
                what = f"printed {s.answer}" if printed is not None else "printed no number"
                return reject(
                    "answer_contradicted", f"the reply says the answer is {m.group(1)}; the program {what}"
                )
        return accept()

    return check


@gate("count_not_negative")
def count_not_negative() -> Any:
    """Where the question asks "how many", the answer is not negative."""

    def check(s: Any) -> GateResult:
        printed = s.printed()
        if printed is not None and printed < 0 and COUNT.search(s.question):
            return reject(
                "negative_count", f"the question asks how many; the program printed {shown(printed)}"
            )
        return accept()

    return check


@gate("whole_answer")
def whole_answer(whole_number: bool = False) -> Any:
    """With the spec's ``whole_number`` (off by default: it is a prior about the dataset, whose
    answers are whole), the answer is a whole number."""

    def check(s: Any) -> GateResult:
        printed = s.printed()
        if whole_number and printed is not None and not same(printed, round(printed)):
            return reject("not_whole", f"the program printed {s.answer}, not a whole number")
        return accept()

    return check
