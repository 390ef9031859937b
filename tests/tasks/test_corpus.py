"""The open corpus (dataset.corpus): reading a corpus file, gold paragraphs mapped to corpus ids,
search over the whole corpus, and the per-task index kept once per task."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ANS, FULL, MUSIQUE
from vreact.qa.corpus import CorpusError, read_corpus
from vreact.qa.dataset import DatasetError, Paragraph, load_tasks
from vreact.qa.tools import Corpus, OpenCorpus, corpus_of, in_corpus, load_corpus, tokenize

CORPUS = MUSIQUE / "musique_ans_train_100_corpus.json"


@pytest.fixture(scope="module")
def corpus() -> OpenCorpus:
    return load_corpus(CORPUS)


@pytest.fixture(scope="module")
def ans_tasks():
    return load_tasks(ANS)


def test_the_real_corpus_ids_are_positions_in_the_file(corpus):
    items = json.loads(CORPUS.read_text())
    assert len(corpus) == len(items) == 1890
    for i in (0, 1, 977, 1889):
        p = corpus.read(str(i))
        assert p is not None and (p.idx, p.title, p.paragraph_text) == (
            i,
            items[i]["title"],
            items[i]["text"],
        )
    assert corpus.read("1890") is None and corpus.read("[12] x").idx == 12
    assert len(corpus.sha256) == 64


def test_json_lines_read_as_the_array_does(tmp_path):
    items = json.loads(CORPUS.read_text())[:50]
    lines = tmp_path / "c.jsonl"
    lines.write_text(
        "".join(json.dumps({**x, "extra": 1}) + "\n\n" for x in items)
    )  # blank lines, extra keys
    array = tmp_path / "c.json"
    array.write_text(json.dumps(items, indent=2))
    a, b = read_corpus(lines)[0], read_corpus(array)[0]
    assert [(p.idx, p.title, p.paragraph_text) for p in a] == [(p.idx, p.title, p.paragraph_text) for p in b]
    assert [p.idx for p in a] == list(range(50))


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('[{"title": "a", "text": "b"},\n {"title": "c"}]', r"c\.json:2: \[1\]\.text: missing$"),
        (
            '[\n{"title": "a", "text": "b"},\n\n {"title": 3, "text": "x"}\n]',
            r":4: \[1\]\.title: not a string \(int\)$",
        ),
        ('[{"title": "a", "text": "b"}, "just text"]', r":1: \[1\]: a paragraph is an object"),
        ('{"title": "a", "text": "b"}\n{"title": "a" "text": "b"}\n', r"c\.json:2: \(line\): not JSON"),
        (
            '[{"title": "a", "text": "b"}\n {"title": "c", "text": "d"}]',
            r":2: \(file\): not JSON: expected ',' or ']'",
        ),
        ('[{"title": "a", "text": "b"}] x', r":1: \(file\): not JSON: extra data"),
        ('{\n "title": "a",\n "text": "b"\n}', r":1: \(file\): a corpus is a JSON array, or JSON lines"),
        ("[]", r"c\.json: the corpus has no paragraph"),
    ],
)
def test_a_bad_corpus_is_one_line_naming_file_line_and_field(tmp_path, text, error):
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(CorpusError, match=error) as e:
        read_corpus(path)
    assert "\n" not in str(e.value) and str(path) in str(e.value)
    assert isinstance(e.value, DatasetError)  # the command line's one-line input errors


def test_a_missing_corpus_file_is_one_line(tmp_path):
    with pytest.raises(CorpusError, match="no such corpus file"):
        read_corpus(tmp_path / "nope.json")


def test_gold_paragraphs_map_to_corpus_ids_by_exact_title_and_text(corpus, ans_tasks):
    placed = in_corpus(ans_tasks, corpus, str(ANS))
    assert sum(len(t.supporting_ids) for t in placed) == sum(len(t.supporting_ids) for t in ans_tasks) > 200
    moved = 0
    for own, t in zip(ans_tasks, placed, strict=True):
        gold = [p for p in own.paragraphs if p.is_supporting]
        assert len(t.supporting_ids) == len(gold)
        for p, pid in zip(gold, t.supporting_ids, strict=True):
            c = corpus.read(pid)
            assert c is not None and (c.title, c.paragraph_text) == (p.title, p.paragraph_text)
        moved += t.supporting_ids != own.supporting_ids
        assert t.search_corpus is corpus and corpus_of(t) is corpus
        assert t.record()["support"] == json.dumps(t.supporting_ids)  # the tasks table holds corpus ids
        assert own.search_corpus is None  # the task itself is left as it was
    assert moved > 90  # most tasks' ids differ from their own paragraphs' positions
    victoria = next(t for t in placed if t.id == "2hop__205146_62031")
    assert victoria.supporting_ids == ["63", "71"]


def test_a_gold_paragraph_missing_from_the_corpus_is_one_line_naming_the_task(corpus):
    tasks = load_tasks(FULL)  # MuSiQue-Full: only some of its records are in the Ans corpus
    known = {(p.title, p.paragraph_text) for p in corpus.paragraphs.values()}
    first = next(
        (t, p)
        for t in tasks
        for p in t.paragraphs
        if p.is_supporting and (p.title, p.paragraph_text) not in known
    )
    with pytest.raises(CorpusError) as e:
        in_corpus(tasks, corpus, str(FULL))
    task, p = first
    assert str(e.value) == (
        f"{CORPUS}: task {task.id} of {FULL}: its supporting paragraph {p.idx} ({p.title!r})"
        " is not in the corpus (matched by exact title and text)"
    )


def test_an_exact_title_and_text_is_needed(corpus, ans_tasks):
    t = ans_tasks[5]
    gold = next(p for p in t.paragraphs if p.is_supporting)
    changed = [
        p.model_copy(update={"paragraph_text": p.paragraph_text + " "}) if p is gold else p
        for p in t.paragraphs
    ]
    with pytest.raises(CorpusError, match=f"task {t.id} of dataset: its supporting paragraph {gold.idx}"):
        in_corpus([t.model_copy(update={"paragraphs": changed})], corpus)


def _brute(corpus: OpenCorpus, query: str, k: int = 3) -> list[str]:
    """The top k by bm25s's own scoring, ties by position, positive scores only."""
    import bm25s

    index = bm25s.BM25()
    index.index(
        [tokenize(f"{p.title} {p.paragraph_text}") for p in corpus.paragraphs.values()], show_progress=False
    )
    terms = [t for t in tokenize(query) if t in index.vocab_dict]
    if not terms:
        return []
    scores = index.get_scores(terms)
    order = sorted((i for i in range(len(scores)) if scores[i] > 0), key=lambda i: (-scores[i], i))
    return [str(i) for i in order[:k]]


