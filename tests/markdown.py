"""Reading the docs' Markdown as the tests of the pages do: fenced blocks, the prose outside them,
and one ``## `` section."""

from __future__ import annotations


def blocks(text: str, info: str | None = None) -> list[tuple[str, str]]:
    """The fenced blocks of ``text`` in order, as (info string, body), those whose info string is
    ``info`` when it is given."""
    out, body, kind = [], None, ""
    for line in text.splitlines():
        if body is None and line.startswith("```"):
            body, kind = [], line[3:].strip()
        elif body is not None and line.startswith("```"):
            if info is None or kind == info:
                out.append((kind, "\n".join(body)))
            body = None
        elif body is not None:
            body.append(line)
    return out


def prose(text: str) -> str:
    """``text`` without its fenced blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return "\n".join(lines)


def section(text: str, title: str) -> str:
    """The text under the ``## title`` heading, up to the next ``## `` heading."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == f"## {title}"]
    assert starts, f"no '## {title}' section"
    body = []
    for line in lines[starts[0] + 1 :]:
        if line.startswith("## "):
            break
        body.append(line)
    return "\n".join(body)
