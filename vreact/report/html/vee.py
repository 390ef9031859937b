"""The V of one attempt: specification levels descending on the left, the verifiers they pair
with (vreact.v.PAIRS) ascending on the right, each recorded verdict at its level in order, tries
and retries shown, and the execution at the base."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from vreact.records import AttemptRecord, LedgerRecord, TaskRecord, VerdictRecord
from vreact.report.html._text import clip, h
from vreact.v import LEVELS, PAIRS


def tries(verdicts: list[VerdictRecord]) -> list[list[VerdictRecord]]:
    """One component's verdicts (in seq order) split into tries: a reject followed by more
    verdicts on the same component starts a retry."""
    out: list[list[VerdictRecord]] = [[]]
    for v in verdicts:
        if out[-1] and out[-1][-1].rejected:
            out.append([])
        out[-1].append(v)
    return [t for t in out if t]


def _verdict(v: VerdictRecord) -> str:
    reject = v.rejected
    tip = ""
    if reject or v.detail:
        tip = " · ".join(
            x
            for x in (
                f"#{v.seq} {v.source} {v.check_name} ({v.verifier})",
                v.decision,
                v.cause or "",
                clip(v.detail, 400) if v.detail else "",
                f"budget left {v.budget_left}" if v.budget_left is not None else "",
            )
            if x
        )
    title = f' title="{h(tip)}"' if tip else ""
    body = (
        f'<span class="seq">#{v.seq}</span><span class="src">{h(v.source)}</span>'
        f'<span class="vn">{h(v.check_name)}</span>'
        f'<span class="dec">{"✗ reject" if reject else "✓"}</span>'
    )
    if reject:
        body += f'<span class="cause">{h(v.cause)}</span>'
        if v.detail:
            body += f'<span class="detail">{h(clip(v.detail, 140))}</span>'
        if v.budget_left is not None:
            body += f'<span class="budget">budget left {h(v.budget_left)}</span>'
    return (
        f'<div class="verdict {"rej" if reject else "acc"} s-{h(v.source)}" data-attempt="{v.attempt_id}" '
        f'data-seq="{v.seq}" data-source="{h(v.source)}" data-decision="{h(v.decision)}" '
        f'data-level="{h(v.level)}"{title}>{body}</div>'
    )


def _artifact_text(art: Any) -> str:
    if isinstance(art, dict) and art.get("kind") == "answer":
        ev = ", ".join(map(str, art.get("evidence") or []))
        return clip(f"{art.get('answer')}" + (f"  [¶ {ev}]" if ev else ""), 160)
    if isinstance(art, dict) and art.get("kind") == "chain":
        steps = " → ".join(str(s[1]) for s in art.get("steps") or [] if isinstance(s, list) and len(s) > 1)
        return clip(f"chain: {steps}", 160)
    if isinstance(art, dict) and art.get("kind") == "plan":
        return ""
    return clip(json.dumps(art), 160)


def _by_verdict(ledger: list[LedgerRecord]) -> dict[int, LedgerRecord]:
    """Ledger rows by the accept verdict that let them through (rows no verifier accepted: none)."""
    return {row.verdict_id: row for row in ledger if row.verdict_id is not None}


def _try(i: int, t: list[VerdictRecord], ledger: dict[int, LedgerRecord]) -> str:
    state = "rej" if t[-1].rejected else "acc"
    budget = t[0].budget_left
    label = "try 1" if i == 1 else f"↻ retry {i - 1}"
    out = [
        f'<div class="try t-{state}"><div class="try-h"><b>{label}</b>'
        + (f'<span class="muted">budget {h(budget)}</span>' if budget is not None else "")
        + '</div><div class="chips">'
    ]
    previous = None  # the verifier of the verdict before: an L2 verifier's verdicts get its name first
    for v in t:
        if v.level == "L2" and v.verifier != previous:
            name = "plan verifier" if v.verifier == "plan" else h(v.verifier) + " integration"
            out.append(f'<span class="verifier-h">{name}</span>')
        previous = v.verifier
        out.append(_verdict(v))
    out.append("</div>")
    accepted = [ledger[v.id] for v in t if v.decision == "accept" and v.id in ledger]
    if state == "acc" and accepted:
        text = _artifact_text(accepted[-1].artifact)
        if text:
            out.append(f'<div class="accepted">accepted: {h(text)}</div>')
    out.append("</div>")
    return "".join(out)


def _component(name: str, vs: list[VerdictRecord], ledger: dict[int, LedgerRecord]) -> str:
    out = [f'<div class="comp"><div class="comp-h"><code>{h(name)}</code>']
    ts = tries(vs)
    if len(ts) > 1:
        out.append(f'<span class="retries">{len(ts) - 1} retr{"y" if len(ts) == 2 else "ies"}</span>')
    out.append("</div>")
    out += [_try(i, t, ledger) for i, t in enumerate(ts, 1)]
    out.append("</div>")
    return "".join(out)


def _plans(vs: list[VerdictRecord], ledger: dict[int, LedgerRecord]) -> list[list[dict[str, Any]]]:
    """The plans the plan verifier accepted, in order (p1, p2, ...)."""
    out = []
    seen = set()
    for v in vs:
        row = ledger.get(v.id)
        if not row or row.component != "planner" or v.artifact_hash in seen:
            continue
        art = row.artifact
        if isinstance(art, dict) and art.get("kind") == "plan":
            seen.add(v.artifact_hash)
            subtasks = (art.get("plan") or {}).get("subtasks") or []
            out.append([s for s in subtasks if isinstance(s, dict)])
    return out


def _plan_box(a: AttemptRecord, plans: list[list[dict[str, Any]]], cfg: dict[str, Any]) -> str:
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
    if a.plan_fallback:
        out += '<span class="badge warn">plan budget spent → single task</span>'
    return out


def _spec_box(
    level: str, a: AttemptRecord, task: TaskRecord | None, plans: list[Any], cfg: dict[str, Any]
) -> str:
    if level == "L1":
        question, gold = (task.question, task.answer) if task else (None, None)
        return (
            f'<p class="q clamp">{h(clip(question, 400))}</p>'
            f'<p class="small">acceptable answer: <b>{h(clip(gold, 120))}</b>'
            f"{'' if not task or task.answerable else ' <span class=badge>unanswerable</span>'}</p>"
        )
    if level == "L2":
        return _plan_box(a, plans, cfg)
    steps = list(dict.fromkeys(v.component for v in a.verdicts if v.level == "L3"))
    if not steps:
        return '<p class="small muted">no step verdicts</p>'
    return (
        '<p class="small">subtask contracts checked by R1:</p><ul class="steps">'
        + "".join(f"<li><code>{h(s)}</code></li>" for s in steps[:12])
        + (f"<li class='muted'>… {len(steps) - 12} more</li>" if len(steps) > 12 else "")
        + "</ul>"
    )


def _level_row(i: int, pair: tuple[str, str, str, str], a: AttemptRecord, box: str) -> str:
    level, title, rid, heading = pair
    ledger = _by_verdict(a.ledger)
    here = [v for v in a.verdicts if v.level == level]
    named = a.outcome == "abstain" and a.abstain_level == level
    comps: dict[str, list[VerdictRecord]] = {}
    for v in here:
        comps.setdefault(v.component or "?", []).append(v)
    right = "".join(_component(c, cv, ledger) for c, cv in comps.items())
    right = right or '<p class="small muted">no verdicts at this level</p>'
    flag = ""
    if named:
        flag = (
            f'<div class="abst-flag">abstained here · <code>{h(a.abstain_component)}</code> · '
            f"{h(clip(a.abstain_cause, 200))}</div>"
        )
    return (
        f'<div class="vrow{" named" if named else ""}" data-level="{level}" style="--in:{i * 44}px">'
        f'<div class="spec"><div class="box-h"><span class="lv">{level}</span>{title}</div>'
        f"{box}{flag}</div>"
        '<div class="link"><span></span></div>'
        f'<div class="verif"><div class="box-h"><span class="lv r">{rid}</span>{h(heading)}'
        f'<span class="count">{len(here)} verdict{"" if len(here) == 1 else "s"}</span></div>'
        f"{right}</div></div>"
    )


def vee(a: AttemptRecord, task: TaskRecord | None, cfg: dict[str, Any]) -> str:
    """The V of one attempt (``cfg``: its configuration as the run resolved it)."""
    plans = _plans(a.verdicts, _by_verdict(a.ledger))
    rows = [_level_row(i, pair, a, _spec_box(pair[0], a, task, plans, cfg)) for i, pair in enumerate(PAIRS)]
    roles = Counter(c.role for c in a.calls)
    base = " · ".join(f"{h(r)} {n} call{'s' if n != 1 else ''}" for r, n in roles.items()) or "no model calls"
    badge = ""
    if a.outcome == "abstain" and a.abstain_level not in LEVELS:
        badge = (
            f'<span class="badge lvl lvl-{h(a.abstain_level)}">{h(a.abstain_level)}</span> '
            f"<code>{h(a.abstain_component)}</code> {h(clip(a.abstain_cause, 200))}"
        )
    elif a.outcome == "crash":
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
