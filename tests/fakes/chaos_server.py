"""An OpenAI-compatible chat-completions server that misbehaves on purpose.

Used by tests to check that clients survive schema-valid nonsense, prose that is
not JSON, HTTP 500, HTTP 429 and (on request) a server that stalls. Standard library only;
binds 127.0.0.1 only.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
import time
from typing import Any

from tests.fakes._loopback import JSON, JSONHandler, LoopbackServer

KINDS = ("nonsense", "prose", "http500", "http429")
#: Not in the default mix: the server says nothing for ``stall_seconds``, then answers nonsense.
STALL = "stall"
WORDS = ("blue", "banana", "quantum", "teapot", "gravel", "lantern", "whisper", "walrus")
RETRY = {"retry-after": "0", "retry-after-ms": "1"}  # the SDK ignores a 0 retry-after
PROSE = (
    "I think the answer is probably somewhere in the documents.",
    "Let me think about this carefully. The evidence seems inconclusive, honestly.",
    "Sure! Here is what I found: nothing much, but it was an interesting search.",
    "As an assistant, I would say the result depends on many factors.",
)


def _error(msg: str, type_: str, param: str | None = None, code: str | None = None) -> JSON:
    """Build an OpenAI-style error body."""
    return {"error": {"message": msg, "type": type_, "param": param, "code": code}}


class SchemaFaker:
    """Generates random JSON values that are valid against a (subset of) JSON Schema."""

    def __init__(self, rng: random.Random, root: JSON) -> None:
        self.rng = rng
        self.root = root

    def words(self, low: int = 1, high: int = 4) -> str:
        """Return ``low``..``high`` random nonsense words."""
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(low, high)))

    def _resolve(self, ref: str) -> Any:
        node: Any = self.root
        for part in ref.lstrip("#/").split("/"):
            if part:
                node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def make(self, schema: Any, depth: int = 0) -> Any:
        """Return a value valid against ``schema``."""
        if schema is True or not isinstance(schema, dict):
            return self.words()
        if "$ref" in schema:
            return self.make(self._resolve(schema["$ref"]), depth + 1)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.rng.choice(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.make(self.rng.choice(schema[key]), depth + 1)
        if "allOf" in schema:
            merged = {k: v for sub in schema["allOf"] for k, v in sub.items()}
            return self.make(merged, depth + 1)
        type_ = schema.get("type")
        if isinstance(type_, list):
            choices = [t for t in type_ if t != "null" or depth > 6] or type_
            type_ = self.rng.choice(choices)
        if type_ is None:
            type_ = "array" if "items" in schema else "string"
            type_ = "object" if "properties" in schema else type_
        if type_ in ("boolean", "null"):
            return None if type_ == "null" else self.rng.random() < 0.5
        return getattr(self, f"_make_{type_}")(schema, depth)

    def _make_object(self, schema: JSON, depth: int) -> JSON:
        props: JSON = schema.get("properties", {})
        required = set(schema.get("required", []))
        out: JSON = {}
        for name, sub in props.items():
            if name in required or depth < 8:
                out[name] = self.make(sub, depth + 1)
        return out

    def _make_string(self, schema: JSON, depth: int) -> str:
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        text = self.words()
        while len(text) < low:
            text += " " + self.rng.choice(WORDS)
        if high is not None:
            text = text[:high]
        return text

    @staticmethod
    def _bounds(schema: JSON, step: float) -> tuple[float, float]:
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is None and "exclusiveMinimum" in schema:
            low = schema["exclusiveMinimum"] + step
        if high is None and "exclusiveMaximum" in schema:
            high = schema["exclusiveMaximum"] - step
        if low is None:
            low = 0 if high is None else min(0, high)
        return low, low + 100 if high is None else high

    def _make_integer(self, schema: JSON, depth: int) -> int:
        low, high = self._bounds(schema, 1)
        return self.rng.randint(math.ceil(low), math.floor(high))

    def _make_number(self, schema: JSON, depth: int) -> float:
        low, high = self._bounds(schema, 0.001)
        return min(max(round(self.rng.uniform(low, high), 3), low), high)

    def _make_array(self, schema: JSON, depth: int) -> list[Any]:
        low = schema.get("minItems", 0)
        high = schema.get("maxItems", max(low, 3 if depth < 8 else low))
        items = schema.get("items", {"type": "string"})
        return [self.make(items, depth + 1) for _ in range(self.rng.randint(low, high))]


class ChaosServer(LoopbackServer):
    """OpenAI-compatible /v1/chat/completions on 127.0.0.1 that answers with a seeded mix of
    schema-valid nonsense, prose that is not JSON, HTTP 500 and HTTP 429 (and ``stall`` when
    named in ``mix`` or ``script``).

    ``requests`` holds each request body, ``authorizations`` its Authorization header, and
    ``counts`` how often each kind was served (``stall`` only once one was)."""

    def __init__(
        self,
        mix: dict[str, float] | None = None,
        seed: int = 0,
        reject_json_schema: bool = False,
        script: list[str] | None = None,
        stall_seconds: float = 30.0,
        deterministic: bool = False,
        latency: float = 0.0,
        honour_max_tokens: bool = False,
    ) -> None:
        super().__init__()
        self.mix = dict(mix) if mix is not None else dict.fromkeys(KINDS, 0.25)
        unknown = (set(self.mix) | set(script or [])) - {*KINDS, STALL}
        if unknown:
            raise ValueError(f"unknown kinds: {sorted(unknown)}")
        self.seed = seed
        self.rng = random.Random(seed)
        # deterministic: each reply is a function of (seed, request body) alone, whatever the
        # order or concurrency of requests, so interrupted and resumed runs see the same server
        self.deterministic = deterministic
        self.latency = latency  # seconds before each reply
        #: cut each reply to the request's max_tokens (4 characters a token), as a real server does
        self.honour_max_tokens = honour_max_tokens
        self.reject_json_schema = reject_json_schema
        self.script = list(script) if script else None
        self.stall_seconds = stall_seconds
        self.requests: list[JSON] = []
        self.authorizations: list[str | None] = []
        self.counts: dict[str, int] = dict.fromkeys(KINDS, 0)
        self._lock = threading.Lock()
        self._served = 0

    def handle_completion(
        self, body: JSON, authorization: str | None = None
    ) -> tuple[int, JSON, dict[str, str]] | None:
        """Pick the reply to one request: (status, JSON body, extra headers), or None when the
        server was stopped during a stall and the connection should just be dropped."""
        fmt = body.get("response_format") or {}
        rng = self.rng
        if self.deterministic:
            digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
            rng = random.Random(f"{self.seed}:{digest}")
        if self.latency:
            time.sleep(self.latency)
        with self._lock:
            self.requests.append(body)
            self.authorizations.append(authorization)
            if self.reject_json_schema and fmt.get("type") == "json_schema":
                msg = "response_format type json_schema is not supported; "
                msg += "use json_object with a schema"
                return 400, _error(msg, "invalid_request_error", "response_format"), {}
            if self.script:
                kind = self.script[self._served % len(self.script)]
            else:
                kind = rng.choices(list(self.mix), weights=list(self.mix.values()))[0]
            self._served += 1
            served = self._served
            self.counts[kind] = self.counts.get(kind, 0) + 1
        if kind == STALL:
            if self._stopping.wait(self.stall_seconds):
                return None
            kind = "nonsense"
        with self._lock:
            text = ""
            if kind == "nonsense":
                schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
                faker = SchemaFaker(rng, schema or {})
                if schema:
                    value = faker.make(schema)
                else:
                    value = {"thought": faker.words(3, 8), "answer": faker.words(1, 4)}
                text = json.dumps(value)
            elif kind == "prose":
                text = rng.choice(PROSE)
        if kind == "http500":
            msg = "The server had an error while processing your request."
            return 500, _error(msg, "server_error"), RETRY
        if kind == "http429":
            msg = "Rate limit reached. Please try again."
            return 429, _error(msg, "requests", None, "rate_limit_exceeded"), RETRY
        limit = body.get("max_tokens") if self.honour_max_tokens else None
        return 200, _completion(body, text, served, limit), {}


def _completion(body: JSON, text: str, served: int, max_tokens: int | None = None) -> JSON:
    """Wrap ``text`` in a chat.completion object with approximate token usage (4 characters a
    token), cut to ``max_tokens`` when given."""
    prompt_chars = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
    if max_tokens is not None and len(text) // 4 + 1 > max_tokens:
        text = text[: 4 * (max_tokens - 1)]
    prompt, completion = prompt_chars // 4, len(text) // 4 + 1
    message = {"role": "assistant", "content": text}
    return {
        "id": f"chatcmpl-chaos{served}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "chaos"),
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


class _Handler(JSONHandler):
    """Request handler; ``owner`` is bound to the owning ChaosServer by a subclass."""

    owner: ChaosServer

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            model = {"id": "chaos", "object": "model", "created": 0, "owned_by": "chaos"}
            self.send_json(200, {"object": "list", "data": [model]})
        else:
            self.send_json(404, _error(f"Not found: {self.path}", "invalid_request_error"))

    def do_POST(self) -> None:
        if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":
            self.send_json(404, _error(f"Not found: {self.path}", "invalid_request_error"))
            return
        try:
            body = self.json_body()
        except ValueError as exc:
            self.send_json(400, _error(f"Invalid JSON body: {exc}", "invalid_request_error"))
            return
        reply = self.owner.handle_completion(body, self.headers.get("Authorization"))
        if reply is None:
            self.close_connection = True
            return
        self.send_json(*reply)


ChaosServer.handler = _Handler
ChaosServer.url_suffix = "/v1"
