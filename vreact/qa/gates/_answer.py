"""Question answering's gates (the family ``qa`` registers them when it loads). Each is free,
deterministic and fails closed."""

from __future__ import annotations

import functools
import re

from vreact.metrics import normalize_answer
from vreact.qa.gates._artifact import Artifact
from vreact.qa.gates._choices import choices, offered_in
from vreact.qa.gates._injection import addressed, dictates, obfuscated
from vreact.qa.tools import MONTH_NAMES, MONTHS, tokenize
from vreact.verify.gates._registry import Check, GateResult, accept, gate, reject

_NUMBER_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
    "hundred",
    "thousand",
    "million",
    "billion",
    "trillion",
    "dozen",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
]
_ERA_WORDS = (
    "century",
    "centuries",
    "decade",
    "age",
    "ages",
    "era",
    "period",
    "dynasty",
    "war",
    "reign",
    "bc",
    "bce",
    "ad",
    "ce",
    "spring",
    "summer",
    "autumn",
    "fall",
    "winter",
    "today",
    "present",
    "early",
    "late",
    "mid",
    # events a "when" question may be answered by (MuSiQue has them)
    "act",
    "treaty",
    "battle",
    "revolution",
    "election",
    "independence",
    # the days of a week ("the fourth Thursday")
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
)
_REFUSAL = re.compile(
    r"\b(i\s+(do\s*n[o']?t|cannot|can't|am\s+not\s+sure)|not\s+(enough|sure|known|found|"
    r"available|mentioned|provided|specified|stated|clear)|no\s+(answer|information|idea|"
    r"evidence|data)|unknown|unanswerable|cannot\s+be\s+determined|insufficient|"
    r"sorry|unable\s+to|n/?a)\b",
    re.IGNORECASE,
)


def _tokens(text: str) -> list[str]:
    return normalize_answer(text).split()


def _has_number(tokens: list[str]) -> bool:
    """A digit or a number word, also as a part of a hyphened word ("six-time", "forty-two")."""
    parts = [p for t in tokens for p in re.split(r"[-–]", t)]
    return any(any(c.isdigit() for c in t) or t in _NUMBER_WORDS for t in parts)


def _has_date(tokens: list[str]) -> bool:
    return _has_number(tokens) or any(t in MONTHS or t in _ERA_WORDS for t in tokens)


_WH_PATTERNS: list[tuple[str, str]] = [
    ("number", r"\bhow\s+(many|much|long|old|tall|far|high|large|big)\b"),
    ("date", r"\b(when|(what|which)\s+(year|date|decade|century|month|day))\b"),
    ("person", r"\b(who|whom|whose)\b"),
    ("place", r"\bwhere\b"),
    ("any", r"\b(what|which|how)\b"),
]


#: Where a wh-phrase asks the question's own question: at its start, after a preposition or
#: two or a leading clause ("In what year ...", "Of the two, which ..."). A wh-word after a
#: noun in the middle opens a relative clause ("The author who won ... was born in what year?").
_PREPOSITION = r"(?:in|on|at|for|from|of|by|to|during|since|with|under|after|before|until|between|among)"
_FRONT = re.compile(
    rf"^\W*(?:{_PREPOSITION}\s+[^,?]*,\s*)?(?:{_PREPOSITION}\s+)*(?=(?:how|when|what|which|who|whom|whose|where)\b)"
)


#: Where a sentence of a question of several ends ("... in a European country. King Albert ...").
_SENTENCE_END = re.compile(r"(?<=[a-z0-9]{2}[.!?])\s+(?=[A-Z])")


def _last_sentence(question: str) -> str:
    """The sentence that asks: a question of several sentences asks in its last."""
    return _SENTENCE_END.split(question)[-1]


