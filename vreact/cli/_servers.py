"""Before ``vreact run``, ``experiment`` and ``demo`` make anything: each model the run calls at
a server (``openai/``, ``anthropic/``) has its API key, and something answers at each server; else
the run is refused, one line per model or server naming where it was given (``FILE:LINE: field``,
``FILE: --set KEY`` or the flag), exit 2, with no run folder made and no model loaded.

The check connects to each server (its host and port, through the proxy the environment names
for it, as the model's client would) and sends nothing: a server that accepts the connection
passes, whatever it would answer. It is the command line's: the Python API (``resolve``,
``run_experiment``) checks nothing, so a script that puts its own models in place of the
experiment's named ones still runs."""

from __future__ import annotations

import os
import socket
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import ModuleType
from urllib.parse import urlsplit

from vreact.experiment.models import served_at
from vreact.model import ModelConfigError, provider_reads
from vreact.spec import Experiment, ModelsFile, load_models
from vreact.spec._loader import field_line

Loc = tuple[str | int, ...]

#: Seconds to wait for a server to accept a connection.
CONNECT_TIMEOUT = 5.0


@dataclass(frozen=True)
class Given:
    """How the user gave an experiment: ``at`` says where a field of it is (``FILE:LINE: field``,
    ``FILE: --set KEY``, or the flag that gave it); ``named`` what the field is called there
    (``base_url``, ``--base-url``). A configuration's fields are located by its name:
    ``("configurations", NAME, ...)``."""

    at: Callable[[Loc], str]
    named: Callable[[Loc], str]


def _providers() -> dict[str, ModuleType]:
    """The providers that call a server, each module saying its key's and server's environment
    variables (``API_KEY_ENV``, ``BASE_URL_ENV``), its own server and which server needs a key."""
    from vreact.model import _anthropic, _openai

    return {"openai": _openai, "anthropic": _anthropic}


@dataclass(frozen=True)
class Served:
    """A model the run calls at a server: its name as given (an alias or ``provider/model``),
    its ``provider/model``, where its name was given, its server and where that was given
    (None: the provider's own)."""

    name: str
    model: str
    named_at: str
    url: str
    url_at: str | None


def check_servers(exp: Experiment, names: list[str], given: Given, connect: bool = True) -> None:
    """Refuse (``ModelConfigError``, a line each) the models of ``names`` that have no API key,
    then, with ``connect``, the servers where nothing accepts a connection."""
    providers = _providers()
    catalog = load_models(exp.models_file) if exp.models_file else None
    served, keyless = [], []
    for name in names:
        entry = catalog.models.get(name) if catalog else None
        model = entry.model if entry else name
        provider = providers.get(model.partition("/")[0])
        if provider is None:
            continue
        reads = provider_reads(model.partition("/")[0], "base_url")
        url, source = served_at(entry, exp.base_url) if reads else (None, None)
        url_at: str | None = None
        if source == "experiment":
            url_at = given.at(("base_url",))
        elif source is not None:
            url_at = _in_models_file(exp, ("models", name, source))
        elif os.environ.get(provider.BASE_URL_ENV):
            url, url_at = os.environ[provider.BASE_URL_ENV], provider.BASE_URL_ENV
        named_at = _named_at(exp, name, catalog, given)
        has_key = bool(entry and entry.api_key_env) or bool(os.environ.get(provider.API_KEY_ENV))
        if not has_key and provider.own_server(url):
            where = given.named(("base_url",))
            why = f"needs an API key: set {provider.API_KEY_ENV}, or give {where} for a local server"
            keyless.append(f"{named_at}: {model} {why}")
        served.append(Served(name, model, named_at, url or provider.DEFAULT_BASE_URL, url_at))
    if keyless:
        raise ModelConfigError("\n".join(keyless))
    if connect:
        dead = unanswered(served)
        if dead:
            raise ModelConfigError("\n".join(dead))


def unanswered(served: list[Served], timeout: float = CONNECT_TIMEOUT) -> list[str]:
    """A line for each server of ``served`` where nothing accepts a connection (each host and
    port tried once, all at once)."""
    by_server: dict[tuple[str, int] | str, list[Served]] = {}
    for s in served:
        by_server.setdefault(_address(s.url), []).append(s)
    if not by_server:
        return []
    with ThreadPoolExecutor(max_workers=len(by_server)) as pool:
        why = dict(zip(by_server, pool.map(lambda a: _refused(a, timeout), by_server), strict=True))
    out = []
    for address, models in by_server.items():
        if why[address] is None:
            continue
        first = models[0]
        names = ", ".join(dict.fromkeys(m.model for m in models))
        out.append(
            f"{first.url_at or first.named_at}: nothing answers at {first.url} ({why[address]}), the"
            f" server of {names}: start it or fix the address, then run the same command"
        )
    return out


def _address(url: str) -> tuple[str, int] | str:
    """The host and port a request to ``url`` connects to: the proxy's, where the environment
    names one for it (as the models' HTTP client reads it); the URL itself when it has none."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
        proxies = urllib.request.getproxies()
        proxy = proxies.get(parts.scheme) or proxies.get("all")
        if proxy and host and not urllib.request.proxy_bypass(host):
            p = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
            default = 443 if p.scheme == "https" else 1080 if p.scheme.startswith("socks") else 80
            host, port = p.hostname, p.port or default
    except ValueError:  # a port out of range: the connection is what says so
        return url
    return (host, port) if host else url


def _refused(address: tuple[str, int] | str, timeout: float) -> str | None:
    """Why nothing accepts a connection at ``address``, or None when something does."""
    if isinstance(address, str):
        return "no host and port to connect to"
    try:
        with socket.create_connection(address, timeout=timeout):
            return None
    except OSError as e:
        if isinstance(e, TimeoutError):
            return f"no connection within {timeout:g} s"
        return e.strerror or str(e) or type(e).__name__


def _named_at(exp: Experiment, name: str, catalog: ModelsFile | None, given: Given) -> str:
    """Where the experiment names the model ``name``: its models, a configuration's, or the
    models file's roles."""
    for role, n in exp.models.items():
        if n == name:
            return given.at(("models", role))
    for c in exp.configurations:
        for role, n in c.models.items():
            if n == name:
                return given.at(("configurations", c.name, "models", role))
    if catalog is not None:
        for role, n in catalog.roles.items():
            if n == name:
                return _in_models_file(exp, ("roles", role))
    return given.at(("models", "default"))


def _in_models_file(exp: Experiment, loc: Loc) -> str:
    path = str(exp.models_file)
    return f"{path}:{field_line(path, loc)}: {'.'.join(map(str, loc))}"
