"""The attempts: the filterable list of every attempt, and one page per attempt (``#attempt-ID``)
with the question, the outcome, the V, each executor try's steps and the model calls."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from vreact.records import AttemptRecord, CallRecord, RunRecords, StepRecord, TaskRecord, VerdictRecord
from vreact.report.html._text import clip, fmt, h, level_badge, outcome_badge
from vreact.report.html.vee import tries, vee

NO_VERDICT = '<span class="muted">no verdict</span>'
_LIST_HEAD = ("id", "config", "task", "k", "outcome", "level", "answer / cause / error", "verdicts", "calls")


def _list_row(a: AttemptRecord) -> str:
    rej = sum(v.rejected for v in a.verdicts)
    tokens = sum((c.prompt_tokens or 0) + (c.completion_tokens or 0) for c in a.calls)
    if a.outcome == "answer":
        what = f'<span class="ans">{h(clip(a.answer, 90))}</span>'
    elif a.outcome == "abstain":
        what = f'<span class="muted">{h(clip(a.abstain_cause, 90))}</span>'
    else:
        what = f'<span class="err">{h(clip(a.error, 90))}</span>'
    link = f'href="#attempt-{a.id}"'
    return (
        f'<tr class="arow" data-config="{h(a.config)}" data-outcome="{h(a.outcome)}" '
        f'data-level="{h(a.abstain_level or "")}">'
        f"<td><a {link}>{a.id}</a></td><td>{h(a.config)}</td>"
        f'<td class="l"><a {link} class="tid">{h(a.task_id)}</a></td><td>{a.attempt_index}</td>'
        f"<td>{outcome_badge(a.outcome)}</td><td>{level_badge(a.abstain_level)}</td>"
        f'<td class="l what">{what}</td>'
        f"<td>{len(a.verdicts)}{f' <span class=rejn>{rej}✗</span>' if rej else ''}</td>"
        f"<td>{len(a.calls)}</td><td>{tokens}</td></tr>"
    )


def attempt_list(attempts: list[AttemptRecord]) -> str:
    """Every attempt, one row each, with filters by configuration, outcome and text."""
    rows = [_list_row(a) for a in attempts]
    configs = list(dict.fromkeys(a.config for a in attempts))
    opts = "".join(f'<option value="{h(c)}">{h(c)}</option>' for c in configs)
    left = ("id", "config", "task", "outcome", "level", "answer / cause / error")
    head = "".join(
        f'<th scope="col"{" class=l" if c in left else ""}>{c}</th>' for c in (*_LIST_HEAD, "tokens")
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


def _verdict_chip(v: VerdictRecord) -> str:
    """A verdict named beside a try's steps (drawn in full, once, in the V)."""
    text = f"#{v.seq} {v.source} {v.check_name} " + (f"✗ {v.cause}" if v.rejected else "✓")
    return f'<span class="chip {"rej" if v.rejected else "acc"}">{h(text)}</span> '


def _step_row(st: StepRecord) -> str:
    evidence = f' <span class="muted">[¶ {h(", ".join(map(str, st.evidence)))}]</span>' if st.evidence else ""
    if st.hops:  # a finish that names its hops: the chain, entity by entity
        chain = " → ".join(
            f'{h(str(x.get("entity", "")))} <span class="muted">¶ {h(str(x.get("paragraph", "")))}</span>'
            for x in st.hops
        )
        evidence = f'<div class="hops small">hops: {chain}</div>'
    designer = st.source == "designer"  # a search the L3 designer ran for the try
    row = '<tr class="designer">' if designer else "<tr>"
    by = ' <span class="chip who">designer</span>' if designer else ""
    given = (
        f'<pre class="code">{h(clip(st.input, 1500))}</pre>'
        if "\n" in (st.input or "")
        else h(clip(st.input, 120))
    )
    return (
        f"{row}<td>{st.step + 1}</td><td><code>{h(st.action or 'not a step')}</code>{by} "
        f"{given}{evidence}"
        f'</td><td class="small">{h(clip(st.thought, 200))}</td>'
        f'<td class="small"><pre class="obs">{h(clip(st.observation, 600))}</pre></td></tr>'
    )


