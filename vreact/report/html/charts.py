"""The summary's two inline SVG charts: outcomes per configuration, and risk against coverage."""

from __future__ import annotations

from collections.abc import Mapping

from vreact.report.html._text import h
from vreact.report.model import HopsReport

#: The four parts of an outcome bar: (key, label, colour); they sum to ``executed``.
OUTCOME_PARTS = (
    ("right", "correct answer", "#1a7f37"),
    ("silent_error", "silent error", "#cf222e"),
    ("abstained", "abstained", "#bf8700"),
    ("crash", "crash", "#6e7781"),
)


def outcome_parts(r: HopsReport) -> dict[str, int]:
    """Correct answers, silent errors, abstentions and crashes: they sum to ``executed``."""
    return {
        "right": r.answered - r.silent_error,
        "silent_error": r.silent_error,
        "abstained": r.abstained,
        "crash": r.crash,
    }


def outcome_chart(configs: Mapping[str, HopsReport]) -> str:
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


def risk_points(r: HopsReport) -> list[tuple[float, float]]:
    """(coverage, risk) points: the report's curve, else the configuration's one point."""
    if r.risk_coverage:
        return sorted((p.coverage, p.risk) for p in r.risk_coverage)
    if r.coverage is not None and r.selective_accuracy is not None:
        return [(r.coverage, round(1 - r.selective_accuracy, 3))]
    return []


def risk_chart(configs: Mapping[str, HopsReport], colours: dict[str, str]) -> str:
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
