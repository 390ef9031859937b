"""The executor's tools: search (BM25) and read, over one task's paragraphs or over a whole corpus
(the experiment's ``dataset.corpus``, read by vreact.qa.corpus), and date_diff: retrieval's one
home, the indexes and the tasks placed in a corpus. Each is a registered tool
(``vreact.tools``), as a user's own would be."""

from __future__ import annotations

import datetime
import math
import re
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import reduce
from operator import add
from pathlib import Path
from typing import Any

from vreact.marking import mark
from vreact.qa.corpus import CorpusError, read_corpus
from vreact.qa.dataset import Paragraph, Task
from vreact.tools import ToolContext, ToolError, tool

_STOP = set(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "is",
        "was",
        "were",
        "be",
        "been",
        "are",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "how",
        "did",
        "does",
        "do",
        "that",
        "this",
        "it",
        "its",
        "as",
    ]
)

TOOLS: dict[str, str] = {
    "search": "search(query): the 3 best-matching paragraphs as id, title and a snippet",
    "read": "read(id): the whole paragraph with that id",
    "finish": "finish(answer, evidence=[ids]): give a short answer and the ids that support it",
    "abstain": "abstain(reason): decline to answer, saying why",
}
#: The tools a question-answering executor is offered when its configuration names none.
DEFAULT_TOOLS = ("search", "read")


_ID = re.compile(r"\s*[\[#(]*\s*(?:P(?=\d))?(\w+)")


def paragraph_id(text: object) -> str:
    """A cited paragraph's id as the corpus keys it: "[6] Quillmoor", "6] Qu" (an id item cut at
    the schema's length), "#6" and "P6" are all "6"."""
    m = _ID.match(str(text))
    return m.group(1) if m else str(text).strip()


_WORD = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    return [t for t in _WORD.findall(text.lower()) if t not in _STOP]


class OkapiBM25:
    """rank-bm25's ``BM25Okapi`` (k1 1.5, b 0.75, epsilon 0.25) in plain Python: the same
    arithmetic in the same order, so its scores are the same to the last bit (a test compares
    them on every shipped task), built about three times quicker at a task's size and without
    numpy. ``scores`` skips the paragraphs without the term, which only ever add 0."""

    K1, B, EPSILON = 1.5, 0.75, 0.25

    def __init__(self, docs: list[list[str]]) -> None:
        self.doc_freqs = [Counter(d) for d in docs]
        n = self.size = len(docs)
        avgdl = sum(map(len, docs)) / n  # integers: exact, as rank-bm25's running total
        self._norm = [self.K1 * (1 - self.B + self.B * len(d) / avgdl) for d in docs]
        df: Counter[str] = Counter()  # documents per word, in first-seen order as rank-bm25's
        for freqs in self.doc_freqs:
            df.update(freqs.keys())
        # one idf per document frequency; the mean over words summed in word order, float by float
        raw = {k: math.log(n - k + 0.5) - math.log(k + 0.5) for k in range(1, n + 1)}
        mean = reduce(add, map(raw.__getitem__, df.values()), 0.0) / len(df) if df else 0.0
        floored = {k: v if v >= 0 else self.EPSILON * mean for k, v in raw.items()}
        self.idf: dict[str, float] = dict(zip(df.keys(), map(floored.__getitem__, df.values()), strict=True))

    def scores(self, query: list[str]) -> list[float]:
        out = [0.0] * self.size
        k1 = self.K1 + 1
        for term in query:
            idf = self.idf.get(term)
            if idf is None:
                continue  # in no paragraph: rank-bm25 adds 0 everywhere
            for i, freqs in enumerate(self.doc_freqs):
                q = freqs.get(term)
                if q:
                    out[i] += idf * (q * k1 / (q + self._norm[i]))
        return out


@dataclass(frozen=True)
class Hit:
    id: str
    title: str
    snippet: str


