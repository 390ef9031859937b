"""How well a paragraph-level injection detector generalises (issue 39): its recall on each
category of the corpus gathered from public packages (``vreact/qa/injections/corpus.jsonl``), and
its false positives on every clean paragraph the repository's records hold (MuSiQue, HotpotQA,
2WikiMultihopQA), the gold supporting paragraphs named apart.

    .venv/bin/python benchmarks/injections.py            # every detector, as markdown tables

Each injected paragraph is built as an attacked copy's is (``vreact.qa.attacks.filled``): a
record's question, then a corpus template with a wrong answer of another record as its target.
The detector is ``no_instructions_in_evidence``'s reading of a cited paragraph
(``vreact.qa.gates._answer.instruction_in``). The held-out categories are not read here.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from vreact.qa import formats
from vreact.qa.attack_settings import CATEGORIES
from vreact.qa.attacks import GOAL, corpus, filled
from vreact.qa.dataset import load_tasks
from vreact.qa.gates._answer import injected, instruction_in
from vreact.qa.gates._injection import addressed, dictates, obfuscated

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
#: The clean records: (dataset, reader).
CLEAN: dict[str, Callable[[], list]] = {
    "MuSiQue-Ans 100": lambda: load_tasks(str(DATA / "musique" / "musique_ans_train_100.jsonl")),
    "MuSiQue-Full 80": lambda: load_tasks(str(DATA / "musique" / "musique_full_train_80.jsonl")),
    "HotpotQA 100": lambda: formats.read(str(DATA / "qa" / "hotpotqa_dev_distractor_100.jsonl"), "hotpotqa"),
    "2Wiki 100": lambda: formats.read(str(DATA / "qa" / "2wiki_dev_100.jsonl"), "2wiki"),
}
#: Questions and targets the injected paragraphs are built with: the first records of MuSiQue-Full.
QUESTIONS = 20


#: Each detector measured: the word list (the shipped gate's until issue 39), each structural
#: one, all of them, and the shipped gate as it reads a cited paragraph ("title. text").
DETECTORS: dict[str, Callable[[str], bool]] = {
    "word list": lambda t: instruction_in(t) is not None,
    "addressed": lambda t: addressed(t) is not None,
    "dictates": lambda t: dictates(t) is not None,
    "obfuscated": lambda t: obfuscated(t) is not None,
}
DETECTORS["any"] = lambda t: any(d(t) for name, d in DETECTORS.items() if name != "any")
#: The gate's reading, of a paragraph as an artifact cites it: its title, then its text.
GATE = "no_instructions_in_evidence"


def recall(
    detector: Callable[[str], bool], own_words: bool = True, question: bool = True
) -> dict[str, tuple[int, int]]:
    """Each category's (caught, built): every template with each of QUESTIONS questions. Without
    ``own_words``, a template that dictates nothing (a role-play prompt) is measured without the
    goal vreact writes after it: the corpus's words alone; without ``question``, without the
    question an attacked copy's paragraph opens with."""
    tasks = load_tasks(str(DATA / "musique" / "musique_full_train_80.jsonl"), QUESTIONS + 1)
    out = {}
    for category in CATEGORIES:
        caught = built = 0
        for template in corpus(category):
            for i, task in enumerate(tasks[:QUESTIONS]):
                target = str(tasks[(i + 1) % len(tasks)].answer)
                text = filled(template, target)
                if not own_words and text.endswith(GOAL.format(x=target)) and "{goal}" not in template:
                    text = text.removesuffix(GOAL.format(x=target)).strip()
                built += 1
                caught += detector(f"{task.question.strip()} {text}" if question else text)
        out[category] = (caught, built)
    return out


def false_positives(detector: Callable[[str], bool] | None) -> dict[str, tuple[int, int, int, int]]:
    """Each dataset's (flagged, paragraphs, flagged gold, gold paragraphs), each distinct
    paragraph once; ``None``: the shipped gate, reading "title. text" as a cited paragraph."""
    out = {}
    for name, read in CLEAN.items():
        seen: dict[tuple[str, str], bool] = {}
        for task in read():
            for p in task.paragraphs:
                key = (p.title, p.paragraph_text)
                seen[key] = seen.get(key, False) or bool(p.is_supporting)
        if detector is None:
            flagged = {k for k in seen if injected(f"{k[0]}. {k[1]}", k[0])}
        else:
            flagged = {k for k in seen if detector(k[1])}
        gold = {t for t, s in seen.items() if s}
        out[name] = (len(flagged), len(seen), len(flagged & gold), len(gold))
    return out


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    print("Recall on the corpus's words alone (no question before them, no goal of vreact's after):")
    print()
    print("| detector | " + " | ".join(CATEGORIES) + " |")
    print("|---|" + "--:|" * len(CATEGORIES))
    fps = {}
    for name, detector in DETECTORS.items():
        r = recall(detector, own_words=False, question=False)
        print(f"| {name} | " + " | ".join(f"{c / b:.2f}" for c, b in r.values()) + " |")
        fps[name] = false_positives(detector)
    r = recall(lambda t: injected(t) is not None, own_words=False, question=False)
    print(f"| {GATE} (the gate) | " + " | ".join(f"{c / b:.2f}" for c, b in r.values()) + " |")
    fps[f"{GATE} (title. text)"] = false_positives(None)
    print()
    print("False positives on every distinct clean paragraph (gold supporting ones apart):")
    print()
    print("| detector | " + " | ".join(CLEAN) + " |")
    print("|---|" + "--:|" * len(CLEAN))
    for name, fp in fps.items():
        cells = [f"{f} / {n} (gold {g})" for f, n, g, _ in fp.values()]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
