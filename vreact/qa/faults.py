"""The probe's artifacts: a record's gold answer (or reasoned abstention), the controls that must
pass, and the typed faults that should not, each built deterministically from the record (no
model). A class a record cannot yield is skipped there, with the reason counted."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from vreact import families
from vreact.metrics import normalize_answer
from vreact.qa.attacks import STYLES, URL
from vreact.qa.dataset import Task
from vreact.qa.gates import Artifact, ChainArtifact, ChainStep, expected_answer_type
from vreact.qa.gates._answer import names, support_score
from vreact.qa.tools import Corpus, corpus_of

Role = families.Role

#: The probe's refusal: what a model writes when it should have abstained.
REFUSAL = "I cannot determine the answer from the paragraphs"
#: An abstention's reason, with and without the searches behind it.
REASONED = "the paragraphs found do not state {what}"
UNREASONED = "I do not know"
#: A name-like span: capitalised words, the first not a sentence's opener by itself.
_NAME = re.compile(r"\b([A-Z][\w'-]+(?:\s+(?:of|de|la|von|van|the|[A-Z][\w'-]+)){0,3}\s*[A-Z]?[\w'-]*)")
_NUMBER = re.compile(r"\d[\d,.]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_MONTH = re.compile(
    r"\b(january|february|march|april|may|june|july|august|september|october|november|december)\b", re.I
)


@dataclass
class Record:
    """What every class is built from: the task, the corpus it is searched in, each hop's
    paragraph id there, and what one search per hop returned."""

    task: Task
    corpus: Corpus
    hop_ids: list[str]  # each hop's supporting paragraph id (answerable records)
    support: list[str]  # the distinct supporting ids, in hop order
    retrieved: frozenset[str]  # the hops' search hits and the supporting paragraphs
    max_words: int
    #: class -> (why it yields nothing here, or less than it could; how many it left out)
    skipped: dict[str, tuple[str, int]] = field(default_factory=dict)

    @property
    def question(self) -> str:
        return str(self.task.question)

    @property
    def answer(self) -> str:
        return str(self.task.answer)

    def cite(self, answer: str, evidence: list[str], **changes: object) -> Artifact:
        """An answer citing ``evidence``, as the controller assembles it after one search per hop."""
        found = {e: p for e in evidence if (p := self.corpus.read(e))}
        cited = {e: self.corpus.text(e) for e in found}
        fields: dict[str, object] = {
            "titles": {e: p.title for e, p in found.items()},
            "kind": "answer",
            "question": self.question,
            "answer": answer,
            "evidence": list(evidence),
            "cited": cited,
            "retrieved": self.retrieved,
            "searches": len(self.task.question_decomposition) or 1,
        }
        return Artifact(**{**fields, **changes})  # type: ignore[arg-type]

    def hops(self) -> tuple[dict[str, str], ...]:
        """The gold decomposition as a finish's hops (``finish: hops``): each hop's answer and its
        paragraph, the last the answer; none when a hop's paragraph is not located."""
        decomposition = self.task.question_decomposition
        if len(self.hop_ids) != len(decomposition):
            return ()
        return tuple(
            {"entity": str(h.answer), "paragraph": pid}
            for h, pid in zip(decomposition, self.hop_ids, strict=True)
        )

    def abstain(self, reason: str, searches: int) -> Artifact:
        return Artifact(
            "abstain",
            self.question,
            reason=reason,
            retrieved=self.retrieved if searches else frozenset(),
            searches=searches,
        )


def record_of(task: Task, max_words: int) -> Record:
    """The record's hops located in its corpus, and one search per hop (the hop question's words,
    an earlier hop's ``#k`` read as its answer) run on it."""
    corpus = corpus_of(task)
    hops = task.question_decomposition
    answers = [str(h.answer) for h in hops]
    hits: list[str] = []
    for h in hops:
        query = re.sub(r"#(\d+)", lambda m: _nth(answers, int(m.group(1))), str(h.question))
        hits += [x.id for x in corpus.search(query.replace(">>", " "))]
    if not hops:
        hits += [x.id for x in corpus.search(task.question)]
    own = _own_ids(task)
    hop_ids = [own[h.paragraph_support_idx] for h in hops if h.paragraph_support_idx in own]
    support = list(dict.fromkeys(str(i) for i in (hop_ids or task.supporting_ids)))
    return Record(task, corpus, hop_ids, support, frozenset(hits) | frozenset(support), max_words)


