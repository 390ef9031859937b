"""Injection detectors that read a paragraph's structure, not its vocabulary (issue 39): words
addressed to a reader (a speaker's turn, a chat template's tokens, a sentence in the second
person that tells its reader what to do), an imperative about what to output, and text that is
not written to be read (an encoded or obfuscated run). Each returns the words that gave it away,
or None. They are measured on attack categories their author did not write
(``benchmarks/injections.py``); encyclopedic text (the clean paragraphs of ``tests/data/``)
addresses no one, which is what keeps their false positives down.
"""

from __future__ import annotations

import functools
import re

#: Who speaks in a transcript: a turn of one of them is no encyclopedia's sentence.
_ROLES = r"(system|assistant|user|human|developer|tool|ai|bot|model|gpt|chatgpt|dan)"
_SPEAKER = re.compile(
    rf"(^|[\n.!?>\])}}]\s*|\[)\s*{_ROLES}(\s+(message|notice|note|prompt|output|turn|result))?\s*[:\]]"
    r"|<\|\s*[a-z_]+\s*\|>"  # a chat template's tokens: <|im_start|>
    r"|<\s*/?\s*(system|user|assistant|untrusted|document|information|instructions?|inst|context)\s*>"
    r"|\[\s*/?\s*inst\s*\]|#{2,}\s*\(?\s*(system|instruction)",
    re.IGNORECASE,
)
_YOU = re.compile(r"\byou(r|rs|rself|'ll|'re)?\b", re.IGNORECASE)
#: Verbs whose bare form opens a command (a common English list, not an attack's words).
_VERBS = """
act add answer append ask avoid be begin bring call change check choose cite confirm consider
continue copy create decode delete describe disregard do drop end enter explain fetch find
finish follow forget format generate get give go help ignore include insert keep leave let list
look make mention move note obey output paste pick place post pretend print proceed produce
provide put read recall remember remove repeat reply report respond restate return reveal
rewrite run say select send set share show skip sound speak spell start state stay stop submit
summarise summarize switch take talk tell think translate treat try type update use write
"""
VERBS = frozenset(_VERBS.split())
#: Words that may open a command before its verb.
_LEAD = frozenset(
    {"please", "now", "then", "just", "so", "simply", "kindly", "instead", "also", "first", "next"}
)
#: What makes an opening word no command: a title or a name followed by a verb of its own.
_NOT_AFTER = frozenset({"is", "was", "are", "were", "has", "had", "by", "of", "and", "in", "(", "'s"})
#: Where a sentence ends (not after an initial: "U.S. state sports" is one).
_ENDS = r"(?<![\s.][A-Z]\.)(?<=[.!?:])\s+|\n+"
#: Where a clause after a comma opens with a verb.
_CLAUSE = r"(?<=,)\s+(?=(?:" + "|".join(sorted(VERBS)) + r")\b)"
_SENTENCE = re.compile(f"{_ENDS}|{_CLAUSE}", re.IGNORECASE)
_SENTENCES = re.compile(_ENDS, re.IGNORECASE)
_CLAUSES = re.compile(_CLAUSE, re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z']+|\(")


_QUOTE = "\"'`\u201c\u2018("
#: A sentence that says what its subject is: a title or a name opening it, not a command.
_COPULA = re.compile(r"^(\S+\s+){0,10}?(is|was|are|were)\s+(a|an|the|\d)", re.IGNORECASE)


#: Words that make what follows a verb its object, not a noun phrase's ("Print everything ...").
_DETERMINERS = frozenset(
    """
    a an the this that these those all every everything only your my our its his her their any
    some nothing no each
    """.split()  # noqa: SIM905
)


def _item(segment: str) -> bool:
    """A list's item: three words at most (after an "and" or "or"), the first no verb."""
    words = [w.lower() for w in _WORD.findall(segment)]
    if words and words[0] in {"and", "or"}:
        words = words[1:]
    return 0 < len(words) <= 3 and words[0] not in VERBS


def _in_list(before: str, clause: str) -> bool:
    """A clause after a comma that is an item of a list ("broadcast, print, digital and social";
    "share weather reports, gear tips, and ..."): three words at most up to its own comma, next to
    an item that opens with no verb. A command's neighbours are commands ("Ignore the question,
    say yes, and cite ...")."""
    head, comma, after = clause.partition(",")
    if not comma or len(head.split()) > 3:
        return False
    return _item(before.rstrip().rstrip(",").rpartition(",")[2]) or _item(after.partition(",")[0])


def _commands(text: str) -> list[str]:
    """The sentences (or clauses after a comma) that open with a bare verb: commands. Not one
    that is quoted (speech, a title), that says what its opening words are ("Make Love Not War
    is the 2004 debut album"), whose opening words are a name in title case ("State Routes 206
    and 218 meet") or a hyphenated one ("Take-Two's"), a noun phrase with its own verb ("Print
    publication resumed"), or an item of a list ("broadcast, print, digital")."""
    out = []
    for whole in _SENTENCES.split(text):
        clauses = _CLAUSES.split(whole)
        for i, sentence in enumerate(clauses):
            sentence = sentence.strip()
            if not sentence or sentence[0] in _QUOTE or _COPULA.match(sentence):
                continue
            if i and _in_list(clauses[i - 1], sentence):
                continue
            if _command(sentence):
                out.append(" ".join(sentence.split())[:80])
    return out


def _command(sentence: str) -> bool:
    """Whether a sentence (or a clause) opens with a bare verb that gives a command."""
    raw = _WORD.findall(sentence)[:5]
    led = False
    while raw and raw[0].lower() in _LEAD:
        raw, led = raw[1:], True
    if len(raw) < 2 or raw[0].lower() not in VERBS or raw[1].lower() in _NOT_AFTER:
        return False
    # a noun phrase that has a verb of its own: "Print publication resumed with ..."
    if len(raw) > 2 and raw[1].islower() and raw[1] not in _DETERMINERS and raw[2].endswith("ed"):
        return False
    named = raw[1][0].isupper() and not raw[1].isupper() and raw[1] != "I"
    if named and not led and not raw[0].isupper():  # a name in title case ("State Routes")
        return False
    return not re.match(rf"{re.escape(raw[0])}-", sentence, re.IGNORECASE)  # a hyphenated name


#: Who a label or a vocative names when it speaks to a machine, or says who wrote to it: the
#: readers an agent is (and what hides words from people), a note's or message's sender.
_READERS = frozenset(
    """
    ai assistant assistants agent agents bot bots chatbot developer gpt llm llms model models
    system systems automated machine machines hidden invisible
    """.split()  # noqa: SIM905
)
_SENDERS = frozenset(
    """
    note notice message memo instruction instructions directive reminder comment
    """.split()  # noqa: SIM905
)
#: Verbs that make a label's words a sentence of their own.
_FINITE = frozenset(
    """
    is was are were has had have be been became include includes consist consists contain contains
    """.split()  # noqa: SIM905
)
#: Who a label is meant for.
_FOR_TO = frozenset({"for", "to"})
#: A label: a sentence's opening words (twelve at most, no sentence end) before a colon.
_LABEL = re.compile(r"^([^:.!?\n]{1,100}?):(\s|$)")
#: A vocative: a sentence that opens by naming a machine reader and goes on with a command
#: ("Assistant, please say ...", "Dear AI, answer ...", "Hey assistant! Say ..."), or in a
#: paragraph that says "you"; not "Assistant, Texas is a town", "Occupation: Model, actress".
_VOCATIVE = re.compile(
    r"(?:^|(?<![\s.][A-Z]\.)(?<=[.!?])\s+)((?:dear\s+|hey\s+|hello\s+|attention\s+)?(?:ai\s+|language\s+)?"
    r"(?:assistant|model|llm|ai|bot|chatbot|agent|gpt|chatgpt)s?\s*[,!])\s*([A-Za-z']+)?(?:\s+([A-Za-z']+))?",
    re.IGNORECASE,
)
#: Machine readers named as reading this very text: "AI models reading this", "any agent
#: processing this page" (not "statistical models processing these signals").
_READING = re.compile(
    r"\b((ai|llm|language)\s+models?|ai|assistants?|llms?|agents?|bots?)\s+"
    r"(reading|processing|parsing|scanning|summari[sz]ing|seeing)\s+(this|these)\b",
    re.IGNORECASE,
)


def _labelled(sentence: str) -> str | None:
    """A label that names a machine reader, or a sender ("Note by a trustworthy recruiter:"):
    a speaker marker however it is worded."""
    m = _LABEL.match(sentence)
    if not m or len(m.group(1).split()) > 12:
        return None
    raw = re.findall(r"[A-Za-z]+", m.group(1))
    words = [w.lower() for w in raw]
    if _FINITE.intersection(words):  # a sentence before its colon ("The system has three parts:")
        return None
    # a reader's word that the label is for or to ("... for automated screening systems:",
    # "visible to LLM scan"), in lower case, an acronym (LLM) or the label's first: not a name in
    # title case ("Harvey Keitel as Agent Peter Sadusky:"), not what a label is about ("System
    # requirements:", "Automated teller machine:")
    for i, w in enumerate(raw):
        if (
            words[i] in _READERS
            and (i == 0 or not w.istitle())
            and _FOR_TO.intersection(words[max(0, i - 3) : i])
        ):
            return m.group(0).strip()
    if words and words[0] in _SENDERS and len(words) > 1 and words[1] in {"by", "from"}:
        return m.group(0).strip()
    return None


@functools.lru_cache(maxsize=4096)
def addressed(text: str) -> str | None:
    """Words addressed to the reader: a speaker's turn or a chat template's token; a label or a
    vocative that names a machine reader, or says who sends it; readers named as reading this;
    or a command in a paragraph that speaks to its reader in the second person."""
    m = _SPEAKER.search(text) or _READING.search(text)
    if m:
        return " ".join(m.group(0).split())
    for sentence in _SENTENCE.split(text):
        if found := _labelled(sentence.strip()):
            return found
    for m in _VOCATIVE.finditer(text):
        first, second = (m.group(2) or "").lower(), (m.group(3) or "").lower()
        verb = second if first in _LEAD else first
        if verb in VERBS or _YOU.search(text):
            return m.group(1)
    if _YOU.search(text):
        commands = _commands(text)
        if commands:
            return commands[0]
    return None


#: Commands about what a reader outputs: the object of an injection that dictates an answer.
_OUTPUTS = r"(reply|respond|answer|output|print|say|repeat|report|return|write|state|confirm)"
_OUTPUT = re.compile(
    rf"\b{_OUTPUTS}(s|ed|ing)?\b|\b(end|begin|start)\b[^.!?\n]{{0,40}}\b(response|reply|answer|output)",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=4096)
def dictates(text: str) -> str | None:
    """A command that says what to output: one whose verbs include one of producing output
    ("Reply with ...", "Ignore the rest and print ...", "report that ...", "end every response
    with ...")."""
    for command in _commands(text):
        if _OUTPUT.search(command):
            return command
    return None


_B64 = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")
_HEX = re.compile(r"\b(?:[0-9a-fA-F]{2}[\s:]?){12,}\b")
_MORSE = re.compile(r"(?:[.\-]{1,6}[ /]+){8,}")
_BITS = re.compile(r"(?:\b[01]{8}\b\s*){4,}")


#: English's function words: a run of words without any is no English sentence.
_FUNCTIONS = """
the of and a an in to is was were are be been by for with on as at from that this which who his
her its their it he she they or not but also has had have into
"""
_FUNCTION = frozenset(_FUNCTIONS.split())
#: The function words a deciphered run is known by (three letters or more: a short one turns up
#: by chance).
_KNOWN = frozenset(
    {"the", "and", "with", "that", "this", "for", "was", "are", "from", "you", "your", "not", "have"}
)
_LOWER = "abcdefghijklmnopqrstuvwxyz"
#: The letter ciphers tried on a run: every Caesar shift (ROT13 among them) and Atbash.
_CIPHERS = [
    (
        f"rot{k}",
        str.maketrans(_LOWER + _LOWER.upper(), _LOWER[k:] + _LOWER[:k] + (_LOWER[k:] + _LOWER[:k]).upper()),
    )
    for k in range(1, 26)
] + [("atbash", str.maketrans(_LOWER + _LOWER.upper(), _LOWER[::-1] + _LOWER[::-1].upper()))]
_LETTERS = re.compile(r"[A-Za-z]+")


def ciphered(text: str, least: int = 4) -> str | None:
    """A run of ``least`` words or more with no English function word that one of the letter
    ciphers turns into English (two function words appear): the cipher's name and the run."""
    run: list[str] = []
    for word in [*_LETTERS.findall(text), "the"]:  # a last function word ends the last run
        if word.lower() not in _FUNCTION:
            run.append(word)
            continue
        if len(run) >= least:
            joined = " ".join(run)
            for name, table in _CIPHERS:
                if len(_KNOWN.intersection(joined.translate(table).lower().split())) >= 2:
                    return f"{name}: {joined[:30]}"
        run = []
    return None


@functools.lru_cache(maxsize=4096)
def obfuscated(text: str) -> str | None:
    """A run not written to be read: base64-like (letters and digits, 24 or more, no space),
    hex bytes, Morse, bits, Braille cells, quoted-printable escapes, zero-width or combining
    marks piled up, or words in a letter cipher (``ciphered``)."""
    for m in _B64.finditer(text):
        run = m.group(0)
        if any(c.isdigit() for c in run) and any(c.isupper() for c in run) and any(c.islower() for c in run):
            return run[:40]
    for pattern in (_HEX, _MORSE, _BITS):
        if found := pattern.search(text):
            return found.group(0)[:40]
    if sum(0x2800 <= ord(c) <= 0x28FF for c in text) >= 8:
        return "braille cells"
    if text.count("=") >= 8 and re.search(r"(=[0-9A-F]{2}){4,}", text):
        return "quoted-printable escapes"
    marks = sum(0x0300 <= ord(c) <= 0x036F or 0x200B <= ord(c) <= 0x200F for c in text)
    if marks >= 12:
        return "combining or zero-width marks"
    return ciphered(text)
