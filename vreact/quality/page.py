"""A probe or a replay as one offline HTML page (``vreact view DIR``)."""

from __future__ import annotations

from html import escape
from pathlib import Path

from vreact.quality import probe_report, replay
from vreact.quality.tables import html_page, write_page


def write_probe_html(r: probe_report.ProbeReport, path: Path) -> Path:
    from vreact.quality import wide

    tables = wide(r, probe_report.tables(r))
    judged = f"judge {r.judge}" if r.judge else "gates only"
    lead = f"{r.dataset}: {r.tasks} records; levels {', '.join(r.levels)}; {judged}"
    return write_page(html_page(f"vreact · probe {r.run}", lead, tables), path)


def write_replay_html(r: replay.ReplayReport, path: Path) -> Path:
    lead = f"run {r.source_run} of {r.source}, checked again by the verifier set {r.verifiers}"
    return write_page(html_page("vreact · replay", lead, replay.tables(r), risk_coverage(r)), path)


PALETTE = ("#2563eb", "#d97706", "#059669", "#9333ea", "#dc2626", "#0891b2", "#65a30d", "#db2777")


def risk_coverage(r: replay.ReplayReport) -> str:
    """Each configuration's point as run (a filled dot) and post hoc (a ring), risk (1 - selective
    accuracy) against coverage, as inline SVG."""
    w, h, pad = 420, 300, 40

    def xy(coverage: float | None, accuracy: float | None) -> tuple[float, float] | None:
        if coverage == 0:
            accuracy = 1.0  # no answer: no risk, the chart's origin
        if coverage is None or accuracy is None:
            return None
        return pad + coverage * (w - 2 * pad), h - pad - (1 - accuracy) * (h - 2 * pad)

    marks, legend = [], []
    for i, c in enumerate(r.configs):
        colour = PALETTE[i % len(PALETTE)]
        for label, p, filled in (("as run", c.as_run, True), ("post hoc", c.post_hoc, False)):
            at = xy(p.coverage, p.selective_accuracy)
            if at is None:
                continue
            fill, radius = (colour, 6) if filled else ("none", 10)  # a ring shows around a dot it meets
            tip = f"{c.config} {label}: coverage {p.coverage}, selective accuracy {p.selective_accuracy}"
            marks.append(
                f'<circle cx="{at[0]:.1f}" cy="{at[1]:.1f}" r="{radius}" fill="{fill}" stroke="{colour}"'
                f' stroke-width="2"><title>{escape(tip)}</title></circle>'
            )
        legend.append(f'<span style="color:{colour}">&#9679; {escape(c.config)}</span>')
    axes = (
        f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="#999"/>'
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="#999"/>'
        f'<text x="{w / 2}" y="{h - 8}" text-anchor="middle" font-size="12">coverage</text>'
        f'<text x="12" y="{h / 2}" font-size="12" transform="rotate(-90 12 {h / 2})" text-anchor="middle">'
        "risk (1 - selective accuracy)</text>"
        f'<text x="{pad}" y="{h - pad + 14}" font-size="10">0</text>'
        f'<text x="{w - pad}" y="{h - pad + 14}" font-size="10" text-anchor="end">1</text>'
        f'<text x="{pad - 4}" y="{pad + 4}" font-size="10" text-anchor="end">1</text>'
    )
    return (
        "<h2>Risk against coverage: each configuration as run (filled) and post hoc (ring)</h2>"
        f'<svg width="{w}" height="{h}" role="img" aria-label="risk against coverage">'
        f"{axes}{''.join(marks)}</svg>"
        f"<p>{' '.join(legend)}</p>"
    )
