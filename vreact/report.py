"""Reports from the records: execution accounting, cost, and rejections and corrections by
source. Everything is computed from ``vreact.db``, so any run can be reported again."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any

from vreact.memory import Store
from vreact.metrics import best_em, best_f1

LEVELS = ("L1", "L2", "L3", "declined", "cap")
SOURCES = ("gate", "judge", "guard")


def latest_run(store: Store) -> int | None:
    row = next(store.query("select max(id) as id from runs"), None)
    return row["id"] if row else None


def _mean(total: float, n: int) -> float | None:
    return round(total / n, 3) if n else None


def corrections(verdicts: list[dict[str, Any]]) -> Counter[str]:
    """Corrections in one attempt, by source of the last rejection before the accept.

    A component's artifact counts when it is finally accepted by all of its verifiers after
    one or more rejections, and differs from every rejected artifact; once per component.
    """
    out: Counter[str] = Counter()
    by_component: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for v in sorted(verdicts, key=lambda v: v["seq"]):
        by_component[v["component"]].append(v)
    for vs in by_component.values():
        last = vs[-1]
        rejected = [v for v in vs if v["decision"] == "reject"]
        if last["decision"] != "accept" or not rejected:
            continue
        final = last["artifact_hash"]
        if any(v["artifact_hash"] == final for v in rejected):
            continue
        first_accept = next(i for i, v in enumerate(vs) if v["artifact_hash"] == final)
        before = [v for v in vs[:first_accept] if v["decision"] == "reject"]
        if before:
            out[before[-1]["source"]] += 1
    return out


def compute(store: Store, run_id: int | None = None) -> dict[str, Any]:
    """The report of one run (the latest by default) as plain data."""
    run_id = run_id or latest_run(store)
    if run_id is None:
        return {"run": None, "configs": {}}
    tasks = {t["id"]: t for t in store.query("select * from tasks")}
    attempts = list(
        store.query("select * from attempts where run_id = ? and outcome != 'running' order by id", [run_id])
    )
    calls: dict[int, list[dict[str, Any]]] = defaultdict(list)
    verdicts: dict[int, list[dict[str, Any]]] = defaultdict(list)
    ids = [a["id"] for a in attempts]
    if ids:
        marks = ",".join("?" * len(ids))
        for c in store.query(f"select * from model_calls where attempt_id in ({marks})", ids):
            calls[c["attempt_id"]].append(c)
        for v in store.query(f"select * from verdicts where attempt_id in ({marks})", ids):
            verdicts[v["attempt_id"]].append(v)
    configs: dict[str, Any] = {}
    for name in dict.fromkeys(a["config"] for a in attempts):
        configs[name] = _config_report([a for a in attempts if a["config"] == name], tasks, calls, verdicts)
    return {"run": run_id, "configs": configs}


def _config_report(
    attempts: list[dict[str, Any]],
    tasks: dict[str, Any],
    calls: dict[int, list[dict[str, Any]]],
    verdicts: dict[int, list[dict[str, Any]]],
) -> dict[str, Any]:
    c: Counter[str] = Counter()
    by_level = dict.fromkeys(LEVELS, 0)
    em = f1 = 0.0
    n_answerable = 0
    cost: Counter[str] = Counter()
    rejections: Counter[str] = Counter()
    corrected: Counter[str] = Counter()
    for a in attempts:
        task = tasks[a["task_id"]]
        c["executed"] += 1
        if a["outcome"] == "crash":
            c["crash"] += 1
            continue
        answerable = bool(task["answerable"])
        golds = [task["answer"], *json.loads(task["aliases"] or "[]")]
        if a["outcome"] == "answer":
            c["answered"] += 1
            right = answerable and best_em(a["answer"] or "", golds) == 1.0
            c["correct_answer" if right else "silent_error"] += 1
            if answerable:
                em += best_em(a["answer"] or "", golds)
                f1 += best_f1(a["answer"] or "", golds)
        else:
            c["abstained"] += 1
            by_level[a["abstain_level"]] = by_level.get(a["abstain_level"], 0) + 1
            if answerable:
                c["false_abstention"] += 1
            else:
                c["correct_abstention"] += 1
        n_answerable += answerable
        for call in calls[a["id"]]:
            cost["llm_calls"] += 1
            cost["exec_steps"] += call["role"] == "executor" and call["status"] == "ok"
            cost["prompt_tokens"] += call["prompt_tokens"] or 0
            cost["completion_tokens"] += call["completion_tokens"] or 0
        vs = verdicts[a["id"]]
        seen = {
            (v["component"], v["level"], v["source"], v["verifier"], v["artifact_hash"], v["cause"])
            for v in vs
            if v["decision"] == "reject"
        }
        rejections.update(s[2] for s in seen)
        corrected.update(corrections(vs))
    scoreable = c["executed"] - c["crash"]
    return {
        "executed": c["executed"],
        "crash": c["crash"],
        "scoreable": scoreable,
        "answered": c["answered"],
        "abstained": c["abstained"],
        "correct": c["correct_answer"] + c["correct_abstention"],
        "silent_error": c["silent_error"],
        "false_abstention": c["false_abstention"],
        "abstained_by_level": by_level,
        "coverage": _mean(c["answered"], scoreable),
        "selective_accuracy": _mean(c["correct_answer"], c["answered"]),
        "em": _mean(em, n_answerable),
        "f1": _mean(f1, n_answerable),
        **{
            k: _mean(cost[k], scoreable)
            for k in ("llm_calls", "exec_steps", "prompt_tokens", "completion_tokens")
        },
        "rejections": {s: rejections[s] for s in SOURCES},
        "corrections": {s: corrected[s] for s in SOURCES},
    }


def render(report: dict[str, Any]) -> list[Any]:
    """The report as rich tables that fit 80 columns: accounting, quality, cost, attribution."""
    from rich import box
    from rich.table import Table

    def fmt(x: Any) -> str:
        return "-" if x is None else f"{x:.2f}" if isinstance(x, float) else str(x)

    def table(title: str, *cols: str) -> Table:
        t = Table(
            title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0)
        )
        for col in cols:
            t.add_column(col, justify="left" if col == "config" else "right")
        return t

    acct = table(
        f"Execution accounting (run {report['run']})",
        "config",
        "exec",
        "score",
        "crash",
        "answer",
        "abstain",
        *LEVELS,
    )
    quality = table(
        "Outcomes", "config", "correct", "silent err", "false abst", "coverage", "sel acc", "EM", "F1"
    )
    cost = table(
        "Cost per scoreable attempt (means)", "config", "LLM calls", "exec steps", "prompt tok", "compl tok"
    )
    attr = table(
        "Rejections and corrections by source",
        "config",
        *(f"rej {s}" for s in SOURCES),
        *(f"corr {s}" for s in SOURCES),
    )
    for name, r in report["configs"].items():
        acct.add_row(
            name,
            *map(
                fmt,
                (
                    r["executed"],
                    r["scoreable"],
                    r["crash"],
                    r["answered"],
                    r["abstained"],
                    *r["abstained_by_level"].values(),
                ),
            ),
        )
        quality.add_row(
            name,
            *map(
                fmt,
                (
                    r["correct"],
                    r["silent_error"],
                    r["false_abstention"],
                    r["coverage"],
                    r["selective_accuracy"],
                    r["em"],
                    r["f1"],
                ),
            ),
        )
        cost.add_row(
            name, *map(fmt, (r["llm_calls"], r["exec_steps"], r["prompt_tokens"], r["completion_tokens"]))
        )
        attr.add_row(
            name, *map(fmt, (*(r["rejections"][s] for s in SOURCES), *(r["corrections"][s] for s in SOURCES)))
        )
    return [acct, quality, cost, attr]
