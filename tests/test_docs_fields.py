"""The declarative files' page names every field there is, so the docs cannot drift from the
schemas: docs/files.md has a section for each schema in schemas/; every field (property) of a
kind of file vreact reads (spec, verifiers, roles, experiment, models) is named in backticks in
its own section, and every field of the JSON it prints (report, reports, probe, replay, audit) on some
page of docs/; each table of fields there names the fields of one object of its schemas and
none it lacks (for the files read: all of its fields, with the schema's defaults, and every
object has its table); and the page's complete examples are valid files, its copies of shipped
files the files themselves."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.markdown import blocks, prose
from vreact.spec import KINDS, validate_files

DOCS = REPO / "docs"
PAGE = DOCS / "files.md"
SCHEMAS = REPO / "schemas"
#: The ``## `` section of docs/files.md that documents each schema's fields.
SECTIONS = {
    "spec": "Specs",
    "verifiers": "Verifier sets",
    "roles": "The role schema",
    "experiment": "Experiments",
    "models": "Models files",
    "report": "The report's JSON",
    "reports": "The report's JSON",
    "probe": "The probe's and the replay's JSON",
    "replay": "The probe's and the replay's JSON",
    "audit": "The audit's JSON",
}
#: The kinds of file vreact reads; the other schemas describe what it prints.
INPUTS = frozenset(KINDS)
#: A code span, and a field's name inside one (``{rejections, corrections}`` names two).
CODE = re.compile(r"`([^`\n]+)`")
NAME = re.compile(r"[\w@]+")
#: Where the shipped files a page may copy live.
SHIPPED = ("specs", "verifiers", "experiments", "memory")


def schemas() -> dict[str, dict[str, Any]]:
    """Every schema in schemas/, by kind."""
    return {
        p.name.removesuffix(".schema.json"): json.loads(p.read_text(encoding="utf-8"))
        for p in sorted(SCHEMAS.glob("*.schema.json"))
    }


def objects(schema: Any, where: str = "") -> dict[str, dict[str, Any]]:
    """Every object ``schema`` describes with properties, by where it is (``/`` for the top,
    ``/$defs/Attack``, ...), found wherever it is nested: a model's (``type: object``), not a
    family's branch that joins models and names its family (``anyOf`` ... ``allOf``)."""
    out: dict[str, dict[str, Any]] = {}
    if isinstance(schema, dict):
        if (
            isinstance(schema.get("properties"), dict)
            and schema["properties"]
            and schema.get("type") == "object"
        ):
            out[where or "/"] = schema
        for key, value in schema.items():
            out |= objects(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            out |= objects(value, f"{where}/{i}")
    return out


def field_names(schema: dict[str, Any]) -> set[str]:
    """The name of every property of every object of ``schema``."""
    return {name for obj in objects(schema).values() for name in obj["properties"]}


def sections(text: str) -> dict[str, str]:
    """The text under each ``## `` heading (its ``###`` parts with it), by the heading's title."""
    out: dict[str, list[str]] = {}
    title = None
    for line in prose(text).splitlines():
        if line.startswith("## "):
            title = line[3:].strip()
            out[title] = []
        elif title is not None:
            out[title].append(line)
    return {t: "\n".join(lines) for t, lines in out.items()}


def undocumented(names: set[str], text: str, whole: bool) -> list[str]:
    """The ``names`` that ``text`` does not put in backticks: each as a code span of its own
    (``whole``), or as any name inside one."""
    found = set(CODE.findall(prose(text)))
    if not whole:
        found = {name for span in found for name in NAME.findall(span)}
    return sorted(names - found)


def tables(text: str) -> list[list[dict[str, str]]]:
    """The tables of fields in ``text``, those whose first column is headed ``field``: each as
    its rows, a row as its cells by their column's heading."""
    out: list[list[dict[str, str]]] = []
    header: list[str] | None = None
    rows: list[dict[str, str]] = []
    for line in [*prose(text).splitlines(), ""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header, rows = cells, []
            elif not set(line) <= set("|-: "):  # not the line under the header
                rows.append(dict(zip(header, cells, strict=False)))
            continue
        if header and header[0] == "field":
            out.append(rows)
        header = None
    return out


def _same(a: Any, b: Any) -> bool:
    """Equal values, a boolean never equal to a number."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def default_problem(field: str, cell: str, prop: dict[str, Any], required: bool) -> str | None:
    """What is wrong with a field's default as a table gives it: ``required`` for a required
    field, else the schema's default as a code span (YAML), when the schema gives one."""
    import yaml

    if required or cell == "required":
        return None if required and cell == "required" else f"{field}: required is {required}, not {cell!r}"
    if "default" in prop:
        span = CODE.fullmatch(cell)
        if span is None or not _same(yaml.safe_load(span.group(1)), prop["default"]):
            return f"{field}: the default is {json.dumps(prop['default'])}, not {cell!r}"
    return None


def table_problems(documented: dict[str, dict[str, Any]], text: str, exact: bool) -> list[str]:
    """What is wrong with the tables of fields of ``text`` (a section) against the schemas it
    documents: each must name the fields of one of their objects (all of them when ``exact``,
    else some), and give the defaults when it has a ``default`` column; when ``exact``, every
    object must have its table."""
    objs = {f"{kind}:{where}": o for kind, s in documented.items() for where, o in objects(s).items()}
    problems: list[str] = []
    covered: set[str] = set()
    for rows in tables(text):
        spans = [CODE.fullmatch(r.get("field", "")) for r in rows]
        if not rows or None in spans:
            problems.append(f"a table of fields whose field column is not one code span a row: {rows[:2]}")
            continue
        fields = [s.group(1) for s in spans if s is not None]
        names = set(fields)
        props_of = {key: set(obj["properties"]) for key, obj in objs.items()}
        matches = [key for key, props in props_of.items() if (names == props if exact else names <= props)]
        if not matches:
            key = max(props_of, key=lambda k: len(names & props_of[k]) / len(names | props_of[k]))
            props = props_of[key]
            extra, lacking = sorted(names - props), sorted(props - names) if exact else []
            problems.append(
                f"the table of {', '.join(fields[:3])}, ...: closest to {key}"
                + (f", which has no {extra}" if extra else "")
                + (f", which also has {lacking}" if lacking else "")
            )
            continue
        covered.update(matches)
        obj = objs[matches[0]]
        if "default" in rows[0]:
            for field, row in zip(fields, rows, strict=True):
                required = field in obj.get("required", [])
                problem = default_problem(field, row["default"], obj["properties"][field], required)
                problems += [f"{matches[0]}: {problem}"] if problem else []
    if exact:
        problems += [f"{key}: no table of its fields" for key in objs if key not in covered]
    return problems


@pytest.fixture(scope="module")
def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def test_every_schema_has_its_section(page):
    """A new schema needs a section of the page (and its line in SECTIONS)."""
    assert sorted(schemas()) == sorted(SECTIONS)
    assert set(SECTIONS) >= INPUTS
    assert sorted(set(SECTIONS.values()) - set(sections(page))) == []
    assert page.startswith("# Declarative files\n")


def test_every_field_of_a_declarative_file_is_in_its_section(page):
    """Each field an input file may have, in backticks of its own (`max_words`) in the section
    of its kind."""
    by_title = sections(page)
    missing = {
        kind: undocumented(field_names(schema), by_title[SECTIONS[kind]], whole=True)
        for kind, schema in schemas().items()
        if kind in INPUTS
    }
    assert {kind: names for kind, names in missing.items() if names} == {}


def test_every_field_of_the_printed_json_is_on_a_page():
    """Each field of ``vreact report --json`` (and of ``--run all``, ``probe --json``, ``replay
    --json``), in backticks on some page of docs/ (its own code span, or one that lists fields)."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md")))
    missing = {
        kind: undocumented(field_names(schema), text, whole=False)
        for kind, schema in schemas().items()
        if kind not in INPUTS
    }
    assert {kind: names for kind, names in missing.items() if names} == {}


def test_the_tables_of_fields_are_the_schemas(page):
    """Each table names the fields of one object of its section's schemas (an input file's: all
    of them, with their defaults, every object with a table); a field gone from a schema, or a
    default changed, fails here."""
    all_schemas, by_title = schemas(), sections(page)
    problems = {}
    for title in dict.fromkeys(SECTIONS.values()):
        kinds = [k for k, t in SECTIONS.items() if t == title]
        documented = {k: all_schemas[k] for k in kinds}
        problems[title] = table_problems(documented, by_title[title], exact=bool(INPUTS & set(kinds)))
    assert {title: p for title, p in problems.items() if p} == {}


def yaml_blocks(text: str) -> list[str]:
    """The fenced ``yaml`` blocks of ``text``."""
    return [body + "\n" for _, body in blocks(text, "yaml")]


def test_the_examples_are_valid_files(page, tmp_path: Path):
    """Every example that is a whole file (it says its ``kind``) passes ``vreact validate``, and
    one that names its schema as the shipped files do is a shipped file, as it is."""
    shipped = {p.read_text(encoding="utf-8") for d in SHIPPED for p in (REPO / d).glob("*.yaml")}
    whole = [b for b in yaml_blocks(page) if re.search(r"^kind: \w+$", b, re.M)]
    assert len(whole) >= len(INPUTS)
    errors = []
    for i, block in enumerate(whole):
        path = tmp_path / f"example_{i}.yaml"
        path.write_text(block, encoding="utf-8")
        errors += validate_files([path])
        if block.startswith("# yaml-language-server:") and block not in shipped:
            errors.append(f"example {i} ({block.splitlines()[1]}) is not a shipped file as it is")
    assert errors == []


def test_the_checks_find_what_they_look_for():
    """A planted field is reported missing, wherever it is nested; a field named outside
    backticks or only in a code block is not documented; a table with a field the schema lacks,
    or a wrong default, is reported, and so is an object without a table."""
    planted = "planted" + "_field"  # written in pieces, so no page names it
    inner = {"type": "object", "properties": {planted: {"type": "string"}}, "required": [planted]}
    schema = {
        "type": "object",
        "properties": {"kind": {"default": "x"}, "max_words": {"default": 15}},
        "$defs": {"Inner": inner},
        # a family's branch: the models it joins have their tables, it has none of its own
        "anyOf": [{"allOf": [{"$ref": "#/$defs/Inner"}], "properties": {"family": {"const": "f"}}}],
    }
    assert field_names(schema) == {"kind", "max_words", planted}
    assert sorted(objects(schema)) == ["/", "/$defs/Inner"]
    text = f"`kind`, `max_words` and {planted}\n```yaml\n# `{planted}`\n```\n"
    assert undocumented(field_names(schema), text, whole=True) == [planted]
    listed = "`{rejections, corrections}`, `pass@1_se`"
    assert undocumented({"pass@1", "corrections"}, listed, whole=False) == ["pass@1"]
    assert undocumented({"max_words"}, "`answer.max_words`", whole=True) == ["max_words"]

    head = "| field | type | default | meaning |\n|---|---|---|---|\n"
    section = (
        f"{head}| `kind` | string | `y` | the kind |\n| `max_words` | integer | `15` | words |\n\n"
        f"{head}| `{planted}` | string | required | planted |\n| `gone` | string | `1` | not there |\n"
    )
    problems = table_problems({"k": schema}, section, exact=True)
    assert any('kind: the default is "x"' in p for p in problems), problems
    assert any("which has no ['gone']" in p for p in problems), problems
    assert "k:/$defs/Inner: no table of its fields" in problems
    assert not any("max_words" in p for p in problems)
    some = f"{head}| `max_words` | integer | `15` | words |\n"
    assert table_problems({"k": schema}, some, exact=False) == []
