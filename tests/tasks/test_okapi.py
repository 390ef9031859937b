"""A task's own search: vreact's Okapi BM25 gives rank-bm25's scores to the last bit, so the
records made with rank-bm25 are made again the same."""

from __future__ import annotations

import pytest
from rank_bm25 import BM25Okapi

from tests.conftest import ANS, FULL
from vreact.qa.dataset import load_tasks
from vreact.qa.tools import Corpus, OkapiBM25, tokenize

TASKS = [*load_tasks(ANS), *load_tasks(FULL)]


def queries(task) -> list[list[str]]:
    """The question, its titles, single words, a repeated word, and words no paragraph has."""
    texts = [task.question, *(p.title for p in task.paragraphs), "zzqx unheard", ""]
    words = tokenize(task.question)
    return [tokenize(t) for t in texts] + [[w] for w in words] + [words[:1] * 3]


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_scores_are_rank_bm25s_bit_for_bit(task) -> None:
    docs = [tokenize(f"{p.title} {p.paragraph_text}") for p in task.paragraphs]
    theirs, ours = BM25Okapi(docs), OkapiBM25(docs)
    assert ours.idf == theirs.idf
    for q in queries(task):
        assert ours.scores(q) == theirs.get_scores(q).tolist(), q


def test_a_tasks_search_ranks_as_with_rank_bm25() -> None:
    task = TASKS[0]
    corpus = Corpus(task.paragraphs)
    docs = [tokenize(f"{p.title} {p.paragraph_text}") for p in task.paragraphs]
    scores = BM25Okapi(docs).get_scores(tokenize(task.question))
    expected = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:3]
    assert [h.id for h in corpus.search(task.question)] == [str(task.paragraphs[i].idx) for i in expected]
