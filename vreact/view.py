"""A run as one self-contained HTML file: ``vreact view DIR`` writes ``DIR/report.html``.

The page works offline (inline CSS, inline SVG charts, a few lines of vanilla JS). It shows
the report tables of :func:`vreact.report.compute`, two charts (outcomes per configuration
and risk against coverage), a list of every attempt and one page per attempt (``#attempt-ID``)
that draws the V: specification levels descending on the left, their verifiers ascending on
the right, each recorded verdict placed at its level in order, tries and retries shown.
Every string that comes from the records is HTML-escaped: answers come from models.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterable
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from vreact.records import DB_NAME, Store
from vreact.report import LEVELS, SOURCES, VERIFIED_LEVELS, compute

HTML_NAME = "report.html"
#: One colour per configuration, in report order (repeats after eight).
PALETTE = ("#2563eb", "#d97706", "#059669", "#9333ea", "#dc2626", "#0891b2", "#65a30d", "#db2777")
#: The four parts of an outcome bar: (key, label, colour); they sum to ``executed``.
OUTCOME_PARTS = (
    ("right", "correct answer", "#1a7f37"),
    ("silent_error", "silent error", "#cf222e"),
    ("abstained", "abstained", "#bf8700"),
    ("crash", "crash", "#6e7781"),
)
#: The V: (specification level, its title, the verifier it pairs with, that verifier's title).
V_ROWS = (
    ("L1", "Requirements", "R3", "Acceptance"),
    ("L2", "Plan", "R2", "Integration · plan verifier"),
    ("L3", "Step design", "R1", "Unit · guards"),
)
MAX_TEXT = 600  # characters of any one record string shown on the page


def h(x: Any) -> str:
    """Any value as escaped HTML text ("" for None)."""
    return "" if x is None else escape(str(x), quote=True)


def clip(x: Any, n: int = MAX_TEXT) -> str:
    s = "" if x is None else str(x)
    return s if len(s) <= n else s[: n - 1] + "…"


#: Figures that are means of counts (one decimal); other fractions are rates (three).
MEANS = (
    "llm_calls",
    "exec_steps",
    "prompt_tokens",
    "completion_tokens",
    "retries",
    "mean",
    "median",
    "p90",
    "p95",
)


def fmt(x: Any, key: str = "") -> str:
    """A report figure as table text (``key``, its dotted name, picks the decimals)."""
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        if "usd" in key:
            return f"{x:.4f}"
        last = key.rsplit(".", 1)[-1].removesuffix("_per_attempt")
        return f"{x:.1f}" if last in MEANS else f"{x:.3f}"
    return str(x)


def _asset(name: str) -> str:
    return resources.files("vreact").joinpath("_view", name).read_text(encoding="utf-8")


# --- records ----------------------------------------------------------------------------------


def _load(store: Store, run_id: int) -> dict[str, Any]:
    run = next(store.query("select * from runs where id = ?", [run_id]), {})
    attempts = list(
        store.query("select * from attempts where run_id = ? and outcome != 'running' order by id", [run_id])
    )
    sub = "(select id from attempts where run_id = ?)"
    verdicts: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for v in store.query(
        f"select * from verdicts where attempt_id in {sub} order by attempt_id, seq", [run_id]
    ):
        verdicts[v["attempt_id"]].append(v)
    calls: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for c in store.query(f"select * from model_calls where attempt_id in {sub} order by id", [run_id]):
        calls[c["attempt_id"]].append(c)
    steps: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for st in store.query(f"select * from steps where attempt_id in {sub} order by id", [run_id]):
        steps[st["attempt_id"]].append(st)
    ledger: dict[int, dict[str, Any]] = {}  # by verdict id
    for row in store.query(
        f"select verdict_id, level, component, artifact from ledger where attempt_id in {sub}", [run_id]
    ):
        ledger[row["verdict_id"]] = row
    task_ids = sorted({a["task_id"] for a in attempts})
    tasks: dict[str, dict[str, Any]] = {}
    for i in range(0, len(task_ids), 500):
        chunk = task_ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        tasks.update({t["id"]: t for t in store.query(f"select * from tasks where id in ({marks})", chunk)})
    try:
        config = json.loads(run.get("config_json") or "{}")
    except ValueError:
        config = {}
    return {
        "run": run,
        "config": config if isinstance(config, dict) else {},
        "attempts": attempts,
        "verdicts": verdicts,
        "calls": calls,
        "steps": steps,
        "ledger": ledger,
        "tasks": tasks,
    }


# --- summary ----------------------------------------------------------------------------------


def _dig(r: dict[str, Any], key: str) -> Any:
    for part in key.split("."):
        if not isinstance(r, dict):
            return None
        r = r.get(part)  # type: ignore[assignment]
    return r


def _table(title: str, note: str, head: list[str], rows: Iterable[str], cls: str = "") -> str:
    ths = "".join(
        f'<th scope="col"{" class=l" if c in ("config", "metric", "by", "a vs b") else ""}>{h(c)}</th>'
        for c in head
    )
    return (
        f'<section class="card tbl {cls}"><h3>{h(title)}</h3>'
        + (f'<p class="note">{h(note)}</p>' if note else "")
        + f'<div class="scroll"><table><thead><tr>{ths}</tr></thead><tbody>{"".join(rows)}</tbody>'
        "</table></div></section>"
    )


def _name_cell(name: str, colours: dict[str, str]) -> str:
    colour = colours.get(name, "#888")
    return f'<th scope="row"><span class="dot" style="background:{colour}"></span>{h(name)}</th>'


def _cells(name: str, r: dict[str, Any], keys: Iterable[str], prefix: str = "") -> str:
    out = []
    for key in keys:
        value = _dig(r, key)
        out.append(
            f'<td data-config="{h(name)}" data-key="{h(prefix + key)}" '
            f'data-value="{h(json.dumps(value))}">{h(fmt(value, key))}</td>'
        )
    return "".join(out)


def _summary_tables(report: dict[str, Any], colours: dict[str, str]) -> str:
    configs: dict[str, Any] = report["configs"]
    parts = []

    def simple(title: str, note: str, cols: list[tuple[str, str]], cls: str = "") -> None:
        rows = (
            f"<tr>{_name_cell(n, colours)}{_cells(n, r, [k for k, _ in cols])}</tr>"
            for n, r in configs.items()
        )
        parts.append(_table(title, note, ["config", *(c for _, c in cols)], rows, cls))

    simple(
        "Execution accounting",
        "Every attempt ends in exactly one outcome; abstentions by the level they named.",
        [
            ("executed", "executed"),
            ("scoreable", "scoreable"),
            ("crash", "crash"),
            ("answered", "answered"),
            ("abstained", "abstained"),
            *((f"abstained_by_level.{lv}", lv) for lv in LEVELS),
        ],
    )
    simple(
        "Outcomes and quality",
        "correct counts right answers and correct abstentions; coverage = answered / scoreable.",
        [
            ("correct", "correct"),
            ("silent_error", "silent error"),
            ("false_abstention", "false abst."),
            ("coverage", "coverage"),
            ("selective_accuracy", "sel. acc."),
            ("em", "EM"),
            ("f1", "F1"),
            ("support_f1", "support F1"),
            ("answerability.precision", "ans. P"),
            ("answerability.recall", "ans. R"),
            ("answerability.f1", "ans. F1"),
        ],
    )
    simple(
        "Cost",
        "Means per scoreable attempt; money and transport retries over all attempts.",
        [
            ("llm_calls", "LLM calls"),
            ("exec_steps", "exec steps"),
            ("prompt_tokens", "prompt tok"),
            ("completion_tokens", "compl tok"),
            ("cost_usd", "USD"),
            ("cost_usd_per_attempt", "USD / attempt"),
            ("retries", "retries"),
        ],
    )
    dist = [
        (n, r["cost_distribution"])
        for n, r in configs.items()
        if isinstance(r.get("cost_distribution"), dict)
    ]
    if dist:
        rows = []
        for n, d in dist:
            for metric, stats in d.items():
                if not isinstance(stats, dict):
                    continue
                cells = _cells(n, stats, ("mean", "median", "p90", "p95"), f"cost_distribution.{metric}.")
                rows.append(f"<tr>{_name_cell(n, colours)}<td class='l'>{h(metric)}</td>{cells}</tr>")
        parts.append(
            _table(
                "Cost distribution",
                "Per attempt.",
                ["config", "metric", "mean", "median", "p90", "p95"],
                rows,
            )
        )
    for group, keys, title, note in (
        (
            "by_source",
            SOURCES,
            "Attribution by source",
            "Rejections, corrections and correction rate per source; judges' model cost "
            "(gates and guards are free).",
        ),
        ("by_level", VERIFIED_LEVELS, "Attribution by level", "The level whose verifier decided."),
    ):
        rows = []
        for n, r in configs.items():
            a = r.get("attribution") or {}
            cells = "".join(
                _cells(
                    n,
                    (a.get(group) or {}).get(by) or {},
                    ("rejections", "corrections", "correction_rate"),
                    f"attribution.{group}.{by}.",
                )
                for by in keys
            )
            if group == "by_source":
                cells += _cells(
                    n,
                    (a.get("marginal_cost") or {}).get("judge") or {},
                    ("llm_calls", "prompt_tokens", "completion_tokens"),
                    "attribution.marginal_cost.judge.",
                )
            rows.append(f"<tr>{_name_cell(n, colours)}{cells}</tr>")
        groups = [
            (f'<span class="src-{by}">{by}</span>' if group == "by_source" else h(by), 3) for by in keys
        ]
        if group == "by_source":
            groups.append(("judge cost", 3))
        sub = ["rej", "corr", "rate"] * len(keys) + (
            ["calls", "p tok", "c tok"] if group == "by_source" else []
        )
        top = '<th rowspan="2" class="l">config</th>' + "".join(
            f'<th colspan="{span}" class="grp">{label}</th>' for label, span in groups
        )
        ths = "".join(
            f'<th scope="col"{" class=gs" if i % 3 == 0 else ""}>{c}</th>' for i, c in enumerate(sub)
        )
        parts.append(
            f'<section class="card tbl"><h3>{h(title)}</h3><p class="note">{h(note)}</p><div class="scroll">'
            f'<table class="grouped"><thead><tr>{top}</tr><tr>{ths}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody>"
            "</table></div></section>"
        )
    passes = [(n, r["pass"]) for n, r in configs.items() if isinstance(r.get("pass"), dict)]
    if passes:
        rows = [
            f"<tr>{_name_cell(n, colours)}"
            + _cells(n, p, ("k", "tasks", "pass@1", "pass@1_se", "pass@k", "pass@k_se"), "pass.")
            + "</tr>"
            for n, p in passes
        ]
        parts.append(_table("Pass@k", "", ["config", "k", "tasks", "pass@1", "± se", "pass@k", "± se"], rows))
    comparisons = report.get("comparisons")
    if isinstance(comparisons, list) and comparisons:
        ckeys = (
            "tasks",
            "k",
            "pass1_a",
            "pass1_b",
            "lift1",
            "p1",
            "passk_a",
            "passk_b",
            "liftk",
            "pk",
            "diff",
            "p_diff",
            "exact",
        )
        rows = []
        for i, c in enumerate(comparisons):
            if isinstance(c, dict):
                label = f"{c.get('a')} vs {c.get('b')}"
                rows.append(
                    f"<tr><th scope='row'>{h(label)}</th>{_cells(label, c, ckeys, f'comparisons.{i}.')}</tr>"
                )
        parts.append(
            _table(
                "Comparisons",
                "Paired on the same tasks: a against b.",
                [
                    "a vs b",
                    "tasks",
                    "k",
                    "pass@1 a",
                    "pass@1 b",
                    "lift",
                    "p",
                    "pass@k a",
                    "pass@k b",
                    "lift",
                    "p",
                    "diff",
                    "p diff",
                    "exact",
                ],
                rows,
                "wide",
            )
        )
    rows = []
    for n, r in configs.items():
        for hop, hr in (r.get("by_hops") or {}).items():
            rows.append(
                f"<tr>{_name_cell(n, colours)}<td>{h(hop)}</td>"
                + _cells(
                    n,
                    hr,
                    (
                        "scoreable",
                        "answered",
                        "abstained",
                        "correct",
                        "em",
                        "f1",
                        "support_f1",
                        "answerability.f1",
                    ),
                    f"by_hops.{hop}.",
                )
                + "</tr>"
            )
    if rows:
        parts.append(
            _table(
                "By hop count",
                "",
                [
                    "config",
                    "hops",
                    "scoreable",
                    "answered",
                    "abstained",
                    "correct",
                    "EM",
                    "F1",
                    "sup F1",
                    "ans F1",
                ],
                rows,
            )
        )
    return "".join(parts)


def _headline(data: dict[str, Any]) -> str:
    """The run at a glance: attempts by outcome, verdicts, rejections, model calls, tokens."""
    attempts = data["attempts"]
    outcomes = {o: sum(a["outcome"] == o for a in attempts) for o in ("answer", "abstain", "crash")}
    vs = [v for a in attempts for v in data["verdicts"][a["id"]]]
    calls = [c for a in attempts for c in data["calls"][a["id"]]]
    tokens = sum((c["prompt_tokens"] or 0) + (c["completion_tokens"] or 0) for c in calls)
    stats = (
        ("attempts", len(attempts), ""),
        ("answered", outcomes["answer"], "ok"),
        ("abstained", outcomes["abstain"], "warn"),
        ("crashed", outcomes["crash"], "grey"),
        ("verdicts", len(vs), ""),
        ("rejections", sum(v["decision"] == "reject" for v in vs), "bad"),
        ("model calls", len(calls), ""),
        ("tokens", f"{tokens:,}", ""),
    )
    return (
        '<div class="stats">'
        + "".join(
            f'<div class="stat {cls}"><b>{h(n)}</b><span>{h(label)}</span></div>' for label, n, cls in stats
        )
        + "</div>"
    )


# --- charts -----------------------------------------------------------------------------------


def outcome_parts(r: dict[str, Any]) -> dict[str, int]:
    """Correct answers, silent errors, abstentions and crashes: they sum to ``executed``."""
    return {
        "right": (r.get("answered") or 0) - (r.get("silent_error") or 0),
        "silent_error": r.get("silent_error") or 0,
        "abstained": r.get("abstained") or 0,
        "crash": r.get("crash") or 0,
    }


def _outcome_chart(configs: dict[str, Any]) -> str:
    label_w, bar_w, row_h, top = 70, 440, 36, 8
    height = top + row_h * len(configs) + 34
    out = [
        f'<svg class="chart" role="img" aria-label="Outcomes per configuration" '
        f'viewBox="0 0 {label_w + bar_w + 70} {height}" width="{label_w + bar_w + 70}" height="{height}">'
    ]
    for i, (name, r) in enumerate(configs.items()):
        y = top + i * row_h
        parts = outcome_parts(r)
        total = sum(parts.values()) or 1
        out.append(f'<text x="{label_w - 10}" y="{y + 17}" text-anchor="end" class="lbl">{h(name)}</text>')
        out.append(f'<rect x="{label_w}" y="{y}" width="{bar_w}" height="24" rx="3" fill="#eef1f4"/>')
        x = float(label_w)
        for key, label, colour in OUTCOME_PARTS:
            n = parts[key]
            if n <= 0:
                continue
            w = bar_w * n / total
            out.append(
                f'<rect class="seg" data-config="{h(name)}" data-part="{key}" data-count="{n}" x="{x:.1f}" '
                f'y="{y}" width="{w:.1f}" height="24" fill="{colour}">'
                f"<title>{h(name)}: {n} {label}</title></rect>"
            )
            if w >= 18:
                out.append(
                    f'<text x="{x + w / 2:.1f}" y="{y + 16}" text-anchor="middle" class="in">{n}</text>'
                )
            x += w
        out.append(f'<text x="{label_w + bar_w + 8}" y="{y + 17}" class="tot">{sum(parts.values())}</text>')
    ly = top + row_h * len(configs) + 14
    lx = label_w
    for _, label, colour in OUTCOME_PARTS:
        out.append(f'<rect x="{lx}" y="{ly - 9}" width="11" height="11" rx="2" fill="{colour}"/>')
        out.append(f'<text x="{lx + 16}" y="{ly}" class="leg">{h(label)}</text>')
        lx += 22 + 7 * len(label)
    out.append(f'<text x="{label_w + bar_w + 8}" y="{ly}" class="leg">total</text>')
    out.append("</svg>")
    return "".join(out)


def risk_points(r: dict[str, Any]) -> list[tuple[float, float]]:
    """(coverage, risk) points: the report's curve, else the configuration's one point."""
    curve = r.get("risk_coverage")
    if isinstance(curve, list) and curve:
        pts = [
            (float(p["coverage"]), float(p["risk"]))
            for p in curve
            if isinstance(p, dict) and p.get("coverage") is not None and p.get("risk") is not None
        ]
        return sorted(pts)
    if r.get("coverage") is not None and r.get("selective_accuracy") is not None:
        return [(float(r["coverage"]), round(1 - float(r["selective_accuracy"]), 3))]
    return []


def _risk_chart(configs: dict[str, Any], colours: dict[str, str]) -> str:
    left, top, w, hgt = 46, 12, 320, 220
    out = [
        f'<svg class="chart" role="img" aria-label="Risk against coverage" viewBox="0 0 {left + w + 150} '
        f'{top + hgt + 44}" width="{left + w + 150}" height="{top + hgt + 44}">'
    ]
    for i in range(5):
        t = i / 4
        x, y = left + w * t, top + hgt * (1 - t)
        out.append(f'<line x1="{left}" x2="{left + w}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
        out.append(f'<line y1="{top}" y2="{top + hgt}" x1="{x:.1f}" x2="{x:.1f}" class="grid"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">{t:g}</text>')
        out.append(f'<text x="{x:.1f}" y="{top + hgt + 16}" text-anchor="middle" class="tick">{t:g}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{w}" height="{hgt}" class="frame"/>')
    out.append(
        f'<text x="{left + w / 2}" y="{top + hgt + 36}" text-anchor="middle" class="axis">coverage</text>'
    )
    out.append(
        f'<text transform="translate(12 {top + hgt / 2}) rotate(-90)" text-anchor="middle" class="axis">'
        "risk (error rate among answered)</text>"
    )
    ly = top + 10
    for name, r in configs.items():
        colour = colours[name]
        pts = risk_points(r)
        xy = [(left + w * c, top + hgt * (1 - rk)) for c, rk in pts]
        if len(xy) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for (x, y), (c, rk) in zip(xy, pts, strict=True):
            out.append(
                f'<circle class="pt" data-config="{h(name)}" cx="{x:.1f}" cy="{y:.1f}" '
                f'r="{5 if len(xy) == 1 else 3}" '
                f'fill="{colour}"><title>{h(name)}: coverage {c:.3f}, risk {rk:.3f}</title></circle>'
            )
        out.append(f'<rect x="{left + w + 16}" y="{ly - 9}" width="11" height="11" rx="6" fill="{colour}"/>')
        label = name if pts else f"{name}: no answers"
        out.append(f'<text x="{left + w + 32}" y="{ly}" class="leg">{h(label)}</text>')
        ly += 18
    out.append("</svg>")
    return "".join(out)


# --- attempts ---------------------------------------------------------------------------------


def _outcome_badge(a: dict[str, Any]) -> str:
    o = a["outcome"]
    label = {"answer": "answer", "abstain": "abstain", "crash": "crash"}.get(o, o)
    return f'<span class="badge o-{h(o)}">{h(label)}</span>'


def _level_badge(level: Any) -> str:
    if not level:
        return ""
    return f'<span class="badge lvl lvl-{h(level)}">{h(level)}</span>'


def _attempt_list(data: dict[str, Any]) -> str:
    rows = []
    for a in data["attempts"]:
        vs = data["verdicts"][a["id"]]
        rej = sum(v["decision"] == "reject" for v in vs)
        calls = data["calls"][a["id"]]
        tokens = sum((c["prompt_tokens"] or 0) + (c["completion_tokens"] or 0) for c in calls)
        if a["outcome"] == "answer":
            what = f'<span class="ans">{h(clip(a["answer"], 90))}</span>'
        elif a["outcome"] == "abstain":
            what = f'<span class="muted">{h(clip(a["abstain_cause"], 90))}</span>'
        else:
            what = f'<span class="err">{h(clip(a["error"], 90))}</span>'
        link = f'href="#attempt-{a["id"]}"'
        rows.append(
            f'<tr class="arow" data-config="{h(a["config"])}" data-outcome="{h(a["outcome"])}" '
            f'data-level="{h(a["abstain_level"] or "")}">'
            f"<td><a {link}>{a['id']}</a></td><td>{h(a['config'])}</td>"
            f'<td class="l"><a {link} class="tid">{h(a["task_id"])}</a></td><td>{a["attempt_index"]}</td>'
            f"<td>{_outcome_badge(a)}</td><td>{_level_badge(a['abstain_level'])}</td>"
            f'<td class="l what">{what}</td>'
            f"<td>{len(vs)}{f' <span class=rejn>{rej}✗</span>' if rej else ''}</td>"
            f"<td>{len(calls)}</td><td>{tokens}</td></tr>"
        )
    configs = sorted(
        {a["config"] for a in data["attempts"]}, key=[a["config"] for a in data["attempts"]].index
    )
    opts = "".join(f'<option value="{h(c)}">{h(c)}</option>' for c in configs)
    left = ("id", "config", "task", "outcome", "level", "answer / cause / error")
    head = "".join(
        f'<th scope="col"{" class=l" if c in left else ""}>{c}</th>'
        for c in (
            "id",
            "config",
            "task",
            "k",
            "outcome",
            "level",
            "answer / cause / error",
            "verdicts",
            "calls",
            "tokens",
        )
    )
    return (
        '<section class="card" id="attempts"><div class="bar"><h2>Attempts</h2>'
        '<div class="filters"><select id="f-config" aria-label="configuration">'
        '<option value="">all configurations'
        f"</option>{opts}</select>"
        '<select id="f-outcome" aria-label="outcome"><option value="">all outcomes</option>'
        '<option value="answer">answer</option><option value="abstain">abstain</option>'
        '<option value="crash">crash</option></select>'
        '<input id="f-text" type="search" placeholder="filter by task, answer, cause…" '
        'aria-label="text filter">'
        f'<span id="f-count" class="muted">{len(rows)} attempts</span></div></div>'
        f'<div class="scroll"><table class="attempts"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def tries(verdicts: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """One component's verdicts (in seq order) split into tries: a reject followed by more
    verdicts on the same component starts a retry."""
    out: list[list[dict[str, Any]]] = [[]]
    for v in verdicts:
        if out[-1] and out[-1][-1]["decision"] == "reject":
            out.append([])
        out[-1].append(v)
    return [t for t in out if t]


def _verdict(v: dict[str, Any]) -> str:
    reject = v["decision"] == "reject"
    tip = ""
    if reject or v["detail"]:
        tip = " · ".join(
            x
            for x in (
                f"#{v['seq']} {v['source']} {v['check_name']} ({v['verifier']})",
                v["decision"],
                v["cause"] or "",
                clip(v["detail"], 400) if v["detail"] else "",
                f"budget left {v['budget_left']}" if v["budget_left"] is not None else "",
            )
            if x
        )
    title = f' title="{h(tip)}"' if tip else ""
    body = (
        f'<span class="seq">#{v["seq"]}</span><span class="src">{h(v["source"])}</span>'
        f'<span class="vn">{h(v["check_name"])}</span>'
        f'<span class="dec">{"✗ reject" if reject else "✓"}</span>'
    )
    if reject:
        body += f'<span class="cause">{h(v["cause"])}</span>'
        if v["detail"]:
            body += f'<span class="detail">{h(clip(v["detail"], 140))}</span>'
        if v["budget_left"] is not None:
            body += f'<span class="budget">budget left {h(v["budget_left"])}</span>'
    return (
        f'<div class="verdict {"rej" if reject else "acc"} s-{h(v["source"])}" '
        f'data-attempt="{v["attempt_id"]}" '
        f'data-seq="{v["seq"]}" data-source="{h(v["source"])}" data-decision="{h(v["decision"])}" '
        f'data-level="{h(v["level"])}"{title}>{body}</div>'
    )


def _artifact_text(artifact: Any) -> str:
    try:
        art = json.loads(artifact) if isinstance(artifact, str) else artifact
    except ValueError:
        return clip(artifact, 160)
    if isinstance(art, dict) and art.get("kind") == "answer":
        ev = ", ".join(map(str, art.get("evidence") or []))
        return clip(f"{art.get('answer')}" + (f"  [¶ {ev}]" if ev else ""), 160)
    if isinstance(art, dict) and art.get("kind") == "chain":
        steps = " → ".join(str(s[1]) for s in art.get("steps") or [] if isinstance(s, list) and len(s) > 1)
        return clip(f"chain: {steps}", 160)
    if isinstance(art, dict) and art.get("kind") == "plan":
        return ""
    return clip(json.dumps(art), 160)


def _component(name: str, vs: list[dict[str, Any]], ledger: dict[int, Any]) -> str:
    out = [f'<div class="comp"><div class="comp-h"><code>{h(name)}</code>']
    ts = tries(vs)
    if len(ts) > 1:
        out.append(f'<span class="retries">{len(ts) - 1} retr{"y" if len(ts) == 2 else "ies"}</span>')
    out.append("</div>")
    for i, t in enumerate(ts, 1):
        last = t[-1]
        state = "rej" if last["decision"] == "reject" else "acc"
        budget = t[0]["budget_left"]
        label = "try 1" if i == 1 else f"↻ retry {i - 1}"
        out.append(
            f'<div class="try t-{state}"><div class="try-h"><b>{label}</b>'
            + (f'<span class="muted">budget {h(budget)}</span>' if budget is not None else "")
            + '</div><div class="chips">'
        )
        fam = None
        for v in t:
            f = v["verifier"]
            if v["level"] == "L2" and f != fam:
                out.append(
                    f'<span class="fam">{"plan verifier" if f == "plan" else h(f) + " integration"}</span>'
                )
            fam = f
            out.append(_verdict(v))
        out.append("</div>")
        accepted = [ledger[v["id"]] for v in t if v["decision"] == "accept" and v["id"] in ledger]
        if state == "acc" and accepted:
            text = _artifact_text(accepted[-1]["artifact"])
            if text:
                out.append(f'<div class="accepted">accepted: {h(text)}</div>')
        out.append("</div>")
    out.append("</div>")
    return "".join(out)


def _plans(vs: list[dict[str, Any]], ledger: dict[int, Any]) -> list[list[dict[str, Any]]]:
    """The plans the plan verifier accepted, in order (p1, p2, ...)."""
    out = []
    seen = set()
    for v in vs:
        row = ledger.get(v["id"])
        if not row or row["component"] != "planner" or v["artifact_hash"] in seen:
            continue
        try:
            art = json.loads(row["artifact"])
        except (TypeError, ValueError):
            continue
        if isinstance(art, dict) and art.get("kind") == "plan":
            seen.add(v["artifact_hash"])
            subtasks = (art.get("plan") or {}).get("subtasks") or []
            out.append([s for s in subtasks if isinstance(s, dict)])
    return out


def _spec_box(
    level: str,
    a: dict[str, Any],
    task: dict[str, Any],
    vs: list[dict[str, Any]],
    plans: list[Any],
    cfg: dict[str, Any],
) -> str:
    if level == "L1":
        gold = task.get("answer")
        return (
            f'<p class="q clamp">{h(clip(task.get("question"), 400))}</p>'
            f'<p class="small">acceptable answer: <b>{h(clip(gold, 120))}</b>'
            f"{'' if task.get('answerable', 1) else ' <span class=badge>unanswerable</span>'}</p>"
        )
    if level == "L2":
        if not plans:
            text = "the question runs as one subtask" if not cfg.get("planner") else "no plan accepted"
            out = f'<p class="small muted">{h(text)}</p>'
        else:
            out = ""
            for i, subtasks in enumerate(plans[-2:], max(1, len(plans) - 1)):
                items = "".join(
                    f"<li><code>{h(s.get('id'))}</code> {h(clip(s.get('objective'), 120))}"
                    + (
                        f' <span class="muted">← {h(", ".join(map(str, s["depends_on"])))}</span>'
                        if s.get("depends_on")
                        else ""
                    )
                    + "</li>"
                    for s in subtasks[:8]
                )
                out += f'<div class="plan"><span class="muted small">plan p{i}</span><ol>{items}</ol></div>'
        if a.get("plan_fallback"):
            out += '<span class="badge warn">plan budget spent → single task</span>'
        return out
    steps = list(dict.fromkeys(v["component"] for v in vs if v["level"] == "L3"))
    if not steps:
        return '<p class="small muted">no step verdicts</p>'
    return (
        '<p class="small">subtask contracts checked by R1:</p><ul class="steps">'
        + "".join(f"<li><code>{h(s)}</code></li>" for s in steps[:12])
        + (f"<li class='muted'>… {len(steps) - 12} more</li>" if len(steps) > 12 else "")
        + "</ul>"
    )


def _vee(a: dict[str, Any], data: dict[str, Any], cfg: dict[str, Any]) -> str:
    vs = data["verdicts"][a["id"]]
    task = data["tasks"].get(a["task_id"], {})
    plans = _plans(vs, data["ledger"])
    calls = data["calls"][a["id"]]
    rows = []
    for i, (level, title, rname, rtitle) in enumerate(V_ROWS):
        here = [v for v in vs if v["level"] == level]
        named = a["outcome"] == "abstain" and a["abstain_level"] == level
        comps: dict[str, list[dict[str, Any]]] = {}
        for v in here:
            comps.setdefault(v["component"] or "?", []).append(v)
        right = "".join(_component(c, cv, data["ledger"]) for c, cv in comps.items())
        right = right or '<p class="small muted">no verdicts at this level</p>'
        flag = ""
        if named:
            flag = (
                f'<div class="abst-flag">abstained here · <code>{h(a["abstain_component"])}</code> · '
                f"{h(clip(a['abstain_cause'], 200))}</div>"
            )
        rows.append(
            f'<div class="vrow{" named" if named else ""}" data-level="{level}" style="--in:{i * 44}px">'
            f'<div class="spec"><div class="box-h"><span class="lv">{level}</span>{title}</div>'
            f"{_spec_box(level, a, task, vs, plans, cfg)}{flag}</div>"
            '<div class="link"><span></span></div>'
            f'<div class="verif"><div class="box-h"><span class="lv r">{rname}</span>{h(rtitle)}'
            f'<span class="count">{len(here)} verdict{"" if len(here) == 1 else "s"}</span></div>'
            f"{right}</div></div>"
        )
    roles: dict[str, int] = defaultdict(int)
    for c in calls:
        roles[c["role"]] += 1
    base = " · ".join(f"{h(r)} {n} call{'s' if n != 1 else ''}" for r, n in roles.items()) or "no model calls"
    badge = ""
    if a["outcome"] == "abstain" and a["abstain_level"] not in VERIFIED_LEVELS:
        badge = (
            f'<span class="badge lvl lvl-{h(a["abstain_level"])}">{h(a["abstain_level"])}</span> '
            f"<code>{h(a['abstain_component'])}</code> {h(clip(a['abstain_cause'], 200))}"
        )
    elif a["outcome"] == "crash":
        badge = '<span class="badge o-crash">crash</span>'
    return (
        '<div class="vee"><svg class="arms" viewBox="0 0 100 100" preserveAspectRatio="none" '
        'aria-hidden="true">'
        '<polyline points="1,0 50,100 99,0"/></svg>'
        + "".join(rows)
        + f'<div class="vbase"><div class="box-h">Execution</div><div class="small">{base}</div>'
        + (f'<div class="small">{badge}</div>' if badge else "")
        + "</div></div>"
    )


NO_VERDICT = '<span class="muted">no verdict</span>'


def _verdict_chip(v: dict[str, Any]) -> str:
    """A verdict named beside a try's steps (drawn in full, once, in the V)."""
    reject = v["decision"] == "reject"
    text = f"#{v['seq']} {v['source']} {v['check_name']} " + (f"✗ {v['cause']}" if reject else "✓")
    return f'<span class="chip {"rej" if reject else "acc"}">{h(text)}</span> '


