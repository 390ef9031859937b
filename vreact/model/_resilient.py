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

from vreact.model._anthropic import API_KEY_ENV as _ANTHROPIC_KEY
from vreact.model._base import (
    DEFAULT_SETTINGS,
    Completion,
    ConnectionFailed,
    Cutoff,
    GenerateSettings,
    Interrupted,
    Message,
    Model,
    ModelError,
    NotCached,
    OutOfTime,
    ToolSpec,
    TransientError,
    Unreachable,
    Watchdog,
    declared,
)
from vreact.model._cache import ResponseCache, request_key
from vreact.model._openai import API_KEY_ENV as _OPENAI_KEY

_SECRET_VARS = (_OPENAI_KEY, _ANTHROPIC_KEY)


def redact(text: str, extra: tuple[str, ...] = ()) -> str:
    """``text`` with every known API key replaced by ``***``."""
    for secret in (*(os.environ.get(v, "") for v in _SECRET_VARS), *extra):
        if secret and len(secret) >= 6:
            text = text.replace(secret, "***")
    return text


class CallTimeoutError(ModelError):
    """All tries of one logical call took longer than the logical-call timeout."""


class _Expired(Exception):
    """A request's deadline passed (the retry layer says whose)."""


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


#: Connection failures in a row at one endpoint after which its calls fail as ``Unreachable``
#: (each with one try of its own first): a server that is not there ends a run in seconds.
UNREACHABLE_AFTER = 5
_FAILED_IN_A_ROW: dict[str, int] = {}  # by endpoint; a call it answers resets it

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

    def wait(self, timeout: float | None, stop: threading.Event | None = None) -> Completion:
        """The result (or the exception raised) once the request ended; TimeoutError when it has
        not within ``timeout`` seconds (None: no limit), ``Interrupted`` as soon as ``stop`` is
        set. The request goes on regardless."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not _acquire(self.done, deadline, stop):
            raise TimeoutError
        if self.error is not None:
            error, self.error = self.error, None  # no reference cycle through the traceback
            raise error
        assert self.result is not None
        return self.result


#: How often a wait that a stop may end looks at it, in seconds.
_POLL = 0.1


def _acquire(lock: Any, deadline: float | None, stop: threading.Event | None) -> bool:
    """Acquire ``lock`` (a lock or a semaphore) by ``deadline``: False when it passes first;
    ``Interrupted`` as soon as ``stop`` is set (looked at every ``_POLL`` seconds of waiting)."""
    if stop is None:
        return bool(lock.acquire(timeout=-1 if deadline is None else max(deadline - time.monotonic(), 0.0)))
    while True:
        wait = _POLL if deadline is None else min(_POLL, max(deadline - time.monotonic(), 0.0))
        if lock.acquire(timeout=wait):
            return True
        if stop.is_set():
            raise Interrupted
        if deadline is not None and time.monotonic() >= deadline:
            return False


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
    _FAILED_IN_A_ROW.clear()
    _SLOTS_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


def _slot(endpoint: str, limit: int) -> threading.BoundedSemaphore:
    with _SLOTS_LOCK:
        return _SLOTS.setdefault(f"{endpoint}#{limit}", threading.BoundedSemaphore(limit))


class ResilientModel:
    """A provider model behind the retry layer and the response cache (same Model protocol)."""

    takes_cutoff = True  # generate() takes a Cutoff: a deadline or a stop ends the wait

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
        cutoff: Cutoff | None = None,
        tools: list[ToolSpec] | None = None,
    ) -> Completion:
        """The reply from the cache, else from the provider with retries (``tools``: offered
        natively, part of the cache's key). A ``cutoff`` deadline
        (an attempt's wall clock) cuts the call when it comes before the logical-call timeout
        (``OutOfTime`` then, never ``CallTimeoutError``); its stop ends the wait at once
        (``Interrupted``). Either way the request itself goes on in its worker until it ends."""
        if self.cache is None:
            return self._priced(self._with_retries(messages, schema, settings, cutoff, tools))
        key = request_key(
            {
                "model": self.name,
                "endpoint": self.endpoint,
                "messages": messages,
                "schema": schema,
                **dataclasses.asdict(settings),  # temperature, max_tokens, seed: the keys of old caches
                **({"tools": declared(tools)} if tools else {}),  # none: the keys of old caches
            }
        )
        if (hit := self.cache.get(key)) is not None:
            return self._priced(hit)
        if self.cache.only:
            raise NotCached(f"{self.name}: the response cache holds no reply to this request (--cache-only)")
        completion = self._with_retries(messages, schema, settings, cutoff, tools)
        self.cache.put(key, self.name, completion)
        return self._priced(completion)

    def _priced(self, c: Completion) -> Completion:
        return dataclasses.replace(c, cost_usd=self.price.cost(c)) if self.price else c

    def _with_retries(
        self,
        messages: list[Message],
        schema: dict[str, Any] | None,
        settings: GenerateSettings,
        cutoff: Cutoff | None = None,
        tools: list[ToolSpec] | None = None,
    ) -> Completion:
        p = self.policy
        own = time.monotonic() + p.call_timeout if p.call_timeout else None
        given = cutoff.deadline if cutoff is not None else None
        cut = given is not None and (own is None or given < own)  # the caller's deadline comes first
        deadline = given if cut else own
        stop = cutoff.stop if cutoff is not None else None
        retries = 0
        while True:
            try:
                c = self._once(deadline, stop, messages, schema, settings, tools)
                if _FAILED_IN_A_ROW.get(self.endpoint):  # it answers again
                    _FAILED_IN_A_ROW[self.endpoint] = 0
                return dataclasses.replace(c, retries=retries)
            except _Expired:
                raise self._expired(cut, retries) from None
            except TransientError as e:
                if isinstance(e, ConnectionFailed):
                    failed = _FAILED_IN_A_ROW[self.endpoint] = _FAILED_IN_A_ROW.get(self.endpoint, 0) + 1
                    if failed >= UNREACHABLE_AFTER or retries >= p.max_retries:
                        where, why = self.url or self.endpoint, f"{e}; {failed} connection failures in a row"
                        message = f"nothing answers at {where} ({why})"
                        raise self._failure(Unreachable, message, retries) from None
                if retries >= p.max_retries:
                    raise self._failure(ModelError, f"{e} (after {retries} retries)", retries) from None
                # the server's Retry-After when it sent one, else exponential backoff, full jitter
                wait = (
                    min(e.retry_after, p.backoff_max)
                    if e.retry_after is not None
                    else random.uniform(0, min(p.backoff_max, p.backoff * 2**retries))
                )
                if deadline is not None and time.monotonic() + wait >= deadline:
                    raise self._expired(cut, retries) from None
                if stop is not None:
                    if stop.wait(wait):
                        raise Interrupted from None
                else:
                    self.sleep(wait)
                retries += 1
            except ModelError as e:
                raise self._failure(type(e), str(e), retries) from None

    def _expired(self, cut: bool, retries: int) -> ModelError:
        """The error of a call whose deadline passed: the caller's (``cut``), or its own timeout."""
        if cut:
            tries = f" after {retries} retries" if retries else ""
            return self._failure(OutOfTime, f"out_of_time: the caller's deadline passed{tries}", retries)
        return self._failure(CallTimeoutError, self._timeout_message(retries), retries)

    def _once(
        self,
        deadline: float | None,
        stop: threading.Event | None,
        messages: list[Message],
        schema: dict[str, Any] | None,
        settings: GenerateSettings,
        tools: list[ToolSpec] | None = None,
    ) -> Completion:
        """One request, in a worker so the deadline holds even if the server stalls (``_Expired``
        when it passes; ``Interrupted`` when ``stop`` is set). The endpoint's concurrency slot is
        held until the request itself ends (not the wait for it), and waiting for a slot counts
        against the deadline."""
        slot = _slot(self.endpoint, self.policy.concurrency)
        if not _acquire(slot, deadline, stop):
            raise _Expired

        def request() -> Completion:
            try:
                if tools:  # only a provider that reads actions is given any (build_models)
                    return self.inner.generate(messages, schema, settings, tools=tools)  # type: ignore[call-arg]
                return self.inner.generate(messages, schema, settings)
            finally:
                slot.release()

        call = _WORKERS.submit(request)
        try:
            return call.wait(None if deadline is None else max(deadline - time.monotonic(), 0.0), stop)
        except TimeoutError:
            raise _Expired from None

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