def _steps_card(a: AttemptRecord) -> str:
    """Each executor try's steps (thought, action and input, what it observed) beside the
    verdicts that ended or judged that try."""
    if not a.steps:
        return ""
    by_try: dict[tuple[str | None, int], list[StepRecord]] = defaultdict(list)
    for st in a.steps:
        by_try[(st.component, st.try_)].append(st)
    out = ['<div class="card"><h3>Steps</h3>']
    for (component, n), rows in by_try.items():
        mine = tries([v for v in a.verdicts if v.component == component])
        chips = "".join(_verdict_chip(v) for v in (mine[n - 1] if n - 1 < len(mine) else []))
        out.append(
            f'<div class="try-steps"><div class="try-h"><b><code>{h(component)}</code> try {n}</b></div>'
            f'<div class="steps-grid"><div class="chips">{chips or NO_VERDICT}</div>'
            '<table class="steps"><thead><tr><th>#</th><th>action</th>'
            f"<th>thought</th><th>observation</th></tr></thead><tbody>{''.join(map(_step_row, rows))}"
            f"</tbody></table>{_events(a, component, n)}</div></div>"
        )
    out.append("</div>")
    return "".join(out)


def _program(artifact: Any) -> str | None:
    """The program a judged artifact holds: an answer of several lines (None: anything else)."""
    if (
        isinstance(artifact, dict)
        and artifact.get("kind") == "answer"
        and "\n" in str(artifact.get("answer"))
    ):
        return str(artifact["answer"])
    return None


def _programs_card(a: AttemptRecord) -> str:
    """Each program a verifier judged, in the order it was first judged: its code, what rejected
    it and why (the failing example, what it should return and what it did: the sentence the
    next try was told), and the hidden test's verdict where the family scored the try; the
    retry follows it. Nothing for an attempt that judged no program."""
    judged: dict[str | None, tuple[str, list[VerdictRecord]]] = {}
    for v in sorted(a.verdicts, key=lambda v: v.seq):
        program = _program(v.artifact)
        if program is not None:
            judged.setdefault(v.artifact_hash, (program, []))[1].append(v)
    if not judged:
        return ""
    scored = a.score.tries if a.score is not None else {}
    out = ['<div class="card"><h3>Programs judged</h3>']
    for i, (digest, (program, verdicts)) in enumerate(judged.items(), 1):
        rejected = [v for v in verdicts if v.rejected]
        said = (
            "".join(
                f'<p class="rej small">✗ {h(v.verifier)} {h(v.source)} <code>{h(v.check_name)}</code> '
                f"{h(v.cause)}: {h(clip(v.detail, 400))}</p>"
                for v in rejected
            )
            or '<p class="acc small">✓ accepted by every check it met</p>'
        )
        right = scored.get(digest or "")
        verdict = '<b class="acc">passes</b>' if right else '<b class="rej">fails</b>'
        hidden = "" if right is None else f" · hidden test: {verdict}"
        title = "retry " + str(i - 1) if i > 1 else "first program"
        out.append(
            f'<div class="program"><p class="small"><b>{title}</b>{hidden}</p>{said}'
            f'<pre class="code">{h(clip(program, 4000))}</pre></div>'
        )
    out.append("</div>")
    return "".join(out)


def _events(a: AttemptRecord, component: str | None, n: int) -> str:
    """The hints and rollbacks of one try, at the step they happened (events, not verdicts)."""
    mine = [e for e in a.events if e.component == component and e.try_ == n]
    if not mine:
        return ""
    items = "".join(
        f'<li class="event e-{h(e.kind)}" data-kind="{h(e.kind)}">step {e.step} · {h(e.guard)} '
        f"{h(e.kind)}: {h(clip(e.detail, 200))}</li>"
        for e in mine
    )
    return f'<ul class="events small muted">{items}</ul>'


def _call_row(i: int, c: CallRecord) -> str:
    status = c.status or ""
    err = f'<span class="err">{h(clip(c.error, 160))}</span>' if c.error else ""
    return (
        f'<tr class="call" data-role="{h(c.role)}"><td>{i}</td>'
        f'<td class="l"><span class="role r-{h(c.role)}">'
        f'{h(c.role)}</span></td><td class="l muted">{h(c.model)}</td>'
        f"<td>{h(c.prompt_tokens)}</td><td>{h(c.completion_tokens)}</td>"
        f"<td>{h(fmt(c.latency_ms))}</td>"
        f'<td class="l"><span class="st-{h(status)}">{h(status)}</span>{" " + err if err else ""}</td>'
        f"<td>{h(c.retries or 0)}</td><td>{'yes' if c.cached else ''}</td>"
        f"<td>{h(fmt(c.cost_usd, 'usd')) if c.cost_usd is not None else ''}</td></tr>"
    )


