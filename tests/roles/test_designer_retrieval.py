"""The designer's searches on the tests' answerable records outside the chain's evaluation set
(records 21-40 of the MuSiQue-Full sample): how many gold paragraphs the first search shows, and
how many a bridge to each gold bridge entity adds, by the query the designer builds for it
(the upper bound of follow_up: bridge, when the executor names the right entity)."""

from __future__ import annotations

from collections.abc import Callable

from tests.conftest import FULL, MUSIQUE
from vreact.qa.dataset import Task, load_tasks
from vreact.qa.roles.designer import bridge_query, first_query
from vreact.qa.tools import Corpus, corpus_of


def pool() -> list[Task]:
    full = [t for i, t in enumerate(load_tasks(FULL)) if not 20 <= i < 40]
    return [t for t in [*full, *load_tasks(MUSIQUE / "musique_ans_train_100.jsonl")] if t.answerable]


def ceiling(queries: Callable[[Task, Corpus], list[str]]) -> float:
    found = total = 0
    for task in pool():
        corpus = corpus_of(task)
        shown = {h.id for q in queries(task, corpus) for h in corpus.search(q)}
        gold = {str(p.idx) for p in task.paragraphs if p.is_supporting}
        found, total = found + len(gold & shown), total + len(gold)
    return round(found / total, 3)


def bridges(task: Task) -> list[str]:
    return [str(h.answer) for h in task.question_decomposition[:-1]]


def covered(task: Task, corpus: Corpus) -> str:
    return corpus.text(corpus.search(first_query(task.question), k=1)[0].id)


def test_a_bridge_search_leaves_out_the_words_of_the_hop_already_found():
    first = ceiling(lambda t, c: [first_query(t.question)])
    every_word = ceiling(
        lambda t, c: [first_query(t.question), *(bridge_query(b, t.question) for b in bridges(t))]
    )
    rest = ceiling(
        lambda t, c: [
            first_query(t.question),
            *(bridge_query(b, t.question, covered(t, c)) for b in bridges(t)),
        ]
    )
    assert len(pool()) == 129
    assert (first, every_word, rest) == (0.462, 0.826, 0.885)