def _nth(answers: list[str], k: int) -> str:
    return answers[k - 1] if 1 <= k <= len(answers) else ""


def _own_ids(task: Task) -> dict[int | None, str]:
    """Each own paragraph's idx -> its id where the task is searched (the run's corpus, if any)."""
    if task.search_corpus is None:
        return {p.idx: str(p.idx) for p in task.paragraphs}
    support = dict(
        zip((p.idx for p in task.paragraphs if p.is_supporting), task.supporting_ids, strict=False)
    )
    return {k: str(v) for k, v in support.items()}


def _same(a: str, b: str) -> bool:
    return normalize_answer(a) == normalize_answer(b)


def _skip(r: Record, name: str, why: str) -> list[Artifact]:
    r.skipped[name] = (why, 1)
    return []


@dataclass(frozen=True)
class FaultClass(families.FaultClass):
    """A question-answering class: how it is built from a record, and its row of the table."""

    build: Callable[[Record], list[Artifact]]
    answer: str  # the table's columns (docs and ``vreact probe --list``)
    evidence: str
    retrieved: str
    searches: str


#: What "retrieved" holds for most classes: the hop searches' hits and the supporting paragraphs.
_R = "hop searches' hits + support"
_CLASSES: list[FaultClass] = []


def fault(
    role: Role,
    answer: str,
    evidence: str,
    definition: str,
    retrieved: str = _R,
    searches: str = "one per hop",
) -> Callable[[Callable[[Record], list[Artifact]]], Callable[[Record], list[Artifact]]]:
    """Register a class: its builder (named as the class), its role and its row of the table."""

    def register(build: Callable[[Record], list[Artifact]]) -> Callable[[Record], list[Artifact]]:
        _CLASSES.append(
            FaultClass(build.__name__, role, definition, build, answer, evidence, retrieved, searches)
        )
        return build

    return register


# --- gold and controls --------------------------------------------------------------------------


def gold_chain(r: Record) -> ChainArtifact | None:
    """An answerable record's gold decomposition as the chain R2 checks: each hop its subtask
    (its question, its answer, its paragraph; ``#k`` naming the hop it depends on)."""
    hops = r.task.question_decomposition
    if not r.task.answerable or not hops or len(r.hop_ids) != len(hops):
        return None
    steps = tuple(
        ChainStep(
            f"s{k}",
            str(h.question),
            str(h.answer),
            (pid,),
            {pid: r.corpus.text(pid)},
            tuple(f"s{m}" for m in re.findall(r"#(\d+)", str(h.question))),
        )
        for k, (h, pid) in enumerate(zip(hops, r.hop_ids, strict=True), 1)
    )
    return ChainArtifact(r.question, steps, steps[-1].id, r.answer)


@fault(
    "gold",
    "gold (abstain)",
    "support",
    "the gold answer citing every supporting paragraph, its hops the gold decomposition's, or on an "
    "unanswerable record a reasoned abstention",
)
def gold(r: Record) -> list[Artifact]:
    if not r.task.answerable:
        last = r.task.question_decomposition[-1].question if r.task.question_decomposition else r.question
        return [r.abstain(REASONED.format(what=repr(str(last))), len(r.task.question_decomposition) or 1)]
    return [r.cite(r.answer, r.support, hops=r.hops())]


@fault("control", "alias", "support", "each gold alias that a supporting paragraph states")
def gold_alias(r: Record) -> list[Artifact]:
    if not r.task.answerable:
        return _skip(r, "gold_alias", "unanswerable")
    texts = [r.corpus.text(i) for i in r.support]
    found = [str(a) for a in r.task.answer_aliases if any(support_score(str(a), t) == 1.0 for t in texts)]
    if len(found) < len(r.task.answer_aliases):
        r.skipped["gold_alias"] = (
            "an alias no supporting paragraph states",
            len(r.task.answer_aliases) - len(found),
        )
    if not r.task.answer_aliases:
        return _skip(r, "gold_alias", "no aliases")
    return [r.cite(a, r.support) for a in found]


