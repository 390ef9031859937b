"""MuSiQue's metrics: answer EM and F1 over the answer and aliases, support F1, answerability
precision/recall/F1, and MuSiQue-Full's group (sufficiency) metrics. Pure functions."""

from __future__ import annotations

import collections
import re
import string
from collections.abc import Hashable, Iterable
from typing import Any, NamedTuple

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = set(string.punctuation)
_NO_PUNCT = str.maketrans("", "", string.punctuation)  # the same characters, dropped at C speed


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and articles, fold white space (SQuAD/MuSiQue)."""
    text = text.lower()
    text = text.translate(_NO_PUNCT)
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


def _pid(x: object) -> str:
    """A paragraph id as text; numerals compare as numbers (``"07"`` is ``7``), as MuSiQue's ints do."""
    s = str(x).strip()
    return str(int(s)) if s.isascii() and s.isdigit() else s


def support_f1(predicted: Iterable[object], gold: Iterable[object]) -> float:
    """MuSiQue's support F1: F1 between the sets of predicted and gold supporting paragraph ids.

    As in the official evaluator (HotpotQA's supporting-fact metric), an empty prediction
    scores 0, and so does an empty prediction against an empty gold set.
    """
    pred = {_pid(p) for p in predicted}
    ref = {_pid(g) for g in gold}
    same = len(pred & ref)
    if same == 0:
        return 0.0
    precision = same / len(pred)
    recall = same / len(ref)
    return 2 * precision * recall / (precision + recall)


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def answerability(predictions: Iterable[tuple[bool, bool]]) -> dict[str, float | None]:
    """Precision, recall and F1 of answerability over (predicted, gold) pairs.

    The positive class is *answerable*: answering predicts answerable, abstaining predicts
    unanswerable. A figure whose denominator is zero is None; F1 is 0 when P = R = 0.
    """
    tp = predicted_pos = gold_pos = 0
    for predicted, gold in predictions:
        tp += predicted and gold
        predicted_pos += predicted
        gold_pos += gold
    precision = _ratio(tp, predicted_pos)
    recall = _ratio(tp, gold_pos)
    if precision is None or recall is None:
        f = None
    elif precision + recall == 0:
        f = 0.0
    else:
        f = 2 * precision * recall / (precision + recall)
    return {"precision": precision, "recall": recall, "f1": f}


class GroupMember(NamedTuple):
    """One prediction on one member of a MuSiQue-Full pair."""

    group: Hashable
    gold_answerable: bool
    predicted_answerable: bool
    answer_f1: float  # best F1 of the predicted answer against the answer and aliases
    support_f1: float


def group_sufficiency(members: Iterable[GroupMember]) -> dict[str, Any]:
    """MuSiQue-Full's group metrics (the official ``GroupAnswerSufficiencyMetric`` and
    ``GroupSupportSufficiencyMetric``): per pair, the answerable member's answer (support) F1
    when the answerability prediction is right for *both* members, else 0; mean over pairs.

    Only complete pairs (one answerable and one unanswerable member) count; with none, the
    two figures are None.
    """
    groups: dict[Hashable, list[GroupMember]] = collections.defaultdict(list)
    for m in members:
        groups[m.group].append(m)
    answer: list[float] = []
    support: list[float] = []
    for ms in groups.values():
        if sorted(m.gold_answerable for m in ms) != [False, True]:
            continue
        right = all(m.predicted_answerable == m.gold_answerable for m in ms)
        positive = next(m for m in ms if m.gold_answerable)
        answer.append(positive.answer_f1 if right else 0.0)
        support.append(positive.support_f1 if right else 0.0)
    return {
        "pairs": len(answer),
        "group_answer_sufficiency_f1": sum(answer) / len(answer) if answer else None,
        "group_support_sufficiency_f1": sum(support) / len(support) if support else None,
    }
