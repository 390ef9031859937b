"""A probe as one offline HTML page (``vreact view PROBE_DIR``): its tables and the class-by-check
matrix, every string escaped."""

from __future__ import annotations

from html import escape
from pathlib import Path

from vreact.probe.report import ProbeReport, matrix, tables

_STYLE = (
    "body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#111}"
    "h1{font-size:1.4rem}h2{font-size:1.05rem;margin-top:2rem}"
    "table{border-collapse:collapse;margin:.5rem 0}th,td{border-bottom:1px solid #ddd;padding:.2rem .6rem;"
    "text-align:left}th{background:#f4f4f5}td.n{text-align:right;font-variant-numeric:tabular-nums}"
)


def _table(title: str, headers: list[str], rows: list[list[str]]) -> str:
    def cell(x: str) -> str:
        numeric = x.replace(".", "", 1).replace("/", "", 1).isdigit() or x == "-"
        return f'<td class="n">{escape(x)}</td>' if numeric else f"<td>{escape(x)}</td>"

    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(cell(str(x)) for x in row) + "</tr>" for row in rows)
    return f"<h2>{escape(title)}</h2><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_probe_html(r: ProbeReport) -> str:
    parts = [_table(*t) for t in tables(r)]
    parts.insert(1, _table("Catch rate alone, class by check", *matrix(r)))
    title = f"vreact · probe {r.run}"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1><p>{escape(r.dataset)}: {r.tasks} records; levels"
        f" {escape(', '.join(r.levels))}; {escape('judge ' + r.judge if r.judge else 'gates only')}</p>"
        f"{''.join(parts)}</body></html>"
    )


def write_probe_html(r: ProbeReport, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_probe_html(r), encoding="utf-8")
    return path
