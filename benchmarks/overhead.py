"""Framework overhead per model call: vreact's configurations and two peer frameworks, each
driven by an instant scripted model over the same tasks (real MuSiQue-Full records shipped in
tests/data/musique/), no network.

    .venv/bin/python benchmarks/overhead.py [--rounds 5] [--tasks 80] [--attempts 3]
    .venv/bin/python benchmarks/overhead.py --compare ../base       # + NAME@before from a checkout
    .venv/bin/python benchmarks/overhead.py --profile VG-warm     # cProfile one contender

framework ms per model call = (wall of the run - time spent inside the model) / model calls
(the table's last column counts the process's CPU time instead of the wall clock: steadier on a
busy machine).

Contenders (one fresh subprocess each per round, the order rotating round by round):

- ``N``, ``VG``, ``VPGJ``: the shipped pilot configurations through ``run_experiment``, with the
  SQLite records and transcripts on, guards and the step pipeline as the configurations ship;
  the scripted model is handed to the runner bare (no retry layer, no cache).
- ``VG-cold``, ``VG-warm``: VG with the scripted model behind the real retry layer
  (``ResilientModel``) and the response cache, the path every real run takes: a cold cache,
  and a warm one (filled by an untimed run in another process first; no model is called).
- ``smolagents``: a ``ToolCallingAgent`` with a search tool; ``pydantic-ai``: an ``Agent`` with a
  search tool and a structured output. Both keep no records. They run in their own venv
  (benchmarks/peers/.venv, made from benchmarks/peers/requirements.txt on first use or with
  ``--setup``), so vreact's venv never gets them; ``--no-peers`` skips them.

The scripted models answer every request instantly with the same kind of steps: search with the
question's words, then finish with an answer from what the search returned (vreact's also
answers the planner with a one-subtask plan and a judge with an accept). vreact's is a pure
function of the request, so a warm cache answers every call.

Runs against any checkout on PYTHONPATH (it uses APIs the older ones have too), so the figure
before a change is measured with the same script. The figure line is printed last.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
FULL = REPO / "tests" / "data" / "musique" / "musique_full_train_80.jsonl"
PEERS = HERE / "peers"
PEERS_VENV = PEERS / ".venv"
PEERS_PYTHON = PEERS_VENV / "bin" / "python"

VREACT = ("N", "VG", "VPGJ", "VG-cold", "VG-warm")
PEER = ("smolagents", "pydantic-ai")
ANCHOR = "smolagents"

_HIT = re.compile(r"\[(\d+)\] ([^\n:]*): ([^\n]*)")
_WORD = re.compile(r"[a-z0-9]+")


# --- shared by every worker: the tasks and the scripted answers ----------------------------


def read_tasks(n: int) -> list[dict[str, Any]]:
    with FULL.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()][:n]


def keywords(question: str) -> str:
    return " ".join(question.rstrip("?").split()[:8])


def answer_from(observation: str, gold: str) -> tuple[str, list[str]]:
    """The finish the scripted models give: the gold answer when a hit holds it, else the
    first words of the first hit; citing up to two hits (the gold one first)."""
    hits = _HIT.findall(observation)
    if not hits:
        return "unknown", []
    holding = [h for h in hits if gold and gold.lower() in h[2].lower()]
    ids = [h[0] for h in holding] + [h[0] for h in hits if h not in holding]
    if holding:
        return gold, ids[:2]
    return " ".join(hits[0][2].split()[:2]), ids[:2]


# --- peers' search tool: the same shape of observation as vreact's ---------------------------


def peer_search(paragraphs: list[dict[str, Any]], query: str) -> str:
    q = set(_WORD.findall(query.lower()))
    scored = sorted(
        (
            (len(q & set(_WORD.findall((p["title"] + " " + p["paragraph_text"]).lower()))), p)
            for p in paragraphs
        ),
        key=lambda t: -t[0],
    )
    return "\n".join(
        f"[{p['idx']}] {p['title']}: {' '.join(p['paragraph_text'].split()[:60])}" for _, p in scored[:3]
    )


# --- vreact's worker ---------------------------------------------------------------------------


class ScriptedVreactModel:
    """The Model protocol, instant: the planner gets a one-subtask plan, a judge an accept, the
    executor a search and then a finish. A pure function of the request."""

    def __init__(self, tasks: list[dict[str, Any]]) -> None:
        self.name = "bench/scripted"
        self.endpoint = "bench"
        self.gold = {t["question"]: t["answer"] for t in tasks}
        self.seconds = 0.0  # spent inside generate
        self.calls = 0

    def generate(self, messages: Any, schema: Any = None, settings: Any = None) -> Any:
        t0 = time.perf_counter()
        try:
            return self._reply(messages, schema or {})
        finally:
            self.calls += 1
            self.seconds += time.perf_counter() - t0

    def _reply(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> Any:
        from vreact.model import Completion

        props = schema.get("properties", {})
        text = "\n".join(m["content"] for m in messages)
        question = next((q for q in self.gold if q in text), "")
        if "subtasks" in props:  # the planner
            out: dict[str, Any] = {
                "subtasks": [
                    {
                        "id": "s1",
                        "objective": question or "What is asked?",
                        "depends_on": [],
                        "answer_type": "any",
                    }
                ]
            }
        elif "confidence" in props:  # a judge
            out = {"reason": "the evidence states it", "decision": "accept", "confidence": 0.9}
        else:  # the executor
            last = messages[-1]["content"] if len(messages) > 2 else ""
            if "->" in last and _HIT.search(last):
                answer, ids = answer_from(last, self.gold.get(question, ""))
                out = {
                    "thought": "a paragraph states it",
                    "action": "finish",
                    "input": answer,
                    "evidence": ids,
                }
            else:
                out = {
                    "thought": "look it up",
                    "action": "search",
                    "input": keywords(question),
                    "evidence": [],
                }
        reply = json.dumps(out)
        return Completion(reply, prompt_tokens=len(text) // 4, completion_tokens=len(reply) // 4 + 1)


def vreact_worker(name: str, n_tasks: int, attempts: int, work: Path, cache: Path | None) -> dict[str, Any]:
    from vreact.experiment import ResolvedExperiment, run_experiment
    from vreact.model import CallPolicy, ResilientModel, ResponseCache

    try:
        from vreact.qa.dataset import load_tasks
    except ImportError:  # a checkout from before task families (--compare)
        from vreact.tasks.dataset import load_tasks  # type: ignore[no-redef]
    from vreact.spec import load_roles, load_spec, load_verifiers, resolve_configs

    tasks = load_tasks(FULL, n_tasks)
    scripted = ScriptedVreactModel([t.model_dump() for t in tasks])
    config = name.split("-")[0]
    model: Any = scripted
    if name != config:  # behind the retry layer and the response cache
        assert cache is not None
        model = ResilientModel(scripted, scripted.endpoint, CallPolicy(), ResponseCache(cache))
    experiment = ResolvedExperiment(
        tasks,
        resolve_configs(config),
        {"default": model},
        load_spec(),
        load_verifiers(),
        load_roles(),
        attempts=attempts,
        concurrency=1,
    )
    started, cpu = time.perf_counter(), time.process_time()
    run_experiment(experiment, work)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    db = sqlite3.connect(work / "vreact.db")
    calls = db.execute("select count(*) from model_calls").fetchone()[0]
    outcomes = dict(db.execute("select outcome, count(*) from attempts group by outcome").fetchall())
    verdicts = db.execute("select count(*) from verdicts").fetchone()[0]
    db.close()
    return {
        "wall": wall,
        "cpu": cpu,
        "model": scripted.seconds,
        "calls": calls,
        "inner_calls": scripted.calls,
        "attempts": len(tasks) * attempts,
        "detail": {"outcomes": outcomes, "verdicts": verdicts},
    }


def profiled(args: argparse.Namespace) -> dict[str, Any]:
    """A vreact worker whose attempts run under cProfile (they run in the runner's worker
    thread, which a profiler of the main thread does not see)."""
    import cProfile
    import pstats

    from vreact.experiment import runner

    profiles: list[cProfile.Profile] = []
    attempt = runner.run_attempt

    def run_attempt(*a: Any, **kw: Any) -> Any:
        prof = cProfile.Profile()
        profiles.append(prof)
        return prof.runcall(attempt, *a, **kw)

    runner.run_attempt = run_attempt  # type: ignore[assignment]
    result = vreact_worker(args.worker, args.tasks, args.attempts, args.work, args.cache)
    stats = pstats.Stats(profiles[0])
    for prof in profiles[1:]:
        stats.add(prof)
    stats.dump_stats(str(args.profile_out))
    return result


# --- the peers' workers (run in the peers' venv: they import nothing of vreact) ---------------


def smolagents_worker(n_tasks: int, attempts: int) -> dict[str, Any]:
    from smolagents import Tool, ToolCallingAgent
    from smolagents.models import (
        ChatMessage,
        ChatMessageToolCall,
        ChatMessageToolCallFunction,
        MessageRole,
        Model,
    )
    from smolagents.monitoring import LogLevel, TokenUsage

    spent = {"seconds": 0.0, "calls": 0}

    class Search(Tool):
        name = "search"
        description = "The 3 best-matching paragraphs as [id] title: snippet."
        inputs = {"query": {"type": "string", "description": "a few keywords"}}  # noqa: RUF012
        output_type = "string"

        def forward(self, query: str) -> str:
            return peer_search(self.paragraphs, query)

    class Scripted(Model):
        task: dict[str, Any] = {}  # noqa: RUF012  (set before each run)

        def generate(
            self,
            messages: Any,
            stop_sequences: Any = None,
            response_format: Any = None,
            tools_to_call_from: Any = None,
            **kwargs: Any,
        ) -> ChatMessage:
            t0 = time.perf_counter()
            observed = [m for m in messages if _role(m) == MessageRole.TOOL_RESPONSE]
            if observed:
                answer, _ = answer_from(_text(observed[-1]), self.task["answer"])
                call = ChatMessageToolCallFunction(name="final_answer", arguments={"answer": answer})
            else:
                call = ChatMessageToolCallFunction(
                    name="search", arguments={"query": keywords(self.task["question"])}
                )
            n = spent["calls"]
            out = ChatMessage(
                role=MessageRole.ASSISTANT,
                content="",
                tool_calls=[ChatMessageToolCall(function=call, id=f"call_{n}", type="function")],
                token_usage=TokenUsage(input_tokens=100, output_tokens=20),
            )
            spent["calls"] += 1
            spent["seconds"] += time.perf_counter() - t0
            return out

    def _role(m: Any) -> Any:
        return m["role"] if isinstance(m, dict) else m.role

    def _text(m: Any) -> str:
        content = m["content"] if isinstance(m, dict) else m.content
        if isinstance(content, list):
            return "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
        return str(content or "")

    search, model = Search(), Scripted(model_id="bench/scripted")
    agent = ToolCallingAgent(tools=[search], model=model, max_steps=4, verbosity_level=LogLevel.OFF)

    def run(task: dict[str, Any]) -> None:  # one agent, reset for each task (its usual use)
        search.paragraphs, model.task = task["paragraphs"], task
        agent.run(task["question"], reset=True)

    return drive(read_tasks(n_tasks), attempts, run, spent)


def drive(
    tasks: list[dict[str, Any]], attempts: int, run: Callable[[dict[str, Any]], None], spent: dict[str, Any]
) -> dict[str, Any]:
    """A peer's ``run`` on every task, ``attempts`` times: its wall and CPU time, and the time
    and calls its scripted model counted in ``spent``."""
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(attempts):
        for task in tasks:
            run(task)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "wall": wall,
        "cpu": cpu,
        "model": spent["seconds"],
        "calls": spent["calls"],
        "attempts": len(tasks) * attempts,
    }


def pydantic_ai_worker(n_tasks: int, attempts: int) -> dict[str, Any]:
    from pydantic import BaseModel
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    spent = {"seconds": 0.0, "calls": 0}

    class Answer(BaseModel):
        answer: str
        evidence: list[str]

    def reply(messages: list[Any], info: AgentInfo) -> ModelResponse:
        t0 = time.perf_counter()
        task = current["task"]
        returns = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
        if returns:
            answer, ids = answer_from(str(returns[-1].content), task["answer"])
            part = ToolCallPart(info.output_tools[0].name, {"answer": answer, "evidence": ids})
        else:
            part = ToolCallPart("search", {"query": keywords(task["question"])})
        out = ModelResponse(parts=[part])
        spent["calls"] += 1
        spent["seconds"] += time.perf_counter() - t0
        return out

    current: dict[str, Any] = {}
    agent = Agent(FunctionModel(reply), output_type=Answer)

    @agent.tool_plain
    def search(query: str) -> str:
        """The 3 best-matching paragraphs as [id] title: snippet."""
        return peer_search(current["task"]["paragraphs"], query)

    def run(task: dict[str, Any]) -> None:  # one agent for every task (its usual use)
        current["task"] = task
        agent.run_sync(task["question"])

    return drive(read_tasks(n_tasks), attempts, run, spent)


# --- the orchestrator ---------------------------------------------------------------------------


def setup_peers() -> None:
    """benchmarks/peers/.venv with the pinned peers (once; rerun with --setup to rebuild)."""
    if PEERS_VENV.exists():
        shutil.rmtree(PEERS_VENV)
    subprocess.run([sys.executable, "-m", "venv", str(PEERS_VENV)], check=True)
    pip = [str(PEERS_PYTHON), "-m", "pip", "install", "-q", "-r", str(PEERS / "requirements.txt")]
    subprocess.run(pip, check=True)


def run_worker(
    contender: str, args: argparse.Namespace, tmp: Path, profile: Path | None = None
) -> dict[str, Any]:
    """One timed run of one contender, in a fresh process. ``NAME@before`` runs NAME with the
    checkout given by ``--compare`` first on PYTHONPATH."""
    name, _, other = contender.partition("@")
    env = dict(os.environ)
    if other:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(args.compare), env.get("PYTHONPATH")]))
    work = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=tmp))
    cache = work / "cache"
    python = str(PEERS_PYTHON) if name in PEER else sys.executable
    script = str(Path(__file__).resolve())
    base = [python, script, "--tasks", str(args.tasks), "--attempts", str(args.attempts)]
    if name == "VG-warm":  # the cache is filled by an untimed run in another process
        prime = [*base, "--worker", "VG-cold", "--work", str(work / "prime"), "--cache", str(cache)]
        subprocess.run(prime, check=True, stdout=subprocess.DEVNULL, env=env)
    cmd = [*base, "--worker", name, "--work", str(work / "run"), "--cache", str(cache)]
    if profile is not None:
        cmd += ["--profile-out", str(profile)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    shutil.rmtree(work, ignore_errors=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def per_call_ms(r: dict[str, Any], clock: str = "wall") -> float:
    """Framework ms per model call; ``clock="cpu"`` counts the process's CPU time instead of
    the wall clock (steadier on a busy machine; the figure is the wall clock's)."""
    return (r[clock] - r["model"]) / max(r["calls"], 1) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tasks", type=int, default=80)
    ap.add_argument("--attempts", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated contenders (default: all)")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument(
        "--compare",
        type=Path,
        metavar="CHECKOUT",
        help="also run each vreact contender from this checkout (as NAME@before), interleaved",
    )
    ap.add_argument("--setup", action="store_true", help="(re)make the peers' venv and exit")
    ap.add_argument("--profile", metavar="CONTENDER", help="cProfile one run of a vreact contender")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--profile-out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        if args.worker == "smolagents":
            result = smolagents_worker(args.tasks, args.attempts)
        elif args.worker == "pydantic-ai":
            result = pydantic_ai_worker(args.tasks, args.attempts)
        elif args.profile_out:
            result = profiled(args)
        else:
            result = vreact_worker(args.worker, args.tasks, args.attempts, args.work, args.cache)
        print(json.dumps(result))
        return

    if args.setup:
        setup_peers()
        return

    tmp = Path(tempfile.mkdtemp(prefix="vreact-overhead-"))
    try:
        if args.profile:
            import pstats

            out = tmp / "profile.out"
            r = run_worker(args.profile, args, tmp, profile=out)
            pstats.Stats(str(out)).sort_stats("cumulative").print_stats(60)
            pstats.Stats(str(out)).sort_stats("tottime").print_stats(40)
            print(
                f"{args.profile}: {per_call_ms(r):.2f} ms per model call under cProfile ({r['calls']} calls)"
            )
            return
        names = [n.strip() for n in args.only.split(",") if n.strip()] or [*VREACT, *PEER]
        unknown = [n for n in names if n not in (*VREACT, *PEER)]
        if unknown:
            ap.error(f"unknown contender(s) {unknown}; known: {', '.join((*VREACT, *PEER))}")
        if args.no_peers:
            names = [n for n in names if n not in PEER]
        if args.compare:
            names += [f"{n}@before" for n in names if n in VREACT]
        if any(n in PEER for n in names) and not PEERS_PYTHON.exists():
            print("making the peers' venv (benchmarks/peers/.venv) ...", flush=True)
            setup_peers()
        checkout = next((p for p in sys.path if p and Path(p, "vreact", "__init__.py").is_file()), "")
        print(
            f"{args.tasks} tasks x {args.attempts} attempts per run, {args.rounds} interleaved rounds,"
            f" instant scripted models; vreact from {checkout or 'the installed package'}"
            + (f", NAME@before from {args.compare}" if args.compare else ""),
            flush=True,
        )
        results: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
        for r in range(args.rounds):
            order = names[r % len(names) :] + names[: r % len(names)]  # rotate: no contender always first
            for name in order:
                res = run_worker(name, args, tmp)
                results[name].append(res)
                print(
                    f"  round {r + 1} {name:<14} {per_call_ms(res):6.2f} ms/call  ({res['calls']} calls)",
                    flush=True,
                )
        report(results, args.rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def report(results: dict[str, list[dict[str, Any]]], rounds: int) -> None:
    print()
    print(f"{'contender':<14} {'calls':>6} {'min ms':>7} {'median ms':>9} {'x ' + ANCHOR:>14} {'cpu ms':>7}")
    medians = {n: statistics.median(per_call_ms(r) for r in rs) for n, rs in results.items()}
    anchor = medians.get(ANCHOR)
    for name, rs in results.items():
        ms = [per_call_ms(r) for r in rs]
        cpu = statistics.median(per_call_ms(r, "cpu") for r in rs)
        ratio = f"{medians[name] / anchor:.2f}" if anchor else "-"
        print(f"{name:<14} {rs[0]['calls']:>6} {min(ms):>7.2f} {medians[name]:>9.2f} {ratio:>14} {cpu:>7.2f}")
        detail = rs[0].get("detail")
        if detail:
            print(f"{'':<14} {detail}")
    figure = ", ".join(f"{n} {m:.2f}" for n, m in medians.items())
    ratios = ""
    if anchor:
        ratios = "; vs smolagents: " + ", ".join(
            f"{n} {medians[n] / anchor:.2f}x" for n in medians if n not in PEER
        )
    print(f"framework ms per model call (median of {rounds}): {figure}{ratios}")


if __name__ == "__main__":
    main()
