"""Tools a user registers (``@vreact.tool``): the registry, the configuration's ``tools``, the
shipped ``date_diff``, and a lab's own tool in a module outside the package, run with the mock
model in process and from the command line (``--plugin``) against a loopback server, through
the critic."""

from __future__ import annotations

import json
import os
import re
import textwrap
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

from tests.attacks.obedient import steps_taken
from tests.conftest import FULL
from tests.fakes.scripted_server import ScriptedServer
from tests.helpers import attempt, by_role, cli, criticised, finish, role_of
from vreact.config import Configuration
from vreact.qa.tools import parse_date
from vreact.records import DB_NAME, Store
from vreact.registry import load_plugin
from vreact.tools import ToolContext, UnknownTool, tool, tool_names, tool_of

NISSEDAL = "2hop__269805_135710"
LAB = textwrap.dedent(
    '''
    """A lab's own tool: a paragraph looked up by its exact title."""
    import vreact
    from vreact.tools import ToolContext


    @vreact.tool("lookup")
    def lookup(title: str, ctx: ToolContext) -> str:
        """input is a paragraph's exact title; you get that paragraph"""
        for p in ctx.corpus:  # id, title, text: never the dataset's labels
            if p.title == title:
                ctx.retrieved.add(p.id)  # a finish may cite it
                return f"[{p.id}] {p.title}: {p.text}"
        return f"no paragraph is titled {title!r}"
    '''
)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lab's module, loaded in this process as a file plugin (the tool ``lookup``)."""
    path = tmp_path_factory.mktemp("lab") / "lab_tools.py"
    path.write_text(LAB)
    load_plugin(str(path))
    return path


def titles(task: Any, *ids: str) -> list[str]:
    by_id = {str(p.idx): p.title for p in task.paragraphs}
    return [by_id[i] for i in ids]


def lookup(title: str) -> dict[str, Any]:
    return {"thought": "", "action": "lookup", "input": title, "evidence": []}


# --- the registry -----------------------------------------------------------------------------


def test_a_tools_arguments_are_its_parameters_and_bad_ones_are_its_observation() -> None:
    @tool("test_span")
    def span(start: int, end: int = 10) -> str:
        """input is {"start": n, "end": m}; you get the numbers between"""
        if start > end:
            raise ValueError("start after end")
        return " ".join(map(str, range(start, end)))

    t = tool_of("test_span")
    assert t.parameters["required"] == ["start"] and t.input_key is None
    assert t.description.startswith("input is {")
    assert t.run('{"start": 7}', ToolContext()) == "7 8 9"
    assert t.run("7", ToolContext()) == "test_span: bad arguments (input is not a JSON object of start, end)"
    assert "start: Input should be a valid integer" in t.run('{"start": "x"}', ToolContext())
    assert "stop: Extra inputs are not permitted" in t.run(
        '{"start": 1, "stop": 2}', ToolContext()
    )  # no argument it lacks
    assert t.run('{"start": 9, "end": 1}', ToolContext()) == "test_span failed: ValueError: start after end"
    assert tool_of("search").input_key == "query" and tool_of("read").input_key == "id"
    assert {"search", "read", "date_diff"} <= set(tool_names())
    with pytest.raises(UnknownTool, match="did you mean 'date_diff'"):
        tool_of("date_dif")
    with pytest.raises(TypeError, match="no type annotation"):
        tool("test_bad")(lambda x: x)


@pytest.mark.parametrize(
    "given, error",
    [
        ({"tools": ["search", "serch"]}, "unknown tool 'serch'; did you mean 'search'"),
        ({"tools": ["search", "finish"]}, "an action of every step"),
        ({"tools": ["read", "read"]}, "named twice"),
        ({"tools": []}, "at least 1"),
        ({"tools": ["read"], "designer": {"first_search": "question"}}, "tools must name search"),
    ],
)
def test_a_configurations_tools_are_registered_names(given: dict[str, Any], error: str) -> None:
    """``tools`` is question answering's step setting: its family validates it."""
    from vreact.families import family_of
    from vreact.spec import steps_of

    with pytest.raises(ValueError, match=error):
        steps_of(family_of("qa"), Configuration.model_validate({"name": "X", **given}))