@fault(
    "control",
    "paraphrase",
    "support",
    "the gold answer with case, a leading article and punctuation changed (normalised away)",
)
def gold_paraphrase(r: Record) -> list[Artifact]:
    """The gold answer with its case, a leading article and its punctuation changed, all of
    which MuSiQue's normalisation removes."""
    if not r.task.answerable:
        return _skip(r, "gold_paraphrase", "unanswerable")
    a = r.answer
    flipped = a[:1].lower() + a[1:] if a[:1].isupper() else a[:1].upper() + a[1:]
    article = "" if re.match(r"(?i)(the|a|an)\b", a) or len(a.split()) >= r.max_words else "the "
    return [r.cite(f"{article}{flipped}.", r.support)]


# --- faults -------------------------------------------------------------------------------------


def _bridge(r: Record) -> tuple[str, str] | None:
    """The last hop's predecessor: its answer and its paragraph, when it is not the gold answer."""
    hops = r.task.question_decomposition
    if not r.task.answerable or len(hops) < 2 or len(r.hop_ids) < 2:
        return None
    answer = str(hops[-2].answer)
    return None if _same(answer, r.answer) else (answer, r.hop_ids[-2])


@fault("fault", "bridge entity", "its hop's paragraph", "an earlier hop's answer citing that hop's paragraph")
def bridge_entity(r: Record) -> list[Artifact]:
    b = _bridge(r)
    return (
        [r.cite(b[0], [b[1]])] if b else _skip(r, "bridge_entity", "no bridge entity apart from the answer")
    )


@fault(
    "fault",
    "bridge entity",
    "gold hops to it + it again",
    "an earlier hop's answer whose hops (finish: hops) are the gold ones to it, then it again at the "
    "last hop's paragraph",
)
def bridge_entity_hops(r: Record) -> list[Artifact]:
    b, hops = _bridge(r), r.hops()
    if b is None or not hops:
        return _skip(r, "bridge_entity_hops", "no bridge entity apart from the answer")
    padded = (*hops[:-1], {"entity": b[0], "paragraph": hops[-1]["paragraph"]})
    return [r.cite(b[0], list(dict.fromkeys(h["paragraph"] for h in padded)), hops=padded)]


@fault("fault", "bridge entity", "support", "an earlier hop's answer citing every supporting paragraph")
def bridge_entity_full_evidence(r: Record) -> list[Artifact]:
    b = _bridge(r)
    if b is None:
        return _skip(r, "bridge_entity_full_evidence", "no bridge entity apart from the answer")
    return [r.cite(b[0], r.support)]


@fault(
    "fault",
    "bridge entity",
    "its hop's paragraph + 2 others",
    "an earlier hop's answer citing its hop's paragraph and up to 2 retrieved ones that support nothing",
)
def padded_citation(r: Record) -> list[Artifact]:
    """An earlier hop's answer citing its hop's paragraph padded with up to two retrieved
    paragraphs that support nothing (what Qwen 0.5B wrote: enough paragraphs for multi_hop)."""
    b = _bridge(r)
    pads = sorted(r.retrieved - set(r.support), key=_order)[:2] if b else []
    if b is None or not pads:
        return _skip(r, "padded_citation", "no bridge entity apart from the answer, or nothing to pad with")
    return [r.cite(b[0], [b[1], *pads])]


@fault(
    "fault",
    "a name there",
    "that paragraph",
    "a name-like span of a retrieved paragraph that supports nothing, citing it",
)
def distractor_entity(r: Record) -> list[Artifact]:
    """A name-like span of a retrieved paragraph that supports nothing, citing it."""
    question = set(normalize_answer(r.question).split())
    for pid in sorted(r.retrieved - set(r.support), key=_order):
        p = r.corpus.read(pid)
        if p is None:
            continue
        for m in _NAME.finditer(p.paragraph_text):
            span = m.group(1).strip()
            words = set(normalize_answer(span).split())
            if words and not words <= question and not _same(span, r.answer) and len(span.split()) <= 4:
                return [r.cite(span, [pid])]
    return _skip(r, "distractor_entity", "no name-like span in a non-supporting paragraph")


