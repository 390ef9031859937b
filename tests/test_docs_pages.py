"""The documentation pages say what the command line and the API really do: the synopsis of
docs/cli.md lists every command of ``vreact`` with exactly its options, every ``vreact`` command
line the pages and the README show parses, the Python example of docs/api.md runs, the glossary
of docs/concepts.md defines the report's words, and the claims the docs once got wrong stay right
(what ``--concurrency`` bounds, the roles ``--role-model`` takes, demo's options, the kinds
``validate`` checks and the schemas ``schema`` writes). The README's own commands run, in order,
in tests/test_readme.py."""

from __future__ import annotations

import copy
import os
import re
import shlex
import subprocess
import sys

import click
import pytest

from tests.conftest import REPO
from tests.markdown import blocks, section
from vreact.cli import cli
from vreact.config import CALL_ROLES

DOCS = REPO / "docs"
#: The pages a user reads: the README and docs/ (not the evidence reports, which quote runs).
PAGES = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
#: The options every command has, which the synopsis leaves out.
HELP = {"-h", "--help"}
#: A flag in a synopsis entry or a command line: ``--name`` or ``-x``, not inside a word.
FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
#: What may name a command (and not a metavar, a flag or an optional part) in a synopsis entry.
WORD = re.compile(r"[a-z][a-z0-9-]*")


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def docs() -> str:
    """Every page a user reads, one after the other."""
    return "\n\n".join(p.read_text(encoding="utf-8") for p in PAGES)


@pytest.fixture(scope="module")
def cli_page() -> str:
    return page("cli.md")


def fenced(text: str, info: str | None = None) -> list[str]:
    """The bodies of the fenced blocks of ``text`` (those whose info string is ``info``, if given)."""
    return [body for _, body in blocks(text, info)]


# --- the synopsis -----------------------------------------------------------------------------


def synopsis(text: str) -> dict[tuple[str, ...], str]:
    """The synopsis' entries: the first fenced block under docs/cli.md's ``## Synopsis``, one entry
    per command; an entry starts with ``vreact`` and goes on over the indented lines after it. Each
    is keyed by its command path (``("cache", "path")``; the group itself is ``()``)."""
    blocks = fenced(section(text, "Synopsis"))
    assert blocks, "the Synopsis section has no fenced code block"
    entries: dict[tuple[str, ...], str] = {}
    key: tuple[str, ...] | None = None
    for line in blocks[0].splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.startswith("vreact") and (line == "vreact" or line[6] == " "):
            words = line.split()[1:]
            path = []
            for word in words:
                if not WORD.fullmatch(word):
                    break
                path.append(word)
            key = tuple(path)
            assert key not in entries, f"the synopsis lists 'vreact {' '.join(key)}' twice"
            entries[key] = line
        else:
            assert key is not None and line[:1].isspace(), f"not a synopsis line: {line!r}"
            entries[key] += " " + line.strip()
    return entries


def commands(group: click.Group = cli, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], click.Command]:
    """Every command of the command line by its path, groups (and ``vreact`` itself) included."""
    out: dict[tuple[str, ...], click.Command] = {path: group}
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            out.update(commands(command, (*path, name)))
        else:
            out[(*path, name)] = command
    return out


def flags(command: click.Command) -> set[str]:
    """The command's option flags (every spelling of each), but help."""
    return {
        flag for p in command.params if isinstance(p, click.Option) for flag in (*p.opts, *p.secondary_opts)
    } - HELP


