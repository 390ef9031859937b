"""Models for a run: names or aliases from a models file, with base URLs, keys, structured-output
modes and prices, behind the retry layer and the cache. Command-line values override the file."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from vreact.model import CallPolicy, Model, ModelConfigError, Price, ResponseCache, get_model, provider_reads
from vreact.registry import suggestion
from vreact.spec import ModelEntry, ModelsFile


def build_models(
    names: dict[str, str],
    catalog: ModelsFile | None = None,
    *,
    base_url: str | None = None,
    timeout: float | None = None,
    cache: ResponseCache | None = None,
    policy: CallPolicy | None = None,
    made: dict[str, Model] | None = None,
) -> dict[str, Model]:
    """One model per role (``default`` plus any of the calling roles); a name is an alias of
    ``catalog`` or a ``provider/model`` string. Each distinct name is made once (``made`` keeps
    those made so far, shared between calls). A models-file entry's own ``base_url`` wins over
    ``base_url``, which is for the models without one."""
    made = {} if made is None else made
    for name in dict.fromkeys(names.values()):
        if name in made:
            continue
        entry = catalog.models.get(name) if catalog else None
        if entry is None and "/" not in name:
            aliases = list(catalog.models) if catalog else []
            hint = suggestion(name, aliases, listed=False) or " (no --models file defines it)"
            raise ModelConfigError(f"model {name!r}: not provider/model nor a known alias{hint}")
        model = entry.model if entry else name
        provider = model.split("/", 1)[0]
        options: dict[str, Any] = {}
        url, _ = served_at(entry, base_url)
        if url and provider_reads(provider, "base_url"):
            options["base_url"] = url
        if timeout is not None and provider_reads(provider, "timeout"):
            options["timeout"] = timeout
        if entry and entry.api_key_env:
            key = os.environ.get(entry.api_key_env)
            if not key:
                raise ModelConfigError(f"model {name!r}: set {entry.api_key_env} (its api_key_env)")
            options["api_key"] = key
        if policy is not None and policy.watchdog.on and provider_reads(provider, "reasoning_only_timeout_s"):
            options["watchdog"] = policy.watchdog  # it streams; the other providers cannot cut a reply
        if entry and entry.structured_output and provider == "openai":
            options["json_mode"] = entry.structured_output
        price = Price(entry.price.input, entry.price.output) if entry and entry.price else None
        made[name] = get_model(model, cache=cache, policy=policy, price=price, **options)
        if entry and entry.sha256:  # recorded in the run's provenance (a local file's was checked)
            made[name].declared_sha256 = entry.sha256  # type: ignore[attr-defined]
        if entry and entry.actions == "native":
            made[name].actions = "native"  # type: ignore[attr-defined]
        if entry and entry.pool and hasattr(made[name], "endpoint"):
            # the pool is the endpoint (the run's identity, the cache's key, the concurrency
            # slot); the member is where this process's calls go, and what each call records
            made[name].endpoint = f"pool:{name}"  # type: ignore[attr-defined]
            made[name].url = options.get("base_url")  # type: ignore[attr-defined]
    return {role: made[name] for role, name in names.items()}


def served_at(entry: ModelEntry | None, base_url: str | None) -> tuple[str | None, str | None]:
    """The server a model is made with, and which field gives it: its models-file entry's own
    (``base_url``, or ``pool``: the member this process calls), else ``base_url`` (``experiment``:
    the experiment's, for the models without one of their own); (None, None) when none does (the
    provider's own, or its environment's). Only a provider that reads ``base_url`` is given it."""
    if entry and entry.base_url:
        return entry.base_url, "base_url"
    if entry and entry.pool:
        return pool_member(entry.pool), "pool"
    if base_url:
        return base_url, "experiment"
    return None, None


#: Set in each Ray worker: its node's IP and its index, which choose its member of a pool.
NODE_ENV, INDEX_ENV = "VREACT_NODE_IP", "VREACT_WORKER_INDEX"


def pool_member(pool: list[str]) -> str:
    """The member of an endpoint pool this process calls: of those on its node (by host), else of
    all, the one its worker index falls on (the first, outside Ray)."""
    node, index = os.environ.get(NODE_ENV), int(os.environ.get(INDEX_ENV, "0") or 0)
    here = [url for url in pool if node and urlsplit(url).hostname == node] or pool
    return here[index % len(here)]