def _steps_card(a: dict[str, Any], data: dict[str, Any]) -> str:
    """Each executor try's steps (thought, action and input, what it observed) beside the
    verdicts that ended or judged that try."""
    steps = data["steps"].get(a["id"]) or []
    if not steps:
        return ""
    by_try: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for st in steps:
        by_try[(st["component"], st["try"])].append(st)
    verdicts = data["verdicts"][a["id"]]
    out = ['<div class="card"><h3>Steps</h3>']
    for (component, n), rows in by_try.items():
        mine = tries([v for v in verdicts if v["component"] == component])
        chips = "".join(_verdict_chip(v) for v in (mine[n - 1] if n - 1 < len(mine) else []))
        body = "".join(
            f"<tr><td>{st['step'] + 1}</td><td><code>{h(st['action'] or 'not a step')}</code> "
            f"{h(clip(st['input'], 120))}"
            + (
                f' <span class="muted">[¶ {h(", ".join(json.loads(st["evidence"] or "[]")))}]</span>'
                if st["evidence"] and st["evidence"] != "[]"
                else ""
            )
            + f'</td><td class="small">{h(clip(st["thought"], 200))}</td>'
            f'<td class="small"><pre class="obs">{h(clip(st["observation"], 600))}</pre></td></tr>'
            for st in rows
        )
        out.append(
            f'<div class="try-steps"><div class="try-h"><b><code>{h(component)}</code> try {n}</b></div>'
            f'<div class="steps-grid"><div class="chips">{chips or NO_VERDICT}</div>'
            '<table class="steps"><thead><tr><th>#</th><th>action</th>'
            f"<th>thought</th><th>observation</th></tr></thead><tbody>{body}</tbody></table></div></div>"
        )
    out.append("</div>")
    return "".join(out)


