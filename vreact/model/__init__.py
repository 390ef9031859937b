"""Models addressed as ``provider/model``: openai, llamacpp (embedded default), mock."""

from vreact.model._base import (
    Completion,
    ContextLengthError,
    Message,
    Model,
    ModelConfigError,
    ModelError,
    TransientError,
)
from vreact.model._mock import MockModel, MockScriptExhausted
from vreact.model._registry import get_model, provider

DEFAULT_MODEL = "llamacpp/smollm2-135m"

__all__ = [
    "DEFAULT_MODEL",
    "Completion",
    "ContextLengthError",
    "Message",
    "MockModel",
    "MockScriptExhausted",
    "Model",
    "ModelConfigError",
    "ModelError",
    "TransientError",
    "get_model",
    "provider",
]
