"""Models by name: ``provider/model``. Built-in providers use the same surface a plugin would."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vreact.model._base import Model, ModelConfigError, endpoint_of
from vreact.model._cache import ResponseCache
from vreact.model._resilient import CallPolicy, Price, ResilientModel
from vreact.registry import Registry, UnknownName

ProviderFactory = Callable[..., Model]


@dataclass(frozen=True)
class Provider:
    """A registered provider: its factory, the experiment settings it reads (None: all of them)
    and, asked when a file is checked since it may depend on the installed SDK, the sampling
    settings (``temperature``, ``seed``) its models take none of, and why (None: none)."""

    factory: ProviderFactory
    reads: frozenset[str] | None = None
    refuses: Callable[[], dict[str, str]] | None = None


class UnknownProvider(UnknownName, ModelConfigError):
    pass


PROVIDERS: Registry[Provider] = Registry("provider", UnknownProvider)

#: The retry layer's settings (an experiment's ``limits``): every provider behind it reads them.
RETRY_SETTINGS = ("max_retries", "call_timeout", "endpoint_concurrency")
#: The reasoning watchdog's: only a provider that streams its reply can cut it off.
WATCHDOG_SETTINGS = ("reasoning_only_timeout_s", "reasoning_only_max_tokens")
#: An HTTP client's: the server and one request's time-out.
HTTP_SETTINGS = ("base_url", "timeout")


def provider(
    name: str,
    reads: tuple[str, ...] | None = None,
    refuses: Callable[[], dict[str, str]] | None = None,
) -> Callable[[ProviderFactory], ProviderFactory]:
    """Register a provider factory ``factory(model_name, **options) -> Model``. ``reads`` names
    the experiment settings it reads (``base_url`` and ``limits``' fields); None (a plugin
    that says nothing): all of them. ``refuses`` says which sampling settings (``temperature``,
    ``seed``) its models take none of, and why (None: it takes both). Validation refuses a
    setting no model of an experiment reads, and an explicit temperature a model would never be
    sent, and warns about one a model ignores."""

    return PROVIDERS.register(
        name, lambda _, factory: Provider(factory, None if reads is None else frozenset(reads), refuses)
    )


def refused_by(model: str, setting: str) -> str | None:
    """Why a call to ``model`` (``provider/model``) carries no sampling ``setting``
    (``temperature``, ``seed``), or None when it does."""
    found = PROVIDERS.registered().get(model.partition("/")[0])
    return found.refuses().get(setting) if found is not None and found.refuses is not None else None


def _anthropic_refuses() -> dict[str, str]:
    from vreact.model._anthropic import refused

    return refused()


def providers_reading(setting: str) -> list[str]:
    """The registered providers that declare they read ``setting`` (not the ones that declare
    nothing: a plugin)."""
    return [
        n for n, p in sorted(PROVIDERS.registered().items()) if p.reads is not None and setting in p.reads
    ]


def provider_reads(name: str, setting: str) -> bool:
    """Whether models of provider ``name`` (the part before ``/``) read ``setting``."""
    found = PROVIDERS.registered().get(name)
    return found is None or found.reads is None or setting in found.reads


#: A provider whose models take native tool calls (a models file's ``actions: native``).
NATIVE_ACTIONS = "actions"


@provider("openai", reads=(*HTTP_SETTINGS, *RETRY_SETTINGS, *WATCHDOG_SETTINGS, NATIVE_ACTIONS))
def _openai(model: str, **options: Any) -> Model:
    from vreact.model._openai import OpenAIModel

    return OpenAIModel(model, **options)


@provider("anthropic", reads=(*HTTP_SETTINGS, *RETRY_SETTINGS, NATIVE_ACTIONS), refuses=_anthropic_refuses)
def _anthropic(model: str, **options: Any) -> Model:
    from vreact.model._anthropic import AnthropicModel

    return AnthropicModel(model, **options)


@provider("llamacpp", reads=RETRY_SETTINGS)
def _llamacpp(model: str, **options: Any) -> Model:
    from vreact.model._llamacpp import LlamaCppModel

    return LlamaCppModel(model, **options)


@provider("mock", reads=(NATIVE_ACTIONS,))  # scripted from Python: no server, limit or watchdog
def _mock(model: str, **options: Any) -> Model:
    from vreact.model._mock import MockModel

    if "outputs" not in options:
        raise ModelConfigError("mock/ models are scripted from Python: get_model('mock/x', outputs=[...])")
    return MockModel(options["outputs"], name=f"mock/{model}")


def get_model(
    name: str,
    *,
    cache: ResponseCache | None = None,
    policy: CallPolicy | None = None,
    price: Price | None = None,
    **options: Any,
) -> Model:
    """Make a model from ``provider/model`` (e.g. ``openai/gpt-4o-mini``,
    ``llamacpp/smollm2-135m``). Real providers come behind the retry layer (``policy``) and,
    when given, the response ``cache``; ``mock/`` models are returned as they are."""
    prov, sep, model = name.partition("/")
    if not sep or not model:
        raise ModelConfigError(f"model {name!r}: expected provider/model, e.g. llamacpp/smollm2-135m")
    made = PROVIDERS[prov].factory(model, **options)  # UnknownProvider names the closest
    if prov == "mock":
        return made
    endpoint = endpoint_of(made)
    secrets = (options["api_key"],) if options.get("api_key") else ()
    return ResilientModel(made, endpoint, policy, cache, price, secrets)
