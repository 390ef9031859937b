"""The executor's tools over one task's paragraphs: search (BM25), read, finish, abstain."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rank_bm25 import BM25Okapi

from vreact.tasks.dataset import Paragraph

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


_ID = re.compile(r"\s*[\[#(]*\s*(?:P(?=\d))?(\w+)")


def paragraph_id(text: object) -> str:
    """A cited paragraph's id as the corpus keys it: "[6] Quillmoor", "6] Qu" (an id item cut at
    the schema's length), "#6" and "P6" are all "6"."""
    m = _ID.match(str(text))
    return m.group(1) if m else str(text).strip()


def tokenize(text: str) -> list[str]:
    return [t for t in re.findall(r"\w+", text.lower()) if t not in _STOP]


@dataclass(frozen=True)
class Hit:
    id: str
    title: str
    snippet: str


class Corpus:
    """One task's paragraphs with a BM25 index over title and text."""

    def __init__(self, paragraphs: list[Paragraph], snippet_words: int = 60) -> None:
        self.paragraphs = {str(p.idx): p for p in paragraphs}
        self._ids = list(self.paragraphs)
        docs = [tokenize(f"{p.title} {p.paragraph_text}") for p in paragraphs]
        self._bm25 = BM25Okapi(docs) if docs else None
        self.snippet_words = snippet_words

    def search(self, query: str, k: int = 3) -> list[Hit]:
        terms = tokenize(query)
        if not terms or self._bm25 is None:
            return []
        scores = self._bm25.get_scores(terms)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
        hits = []
        for i in order:
            p = self.paragraphs[self._ids[i]]
            words = p.paragraph_text.split()
            snippet = " ".join(words[: self.snippet_words]) + (
                " ..." if len(words) > self.snippet_words else ""
            )
            hits.append(Hit(self._ids[i], p.title, snippet))
        return hits

    def read(self, pid: str) -> Paragraph | None:
        return self.paragraphs.get(paragraph_id(pid))

    def text(self, pid: str) -> str:
        p = self.read(pid)
        return f"{p.title}. {p.paragraph_text}" if p else ""