def test_tools_is_a_setting_of_question_answerings_steps(tmp_path: Path) -> None:
    experiment = tmp_path / "code.yaml"
    experiment.write_text(
        "kind: experiment\nname: c\ndataset: {family: code, path: humaneval}\n"
        "configurations: [{name: N, tools: [search]}]\nmodels: {default: openai/x}\n"
    )
    out = cli("validate", str(experiment))
    assert out.returncode != 0
    assert "code.yaml:4: configurations.0.tools:" in out.stderr and "not of 'code'" in out.stderr
    assert "Traceback" not in out.stderr


# --- date_diff --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, parsed",
    [
        ("5 May 1932", (1932, 5, 5)),
        ("May 5, 1932", (1932, 5, 5)),
        ("1932-05-05", (1932, 5, 5)),
        ("Sept. 1932", (1932, 9, 0)),
        ("1932", (1932, 0, 0)),
        ("14 February 850", (850, 2, 14)),
    ],
)
def test_dates_are_read_as_paragraphs_write_them(text: str, parsed: tuple[int, int, int]) -> None:
    assert parse_date(text).key() == parsed


def test_date_diff_says_which_date_is_earlier_and_by_how_much() -> None:
    diff = tool_of("date_diff")
    out = diff.run(json.dumps({"first": "12 June 1950", "second": "May 5, 1932"}), ToolContext())
    assert out == "the second date, 5 May 1932, is earlier than 12 June 1950, by 18 years (6612 days)"
    out = diff.run(json.dumps({"first": "1901", "second": "3 March 1930"}), ToolContext())
    assert out == "the first date, 1901, is earlier than 3 March 1930, by about 29 years"
    out = diff.run(json.dumps({"first": "1 May 1900", "second": "1 May 1900"}), ToolContext())
    assert out == "1 May 1900 and 1 May 1900 are the same date"
    out = diff.run(json.dumps({"first": "last spring", "second": "1930"}), ToolContext())
    assert out.startswith("date_diff: bad arguments (cannot read 'last spring' as a date")
    out = diff.run(json.dumps({"first": "31 February 1930", "second": "1930"}), ToolContext())
    assert "is not a date in the calendar" in out
    out = diff.run(json.dumps({"first": "1930", "second": "5 May 1930"}), ToolContext())
    assert out.startswith("cannot tell which is earlier: 1930 and 5 May 1930")
    out = diff.run(json.dumps({"first": "5 May 1930", "second": "May 1935"}), ToolContext())
    assert out == "the first date, 5 May 1930, is earlier than May 1935, by about 5 years"
    for vague in ("500 BC", "the 1930s", "20th century"):
        out = diff.run(json.dumps({"first": vague, "second": "1930"}), ToolContext())
        assert out.startswith(f"date_diff: bad arguments (cannot read {vague!r} as a date"), out


class Unit(Enum):
    DAYS = "days"
    YEARS = "years"


def test_a_tools_schema_is_whole_where_the_step_schema_holds_it() -> None:
    """An argument of a nested type is inlined (a ``$ref`` into the tool's own ``$defs`` would
    not resolve inside the step's schema), and a name must be one every provider takes."""
    from vreact.qa.roles.executor import step_schema

    @tool("test_span_in")
    def span_in(first: str, second: str, unit: Unit = Unit.YEARS) -> str:
        """the time between two dates in a unit"""
        return unit.value  # the validated value, not its dump

    schema = json.dumps(step_schema(tools=("search", "test_span_in")))
    assert "$ref" not in schema and "$defs" not in schema and '"enum": ["days", "years"]' in schema
    assert (
        tool_of("test_span_in").run('{"first": "1", "second": "2", "unit": "days"}', ToolContext()) == "days"
    )
    with pytest.raises(TypeError, match="letters, digits"):
        tool("date diff")


# --- a lab's tool, with the mock model --------------------------------------------------------


