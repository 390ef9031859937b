"""The summary of the page: the run at a glance and the report's tables (the one list of
vreact.report.tables, drawn as HTML with each figure's JSON path and value on its cell)."""

from __future__ import annotations

import json

from vreact.records import RunRecords
from vreact.report.html._text import fmt, h
from vreact.report.model import Report
from vreact.report.tables import CORRECTIONS, LEFT, TABLES, Row, Table, cell, styled


def headline(records: RunRecords) -> str:
    """The run at a glance: attempts by outcome, verdicts, rejections, model calls, tokens."""
    attempts = records.attempts
    outcomes = {o: sum(a.outcome == o for a in attempts) for o in ("answer", "abstain", "crash")}
    vs = [v for a in attempts for v in a.verdicts]
    calls = [c for a in attempts for c in a.calls]
    tokens = sum((c.prompt_tokens or 0) + (c.completion_tokens or 0) for c in calls)
    stats = (
        ("attempts", len(attempts), ""),
        ("answered", outcomes["answer"], "ok"),
        ("abstained", outcomes["abstain"], "warn"),
        ("crashed", outcomes["crash"], "grey"),
        ("verdicts", len(vs), ""),
        ("rejections", sum(v.rejected for v in vs), "bad"),
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


def _row(table: Table, row: Row, colours: dict[str, str]) -> str:
    colour = colours.get(row.labels[0], "#888")
    first, *rest = row.labels
    out = [f'<th scope="row"><span class="dot" style="background:{colour}"></span>{h(first)}</th>']
    out += [f"<td class='l'>{h(label)}</td>" for label in rest]
    for column in table.columns:
        value, key = cell(row, column)
        if key is None or column.style == "points":  # a mean ± se, or a difference in points
            out.append(f"<td>{h(styled(value, column.style))}</td>")
        else:  # a mapping of counts is shown as the terminal shows it
            text = (
                styled(value, column.style)
                if column.style == "counts" or (value is None and column.style == "predicted")
                else fmt(value, key)
            )
            out.append(
                f'<td data-config="{h(row.config)}" data-key="{h(key)}" '
                f'data-value="{h(json.dumps(value))}">{h(text)}</td>'
            )
    return "<tr>" + "".join(out) + "</tr>"


def tables(report: Report, colours: dict[str, str]) -> str:
    """Every table of the report, as the terminal shows them, and its corrections, one HTML card
    each."""
    parts = []
    for t in (*TABLES, CORRECTIONS):
        rows = [_row(t, row, colours) for row in t.rows(report)]
        if not rows and t.optional:
            continue
        head = (*t.labels, *(c.header for c in t.columns))
        ths = "".join(f'<th scope="col"{" class=l" if c in LEFT else ""}>{h(c)}</th>' for c in head)
        title = h(t.title.format(run=report.run))
        parts.append(
            f'<section class="card tbl"><h3>{title}</h3>'
            + (f'<p class="note">{h(t.note)}</p>' if t.note else "")
            + f'<div class="scroll"><table><thead><tr>{ths}</tr></thead><tbody>{"".join(rows)}</tbody>'
            "</table></div></section>"
        )
    return "".join(parts)
