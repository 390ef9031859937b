"""The retry layer's worker threads: requests run on daemon threads kept between calls, while
the endpoint's concurrency limit, the logical-call deadline over a stalled request and the
slot a stalled request holds behave as with a thread per request."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import pytest

from vreact.model import CallPolicy, CallTimeoutError, Completion, ModelError, ResilientModel
from vreact.model._resilient import _Workers


class SlowModel:
    """Answers after ``delay`` seconds, or when ``release`` is set; counts requests in flight."""

    def __init__(self, delay: float = 0.0, release: threading.Event | None = None) -> None:
        self.name = "slow/model"
        self.delay, self.release = delay, release
        self.lock = threading.Lock()
        self.in_flight = self.peak = self.calls = 0

    def generate(self, messages: Any, schema: Any = None, settings: Any = None) -> Completion:
        with self.lock:
            self.in_flight += 1
            self.calls += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            if self.release is not None:
                self.release.wait()
            time.sleep(self.delay)
            if messages == "boom":
                raise ModelError("the provider said no")
            return Completion(f"reply {messages}")
        finally:
            with self.lock:
                self.in_flight -= 1


def resilient(inner: SlowModel, endpoint: str, **policy: Any) -> ResilientModel:
    return ResilientModel(inner, endpoint, CallPolicy(max_retries=0, **policy))  # type: ignore[arg-type]


def test_the_endpoint_concurrency_limit_holds() -> None:
    inner = SlowModel(delay=0.05)
    model = resilient(inner, "test://limit", concurrency=3)
    replies: list[str] = []
    threads = [threading.Thread(target=lambda i=i: replies.append(model.generate(i).text)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(replies) == sorted(f"reply {i}" for i in range(12))
    assert inner.peak == 3 and inner.calls == 12


def test_a_stalled_request_times_out_and_holds_its_slot_until_it_ends() -> None:
    release = threading.Event()
    inner = SlowModel(release=release)
    model = resilient(inner, "test://stall", concurrency=1, call_timeout=0.3)
    started = time.monotonic()
    with pytest.raises(CallTimeoutError, match="call_timeout"):
        model.generate("first")
    assert time.monotonic() - started < 2
    # the stalled request still runs and holds the endpoint's only slot: the next call waits
    # for it, and that wait counts against its own deadline
    with pytest.raises(CallTimeoutError):
        model.generate("second")
    assert inner.calls == 1
    release.set()  # the stalled request ends and frees its slot
    assert model.generate("third").text == "reply third"


def test_an_error_in_the_request_reaches_the_caller() -> None:
    model = resilient(SlowModel(), "test://error")
    with pytest.raises(ModelError, match="the provider said no"):
        model.generate("boom")
    assert model.generate("after").text == "reply after"


def test_workers_are_kept_between_calls_and_end_when_idle() -> None:
    workers = _Workers(idle=0.2)
    for i in range(200):  # one after another: one thread serves them all
        assert workers.submit(lambda i=i: Completion(str(i))).wait(5).text == str(i)
    assert workers.threads == 1
    release = threading.Event()

    def blocked() -> Completion:
        release.wait()
        return Completion("done")

    calls = [workers.submit(blocked) for _ in range(8)]  # 8 at once: 8 threads, no more
    assert workers.threads == 8
    with pytest.raises(TimeoutError):
        calls[0].wait(0.05)
    release.set()
    assert [c.wait(5).text for c in calls] == ["done"] * 8
    for _ in range(100):  # the 8 are reused
        workers.submit(lambda: Completion("again")).wait(5)
    assert workers.threads <= 8
    deadline = time.monotonic() + 5
    while workers.threads and time.monotonic() < deadline:
        time.sleep(0.05)
    assert workers.threads == 0, "idle workers did not end"
    assert workers.submit(lambda: Completion("later")).wait(5).text == "later"


def test_the_workers_are_daemons() -> None:
    workers = _Workers()
    release = threading.Event()
    workers.submit(lambda: release.wait() and Completion("x"))  # type: ignore[return-value,arg-type]
    names = [t for t in threading.enumerate() if t.name == "vreact-call"]
    assert names and all(t.daemon for t in names)
    release.set()


def test_a_forked_child_makes_calls_while_its_parent_has_one_in_flight() -> None:
    release = threading.Event()
    inner = SlowModel(release=release)
    model = resilient(inner, "test://fork", concurrency=1, call_timeout=5)
    parent = threading.Thread(target=model.generate, args=("parent",))
    parent.start()  # holds the endpoint's only slot and a worker
    while inner.in_flight == 0:
        time.sleep(0.01)
    pid = os.fork()
    if pid == 0:  # the child: no parent's worker or slot is there to wait for
        code = 1
        try:
            inner.release = None
            code = 0 if model.generate("child").text == "reply child" else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    release.set()
    parent.join()
    assert os.waitstatus_to_exitcode(status) == 0
