"""What every role's prompt shares."""

from __future__ import annotations


def failure_lines(entries: list[dict[str, str]], heading: str, last: int = 4) -> list[str]:
    """A prompt's lines for the most recent failure entries (cause and detail), if any."""
    if not entries:
        return []
    return [heading, *(f"- {f['cause']}: {f['detail']}" for f in entries[-last:])]
