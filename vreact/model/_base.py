"""What every model provider implements, what it answers (and the JSON object in an answer), and
the errors they raise."""

from __future__ import annotations

import contextlib
import email.utils
import json
import threading
import time
import warnings
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

Message = dict[str, str]


@dataclass(frozen=True)
class Completion:
    """One model answer with what it cost."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    cached: bool = False  # served from the response cache: no request was made
    retries: int = 0  # transient failures retried before this answer
    cost_usd: float | None = None  # estimated from the model's prices, when known
    #: prompt tokens the server says it reused from its prompt cache (None: it does not say)
    cached_tokens: int | None = None
    cut: bool = False  # its text was longer than MAX_REPLY_CHARS and was cut to it
    #: why the provider says the reply stopped, in its own word (OpenAI-compatible
    #: ``finish_reason``: stop, length, tool_calls; Anthropic's ``stop_reason``: end_turn,
    #: max_tokens, tool_use); None: it did not say (a mock, a reply cached before it was kept)
    stop_reason: str | None = None

    @property
    def truncated(self) -> bool:
        """Whether the reply stopped at its token allowance (``max_tokens``): what it holds is
        cut, whatever it parses as, so no role acts on it (``TRUNCATED``)."""
        return self.stop_reason in TRUNCATED

    def within(self, limit: int) -> Completion:
        """This completion with its text cut to ``limit`` characters (and marked cut) if longer."""
        return self if len(self.text) <= limit else replace(self, text=self.text[:limit], cut=True)


#: The stop reasons that say a reply ran into its token allowance: OpenAI-compatible servers'
#: ``finish_reason`` (llama.cpp's too) and Anthropic's ``stop_reason``.
TRUNCATED = frozenset({"length", "max_tokens"})


#: The longest model output a role or judge parses, in characters: a longer one is cut to this
#: first (a structured answer is a few hundred; a cut one no longer parses, so it is rejected).
#: Every reply of an attempt is cut to it when it arrives (and its call recorded as cut), so the
#: records keep what the parsers read.
MAX_PARSED_CHARS = MAX_REPLY_CHARS = 100_000


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a reply may hold")


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a model's output (bare or wrapped in prose or fences), else None: how
    every role and judge reads a structured answer (a model may ignore the schema it was asked
    for). It takes any text and never raises: an output past ``MAX_PARSED_CHARS``, nested deeper
    than Python parses, holding NaN or Infinity, or not JSON at all, is None (fail closed)."""
    if not isinstance(text, str):
        return None
    text = text[:MAX_PARSED_CHARS]
    candidates = [text.strip()]
    first, last = text.find("{"), text.rfind("}")  # the outermost braces (a regex is quadratic here)
    if 0 <= first < last:
        candidates.append(text[first : last + 1])
    for c in candidates:
        try:
            data = json.loads(c, parse_constant=_no_constant)
        except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
            continue
        if isinstance(data, dict):
            return data
    return None


@dataclass(frozen=True)
class ToolSpec:
    """A tool a model is offered natively (a model's ``actions: native``: OpenAI's ``tools``,
    Anthropic's ``tool_use``): its name, what it does, its arguments' JSON schema (an object),
    and the argument that is an executor step's ``input`` (None: all of them, as an object)."""

    name: str
    description: str
    parameters: dict[str, Any]
    input: str | None = None


def native_reply(content: str, calls: list[tuple[str | None, Any]]) -> str:
    """A reply to a native tool call as the text the layers above keep (the response cache, the
    records, the executor's parse): its text and each call's name and arguments, in order (an
    argument string that is not a JSON object stays a string)."""
    out = []
    for name, arguments in calls:
        if isinstance(arguments, str):
            with contextlib.suppress(ValueError):
                arguments = json.loads(arguments) if arguments.strip() else {}
        out.append({"name": name, "arguments": arguments})
    return json.dumps({"content": content, "tool_calls": out})


def acts_natively(model: Any) -> bool:
    """Whether ``model`` takes an executor's actions as native tool calls (a models file's
    ``actions: native``, which the experiment layer sets on the model it makes)."""
    return getattr(model, "actions", "json") == "native"


