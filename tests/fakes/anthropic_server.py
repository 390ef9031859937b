"""A fake of Anthropic's Messages API (``POST /v1/messages``) that misbehaves on purpose.

Like :mod:`tests.fakes.chaos_server`, it answers with a seeded mix of schema-valid nonsense (as a
``tool_use`` block against the request's tool schema), prose (a ``text`` block), HTTP 500 and
HTTP 429 (``retry-after: 0``). It records every request body, the API key each request carried
and counts what it served. Standard library only; binds 127.0.0.1 only.

Its :attr:`AnthropicServer.base_url` is the server root *without* ``/v1``: the Anthropic SDK
posts to ``{base_url}/v1/messages``.
"""

from __future__ import annotations

import json
import random
import threading
from typing import Any, ClassVar

from tests.fakes._loopback import JSON, JSONHandler, LoopbackServer
from tests.fakes.chaos_server import PROSE, SchemaFaker

#: The kinds of the default mix.
KINDS = ("nonsense", "prose", "http500", "http429")
#: Also servable from a ``script``: a 400 for a prompt over the context window, a 401 bad key.
SCRIPT_ONLY = ("too_long", "http401")
_ERRORS: dict[str, tuple[int, str, str, dict[str, str]]] = {
    "http500": (500, "api_error", "Internal server error", {}),
    "http429": (
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your rate limit.",
        {"retry-after": "0"},
    ),
    "too_long": (400, "invalid_request_error", "prompt is too long: 212345 tokens > 200000 maximum", {}),
    "http401": (401, "authentication_error", "invalid x-api-key", {}),
}


def error_body(type_: str, message: str) -> JSON:
    """An Anthropic-style error body."""
    return {"type": "error", "error": {"type": type_, "message": message}}


class AnthropicServer(LoopbackServer):
    """Anthropic Messages API on 127.0.0.1 answering with a seeded mix of misbehaviour."""

    def __init__(
        self, mix: dict[str, float] | None = None, seed: int = 0, script: list[str] | None = None
    ) -> None:
        super().__init__()
        self.mix = dict(mix) if mix is not None else dict.fromkeys(KINDS, 0.25)
        unknown = (set(self.mix) - set(KINDS)) | (set(script or []) - set(KINDS) - set(SCRIPT_ONLY))
        if unknown:
            raise ValueError(f"unknown kinds: {sorted(unknown)}")
        self.rng = random.Random(seed)
        self.script = list(script) if script else None
        #: every request body, in arrival order (valid JSON objects only)
        self.requests: list[JSON] = []
        #: the key each request carried, in arrival order: its ``x-api-key`` header (anthropic<2),
        #: else its ``Authorization: Bearer`` token (anthropic>=2 sends the key that way); None if neither
        self.api_keys: list[str | None] = []
        #: each request's raw ``x-api-key`` header (None when absent)
        self.x_api_keys: list[str | None] = []
        #: every request's ``anthropic-version`` header
        self.versions: list[str | None] = []
        self.counts: dict[str, int] = dict.fromkeys(KINDS + SCRIPT_ONLY, 0)
        self._lock = threading.Lock()
        self._served = 0

    def handle_message(self, body: JSON, headers: Any) -> tuple[int, JSON, dict[str, str]]:
        """Pick the reply to one request: (status, JSON body, extra headers)."""
        with self._lock:
            self.requests.append(body)
            self.x_api_keys.append(headers.get("x-api-key"))
            self.api_keys.append(_key(headers))
            self.versions.append(headers.get("anthropic-version"))
            if self.script:
                kind = self.script[self._served % len(self.script)]
            else:
                kind = self.rng.choices(list(self.mix), weights=list(self.mix.values()))[0]
            self._served += 1
            served = self._served
            self.counts[kind] += 1
            if kind in _ERRORS:
                status, type_, message, extra = _ERRORS[kind]
                return status, error_body(type_, message), dict(extra)
            tools = body.get("tools") or []
            block: JSON
            if kind == "nonsense" and tools:
                tool = tools[0]
                schema = tool.get("input_schema") or {"type": "object"}
                value = SchemaFaker(self.rng, schema).make(schema)
                block = {
                    "type": "tool_use",
                    "id": f"toolu_fake{served}",
                    "name": tool["name"],
                    "input": value,
                }
            elif kind == "nonsense":
                faker = SchemaFaker(self.rng, {})
                text = json.dumps({"thought": faker.words(3, 8), "answer": faker.words(1, 4)})
                block = {"type": "text", "text": text}
            else:
                block = {"type": "text", "text": self.rng.choice(PROSE)}
        return 200, _message(body, block, served), {}


def _key(headers: Any) -> str | None:
    """The API key a request carried: ``x-api-key``, else a ``Bearer`` token."""
    if headers.get("x-api-key") is not None:
        return str(headers.get("x-api-key"))
    scheme, _, token = str(headers.get("Authorization") or "").partition(" ")
    return token if scheme.lower() == "bearer" and token else None


def _message(body: JSON, block: JSON, served: int) -> JSON:
    """Wrap one content block in a Messages API response with approximate token usage."""
    system = body.get("system") or ""
    chars = len(system if isinstance(system, str) else json.dumps(system))
    chars += sum(len(json.dumps(m.get("content"))) for m in body.get("messages", []))
    chars += len(json.dumps(body.get("tools") or []))
    output = len(block.get("text") or json.dumps(block.get("input")))
    return {
        "id": f"msg_fake{served:06d}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-fake"),
        "content": [block],
        "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": chars // 4, "output_tokens": output // 4 + 1},
    }


class _Handler(JSONHandler):
    """Request handler; ``owner`` is bound to the owning AnthropicServer by a subclass."""

    owner: AnthropicServer
    extra_headers: ClassVar[dict[str, str]] = {"request-id": "req_fake"}

    def do_GET(self) -> None:
        self.send_json(404, error_body("not_found_error", f"Not found: {self.path}"))

    def do_POST(self) -> None:
        if self.path.split("?")[0].rstrip("/") != "/v1/messages":
            self.send_json(404, error_body("not_found_error", f"Not found: {self.path}"))
            return
        try:
            body = self.json_body()
        except ValueError as exc:
            self.send_json(400, error_body("invalid_request_error", f"Invalid JSON body: {exc}"))
            return
        self.send_json(*self.owner.handle_message(body, self.headers))


AnthropicServer.handler = _Handler
AnthropicServer.url_suffix = ""
