"""Prompt-prefix reuse: the share of prompt tokens llama.cpp's server kept from its KV cache
(the prefix-match lines of its log) instead of evaluating them again, per configuration, on
real MuSiQue records at concurrency 1 with a fresh response cache, and where the rest goes.

    .venv/bin/python benchmarks/prefix_cache.py [--records 3] [--configs N,VG,dereact]
        [--checkout DIR] [--port 8791] [--server-cache]

It starts ``python -m llama_cpp.server --verbose true`` on the embedded SmolLM2-135M (alias
``smollm2``) and runs each configuration as its own ``vreact experiment`` with ``PYTHONPATH``
at ``--checkout`` (default: this checkout), so the same script measures another commit's
prompts (``--checkout /path/to/base``). llama-cpp-python's server holds one KV state: a call
reuses the longest common token prefix with the call before it, whatever its role; with
``--server-cache`` it also keeps earlier states in RAM (``--cache true``) and loads the best.

Per call the server logs ``Llama.generate: K prefix-match hit, remaining R prompt tokens to
eval`` (only when K > 0) and ``prompt eval time = ... / R tokens``; the calls line up with the
run's ``model_calls`` rows in order (one at a time), which name the role and the prompt's size.
The figure is printed last: reused prompt tokens / prompt tokens, per configuration.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DATASET = REPO / "tests" / "data" / "musique" / "musique_ans_train_100.jsonl"
#: the tuning set's first records (experiments/tuning.yaml): 2 and 3 hops
TASKS = [
    "2hop__150763_14904",
    "2hop__6584_6587",
    "3hop1__404363_705261_126049",
    "2hop__205146_62031",
    "3hop1__358656_182905_638959",
    "2hop__215852_404718",
]
CONFIGS = {
    "N": {"name": "N"},
    "VG": {"name": "VG", "guards": True, "gates": True},
    "dereact": {"name": "dereact", "critic": True, "context_manager": True, "budgets": {"r1": 1}},
}
HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")
EVAL = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")


def serve(port: int, log: Path, server_cache: bool) -> subprocess.Popen[bytes]:
    model = subprocess.run(
        [str(BIN / "vreact"), "models", "--path", "smollm2"], capture_output=True, text=True, check=True
    ).stdout.strip()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", model, "--n_ctx", "8192"]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--verbose", "true"]
    cmd += ["--cache", "true"] if server_cache else []
    proc = subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    for _ in range(120):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
            return proc
        except OSError:
            if proc.poll() is not None:
                sys.exit(f"the server exited; see {log}")
            time.sleep(1)
    proc.terminate()
    sys.exit(f"the server did not answer in 120 s; see {log}")


def run_config(config: dict, args: argparse.Namespace, work: Path) -> Path:
    """One configuration as its own experiment; returns its run folder."""
    experiment = {
        "kind": "experiment",
        "name": f"prefix-{config['name']}",
        "dataset": {"path": str(DATASET), "task_ids": TASKS[: args.records]},
        "configurations": [config],
        "models": {"default": "openai/smollm2"},
        "base_url": f"http://127.0.0.1:{args.port}/v1",
        "attempts": 1,
        "seed": 0,
        "concurrency": 1,
    }
    path = work / f"{config['name']}.yaml"
    path.write_text(json.dumps(experiment))  # YAML is a superset of JSON
    out = work / f"run-{config['name']}"
    env = {**os.environ, "PYTHONPATH": str(args.checkout), "VREACT_CACHE_DIR": str(work / "cache")}
    env.setdefault("OPENAI_API_KEY", "sk-local-not-a-key")
    done = subprocess.run(
        [sys.executable, "-m", "vreact.cli", "experiment", str(path), "--out", str(out)],
        env=env,
        capture_output=True,
        text=True,
        cwd=work,
    )
    if done.returncode != 0:
        sys.exit(f"{config['name']}: vreact experiment failed\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return out


def log_calls(text: str) -> list[tuple[int, int]]:
    """(reused, evaluated) prompt tokens of each generation in a stretch of the server's log."""
    calls, hit = [], 0
    for line in text.splitlines():
        if m := HIT.search(line):
            hit = int(m.group(1))
        elif (m := EVAL.search(line)) and "prompt eval" in line:
            calls.append((hit, int(m.group(1))))
            hit = 0
    return calls


def record_calls(out: Path) -> list[tuple[int, str, int]]:
    """(attempt, role, prompt tokens) of each answered model call of a run, in order."""
    db = sqlite3.connect(out / "vreact.db")
    rows = db.execute(
        "select attempt_id, role, prompt_tokens from model_calls"
        " where status = 'ok' and not coalesce(cached, 0) order by id"
    ).fetchall()
    db.close()
    return [(a, r, p) for a, r, p in rows]


