"""Layers that point down: the layer order and its allowed exceptions are read from
docs/design.md, and every import in the package (deferred and type-only ones too) is checked
against them with the ast module: a module may import its own part of its layer and the layers
below, never a layer above, nor a sibling part of its layer (``a | b``: independent)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "vreact"
DESIGN = REPO / "docs" / "design.md"


def contract(text: str) -> tuple[list[list[str]], dict[tuple[str, str], str]]:
    """The layers, top first (each a list of independent members), and the allowed imports
    (importer, imported) -> reason, from the design's "Layers" section."""
    section = re.search(r"^## Layers.*?(?=^## )", text, re.M | re.S)
    assert section, "docs/design.md has no Layers section"
    block = re.search(r"^```\w*\n(.*?)^```", section.group(0), re.M | re.S)
    assert block, "the Layers section has no block of layers"
    layers = [re.split(r"\s{2,}", line.strip())[0].split(" | ") for line in block.group(1).splitlines()]
    allowed = {
        (m.group(1), m.group(2)): m.group(3)
        for m in re.finditer(r"^- `([\w.]+) -> ([\w.]+)`: (.+)$", section.group(0), re.M)
    }
    return layers, allowed


def sources() -> dict[str, str]:
    """Every module of the package by dotted name (a package by its own name)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path.read_text()
    return out


def imports(module: str, source: str, modules: set[str]) -> list[tuple[int, str]]:
    """(line, imported module) of every import of the package in ``source``, wherever it stands
    (``from X import name`` imports the module ``X.name`` when there is one)."""
    package = module if _is_package(module, modules) else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            out += [
                (node.lineno, f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base)
                for a in node.names
            ]
    return [(line, name) for line, name in dict.fromkeys(out) if name.split(".")[0] == PACKAGE.name]


def _is_package(module: str, modules: set[str]) -> bool:
    return any(m.startswith(module + ".") for m in modules)


def member_of(module: str, layers: list[list[str]]) -> tuple[int, str] | None:
    """(layer index, member) of a module: the longest member naming it or a package above it
    (the top package's own name stands for its ``__init__`` alone)."""
    found = [
        (i, m)
        for i, layer in enumerate(layers)
        for m in layer
        if module == m or (module.startswith(m + ".") and m != PACKAGE.name)
    ]
    return max(found, key=lambda f: len(f[1]), default=None)


def violations(
    modules: dict[str, str], layers: list[list[str]], allowed: dict[tuple[str, str], str]
) -> list[tuple[str, int, str, str]]:
    """Each import that points up or sideways and is not allowed: (module, line, imported, why)."""
    names = set(modules)
    members = {m: member_of(m, layers) for m in names}
    out = []
    for module, source in modules.items():
        here = members[module]
        assert here is not None, f"{module} is in no layer of docs/design.md"
        for line, name in imports(module, source, names):
            there = members.get(name)
            assert there is not None, f"{module}:{line} imports {name}, which is in no layer"
            if there[1] == here[1] or there[0] > here[0] or (module, name) in allowed:
                continue
            where = "above" if there[0] < here[0] else "a sibling of"
            out.append((module, line, name, f"{there[1]} is {where} {here[1]}"))
    return out


@pytest.fixture(scope="module")
def design() -> tuple[list[list[str]], dict[tuple[str, str], str]]:
    return contract(DESIGN.read_text())


def test_every_import_points_down_the_layers_of_the_design(design):
    layers, allowed = design
    assert violations(sources(), layers, allowed) == []


def test_each_allowed_exception_is_an_import_that_breaks_the_order_and_says_why(design):
    """No exception is kept once its import is gone or allowed by the order anyway; the
    deferred and the type-only ones are seen like any other import."""
    layers, allowed = design
    assert {(module, name) for module, _, name, _ in violations(sources(), layers, {})} == set(allowed)
    for (importer, imported), reason in allowed.items():
        assert len(reason.split()) >= 8, f"say why {importer} may import {imported}"


@pytest.mark.parametrize(
    "importer, planted, why",
    [
        ("vreact.model._base", "from vreact.records import Store", "vreact.records is above vreact.model"),
        ("vreact.v", "import vreact.cli._run", "vreact.cli is above vreact.v"),
        (
            "vreact.report.compute",
            "from vreact.quality.probe import paired",
            "vreact.quality is a sibling of vreact.report",
        ),
        (
            "vreact.verify.gates._generic",
            "from vreact.qa.gates import Artifact",
            "vreact.qa is above vreact.verify.gates",
        ),
    ],
)
def test_the_checker_finds_a_planted_import_that_points_up_or_sideways(design, importer, planted, why):
    layers, allowed = design
    modules = sources()
    deferred = f"\n\ndef _planted():\n    if TYPE_CHECKING:\n        {planted}\n"  # even hidden away
    modules[importer] += deferred
    imported = planted.split()[1]
    assert violations(modules, layers, allowed) == [
        (importer, len(modules[importer].splitlines()), imported, why)
    ]


def test_a_module_outside_every_layer_is_refused(design):
    layers, allowed = design
    with pytest.raises(AssertionError, match=r"vreact\.plugins is in no layer"):
        violations({**sources(), "vreact.plugins": ""}, layers, allowed)


# --- the core imports no family -----------------------------------------------------------------

#: The packages of task families that ship with vreact (a plugin's family is outside the package).
FAMILIES = ("vreact.qa", "vreact.code")


def core() -> list[str]:
    """The core's modules, as docs/design.md's "The core" names them."""
    section = re.search(r"^### The core.*?(?=^## )", DESIGN.read_text(), re.M | re.S)
    assert section, "docs/design.md has no section on the core"
    block = re.search(r"^```\w*\n(.*?)^```", section.group(0), re.M | re.S)
    assert block, "the core's section has no block of modules"
    return block.group(1).split()


def family_imports(modules: dict[str, str], named: list[str]) -> list[tuple[str, int, str]]:
    """Each import of a family package by a module of the core: (module, line, imported)."""
    names = set(modules)
    mine = [m for m in names if any(m == c or m.startswith(c + ".") for c in named)]
    return [
        (m, line, name)
        for m in sorted(mine)
        for line, name in imports(m, modules[m], names)
        if any(name == f or name.startswith(f + ".") for f in FAMILIES)
    ]


def test_the_core_imports_no_family():
    named = core()
    modules = sources()
    for c in named:  # every name is a module or package of vreact
        assert any(m == c or m.startswith(c + ".") for m in modules), c
    assert family_imports(modules, named) == []


def test_the_check_finds_a_family_imported_by_the_core():
    modules = sources()
    modules["vreact.controller._try"] += "\n\ndef _planted():\n    from vreact.qa._kit import QAKit\n"
    assert [(m, n) for m, _, n in family_imports(modules, core())] == [
        ("vreact.controller._try", "vreact.qa._kit")
    ]


def test_importing_the_core_loads_no_family():
    """The controller, the pipeline and the verifier, and every other module of the core."""
    code = (
        f"import sys, importlib; [importlib.import_module(m) for m in {core()!r}];"
        f" print(sorted(m for m in sys.modules if m.startswith({FAMILIES!r})))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# --- the core names no family ------------------------------------------------------------------

#: The built-in families' names (their packages' last part: ``qa``, ``code``).
FAMILY_NAMES = tuple(f.rpartition(".")[2] for f in FAMILIES)
#: Where the core may name one: the append-only migrations (history: records made before
#: families were question answering's), and these assignments of ``vreact.families``: the
#: default family, and the table of built-in families (to go when they are found by entry points).
NAMING_MODULES = ("vreact.records.migrations",)
NAMING_ASSIGNMENTS = {"vreact.families": ("DEFAULT",)}


def family_names(modules: dict[str, str], named: list[str]) -> list[tuple[str, int, str]]:
    """Each string constant of a core module that is a built-in family's name: (module, line,
    name), outside the migrations and the allowed assignments."""
    out = []
    for m in sorted(m for m in modules if any(m == c or m.startswith(c + ".") for c in named)):
        if m in NAMING_MODULES:
            continue
        tree = ast.parse(modules[m])
        allowed = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign | ast.AnnAssign)
            and any(
                isinstance(t, ast.Name) and t.id in NAMING_ASSIGNMENTS.get(m, ())
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            )
            for n in ast.walk(node)
        }
        out += [
            (m, node.lineno, node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in FAMILY_NAMES and id(node) not in allowed
        ]
    return sorted(out)


def test_the_core_names_no_family():
    """What differs between families is declared by the family (``TaskFamily``'s class
    variables and hooks), never decided in the core by a family's name."""
    assert family_names(sources(), core()) == []


def test_the_check_finds_a_family_named_by_the_core():
    modules = sources()
    planted = '\n\ndef _planted(report):\n    return report.family == "code"\n'
    modules["vreact.report.tables"] += planted
    modules["vreact.records.migrations"] += planted  # history: it may
    modules["vreact.families"] += '\nFALLBACK = "qa"\n'  # not an allowed assignment
    lines = {m: len(modules[m].splitlines()) for m in ("vreact.report.tables", "vreact.families")}
    assert family_names(modules, core()) == [
        ("vreact.families", lines["vreact.families"], "qa"),
        ("vreact.report.tables", lines["vreact.report.tables"], "code"),
    ]