def differences(
    entries: dict[tuple[str, ...], str], cli_commands: dict[tuple[str, ...], click.Command]
) -> list[str]:
    """Where the synopsis and the command line disagree: a command it leaves out, one it names
    that does not exist, an option (or argument) of a command its entry leaves out, and an
    option its entry names that the command lacks."""
    out = []
    for path, command in cli_commands.items():
        name = " ".join(("vreact", *path))
        entry = entries.get(path)
        if entry is None:
            # a group needs an entry of its own only for options of its own (vreact --version);
            # else its subcommands' entries name it
            if not isinstance(command, click.Group) or flags(command):
                out.append(f"{name}: not in the synopsis")
            continue
        named = set(FLAG.findall(entry))
        out += [f"{name}: {f} is not in its synopsis entry" for f in sorted(flags(command) - named)]
        out += [f"{name}: the synopsis names {f}, which it lacks" for f in sorted(named - flags(command))]
        for p in command.params:
            if isinstance(p, click.Argument):
                argument = p.human_readable_name
                if not re.search(rf"(?<![A-Z_]){re.escape(argument)}(?![A-Z_])", entry):
                    out.append(f"{name}: its argument {argument} is not in its synopsis entry")
    out += [
        f"vreact {' '.join(path)}: in the synopsis, not a command"
        for path in entries
        if path not in cli_commands
    ]
    return out


def test_the_synopsis_lists_every_command_with_exactly_its_options(cli_page):
    assert differences(synopsis(cli_page), commands()) == []


def test_the_synopsis_check_finds_what_it_looks_for(cli_page):
    """A new option of a command, a command missing from the synopsis, an option or a command
    the synopsis names that the command line lacks: each is found."""
    entries, real = synopsis(cli_page), commands()
    grown = dict(real)
    run = copy.copy(real[("run",)])
    run.params = [*run.params, click.Option(["--brand-new"])]
    grown[("run",)] = run
    assert differences(entries, grown) == ["vreact run: --brand-new is not in its synopsis entry"]

    without_models = {k: v for k, v in entries.items() if k != ("models",)}
    assert differences(without_models, real) == ["vreact models: not in the synopsis"]

    planted = {**entries, ("report",): entries[("report",)] + " [--nonsense]", ("fly",): "vreact fly"}
    assert differences(planted, real) == [
        "vreact report: the synopsis names --nonsense, which it lacks",
        "vreact fly: in the synopsis, not a command",
    ]
    no_argument = {**entries, ("view",): "vreact view [--run ID] [--out FILE] [--plugin MODULE ...]"}
    assert differences(no_argument, real) == [
        "vreact view: its argument RUN_DIR is not in its synopsis entry"
    ]


# --- the command lines it shows ---------------------------------------------------------------

#: How a shell line starts when it runs vreact.
VREACT = re.compile(r"^(?:\.venv/bin/)?vreact\s")


def command_lines(text: str) -> list[str]:
    """Every ``vreact`` command line of a page's shell blocks (```sh), continuation lines
    joined; a line's shell tail (``&``, ``|``, ``>``, ``&&``, ``;``, a comment) is cut off."""
    out = []
    for block in fenced(text, "sh"):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.strip()
            if VREACT.match(line):
                out.append(re.split(r"\s(?:&&|[&|;>]|#)(?:\s|$)", line + " ", maxsplit=1)[0].strip())
    return out


def inert(command: click.Command) -> click.Command:
    """``command`` with no parameter callbacks (``--plugin`` imports its module while parsing)."""
    out = copy.copy(command)
    out.params = [copy.copy(p) for p in command.params]
    for p in out.params:
        p.callback = None
    return out


def parses(line: str) -> None:
    """Parse ``line`` as the command line would, without running the command: unknown options,
    missing arguments and values of the wrong type raise ``click.UsageError``."""
    args = shlex.split(line)[1:]
    group: click.Command = cli
    ctx = inert(cli).make_context("vreact", args)
    while isinstance(group, click.Group):
        left = [*getattr(ctx, "_protected_args", ()), *ctx.args]  # the command and its arguments
        assert left, f"{line}: names no command"
        name, *rest = left
        command = group.get_command(ctx, name)
        assert command is not None, f"{line}: no command {name!r}"
        ctx = inert(command).make_context(name, rest, parent=ctx)
        group = command


def test_every_vreact_command_line_in_the_pages_parses(docs):
    lines = command_lines(docs)
    assert len(lines) >= 20  # the shell blocks are found
    bad = []
    for line in lines:
        try:
            parses(line)
        except (click.UsageError, AssertionError) as e:
            bad.append(f"{line}: {e}")
    assert bad == []