class Corpus:
    """One task's paragraphs with a BM25 index over title and text (rank-bm25's Okapi BM25, as
    :class:`OkapiBM25`).

    At a task's size (20 paragraphs) this is quicker than bm25s, and its scores are the ones the
    records were made with. Like every corpus it is only read after it is built, so the
    attempts of a run share one per task (:func:`corpus_of`)."""

    def __init__(self, paragraphs: list[Paragraph], snippet_words: int = 60) -> None:
        self.paragraphs = {str(p.idx): p for p in paragraphs}
        self._ids = list(self.paragraphs)
        docs = [tokenize(f"{p.title} {p.paragraph_text}") for p in paragraphs]
        self._bm25 = OkapiBM25(docs) if docs else None
        self.snippet_words = snippet_words

    def search(self, query: str, k: int = 3) -> list[Hit]:
        """The ``k`` best paragraphs, ties by position; the top ``k`` even when no paragraph
        shares a word with the query (the records were made so; :class:`OpenCorpus` does not)."""
        terms = tokenize(query)
        if not terms or self._bm25 is None:
            return []
        scores = self._bm25.scores(terms)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
        return [self._hit(self._ids[i]) for i in order]

    def _hit(self, pid: str) -> Hit:
        p = self.paragraphs[pid]
        words = p.paragraph_text.split()
        snippet = " ".join(words[: self.snippet_words]) + (" ..." if len(words) > self.snippet_words else "")
        return Hit(pid, p.title, snippet)

    def read(self, pid: str) -> Paragraph | None:
        return self.paragraphs.get(paragraph_id(pid))

    def text(self, pid: str) -> str:
        p = self.read(pid)
        return f"{p.title}. {p.paragraph_text}" if p else ""

    def __len__(self) -> int:
        return len(self.paragraphs)


class OpenCorpus(Corpus):
    """A whole corpus, a paragraph's id its position in the corpus file: one bm25s index (Lucene's
    BM25, k1 1.5, b 0.75) over title and text, built once per run and shared by every attempt.

    A query's score is the sum of its terms' precomputed columns of the index (one
    ``numpy.bincount``), so a search costs the postings of its words, not the corpus' size; it
    never writes, so any number of threads may search at once. Only paragraphs that share a
    word with the query are returned (unlike a task's :class:`Corpus`), ties by position."""

    def __init__(
        self, paragraphs: list[Paragraph], snippet_words: int = 60, source: str = "", sha256: str = ""
    ) -> None:
        import bm25s  # numpy and bm25s load only for a run that has a corpus

        self.paragraphs = {str(p.idx): p for p in paragraphs}
        self._ids = list(self.paragraphs)
        self.snippet_words = snippet_words
        self.source, self.sha256 = source, sha256  # the file it was read from, and its sha256
        self._bm25 = None
        index = bm25s.BM25()
        index.index([tokenize(f"{p.title} {p.paragraph_text}") for p in paragraphs], show_progress=False)
        self._vocab: dict[str, int] = index.vocab_dict
        scores = index.scores
        self._data, self._indices, self._indptr = scores["data"], scores["indices"], scores["indptr"]
        self._n = len(paragraphs)

    def scores(self, query: str) -> Any:
        """Every paragraph's BM25 score for ``query`` (a numpy array; None: no word of it is
        in the corpus)."""
        import numpy as np

        n_terms = len(self._indptr) - 1  # the vocabulary's "" (bm25s adds it) has no column
        terms = [i for i in (self._vocab.get(t) for t in tokenize(query)) if i is not None and i < n_terms]
        if not terms:
            return None
        ptr, ind, data = self._indptr, self._indices, self._data
        if len(terms) == 1:
            docs, weights = ind[ptr[terms[0]] : ptr[terms[0] + 1]], data[ptr[terms[0]] : ptr[terms[0] + 1]]
        else:
            docs = np.concatenate([ind[ptr[t] : ptr[t + 1]] for t in terms])
            weights = np.concatenate([data[ptr[t] : ptr[t + 1]] for t in terms])
        return np.bincount(docs, weights=weights, minlength=self._n)

    def identity(self) -> dict[str, Any]:
        """Its entry in a run's identity: a folder's run searched in another corpus is refused."""
        return {"corpus": {"path": self.source, "sha256": self.sha256, "paragraphs": len(self)}}

    def place(self, tasks: list[Task], source: str) -> list[Task]:
        """``tasks`` searched in it (:func:`in_corpus`)."""
        return in_corpus(tasks, self, source)

    def search(self, query: str, k: int = 3) -> list[Hit]:
        import numpy as np

        scores = self.scores(query)
        if scores is None or k <= 0:
            return []
        shown = np.flatnonzero(scores)  # Lucene's BM25 is positive wherever a query word is
        values = scores[shown]
        if len(shown) > k:  # every paragraph scoring at least the k-th best, then (-score, position)
            keep = values >= np.partition(values, len(values) - k)[len(values) - k]
            shown, values = shown[keep], values[keep]
        order = shown[np.lexsort((shown, -values))][:k]
        return [self._hit(self._ids[i]) for i in order.tolist()]