@functools.lru_cache(maxsize=4096)  # the type, the designer and the probe read one question again
def _wh_phrases(question: str) -> tuple[tuple[int, int, str, bool], ...]:
    """The wh-phrases that may ask the question: (position, specificity, the type asked, whether it
    asks in place: a "what" phrase, a "which" one after a preposition ("starred in which film",
    not "the river which ..."), or one that ends the question). A capitalised one
    inside the question is a title's word ("the song How Long Has This Been Going On"), not one."""
    q = question.lower()
    starts = {0} | {m.end() for m in _SENTENCE_END.finditer(question)}
    out = []
    for rank, (kind, pattern) in enumerate(_WH_PATTERNS):
        for m in re.finditer(pattern, q):
            if m.start() not in starts and question[m.start()].isupper():
                continue
            before = q[: m.start()].split()[-1:]
            in_place = (
                q.startswith("what", m.start())
                or (
                    q.startswith("which", m.start())
                    and bool(before)
                    and re.fullmatch(_PREPOSITION, before[0]) is not None
                )
                or not q[m.end() :].strip(" ?.!\"'")
            )
            out.append((m.start(), -rank, kind, in_place))
    return tuple(out)


def expected_answer_type(question: str, type_from_wh_word: bool = True) -> str:
    """The answer type the question's wh-word asks for: number, date, person, place or any
    (always any when L1 does not type answers by their wh-word: ``type_from_wh_word: false``).

    "how many/much" wins wherever it stands ("The state where X died has how many ...").
    Otherwise the wh-phrase of the main clause: the one the question opens with ("Who was
    president when ..." asks for a person, "What is the population of the state where ..." for
    anything), else, when it opens with none, the last that asks in place ("The author who won the
    prize was born in what year?" asks for a date: "who" opens a relative clause, and "X played
    with what goalkeeper when he was with Y?" asks for anything), else its last one. The words of
    a title are none ("Who Are You", "How Long Has This Been Going On")."""
    if not type_from_wh_word:
        return "any"
    found = list(_wh_phrases(question))
    if not found:
        return "any"
    if any(kind == "number" for *_, kind, _ in found):
        return "number"
    asking = _last_sentence(question)
    found = [f for f in found if f[0] >= len(question) - len(asking)] or found  # the last one asks
    if _FRONT.match(asking.lower()) is not None:  # the first opens it (at one position, the more specific)
        at = min(f[0] for f in found)
    else:
        asked = [f for f in found if f[3]] or found
        at = max(f[0] for f in asked)
    return max((f for f in found if f[0] == at), key=lambda f: f[1])[2]


@gate("not_refusal")
def not_refusal() -> Check:
    """The answer is not a refusal or a non-answer ("unknown", "not enough information")."""

    def check(a: Artifact) -> GateResult:
        m = _REFUSAL.search(str(a.answer))
        if m:
            return reject("refusal", f"the answer reads as a refusal ({m.group(0)!r}); use abstain instead")
        return accept()

    return check


#: A yes/no question: it opens with an auxiliary verb.
_POLAR = re.compile(
    r"^\s*(is|are|was|were|do|does|did|has|have|had|can|could|will|would|should|shall|may|might|must)\b",
    re.IGNORECASE,
)


def polar(question: str) -> bool:
    """Whether ``question`` asks yes or no: it opens with an auxiliary verb and no wh-phrase asks
    in place (a relative clause's "who" and a title's "Who Are You" ask nothing: "Do both films
    have directors who are from the same country?"; "Will Smith starred in which film?" asks)."""
    return bool(_POLAR.match(question)) and not any(f[3] or f[2] == "number" for f in _wh_phrases(question))


@gate("not_restatement")
def not_restatement(max_shared: float = 0.8) -> Check:
    """The answer is not the question, or most of it, said again; an answer the question offers
    ("..., X or Y?") is a choice, not a restatement, and of an answer holding one, its other
    words decide; an answer naming a number the question does not says something new (unless the
    question offers its answers: a choice with another number is no choice), and so does one whose
    last word, its head ("the New York and New Jersey campaign"), the question does not hold."""

    def check(a: Artifact) -> GateResult:
        ans, q = _tokens(str(a.answer)), _tokens(a.question)
        if not ans or ans == q:
            return reject("restatement", "the answer repeats the question")
        choice = offered_in(str(a.answer), a.question)
        if choice == ans:
            return accept()
        rest = ans
        if choice:  # its other words decide, not the choice's
            at = next(i for i in range(len(ans)) if ans[i : i + len(choice)] == choice)
            rest = ans[:at] + ans[at + len(choice) :]
        qset = set(q)
        new_number = any(any(c.isdigit() for c in t) and t not in qset for t in rest)
        if new_number and not choices(a.question):  # "6th Earl" for "8th Earl"; a choice changed is none
            return accept()
        if rest and rest[-1] == ans[-1] and ans[-1] not in qset:  # a new head: "... campaign"
            return accept()
        if len(ans) >= 4 and sum(t in qset for t in rest) / len(rest) >= max_shared:
            return reject("restatement", "the answer mostly repeats the question's words")
        return accept()

    return check


