"""The calculator computes arithmetic by walking Python's tree, never ``eval``; the claims reader
finds what a reply states and each claim is recomputed to the decimals it states."""

from __future__ import annotations

import pytest

from vreact.gsm8k.numbers import calculate, claims, number, same


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("48/2", 24.0),
        ("48+24", 72.0),
        ("-14+-8+1", -21.0),
        ("(2 + 3) * 4", 20.0),
        ("2**10", 1024.0),
        ("7//2", 3.0),
    ],
)
def test_the_calculator_computes_arithmetic(expression, value):
    assert calculate(expression) == value


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('true')",
        "x + 1",
        "abs(-2)",
        "[1, 2]",
        "1 / 0",
        "10 ** 100",
        "'3' * 3",
        "True + 1",
    ],
)
def test_anything_but_arithmetic_of_numbers_is_refused(expression):
    with pytest.raises(ValueError):
        calculate(expression)


def test_numbers_as_written():
    assert number("$1,200.50") == 1200.5 and number("72.") == 72.0 and number("-7") == -7.0
    assert number(".5") == 0.5 and number("1,2") is None and number("seventy") is None and number("") is None
    assert same(72.0, 72) and not same(72.0, 72.01)


def said(text):
    return [(c.expression, c.claimed, c.agrees) for c in claims(text)]


def test_claims_are_read_and_recomputed():
    assert said("Natalia sold 48/2 = 24 clips in May.") == [("48/2", "24", True)]
    assert said("He earns 0.2 x 50 = $10.") == [("0.2 x 50", "10", True)]
    assert said("-14 + (-8) + 1 = -21 degrees") == [("-14 + (-8) + 1", "-21", True)]
    assert said("In 2019, 5 + 3 = 8") == [("5 + 3", "8", True)]
    assert said("1,200 * 2 = 2,400") == [("1,200 * 2", "2,400", True)]
    assert said("3 * 12 = 38") == [("3 * 12", "38", False)]


def test_a_claim_agrees_to_the_decimals_it_states_and_a_whole_number_claimed_is_exact():
    assert said("10/3 = 3.33") == [("10/3", "3.33", True)]
    assert said("10/3 = 3.3") == [("10/3", "3.3", True)]
    assert said("10/3 = 3.4") == [("10/3", "3.4", False)]
    assert said("48 / 7 = 7") == [("48 / 7", "7", False)]


@pytest.mark.parametrize(
    "text",
    [
        "x == 3 + 4",
        "2x + 3 = 7",
        "v1 * 50 = 10",
        "round(48 / 7) = 7",
        "total = price * 3",
        "a <= 3 + 4",
        "N = 51",
    ],
)
def test_what_is_no_claim_of_numbers_is_not_read_as_one(text):
    assert claims(text) == []


def test_a_sentence_or_a_list_before_a_claim_is_not_part_of_it():
    assert said("Step by step: -14+-8+1 = -21. -21/3 = -7.") == [
        ("-14+-8+1", "-21", True),
        ("-21/3", "-7", True),
    ]
    assert said("She sold 48/2 = 24. 48+24 = 72.") == [("48/2", "24", True), ("48+24", "72", True)]
    assert said("It costs 2.5 * 4 = 10, and 3, 4 + 5 = 9") == [("2.5 * 4", "10", True), ("4 + 5", "9", True)]
