"""The test suite's network guard: no connection to any host but loopback.

The suite's conftest installs it in its own process and puts this folder on ``PYTHONPATH``, so
every Python subprocess a test starts (``vreact`` runs, servers) imports it at start-up, as
Python imports any ``sitecustomize`` it finds. It is inert unless ``VREACT_LOOPBACK_ONLY=1``.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from typing import Any

_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


class NetworkAccessRefused(OSError):
    """A test tried to reach a host that is not on this machine's loopback."""


def _loopback(address: Any) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    if not isinstance(host, str):
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


def _check(sock: socket.socket, address: Any) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address):
        raise NetworkAccessRefused(f"tests may reach loopback only, not {address!r}")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check(self, address)
    _connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(self, address)
    return _connect_ex(self, address)


def install() -> None:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]


if os.environ.get("VREACT_LOOPBACK_ONLY") == "1":
    install()