def outcomes(out: Path) -> list[str]:
    """Each attempt's outcome (and answer), in task order: to see a prompt change answer alike."""
    db = sqlite3.connect(out / "vreact.db")
    rows = db.execute("select task_id, outcome, answer, abstain_level from attempts order by task_id")
    got = [f"{o}:{a!r}" if o == "answer" else f"{o}:{lvl}" for _, o, a, lvl in rows.fetchall()]
    db.close()
    return got


def profile(name: str, logged: list[tuple[int, int]], recorded: list[tuple[int, str, int]]) -> dict:
    """Per role: calls, prompt tokens, reused; and the evaluated tokens by what came before."""
    by_role: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    rest: dict[str, int] = defaultdict(int)
    aligned = len(logged) == len(recorded)
    prev: tuple[int, str] | None = None
    mismatched = 0  # calls whose logged size is not the recorded one (the alignment is off)
    for (reused, evaluated), (attempt, role, prompt) in zip(logged, recorded, strict=False):
        mismatched += prompt != reused + evaluated
        row = by_role[role]
        row[0] += 1
        row[1] += reused + evaluated
        row[2] += reused
        if prev is None or prev[0] != attempt:
            why = "first call of an attempt"
        elif prev[1] != role:
            why = f"after another role ({prev[1]} -> {role})"
        else:
            why = f"{role} after {role}"
        rest[why] += evaluated
        prev = (attempt, role)
    prompt = sum(r[1] for r in by_role.values())
    reused = sum(r[2] for r in by_role.values())
    return {
        "name": name,
        "calls": len(logged),
        "recorded": len(recorded),
        "aligned": aligned and not mismatched,
        "attempts": len({a for a, _, _ in recorded}),
        "prompt": prompt,
        "reused": reused,
        "roles": dict(by_role),
        "rest": dict(rest),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=3, help=f"MuSiQue-Ans records (at most {len(TASKS)})")
    ap.add_argument("--configs", default="N,VG,dereact", help=f"of {', '.join(CONFIGS)}")
    ap.add_argument("--checkout", type=Path, default=REPO, help="the vreact checkout to measure")
    ap.add_argument("--port", type=int, default=8791)
    ap.add_argument("--server-cache", action="store_true", help="llama.cpp's RAM prompt cache too")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="prefix-cache-"))
    log = work / "server.log"
    started = time.perf_counter()
    print(f"checkout {args.checkout}; {args.records} records; server log {log}", flush=True)
    server = serve(args.port, log, args.server_cache)
    results = []
    try:
        for name in args.configs.split(","):
            offset = log.stat().st_size
            t0 = time.perf_counter()
            out = run_config(CONFIGS[name], args, work)
            time.sleep(0.5)  # the server flushes its last lines
            with log.open("rb") as f:
                f.seek(offset)
                text = f.read().decode("utf-8", "replace")
            r = profile(name, log_calls(text), record_calls(out))
            r["seconds"] = time.perf_counter() - t0
            r["outcomes"] = outcomes(out)
            results.append(r)
            print(f"  {name}: {r['calls']} calls in {r['seconds']:.0f} s", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)

    print("\nper role: calls, prompt tokens, reused (share)")
    for r in results:
        for role, (calls, prompt, reused) in sorted(r["roles"].items()):
            share = reused / max(prompt, 1)
            print(f"  {r['name']:<8} {role:<16} {calls:>4} {prompt:>8} {reused:>8} ({share:.2f})")
    print("outcomes by task")
    for r in results:
        print(f"  {r['name']:<8} " + "; ".join(r["outcomes"]))
    print("where the evaluated (not reused) prompt tokens go")
    for r in results:
        left = r["prompt"] - r["reused"]
        for why, n in sorted(r["rest"].items(), key=lambda kv: -kv[1]):
            print(f"  {r['name']:<8} {why:<40} {n:>8} ({n / max(left, 1):.2f})")
    head = f"{'attempts':>8} {'calls':>6} {'prompt tok':>10} {'/attempt':>9} {'reused':>8} {'share':>6}"
    print(f"\n{'config':<8} {head}")
    for r in results:
        flag = (
            "" if r["aligned"] else f"  (log {r['calls']} vs records {r['recorded']} calls, or sizes differ)"
        )
        per = r["prompt"] / max(r["attempts"], 1)
        print(
            f"{r['name']:<8} {r['attempts']:>8} {r['calls']:>6} {r['prompt']:>10} {per:>9.0f} "
            f"{r['reused']:>8} {r['reused'] / max(r['prompt'], 1):>6.2f}{flag}"
        )
    print(f"({time.perf_counter() - started:.0f} s)")
    shares = ", ".join(f"{r['name']} {r['reused'] / max(r['prompt'], 1):.2f}" for r in results)
    print(f"prompt tokens reused from llama.cpp's KV cache: {shares}")


if __name__ == "__main__":
    main()