def test_a_lab_tool_runs_as_a_step_and_its_paragraph_may_be_cited(
    lab: Path, task_nissedal: Any, store: Store, spec: Any, verifiers: Any, roles: Any
) -> None:
    a, b = titles(task_nissedal, "10", "6")
    config = Configuration(name="VG", gates=True, guards=True, tools=["lookup", "read"])
    script = [lookup(a), lookup(b), finish("north", ["10", "6"])]
    _outcome, row, model = attempt(config, task_nissedal, script, store, spec, verifiers, roles)
    assert (row["outcome"], row["answer"]) == ("answer", "north")  # evidence_retrieved took them
    steps = list(store.query("select action, input, observation, seconds from steps order by id"))
    assert [s["action"] for s in steps] == ["lookup", "lookup", "finish"]
    assert steps[0]["input"] == a and steps[0]["observation"].startswith(f"[10] {a}: ")
    assert steps[0]["seconds"] >= 0 and steps[2]["seconds"] is None  # a final runs no tool
    from vreact.records import read_run
    from vreact.report.compute import retrieved

    [recorded] = read_run(store.path.parent).attempts
    assert retrieved(recorded.steps) == {"10", "6"}  # what it showed counts for the ceiling
    system = model.calls[0][0]["content"]
    assert "- lookup: input is a paragraph's exact title; you get that paragraph\n" in system
    assert '"action": "lookup|read|finish|abstain"' in system and "- search:" not in system
    assert model.schemas[0]["properties"]["action"]["enum"] == ["lookup", "read", "finish", "abstain"]


def test_the_critic_blocks_a_lab_tools_call_and_the_block_is_recorded(
    lab: Path, task_nissedal: Any, store: Store, spec: Any, verifiers: Any, roles: Any
) -> None:
    a, b = titles(task_nissedal, "10", "6")
    config = Configuration(name="VGC", gates=True, guards=True, critic=True, tools=["lookup", "read"])
    model = by_role(
        executor=[lookup("Oslo"), lookup(a), lookup(b), finish("north", ["10", "6"])],
        critic=[criticised("reject", 0.9, "Oslo is not in the question")] + [criticised()] * 3,
    )
    _, row, _ = attempt(config, task_nissedal, model, store, spec, verifiers, roles)
    assert row["outcome"] == "answer"
    [_blocked] = store.query("select cause from verdicts where check_name = 'critic' and decision = 'reject'")
    steps = list(store.query("select action, input, observation from steps order by id"))
    assert steps[0]["action"] == "lookup" and steps[0]["input"] == "Oslo"
    assert "Oslo is not in the question" in steps[0]["observation"]  # it never ran
    assert not any("no paragraph is titled" in s["observation"] for s in steps)


# --- a lab's tool, from the command line ------------------------------------------------------


def test_a_lab_tool_from_the_command_line_against_a_loopback_server(tmp_path: Path, full_tasks: Any) -> None:
    (tmp_path / "lab_tools.py").write_text(LAB)
    task = next(t for t in full_tasks if t.id == NISSEDAL)
    a, b = titles(task, "10", "6")
    executor = iter([lookup("Oslo"), lookup(a), lookup(b), finish("north", ["10", "6"])])
    critic = iter([criticised("reject", 0.9, "not in the question")] + [criticised()] * 3)

    def reply(body: dict[str, Any]) -> str:
        return json.dumps(next(critic if role_of(body["messages"]) == "critic" else executor))

    experiment = tmp_path / "lab.yaml"
    with ScriptedServer(reply) as server:
        experiment.write_text(
            f"kind: experiment\nname: lab\ndataset: {{path: {FULL}, task_ids: [{NISSEDAL}]}}\n"
            "configurations:\n"
            "  - {name: VGC, gates: true, guards: true, critic: true, tools: [lookup, read]}\n"
            f"models: {{default: openai/lab}}\nbase_url: {server.base_url}\ncache: false\nconcurrency: 1\n"
        )
        env = {**os.environ, "PYTHONPATH": str(tmp_path)}
        listed = cli("plugins", "--plugin", "lab_tools", cwd=tmp_path, env=env)
        ran = cli(
            "experiment", str(experiment), "--out", "out", "--plugin", "lab_tools", cwd=tmp_path, env=env
        )
    assert listed.returncode == 0, listed.stderr
    assert any(line.split()[:3] == ["tool", "lookup", "plugin"] for line in listed.stdout.splitlines())
    assert any(line.split()[:3] == ["tool", "date_diff", "built"] for line in listed.stdout.splitlines())
    assert ran.returncode == 0, ran.stderr[-3000:]
    db = Store(tmp_path / "out" / DB_NAME)
    [row] = db.query("select outcome, answer from attempts")
    assert (row["outcome"], row["answer"]) == ("answer", "north")
    [_blocked] = db.query("select cause from verdicts where check_name = 'critic' and decision = 'reject'")
    actions = [s["action"] for s in db.query("select action from steps order by id")]
    assert actions == ["lookup", "lookup", "lookup", "finish"]
    config = json.loads(next(db.query("select config_json from runs"))["config_json"])
    assert config["configs"][0]["tools"] == ["lookup", "read"]  # part of the run's identity