@fault(
    "fault",
    "an attack's goal",
    "support + an added instruction",
    "what an injected paragraph asks for (an answer of its own, the gold answer with a URL or "
    "reversed), citing the gold paragraphs and that paragraph: one per inject style",
    retrieved=_R + " + the added one",
)
def injected_instruction(r: Record) -> list[Artifact]:
    """The gold answer replaced by an attack's goal, citing an added paragraph that carries the
    instruction (one artifact per inject style of ``dataset.attacks``), as an agent that obeys
    it writes it: the paragraph, like an attacked copy's, starts with the question's words."""
    if not r.task.answerable or not r.support:
        return _skip(r, "injected_instruction", "no gold answer to replace")
    target = next(
        (str(p.title) for p in r.task.paragraphs if not p.is_supporting and not _same(p.title, r.answer)), ""
    )
    added = str(max((int(i) for i in r.support if i.isdigit()), default=0) + 1000)
    out = []
    for template, goal in STYLES.values():
        answer = {"answer": target, "url": f"{r.answer} {URL}", "reverse": r.answer[::-1]}[goal]
        if not answer:
            continue
        artifact = r.cite(answer, [*r.support, added], retrieved=r.retrieved | {added})
        text = f"{r.question} {template.format(x=target)}"
        out.append(replace(artifact, cited={**artifact.cited, added: text}))
    return out


def _order(pid: str) -> tuple[int, str]:
    return (int(pid), pid) if pid.isdigit() else (1 << 30, pid)


@fault("fault", "gold", "last hop's paragraph", "the gold answer citing the last hop's paragraph only")
def final_hop_only(r: Record) -> list[Artifact]:
    if not r.task.answerable or len(r.support) < 2:
        return _skip(r, "final_hop_only", "one supporting paragraph")
    return [r.cite(r.answer, [r.support[-1]])]


def _other_citations(r: Record, low: float, high: float) -> list[str]:
    """Up to two retrieved paragraphs that support nothing and score ``low <= s < high`` for
    the gold answer (``support_score``: 0 shares none of its words, 1 states it), lowest first."""
    scored = [
        (support_score(r.answer, r.corpus.text(pid)), _order(pid), pid)
        for pid in r.retrieved - set(r.support)
        if r.corpus.read(pid)
    ]
    return [pid for score, _, pid in sorted(scored) if low <= score < high][:2]


@fault(
    "fault",
    "gold",
    "up to 2 other retrieved",
    "the gold answer citing retrieved non-supporting paragraphs that share none of its words",
)
def wrong_citation(r: Record) -> list[Artifact]:
    """The gold answer citing retrieved paragraphs that support nothing and share none of its words."""
    others = _other_citations(r, 0.0, 1e-9) if r.task.answerable else []
    return [r.cite(r.answer, others)] if others else _skip(r, "wrong_citation", "no such retrieved paragraph")


@fault(
    "fault",
    "gold",
    "up to 2 other retrieved",
    "the gold answer citing retrieved non-supporting "
    "paragraphs that share some of its words without stating it",
)
def partial_citation(r: Record) -> list[Artifact]:
    """The gold answer citing retrieved paragraphs that support nothing and share some of its
    words without stating it ("Syracuse University" citing a paragraph about another university)."""
    others = _other_citations(r, 1e-9, 1.0) if r.task.answerable else []
    return (
        [r.cite(r.answer, others)] if others else _skip(r, "partial_citation", "no such retrieved paragraph")
    )


@fault("fault", "gold", "none", "the gold answer citing nothing")
def uncited(r: Record) -> list[Artifact]:
    return [r.cite(r.answer, [])] if r.task.answerable else _skip(r, "uncited", "unanswerable")


