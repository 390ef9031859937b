"""The probe's and the replay's tables, each given as (title, headers, rows) of text, drawn three
ways: for a terminal (fitted to its width: ``vreact.terminal``), Markdown, and a small offline HTML page."""

from __future__ import annotations

from html import escape
from pathlib import Path

from vreact.terminal import Fitted

TextTable = tuple[str, list[str], list[list[str]]]


def render_tables(tables: list[TextTable]) -> list[Fitted]:
    """Each table for a terminal, laid out at the width it is printed at, its first column
    naming a row (``vreact.terminal.Fitted``: no name cut)."""
    return [Fitted(title, headers, rows) for title, headers, rows in tables]


def markdown_tables(tables: list[TextTable]) -> str:
    parts: list[str] = []
    for title, headers, rows in tables:
        parts += [f"### {title}", "", _md_row(headers), _md_row(["---"] * len(headers))]
        parts += [_md_row(row) for row in rows]
        parts.append("")
    return "\n".join(parts)


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


_STYLE = (
    "body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#111}"
    "h1{font-size:1.4rem}h2{font-size:1.05rem;margin-top:2rem}"
    "table{border-collapse:collapse;margin:.5rem 0}th,td{border-bottom:1px solid #ddd;padding:.2rem .6rem;"
    "text-align:left}th{background:#f4f4f5}td.n{text-align:right;font-variant-numeric:tabular-nums}"
)


def _table(title: str, headers: list[str], rows: list[list[str]]) -> str:
    def cell(x: str) -> str:
        numeric = x.lstrip("+-").replace(".", "", 1).replace("/", "", 1).isdigit() or x == "-"
        return f'<td class="n">{escape(x)}</td>' if numeric else f"<td>{escape(x)}</td>"

    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(cell(str(x)) for x in row) + "</tr>" for row in rows)
    return f"<h2>{escape(title)}</h2><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_page(title: str, lead: str, tables: list[TextTable], extra: str = "") -> str:
    """One offline page: a title, a line under it, ``extra`` (trusted HTML, e.g. an SVG chart) and
    the tables; every string of the tables escaped."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1><p>{escape(lead)}</p>{extra}"
        f"{''.join(_table(*t) for t in tables)}</body></html>"
    )


def write_page(text: str, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
