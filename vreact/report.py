"""Reports from the records: execution accounting, answer and support quality, answerability,
MuSiQue-Full group metrics, cost, and attribution (rejections, corrections and marginal cost by
source and level), overall and by hop count. Everything is computed from ``vreact.db``, so any
run can be reported again."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from vreact.metrics import GroupMember, answerability, best_em, best_f1, group_sufficiency, support_f1
from vreact.records import Store
from vreact.stats import compare, distribution, mean_se, pass_at_k, to_dict

LEVELS = ("L1", "L2", "L3", "declined", "cap")
SOURCES = ("gate", "judge", "guard")
#: The levels a verifier decides at (a verdict's ``level``).
VERIFIED_LEVELS = ("L1", "L2", "L3")
COST_FIELDS = ("llm_calls", "prompt_tokens", "completion_tokens")
#: Per-attempt figures reported with mean, median, P90 and P95 (USD over all attempts, the rest
#: over scoreable ones).
DISTRIBUTED = ("llm_calls", "exec_steps", "prompt_tokens", "completion_tokens", "cost_usd")


def latest_run(store: Store) -> int | None:
    row = next(store.query("select max(id) as id from runs"), None)
    return row["id"] if row else None


def _mean(total: float, n: int) -> float | None:
    return round(total / n, 3) if n else None


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def corrections(verdicts: list[dict[str, Any]]) -> Counter[tuple[str, str]]:
    """Corrections in one attempt, by (source, level) of the last rejection before the accept.

    A component's artifact counts when it is finally accepted by all of its verifiers after
    one or more rejections, and differs from every rejected artifact; once per component.
    """
    out: Counter[tuple[str, str]] = Counter()
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
            out[(before[-1]["source"], before[-1]["level"])] += 1
    return out


def _by(counts: Counter[tuple[str, str]], index: int, key: str) -> int:
    """Sum of (source, level) counts whose ``index``-th part is ``key``."""
    return sum(n for k, n in counts.items() if k[index] == key)


def compute(
    store: Store, run_id: int | None = None, baseline: str | None = None, iterations: int = 10_000
) -> dict[str, Any]:
    """The report of one run (the latest by default) as plain data. ``comparisons`` holds each
    configuration against ``baseline`` (default: the first): Pass@1 and Pass@k lifts, Diff, and
    their paired permutation tests over tasks with ``iterations``."""
    run_id = run_id or latest_run(store)
    if run_id is None:
        return {"run": None, "configs": {}, "comparisons": []}
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
    names = _config_order(store, run_id, attempts)
    for name in names:
        configs[name] = _config_report([a for a in attempts if a["config"] == name], tasks, calls, verdicts)
    if baseline is not None and baseline not in configs:
        raise ValueError(f"baseline {baseline!r} is not a configuration of run {run_id} ({', '.join(names)})")
    return {
        "run": run_id,
        "configs": configs,
        "comparisons": _comparisons(
            attempts, tasks, names, baseline or (names[0] if names else ""), iterations
        ),
    }


def _config_order(store: Store, run_id: int, attempts: list[dict[str, Any]]) -> list[str]:
    """The run's configurations in the order it named them (concurrent attempts finish in any
    order), then any others in the order of their first attempt."""
    row = next(store.query("select config_json from runs where id = ?", [run_id]), None)
    resolved = json.loads(row["config_json"] or "{}") if row else {}
    declared = [c.get("name") for c in resolved.get("configs", [])]
    present = dict.fromkeys(a["config"] for a in attempts)
    return [n for n in declared if n in present] + [n for n in present if n not in declared]


def success(attempt: dict[str, Any], task: dict[str, Any]) -> bool:
    """A correct outcome: the gold answer (exact match) to an answerable question, or an
    abstention on an unanswerable one. A crash is a failure."""
    if attempt["outcome"] == "answer":
        golds = [task["answer"], *json.loads(task["aliases"] or "[]")]
        return bool(task["answerable"]) and best_em(attempt["answer"] or "", golds) == 1.0
    return attempt["outcome"] == "abstain" and not task["answerable"]


def _successes(attempts: list[dict[str, Any]], tasks: dict[str, Any]) -> dict[str, list[bool]]:
    """Per task, the success of each attempt in attempt order."""
    out: dict[str, list[bool]] = defaultdict(list)
    for a in sorted(attempts, key=lambda a: (a["task_id"], a["attempt_index"])):
        out[a["task_id"]].append(success(a, tasks[a["task_id"]]))
    return out


def _pass(attempts: list[dict[str, Any]], tasks: dict[str, Any]) -> dict[str, Any] | None:
    """Pass@1 and Pass@k (k = the fewest attempts any task has) with standard errors over tasks."""
    per_task = _successes(attempts, tasks)
    if not per_task:
        return None
    k = min(len(v) for v in per_task.values())
    p1 = [sum(v) / len(v) for v in per_task.values()]
    pk = [pass_at_k(len(v), sum(v), k) for v in per_task.values()]
    (m1, se1), (mk, sek) = mean_se(p1), mean_se(pk)
    return {
        "k": k,
        "tasks": len(per_task),
        "pass@1": round(m1, 4),
        "pass@1_se": round(se1, 4),
        "pass@k": round(mk, 4),
        "pass@k_se": round(sek, 4),
    }


def _comparisons(
    attempts: list[dict[str, Any]], tasks: dict[str, Any], names: list[str], baseline: str, iterations: int
) -> list[dict[str, Any]]:
    """Each configuration against the baseline, over the tasks both ran, k = the fewest attempts."""
    by_config: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for a in attempts:
        by_config[a["config"]].append(a)
    if baseline not in by_config:
        return []
    base = _successes(by_config[baseline], tasks)
    out = []
    for name in names:
        if name == baseline:
            continue
        mine = _successes(by_config[name], tasks)
        shared = set(mine) & set(base)
        if not shared:
            continue
        k = min(len(v) for t in shared for v in (mine[t], base[t]))
        c = compare(mine, base, k, name, baseline, iterations=iterations)
        out.append({key: round(v, 4) if isinstance(v, float) else v for key, v in to_dict(c).items()})
    return out


def _hops(task: dict[str, Any]) -> int:
    return task["hops"] or 0


def _config_report(
    attempts: list[dict[str, Any]],
    tasks: dict[str, Any],
    calls: dict[int, list[dict[str, Any]]],
    verdicts: dict[int, list[dict[str, Any]]],
    split_hops: bool = True,
) -> dict[str, Any]:
    """The figures of one configuration; with ``split_hops``, the same figures per hop count."""
    c: Counter[str] = Counter()
    by_level = dict.fromkeys(LEVELS, 0)
    em = f1 = sup = 0.0
    n_answerable = 0
    cost: Counter[str] = Counter()
    judge: Counter[str] = Counter()
    spend: Counter[str] = Counter()
    money = 0.0
    rejections: Counter[tuple[str, str]] = Counter()  # by (source, level)
    corrected: Counter[tuple[str, str]] = Counter()
    answerable_preds: list[tuple[bool, bool]] = []  # (predicted answerable, answerable)
    members: list[GroupMember] = []
    per_attempt: dict[str, list[float]] = defaultdict(list)  # cost figures of each attempt
    answers: list[tuple[int, bool]] = []  # (rejections the attempt took, right) per answer
    for a in attempts:
        task = tasks[a["task_id"]]
        c["executed"] += 1
        c["plan_fallbacks"] += bool(a.get("plan_fallback"))
        attempt_money = 0.0
        for call in calls[a["id"]]:  # what was paid for, crashed attempts included
            spend["retries"] += call.get("retries") or 0
            if call.get("cost_usd") is not None:
                spend["priced_calls"] += 1
                attempt_money += call["cost_usd"]
        money += attempt_money
        per_attempt["cost_usd"].append(attempt_money)
        if a["outcome"] == "crash":
            c["crash"] += 1
            c["internal_errors"] += a.get("crash_kind") == "internal"
            continue
        answerable = bool(task["answerable"])
        answered = a["outcome"] == "answer"
        golds = [task["answer"], *json.loads(task["aliases"] or "[]")]
        # an abstention predicts no support, and unanswerable
        evidence = json.loads(a["evidence"] or "[]") if answered else []
        answer_f1 = best_f1(a["answer"] or "", golds) if answered else 0.0
        attempt_sup = support_f1(evidence, json.loads(task["support"] or "[]"))
        answerable_preds.append((answered, answerable))
        pair = (task.get("pair_id") or task["id"], a["attempt_index"])
        members.append(GroupMember(pair, answerable, answered, answer_f1, attempt_sup))
        if answered:
            c["answered"] += 1
            right = answerable and best_em(a["answer"] or "", golds) == 1.0
            c["correct_answer" if right else "silent_error"] += 1
            if answerable:
                em += best_em(a["answer"] or "", golds)
                f1 += answer_f1
        else:
            c["abstained"] += 1
            by_level[a["abstain_level"]] = by_level.get(a["abstain_level"], 0) + 1
            if answerable:
                c["false_abstention"] += 1
            else:
                c["correct_abstention"] += 1
        n_answerable += answerable
        sup += attempt_sup if answerable else 0.0
        mine: Counter[str] = Counter()
        for call in calls[a["id"]]:
            mine["llm_calls"] += 1
            mine["exec_steps"] += call["role"] == "executor" and call["status"] == "ok"
            mine["prompt_tokens"] += call["prompt_tokens"] or 0
            mine["completion_tokens"] += call["completion_tokens"] or 0
            if call["role"] == "judge":
                judge["llm_calls"] += 1
                judge["prompt_tokens"] += call["prompt_tokens"] or 0
                judge["completion_tokens"] += call["completion_tokens"] or 0
        cost.update(mine)
        for k in DISTRIBUTED[:-1]:
            per_attempt[k].append(mine[k])
        vs = verdicts[a["id"]]
        if answered:
            answers.append((sum(v["decision"] == "reject" for v in vs), success(a, task)))
        seen = {
            (v["component"], v["level"], v["source"], v["check_name"], v["artifact_hash"], v["cause"])
            for v in vs
            if v["decision"] == "reject"
        }
        rejections.update((s[2], s[1]) for s in seen)
        corrected.update(corrections(vs))
    scoreable = c["executed"] - c["crash"]
    groups = group_sufficiency(members)
    out = {
        "executed": c["executed"],
        "crash": c["crash"],
        "internal_errors": c["internal_errors"],  # crashes that are bugs in vreact, not failures
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
        "cost_usd": round(money, 6) if spend["priced_calls"] else None,
        "cost_usd_per_attempt": _mean(money, c["executed"]) if spend["priced_calls"] else None,
        "retries": spend["retries"],
        "rejections": {s: _by(rejections, 0, s) for s in SOURCES},
        "corrections": {s: _by(corrected, 0, s) for s in SOURCES},
        "support_f1": _mean(sup, n_answerable),
        "answerability": {k: _round(v) for k, v in answerability(answerable_preds).items()},
        "pairs": groups["pairs"],
        "group_answer_sufficiency_f1": _round(groups["group_answer_sufficiency_f1"]),
        "group_support_sufficiency_f1": _round(groups["group_support_sufficiency_f1"]),
        "plan_fallbacks": c["plan_fallbacks"] if any("plan_fallback" in a for a in attempts) else None,
        "attribution": _attribution(rejections, corrected, judge, scoreable),
        "pass": _pass(attempts, tasks),
        "cost_distribution": {
            k: distribution(per_attempt[k]) if k != "cost_usd" or spend["priced_calls"] else None
            for k in DISTRIBUTED
        },
        "risk_coverage": _risk_coverage(answers, scoreable),
    }
    if split_hops:
        out["by_hops"] = {
            str(h): _config_report(
                [a for a in attempts if _hops(tasks[a["task_id"]]) == h], tasks, calls, verdicts, False
            )
            for h in sorted({_hops(tasks[a["task_id"]]) for a in attempts})
        }
    return out


def _risk_coverage(answers: list[tuple[int, bool]], scoreable: int) -> list[dict[str, float]]:
    """The risk-coverage curve: answers ranked by how many rejections their attempt took (fewer
    first, the controller's own confidence); at each cut, the share of scoreable attempts
    answered (coverage) and the share of those answers that are wrong (risk)."""
    points = []
    for cut in sorted({n for n, _ in answers}):
        kept = [right for n, right in answers if n <= cut]
        points.append(
            {"coverage": round(len(kept) / scoreable, 4), "risk": round(1 - sum(kept) / len(kept), 4)}
        )
    return points


def _attribution(
    rejections: Counter[tuple[str, str]],
    corrected: Counter[tuple[str, str]],
    judge: Counter[str],
    scoreable: int,
) -> dict[str, Any]:
    """VReAct's Table 6: rejections, corrections and their rate by source and by level, and
    the marginal cost of each source (gates and guards make no model calls)."""

    def rates(index: int, key: str) -> dict[str, Any]:
        rej, corr = _by(rejections, index, key), _by(corrected, index, key)
        return {"rejections": rej, "corrections": corr, "correction_rate": _mean(corr, rej)}

    def marginal(counts: Counter[str]) -> dict[str, Any]:
        return {
            **{k: counts[k] for k in COST_FIELDS},
            **{f"{k}_per_attempt": _mean(counts[k], scoreable) for k in COST_FIELDS},
        }

    return {
        "by_source": {s: rates(0, s) for s in SOURCES},
        "by_level": {lv: rates(1, lv) for lv in VERIFIED_LEVELS},
        "marginal_cost": {s: marginal(judge if s == "judge" else Counter()) for s in SOURCES},
    }


@dataclass(frozen=True)
class TableData:
    """One table of the report, before it is drawn (rich on a terminal, or Markdown)."""

    title: str
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]


def fmt(x: Any) -> str:
    return "-" if x is None else f"{x:.2f}" if isinstance(x, float) else str(x)


def _pm(mean: float | None, se: float | None) -> str:
    return "-" if mean is None else f"{100 * mean:.1f} ± {100 * (se or 0):.1f}"


def _p(p: float | None) -> str:
    return "-" if p is None else f"{p:.3f}"


def tables(report: dict[str, Any]) -> list[TableData]:
    """The report's tables: accounting (VReAct Table 4), outcomes, Pass@k and lifts with paired
    permutation tests (DeReAct Tables 1, 11-18), support and answerability, cost means (VReAct
    Table 5) and distributions (DeReAct Tables 13, 20), attribution (VReAct Table 6), and the
    accounting and quality by hop count."""
    configs: dict[str, Any] = report["configs"]
    out = [
        TableData(
            f"Execution accounting (run {report['run']})",
            ("config", "exec", "score", "crash", "answer", "abstain", *LEVELS),
            [
                (
                    n,
                    r["executed"],
                    r["scoreable"],
                    r["crash"],
                    r["answered"],
                    r["abstained"],
                    *r["abstained_by_level"].values(),
                )
                for n, r in configs.items()
            ],
        ),
        TableData(
            "Outcomes",
            ("config", "correct", "silent err", "false abst", "coverage", "sel acc", "EM", "F1"),
            [
                (
                    n,
                    r["correct"],
                    r["silent_error"],
                    r["false_abstention"],
                    r["coverage"],
                    r["selective_accuracy"],
                    r["em"],
                    r["f1"],
                )
                for n, r in configs.items()
            ],
        ),
        TableData(
            "Pass@1 and Pass@k (%, mean ± standard error over tasks; success = a correct outcome)",
            ("config", "tasks", "k", "Pass@1", "Pass@k"),
            [
                (n, p["tasks"], p["k"], _pm(p["pass@1"], p["pass@1_se"]), _pm(p["pass@k"], p["pass@k_se"]))
                for n, r in configs.items()
                if (p := r.get("pass"))
            ],
        ),
    ]
    if report.get("comparisons"):
        out.append(
            TableData(
                "Lift over the baseline (points; p: two-sided paired permutation test over tasks)",
                ("config", "vs", "tasks", "k", "lift@1", "p", "lift@k", "p", "Diff", "p", "exact"),
                [
                    (
                        c["a"],
                        c["b"],
                        c["tasks"],
                        c["k"],
                        f"{100 * c['lift1']:+.1f}",
                        _p(c["p1"]),
                        f"{100 * c['liftk']:+.1f}",
                        _p(c["pk"]),
                        f"{100 * c['diff']:+.1f}",
                        _p(c["p_diff"]),
                        "yes" if c["exact"] else "no",
                    )
                    for c in report["comparisons"]
                ],
            )
        )
    out.append(
        TableData(
            "Support F1, answerability (positive = answerable), MuSiQue-Full pairs",
            ("config", "sup F1", "ans P", "ans R", "ans F1", "pairs", "grp ans F1", "grp sup F1", "plan fb"),
            [
                (
                    n,
                    r["support_f1"],
                    *r["answerability"].values(),
                    r["pairs"],
                    r["group_answer_sufficiency_f1"],
                    r["group_support_sufficiency_f1"],
                    r["plan_fallbacks"],
                )
                for n, r in configs.items()
            ],
        )
    )
    out.append(
        TableData(
            "Cost per scoreable attempt (means); money and retries over all attempts",
            ("config", "LLM calls", "exec steps", "prompt tok", "compl tok", "USD", "retries"),
            [
                (
                    n,
                    r["llm_calls"],
                    r["exec_steps"],
                    r["prompt_tokens"],
                    r["completion_tokens"],
                    r["cost_usd"],
                    r["retries"],
                )
                for n, r in configs.items()
            ],
        )
    )
    out.append(
        TableData(
            "Cost distribution per attempt (USD over all attempts, the rest over scoreable ones)",
            ("config", "figure", "mean", "median", "P90", "P95"),
            [
                (n, k, *d.values())
                for n, r in configs.items()
                for k, d in r.get("cost_distribution", {}).items()
                if d is not None
            ],
        )
    )
    attr = []
    for n, r in configs.items():
        a = r["attribution"]
        for by, figures in (*a["by_source"].items(), *a["by_level"].items()):
            m = a["marginal_cost"].get(by, {})
            attr.append(
                (
                    n,
                    by,
                    *(figures[k] for k in ("rejections", "corrections", "correction_rate")),
                    *(m.get(k) for k in COST_FIELDS),
                    *(m.get(f"{k}_per_attempt") for k in COST_FIELDS),
                )
            )
    out.append(
        TableData(
            "Attribution: by source and level; model calls and tokens, total and per attempt",
            (
                "config",
                "by",
                "rej",
                "corr",
                "rate",
                "calls",
                "p tok",
                "c tok",
                "calls/a",
                "p tok/a",
                "c tok/a",
            ),
            attr,
        )
    )
    out.append(
        TableData(
            "Execution accounting by hop count",
            ("config", "hops", "exec", "score", "crash", "answer", "abstain", *LEVELS),
            [
                (
                    n,
                    h,
                    hr["executed"],
                    hr["scoreable"],
                    hr["crash"],
                    hr["answered"],
                    hr["abstained"],
                    *hr["abstained_by_level"].values(),
                )
                for n, r in configs.items()
                for h, hr in r["by_hops"].items()
            ],
        )
    )
    out.append(
        TableData(
            "Quality by hop count",
            ("config", "hops", "correct", "Pass@1", "EM", "F1", "sup F1", "ans F1"),
            [
                (
                    n,
                    h,
                    hr["correct"],
                    hr["pass"]["pass@1"] if hr.get("pass") else None,
                    hr["em"],
                    hr["f1"],
                    hr["support_f1"],
                    hr["answerability"]["f1"],
                )
                for n, r in configs.items()
                for h, hr in r["by_hops"].items()
            ],
        )
    )
    return out


def render(report: dict[str, Any]) -> list[Any]:
    """The report as rich tables that fit 80 columns."""
    from rich import box
    from rich.table import Table

    out = []
    for t in tables(report):
        table = Table(
            title=t.title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0)
        )
        for col in t.columns:
            table.add_column(col, justify="left" if col in ("config", "by", "vs", "figure") else "right")
        for row in t.rows:
            table.add_row(*map(fmt, row))
        out.append(table)
    return out


def render_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown tables (for a paper draft, a pull request or a notebook)."""
    parts = [f"# vreact report, run {report['run']}"]
    for t in tables(report):
        parts.append(f"## {t.title}")
        parts.append("| " + " | ".join(t.columns) + " |")
        parts.append(
            "|" + "|".join("---" if c in ("config", "by", "vs", "figure") else "--:" for c in t.columns) + "|"
        )
        parts.extend("| " + " | ".join(fmt(x).replace("|", "\\|") for x in row) + " |" for row in t.rows)
        parts.append("")
    return "\n".join(parts)
