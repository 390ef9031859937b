"""Models by name: ``provider/model``. Built-in providers use the same surface a plugin would."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from vreact.model._base import Model, ModelConfigError, endpoint_of
from vreact.model._cache import ResponseCache
from vreact.model._resilient import CallPolicy, Price, ResilientModel

ProviderFactory = Callable[..., Model]
_PROVIDERS: dict[str, ProviderFactory] = {}


def provider(name: str) -> Callable[[ProviderFactory], ProviderFactory]:
    """Register a provider factory ``factory(model_name, **options) -> Model``."""

    def register(factory: ProviderFactory) -> ProviderFactory:
        _PROVIDERS[name] = factory
        return factory

    return register


@provider("openai")
def _openai(model: str, **options: Any) -> Model:
    from vreact.model._openai import OpenAIModel

    return OpenAIModel(model, **options)


@provider("anthropic")
def _anthropic(model: str, **options: Any) -> Model:
    from vreact.model._anthropic import AnthropicModel

    return AnthropicModel(model, **options)


@provider("llamacpp")
def _llamacpp(model: str, **options: Any) -> Model:
    from vreact.model._llamacpp import LlamaCppModel

    options.pop("base_url", None)
    return LlamaCppModel(model, **options)


@provider("mock")
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
    if prov not in _PROVIDERS:
        close = difflib.get_close_matches(prov, _PROVIDERS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f" (known: {', '.join(sorted(_PROVIDERS))})"
        raise ModelConfigError(f"model {name!r}: unknown provider {prov!r}{hint}")
    made = _PROVIDERS[prov](model, **options)
    if prov == "mock":
        return made
    endpoint = endpoint_of(made)
    secrets = (options["api_key"],) if options.get("api_key") else ()
    return ResilientModel(made, endpoint, policy, cache, price, secrets)
