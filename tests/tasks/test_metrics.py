"""MuSiQue's metrics (answer, support, answerability, groups), against values worked out by hand
on real records."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FULL, musique_records
from vreact.metrics import (
    GroupMember,
    answerability,
    best_em,
    best_f1,
    exact_match,
    f1,
    group_sufficiency,
    normalize_answer,
    support_f1,
)

BY_ID = {r["id"]: r for r in musique_records()}


def golds(record):
    return [record["answer"], *record["answer_aliases"]]


def test_normalisation_drops_case_punctuation_and_articles():
    assert normalize_answer("The  Anglican Communion.") == "anglican communion"
    assert normalize_answer("G. Stanley Hall") == "g stanley hall"


def test_aliases_count_for_exact_match():
    hall = next(r for r in BY_ID.values() if r["answer"] == "G. Stanley Hall")
    assert golds(hall) == ["G. Stanley Hall", "Stanley Hall"]
    assert best_em("stanley hall", golds(hall)) == 1.0
    assert best_em("Hall", golds(hall)) == 0.0
    # "Hall" vs "stanley hall": P = 1/1, R = 1/2 -> F1 = 2/3
    assert best_f1("Hall", golds(hall)) == pytest.approx(2 / 3)


def test_f1_by_hand():
    # pred "john stanley", gold "g stanley hall": 1 common; P = 1/2, R = 1/3 -> F1 = 0.4
    assert f1("John Stanley", "G. Stanley Hall") == pytest.approx(0.4)
    assert f1("", "1991") == 0.0 and exact_match("1991.", "1991") == 1.0


def test_unanswerable_records_still_carry_their_answer():
    record = BY_ID["2hop__42543_20093"]
    assert record["answerable"] is False and record["answer"] == "1991"
    assert best_em("1991", golds(record)) == 1.0


def gold_support(record):
    return [str(p["idx"]) for p in record["paragraphs"] if p["is_supporting"]]


def test_support_f1_by_hand_on_a_real_three_hop_record():
    kadewe = BY_ID["3hop1__107866_146715_19973"]
    assert gold_support(kadewe) == ["7", "15", "17"]
    gold = gold_support(kadewe)
    # {17, 7}: 2 common; P = 2/2, R = 2/3 -> F1 = 2 * (2/3) / (5/3) = 0.8
    assert support_f1(["17", "7"], gold) == pytest.approx(0.8)
    # {7, 3, 5, 15}: 2 common; P = 2/4, R = 2/3 -> F1 = (2/3) / (7/6) = 4/7
    assert support_f1(["7", "3", "5", "15"], gold) == pytest.approx(4 / 7)
    # a set: the repeated 7 counts once; P = 1/1, R = 1/3 -> F1 = 0.5
    assert support_f1(["7", "7"], gold) == pytest.approx(0.5)
    # MuSiQue's ids are ints: 17 and "17" are the same paragraph
    assert support_f1([17, 15, 7], gold) == 1.0
    assert support_f1(["07", " 15", "17"], gold) == 1.0
    assert support_f1(["p7", "3"], gold) == 0.0


def test_an_empty_prediction_scores_zero_even_against_empty_gold():
    # official evaluator (HotpotQA's metric): P and R are 0 without true positives
    assert support_f1([], gold_support(BY_ID["2hop__269805_135710"])) == 0.0
    assert gold_support(BY_ID["2hop__42543_20093"]) == []  # unanswerable: every support removed
    assert support_f1([], []) == 0.0


def test_answerability_positive_class_is_answerable():
    # (predicted answerable, gold answerable): 2 TP, 1 FP, 1 FN, 1 TN
    preds = [(True, True), (True, True), (True, False), (False, True), (False, False)]
    # P = 2/3, R = 2/3 -> F1 = 2/3
    assert answerability(preds) == pytest.approx({"precision": 2 / 3, "recall": 2 / 3, "f1": 2 / 3})
    # 1 TP, 2 FP: P = 1/3, R = 1/1 -> F1 = (2/3) / (4/3) = 0.5
    assert answerability([(True, True), (True, False), (True, False)]) == pytest.approx(
        {"precision": 1 / 3, "recall": 1.0, "f1": 0.5}
    )


def test_answerability_is_none_when_undefined():
    # nothing answered: precision undefined; nothing answerable: recall undefined
    assert answerability([(False, True)]) == {"precision": None, "recall": 0.0, "f1": None}
    assert answerability([(True, False)]) == {"precision": 0.0, "recall": None, "f1": None}
    assert answerability([]) == {"precision": None, "recall": None, "f1": None}
    # both defined and zero: F1 is 0
    assert answerability([(True, False), (False, True)]) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_the_shipped_full_records_hold_no_complete_pair():
    # In MuSiQue-Full both members of a pair share an id; these 80 lines repeat none (and no
    # question either), so a run on them has no group metrics.
    full = [json.loads(line) for line in FULL.read_text().splitlines() if line.strip()]
    assert len(full) == 80
    assert len({r["id"] for r in full}) == len({r["question"] for r in full}) == 80


def test_group_sufficiency_needs_both_answerability_predictions_right():
    members = [
        # pair a: both right -> the answerable member's figures
        GroupMember("a", True, True, 0.5, 0.8),
        GroupMember("a", False, False, 0.0, 0.0),
        # pair b: the unanswerable member answered -> 0, whatever the answerable member scored
        GroupMember("b", True, True, 1.0, 1.0),
        GroupMember("b", False, True, 1.0, 1.0),
        # c: not a complete pair -> not counted
        GroupMember("c", True, True, 1.0, 1.0),
    ]
    # answer: (0.5 + 0) / 2 = 0.25; support: (0.8 + 0) / 2 = 0.4
    assert group_sufficiency(members) == pytest.approx(
        {"pairs": 2, "group_answer_sufficiency_f1": 0.25, "group_support_sufficiency_f1": 0.4}
    )
    assert group_sufficiency(members[4:]) == {
        "pairs": 0,
        "group_answer_sufficiency_f1": None,
        "group_support_sufficiency_f1": None,
    }
