"""Native tool calls (a model's ``actions: native``): the executor's actions offered as OpenAI's
``tools`` and Anthropic's ``tool_use``, against loopback servers that speak those formats. The
same script gives the same decisions in both formats, so the pilot's records under native calls
equal those under JSON; a reply that is no single call of an offered tool is a reject with its
cause."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.attacks.obedient import steps_taken
from tests.conftest import FULL
from tests.fakes.chaos_server import ChaosServer, SchemaFaker
from tests.fakes.native import NativeAnthropicServer, NativeOpenAIServer
from tests.helpers import abstain, finish, read, role_of, search, support_ids
from vreact.cli import cli
from vreact.model import GenerateSettings, ToolSpec, get_model
from vreact.qa.dataset import load_tasks
from vreact.records import DB_NAME, Store

TASKS = {t.question: t for t in load_tasks(str(FULL))}
NISSEDAL = "2hop__269805_135710"
SEARCH = ToolSpec(
    "search", "find paragraphs", {"type": "object", "properties": {"query": {"type": "string"}}}, "query"
)
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Question: where?"}]


def question_of(messages: list[dict[str, str]]) -> str:
    return messages[1]["content"].split("\n")[0].removeprefix("Question: ")


def schema_of(body: dict[str, Any]) -> dict[str, Any]:
    fmt = body.get("response_format") or {}
    if "json_schema" in fmt:
        return dict(fmt["json_schema"]["schema"])
    if "schema" in fmt:
        return dict(fmt["schema"])
    tools = body.get("tools") or []
    return dict(tools[0]["input_schema"]) if tools else {"type": "object"}


def oracle(body: dict[str, Any]) -> dict[str, Any]:
    """The same decisions whatever the format: the executor searches the question, reads each
    hop's paragraph, then finishes with the gold answer (every third task: a wrong one); a
    question it does not know (a planner's subtask) it abstains on. Every other role's reply
    is schema-valid nonsense seeded by its request (planner, judges)."""
    messages = body.get("messages", [])
    system = body.get("system")
    if system:
        messages = [{"role": "system", "content": system}, *messages]
    if role_of(messages) != "executor":
        schema = schema_of(body)
        digest = hashlib.sha256(json.dumps([messages, schema], sort_keys=True).encode()).hexdigest()
        return SchemaFaker(random.Random(digest), schema).make(schema)
    if not isinstance(messages[-1].get("content"), str):  # anthropic: blocks joined by the SDK
        messages = [{**m, "content": str(m["content"])} for m in messages]
    task = TASKS.get(question_of(messages))
    if task is None:
        return abstain("the paragraphs do not say")
    ids, n = support_ids(task), steps_taken(messages)
    if n == 0:
        return search(task.question, "find the first fact")
    if n <= len(ids):
        return read(ids[n - 1])
    wrong = int(hashlib.sha256(task.id.encode()).hexdigest(), 16) % 3 == 0
    return finish("nobody" if wrong else str(task.answer), ids, "the paragraphs state it")


# --- the providers ----------------------------------------------------------------------------


def test_openai_offers_the_tools_and_reads_the_call_back() -> None:
    with NativeOpenAIServer(lambda body: search("Nissedal")) as server:
        model = get_model("openai/native", base_url=server.base_url, cache=None)
        c = model.generate(MESSAGES, None, GenerateSettings(max_tokens=64), tools=[SEARCH])  # type: ignore[call-arg]
    [body] = server.requests
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "search", "description": "find paragraphs", "parameters": SEARCH.parameters},
        }
    ]
    assert (body["tool_choice"], body["parallel_tool_calls"]) == ("required", False)
    assert "response_format" not in body
    assert json.loads(c.text) == {
        "content": "",
        "tool_calls": [{"name": "search", "arguments": {"query": "Nissedal"}}],
    }


def test_anthropic_offers_the_tools_and_reads_the_call_back() -> None:
    with NativeAnthropicServer(lambda body: search("Nissedal", "look it up")) as server:
        model = get_model(
            "anthropic/native", base_url=server.base_url, api_key="sk-ant-test-000000", cache=None
        )
        c = model.generate(MESSAGES, None, GenerateSettings(max_tokens=64), tools=[SEARCH])  # type: ignore[call-arg]
    [body] = server.requests
    assert body["tools"] == [
        {"name": "search", "description": "find paragraphs", "input_schema": SEARCH.parameters}
    ]
    assert body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}
    assert json.loads(c.text) == {
        "content": "look it up",
        "tool_calls": [{"name": "search", "arguments": {"query": "Nissedal"}}],
    }


def test_a_native_reply_is_one_call_of_an_offered_tool_with_its_arguments() -> None:
    """The kit's reading of a native reply: its arguments are the step's input and fields and
    never its action; a required argument left out is bad_arguments."""
    from types import SimpleNamespace

    from vreact.config import Configuration
    from vreact.qa._kit import QAKit
    from vreact.qa.roles.designer import Subtask
    from vreact.qa.settings import QASteps

    task = TASKS[next(iter(TASKS))]
    ctx = SimpleNamespace(config=Configuration(name="x"), task=task, family=None, acts_natively=lambda: True)
    ctx.family = SimpleNamespace(native_actions=True)
    kit = QAKit(ctx, Subtask("s", task.question, "", (), "answer"), QASteps())

    def reply(name: Any, arguments: Any) -> str:
        return json.dumps({"content": "why", "tool_calls": [{"name": name, "arguments": arguments}]})

    text, _, _ = kit.parse_native(reply("finish", {"answer": "north", "evidence": ["6"]}))
    assert json.loads(text or "") == {
        "thought": "why",
        "action": "finish",
        "evidence": ["6"],
        "input": "north",
    }
    text, _, _ = kit.parse_native(reply("search", {"query": "x", "action": "finish", "evidence": ["1"]}))
    step = kit.parse(text or "")
    assert step is not None and (step.action, step.input) == ("search", "x")  # an argument is no action
    assert kit.parse_native(reply("finish", {"evidence": ["6"]}))[1:] == (
        "bad_arguments",
        "finish was called without answer",
    )
    assert kit.parse_native(reply(None, {}))[1] == "unknown_tool"
    assert kit.parse_native(reply("read", [1, 2]))[1] == "bad_arguments"
    assert kit.parse_native("not json at all")[1] == "no_tool_call"


def test_an_odd_tool_call_from_the_server_is_read_not_raised() -> None:
    """A call without its function (``"function": null``) comes back as a call of no name (the
    kit rejects it as unknown_tool); with the reasoning watchdog on, a native call is not
    streamed."""
    from tests.fakes.chaos_server import _completion
    from tests.fakes.scripted_server import ScriptedServer
    from vreact.model import Watchdog

    class NullFunction(ScriptedServer):
        def completion(self, body: Any, served: int) -> Any:
            reply = _completion(body, "", served)
            reply["choices"][0]["message"]["tool_calls"] = [{"id": "c", "type": "function", "function": None}]
            return reply

    with NullFunction(lambda body: "") as server:
        model = get_model("openai/odd", base_url=server.base_url, cache=None)
        c = model.generate(MESSAGES, None, GenerateSettings(max_tokens=16), tools=[SEARCH])  # type: ignore[call-arg]
    assert json.loads(c.text)["tool_calls"] == [{"name": None, "arguments": None}]
    with NativeOpenAIServer(lambda body: search("Nissedal")) as server:
        model = get_model(
            "openai/native", base_url=server.base_url, cache=None, watchdog=Watchdog(timeout=30.0)
        )
        c = model.generate(MESSAGES, None, GenerateSettings(max_tokens=16), tools=[SEARCH])  # type: ignore[call-arg]
    assert "stream" not in server.requests[0]
    assert json.loads(c.text)["tool_calls"] == [{"name": "search", "arguments": {"query": "Nissedal"}}]


# --- whole runs -------------------------------------------------------------------------------


def run(tmp: Path, provider: str, url: str, actions: str, *sets: str, experiment: str = "pilot") -> Path:
    """``vreact experiment`` with one model, ``actions`` as given, on the loopback server."""
    models = tmp / f"models-{actions}.yaml"
    models.write_text(
        "kind: models\nmodels:\n"
        f"  agent: {{model: {provider}/agent, base_url: '{url}', actions: {actions}}}\n"
    )
    out = tmp / f"run-{actions}"
    args = ["experiment", experiment, "--out", str(out), "--set", f"models_file={models}"]
    for key, value in (("models.default", "agent"), ("cache", "false"), ("concurrency", "2"), *sets):
        args += ["--set", f"{key}={value}"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output[-3000:]
    return out


def records(out: Path) -> dict[str, list[Any]]:
    """What must not depend on the format: each attempt's outcome, the verdicts, the steps."""
    db = Store(out / DB_NAME)
    key = "a.config, a.task_id, a.attempt_index"
    return {
        "attempts": [
            tuple(r.values())
            for r in db.query(
                f"select {key}, outcome, answer, evidence, abstain_level, abstain_component, abstain_cause"
                f" from attempts a order by {key}"
            )
        ],
        "verdicts": [
            tuple(r.values())
            for r in db.query(
                f"select {key}, v.seq, v.verifier, v.component, v.source, v.check_name, v.decision, v.cause"
                f" from verdicts v join attempts a on a.id = v.attempt_id order by {key}, v.seq"
            )
        ],
        "steps": [
            tuple(r.values())
            for r in db.query(
                f"select {key}, s.try, s.step, s.action, s.input, s.evidence, s.observation"
                f" from steps s join attempts a on a.id = s.attempt_id order by {key}, s.id"
            )
        ],
    }


def test_the_pilots_records_under_native_calls_equal_those_under_json(tmp_path: Path) -> None:
    sets = (("dataset.path", str(FULL)), ("dataset.limit", "8"))
    with NativeOpenAIServer(oracle) as server:
        as_json = records(run(tmp_path, "openai", server.base_url, "json", *sets))
        json_requests = list(server.requests)
        server.requests.clear()
        native = records(run(tmp_path, "openai", server.base_url, "native", *sets))
        native_requests = list(server.requests)
    assert native == as_json
    outcomes = {r[3] for r in native["attempts"]}
    assert outcomes == {"answer", "abstain"}, outcomes  # right, wrong and abstained attempts alike
    assert {r[-2] for r in native["verdicts"]} == {"accept", "reject"}
    # the executor asked in each format: a JSON schema, or its actions as tools
    executor = [b for b in native_requests if role_of(b["messages"]) == "executor"]
    assert executor and all("tools" in b and "response_format" not in b for b in executor)
    names = [t["function"]["name"] for t in executor[0]["tools"]]
    assert names == ["search", "read", "finish", "abstain"]
    assert all("tools" not in b for b in json_requests)
    assert (
        "Reply by calling ONE of your tools (search, read, finish, abstain)."
        in executor[0]["messages"][0]["content"]
    )


BAD = {
    "unknown_tool": {"thought": "", "action": "calculator", "input": "2+2", "evidence": []},
    "parallel_calls": {"calls": [search("Nissedal"), read("10")]},
    "no_tool_call": {"text": "The answer is north."},
}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("cause", list(BAD))
def test_a_reply_that_is_no_single_call_of_an_offered_tool_is_a_reject_with_its_cause(
    tmp_path: Path, provider: str, cause: str
) -> None:
    steps = iter([BAD[cause], read("10"), read("6"), finish("north", ["10", "6"])])
    server_of = NativeOpenAIServer if provider == "openai" else NativeAnthropicServer

    def script(body: dict[str, Any]) -> Any:
        return next(steps)

    sets = (
        ("dataset.path", str(FULL)),
        ("dataset.task_ids", f"[{NISSEDAL}]"),
        ("configurations", "[{name: VG, gates: true, guards: true}]"),
    )
    with server_of(script) as server:
        out = run(tmp_path, provider, server.base_url, "native", *sets)
    db = Store(out / DB_NAME)
    [row] = db.query("select outcome, answer from attempts")
    assert (row["outcome"], row["answer"]) == ("answer", "north")  # the second try
    rejects = list(
        db.query("select verifier, check_name, cause, detail from verdicts where decision = 'reject'")
    )
    assert [(r["verifier"], r["check_name"], r["cause"]) for r in rejects] == [("R1", "parses", cause)]
    [call] = db.query("select response from model_calls where role = 'executor' order by id limit 1")
    assert "tool_calls" in json.loads(call["response"])  # the call keeps the native reply


def test_native_actions_need_a_provider_and_a_family_that_take_them(tmp_path: Path) -> None:
    models = tmp_path / "models.yaml"
    models.write_text("kind: models\nmodels:\n  local: {model: llamacpp/smollm2-135m, actions: native}\n")
    result = CliRunner().invoke(
        cli,
        [
            "experiment",
            "pilot",
            "--out",
            str(tmp_path / "o"),
            "--set",
            f"models_file={models}",
            "--set",
            "models.default=local",
        ],
    )
    assert result.exit_code != 0
    assert (
        "models.yaml:3: models.local.actions: native tool calls need openai/ or anthropic/" in result.output
    )
    assert "Traceback" not in result.output and not (tmp_path / "o").exists()
    with ChaosServer(mix={"nonsense": 1.0}) as up:  # up, as a run checks before it starts; never asked
        models.write_text(
            "kind: models\nmodels:\n"
            f"  agent: {{model: openai/agent, base_url: '{up.base_url}', actions: native}}\n"
        )
        result = CliRunner().invoke(
            cli,
            [
                "experiment",
                "code",
                "--out",
                str(tmp_path / "c"),
                "--set",
                f"models_file={models}",
                "--set",
                "models.default=agent",
                "--set",
                "sandbox=none",
            ],
        )
        assert result.exit_code != 0
        assert "the code family's executor takes no native tool calls" in result.output
        models.write_text(
            "kind: models\nmodels:\n"
            f"  agent: {{model: openai/agent, base_url: '{up.base_url}', actions: native}}\n"
            f"  plain: {{model: openai/plain, base_url: '{up.base_url}'}}\n"
        )
        sets = [f"models_file={models}", "models.default=agent", "models.executor=plain"]
        args = ["experiment", "pilot", "--out", str(tmp_path / "j"), *(a for s in sets for a in ("--set", s))]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code != 0
        assert "actions: native is read by the executor's model only" in result.output
        assert "Traceback" not in result.output and not (tmp_path / "j").exists()
        assert up.requests == []
