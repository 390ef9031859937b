"""The package's import graph in figures: modules, edges (module -> module of vreact it imports,
deferred and type-only imports too), edges that point up or sideways in docs/design.md's layers
(allowed exceptions included), import cycles (strongly connected groups of more than one
module), and the core's lines (docs/design.md's "The core"). Run from the repository's root:

    python scripts/import_graph.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.test_layers import DESIGN, contract, core, imports, sources, violations


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main() -> None:
    modules = sources()
    names = set(modules)
    graph = {m: {n for _, n in imports(m, s, names) if n in names and n != m} for m, s in modules.items()}
    layers, allowed = contract(DESIGN.read_text())
    up = violations(modules, layers, {})
    named = core()
    mine = [m for m in modules if any(m == c or m.startswith(c + ".") for c in named)]
    lines = sum(len(modules[m].splitlines()) for m in mine)
    found = cycles(graph)
    print(f"modules {len(modules)}")
    print(f"edges {sum(len(e) for e in graph.values())}")
    print(f"edges up or sideways the layers {len(up)} (allowed exceptions: {len(allowed)})")
    print(f"cycles {len(found)}" + "".join(f"\n  {' <-> '.join(c)}" for c in found))
    print(f"core modules {len(mine)}, lines {lines}")
    print(f"package lines {sum(len(s.splitlines()) for s in modules.values())}")


if __name__ == "__main__":
    main()