def _calls_table(calls: list[dict[str, Any]]) -> str:
    if not calls:
        return '<p class="muted small">No model calls.</p>'
    p = sum(c["prompt_tokens"] or 0 for c in calls)
    q = sum(c["completion_tokens"] or 0 for c in calls)
    rows = []
    for i, c in enumerate(calls, 1):
        status = c["status"] or ""
        err = f'<span class="err">{h(clip(c.get("error"), 160))}</span>' if c.get("error") else ""
        cost = c.get("cost_usd")
        rows.append(
            f'<tr class="call" data-role="{h(c["role"])}"><td>{i}</td>'
            f'<td class="l"><span class="role r-{h(c["role"])}">'
            f'{h(c["role"])}</span></td><td class="l muted">{h(c["model"])}</td>'
            f"<td>{h(c['prompt_tokens'])}</td><td>{h(c['completion_tokens'])}</td>"
            f"<td>{h(fmt(c.get('latency_ms')))}</td>"
            f'<td class="l"><span class="st-{h(status)}">{h(status)}</span>{" " + err if err else ""}</td>'
            f"<td>{h(c.get('retries') or 0)}</td><td>{'yes' if c.get('cached') else ''}</td>"
            f"<td>{h(fmt(cost, 'usd')) if cost is not None else ''}</td></tr>"
        )
    pills = "".join(
        f'<span class="cpill r-{h(c["role"])}{" bad" if c["status"] != "ok" else ""}" '
        f'title="#{i} {h(c["role"])} · {h(c["status"])} · {h(c["prompt_tokens"])} prompt + '
        f'{h(c["completion_tokens"])} completion tokens">{h((c["role"] or "?")[:1].upper())}'
        f"<small>{h(c['prompt_tokens'])}→{h(c['completion_tokens'])}</small></span>"
        for i, c in enumerate(calls, 1)
    )
    return (
        f'<p class="small">{len(calls)} calls · {p} prompt + {q} completion tokens · '
        '<span class="muted">P planner, E executor, J judge; prompt→completion tokens</span></p>'
        f'<div class="pills">{pills}</div>'
        '<details><summary>show calls</summary><div class="scroll"><table class="calls"><thead><tr>'
        + "".join(
            f"<th>{c}</th>"
            for c in ("#", "role", "model", "prompt", "compl", "ms", "status", "retries", "cached", "USD")
        )
        + f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div></details>"
    )


