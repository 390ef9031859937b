"""``openai/MODEL``: OpenAI, or any OpenAI-compatible server through a base URL."""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.request
from typing import Any
from urllib.parse import urlsplit

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
    Watchdog,
    native_reply,
    retry_after_seconds,
    say_once,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: The environment variables of its API key and of its server.
API_KEY_ENV, BASE_URL_ENV = "OPENAI_API_KEY", "OPENAI_BASE_URL"


def own_server(base_url: str | None) -> bool:
    """Whether ``base_url`` is OpenAI's own server (None: it is): only that one needs a key."""
    return not base_url or base_url.rstrip("/") == DEFAULT_BASE_URL


#: Seconds to wait for a server's OpenAPI document, and the bytes read of it at most.
DECLARED_TIMEOUT, MAX_DOCUMENT = 5.0, 4_000_000


def declared_formats(endpoint: str) -> tuple[str, ...] | None:
    """The ``response_format`` types a server declares for its ``/chat/completions`` in the
    OpenAPI document a FastAPI server publishes at ``/openapi.json`` (llama-cpp-python's: text
    and json_object); None: it publishes none, or none that says."""
    parts = urlsplit(endpoint)
    try:
        with urllib.request.urlopen(
            f"{parts.scheme}://{parts.netloc}/openapi.json", timeout=DECLARED_TIMEOUT
        ) as r:
            doc = json.loads(r.read(MAX_DOCUMENT + 1)[:MAX_DOCUMENT])
    except (OSError, ValueError, RecursionError):  # none published, or not JSON (cut past its cap)
        return None
    return _response_formats(doc) if isinstance(doc, dict) else None


def _response_formats(doc: dict[str, Any]) -> tuple[str, ...] | None:
    """The ``type`` values of ``response_format`` in an OpenAPI document's chat completions
    request, its ``$ref``s, ``anyOf`` and ``oneOf`` followed."""

    def deref(node: Any, depth: int = 0) -> Any:
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and depth < 32:
            ref, node, depth = node["$ref"], doc, depth + 1
            for part in ref.removeprefix("#/").split("/"):
                node = node.get(part) if isinstance(node, dict) else None
        return node if isinstance(node, dict) else {}

    def types(node: Any, depth: int = 0) -> list[str]:
        node = deref(node)
        if depth > 8:
            return []
        if "anyOf" in node or "oneOf" in node:
            return [
                t for option in node.get("anyOf") or node.get("oneOf") or [] for t in types(option, depth + 1)
            ]
        kind = deref((node.get("properties") or {}).get("type"))
        said = kind.get("enum") or ([kind["const"]] if "const" in kind else [])
        return [t for t in said if isinstance(t, str)]

    for path, item in (doc.get("paths") or {}).items():
        if not str(path).endswith("/chat/completions") or not isinstance(item, dict):
            continue
        content = deref(deref(item.get("post")).get("requestBody")).get("content") or {}
        body = deref(deref(content.get("application/json")).get("schema"))
        found = types((body.get("properties") or {}).get("response_format"))
        return tuple(dict.fromkeys(found)) or None
    return None


_CONTEXT_HINTS = (
    "context length",
    "context window",
    "maximum context",
    "too many tokens",
    "exceed context",
    "context_length",
)


