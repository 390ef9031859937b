"""MuSiQue's answer metrics: normalisation, exact match and F1 over the answer and aliases."""

from __future__ import annotations

import collections
import re
import string

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and articles, fold white space (SQuAD/MuSiQue)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1(prediction: str, gold: str) -> float:
    pred = normalize_answer(prediction).split()
    ref = normalize_answer(gold).split()
    common = collections.Counter(pred) & collections.Counter(ref)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred)
    recall = same / len(ref)
    return 2 * precision * recall / (precision + recall)


def best_em(prediction: str, golds: list[str]) -> float:
    """Exact match against the best of the answer and its aliases."""
    return max((exact_match(prediction, g) for g in golds), default=0.0)


def best_f1(prediction: str, golds: list[str]) -> float:
    """F1 against the best of the answer and its aliases."""
    return max((f1(prediction, g) for g in golds), default=0.0)
