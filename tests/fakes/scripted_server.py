"""An OpenAI-compatible server whose every reply is a function of the request (a script)."""

from __future__ import annotations

import time
from collections.abc import Callable

from tests.fakes._loopback import JSON
from tests.fakes.chaos_server import ChaosServer, _completion


class ScriptedServer(ChaosServer):
    """Answers each chat completion with ``reply(request body)``, ``latency`` seconds after it
    came; keeps every request."""

    def __init__(self, reply: Callable[[JSON], str], latency: float = 0.0) -> None:
        super().__init__(latency=latency)
        self.reply = reply

    def handle_completion(
        self, body: JSON, authorization: str | None = None
    ) -> tuple[int, JSON, dict[str, str]]:
        if self.latency:
            time.sleep(self.latency)
        with self._lock:
            self.requests.append(body)
            self._served += 1
            served = self._served
        return 200, self.completion(body, served), {}

    def completion(self, body: JSON, served: int) -> JSON:
        """The chat.completion answering ``body``, the ``served``-th request."""
        return _completion(body, self.reply(body), served)