def declared(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """What a request says of its tools (and the response cache keys): name, description and
    parameters of each."""
    return [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools]


@dataclass(frozen=True)
class GenerateSettings:
    """How one model call samples: what every provider takes, and what keys the response cache."""

    temperature: float = 0.0
    max_tokens: int = 256  # completion tokens
    seed: int | None = None  # providers without one (anthropic/) ignore it


#: The settings of a call that names none.
DEFAULT_SETTINGS = GenerateSettings()


@runtime_checkable
class Model(Protocol):
    """A chat model addressed as ``provider/name``."""

    name: str

    def generate(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None = None,
        settings: GenerateSettings = DEFAULT_SETTINGS,
    ) -> Completion:
        """Answer ``messages`` as ``settings`` say; with ``schema``, ask for JSON against it natively.
        A model whose ``takes_cutoff`` is true (the retry layer, the mock) also takes
        ``cutoff`` (:class:`Cutoff`): what ends the call early. One whose provider reads
        ``actions`` (openai/, anthropic/, mock/) also takes ``tools`` (a list of
        :class:`ToolSpec`): then a reply is one native tool call, its text ``native_reply``'s."""
        ...


def endpoint_of(model: Model) -> str:
    """Where ``model``'s answers come from: the base URL its client really uses (flag,
    environment, models file or the provider's default), a local model's resolved file, or,
    for a model that does not say (``mock/``, plugins), its name. It keys the response cache,
    the per-endpoint concurrency slot and a run's resolved configuration."""
    return str(getattr(model, "endpoint", "") or model.name)


def called_at(model: Model) -> str:
    """Where a call to ``model`` went: a pool member's own URL (``url``), else its endpoint."""
    return str(getattr(model, "url", "") or endpoint_of(model))


class ModelError(Exception):
    """A model call that failed for good (after the retry layer's retries)."""

    retries: int = 0  # transient failures retried before giving up


class NotCached(ModelError):
    """A run that may only read the response cache (``--cache-only``) met a request it does not hold."""


class ContextLengthError(ModelError):
    """The prompt does not fit the model's context window."""


class OutOfTime(ModelError):
    """A call cut at the deadline its caller gave (an attempt's wall clock), before its own
    logical-call timeout: a budget stop, not a time-out."""


class Notice(UserWarning):
    """What a model's client chose that the user should know, said once (``say_once``): a
    server that takes no ``json_schema``. The command line prints it as a ``note:`` line."""

    said_as_note = True


_SAID: set[str] = set()
_SAID_LOCK = threading.Lock()


def say_once(message: str) -> None:
    """Warn ``message`` as a :class:`Notice`, the first time this process says it."""
    with _SAID_LOCK:
        if message in _SAID:
            return
        _SAID.add(message)
    warnings.warn(message, Notice, stacklevel=2)


class Interrupted(BaseException):
    """The run was asked to stop (Ctrl-C): a call in flight ends at once, and its attempt is left
    unfinished, to run again on resume. A BaseException, as KeyboardInterrupt is: nothing that
    handles a failure (a crash record, a member that raises, a gate) takes it for one."""


@dataclass(frozen=True)
class Cutoff:
    """What ends a model call early: ``deadline``, a ``time.monotonic()`` (an attempt's wall
    clock: :class:`OutOfTime`), and ``stop``, an event set when the run is asked to stop
    (:class:`Interrupted`)."""

    deadline: float | None = None
    stop: threading.Event | None = None

    def check(self) -> None:
        """Raise what ends the call, if anything does now."""
        if self.stop is not None and self.stop.is_set():
            raise Interrupted
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise OutOfTime("out_of_time: the caller's deadline passed")


class ReasoningRunaway(ModelError):
    """A streamed reply produced only reasoning past the watchdog's limit: aborted, never
    retried, never cached (seed 003's reasoning-runaway watchdog)."""


@dataclass(frozen=True)
class Watchdog:
    """Abort a streamed reply that has produced only reasoning (a ``reasoning_content`` delta or
    an open ``<think>`` block, nothing in the answer channel) for ``timeout`` seconds or
    ``max_tokens`` estimated tokens (characters / 4); 0 leaves either off."""

    timeout: float = 0.0
    max_tokens: int = 0

    @property
    def on(self) -> bool:
        return bool(self.timeout or self.max_tokens)

    def check(self, reasoning_chars: int, started: float, now: float) -> None:
        if self.max_tokens and reasoning_chars / 4 > self.max_tokens:
            raise ReasoningRunaway(
                f"reasoning_runaway: {reasoning_chars // 4} reasoning tokens and no answer"
                f" (reasoning_only_max_tokens {self.max_tokens})"
            )
        if self.timeout and now - started > self.timeout:
            raise ReasoningRunaway(
                f"reasoning_runaway: {now - started:.0f} s of reasoning and no answer"
                f" (reasoning_only_timeout_s {self.timeout:g})"
            )


class TransientError(ModelError):
    """A failure worth retrying: HTTP 429 or 5xx, a connection error, a request time-out.

    Providers raise it (with their SDK's own retries switched off) and the retry layer decides;
    ``retry_after`` is the server's Retry-After in seconds, when it sent one.
    """

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ConnectionFailed(TransientError):
    """The server could not be reached at all (refused, reset, no route, no such host): retried
    as any transient failure, and counted towards :class:`Unreachable`."""


class Unreachable(ModelError):
    """Nothing answers at a model's server: its connections failed again and again (the retry
    layer's ``UNREACHABLE_AFTER`` in a row, or all of one call's tries)."""


class ModelConfigError(ModelError):
    """A model string or its settings cannot work; the message says what to do."""


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms``, else ``retry-after`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    try:
        return max(float(headers.get("retry-after-ms")) / 1000, 0.0)
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return max(email.utils.mktime_tz(parsed) - time.time(), 0.0)
