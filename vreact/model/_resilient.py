"""Calls users can trust for thousands of attempts: retries with backoff and jitter that honour
Retry-After, a logical-call timeout over all tries, a concurrency limit per endpoint, the
response cache, cost estimates, and error messages that never carry a key."""

from __future__ import annotations

import dataclasses
import os
import queue
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vreact.model._base import (
    DEFAULT_SETTINGS,
    Completion,
    GenerateSettings,
    Message,
    Model,
    ModelError,
    NotCached,
    TransientError,
    Watchdog,
)
from vreact.model._cache import ResponseCache, request_key

_SECRET_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")


def redact(text: str, extra: tuple[str, ...] = ()) -> str:
    """``text`` with every known API key replaced by ``***``."""
    for secret in (*(os.environ.get(v, "") for v in _SECRET_VARS), *extra):
        if secret and len(secret) >= 6:
            text = text.replace(secret, "***")
    return text


class CallTimeoutError(ModelError):
    """All tries of one logical call took longer than the logical-call timeout."""


@dataclass(frozen=True)
class CallPolicy:
    """How one logical model call is made (``RunLimits.policy()`` makes one from a run's limits;
    these defaults are the limits' defaults)."""

    max_retries: int = 6  # transient failures retried before giving up
    backoff: float = 0.5  # first wait in seconds; doubles each retry, with full jitter
    backoff_max: float = 30.0
    call_timeout: float | None = 600.0  # seconds for all tries of one call, waits included
    concurrency: int = 4  # requests in flight per endpoint
    #: reasoning-only replies, on streaming providers (off by default)
    watchdog: Watchdog = field(default_factory=Watchdog)


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float

    def cost(self, c: Completion) -> float:
        return (c.prompt_tokens * self.input + c.completion_tokens * self.output) / 1e6


_SLOTS: dict[str, threading.BoundedSemaphore] = {}
_SLOTS_LOCK = threading.Lock()


class _Call:
    """One request handed to a worker: ``fn``, then its result or its exception. ``done`` is a
    plain lock, released when the request ended: the cheapest hand-off between two threads
    (a Future's Condition costs several)."""

    __slots__ = ("done", "error", "fn", "result")

    def __init__(self, fn: Callable[[], Completion]) -> None:
        self.fn: Callable[[], Completion] | None = fn
        self.result: Completion | None = None
        self.error: BaseException | None = None
        self.done = threading.Lock()
        self.done.acquire()

    def run(self) -> None:
        try:
            assert self.fn is not None
            self.result = self.fn()
        except BaseException as e:  # handed to the waiting caller
            self.error = e
        self.fn = None
        self.done.release()

    def wait(self, timeout: float | None) -> Completion:
        """The result (or the exception raised) once the request ended; TimeoutError when it has
        not within ``timeout`` seconds (None: no limit). The request goes on regardless."""
        if not self.done.acquire(timeout=-1 if timeout is None else timeout):
            raise TimeoutError
        if self.error is not None:
            error, self.error = self.error, None  # no reference cycle through the traceback
            raise error
        assert self.result is not None
        return self.result


class _Workers:
    """Daemon threads that make requests, kept between calls: a thread per request cost more
    CPU than the request at a few dozen in flight. A thread is started only when none is idle,
    so there are as many as requests were ever in flight at once (stalled ones included), and
    one idle for ``idle`` seconds ends. Not a ThreadPoolExecutor: the interpreter joins its
    workers at exit, so one request to a stalled server would hold the process until the HTTP
    timeout; these are daemons."""

    def __init__(self, idle: float = 60.0) -> None:
        self.idle = idle
        self.reset()

    def reset(self) -> None:
        """No workers (a forked child has none of its parent's threads)."""
        self._calls: queue.SimpleQueue[_Call] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._free = 0  # idle workers no queued call is promised to
        self.threads = 0  # workers alive

    def submit(self, fn: Callable[[], Completion]) -> _Call:
        """Run ``fn`` in a worker; wait for it with the returned call's ``wait``."""
        call = _Call(fn)
        with self._lock:
            start = self._free == 0
            if start:
                self.threads += 1
            else:
                self._free -= 1  # this call is that worker's
        self._calls.put(call)
        if start:
            threading.Thread(target=self._work, name="vreact-call", daemon=True).start()
        return call

    def _work(self) -> None:
        while True:
            try:
                call = self._calls.get(timeout=self.idle)
            except queue.Empty:
                with self._lock:
                    if self._free > 0:  # no call is promised to an idle worker: this one may go
                        self._free -= 1
                        self.threads -= 1
                        return
                continue  # a call was promised just now: it is on its way
            call.run()
            del call  # hold no reply while idle
            with self._lock:
                self._free += 1


