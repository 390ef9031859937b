"""Loading MuSiQue records: errors, the sample, and MuSiQue-Full pairs that share an id."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FULL
from vreact.qa.dataset import DatasetError, load_tasks


def test_the_sample_is_fictional_musique_with_unanswerable_questions():
    tasks = load_tasks("sample")
    assert len(tasks) == 12 and sum(not t.answerable for t in tasks) == 3
    assert all(len(t.paragraphs) - len(t.supporting_ids) >= 6 for t in tasks)
    assert {t.hops for t in tasks} == {2, 3, 4}


def test_full_pairs_sharing_an_id_are_split_and_linked(tmp_path):
    record = json.loads(FULL.read_text().splitlines()[1])
    assert record["answerable"]
    twin = {**record, "answerable": False}
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(record) + "\n" + json.dumps(twin) + "\n")
    a, u = load_tasks(path)
    assert (a.id, u.id) == (record["id"], record["id"] + "__unanswerable")
    assert a.pair_id == u.pair_id == record["id"] and (a.answerable, u.answerable) == (True, False)
    path.write_text(json.dumps(record) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(DatasetError, match="repeats and is not an answerable/unanswerable pair"):
        load_tasks(path)


def test_real_full_records_have_no_pairs_in_the_first_80():
    tasks = load_tasks(FULL)
    assert len(tasks) == 80 and all(t.pair_id is None for t in tasks)
