"""The reading ceiling of a model: shown only a question's supporting paragraphs (no search, no
distractors), does it answer? One call per question, one JSON answer, scored by MuSiQue's exact
match and F1 against the gold answer and its aliases. What a verified run can reach with that
model is bounded by this: a model that cannot read a chain it is shown will not carry one it has
to find (issue 24).

    .venv/bin/python benchmarks/oracle_reader.py --model llamacpp/qwen2.5-coder-0.5b [--limit 15]
    .venv/bin/python benchmarks/oracle_reader.py --model openai/qwen --base-url http://127.0.0.1:8000/v1

``--dataset`` defaults to the tests' MuSiQue-Ans records (answerable only are read). Replies go
through the response cache like a run's (``--no-cache`` to ask again). The figure line is
printed last.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from vreact.metrics import best_em, best_f1
from vreact.model import GenerateSettings, ResponseCache, get_model, parse_json_object
from vreact.qa.dataset import Task, load_tasks

REPO = Path(__file__).resolve().parents[1]
ANS = REPO / "tests" / "data" / "musique" / "musique_ans_train_100.jsonl"

SYSTEM = (
    "You answer a question from the paragraphs given, which hold every fact you need. "
    'Reply with ONE JSON object: {"answer": "<the short answer, as written in a paragraph>"}'
)
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "maxLength": 120}},
    "required": ["answer"],
}


def messages(task: Task) -> list[dict[str, str]]:
    """The question's supporting paragraphs in hop order, then the question (short and
    prefix-stable: the instructions come first)."""
    support = [p for p in task.paragraphs if p.is_supporting]
    shown = "\n".join(f"[{p.idx}] {p.title}: {p.paragraph_text}" for p in support)
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Paragraphs:\n{shown}\n\nQuestion: {task.question}"},
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="provider/model, e.g. llamacpp/qwen2.5-coder-0.5b")
    parser.add_argument("--base-url", default=None, help="an OpenAI-compatible server (openai/ models)")
    parser.add_argument("--dataset", type=Path, default=ANS)
    parser.add_argument("--limit", type=int, default=15, help="answerable records read")
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--no-cache", action="store_true")
    args = parser.parse_args()
    options = {"base_url": args.base_url} if args.base_url else {}
    model = get_model(args.model, cache=None if args.no_cache else ResponseCache(), **options)
    tasks = [t for t in load_tasks(args.dataset) if t.answerable][: args.limit]
    settings = GenerateSettings(temperature=0.0, max_tokens=args.max_tokens, seed=0)
    em = f1 = 0.0
    unreadable = 0
    start = time.perf_counter()
    for t in tasks:
        reply = model.generate(messages(t), SCHEMA, settings).text
        parsed = parse_json_object(reply)
        answer = str(parsed.get("answer", "")) if isinstance(parsed, dict) else ""
        unreadable += not answer
        golds = [str(g) for g in t.golds]
        em += best_em(answer, golds)
        f1 += best_f1(answer, golds)
        print(json.dumps({"id": t.id, "answer": answer, "gold": str(t.answer), "em": best_em(answer, golds)}))
    wall = time.perf_counter() - start
    n = len(tasks)
    print(
        f"oracle reader {args.model}: EM {em / n:.3f} ({int(em)} of {n}), F1 {f1 / n:.3f},"
        f" {unreadable} unreadable replies, {wall:.1f} s"
    )


if __name__ == "__main__":
    main()