@gate("answer_type")
def answer_type(type_from_wh_word: bool = True) -> Check:
    """The answer's type fits the question's wh-word (how many: a number; when: a date; ...),
    when L1 asks for it (``type_from_wh_word``); else any answer with a word is one."""

    def check(a: Artifact) -> GateResult:
        want = expected_answer_type(a.question, type_from_wh_word)
        tokens = _tokens(str(a.answer)) + re.findall(r"\w+(?:[-–]\w+)+", str(a.answer).lower())
        letters = any(c.isalpha() for c in str(a.answer))
        ok = {
            "number": _has_number(tokens),
            "date": _has_date(tokens),
            "person": letters,
            "place": letters,
            "any": bool(tokens),
        }[want]
        if not ok:
            return reject("answer_type", f"the question asks for a {want}; {a.answer!r} is not one")
        return accept()

    return check


def _citations(check: Check, cite_evidence: bool) -> Check:
    """``check``, except that an answer citing nothing passes when L1 asks for no citations
    (``cite_evidence: false``); one that cites is still checked."""
    if cite_evidence:
        return check
    return lambda a: accept() if not a.evidence else check(a)


@gate("evidence_retrieved")
def evidence_retrieved(min_cited: int = 1, cite_evidence: bool = True) -> Check:
    """At least ``min_cited`` paragraphs are cited, and every cited one was retrieved in this try
    (an uncited answer passes when L1 asks for no citations)."""

    def check(a: Artifact) -> GateResult:
        cited = list(a.evidence or [])
        if len(cited) < min_cited:
            return reject("no_evidence", f"cite at least {min_cited} paragraph id(s) as evidence")
        unseen = [c for c in cited if c not in a.retrieved]
        if unseen:
            return reject("evidence_not_retrieved", f"cited paragraph(s) {unseen} were not retrieved")
        return accept()

    return _citations(check, cite_evidence)


@gate("multi_hop")
def multi_hop(min_paragraphs: int = 1, cite_evidence: bool = True) -> Check:
    """The answer rests on at least ``min_paragraphs`` distinct cited paragraphs that exist: a
    multi-hop question is not answered by one paragraph (the first hop's entity is the typical
    wrong answer, and it is written in the paragraph that names it). An uncited answer passes
    when L1 asks for no citations (the spec then refuses ``min_paragraphs`` above 1)."""

    def check(a: Artifact) -> GateResult:
        n = len(dict.fromkeys(e for e in a.evidence or [] if e in a.cited))
        if n < min_paragraphs:
            return reject(
                "single_hop",
                f"cites {n} paragraph(s); the answer must rest on {min_paragraphs} or more, one per "
                "fact of the chain from the question to the answer",
            )
        return accept()

    return _citations(check, cite_evidence)


@gate("hop_supported")
def hop_supported(min_overlap: float = 0.5) -> Check:
    """Each hop of a finish that names its hops (``finish: hops``) is stated in its paragraph,
    and the hops end with the answer. An artifact without hops passes."""

    def check(a: Artifact) -> GateResult:
        for i, hop in enumerate(a.hops, 1):
            entity, pid = hop.get("entity", ""), hop.get("paragraph", "")
            text = a.cited.get(pid)
            if text is None:
                return reject("hop_unsupported", f"hop {i}: there is no paragraph {pid!r}")
            if support_score(entity, text) < min_overlap:
                return reject("hop_unsupported", f"hop {i}: paragraph {pid} does not state {entity!r}")
        if a.hops and support_score(str(a.answer), a.hops[-1].get("entity", "")) < min_overlap:
            last = a.hops[-1].get("entity", "")
            return reject("hop_unsupported", f"the hops end with {last!r}, not with the answer {a.answer!r}")
        return accept()

    return check