_CACHE = threading.Lock()


def corpus_of(task: Task) -> Corpus:
    """What an attempt on ``task`` searches: the run's corpus when the task was put in one
    (:func:`in_corpus`), else the task's own paragraphs, indexed once and kept on the task, so
    every attempt of a run on it shares one index (same results)."""
    own = task.search_corpus
    if own is not None:
        return own  # type: ignore[no-any-return]
    with _CACHE:
        cached = task.own_index
        if cached is None or cached[0] is not task.paragraphs:  # a copy with other paragraphs
            cached = (task.paragraphs, Corpus(task.paragraphs))
            task.own_index = cached
    return cached[1]  # type: ignore[no-any-return]


def load_corpus(source: str | Path) -> OpenCorpus:
    """The corpus file indexed for search (once per run: every attempt shares it)."""
    paragraphs, sha256 = read_corpus(source)
    return OpenCorpus(paragraphs, source=str(source), sha256=sha256)


def in_corpus(tasks: list[Task], corpus: OpenCorpus, dataset: str = "dataset") -> list[Task]:
    """The tasks searched in ``corpus``, each one's gold supporting paragraphs mapped to corpus
    ids by exact title and text (a repeated paragraph maps to its first position). A gold
    paragraph the corpus lacks is an error naming the task: support F1 and the retrieval
    ceiling could not be scored."""
    ids: dict[tuple[str, str], str] = {}
    for pid, p in corpus.paragraphs.items():
        ids.setdefault((p.title, p.paragraph_text), pid)
    out = []
    for task in tasks:
        support = []
        for p in task.paragraphs:
            if not p.is_supporting:
                continue
            found = ids.get((p.title, p.paragraph_text))
            if found is None:
                raise CorpusError(
                    f"{corpus.source}: task {task.id} of {dataset}: its supporting paragraph {p.idx}"
                    f" ({p.title!r}) is not in the corpus (matched by exact title and text)"
                )
            support.append(found)
        out.append(task.in_corpus(corpus, support))
    return out


# --- the registered tools ------------------------------------------------------------------


@dataclass(frozen=True)
class Passage:
    """A paragraph as a tool may show it: its id, title and text, and whether its text was cut
    when the dataset was read; never the dataset's labels (which paragraphs support the answer)."""

    id: str
    title: str
    text: str
    cut: bool = False


class CorpusView:
    """The try's corpus as a tool reads it (``ToolContext.corpus``): search, read and every
    passage, in order, without the gold."""

    def __init__(self, corpus: Corpus) -> None:
        self._corpus = corpus

    def search(self, query: str, k: int = 3) -> list[Hit]:
        return self._corpus.search(query, k)

    def read(self, pid: str) -> Passage | None:
        p = self._corpus.read(pid)
        return None if p is None else Passage(str(p.idx), p.title, p.paragraph_text, p.cut)

    def __iter__(self) -> Iterator[Passage]:
        return (Passage(i, p.title, p.paragraph_text, p.cut) for i, p in self._corpus.paragraphs.items())

    def __len__(self) -> int:
        return len(self._corpus)


@tool("search", description="input is a few keywords; you get the 3 best paragraphs as [id] title: text")
def search(query: str, ctx: ToolContext) -> str:
    """The 3 paragraphs of the try's corpus that best match ``query`` (BM25)."""
    hits = ctx.corpus.search(query)
    if not hits:
        return "no results; try other words"
    ctx.retrieved.update(h.id for h in hits)
    ctx.cut = any(p.cut for h in hits if (p := ctx.corpus.read(h.id)) is not None)
    shown = mark if ctx.marked else str
    return "\n".join(shown(f"[{h.id}] {h.title}: {h.snippet}") for h in hits)


@tool("read", description="input is one id; you get that whole paragraph")
def read(id: str, ctx: ToolContext) -> str:
    """The whole paragraph with that id."""
    p = ctx.corpus.read(id)
    if p is None:
        return f"no paragraph with id {id!r}; use an id from search results"
    ctx.retrieved.add(p.id)
    ctx.cut = p.cut
    shown = f"[{p.id}] {p.title}: {p.text}"
    return mark(shown) if ctx.marked else shown