def test_search_ranks_as_bm25s_scores(corpus, ans_tasks):
    small = OpenCorpus(list(corpus.paragraphs.values())[:300])
    queries = [t.question for t in ans_tasks[:15]] + ["Victoria Falls", "the of", "zzqx", "zzqx journal"]
    for q in queries:
        assert [h.id for h in small.search(q)] == _brute(small, q), q


def test_search_returns_only_paragraphs_sharing_a_word_and_breaks_ties_by_position():
    ps = [
        Paragraph(idx=i, title=t, paragraph_text=x)
        for i, (t, x) in enumerate(
            [("Alpha", "one river"), ("Beta", "one river"), ("Gamma", "nothing here"), ("Delta", "one river")]
        )
    ]
    c = OpenCorpus(ps)
    assert [h.id for h in c.search("river")] == ["0", "1", "3"]  # equal scores: by position
    assert [h.id for h in c.search("river", k=2)] == ["0", "1"]
    assert [h.id for h in c.search("gamma river", k=1)] == ["2"]  # the rarer word weighs more
    assert c.search("zzqx") == [] and c.search("the of") == [] and c.search("") == []
    assert [h.id for h in c.search("gamma", k=10)] == ["2"]  # never padded with zero scores
    own = Corpus(ps)
    assert [h.id for h in own.search("zzqx")] == ["0", "1", "2"]  # a task's own: the top 3 whatever (records)


def test_a_tasks_own_index_is_built_once_and_searches_the_same(ans_tasks, monkeypatch):
    task = ans_tasks[7].model_copy()  # a fresh copy: no index yet
    built = []
    real = Corpus.__init__
    monkeypatch.setattr(Corpus, "__init__", lambda self, *a, **k: built.append(1) or real(self, *a, **k))
    first = corpus_of(task)
    assert corpus_of(task) is first and len(built) == 1
    fresh = Corpus(task.paragraphs)
    for q in [task.question, "zzqx", *(h.question for h in task.question_decomposition)]:
        assert first.search(q) == fresh.search(q)
    other = task.model_copy(update={"paragraphs": task.paragraphs[:5]})  # other paragraphs: its own index
    assert corpus_of(other) is not first and len(corpus_of(other)) == 5


def test_threads_search_one_corpus_at_once_and_get_what_one_thread_gets(corpus, ans_tasks):
    from concurrent.futures import ThreadPoolExecutor

    qs = [t.question for t in ans_tasks] * 4
    alone = [corpus.search(q) for q in qs]
    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(corpus.search, qs))
    assert together == alone
    fresh = [t.model_copy() for t in ans_tasks[:10]]
    with ThreadPoolExecutor(max_workers=8) as pool:
        indexes = list(pool.map(corpus_of, fresh * 8))
    assert all(indexes[i] is indexes[i % 10] for i in range(80))  # one index per task, however raced
