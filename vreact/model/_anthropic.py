"""``anthropic/MODEL``: Anthropic's Messages API, or any server speaking it through a base URL.

The base URL is the server's root, *without* ``/v1`` (the SDK posts to ``{base_url}/v1/messages``);
a trailing ``/v1`` is dropped so an OpenAI-style ``--base-url http://host/v1`` works as well.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import time
from pathlib import Path
from typing import Any

from vreact.model._base import (
    DEFAULT_SETTINGS,
    Completion,
    ConnectionFailed,
    ContextLengthError,
    GenerateSettings,
    Message,
    ModelConfigError,
    ModelError,
    ToolSpec,
    TransientError,
    native_reply,
    retry_after_seconds,
)

DEFAULT_BASE_URL = "https://api.anthropic.com"
#: The environment variables of its API key and of its server.
API_KEY_ENV, BASE_URL_ENV = "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"
TOOL_NAME = "output"
_TOOL_DESCRIPTION = "Give your answer as the input of this tool, a JSON object valid against its schema."
_CONTEXT_HINTS = (
    "prompt is too long",
    "prompt too long",
    "context window",
    "context length",
    "maximum context",
    "exceeds the context",
)
_TRANSIENT_STATUS = (408, 409, 429)  # and every 5xx: the SDK's own retry policy
#: The first API version that refuses every sampling parameter (temperature, top_p, top_k) with a
#: 400, even at its default; anthropic 2.x sends it. anthropic 1.x dropped ``temperature`` from
#: ``messages.create`` but still sends 2023-06-01, which takes it through ``extra_body``.
_NO_SAMPLING_FROM = "2026-10-21"


def _root(base_url: str) -> str:
    """``base_url`` without a trailing slash or ``/v1``: the SDK adds ``/v1/messages`` itself."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def own_server(base_url: str | None) -> bool:
    """Whether ``base_url`` is Anthropic's own server (None: it is): only that one needs a key."""
    return not base_url or _root(base_url) == DEFAULT_BASE_URL


def takes_temperature(api_version: str) -> bool:
    """Whether requests of this ``anthropic-version`` may carry ``temperature``."""
    return bool(api_version) and api_version < _NO_SAMPLING_FROM


def installed_api_version() -> str:
    """The ``anthropic-version`` the installed SDK sends (what a client's header says), read from
    its constants without importing it (validating a file imports no SDK); "" without one."""
    spec = importlib.util.find_spec("anthropic")
    if spec is None or not spec.submodule_search_locations:
        return ""
    constants = Path(next(iter(spec.submodule_search_locations))) / "_constants.py"
    try:
        found = re.search(r'^ANTHROPIC_API_VERSION\s*=\s*"([^"]+)"', constants.read_text(), re.MULTILINE)
    except OSError:
        return ""
    return found.group(1) if found else ""


def refused() -> dict[str, str]:
    """The sampling settings ``anthropic/`` models take none of, and why: a seed (the Messages API
    has none), and a temperature where the installed SDK's API version refuses one."""
    out = {"seed": "the Messages API has no seed"}
    version = installed_api_version()
    if not takes_temperature(version):
        speaks = f"the API version the installed anthropic SDK speaks ({version or 'unknown'})"
        out["temperature"] = f"{speaks} refuses a temperature"
    return out


def to_anthropic(messages: list[Message]) -> tuple[str, list[dict[str, str]]]:
    """OpenAI-style messages as Anthropic's ``(system, messages)``: system messages joined into
    ``system``, consecutive messages of the same role merged (the API wants them alternating)."""
    system: list[str] = []
    turns: list[dict[str, str]] = []
    for m in messages:
        role, content = m.get("role", "user"), m.get("content") or ""
        if role == "system":
            system.append(content)
            continue
        role = "assistant" if role == "assistant" else "user"
        if turns and turns[-1]["role"] == role:
            turns[-1] = {"role": role, "content": f"{turns[-1]['content']}\n\n{content}"}
        else:
            turns.append({"role": role, "content": content})
    return "\n\n".join(s for s in system if s), turns


