"""What the fake servers share: a JSON handler and a loopback server on an OS-chosen port."""

from __future__ import annotations

import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

JSON = dict[str, Any]


class JSONHandler(BaseHTTPRequestHandler):
    """A handler whose ``owner`` is bound to the fake server by a subclass made in ``start``.

    A reply goes out in one write on a TCP_NODELAY socket: headers and body written apart
    meet Nagle's algorithm and the client's delayed ACK, about 40 ms per request."""

    owner: Any
    protocol_version = "HTTP/1.1"
    extra_headers: ClassVar[dict[str, str]] = {}

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send_json(self, status: int, payload: JSON, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in {**self.extra_headers, **(headers or {})}.items():
            self.send_header(key, value)
        self._headers_buffer.append(b"\r\n" + data)  # end_headers, with the body in the same write
        self.flush_headers()

    def json_body(self) -> JSON:
        """The request's JSON object; ValueError when it is not one."""
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.loads(raw or b"{}")
        if not isinstance(body, dict):
            raise ValueError("body must be a JSON object")
        return body

    def log_message(self, format: str, *args: Any) -> None:
        """Silence default request logging."""


class _QuietServer(ThreadingHTTPServer):
    """A client that goes away mid-request (a killed run) is normal here, not a traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class LoopbackServer:
    """Serves ``handler`` on 127.0.0.1 from a daemon thread; a context manager."""

    handler: type[JSONHandler]
    url_suffix = ""  # what base_url adds after http://127.0.0.1:PORT

    def __init__(self) -> None:
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()  # wakes stalled handlers so stop() never waits on them
        self.port = 0  # the port start() binds (0: one the OS chooses)

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}{self.url_suffix}"

    def start(self) -> Any:
        """Bind a loopback port (``port``, else one the OS chooses) and serve from a daemon thread."""
        handler = type("Handler", (self.handler,), {"owner": self})
        self._stopping.clear()
        self._httpd = _QuietServer(("127.0.0.1", self.port), handler)
        self._httpd.daemon_threads = True
        # polled every 20 ms, not every 0.5 s (the default), so stop() returns at once
        serve = self._httpd.serve_forever
        self._thread = threading.Thread(target=serve, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut down the server and wait for its thread; stalled requests are dropped unanswered."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
