"""The answers a question offers ("Which came out first, X or Y?"), read in each form HotpotQA
and 2Wiki ask them, and the choice an answer holds: an offered choice is an answer, never a
restatement or too long for being one."""

from __future__ import annotations

import functools
import re

from vreact.metrics import normalize_answer

#: "between X and Y", up to what ends the pair: a wh-clause after a comma, the question mark, or
#: a verb or wh-word after it ("Which was founded first between X and Y?"); Y may hold commas.
_BETWEEN = re.compile(
    r"\bbetween\s+(.+?)(?=\s*(?:,\s*(?:which|who|what|whose)\b|\?|$"
    r"|\s(?:which|who|what|is|was|were|are|has|had|did|does|do)\b))",
    re.IGNORECASE,
)
#: "X or Y, which ...?", "..., X, or Y, was fought first?": the offered pair before a clause.
_THEN_WH = re.compile(r",\s*(?:which|who|what|whose|is|was|were|are|has|had|did|does|do)\b", re.IGNORECASE)
#: An "or" run into the choice after it, a typing slip ("X orThe Y"): read as " or ".
_GLUED_OR = re.compile(r"(?<=\s)or(?=[A-Z\"“])")
#: What may enclose a choice: quotes and parentheses.
_ENCLOSING = "\"'“”‘’()[] "


@functools.lru_cache(maxsize=4096)  # every answer gate of every try reads its question again
def choices(question: str) -> tuple[str, ...]:
    """The answers a question offers, none when it offers none, in each form HotpotQA and 2Wiki
    ask them: "..., X or Y?" and "...: X or Y?" (a choice may hold commas or colons itself,
    "Amélie, Queen of the Angels or The Last Harbour", so the first is read from every comma and
    colon before the "or"), "X or Y, which ...?" and "X, or Y, was ...?", "between X and Y"
    (read at every "and"), and each in quotes or parentheses, read without them; an "or" run
    into the next word ("X orThe Y") is read as one."""
    question = _GLUED_OR.sub("or ", question)
    pairs: list[tuple[str, str]] = []
    head, sep, tail = question.rpartition(" or ")
    if sep:
        second = _THEN_WH.split(tail, maxsplit=1)[0]
        cuts = [i for i, c in enumerate(head) if c in ",:("]
        pairs += [(head[i + 1 :], second) for i in cuts]
        if len(second) < len(tail):  # "X or Y, which ...?" (X from the start)
            pairs.append((head, second))
    for m in _BETWEEN.finditer(question):
        words = m.group(1).split(" and ")
        pairs += [(" and ".join(words[:k]), " and ".join(words[k:])) for k in range(1, len(words))]
    out: list[str] = []
    for pair in pairs:
        for choice in pair:
            bare = choice.strip().rstrip("?.,").strip()
            for c in (bare, bare.strip(_ENCLOSING)):
                if c and c not in out:
                    out.append(c)
    return tuple(out)


def offered_in(answer: str, question: str) -> list[str]:
    """The normalised words of the longest choice the question offers that ``answer`` holds
    (a run of its words), or none."""
    ans = normalize_answer(answer).split()
    held = [
        c
        for c in (normalize_answer(x).split() for x in choices(question))
        if c and any(ans[i : i + len(c)] == c for i in range(len(ans) - len(c) + 1))
    ]
    return max(held, key=len, default=[])