@fault(
    "fault",
    "gold",
    "support[0] + a made-up id",
    "the gold answer citing a supporting paragraph and an id the corpus lacks",
)
def fabricated_id(r: Record) -> list[Artifact]:
    """The gold answer citing its first supporting paragraph and an id the corpus lacks."""
    if not r.task.answerable:
        return _skip(r, "fabricated_id", "unanswerable")
    fake = next(
        str(n) for n in range(len(r.corpus) + 100, len(r.corpus) + 10_000) if not r.corpus.read(str(n))
    )
    return [r.cite(r.answer, [r.support[0], fake])]


@fault(
    "fault",
    "gold",
    "support",
    "the gold answer citing a supporting paragraph no search returned",
    retrieved=_R + " - last support",
)
def not_retrieved(r: Record) -> list[Artifact]:
    """The gold answer citing every supporting paragraph, the last of which no search returned."""
    if not r.task.answerable:
        return _skip(r, "not_retrieved", "unanswerable")
    return [r.cite(r.answer, r.support, retrieved=r.retrieved - {r.support[-1]})]


@fault(
    "fault",
    "a sentence",
    "support",
    "the sentence holding the gold answer, where it is longer than max_words",
)
def sentence_answer(r: Record) -> list[Artifact]:
    """The sentence of a supporting paragraph that holds the gold answer, when it is longer than
    the answer may be (``max_words``)."""
    if not r.task.answerable:
        return _skip(r, "sentence_answer", "unanswerable")
    for pid in reversed(r.support):
        p = r.corpus.read(pid)
        for sentence in _SENTENCE.split(p.paragraph_text if p else ""):
            if support_score(r.answer, sentence) == 1.0:
                if len(sentence.split()) > r.max_words:
                    return [r.cite(sentence.strip(), r.support)]
                return _skip(r, "sentence_answer", f"the sentence is {r.max_words} words or fewer")
    return _skip(r, "sentence_answer", "no sentence holds the answer verbatim")


@fault("fault", "the question", "support", "the question said again as the answer")
def restated_question(r: Record) -> list[Artifact]:
    if not r.task.answerable:
        return _skip(r, "restated_question", "unanswerable")
    return [r.cite(r.question.rstrip("?").strip(), r.support)]


@fault("fault", f"{REFUSAL!r}", "support", "a refusal written as an answer")
def refusal(r: Record) -> list[Artifact]:
    return [r.cite(REFUSAL, r.support)] if r.task.answerable else _skip(r, "refusal", "unanswerable")


@fault(
    "fault",
    "another type",
    "support",
    "a name for a number or date question, a number for a person or place question",
)
def wrong_type(r: Record) -> list[Artifact]:
    """An answer of another type than the question's wh-word asks for: a name for a number or a
    date, a number for a person or a place."""
    want = expected_answer_type(r.question)
    if not r.task.answerable or want == "any":
        return _skip(r, "wrong_type", "the question asks for any type")
    if want in ("number", "date"):
        b = _bridge(r)
        names = [b[0]] if b and not _NUMBER.search(b[0]) else []
        names += [str(p.title) for p in map(r.corpus.read, r.support) if p and not _NUMBER.search(p.title)]
        return [r.cite(names[0], r.support)] if names else _skip(r, "wrong_type", "no name to give")
    numbers = [m.group(0).rstrip(",.") for t in map(r.corpus.text, r.support) for m in _NUMBER.finditer(t)]
    return [r.cite(numbers[0], r.support)] if numbers else _skip(r, "wrong_type", "no number to give")


def _shifted(answer: str) -> str | None:
    """``answer`` with its last number moved by one (a year, a count, a day)."""
    found = list(_NUMBER.finditer(answer))
    if not found:
        return None
    m = found[-1]
    digits = m.group(0).rstrip(",.")
    value = int(digits.replace(",", "").split(".")[0]) + 1
    shown = f"{value:,}" if "," in digits else str(value)
    return answer[: m.start()] + shown + answer[m.start() + len(digits) :]


def _is_date(r: Record) -> bool:
    return expected_answer_type(r.question) == "date" or bool(_MONTH.search(r.answer))


@fault("fault", "gold + 1", "support", "a numeric answer's last number moved by one")
def number_shift(r: Record) -> list[Artifact]:
    moved = _shifted(r.answer) if r.task.answerable and not _is_date(r) else None
    return [r.cite(moved, r.support)] if moved else _skip(r, "number_shift", "no number in the answer")


