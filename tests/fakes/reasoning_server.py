"""An OpenAI-compatible server that reasons forever: a streamed request gets
``reasoning_content`` deltas until the client hangs up; a plain one is never answered."""

from __future__ import annotations

import json
import time

from tests.fakes._loopback import JSONHandler, LoopbackServer


class ReasoningServer(LoopbackServer):
    url_suffix = "/v1"

    def __init__(
        self,
        chunk: str = "Let me think about this step by step. ",
        every: float = 0.005,
        then: str = "",
        finish: str = "stop",
    ) -> None:
        """``then``: after 20 reasoning chunks, answer this text and end the stream (default:
        reason forever), its last chunk's ``finish_reason`` ``finish``."""
        super().__init__()
        self.chunk, self.every, self.then, self.finish = chunk, every, then, finish
        self.streamed = 0  # requests answered with a stream
        self.stalled = 0  # plain requests left unanswered


class _Handler(JSONHandler):
    owner: ReasoningServer

    def do_POST(self) -> None:
        body = self.json_body()
        owner = self.owner
        if not body.get("stream"):
            owner.stalled += 1
            owner._stopping.wait(600)  # never answers: the client's call timeout ends it
            self.close_connection = True
            return
        owner.streamed += 1
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        delta = {"role": "assistant", "content": None, "reasoning_content": owner.chunk}
        event = {"id": "r", "object": "chat.completion.chunk", "created": 0, "model": body.get("model")}
        data = f"data: {json.dumps({**event, 'choices': [{'index': 0, 'delta': delta}]})}\n\n".encode()
        sent = 0
        try:
            while not owner._stopping.is_set():
                if owner.then and sent == 20:
                    answer = {"role": "assistant", "content": owner.then}
                    end = {**event, "choices": [{"index": 0, "delta": answer, "finish_reason": owner.finish}]}
                    self.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
                    self.wfile.flush()
                    return
                self.wfile.write(data)
                self.wfile.flush()
                sent += 1
                time.sleep(owner.every)
        except (BrokenPipeError, ConnectionResetError):
            return


ReasoningServer.handler = _Handler
