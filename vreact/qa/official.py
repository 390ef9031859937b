"""HotpotQA's and 2WikiMultihopQA's official metrics, as their scripts compute them
(``hotpot_evaluate_v1.py``, ``2wikimultihop_evaluate_v1.1.py``; the tests run both scripts on
vreact's predictions): an answer's EM, F1, precision and recall, the supporting sentences', and
HotpotQA's joint figures. The qa family scores those formats' records by them
(``vreact.qa.formats.official``). Pure functions."""

from __future__ import annotations

import collections
from collections.abc import Iterable

from vreact.metrics import normalize_answer

_POLAR = ("yes", "no", "noanswer")


def official_answer(prediction: str, gold: str) -> tuple[float, float, float, float]:
    """(EM, F1, precision, recall) as HotpotQA's and 2Wiki's scripts score an answer: SQuAD's
    normalisation, and a yes, no or noanswer on either side that differs from the other is 0."""
    pred, ref = normalize_answer(prediction), normalize_answer(gold)
    em = float(pred == ref)
    if (pred in _POLAR or ref in _POLAR) and pred != ref:
        return em, 0.0, 0.0, 0.0
    common = collections.Counter(pred.split()) & collections.Counter(ref.split())
    same = sum(common.values())
    if same == 0:
        return em, 0.0, 0.0, 0.0
    precision, recall = same / len(pred.split()), same / len(ref.split())
    return em, 2 * precision * recall / (precision + recall), precision, recall


def official_best(prediction: str, golds: list[str]) -> tuple[float, float, float, float]:
    """The best EM, F1, precision and recall over the golds, each taken on its own (2Wiki's
    ``update_answer``; HotpotQA has one gold)."""
    scores = [official_answer(prediction, g) for g in golds] or [(0.0, 0.0, 0.0, 0.0)]
    return tuple(max(s[i] for s in scores) for i in range(4))  # type: ignore[return-value]


def sentence_support(
    predicted: Iterable[tuple[str, int]], gold: Iterable[tuple[str, int]], fold_titles: bool = False
) -> tuple[float, float, float, float]:
    """(EM, F1, precision, recall) of [title, sentence index] pairs, as the scripts' ``update_sp``
    (2Wiki folds the titles' case: ``fold_titles``)."""

    def norm(pairs: Iterable[tuple[str, int]]) -> set[tuple[str, int]]:
        return {(str(t).lower() if fold_titles else str(t), int(i)) for t, i in pairs}

    pred, ref = norm(predicted), norm(gold)
    tp, fp, fn = len(pred & ref), len(pred - ref), len(ref - pred)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return float(fp + fn == 0), f, precision, recall


def joint(
    answer: tuple[float, float, float, float], sp: tuple[float, float, float, float]
) -> tuple[float, float]:
    """HotpotQA's joint EM and F1 of an answer's and its support's (EM, F1, precision, recall)."""
    precision, recall = answer[2] * sp[2], answer[3] * sp[3]
    f = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return answer[0] * sp[0], f