def _attempt_page(
    a: dict[str, Any],
    prev: int | None,
    nxt: int | None,
    data: dict[str, Any],
    cfgs: dict[str, Any],
) -> str:
    task = data["tasks"].get(a["task_id"], {})
    try:
        aliases = json.loads(task.get("aliases") or "[]")
    except ValueError:
        aliases = []
    if a["outcome"] == "answer":
        try:
            ev = json.loads(a["evidence"] or "[]")
        except ValueError:
            ev = []
        outcome = f'<p class="answer">{h(clip(a["answer"]))}</p>' + (
            f'<p class="small muted">evidence: ¶ {h(", ".join(map(str, ev)))}</p>' if ev else ""
        )
    elif a["outcome"] == "abstain":
        outcome = (
            f"<p>{_level_badge(a['abstain_level'])} <code>{h(a['abstain_component'])}</code></p>"
            f'<p class="small">{h(clip(a["abstain_cause"]))}</p>'
        )
    else:
        kind = a.get("crash_kind")
        outcome = (f'<p class="small">crash kind: <code>{h(kind)}</code></p>' if kind else "") + (
            f'<pre class="err">{h(a.get("traceback") or clip(a["error"], 2000))}</pre>'
        )
    nav = '<a href="#attempts" class="back">← all attempts</a>'
    nav += f' <a href="#attempt-{prev}">‹ previous</a>' if prev else ' <span class="muted">‹ previous</span>'
    nav += f' <a href="#attempt-{nxt}">next ›</a>' if nxt else ' <span class="muted">next ›</span>'
    hops = task.get("hops")
    return (
        f'<section class="attempt" id="attempt-{a["id"]}" data-attempt="{a["id"]}">'
        f'<div class="nav">{nav}</div>'
        f'<h2>Attempt {a["id"]} <span class="tag">{h(a["config"])}</span> {_outcome_badge(a)}'
        f"{_level_badge(a['abstain_level'])}</h2>"
        f'<p class="sub">task <code>{h(a["task_id"])}</code> · attempt index {a["attempt_index"]} · seed '
        f"{h(a['seed'])}{f' · {hops} hops' if hops else ''}</p>"
        '<div class="cards3">'
        f'<div class="card"><h4>Question</h4><p>{h(clip(task.get("question")))}</p></div>'
        f'<div class="card"><h4>Gold answer</h4><p class="answer">{h(clip(task.get("answer")))}</p>'
        + (
            f'<p class="small muted">also: {h(clip(", ".join(map(str, aliases)), 200))}</p>'
            if aliases
            else ""
        )
        + ("" if task.get("answerable", 1) else '<p><span class="badge warn">unanswerable</span></p>')
        + f'</div><div class="card out-{h(a["outcome"])}"><h4>Outcome</h4>{outcome}</div></div>'
        '<div class="card"><div class="bar"><h3>The V</h3><div class="legend small">'
        '<span class="verdict-key acc">✓ accept</span><span class="verdict-key rej">✗ reject</span>'
        '<span class="src-gate">gate</span><span class="src-judge">judge</span>'
        '<span class="src-guard">guard</span>'
        "<span class=muted>#n = order in the attempt</span></div></div>"
        f"{_vee(a, data, cfgs.get(a['config'], {}))}</div>"
        f"{_steps_card(a, data)}"
        f'<div class="card"><h3>Model calls</h3>{_calls_table(data["calls"][a["id"]])}</div>'
        "</section>"
    )