@gate("hop_chain")
def hop_chain(min_overlap: float = 0.3, question_words: int = 2, linked: bool = True) -> Check:
    """The hops move on and are linked (R2's ``chain_bridges`` within one task): no hop names an
    earlier hop's entity again, and (``linked``) each later hop's paragraph
    mentions an earlier hop's entity, or an earlier hop's paragraph mentions its entity, or it
    is a hop of its own from the question (its paragraph shares ``question_words`` of the
    question's content words, as the first hop's does). Words match on their first five letters
    (French: France, Mexican: Mexico). An artifact without hops passes."""

    def check(a: Artifact) -> GateResult:
        if len(a.hops) < 2:  # nothing to link
            return accept()
        question = {_stem(w) for w in tokenize(a.question)}
        for i, hop in enumerate(a.hops[1:], 2):
            pid = hop.get("paragraph", "")
            text = a.cited.get(pid, "")
            earlier = a.hops[: i - 1]
            again = [
                h
                for h in earlier
                if normalize_answer(h.get("entity", "")) == normalize_answer(hop.get("entity", ""))
            ]
            if again:
                return reject(
                    "hop_repeated", f"hop {i} names {hop.get('entity', '')!r} again: a hop moves on"
                )
            if not linked:
                continue
            link = any(_mentions(h.get("entity", ""), text, min_overlap) for h in earlier)
            link = link or any(
                _mentions(hop.get("entity", ""), a.cited.get(h.get("paragraph", ""), ""), min_overlap)
                for h in earlier
            )
            if not link and len(question & {_stem(w) for w in _tokens(text)}) < question_words:
                prev = earlier[-1].get("entity", "")
                return reject("hop_broken", f"hop {i}: paragraph {pid} does not mention {prev!r}")
        return accept()

    return check


@gate("hop_agreement")
def hop_agreement(min_overlap: float = 0.5, question_words: int = 1) -> Check:
    """The answer is reached along its hops (``finish: hops``): the first hop's paragraph shares
    ``question_words`` of the question's content words, and the answer's paragraph mentions an
    earlier hop's entity, so a paragraph that states an answer with the question's words but
    outside the chain (a poisoned one) is rejected. An artifact without hops passes."""

    def check(a: Artifact) -> GateResult:
        if not a.hops:
            return accept()
        question = {_stem(w) for w in tokenize(a.question)}
        first = a.cited.get(a.hops[0].get("paragraph", ""), "")
        if len(question & {_stem(w) for w in _tokens(first)}) < question_words:
            pid = a.hops[0].get("paragraph", "")
            return reject("hops_disagree", f"hop 1: paragraph {pid} is not about the question")
        last, earlier = a.hops[-1], a.hops[:-1]
        text = a.cited.get(last.get("paragraph", ""), "")
        if earlier and not any(_mentions(h.get("entity", ""), text, min_overlap) for h in earlier):
            pid, prev = last.get("paragraph", ""), earlier[-1].get("entity", "")
            return reject(
                "hops_disagree",
                f"the answer's paragraph {pid} names no earlier hop's entity ({prev!r}): it is not"
                " reached along the chain",
            )
        return accept()

    return check


#: What addresses the reader of a paragraph with an instruction (indirect prompt injection): an
#: override of earlier instructions, a fake system, tool or assistant message, words to the
#: assistant, an answer dictated, an imperative about the answer or the citation.
_INSTRUCTION = re.compile(
    r"\b(ignore|disregard|forget)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|other|your)\b"
    r"|(^|[.!?>\]]\s*|\[)(system|assistant|tool|developer)(\s+(message|notice|note|prompt))?\s*[:\]]"
    r"|\b(to\s+you|dear|note\s+to\s+the|message\s+to\s+the|hello)\s*,?\s*(ai\s+)?(assistant|model|agent|ai)\b"
    r"|\bimportant\s+(message|instructions?|note)\b|<\s*/?\s*information\s*>"
    r"|\b(the|your)\s+((correct|final|true|real|verified|right)\s+)?answer\s+(is|should\s+be|must\s+be)\b"
    r"|(^|[.!?:]\s+)(answer|respond|reply|finish|cite|write|append|add|say|output|include|return)\s+"
    r"(with|the|your|this|that|it|only|{?\w+\s+(and|,)\s+cite)\b"
    r"|\byou\s+(must|should|have\s+to|need\s+to|are\s+(required|instructed))\b",
    re.IGNORECASE,
)
#: A URL or a web address: an answer holding one carries what a paragraph asked for.
_URL = re.compile(r"https?://|\bwww\.|\b[\w-]+\.(com|org|net|example|io)\b", re.IGNORECASE)