_WORKERS = _Workers()


def _after_fork() -> None:
    """A forked child has none of its parent's threads: no workers, and no request holds a slot."""
    global _SLOTS_LOCK
    _WORKERS.reset()
    _SLOTS.clear()
    _SLOTS_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


def _slot(endpoint: str, limit: int) -> threading.BoundedSemaphore:
    with _SLOTS_LOCK:
        return _SLOTS.setdefault(f"{endpoint}#{limit}", threading.BoundedSemaphore(limit))


class ResilientModel:
    """A provider model behind the retry layer and the response cache (same Model protocol)."""

    def __init__(
        self,
        inner: Model,
        endpoint: str,
        policy: CallPolicy | None = None,
        cache: ResponseCache | None = None,
        price: Price | None = None,
        secrets: tuple[str, ...] = (),
    ) -> None:
        self.inner, self.endpoint = inner, endpoint
        self.url: str | None = None  # an endpoint pool's member this model calls (its endpoint: the pool)
        self.name = inner.name
        self.policy = policy or CallPolicy()
        self.cache, self.price, self.secrets = cache, price, secrets
        self.sleep = time.sleep  # tests may replace it

    def generate(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None = None,
        settings: GenerateSettings = DEFAULT_SETTINGS,
    ) -> Completion:
        if self.cache is None:
            return self._priced(self._with_retries(messages, schema, settings))
        key = request_key(
            {
                "model": self.name,
                "endpoint": self.endpoint,
                "messages": messages,
                "schema": schema,
                **dataclasses.asdict(settings),  # temperature, max_tokens, seed: the keys of old caches
            }
        )
        if (hit := self.cache.get(key)) is not None:
            return self._priced(hit)
        if self.cache.only:
            raise NotCached(f"{self.name}: the response cache holds no reply to this request (--cache-only)")
        completion = self._with_retries(messages, schema, settings)
        self.cache.put(key, self.name, completion)
        return self._priced(completion)

    def _priced(self, c: Completion) -> Completion:
        return dataclasses.replace(c, cost_usd=self.price.cost(c)) if self.price else c

    def _with_retries(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None,
        settings: GenerateSettings,
    ) -> Completion:
        p = self.policy
        deadline = time.monotonic() + p.call_timeout if p.call_timeout else None
        retries = 0
        while True:
            try:
                c = self._once(deadline, messages, schema, settings)
                return dataclasses.replace(c, retries=retries)
            except TransientError as e:
                if retries >= p.max_retries:
                    raise self._failure(ModelError, f"{e} (after {retries} retries)", retries) from None
                # the server's Retry-After when it sent one, else exponential backoff, full jitter
                wait = (
                    min(e.retry_after, p.backoff_max)
                    if e.retry_after is not None
                    else random.uniform(0, min(p.backoff_max, p.backoff * 2**retries))
                )
                if deadline is not None and time.monotonic() + wait >= deadline:
                    raise self._failure(CallTimeoutError, self._timeout_message(retries), retries) from None
                self.sleep(wait)
                retries += 1
            except ModelError as e:
                raise self._failure(type(e), str(e), retries) from None

    def _once(
        self,
        deadline: float | None,
        messages: list[Message],
        schema: dict[str, Any] | None,
        settings: GenerateSettings,
    ) -> Completion:
        """One request, in a worker so the logical-call deadline holds even if the server stalls.
        The endpoint's concurrency slot is held until the request itself ends (not the wait for
        it), and waiting for a slot counts against the deadline."""
        slot = _slot(self.endpoint, self.policy.concurrency)
        remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        if not slot.acquire(timeout=remaining if remaining is not None else -1):
            raise CallTimeoutError(self._timeout_message(None))

        def request() -> Completion:
            try:
                return self.inner.generate(messages, schema, settings)
            finally:
                slot.release()

        call = _WORKERS.submit(request)
        remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
        try:
            return call.wait(remaining)
        except TimeoutError:
            raise CallTimeoutError(self._timeout_message(None)) from None

    def _timeout_message(self, retries: int | None) -> str:
        tries = "" if retries is None else f" after {retries} retries"
        return (
            f"call_timeout: no answer within the logical-call timeout of {self.policy.call_timeout:g}s{tries}"
        )

    def _failure(self, kind: type[ModelError], message: str, retries: int) -> ModelError:
        """The error that ends a call: its message without keys, and the retries it took."""
        error = kind(self._clean(message))
        error.retries = retries
        return error

    def _clean(self, message: str) -> str:
        return redact(message, self.secrets)