def _calls_table(calls: list[CallRecord]) -> str:
    if not calls:
        return '<p class="muted small">No model calls.</p>'
    p = sum(c.prompt_tokens or 0 for c in calls)
    q = sum(c.completion_tokens or 0 for c in calls)
    pills = "".join(
        f'<span class="cpill r-{h(c.role)}{" bad" if c.status != "ok" else ""}" '
        f'title="#{i} {h(c.role)} · {h(c.status)} · {h(c.prompt_tokens)} prompt + '
        f'{h(c.completion_tokens)} completion tokens">{h((c.role or "?")[:1].upper())}'
        f"<small>{h(c.prompt_tokens)}→{h(c.completion_tokens)}</small></span>"
        for i, c in enumerate(calls, 1)
    )
    heads = ("#", "role", "model", "prompt", "compl", "ms", "status", "retries", "cached", "USD")
    return (
        f'<p class="small">{len(calls)} calls · {p} prompt + {q} completion tokens · '
        '<span class="muted">P planner, E executor, J judge; prompt→completion tokens</span></p>'
        f'<div class="pills">{pills}</div>'
        '<details><summary>show calls</summary><div class="scroll"><table class="calls"><thead><tr>'
        + "".join(f"<th>{c}</th>" for c in heads)
        + f"</tr></thead><tbody>{''.join(_call_row(i, c) for i, c in enumerate(calls, 1))}</tbody>"
        "</table></div></details>"
    )


def _outcome(a: AttemptRecord) -> str:
    if a.outcome == "answer" and "\n" in (a.answer or ""):
        return f'<pre class="code">{h(clip(a.answer, 4000))}</pre>'
    if a.outcome == "answer":
        return f'<p class="answer">{h(clip(a.answer))}</p>' + (
            f'<p class="small muted">evidence: ¶ {h(", ".join(map(str, a.evidence)))}</p>'
            if a.evidence
            else ""
        )
    if a.outcome == "abstain":
        return (
            f"<p>{level_badge(a.abstain_level)} <code>{h(a.abstain_component)}</code></p>"
            f'<p class="small">{h(clip(a.abstain_cause))}</p>'
        )
    kind = a.crash_kind
    return (f'<p class="small">crash kind: <code>{h(kind)}</code></p>' if kind else "") + (
        f'<pre class="err">{h(a.traceback or clip(a.error, 2000))}</pre>'
    )


def _task_cards(a: AttemptRecord, task: TaskRecord | None) -> str:
    aliases = task.aliases if task else []
    question, gold = (task.question, task.answer) if task else (None, None)
    return (
        '<div class="cards3">'
        f'<div class="card"><h4>Question</h4><p>{h(clip(question))}</p></div>'
        f'<div class="card"><h4>Gold answer</h4><p class="answer">{h(clip(gold))}</p>'
        + (
            f'<p class="small muted">also: {h(clip(", ".join(map(str, aliases)), 200))}</p>'
            if aliases
            else ""
        )
        + ("" if not task or task.answerable else '<p><span class="badge warn">unanswerable</span></p>')
        + f'</div><div class="card out-{h(a.outcome)}"><h4>Outcome</h4>{_outcome(a)}</div></div>'
    )


def attempt_page(
    a: AttemptRecord, prev: int | None, nxt: int | None, records: RunRecords, cfg: dict[str, Any]
) -> str:
    """One attempt's page, linked to the previous and next attempt of the list."""
    task = records.task(a)
    nav = '<a href="#attempts" class="back">← all attempts</a>'
    nav += f' <a href="#attempt-{prev}">‹ previous</a>' if prev else ' <span class="muted">‹ previous</span>'
    nav += f' <a href="#attempt-{nxt}">next ›</a>' if nxt else ' <span class="muted">next ›</span>'
    hops = task.hops if task else None
    return (
        f'<section class="attempt" id="attempt-{a.id}" data-attempt="{a.id}">'
        f'<div class="nav">{nav}</div>'
        f'<h2>Attempt {a.id} <span class="tag">{h(a.config)}</span> {outcome_badge(a.outcome)}'
        f"{level_badge(a.abstain_level)}</h2>"
        f'<p class="sub">task <code>{h(a.task_id)}</code> · attempt index {a.attempt_index} · seed '
        f"{h(a.seed)}{f' · {hops} hops' if hops else ''}</p>"
        f"{_task_cards(a, task)}"
        '<div class="card"><div class="bar"><h3>The V</h3><div class="legend small">'
        '<span class="verdict-key acc">✓ accept</span><span class="verdict-key rej">✗ reject</span>'
        '<span class="src-gate">gate</span><span class="src-judge">judge</span>'
        '<span class="src-guard">guard</span>'
        "<span class=muted>#n = order in the attempt</span></div></div>"
        f"{vee(a, task, cfg)}</div>"
        f"{_programs_card(a)}"
        f"{_steps_card(a)}"
        f'<div class="card"><h3>Model calls</h3>{_calls_table(a.calls)}</div>'
        "</section>"
    )
