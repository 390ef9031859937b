"""Models addressed as ``provider/model``: openai, llamacpp (embedded default), mock."""

from vreact.model._base import (
    DEFAULT_SETTINGS,
    MAX_PARSED_CHARS,
    MAX_REPLY_CHARS,
    Completion,
    ContextLengthError,
    GenerateSettings,
    Message,
    Model,
    ModelConfigError,
    ModelError,
    NotCached,
    ReasoningRunaway,
    TransientError,
    Watchdog,
    called_at,
    endpoint_of,
    parse_json_object,
)
from vreact.model._cache import ResponseCache, default_cache_dir
from vreact.model._mock import MockModel, MockScriptExhausted
from vreact.model._registry import get_model, provider, provider_reads, providers_reading
from vreact.model._resilient import CallPolicy, CallTimeoutError, Price, ResilientModel, redact

DEFAULT_MODEL = "llamacpp/smollm2-135m"

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_SETTINGS",
    "MAX_PARSED_CHARS",
    "MAX_REPLY_CHARS",
    "CallPolicy",
    "CallTimeoutError",
    "Completion",
    "ContextLengthError",
    "GenerateSettings",
    "Message",
    "MockModel",
    "MockScriptExhausted",
    "Model",
    "ModelConfigError",
    "ModelError",
    "NotCached",
    "Price",
    "ReasoningRunaway",
    "ResilientModel",
    "ResponseCache",
    "TransientError",
    "Watchdog",
    "called_at",
    "default_cache_dir",
    "endpoint_of",
    "get_model",
    "parse_json_object",
    "provider",
    "provider_reads",
    "providers_reading",
    "redact",
]