#: What "ignore the previous ..." must be about to be an instruction's: what the reader was told
#: ("forget previous romances" is a story's).
_TOLD = frozenset(
    """
    instruction instructions prompt prompts direction directions rule rules guideline guidelines
    context message messages text content command commands order orders programming training
    constraint constraints conversation task tasks input inputs answer answers question questions
    information request requests directive directives guidance system policy policies and or
    """.split()  # noqa: SIM905
)
#: Words a title keeps in lower case.
_SMALL = frozenset({"to", "a", "an", "the", "of", "and", "or", "with", "in", "on", "for", "at", "by"})
#: What reports someone's words: a quotation next to one of these is speech, not an instruction.
_SPEECH = re.compile(r"\b(said|says|told|asked|replied|recalls|recalled|wrote|added|stated|related)\b")
_QUOTES = '"\u201c\u201d'


def _name(words: str) -> bool:
    """Words in title case, two of them capitalised ("Say It With", "You Need to"): a title, not
    a command ("Answer the" is one)."""
    big = [w for w in words.split() if w.lower() not in _SMALL]
    return len(big) > 1 and all(w[0].isupper() and not w.isupper() for w in big)


def _reported(text: str, start: int) -> bool:
    """Whether ``text[start]`` is inside a quotation that a verb of speech reports ("'You have to
    ...,' said the spokesman"): the quotation marks before it in its paragraph are odd in number
    and such a verb is within 40 characters of the quotation's opening or close."""
    opened = [i for i, c in enumerate(text[:start]) if c in _QUOTES]
    if len(opened) % 2 == 0:
        return False
    close = next((i for i in range(start, len(text)) if text[i] in _QUOTES), len(text))
    around = text[max(0, opened[-1] - 40) : opened[-1]] + " " + text[close : close + 40]
    return bool(_SPEECH.search(around))


def _story(text: str, start: int, end: int) -> bool:
    """Whether "forget previous ..." at ``text[start:end]`` is a story's infinitive ("trying to
    forget previous romances"): after "to", and about no thing a reader is told."""
    after = re.match(r"\W*(\w+)?", text[end:])
    told = not (after and after.group(1)) or after.group(1).lower() in _TOLD
    return not told and text[:start].rstrip().lower().endswith(" to")


@functools.lru_cache(maxsize=4096)  # the same paragraphs are cited again and again
def instruction_in(text: str) -> str | None:
    """The words of ``text`` that address its reader with an instruction, or None: not a title's
    (title case, "Say It With Flowers"), not reported speech, not a story's "to forget previous
    romances"."""
    for m in _INSTRUCTION.finditer(text):
        words = " ".join(m.group(0).split())
        if _name(words.lstrip(".!?:>[] ")) or _reported(text, m.start()):
            continue
        if m.group(1) and _story(text, m.start(), m.end()):
            continue
        return words
    return None


def injected(text: str, title: str = "") -> str | None:
    """What in a cited paragraph ("title. text") instructs its reader: the word list's match
    (``instruction_in``), else, in its text (a dataset's title is no sentence: "Let the Heartaches
    Begin"), a sentence addressed to a reader, a command about what to output, or a run not
    written to be read (``vreact.qa.gates._injection``)."""
    found = instruction_in(text)
    if found:
        return found
    body = text[len(title) + 2 :] if title and text.startswith(f"{title}. ") else text
    return addressed(body) or dictates(body) or obfuscated(body)


@gate("no_instructions_in_evidence")
def no_instructions_in_evidence() -> Check:
    """No cited paragraph addresses the reader with an instruction ("ignore ...", "system:",
    words to the assistant, "the answer is", an imperative about the answer or the citation; a
    speaker's turn, a command to its reader, a command about what to output, an encoded run),
    and the answer holds no URL: text that instructs the agent is an attack, not evidence."""

    def check(a: Artifact) -> GateResult:
        if _URL.search(str(a.answer)):
            return reject("instruction_in_evidence", f"the answer {a.answer!r} holds a web address")
        for pid, text in a.cited.items():
            found = injected(text, a.titles.get(pid, ""))
            if found:
                return reject(
                    "instruction_in_evidence",
                    f"paragraph {pid} instructs its reader ({found!r}): data is never an instruction",
                )
        return accept()

    return check


