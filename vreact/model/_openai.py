"""``openai/MODEL``: OpenAI, or any OpenAI-compatible server through a base URL."""

from __future__ import annotations

import os
import time
from typing import Any

from vreact.model._base import Completion, ContextLengthError, Message, ModelConfigError, ModelError

DEFAULT_BASE_URL = "https://api.openai.com/v1"
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

    ``response_format`` is ``json_schema`` first; a server that rejects it (llama-cpp-python's
    does) is asked for ``{"type": "json_object", "schema": ...}`` from then on.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 300.0,
        max_retries: int = 3,
    ) -> None:
        try:
            import openai
        except ImportError:  # pragma: no cover - openai is a core dependency
            raise ModelConfigError("the openai package is missing: pip install openai") from None
        self.name = f"openai/{model}"
        self.model = model
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if base_url and base_url.rstrip("/") != DEFAULT_BASE_URL:
                key = "no-key-needed"  # local servers need none
            else:
                raise ModelConfigError(
                    "no API key for openai/: set OPENAI_API_KEY, or pass --base-url for a local server"
                )
        self._openai = openai
        self.client = openai.OpenAI(api_key=key, base_url=base_url, timeout=timeout, max_retries=max_retries)
        self.json_mode = "json_schema"
        self._json_mode_known = False

    def _create(self, kwargs: dict[str, Any], probing: bool) -> Any:
        """One completion. The first structured call probes ``json_schema`` without retries:
        a server that refuses it (llama-cpp-python's answers 500 with a validation error, others
        400) is asked with ``json_object`` and a schema from then on."""
        if not probing:
            return self.client.chat.completions.create(**kwargs)
        openai = self._openai
        try:
            resp = self.client.with_options(max_retries=0).chat.completions.create(**kwargs)
        except openai.APIStatusError as e:
            msg = str(e).lower()
            if "json_schema" not in msg and "response_format" not in msg:
                return self.client.chat.completions.create(**kwargs)  # not about the format
            self.json_mode = "json_object"
            schema = kwargs["response_format"]["json_schema"]["schema"]
            kwargs = {**kwargs, "response_format": self._response_format(schema)}
            resp = self.client.chat.completions.create(**kwargs)
        except openai.APIConnectionError:  # transient: try again with the normal retries
            resp = self.client.chat.completions.create(**kwargs)
        self._json_mode_known = True
        return resp

    def _response_format(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.json_mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}
        return {"type": "json_object", "schema": schema}

    def generate(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None = None,
        *,
        temperature: float = 0.0,
        max_tokens: int = 256,
        seed: int | None = None,
    ) -> Completion:
        openai = self._openai
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": temperature,
            "max_tokens": max_tokens,
        }
        if seed is not None:
            kwargs["seed"] = seed
        started = time.perf_counter()
        if schema is not None:
            kwargs["response_format"] = self._response_format(schema)
        try:
            resp = self._create(kwargs, probing=schema is not None and not self._json_mode_known)
        except openai.APIStatusError as e:
            msg = str(e).lower()
            if any(h in msg for h in _CONTEXT_HINTS):
                raise ContextLengthError(f"context_length: {e}") from e
            raise ModelError(f"{type(e).__name__}: {e}") from e
        except openai.APIError as e:  # connection errors and time-outs after retries
            raise ModelError(f"{type(e).__name__}: {e}") from e
        text = resp.choices[0].message.content or "" if resp.choices else ""
        usage = resp.usage
        return Completion(
            text,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            latency_ms=(time.perf_counter() - started) * 1000,
        )
