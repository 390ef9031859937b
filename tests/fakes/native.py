"""Loopback servers that speak native tool calls: OpenAI's ``tools`` / ``tool_calls`` and
Anthropic's ``tools`` / ``tool_use``, each reply a function of the request (a script).

A script returns the executor's decision as a JSON step (``{"thought", "action", "input",
"evidence"}``). A request that offers ``tools`` gets it as one native call of the tool of that
name (its arguments by the tool's parameters: search's ``query``, finish's ``answer`` and
``evidence``, a user tool's own); a request without gets the step as JSON text, so the same
script drives a model with ``actions: json`` and one with ``actions: native``. Three scripted
faults: ``{"text": "..."}`` answers in prose, ``{"calls": [step, step]}`` makes two calls at
once, and a step whose action no tool has is called by that name all the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.fakes._loopback import JSON
from tests.fakes.anthropic_server import AnthropicServer, _message
from tests.fakes.chaos_server import _completion
from tests.fakes.scripted_server import ScriptedServer

Script = Callable[[JSON], dict[str, Any] | str]


def arguments(step: dict[str, Any], tools: list[JSON]) -> dict[str, Any]:
    """A JSON step's arguments for the offered tool of its action's name: the tool's one string
    argument takes the input (finish also its evidence or hops); a tool of several takes the
    input's object. An action no tool has: ``{"input": ...}``."""
    tool = next((t for t in tools if t["name"] == step.get("action")), None)
    if tool is None:
        return {"input": step.get("input", "")}
    props = dict(tool["parameters"].get("properties") or {})
    value = step.get("input", "")
    if isinstance(value, dict):
        return value
    strings = [k for k, v in props.items() if v.get("type") == "string"]
    out = {strings[0]: value} if strings else {}
    for extra in ("evidence", "hops"):
        if extra in props:
            out[extra] = step.get(extra, [])
    return out


def native_calls(decision: dict[str, Any] | str, tools: list[JSON]) -> tuple[str, list[tuple[str, dict]]]:
    """(text, [(tool name, arguments)]) of a scripted decision, for a request offering ``tools``."""
    if isinstance(decision, str):
        return decision, []
    if "text" in decision:
        return str(decision["text"]), []
    steps = decision.get("calls", [decision])
    thought = str(steps[0].get("thought", ""))
    return thought, [(str(s["action"]), arguments(s, tools)) for s in steps]


def _declared(body: JSON) -> list[JSON]:
    """The request's tools as name and parameters (OpenAI's ``function``, Anthropic's own)."""
    out = []
    for t in body.get("tools") or []:
        fn = t.get("function") or t
        out.append({"name": fn["name"], "parameters": fn.get("parameters") or fn.get("input_schema") or {}})
    return out


class NativeOpenAIServer(ScriptedServer):
    """OpenAI chat completions: the script's decision as JSON text, or as ``tool_calls`` when
    the request offers tools."""

    def __init__(self, script: Script, latency: float = 0.0) -> None:
        super().__init__(lambda body: "", latency=latency)
        self.script = script

    def completion(self, body: JSON, served: int) -> JSON:
        decision = self.script(body)
        tools = _declared(body)
        if not tools:
            text = decision if isinstance(decision, str) else json.dumps(decision.get("text", decision))
            return _completion(body, text, served)
        text, calls = native_calls(decision, tools)
        reply = _completion(body, text, served)
        message = reply["choices"][0]["message"]
        message["content"] = text or None
        if calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{served}_{i}",
                    "type": "function",
                    "function": {"name": n, "arguments": json.dumps(a)},
                }
                for i, (n, a) in enumerate(calls)
            ]
            reply["choices"][0]["finish_reason"] = "tool_calls"
        return reply


class NativeAnthropicServer(AnthropicServer):
    """Anthropic messages: the script's decision as ``tool_use`` blocks (and a text block for its
    thought) when the request offers tools other than vreact's JSON ``output`` tool, else as
    that tool's input."""

    def __init__(self, script: Script) -> None:
        super().__init__(mix={"nonsense": 1.0})
        self.script = script

    def handle_message(self, body: JSON, headers: Any) -> tuple[int, JSON, dict[str, str]]:
        with self._lock:
            self.requests.append(body)
            self.versions.append(headers.get("anthropic-version"))
            self._served += 1
            served = self._served
        decision = self.script(body)
        tools = _declared(body)
        if [t["name"] for t in tools] == ["output"]:  # JSON through the forced output tool
            value = decision if isinstance(decision, dict) and "text" not in decision else {}
            block = {"type": "tool_use", "id": f"toolu_{served}", "name": "output", "input": value}
            return 200, _message(body, block, served), {}
        text, calls = native_calls(decision, tools)
        blocks: list[JSON] = [{"type": "text", "text": text}] if text else []
        blocks += [
            {"type": "tool_use", "id": f"toolu_{served}_{i}", "name": n, "input": a}
            for i, (n, a) in enumerate(calls)
        ]
        reply = _message(body, blocks[0] if blocks else {"type": "text", "text": ""}, served)
        reply["content"] = blocks
        reply["stop_reason"] = "tool_use" if calls else "end_turn"
        return 200, reply, {}
