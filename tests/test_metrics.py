"""MuSiQue's answer metrics, against values worked out by hand on real records."""

from __future__ import annotations

import pytest

from tests.conftest import musique_records
from vreact.metrics import best_em, best_f1, exact_match, f1, normalize_answer

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