class AnthropicModel:
    """Messages with JSON output against a schema, as the input of one forced tool call.

    ``settings.seed`` is ignored (Anthropic has none); ``temperature`` is sent only while the SDK speaks an
    API version that accepts it (before 2026-10-21, i.e. anthropic<2), see :attr:`sends_temperature`.

    The SDK's own retries are off: 408/409/429, 5xx, connection errors and time-outs raise
    :class:`TransientError` (with the server's Retry-After) for the retry layer to decide.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
    ) -> None:
        try:
            import anthropic
        except ImportError as e:  # the package, or one of its own dependencies
            raise ModelConfigError(
                f"anthropic/ needs the anthropic package ({e}): pip install anthropic"
            ) from None
        self.name = f"anthropic/{model}"
        self.model = model
        base_url = base_url or os.environ.get(BASE_URL_ENV) or None
        if base_url:
            base_url = _root(base_url)
        key = api_key or os.environ.get(API_KEY_ENV)
        if not key:
            if not own_server(base_url):
                key = "no-key-needed"  # a local or fake server needs none
            else:
                raise ModelConfigError(
                    f"no API key for anthropic/: set {API_KEY_ENV}, or pass --base-url for a local server"
                )
        self._key = key
        self._anthropic = anthropic
        # an explicit key: the SDK reads no other credentials (env tokens, profiles) when given one
        self.client = anthropic.Anthropic(api_key=key, base_url=base_url, timeout=timeout, max_retries=0)
        #: the server actually asked (the SDK resolves flag, ANTHROPIC_BASE_URL and its default)
        self.endpoint = str(self.client.base_url).rstrip("/")
        self.api_version = str(self.client.default_headers.get("anthropic-version") or "")
        #: False with anthropic>=2 (API version 2026-10-21): ``temperature`` is not sent at all
        self.sends_temperature = takes_temperature(self.api_version)

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if len(self._key) >= 8 else text

    def _error(self, e: Exception) -> ModelError:
        """Our error for one of the SDK's."""
        anthropic = self._anthropic
        msg = self._scrub(f"{type(e).__name__}: {e}")
        if isinstance(e, anthropic.APIStatusError):
            status = e.status_code
            should_retry = e.response.headers.get("x-should-retry")
            transient = status in _TRANSIENT_STATUS or status >= 500
            if should_retry in ("true", "false"):
                transient = should_retry == "true"
            if transient:
                return TransientError(msg, retry_after=retry_after_seconds(e.response.headers))
            if status in (400, 413) and any(h in str(e).lower() for h in _CONTEXT_HINTS):
                return ContextLengthError(f"context_length: {msg}")
            return ModelError(msg)
        if isinstance(e, anthropic.APITimeoutError):  # a kind of APIConnectionError: the server is there
            return TransientError(msg)
        if isinstance(e, anthropic.APIConnectionError):
            return ConnectionFailed(msg)
        return ModelError(msg)

    def generate(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None = None,
        settings: GenerateSettings = DEFAULT_SETTINGS,
        tools: list[ToolSpec] | None = None,
    ) -> Completion:
        """With ``tools``, the reply must be one ``tool_use`` of one of them (``tool_choice: any``,
        parallel use off); it comes back as ``native_reply``'s text, whatever the server did."""
        system, turns = to_anthropic(messages)
        kwargs: dict[str, Any] = {"model": self.model, "messages": turns, "max_tokens": settings.max_tokens}
        if self.sends_temperature:  # through extra_body: anthropic 1.x has no temperature argument
            kwargs["extra_body"] = {"temperature": settings.temperature}
        if system:
            kwargs["system"] = system
        wrapped = schema is not None and schema.get("type") != "object"
        if tools:
            kwargs["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
            ]
            kwargs["tool_choice"] = {"type": "any", "disable_parallel_tool_use": True}
        elif schema is not None:
            # a tool's input must be an object: any other schema is asked for as {"value": ...}
            input_schema = (
                {"type": "object", "properties": {"value": schema}, "required": ["value"]}
                if wrapped
                else schema
            )
            kwargs["tools"] = [
                {"name": TOOL_NAME, "description": _TOOL_DESCRIPTION, "input_schema": input_schema}
            ]
            kwargs["tool_choice"] = {"type": "tool", "name": TOOL_NAME}
        started = time.perf_counter()
        try:
            resp = self.client.messages.create(**kwargs)
        except self._anthropic.AnthropicError as e:
            raise self._error(e) from e
        blocks = list(resp.content or [])
        if tools:
            said = "".join(b.text for b in blocks if b.type == "text")
            text = native_reply(said, [(b.name, b.input) for b in blocks if b.type == "tool_use"])
            return self._completion(text, resp, started)
        tool = next((b for b in blocks if b.type == "tool_use" and b.name == TOOL_NAME), None)
        if schema is not None and tool is not None:
            value = tool.input
            if wrapped and isinstance(value, dict) and "value" in value:
                value = value["value"]
            text = json.dumps(value)
        else:  # no tool call: the text as it came (a parse gate fails closed on it)
            text = "".join(b.text for b in blocks if b.type == "text")
        return self._completion(text, resp, started)

    @staticmethod
    def _completion(text: str, resp: Any, started: float) -> Completion:
        # input_tokens leaves out what the prompt cache read or wrote: the prompt is all three
        usage = resp.usage
        stopped = getattr(resp, "stop_reason", None)
        read = _count(usage, "cache_read_input_tokens")
        written = _count(usage, "cache_creation_input_tokens")
        return Completion(
            text,
            prompt_tokens=usage.input_tokens + (read or 0) + (written or 0) if usage else 0,
            completion_tokens=usage.output_tokens if usage else 0,
            latency_ms=(time.perf_counter() - started) * 1000,
            cached_tokens=read,
            stop_reason=str(stopped) if stopped else None,  # max_tokens: cut at the allowance
        )


def _count(usage: Any, name: str) -> int | None:
    """A token count of Anthropic's usage, or None when the response does not carry it."""
    value = getattr(usage, name, None) if usage is not None else None
    return value if isinstance(value, int) else None
