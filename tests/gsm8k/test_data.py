"""GSM8K's lines and a user's maths problems as tasks: ids from the split and the line, the gold
number read from ``#### N`` and tagged, and one line naming the file, the line and the field for
a bad record."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO
from vreact.gsm8k.data import read, split_of
from vreact.inputs import DatasetError
from vreact.origin import origins_in

DATA = REPO / "tests" / "data" / "gsm8k"


def test_a_slice_of_the_train_split_reads_as_train_lines():
    problems = read(DATA / "train_0_199.jsonl", "gsm8k")
    assert len(problems) == 200 and problems[0].id == "train/0" and problems[199].id == "train/199"
    first = problems[0]
    assert first.question.startswith("Natalia sold clips to 48") and first.gold() == 72.0
    assert "gold" in set(origins_in(first.solution)) and "gold" in set(origins_in(first.final))
    assert split_of(DATA / "test_0_499.jsonl") == ("test", 0) and split_of(DATA / "train.jsonl") == (
        "train",
        0,
    )


def test_the_negative_golds_read_through_the_field_map_format():
    problems = read(DATA / "train-negative.jsonl", "jsonl")
    assert [(p.id, p.gold()) for p in problems] == [
        ("train/5715", -7.0),
        ("train/5844", -47.0),
        ("train/6189", -12.0),
    ]


def test_a_users_problems_through_a_field_map(tmp_path):
    mine = tmp_path / "mine.jsonl"
    mine.write_text(
        json.dumps({"qid": "p1", "problem": "Ann has 3 bags of 4 apples. How many apples?", "solution": 12})
        + "\n"
        + json.dumps({"qid": "p2", "problem": "Half of 9?", "solution": "9 / 2 = 4.5\n#### 4.5"})
        + "\n"
    )
    fields = {"id": "qid", "question": "problem", "answer": "solution"}
    p1, p2 = read(mine, "jsonl", fields=fields)
    assert (p1.id, p1.gold(), p1.solution) == ("p1", 12.0, "")
    assert (p2.id, p2.gold(), p2.solution.startswith("9 / 2")) == ("p2", 4.5, True)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ('{"question": "How many?"}', ":1: answer: missing"),
        (
            '{"question": "How many?", "answer": "no number here"}',
            ":1: answer: expected a number, or a worked",
        ),
        (
            '{"question": "How many?", "answer": "x\\n#### seven"}',
            ":1: answer: expected its final number after ####",
        ),
        ('{"question": 3, "answer": "#### 3"}', ":1: question: expected a string, got int"),
        ('"a problem"', ":1: (line): a record is a JSON object, not str"),
        ("{not json", ":1: (line): not JSON"),
    ],
)
def test_a_bad_record_is_one_line_naming_the_file_line_and_field(tmp_path, line, said):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(line + "\n")
    with pytest.raises(DatasetError) as e:
        read(bad, "gsm8k")
    assert str(e.value).startswith(str(bad)) and said in str(e.value) and "\n" not in str(e.value)


def test_a_repeated_id_and_a_field_map_for_the_datasets_own_format_are_refused(tmp_path):
    twice = tmp_path / "twice.jsonl"
    twice.write_text(
        '{"id": "a", "question": "q?", "answer": 1}\n{"id": "a", "question": "q?", "answer": 2}\n'
    )
    with pytest.raises(DatasetError, match=r"twice.jsonl:2: id: 'a' repeats"):
        read(twice, "jsonl")
    with pytest.raises(DatasetError, match="a field map is for format jsonl, not gsm8k"):
        read(twice, "gsm8k", fields={"question": "q"})
    with pytest.raises(DatasetError, match="'gold' is not a part of a record"):
        read(twice, "jsonl", fields={"gold": "g"})
