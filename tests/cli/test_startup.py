"""Start-up (issue 14, target 5): ``vreact --help`` and ``vreact validate`` import only what
they use, so neither loads networkx, numpy, the model SDKs, sqlite_utils, rank_bm25 or the
report; the command list ``--help`` prints without importing the commands is their own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from vreact.cli import COMMANDS, cli

REPO = Path(__file__).resolve().parents[2]
SHIPPED = [
    str(p) for d in ("specs", "verifiers", "memory", "experiments") for p in sorted((REPO / d).glob("*.yaml"))
]

#: What neither command needs (each costs 0.05-0.2 s to import).
HEAVY = ("networkx", "numpy", "openai", "anthropic", "httpx", "sqlite_utils", "rank_bm25", "llama_cpp", "ray")

PROBE = """
import json, sys
sys.argv[0] = "vreact"
from vreact.cli import main
try:
    main()
except SystemExit as e:
    code = e.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.__stderr__)
"""


def imported_by(*args: str) -> tuple[int, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    probe = json.loads(done.stderr.strip().splitlines()[-1])
    return probe["code"], set(probe["modules"])


@pytest.mark.parametrize("args", [["--help"], ["validate", *SHIPPED]], ids=["help", "validate"])
def test_help_and_validate_import_no_heavy_package(args):
    code, modules = imported_by(*args)
    assert code in (0, None)
    heavy = sorted({m.split(".")[0] for m in modules} & set(HEAVY))
    assert heavy == [], f"vreact {args[0]} imported {heavy}"
    ours = {m for m in modules if m.startswith("vreact.")}
    assert not {m for m in ours if m.startswith(("vreact.report", "vreact.records", "vreact.experiment"))}
    if args == ["--help"]:
        assert "pydantic" not in modules and "rich" not in modules
        assert ours == {"vreact.cli"}  # no command module either


def eager_group() -> click.Group:
    """The group as it was before the commands were imported lazily: every command added."""
    group = click.Group("vreact", help=cli.help, params=cli.params, context_settings=cli.context_settings)
    for name in COMMANDS:
        group.add_command(cli.get_command(click.Context(cli), name))  # type: ignore[arg-type]
    return group


@pytest.mark.parametrize("width", [80, 50, 120])
def test_the_lazy_command_list_is_the_commands_own(width, monkeypatch):
    lazy = CliRunner().invoke(cli, ["--help"], terminal_width=width, prog_name="vreact")
    eager = CliRunner().invoke(eager_group(), ["--help"], terminal_width=width, prog_name="vreact")
    assert lazy.exit_code == eager.exit_code == 0
    assert lazy.output == eager.output
    for name, (module, first) in COMMANDS.items():
        command = cli.get_command(click.Context(cli), name)
        assert command is not None and command.callback is not None
        assert command.callback.__module__ == module
        own = " ".join((command.help or "").split("\n\n")[0].split())
        assert own == first, f"COMMANDS[{name!r}] is not the first paragraph of its help"


def test_every_command_runs_its_help():
    for name in COMMANDS:
        result = CliRunner().invoke(cli, [name, "--help"])
        assert result.exit_code == 0, result.output
        assert f"Usage: vreact {name}" in result.output or f"Usage: cli {name}" in result.output


def test_an_unknown_command_is_still_a_usage_error():
    result = CliRunner().invoke(cli, ["nonsense"])
    assert result.exit_code == 2 and "No such command 'nonsense'" in result.output
