"""A run as one self-contained HTML file: ``vreact view DIR`` writes ``DIR/report.html``.

The page works offline (inline CSS, inline SVG charts, a few lines of vanilla JS). It shows
the folder's runs (the page is of one), the report's tables (vreact.report.tables), two charts
(outcomes per configuration and risk against coverage), a list of every attempt and one page
per attempt (``#attempt-ID``) that draws the V. It reads the records only through
:func:`vreact.records.read_run` and :func:`vreact.records.run_list`. Every string that comes
from the records is HTML-escaped: answers come from models.

The attempt pages are written here, like the rest, but embedded once as one gzip-compressed
JSON object (attempt id -> page), base64 in a ``<script type="application/gzip+base64">``;
app.js unpacks it (the browser's own DecompressionStream) the first time an attempt is opened
and puts that one page in the document. So the file stays about a tenth of the size of every
page written out in full (16 KB an attempt), and the browser holds one attempt's page at a
time, however many attempts the run has.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import time
from pathlib import Path

from vreact.records import DB_NAME, RunRecords, RunSummary, Store, open_to_read, read_run, run_list
from vreact.report.compute import compute
from vreact.report.html import attempt, charts, summary
from vreact.report.html._text import asset, fmt, h
from vreact.report.model import Report
from vreact.report.tables import provenance_lines, run_lines

HTML_NAME = "report.html"
#: One colour per configuration, in report order (repeats after eight).
PALETTE = ("#2563eb", "#d97706", "#059669", "#9333ea", "#dc2626", "#0891b2", "#65a30d", "#db2777")

__all__ = ["HTML_NAME", "attempt_pages", "fmt", "render_html", "writable", "write_html"]

#: The element that holds the packed attempt pages.
PAGES_ID = "attempt-pages"
_PACKED = re.compile(rf'<script type="application/gzip\+base64" id="{PAGES_ID}">([A-Za-z0-9+/=]*)</script>')


def pack_pages(pages: dict[int, str]) -> str:
    """The attempt pages as app.js reads them: a JSON object from attempt id to page HTML,
    gzip-compressed (reproducibly: no time stamp), in base64."""
    data = json.dumps({str(k): v for k, v in pages.items()}, ensure_ascii=False, separators=(",", ":"))
    return base64.b64encode(gzip.compress(data.encode("utf-8"), compresslevel=6, mtime=0)).decode("ascii")


def attempt_pages(html: str) -> dict[int, str]:
    """The page of each attempt that a page from :func:`render_html` holds, by attempt id (what
    app.js unpacks in the browser)."""
    found = _PACKED.search(html)
    if found is None:
        return {}
    pages: dict[str, str] = json.loads(gzip.decompress(base64.b64decode(found.group(1))))
    return {int(k): v for k, v in pages.items()}


def _meta(records: RunRecords) -> list[str]:
    run = records.run
    meta = [
        f"model <b>{h((run.model if run else None) or '–')}</b>",
        f"dataset <b>{h((run.dataset if run else None) or '–')}</b>",
        f"status <b>{h((run.status if run else None) or '–')}</b>",
        f"{len(records.attempts)} attempts",
    ]
    sandbox = run.config.get("sandbox") if run else None
    if sandbox == "none":
        meta.append('<b class="warn">sandbox none: model-written code ran without isolation</b>')
    elif sandbox:
        meta.append(f"sandbox <b>{h(sandbox)}</b>")
    if run and run.started:
        meta.append(time.strftime("%Y-%m-%d %H:%M", time.localtime(run.started)))
        if run.finished:
            meta.append(f"{run.finished - run.started:.0f} s")
    return meta


def _provenance(report: Report) -> str:
    """What made the run's attempts (the report's header lines), its first line marked when
    more than one state of the code, or a dirty tree, made them."""
    lines = provenance_lines(report)
    if not lines:
        return ""
    p = report.provenance
    warn = p is not None and (p.several or p.dirty)
    head = lines[0].removeprefix("provenance: ")  # the card's title says it
    first = f'<b class="warn">{h(head)}</b>' if warn else h(head)
    items = "".join(f"<li>{h(line.strip())}</li>" for line in lines[1:])
    return (
        f'<section class="card" id="provenance"><h3>Provenance</h3><p>{first}</p>'
        f"{f'<ul class=note>{items}</ul>' if items else ''}</section>"
    )


def _reading(report: Report) -> str:
    """What the family's gates read from the run's tasks, and the dataset audit's findings."""
    r = report.reading
    if r is None:
        return ""
    lines = "".join(f"<p>{h(line)}</p>" for line in r.lines)
    found = "".join(f"<li><b>{h(f.task)}</b>: <code>{h(f.read)}</code>: {h(f.gold)}</li>" for f in r.findings)
    listed = f'<ul class="note">{found}</ul>' if found else ""
    return f'<section class="card" id="reading"><h3>What the gates read</h3>{lines}{listed}</section>'


