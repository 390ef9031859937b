"""What every part of the page shares: escaping, clipping, figure formatting, the inline assets
and the small badges."""

from __future__ import annotations

from html import escape
from importlib import resources
from typing import Any

MAX_TEXT = 600  # characters of any one record string shown on the page
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


def h(x: Any) -> str:
    """Any value as escaped HTML text ("" for None)."""
    return "" if x is None else escape(str(x), quote=True)


def clip(x: Any, n: int = MAX_TEXT) -> str:
    s = "" if x is None else str(x)
    return s if len(s) <= n else s[: n - 1] + "…"


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


def asset(name: str) -> str:
    """A file shipped beside this module (style.css, app.js), inlined into the page."""
    return resources.files("vreact.report.html").joinpath(name).read_text(encoding="utf-8")


def outcome_badge(outcome: str) -> str:
    return f'<span class="badge o-{h(outcome)}">{h(outcome)}</span>'


def level_badge(level: Any) -> str:
    if not level:
        return ""
    return f'<span class="badge lvl lvl-{h(level)}">{h(level)}</span>'