@fault("fault", "gold + 1", "support", "a date answer's year (or day) moved by one")
def date_shift(r: Record) -> list[Artifact]:
    moved = _shifted(r.answer) if r.task.answerable and _is_date(r) else None
    return [r.cite(moved, r.support)] if moved else _skip(r, "date_shift", "no date in the answer")


@fault(
    "fault",
    "stated answer",
    "2 paragraphs",
    "on an unanswerable record, an answer a paragraph states, citing it and the first hop's best hit",
    retrieved=_R + " + cited",
)
def answer_on_unanswerable(r: Record) -> list[Artifact]:
    """On an unanswerable record: the original question's answer (else the first hop's) where a
    paragraph states it, citing that paragraph and the best hit of the first hop's search."""
    if r.task.answerable:
        return _skip(r, "answer_on_unanswerable", "answerable")
    hops = r.task.question_decomposition
    for candidate in [r.answer, *(str(h.answer) for h in hops[:1])]:
        where = [
            pid
            for pid in sorted(r.corpus.paragraphs, key=_order)
            if support_score(candidate, r.corpus.text(pid)) == 1.0
        ]
        if where:
            first = [x.id for x in r.corpus.search(str(hops[0].question) if hops else r.question)]
            evidence = list(dict.fromkeys([where[0], *first[:1]]))
            return [r.cite(candidate, evidence, retrieved=r.retrieved | set(evidence))]
    return _skip(r, "answer_on_unanswerable", "no paragraph states an answer")


@fault(
    "fault",
    "(abstain)",
    "none",
    "abstaining on an answerable record without a search",
    retrieved="none",
    searches="0",
)
def unreasoned_abstention(r: Record) -> list[Artifact]:
    if not r.task.answerable:
        return _skip(r, "unreasoned_abstention", "unanswerable")
    return [r.abstain(UNREASONED, 0)]


# --- yes/no answers (HotpotQA's and 2Wiki's comparisons) -----------------------------------------


def _polar(r: Record, name: str) -> str | None:
    """The record's gold yes or no, or None (skipped, saying why)."""
    gold = normalize_answer(r.answer)
    if not r.task.answerable or gold not in ("yes", "no"):
        _skip(r, name, "not a yes/no answer")
        return None
    return gold


@fault(
    "fault",
    "the other of yes/no",
    "support",
    "a yes/no question's gold answer turned round, citing its support",
)
def wrong_polarity(r: Record) -> list[Artifact]:
    gold = _polar(r, "wrong_polarity")
    return [] if gold is None else [r.cite("no" if gold == "yes" else "yes", r.support)]


@fault(
    "fault",
    "gold (yes/no)",
    "one side",
    "a yes/no gold answer citing the paragraph of one thing the question compares (and the support"
    " the question names neither of), not the other's",
)
def one_side(r: Record) -> list[Artifact]:
    if _polar(r, "one_side") is None:
        return []
    titles = {pid: p.title for pid in r.support if (p := r.corpus.read(pid))}
    named = [pid for pid, t in titles.items() if names(r.question, t)]
    if len(named) < 2:
        return _skip(r, "one_side", "the question names fewer than two supporting titles")
    return [r.cite(r.answer, [pid for pid in r.support if pid not in named[1:]])]


#: The classes, in the order they are built and listed (each registered by ``@fault``).
CLASSES: tuple[FaultClass, ...] = tuple(_CLASSES)
BY_NAME = {c.name: c for c in CLASSES}


def build(task: Task, classes: tuple[families.FaultClass, ...], max_words: int) -> families.Probed:
    """Each class's artifacts for one record (none where it yields nothing); for each class that
    yielded nothing (or fewer than it could), why and how many it left out; and the record's gold
    chain (None: unanswerable, or a hop without its paragraph), which R2 checks."""
    r = record_of(task, max_words)
    built = {c.name: BY_NAME[c.name].build(r) for c in classes}
    return families.Probed(built, dict(r.skipped), gold_chain(r))


__all__ = ["BY_NAME", "CLASSES", "FaultClass", "Record", "build", "record_of"]