# --- the page ---------------------------------------------------------------------------------


def render_html(store: Store, run_id: int | None = None) -> str:
    """The whole page for one run (the latest by default)."""
    report = compute(store, run_id)
    rid = report["run"]
    data = (
        _load(store, rid)
        if rid is not None
        else {
            "run": {},
            "config": {},
            "attempts": [],
            "verdicts": defaultdict(list),
            "calls": defaultdict(list),
            "ledger": {},
            "tasks": {},
        }
    )
    configs: dict[str, Any] = report["configs"]
    # concurrent attempts start in any order: list them by configuration, task, attempt index
    order = {n: i for i, n in enumerate(configs)}
    first_seen = {t: i for i, t in enumerate(dict.fromkeys(a["task_id"] for a in data["attempts"]))}
    data["attempts"].sort(key=lambda a: (order[a["config"]], first_seen[a["task_id"]], a["attempt_index"]))
    colours = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(configs)}
    cfgs = {str(c.get("name")): c for c in data["config"].get("configs") or [] if isinstance(c, dict)}
    run = data["run"]
    started = run.get("started")
    meta = [
        f"model <b>{h(run.get('model') or '–')}</b>",
        f"dataset <b>{h(run.get('dataset') or '–')}</b>",
        f"status <b>{h(run.get('status') or '–')}</b>",
        f"{len(data['attempts'])} attempts",
    ]
    if started:
        meta.append(time.strftime("%Y-%m-%d %H:%M", time.localtime(started)))
        if run.get("finished"):
            meta.append(f"{run['finished'] - started:.0f} s")
    ids = [a["id"] for a in data["attempts"]]
    pages = "".join(
        _attempt_page(a, ids[i - 1] if i else None, ids[i + 1] if i + 1 < len(ids) else None, data, cfgs)
        for i, a in enumerate(data["attempts"])
    )
    if configs:
        charts = (
            '<div class="cards2">'
            f'<section class="card"><h3>Outcomes</h3><p class="note">Per configuration: correct answers '
            "(answered − silent errors), silent errors, abstentions and crashes; they sum to the attempts "
            f"executed.</p>{_outcome_chart(configs)}</section>"
            '<section class="card"><h3>Risk against coverage</h3><p class="note">Lower and further right is '
            "better. One point per configuration when the report has no curve.</p>"
            f"{_risk_chart(configs, colours)}</section></div>"
        )
        summary = _headline(data) + charts + _summary_tables(report, colours)
    else:
        summary = (
            '<section class="card"><p class="muted">This folder has no finished attempts yet.</p></section>'
        )
    title = f"vreact · run {rid}" if rid is not None else "vreact · no run"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{h(title)}</title><style>{_asset('style.css')}</style></head>"
        f'<body data-view="summary" data-run="{h(rid)}"><header class="top"><div class="wrap">'
        f'<a class="brand" href="#summary">vreact</a><span class="run">run {h(rid)}</span>'
        f'<span class="meta">{" · ".join(meta)}</span>'
        '<nav><a href="#summary">Summary</a><a href="#attempts">Attempts</a></nav></div></header>'
        f'<main class="wrap"><div id="main"><div id="summary">{summary}</div>{_attempt_list(data)}</div>'
        f"{pages}</main><script>{_asset('app.js')}</script></body></html>"
    )


def write_html(run_dir: Path, run_id: int | None = None, out: Path | None = None) -> Path:
    """Write the page of one run of ``run_dir/vreact.db`` to ``run_dir/report.html`` (or
    ``out``); return the path written."""
    run_dir = Path(run_dir)
    db = run_dir / DB_NAME
    if not db.is_file():
        raise FileNotFoundError(f"{run_dir}: no {DB_NAME} here; give a folder made by 'vreact run'")
    path = Path(out) if out is not None else run_dir / HTML_NAME
    text = render_html(Store(db), run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
