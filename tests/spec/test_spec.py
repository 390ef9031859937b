"""``vreact validate``: the shipped files pass; each kind of broken file fails with FILE:LINE."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import REPO
from vreact.cli import cli
from vreact.cli._validate import json_schemas
from vreact.spec import builtin_dir

SHIPPED = [
    REPO / "specs/musique.yaml",
    REPO / "verifiers/musique.yaml",
    REPO / "memory/roles.yaml",
    REPO / "experiments/pilot.yaml",
    REPO / "experiments/ablation.yaml",
    REPO / "experiments/dereact.yaml",
]


def validate(*paths: Path):
    return CliRunner().invoke(cli, ["validate", *map(str, paths)])


def test_shipped_files_are_valid():
    result = validate(*SHIPPED)
    assert result.exit_code == 0, result.output
    assert f"{len(SHIPPED)} file(s) valid" in result.output


def test_shipped_files_reference_their_schema():
    for path in SHIPPED:
        first = path.read_text().splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema=../schemas/")
        assert (path.parent / first.split("=", 1)[1]).resolve().is_file()


@pytest.mark.parametrize(
    "path",
    sorted(
        [
            *(REPO / "specs").glob("*.yaml"),
            *(REPO / "verifiers").glob("*.yaml"),
            REPO / "memory/roles.yaml",
            *(REPO / "experiments").glob("*.yaml"),
        ]
    ),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_every_shipped_file_passes_its_published_schema(path):
    """What an editor checks against the schema a file names on its first line: the short forms
    the loader reads (``- name``, ``- name: {arg: value}``) included."""
    import jsonschema
    import yaml

    schema = json.loads((path.parent / path.read_text().splitlines()[0].split("=", 1)[1]).read_text())
    errors = jsonschema.Draft202012Validator(schema).iter_errors(yaml.safe_load(path.read_text()))
    assert [f"{list(e.absolute_path)}: {e.message}" for e in errors] == []


def test_the_published_schema_still_refuses_what_the_loader_refuses():
    import jsonschema

    schema = json.loads((REPO / "schemas/verifiers.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    for gates in ([{"parses": {}, "non_empty": {}}], [7], [{"name": "parses", "colour": "red"}]):
        assert not validator.is_valid({"kind": "verifiers", "name": "x", "R1": {"gates": gates}}), gates
    assert validator.is_valid(
        {"kind": "verifiers", "name": "x", "R1": {"gates": ["parses", {"max_words": None}]}}
    )


def test_committed_schemas_match_the_models():
    """The shipped schemas have a branch per built-in family (a plugin family loaded by another
    test has none there)."""
    from vreact.families import built_in

    for kind, schema in json_schemas(list(built_in())).items():
        committed = json.loads((REPO / "schemas" / f"{kind}.schema.json").read_text())
        assert committed == schema, f"run: vreact schema --write schemas ({kind} drifted)"


def test_the_pilot_ladder_differs_one_component_at_a_time():
    from vreact.spec import builtin_configs

    ladder = builtin_configs()
    assert list(ladder) == ["N", "NP", "VG", "VPG", "VPGJ"]
    switches = ("planner", "guards", "gates", "judges", "critic", "context_manager")

    def diff(a: str, b: str) -> set[str]:
        return {s for s in switches if getattr(ladder[a], s) != getattr(ladder[b], s)}

    assert diff("N", "NP") == {"planner"}
    assert diff("VG", "VPG") == {"planner"}
    assert diff("VPG", "VPGJ") == {"judges"}


def write(tmp_path: Path, folder: str, text: str) -> Path:
    path = tmp_path / folder / ("roles.yaml" if folder == "memory" else "broken.yaml")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


VERIFIERS = """kind: verifiers
name: broken
R1:
  gates:
    - parses
    - non_emtpy
R3:
  gates: [answer_type]
"""


@pytest.mark.parametrize(
    "folder, text, line, field, message",
    [
        ("verifiers", VERIFIERS, 6, "R1.gates.1", "unknown gate 'non_emtpy'; did you mean 'non_empty'?"),
        (
            "verifiers",
            "kind: verifiers\nname: x\nR1:\n  gates:\n    - supported: {min_overlap: high}\n",
            5,
            "R1.gates.0",
            "min_overlap",
        ),
        (
            "verifiers",
            "kind: verifiers\nname: x\nR1:\n  gates:\n    - max_words: {limit: 3}\n",
            5,
            "R1.gates.0",
            "takes no argument 'limit'",
        ),
        (
            "specs",
            "kind: spec\nname: musique\ndescription: no requirements here\n",
            1,
            "requirements",
            "Field required",
        ),
        (
            "specs",
            "kind: spec\nname: m\nrequirements:\n  task: t\n  answer:\n    max_words: many\n",
            6,
            "requirements.answer.max_words",
            "valid integer",
        ),
        (
            "specs",
            "kind: spec\nname: m\nrequirements:\n  task: t\n  extra_thing: 1\n",
            5,
            "requirements.extra_thing",
            "unknown field",
        ),
        ("specs", "kind: spec\nname: m\nrequirements:\n  task: [unclosed\n", 5, "(yaml)", ""),
        (
            "experiments",
            "kind: experiment\nname: x\nconfigurations:\n  - {name: A}\n  - {name: A, gates: true}\n",
            3,
            "configurations",
            "configuration names repeat: A",
        ),
        (
            "experiments",
            "kind: experiment\nname: x\nconfigurations:\n  - {name: A, planer: true}\n",
            4,
            "configurations.0.planer",
            "unknown field",
        ),
        (
            "experiments",
            "kind: experiment\nname: x\nconfigurations:\n  - name: A\n    calls: {brain: {}}\n",
            5,
            "configurations.0.calls",
            "unknown role 'brain' (roles: planner, executor, judge, critic, context_manager, tester)",
        ),
        (
            "memory",
            "kind: roles\nroles:\n  executor:\n    reads: [subtask.objective, plan_text]\n",
            4,
            "roles.executor.reads",
            "unknown context field 'plan_text'",
        ),
    ],
)
def test_broken_files_fail_with_file_line_and_field(tmp_path, folder, text, line, field, message):
    path = write(tmp_path, folder, text)
    result = validate(path)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"{path}:{line}: {field}:"), lines[0]
    assert message in lines[0]
    assert "Traceback" not in result.output


def test_every_error_of_a_file_is_listed(tmp_path):
    path = write(tmp_path, "specs", "kind: spec\nname: 3\nrequirements:\n  answer: {max_words: 0}\n")
    lines = validate(path).output.strip().splitlines()
    assert len(lines) == 3  # name type, task missing, max_words >= 1
    assert all(line.startswith(f"{path}:") for line in lines)


def test_unknown_kind_and_missing_file(tmp_path):
    other = tmp_path / "thing.yaml"
    other.write_text("kind: recipe\n")
    assert "kind: must be one of spec, verifiers, roles" in validate(other).output
    missing = validate(tmp_path / "nope.yaml")
    assert missing.exit_code == 2 and "cannot read" in missing.output


def test_builtin_files_are_found_from_the_package():
    assert (builtin_dir("specs") / "musique.yaml").is_file()
    assert (builtin_dir("memory") / "roles.yaml").is_file()