def test_the_command_line_check_finds_a_wrong_line():
    for line in ("vreact run --configs N,VG", "vreact run --dataset x --colour red", "vreact fly"):
        with pytest.raises((click.UsageError, AssertionError)):
            parses(line)
    parses("vreact cache path --cache-dir /tmp/c")


# --- the Python example -----------------------------------------------------------------------


def test_the_python_example_runs_and_prints_what_the_page_says(tmp_path):
    """The first ```python block of docs/api.md, run as a script in an empty folder (a
    subprocess: its gate and member register in a process of their own)."""
    api = page("api.md")
    [example, *_] = fenced(api, "python")
    (tmp_path / "example.py").write_text(example)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines()
    assert "N: correct 0, silent errors 1, corrections by gate 0" in printed
    assert "VG: correct 1, silent errors 0, corrections by gate 1" in printed
    assert "N answer 'Marlow, Edwin' []" in printed
    assert (
        "VG answer 'Edwin Marlow' [('guard', 'L3', 'short_queries', 'long_query'),"
        " ('gate', 'L1', 'answer_in_cited', 'not_stated')]"
    ) in printed
    # the page shows what it prints
    for line in printed:
        assert line in api, line


# --- the glossary and what the pages may not say ---------------------------------------------


def test_the_glossary_defines_the_reports_words():
    glossary = section(page("concepts.md"), "Glossary")
    for term in ("N", "VG", "VG+chain", "Pass@1", "Pass@k", "coverage", "silent error", "selective accuracy"):
        assert f"**{term}**" in glossary, term


def test_no_internal_references(docs):
    # the papers are cited by title, the work by commit, never by the team's folders or issue numbers
    assert re.findall(r"\bseeds/|\.\./shared|issue [0-9]", docs) == []
    assert re.findall(r"(?<![\w.~-])/(?:work|tmp|root|home)/", docs) == []


# --- claims it once got wrong -----------------------------------------------------------------


def option(command: tuple[str, ...], flag: str) -> click.Option:
    [found] = [p for p in commands()[command].params if isinstance(p, click.Option) and flag in p.opts]
    return found


def test_concurrency_bounds_attempts_and_endpoint_concurrency_requests(docs):
    assert "attempts in flight" in (option(("run",), "--concurrency").help or "")
    assert "per endpoint" in (option(("run",), "--endpoint-concurrency").help or "")
    # every phrase of the pages about --concurrency, up to the next flag or the end of the clause
    said = [
        m.group(1)
        for m in re.finditer(r"(?<![\w-])--concurrency\b([^;.]*?)(?=--|[;.]|$)", docs, re.MULTILINE)
    ]
    assert said and not [s for s in said if re.search(r"request|per server|per endpoint", s)]


def test_role_model_names_every_role(docs):
    for command in (("run",), ("demo",)):
        text = option(command, "--role-model").help or ""
        assert [r for r in CALL_ROLES if r not in text] == []
    assert "planner, executor, judge)" not in docs


def test_demo_is_described_by_its_own_options(docs):
    assert "same options as run" not in docs.lower()
    run, demo = flags(commands()[("run",)]), flags(commands()[("demo",)])
    assert run - demo == {
        *("--dataset", "--format", "--fields", "--task-ids", "--attempts", "--seed", "--concurrency"),
        *("--cache-only", "--sandbox"),
        *("--backend", "--ray-address", "--dry-run"),
    }
    for flag in run - demo:
        assert flag in (commands()[("demo",)].help or "")


def test_validate_names_every_kind_of_file():
    from vreact.spec import KINDS

    text = commands()[("validate",)].help or ""
    assert [kind for kind in KINDS if kind not in text] == []


def test_schema_writes_the_schemas_the_pages_name(docs):
    from vreact.cli._validate import json_schemas

    kinds = list(json_schemas())
    assert sorted(p.name for p in (REPO / "schemas").glob("*.schema.json")) == sorted(
        f"{k}.schema.json" for k in kinds
    )
    assert [k for k in kinds if f"schemas/{k}.schema.json" not in docs] == []
    text = commands()[("schema",)].help or ""
    assert [k for k in kinds if k not in text] == []
