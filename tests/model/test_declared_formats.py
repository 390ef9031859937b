"""A server's declared ``response_format`` types shape the request: one whose OpenAPI document
leaves out ``json_schema`` (llama-cpp-python's) is asked for ``json_object`` with the schema from
the first request, so it never answers a 500 first; said once. The real server's document is
read in tests/model/test_real_server.py."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from tests.fakes._loopback import JSONHandler, LoopbackServer
from vreact.model import Notice
from vreact.model._openai import OpenAIModel, _response_formats

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def document(types: list[str]) -> dict[str, Any]:
    """An OpenAPI document in FastAPI's shape: the request body a ``$ref``, its
    ``response_format`` an ``anyOf`` of a ``$ref`` and null, the type an enum."""
    return {
        "openapi": "3.1.0",
        "paths": {
            "/v1/chat/completions": {
                "post": {
                    "requestBody": {
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Request"}}}
                    }
                }
            }
        },
        "components": {
            "schemas": {
                "Request": {
                    "properties": {
                        "response_format": {
                            "anyOf": [{"$ref": "#/components/schemas/ResponseFormat"}, {"type": "null"}]
                        }
                    }
                },
                "ResponseFormat": {"properties": {"type": {"type": "string", "enum": types}}},
            }
        },
    }


class Declaring(LoopbackServer):
    """Publishes ``doc`` at /openapi.json (None: 404) and answers each chat completion with a
    JSON answer, keeping the requests; where its document leaves out ``json_schema``, a request
    for it is refused with a 500, as llama-cpp-python's server refuses it."""

    url_suffix = "/v1"

    def __init__(self, doc: dict[str, Any] | None) -> None:
        super().__init__()
        self.doc, self.requests, self.documents_read = doc, [], 0
        self.refuses_json_schema = doc is not None and "json_schema" not in str(doc)

        class Handler(JSONHandler):
            def do_GET(self) -> None:
                if self.path == "/openapi.json" and self.owner.doc is not None:
                    self.owner.documents_read += 1
                    self.send_json(200, self.owner.doc)
                else:
                    self.send_json(404, {"detail": "Not Found"})

            def do_POST(self) -> None:
                body = self.json_body()
                self.owner.requests.append(body)
                asked = (body.get("response_format") or {}).get("type")
                if asked == "json_schema" and self.owner.refuses_json_schema:
                    refusal = "response_format: json_schema is not one of text, json_object"
                    self.send_json(500, {"error": {"message": refusal}})
                    return
                message = {"role": "assistant", "content": '{"answer": "Oslo"}'}
                usage = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}
                choice = {"index": 0, "message": message, "finish_reason": "stop"}
                reply = {"id": "x", "object": "chat.completion", "created": 0, "model": "m"}
                self.send_json(200, {**reply, "choices": [choice], "usage": usage})

        self.handler = Handler


def ask_twice(server: Declaring) -> list[warnings.WarningMessage]:
    model = OpenAIModel("m", base_url=server.base_url)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        for _ in range(2):
            assert model.generate([{"role": "user", "content": "Capital of Norway?"}], SCHEMA).text
    return [w for w in said if issubclass(w.category, Notice)]


def test_a_server_that_declares_no_json_schema_is_asked_for_json_object_from_the_first_request():
    with Declaring(document(["text", "json_object"])) as server:
        said, url = ask_twice(server), server.base_url
    assert [r["response_format"] for r in server.requests] == [{"type": "json_object", "schema": SCHEMA}] * 2
    assert server.documents_read == 1
    assert [str(w.message) for w in said] == [
        f"{url} takes response_format text, json_object (its /openapi.json), not json_schema:"
        " asking it for json_object with the schema"
    ]


@pytest.mark.parametrize(
    "doc",
    [document(["text", "json_object", "json_schema"]), None],
    ids=["declares json_schema", "no document"],
)
def test_a_server_that_declares_json_schema_or_nothing_is_asked_for_json_schema(doc):
    with Declaring(doc) as server:
        said = ask_twice(server)
    assert [r["response_format"]["type"] for r in server.requests] == ["json_schema"] * 2
    assert said == []


def test_a_models_file_that_names_the_format_reads_no_document():
    with Declaring(document(["text", "json_object"])) as server:
        model = OpenAIModel("m", base_url=server.base_url, json_mode="json_object")
        model.generate([{"role": "user", "content": "?"}], SCHEMA)
    assert server.documents_read == 0


@pytest.mark.parametrize(
    "doc",
    [
        {},
        {"paths": []},
        {"paths": {"/v1/chat/completions": {"post": {}}}},
        {"paths": {"/v1/chat/completions": {"post": {"requestBody": {"$ref": "#/a"}}}}, "a": {"$ref": "#/a"}},
        {"paths": {"/v1/chat/completions": {"post": {"requestBody": {"$ref": "#/no/such/thing"}}}}},
    ],
    ids=["empty", "paths a list", "no body", "a $ref cycle", "a $ref to nothing"],
)
def test_a_document_that_says_nothing_readable_declares_nothing(doc):
    assert _response_formats(doc) is None