def _runs(runs: list[RunSummary], shown: int | None) -> str:
    """The folder's runs, the one this page shows in bold (a page shows one run)."""
    if not runs:
        return ""
    lines = run_lines(runs, {shown})
    items = "".join(
        f"<li{' class=shown' if r.id == shown else ''}>{h(line)}</li>"
        for r, line in zip(runs, lines, strict=True)
    )
    other = (
        '<p class="note">This page shows one of them; <code>vreact view DIR --run ID</code> writes '
        "another's.</p>"
        if len(runs) > 1
        else ""
    )
    return f'<section class="card runs"><h3>Runs in this folder</h3>{other}<ul>{items}</ul></section>'


def _summary(report: Report, records: RunRecords, colours: dict[str, str]) -> str:
    if not report.configs:
        return (
            '<section class="card"><p class="muted">This folder has no finished attempts yet.</p></section>'
        )
    charts_html = (
        '<div class="cards2">'
        f'<section class="card"><h3>Outcomes</h3><p class="note">Per configuration: correct answers '
        "(answered − silent errors), silent errors, abstentions and crashes; they sum to the attempts "
        f"executed.</p>{charts.outcome_chart(report.configs)}</section>"
        '<section class="card"><h3>Risk against coverage</h3><p class="note">Lower and further right is '
        "better. One point per configuration when the report has no curve.</p>"
        f"{charts.risk_chart(report.configs, colours)}</section></div>"
    )
    return summary.headline(records) + charts_html + summary.tables(report, colours)


def render_html(store: Store, run_id: int | None = None) -> str:
    """The whole page for one run (the latest by default)."""
    records = read_run(store, run_id, transcripts=False, artifacts=True)  # no prompts; corrections
    report = compute(records)
    rid = report.run
    # concurrent attempts start in any order: list them by configuration, task, attempt index
    order = {n: i for i, n in enumerate(report.configs)}
    first_seen = {t: i for i, t in enumerate(dict.fromkeys(a.task_id for a in records.attempts))}
    attempts = sorted(
        records.attempts, key=lambda a: (order[a.config], first_seen[a.task_id], a.attempt_index)
    )
    colours = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(report.configs)}
    resolved = records.run.config if records.run else {}
    cfgs = {str(c.get("name")): c for c in resolved.get("configs") or [] if isinstance(c, dict)}
    ids = [a.id for a in attempts]
    pages = {
        a.id: attempt.attempt_page(
            a,
            ids[i - 1] if i else None,
            ids[i + 1] if i + 1 < len(ids) else None,
            records,
            cfgs.get(a.config, {}),
        )
        for i, a in enumerate(attempts)
    }
    title = f"vreact · run {rid}" if rid is not None else "vreact · no run"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{h(title)}</title><style>{asset('style.css')}</style></head>"
        f'<body data-view="summary" data-run="{h(rid)}"><header class="top"><div class="wrap">'
        f'<a class="brand" href="#summary">vreact</a><span class="run">run {h(rid)}</span>'
        f'<span class="meta">{" · ".join(_meta(records))}</span>'
        '<nav><a href="#summary">Summary</a><a href="#attempts">Attempts</a></nav></div></header>'
        f'<main class="wrap"><div id="main"><div id="summary">{_runs(run_list(store), rid)}'
        f"{_provenance(report)}{_reading(report)}"
        f"{_summary(report, records, colours)}</div>"
        f'{attempt.attempt_list(attempts)}</div><div id="page"></div></main>'
        f'<script type="application/gzip+base64" id="{PAGES_ID}">{pack_pages(pages)}</script>'
        f"<script>{asset('app.js')}</script></body></html>"
    )


def writable(path: Path) -> bool:
    """Whether this process may write ``path`` (its folder, when it does not exist yet)."""
    return os.access(path if path.exists() else path.parent, os.W_OK)


def write_html(
    run_dir: Path, run_id: int | None = None, out: Path | None = None, store: Store | None = None
) -> Path:
    """Write the page of one run of ``run_dir/vreact.db`` to ``run_dir/report.html`` (or
    ``out``); return the path written. The records are opened read-only
    (:func:`vreact.records.open_to_read`), unless ``store`` holds them open already: nothing but
    the page is written, and a run on read-only storage is viewed with ``out``."""
    run_dir = Path(run_dir)
    db = run_dir / DB_NAME
    if store is None and not db.is_file():
        raise FileNotFoundError(f"{run_dir}: no {DB_NAME} here; give a folder made by 'vreact run'")
    path = Path(out) if out is not None else run_dir / HTML_NAME
    opened = store if store is not None else open_to_read(db)
    try:
        text = render_html(opened, run_id)
    finally:
        if store is None:
            opened.close()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