#: Each month's full name, then its short forms (one table for every reader of a date).
_MONTH_FORMS = (
    ("january", "jan"),
    ("february", "feb"),
    ("march", "mar"),
    ("april", "apr"),
    ("may",),
    ("june", "jun"),
    ("july", "jul"),
    ("august", "aug"),
    ("september", "sep", "sept"),
    ("october", "oct"),
    ("november", "nov"),
    ("december", "dec"),
)
#: The months' full names, in order.
MONTH_NAMES = tuple(forms[0] for forms in _MONTH_FORMS)
#: Every name and short form -> the month's number.
MONTHS: dict[str, int] = {m: i for i, forms in enumerate(_MONTH_FORMS, 1) for m in forms}
_ISO = re.compile(r"^(\d{3,4})-(\d{1,2})-(\d{1,2})$")
_WORDS = re.compile(r"[a-z]+|\d+")


@dataclass(frozen=True)
class Date:
    """A date as a paragraph gives it: a year, and its month and day when it says them."""

    year: int
    month: int | None = None
    day: int | None = None

    def __str__(self) -> str:
        if self.day and self.month:
            return datetime.date(self.year, self.month, self.day).strftime("%-d %B %Y")
        if self.month:
            return datetime.date(self.year, self.month, 1).strftime("%B %Y")
        return str(self.year)

    def key(self) -> tuple[int, int, int]:
        return (self.year, self.month or 0, self.day or 0)

    @property
    def depth(self) -> int:
        """How much it says: 1 the year, 2 the month too, 3 the day too."""
        return 1 + (self.month is not None) + (self.day is not None)

    def date(self) -> datetime.date:
        return datetime.date(self.year, self.month or 1, self.day or 1)


#: What makes a year no plain year of the common era: before it, a decade, a century.
_NOT_PLAIN = re.compile(r"\b(bc|bce)\b|century|\d'?s\b")


def parse_date(text: str) -> Date:
    """A date written as "5 May 1932", "May 5, 1932", "1932-05-05", "May 1932" or "1932"
    (``ToolError`` for anything else: an era, a decade, two years, a day without its month)."""
    raw = text.strip().lower().replace(",", " ").replace(".", " ")
    iso = _ISO.match(raw)
    if iso:
        parts = [int(g) for g in iso.groups()]
        return _checked(text, parts[0], parts[1], parts[2])
    words = _WORDS.findall(raw)
    years = [int(w) for w in words if w.isdigit() and len(w) in (3, 4)]
    months = [MONTHS[w] for w in words if w in MONTHS]
    days = [int(w) for w in words if w.isdigit() and len(w) <= 2]
    vague = _NOT_PLAIN.search(raw)
    if vague or len(years) != 1 or len(months) > 1 or len(days) > 1 or (days and not months):
        raise ToolError(f"cannot read {text.strip()!r} as a date (e.g. 5 May 1932, 1932-05-05, 1932)")
    return _checked(text, years[0], months[0] if months else None, days[0] if days else None)


def _checked(text: str, year: int, month: int | None, day: int | None) -> Date:
    try:
        datetime.date(year, month or 1, day or 1)
    except ValueError:
        raise ToolError(f"{text.strip()!r} is not a date in the calendar") from None
    return Date(year, month, day)


@tool(
    "date_diff",
    description='input is {"first": "<a date>", "second": "<a date>"}, each as a paragraph writes it; '
    "you get which is earlier and the years between them",
)
def date_diff(first: str, second: str) -> str:
    """Which of two dates is earlier, and the time between them (in days too when both give
    the day): what a comparison question (who was born first, which came out earlier) needs.
    Two dates compared as far as the vaguer one says: "1930" and "5 May 1930" cannot be told
    apart."""
    a, b = parse_date(first), parse_date(second)
    depth = min(a.depth, b.depth)
    ka, kb = a.key()[:depth], b.key()[:depth]
    if ka == kb:
        if a.depth == b.depth:
            return f"{a} and {b} are the same date"
        return f"cannot tell which is earlier: {a} and {b} agree as far as the vaguer one says"
    early, late = (a, b) if ka < kb else (b, a)
    which = "first" if early is a else "second"
    if depth == 3:
        years = late.year - early.year - ((late.month, late.day) < (early.month, early.day))
        days = (late.date() - early.date()).days
        span = f"{years} year{'s' * (years != 1)} ({days} days)"
    else:
        span = f"about {late.year - early.year} year{'s' * (late.year - early.year != 1)}"
    return f"the {which} date, {early}, is earlier than {late}, by {span}"