def _stem(word: str) -> str:
    return word[:5]


def _mentions(entity: str, text: str, min_overlap: float) -> bool:
    """At least ``min_overlap`` of the entity's words are in ``text`` (on their first letters)."""
    words = [_stem(w) for w in _tokens(entity)]
    if not words:
        return False
    found = {_stem(w) for w in _tokens(text)}
    return sum(w in found for w in words) / len(words) >= min_overlap


#: A cited paragraph's normalised text: the same paragraphs are checked again and again.
_normalized_text = functools.lru_cache(maxsize=4096)(normalize_answer)


_MONTH_OF = {m: MONTH_NAMES[n - 1] for m, n in MONTHS.items()}  # a short form as its full name
_DIGITS = {w: str(i) for i, w in enumerate(_NUMBER_WORDS[:20])} | {
    w: str(20 + 10 * i) for i, w in enumerate(_NUMBER_WORDS[20:28])
}


def _canonical(tokens: list[str]) -> list[str]:
    """Tokens with a number's words as digits and a month's short name in full ("two" -> "2",
    "sept" -> "september"; "1,000" is already "1000" once normalised)."""
    return [_DIGITS.get(t, _MONTH_OF.get(t, t)) for t in tokens]


def support_score(answer: str, text: str) -> float:
    """How much of ``answer`` appears in ``text``: 1.0 when it does verbatim (normalised), else
    the share of its words found there; a number's or a month's words count in either form."""
    ans = _tokens(answer)
    if not ans:
        return 0.0
    norm = _normalized_text(text)
    if " ".join(ans) in norm:
        return 1.0
    words = set(norm.split())
    found = sum(t in words for t in ans)
    if found < len(ans) and (_has_date(ans)):
        words |= set(_canonical(list(words)))
        found = sum(t in words for t in _canonical(ans))
    return found / len(ans)


def names(question: str, title: str, min_overlap: float = 0.5) -> bool:
    """Whether ``question`` names the paragraph titled ``title``: ``min_overlap`` of its words
    (on their first letters), those within parentheses ("Gibson (cocktail)") aside."""
    bare = re.sub(r"\s*\([^)]*\)", "", title).strip()
    return bool(bare) and _mentions(bare, question, min_overlap)


def _compared(a: Artifact, min_overlap: float) -> list[str]:
    """The distinct titles of the cited paragraphs the question names."""
    named: list[str] = []
    for pid in a.cited:
        title = a.titles.get(pid, "")
        if names(a.question, title, min_overlap) and title.lower() not in named:
            named.append(title.lower())
    return named


@gate("supported")
def supported(min_overlap: float = 0.5, cite_evidence: bool = True, yes_no: bool = False) -> Check:
    """The answer is supported by a cited paragraph: it appears there, or at least
    ``min_overlap`` of its words do (an uncited answer passes when L1 asks for no citations).
    A number or a date counts as stated in other words ("5 May 1932", "May 5, 1932"; "two",
    "2"). With ``yes_no`` (L1), a yes or no answers a yes/no question when it cites the
    paragraphs of both things the question compares: two or more whose titles it names (to any
    other question, a yes is held to a paragraph stating it, as any answer)."""

    def check(a: Artifact) -> GateResult:
        if yes_no and polar(a.question) and normalize_answer(str(a.answer)) in ("yes", "no"):
            named = _compared(a, min_overlap)
            if len(named) < 2:
                side = f" (only {named[0]!r})" if named else ""
                return reject(
                    "one_side",
                    f"a yes/no answer cites the paragraphs of both things the question compares{side}",
                )
            return accept()
        best = max((support_score(str(a.answer), t) for t in a.cited.values()), default=0.0)
        if best < min_overlap:
            return reject("unsupported", f"{a.answer!r} is not found in the cited paragraph(s)")
        return accept()

    return _citations(check, cite_evidence)


@gate("abstain_reasoned", kinds=("abstain",))
def abstain_reasoned(min_searches: int = 1) -> Check:
    """An abstention gives a reason and comes after at least ``min_searches`` searches."""

    def check(a: Artifact) -> GateResult:
        if not a.reason.strip():
            return reject("no_reason", "an abstention must say why")
        if a.searches < min_searches:
            return reject("premature_abstention", f"search at least {min_searches} time(s) before abstaining")
        return accept()

    return check
