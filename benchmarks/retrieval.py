"""Search latency: a task's own 20 paragraphs (OkapiBM25, rank-bm25's scores; rank-bm25 itself on an
older checkout) and open corpora of 1,890 (the real MuSiQue-Ans corpus in tests/data) and 100,000
paragraphs (synthetic, built from the real one), on rank-bm25 (what searching a corpus cost before
dataset.corpus) and on bm25s (OpenCorpus).

Queries are real MuSiQue questions and their single-hop sub-questions (MuSiQue-Ans and -Full
records in tests/data). Each figure is the time of ``search`` (top 3 with snippets, as the
executor gets them); "build" is the index's, once; "per attempt" is what one attempt of a task
pays in its own-paragraphs mode: getting its index (built, or kept from an earlier attempt) and
three searches. rank-bm25 at 100,000 paragraphs answers a sample of the queries (it takes
about half a second each). Run it on the base checkout too (without OpenCorpus only the
rank-bm25 rows print):

    .venv/bin/python benchmarks/retrieval.py [--quick] [--size 100000] [--seed 0]

The synthetic corpus keeps the real 1,890 paragraphs first, then adds paragraphs made of a
real title and 2-5 sentences drawn from random real paragraphs (seeded): the real vocabulary,
with postings about 53 times as long, which is the slow case for a query.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rank_bm25 import BM25Okapi  # noqa: E402

import vreact.qa.tools as tools  # noqa: E402
from vreact.qa.dataset import Paragraph, Task, load_tasks  # noqa: E402

#: The checkout whose vreact runs (so a copy of this file measures another checkout, e.g. the base).
MUSIQUE = Path(tools.__file__).resolve().parents[1] / "tests" / "data" / "musique"
CORPUS = MUSIQUE / "musique_ans_train_100_corpus.json"
#: what a task's own paragraphs are searched with in the measured checkout
OWN = "OkapiBM25" if hasattr(tools, "OkapiBM25") else "rank-bm25"


class RankBM25Corpus:
    """A corpus searched as every search was before dataset.corpus: rank-bm25's BM25Okapi over
    the whole score array, the top 3 by (-score, position), with snippets."""

    def __init__(self, paragraphs: list[Paragraph]) -> None:
        self.paragraphs = paragraphs
        self._bm25 = BM25Okapi([tools.tokenize(f"{p.title} {p.paragraph_text}") for p in paragraphs])

    def search(self, query: str, k: int = 3) -> list[tuple[str, str, str]]:
        terms = tools.tokenize(query)
        if not terms:
            return []
        scores = self._bm25.get_scores(terms)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
        hits = []
        for i in order:
            p = self.paragraphs[i]
            hits.append((str(p.idx), p.title, " ".join(p.paragraph_text.split()[:60])))
        return hits


def queries(tasks: list[Task]) -> list[str]:
    """Every question and sub-question, in file order, once each (a ``#1`` reference dropped)."""
    out: dict[str, None] = {}
    for t in tasks:
        out[t.question] = None
        for hop in t.question_decomposition:
            out[hop.question.replace("#1", "").replace("#2", "").replace("#3", "")] = None
    return list(out)


def synthetic(real: list[dict[str, str]], size: int, seed: int) -> list[Paragraph]:
    rng = random.Random(seed)
    sentences = [s for p in real for s in p["text"].split(". ") if s.strip()]
    titles = [p["title"] for p in real]
    items = [(p["title"], p["text"]) for p in real[:size]]
    while len(items) < size:
        items.append((rng.choice(titles), ". ".join(rng.choice(sentences) for _ in range(rng.randint(2, 5)))))
    return [Paragraph.model_construct(idx=i, title=t, paragraph_text=x) for i, (t, x) in enumerate(items)]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return (time.perf_counter() - start) * 1000, value


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def latencies(index: Any, qs: list[str]) -> list[float]:
    index.search(qs[0])  # warm
    gc.disable()
    try:
        return [timed(lambda q=q: index.search(q))[0] for q in qs]
    finally:
        gc.enable()


Row = tuple[str, str, int, int, float, float, float, str]


def row(
    mode: str, library: str, size: int, qs: list[str], build: float, lat: list[float], note: str = ""
) -> Row:
    return (mode, library, size, len(qs), build, percentile(lat, 0.5), percentile(lat, 0.9), note)


def per_task(tasks: list[Task], attempts: int) -> list[Row]:
    """A task's own paragraphs: query latency, and what each attempt pays (index + 3 searches)."""
    corpus_of = getattr(tools, "corpus_of", None)
    lat, builds, per_attempt = [], [], []
    for task in tasks:
        qs = queries([task])[:3]
        builds.append(timed(lambda task=task: tools.Corpus(task.paragraphs))[0])
        for _ in range(attempts):
            start = time.perf_counter()
            index = corpus_of(task) if corpus_of else tools.Corpus(task.paragraphs)  # before: every attempt
            for q in qs:
                lat.append(timed(lambda q=q, index=index: index.search(q))[0])
            per_attempt.append((time.perf_counter() - start) * 1000)
    how = "index kept per task" if corpus_of else "index built per attempt"
    note = f"per attempt {statistics.median(per_attempt):.3f} ms ({how})"
    return [("own paragraphs", OWN, 20, len(lat), statistics.median(builds), *_p(lat), note)]


def _p(lat: list[float]) -> tuple[float, float]:
    return percentile(lat, 0.5), percentile(lat, 0.9)


def corpus_rows(
    paragraphs: list[Paragraph], qs: list[str], rank_sample: int, rng: random.Random
) -> list[Row]:
    size, out = len(paragraphs), []
    sample = qs if size <= 5000 else rng.sample(qs, min(rank_sample, len(qs)))
    build, index = timed(lambda: RankBM25Corpus(paragraphs))
    note = "" if sample is qs else f"a sample of {len(sample)} queries"
    out.append(row("corpus", "rank-bm25", size, sample, build, latencies(index, sample), note))
    del index
    if hasattr(tools, "OpenCorpus"):
        build, index = timed(lambda: tools.OpenCorpus(paragraphs))
        out.append(row("corpus", "bm25s", size, qs, build, latencies(index, qs)))
    return out


def table(rows: list[Row]) -> str:
    head = ("mode", "library", "paragraphs", "queries", "build ms", "p50 ms", "p90 ms", "")
    cells = [head] + [
        (m, lib, f"{n:,}", str(q), f"{b:,.1f}", f"{p50:.3f}", f"{p90:.3f}", note)
        for m, lib, n, q, b, p50, p90, note in rows
    ]
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the real 1,890-paragraph corpus only")
    ap.add_argument("--size", type=int, default=100_000, help="paragraphs of the synthetic corpus")
    ap.add_argument("--rank-sample", type=int, default=30, help="queries rank-bm25 answers at the large size")
    ap.add_argument("--attempts", type=int, default=4, help="attempts per task in the own-paragraphs rows")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    ans = load_tasks(MUSIQUE / "musique_ans_train_100.jsonl")
    full = load_tasks(MUSIQUE / "musique_full_train_80.jsonl")
    qs = queries(ans + full)
    real = json.loads(CORPUS.read_text())
    print(f"{len(qs)} real MuSiQue queries; corpus {CORPUS.name}: {len(real):,} paragraphs", flush=True)
    rows = per_task(ans, args.attempts)
    rows += corpus_rows(synthetic(real, len(real), args.seed), qs, args.rank_sample, rng)
    if not args.quick:
        rows += corpus_rows(synthetic(real, args.size, args.seed), qs, args.rank_sample, rng)
    print(table(rows))
    by = {(m, lib, n): (p50, b) for m, lib, n, _, b, p50, _, _ in rows}
    parts = []
    for n in sorted({n for m, _, n, *_ in rows if m == "corpus"}):
        rank, fast = by.get(("corpus", "rank-bm25", n)), by.get(("corpus", "bm25s", n))
        here = f"{n:,} paragraphs: rank-bm25 {rank[0]:.3f} ms" if rank else f"{n:,}:"
        parts.append(here + (f", bm25s {fast[0]:.3f} ms" if fast else ""))
    own = by[("own paragraphs", OWN, 20)]
    print(f"figure: search p50 at {'; '.join(parts)}; a task's own 20 paragraphs {own[0]:.3f} ms")


if __name__ == "__main__":
    main()
