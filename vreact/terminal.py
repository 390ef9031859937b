"""Tables drawn to fit the terminal they are printed on, a name never cut.

A :class:`Fitted` table is a rich renderable that lays itself out when printed, at the console's
width: whole, when its columns fit side by side at their natural widths (each the widest of its
header and cells); else in parts, its label columns (a configuration, a task id) repeated in each
beside as many of the other columns as fit, "(continued)" under the first part's title; else,
when a column does not fit beside the labels even alone (a correction's rejected program), a
block per row: its labels on a line, then each other cell under its header, the value wrapped
under itself. A title is a line of its own, wrapped at the console's width (rich's table title
wraps at the table's)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType
from rich.table import Table
from rich.text import Text

#: The space between two columns (rich's right padding of one; no padding at the edges).
GAP = 1
#: What a table's frame adds per column: its box's edge or divider, and the padding.
FRAME = 2


@dataclass(frozen=True)
class Fitted:
    """A table of text cells: ``headers`` and ``rows`` (a row's cells in the headers' order), its
    first ``labels`` columns naming the row; ``right`` the headers of columns aligned right (its
    figures)."""

    title: str
    headers: Sequence[str]
    rows: Sequence[Sequence[str]]
    labels: int = 1
    right: frozenset[str] = field(default_factory=frozenset)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        for title, columns in self.parts(options.max_width):
            if title:
                yield Text(title, style="table.title")
            if columns is None:
                yield from self._blocks(options.max_width)
            else:
                yield self._table(columns)

    def widths(self) -> list[int]:
        """Each column's natural width: its widest line, header or cell (a tab as rich draws it,
        to the next multiple of 8)."""
        return [
            max(
                cell_len(line.expandtabs(8))
                for text in (h, *(r[i] for r in self.rows))
                for line in str(text).split("\n")
            )
            for i, h in enumerate(self.headers)
        ]

    def parts(self, width: int) -> list[tuple[str, list[int] | None]]:
        """The layout at ``width``: each part's title and its columns (None: a block per row)."""
        natural = self.widths()
        labels = list(range(min(self.labels, len(natural))))

        def fits(columns: list[int]) -> bool:
            return sum(natural[c] for c in columns) + FRAME * len(columns) <= width

        if fits(list(range(len(natural)))):
            return [(self.title, list(range(len(natural))))]
        rest = [c for c in range(len(natural)) if c not in labels]
        if not rest or not all(fits([*labels, c]) for c in rest):
            return [(self.title, None)]
        parts = _split(rest, lambda cs: fits([*labels, *cs]), [natural[c] + FRAME for c in rest])
        titles = [self.title, *(f"{self.title} (continued)" if self.title else "" for _ in parts[1:])]
        return [(t, [*labels, *p]) for t, p in zip(titles, parts, strict=True)]

    def _table(self, columns: list[int]) -> Table:
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, GAP, 0, 0))
        for c in columns:
            header = self.headers[c]
            table.add_column(Text(header), justify="right" if header in self.right else "left", no_wrap=True)
        for row in self.rows:
            table.add_row(*(Text(str(row[c])) for c in columns))  # text as it is, no markup read
        return table

    def _blocks(self, width: int) -> Iterator[RenderableType]:
        """A block per row: the labels, then each other cell under its header, wrapped."""
        shown = [c for c in range(len(self.headers)) if c >= self.labels]
        indent = min(max((cell_len(self.headers[c]) for c in shown), default=0) + 2, width // 2)
        for row in self.rows:
            yield Text("")
            yield Text(" · ".join(str(row[c]) for c in range(min(self.labels, len(row)))), style="bold")
            grid = Table.grid(padding=(0, GAP, 0, 0))
            grid.add_column(width=indent, overflow="fold")
            grid.add_column(overflow="fold")
            for c in shown:
                grid.add_row(Text("  " + self.headers[c], style="dim"), Text(str(row[c])))
            yield grid


def _split(columns: list[int], fits: Callable[[list[int]], bool], sizes: list[int]) -> list[list[int]]:
    """``columns`` in order, in as few parts as fit (greedily), then evened out: each part filled
    up to an even share of the whole, so the last is not a lone column."""
    greedy: list[list[int]] = [[]]
    for c in columns:
        if greedy[-1] and not fits([*greedy[-1], c]):
            greedy.append([])
        greedy[-1].append(c)
    share = sum(sizes) / len(greedy)
    even: list[list[int]] = [[]]
    filled = 0
    for c, size in zip(columns, sizes, strict=True):
        full = filled >= share and len(even) < len(greedy)
        if even[-1] and (full or not fits([*even[-1], c])):
            even.append([])
            filled = 0
        even[-1].append(c)
        filled += size
    return even if len(even) == len(greedy) and all(map(fits, even)) else greedy