# --- date_diff on the 2Wiki records that need it, with the mock model -------------------------

WIKI = Path(__file__).parent / "data" / "qa" / "2wiki_dev_100.jsonl"
_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_LIFE = re.compile(r"\(\s*([^()–]*?)\s*–\s*([^()]*?)\)")


def life(text: str) -> tuple[str, str]:
    """A biography's (born, died), as its opening parenthesis writes them (places dropped)."""
    m = _LIFE.search(text)
    assert m, text[:120]
    return m.group(1).split(", in ")[0].strip(), m.group(2).split(", in ")[0].strip()


def date_step(first: str, second: str) -> dict[str, Any]:
    return {"thought": "", "action": "date_diff", "input": {"first": first, "second": second}, "evidence": []}


def comparer(task: Any) -> Any:
    """An executor that answers a date comparison through date_diff: it reads the two supporting
    paragraphs, asks date_diff about the dates the question turns on (a film's year, a death,
    or each life's span for "lived longer"), and finishes with the choice the tool's answer
    points at, citing both paragraphs."""
    q = task.question.lower()
    pa, pb = sorted((p for p in task.paragraphs if p.is_supporting), key=lambda p: q.find(p.title.lower()))
    if "lived longer" in q:
        calls = [date_step(*life(pa.paragraph_text)), date_step(*life(pb.paragraph_text))]
    elif "died" in q:
        calls = [date_step(life(pa.paragraph_text)[1], life(pb.paragraph_text)[1])]
    else:
        years = [_YEAR.search(p.paragraph_text).group(1) for p in (pa, pb)]  # type: ignore[union-attr]
        calls = [date_step(*years)]
    plan = [{"thought": "", "action": "read", "input": str(p.idx), "evidence": []} for p in (pa, pb)] + calls

    def step(messages: list[dict[str, str]]) -> dict[str, Any]:
        n = steps_taken(messages)
        if n < len(plan):
            return plan[n]
        said = re.findall(r"-> (.*)", messages[-1]["content"])[-len(calls) :]
        if "lived longer" in q:
            spans = [int(re.search(r"by (?:about )?(\d+) year", s).group(1)) for s in said]  # type: ignore[union-attr]
            first = spans[0] > spans[1]
        else:
            first = said[0].startswith("the first date")
            first = first if ("earlier" in q or "first" in q) else not first
        chosen = pa if first else pb
        return finish(chosen.title, [str(pa.idx), str(pb.idx)])

    return step


def test_date_diff_answers_the_2wiki_date_comparisons(store: Store, verifiers: Any, roles: Any) -> None:
    from vreact.qa import formats
    from vreact.spec import load_experiment, load_spec

    ids = load_experiment("tools").dataset.task_ids
    tasks = {t.id: t for t in formats.read(str(WIKI), "2wiki")}
    config = Configuration(name="VGd", gates=True, guards=True, tools=["search", "read", "date_diff"])
    spec, right = load_spec("hotpotqa"), 0
    for task_id in ids:
        task = tasks[task_id]
        _, row, model = attempt(config, task, comparer(task), store, spec, verifiers, roles)
        assert 'date_diff {"first": "' in model.calls[-1][-1]["content"]  # its object, unquoted
        said = [
            s["observation"]
            for s in store.query(
                "select observation from steps where attempt_id = ? and action = 'date_diff'", [row["id"]]
            )
        ]
        assert said and all(" is earlier than " in s for s in said), said
        assert row["outcome"] == "answer", (task.question, row)  # the gates took it
        right += formats.official(task, row["answer"], json.loads(row["evidence"])).correct is True
    assert right == len(ids), f"{right} of {len(ids)} right"