class OpenAIModel:
    """Chat completions with JSON output against a schema.

    ``response_format`` is ``json_schema``, unless the server's OpenAPI document declares the
    types it takes and ``json_schema`` is not one of them (llama-cpp-python's server declares
    text and json_object; it answers ``json_schema`` with a 500 and a traceback in its log): then
    ``{"type": "json_object", "schema": ...}``, read once, before the first request with a
    schema. A server that refuses ``json_schema`` all the same is asked for ``json_object`` from
    then on. Either is said once (``say_once``); a models file's ``structured_output`` skips both.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 300.0,
        json_mode: str | None = None,
        watchdog: Watchdog | None = None,
    ) -> None:
        try:
            import openai
        except ImportError:  # pragma: no cover - openai is a core dependency
            raise ModelConfigError("the openai package is missing: pip install openai") from None
        self.name = f"openai/{model}"
        self.model = model
        base_url = base_url or os.environ.get(BASE_URL_ENV) or None
        key = api_key or os.environ.get(API_KEY_ENV)
        if not key:
            if not own_server(base_url):
                key = "no-key-needed"  # local servers need none
            else:
                raise ModelConfigError(
                    f"no API key for openai/: set {API_KEY_ENV}, or pass --base-url for a local server"
                )
        self._openai = openai
        # retries belong to vreact's retry layer (ResilientModel), not the SDK
        self.client = openai.OpenAI(api_key=key, base_url=base_url, timeout=timeout, max_retries=0)
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        self._reply_types = (ChatCompletion, openai.Stream[ChatCompletionChunk])
        #: the server actually asked (the SDK resolves flag, OPENAI_BASE_URL and its default)
        self.endpoint = str(self.client.base_url).rstrip("/")
        #: with a watchdog every call streams, so a reply that only reasons can be cut off
        self.watchdog = watchdog if watchdog is not None and watchdog.on else None
        self.json_mode = json_mode or "json_schema"
        self._json_mode_known = json_mode is not None  # a models file may fix it; else probe
        # OpenAI's own takes json_schema: only another server's document is read
        self._declared_read = self._json_mode_known or own_server(self.endpoint)
        self._declared_lock = threading.Lock()

    def _read_declared(self) -> None:
        """Once, before the first request with a schema: ``json_object`` for a server whose
        OpenAPI document declares the ``response_format`` types it takes without ``json_schema``."""
        with self._declared_lock:
            if self._declared_read:
                return
            declared = declared_formats(self.endpoint)
            if declared is not None and "json_schema" not in declared and "json_object" in declared:
                self.json_mode, self._json_mode_known = "json_object", True
                say_once(
                    f"{self.endpoint} takes response_format {', '.join(declared)} (its /openapi.json), not"
                    " json_schema: asking it for json_object with the schema"
                )
            self._declared_read = True

    def _create(self, kwargs: dict[str, Any]) -> Any:
        """One completion. While the structured-output mode is unknown, a server that refuses
        ``json_schema`` (llama-cpp-python's answers 500 with a validation error, others 400) is
        asked with ``json_object`` and a schema, and from then on."""
        openai = self._openai
        try:
            resp = self._post(kwargs)
        except openai.APIStatusError as e:
            msg = str(e).lower()
            refused = "json_schema" in msg or "response_format" in msg
            if self._json_mode_known or "response_format" not in kwargs or not refused:
                raise
            self.json_mode = "json_object"
            say_once(
                f"{self.endpoint} refused response_format json_schema (HTTP {e.status_code}): asking it"
                " for json_object with the schema from now on (a models file's structured_output:"
                " json_object skips the first try)"
            )
            schema = kwargs["response_format"]["json_schema"]["schema"]
            resp = self._post({**kwargs, "response_format": self._response_format(schema)})
        if "response_format" in kwargs:
            self._json_mode_known = True
        return resp

    def _post(self, body: dict[str, Any]) -> Any:
        """POST /chat/completions with ``body`` as it is: what ``chat.completions.create`` sends
        for a body of plain JSON values, without the SDK's walk over every message to transform
        typed parameters (about half the client's CPU per call; nothing here needs it)."""
        completion, chunks = self._reply_types
        stream = bool(body.get("stream"))
        return self.client.post(
            "/chat/completions", body=body, cast_to=completion, stream=stream, stream_cls=chunks
        )

    def _response_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.json_mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}
        return {"type": "json_object", "schema": schema}

    def generate(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None = None,
        settings: GenerateSettings = DEFAULT_SETTINGS,
        tools: list[ToolSpec] | None = None,
    ) -> Completion:
        """With ``tools``, the reply must be one call of one of them (``tool_choice: required``,
        no parallel calls asked for); it comes back as ``native_reply``'s text, whatever the
        server did (text only, several calls), for the executor to judge."""
        openai = self._openai
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": settings.temperature,
            "max_tokens": settings.max_tokens,
        }
        if settings.seed is not None:
            kwargs["seed"] = settings.seed
        started = time.perf_counter()
        if tools:
            kwargs["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in tools
            ]
            kwargs["tool_choice"] = "required"
            kwargs["parallel_tool_calls"] = False
        elif schema is not None:
            if not self._declared_read:
                self._read_declared()
            kwargs["response_format"] = self._response_format(schema)
        if self.watchdog is not None and not tools:
            kwargs["stream"] = True
            kwargs["stream_options"] = {"include_usage": True}
        try:
            resp = self._create(kwargs)
            if self.watchdog is not None and "stream" in kwargs:
                text, prompt, completion, cached, stopped = self._streamed(resp, self.watchdog)
                latency = (time.perf_counter() - started) * 1000
                return Completion(
                    text,
                    prompt_tokens=prompt,
                    completion_tokens=completion,
                    latency_ms=latency,
                    cached_tokens=cached,
                    stop_reason=stopped,
                )
        except openai.APIStatusError as e:
            msg = str(e).lower()
            if e.status_code == 429 or e.status_code >= 500:
                raise TransientError(
                    f"{type(e).__name__}: {e}", retry_after_seconds(e.response.headers)
                ) from e
            if any(h in msg for h in _CONTEXT_HINTS):
                raise ContextLengthError(f"context_length: {e}") from e
            raise ModelError(f"{type(e).__name__}: {e}") from e
        except openai.APITimeoutError as e:  # a kind of APIConnectionError: the server is there
            raise TransientError(f"{type(e).__name__}: {e}") from e
        except openai.APIConnectionError as e:
            raise ConnectionFailed(f"{type(e).__name__}: {_reason(e)}") from e
        except openai.APIError as e:
            raise ModelError(f"{type(e).__name__}: {e}") from e
        choice = resp.choices[0] if resp.choices else None
        message = choice.message if choice is not None else None
        text = (message.content or "") if message is not None else ""  # a streamed one returned
        if tools:
            # a call of another type, or without its function, is read as a call of no name
            fns = [getattr(c, "function", None) for c in (message.tool_calls or [])] if message else []
            text = native_reply(
                text, [(getattr(f, "name", None), getattr(f, "arguments", None)) for f in fns]
            )
        usage = resp.usage
        return Completion(
            text,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            latency_ms=(time.perf_counter() - started) * 1000,
            cached_tokens=cached_tokens(usage),
            stop_reason=_said(getattr(choice, "finish_reason", None)),
        )

    @staticmethod
    def _streamed(stream: Any, watchdog: Watchdog) -> tuple[str, int, int, int | None, str | None]:
        """Read a streamed reply: (text, prompt, completion and cached prompt tokens, the
        finish_reason of its last chunk that gave one). While it has produced
        only reasoning (``reasoning_content`` deltas, or an open ``<think>`` block in the answer
        channel) the watchdog may abort it (ReasoningRunaway), closing the connection."""
        answer: list[str] = []
        reasoning, usage, stopped = 0, None, None
        t0 = time.monotonic()
        try:
            for chunk in stream:
                usage = chunk.usage or usage
                for choice in chunk.choices or []:
                    delta = choice.delta
                    extra = getattr(delta, "model_extra", None) or {}
                    thought = getattr(delta, "reasoning_content", None) or extra.get("reasoning_content")
                    reasoning += len(thought or "")
                    answer.append(delta.content or "")
                    stopped = _said(getattr(choice, "finish_reason", None)) or stopped
                text = "".join(answer)
                thinking = text.lstrip().startswith("<think>") and "</think>" not in text
                if not text.strip() or thinking:
                    watchdog.check(reasoning + (len(text) if thinking else 0), t0, time.monotonic())
        finally:
            stream.close()
        text = "".join(answer)
        completion = usage.completion_tokens if usage else (len(text) + reasoning) // 4
        return text, usage.prompt_tokens if usage else 0, completion, cached_tokens(usage), stopped


def _said(reason: Any) -> str | None:
    """A ``finish_reason`` as recorded: the server's word (None: it gave none)."""
    return str(reason) if reason else None


def cached_tokens(usage: Any) -> int | None:
    """The prompt tokens a server says it served from its prompt cache (OpenAI's
    ``usage.prompt_tokens_details.cached_tokens``), or None when it does not say."""
    details = getattr(usage, "prompt_tokens_details", None) if usage is not None else None
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    return cached if isinstance(cached, int) else None


def _reason(e: BaseException) -> str:
    """A connection error in its own words, with the cause's ("Connection error." says nothing)."""
    cause = e.__cause__ or e.__context__
    while cause is not None and (cause.__cause__ or cause.__context__) is not None:
        cause = cause.__cause__ or cause.__context__
    return f"{e} ({cause})" if cause is not None and str(cause) else str(e)
