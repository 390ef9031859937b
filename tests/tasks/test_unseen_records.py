"""The records of benchmarks/data/qa-unseen/ are what their README says: real dev records the
readers read, none of them among the tests' records the gates were written from."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.conftest import REPO
from vreact.qa.formats import read

UNSEEN = REPO / "benchmarks" / "data" / "qa-unseen"
TESTS = REPO / "tests" / "data" / "qa"


@pytest.mark.parametrize(
    ("name", "form", "count", "mine"),
    [
        ("hotpotqa_dev_distractor_1303.jsonl", "hotpotqa", 1303, "hotpotqa_dev_distractor_100.jsonl"),
        ("2wiki_dev_941.jsonl", "2wiki", 941, "2wiki_dev_100.jsonl"),
    ],
)
def test_each_file_is_read_whole_and_apart_from_the_tests_records(name, form, count, mine):
    path = UNSEEN / name
    readme = (UNSEEN / "README.md").read_text(encoding="utf-8")
    assert hashlib.sha256(path.read_bytes()).hexdigest() in readme  # the file the README describes
    tasks = read(path, form)
    ids = [t.id for t in tasks]
    assert len(ids) == len(set(ids)) == count
    theirs = {json.loads(line)["_id"] for line in (TESTS / mine).read_text(encoding="utf-8").splitlines()}
    assert not set(ids) & theirs
    provenance = (UNSEEN / name.replace(".jsonl", ".provenance.tsv")).read_text(encoding="utf-8")
    assert all(i in provenance for i in ids)
