"""Ctrl-C mid-run (issue 33): the first says at once what happens and stops the run (no attempt
starts; those in flight end at their next model call and run again on resume), a second stops
now; either way the process exits 130, never crashes, and the same command resumes the folder.
Against a loopback server the resumed records equal an uninterrupted run's; with the in-process
GGUF model the resumed folder passes ``vreact check``."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import assert_records_whole
from tests.experiment.test_experiment import experiment_args, finished, report, rows, spawn
from tests.fakes.chaos_server import ChaosServer

MIX = {"nonsense": 0.86, "prose": 0.08, "http500": 0.03, "http429": 0.03}
STOPPING = "stopping: "
#: The pilot ladder on 20 records, once each: 100 attempts.
PLANNED = 100
#: Seconds before each reply: a little, so attempts are in flight whenever the signal comes ...
LATENCY = 0.03
#: ... and long enough to hold those in flight while a second Ctrl-C is sent.
HOLD = 5.0


def said(log: Path, text: str, start: int = 0) -> bool:
    return text in log.read_text(errors="replace")[start:]


def watch(p: subprocess.Popen[bytes], log: Path, texts: tuple[str, ...]) -> tuple[dict[str, float], float]:
    """Until ``p`` exits: when each of ``texts`` was first seen in ``log``, and when it exited
    (``time.monotonic()``, polled every 10 ms)."""
    seen: dict[str, float] = {}
    while True:
        running = p.poll() is None
        now, text = time.monotonic(), log.read_text(errors="replace")
        seen |= {t: now for t in texts if t not in seen and t in text}
        if not running:
            return seen, now
        time.sleep(0.01)


def ctrl_c(p: subprocess.Popen[bytes], log: Path, times: int) -> tuple[float, int]:
    """Send SIGINT ``times`` times (the second once the first was answered): how long the first
    took to be answered on stderr, and the exit code."""
    start = len(log.read_text(errors="replace"))
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    while not said(log, STOPPING, start) and p.poll() is None and time.monotonic() - sent < 30:
        time.sleep(0.01)
    answered = time.monotonic() - sent
    if times == 2 and p.poll() is None:
        p.send_signal(signal.SIGINT)
    return answered, p.wait(timeout=120)


@pytest.mark.parametrize("asked", [False, True])
def test_after_a_stop_was_asked_a_second_ctrl_c_still_ends_the_process_at_once(asked):
    """The run's Ctrl-C handler is put back when the run ends, unless a stop was asked: then it
    stays, so a second Ctrl-C while the process ends (Ray's threads joined on the way out, as CI
    saw) still says "stopped now" and exits 130, never a KeyboardInterrupt traceback."""
    from vreact.cli._run import _ctrl_c
    from vreact.experiment.attempt import Stop

    previous = signal.getsignal(signal.SIGINT)
    stop = Stop()
    try:
        with _ctrl_c(stop):
            ours = signal.getsignal(signal.SIGINT)
            assert ours is not previous
            if asked:
                signal.raise_signal(signal.SIGINT)  # the first Ctrl-C: it asks the run to stop
                assert stop.event.is_set()
        assert signal.getsignal(signal.SIGINT) is (ours if asked else previous)
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture
def server():
    with ChaosServer(mix=MIX, seed=5, deterministic=True, latency=LATENCY) as s:
        yield s


@pytest.mark.parametrize("backend", ["local", "ray"])
@pytest.mark.parametrize("times", [1, 2])
def test_ctrl_c_against_a_server_exits_130_and_resumes_to_an_uninterrupted_run(
    server, tmp_path, times, backend, request
):
    more = ("--set", "attempts=1")
    log = tmp_path / "log.txt"
    whole = tmp_path / "whole"
    p = spawn(experiment_args(server.base_url, whole, *more), tmp_path / "cache-whole", log)
    assert p.wait(timeout=600) == 0, log.read_text()[-3000:]

    stopped = tmp_path / "stopped"
    if backend == "ray":  # the session's local cluster, which both drivers join
        more += ("--backend", "ray", "--ray-address", request.getfixturevalue("ray_cluster"))
    args = experiment_args(server.base_url, stopped, *more)
    p = spawn(args, tmp_path / "cache-stopped", log)
    while finished(stopped / "vreact.db") < 10 and p.poll() is None:
        time.sleep(0.01)
    if times == 2:
        # the attempts in flight are held at their model call, so the second Ctrl-C always comes
        # before they end (at 0.03 s they could end, and the run with them, before it was sent)
        server.latency = HOLD
        time.sleep(0.3)
    answered, code = ctrl_c(p, log, times)
    server.latency = LATENCY
    text = log.read_text()
    assert code == 130, text[-3000:]
    assert answered < 1.0, answered  # at once
    assert "attempt(s) in flight will be re-run on resume; Ctrl-C again to stop now" in text
    if times == 2 and backend == "ray":
        # Ray's driver drops its attempts in flight and ends within its 0.2 s poll, so the second
        # Ctrl-C may come after the run stopped in order: either way it has stopped, exit 130
        assert "stopped now" in text or "interrupted; the same command resumes it" in text, text[-3000:]
    else:  # the local pool's attempts are held at their model call: the second lands in time
        assert ("stopped now" in text) == (times == 2)
    assert "Traceback" not in text and "Aborted" not in text
    done = finished(stopped / "vreact.db")
    assert 10 <= done < PLANNED
    if "stopped now" not in text:  # stopped in order: the run says so
        assert rows(stopped / "vreact.db", "select status from runs") == [{"status": "interrupted"}]

    p = spawn(args, tmp_path / "cache-stopped", log)
    assert p.wait(timeout=600) == 0, log.read_text()[-3000:]
    assert f"{done} of {PLANNED} attempts already done" in log.read_text()
    assert rows(stopped / "vreact.db", "select status from runs") == [{"status": "completed"}]
    assert_records_whole(stopped)
    assert report(stopped) == report(whole)


@pytest.mark.real_model
@pytest.mark.parametrize("times", [1, 2])
def test_ctrl_c_with_the_in_process_model_exits_130_never_crashes_and_resumes(tmp_path, times):
    out = tmp_path / "run"
    log = tmp_path / "log.txt"
    args = ["run", "--dataset", "sample", "--configs", "N,VG", "--limit", "1", "--concurrency", "2"]
    args += ["--model", "llamacpp/smollm2-135m", "--no-cache", "--out", str(out)]
    p = spawn(args, tmp_path / "cache", log)
    # the model is loaded and generating: the run's plan is printed once the models are made
    while not said(log, "at a time, into") and p.poll() is None:
        time.sleep(0.05)
    time.sleep(1.5)
    assert p.poll() is None, log.read_text()[-3000:]
    sent = time.monotonic()
    waiting = "waiting for llamacpp/smollm2-135m to end the reply it is writing"
    if times == 1:  # it waits for the reply in flight only while saying so
        p.send_signal(signal.SIGINT)
        seen, exited = watch(p, log, (STOPPING, "stopped: ", waiting))
        assert seen[STOPPING] - sent < 1.0 and "stopped: " in seen, log.read_text()[-3000:]
        assert waiting in seen or exited - seen["stopped: "] < 1.0, (seen, exited)
        if waiting in seen:
            assert seen[waiting] - seen["stopped: "] < 1.0, (seen, exited)
    answered, code = ctrl_c(p, log, times) if times == 2 else (seen[STOPPING] - sent, p.wait())
    text = log.read_text()
    assert code == 130, text[-3000:]  # never 139 (a segmentation fault)
    assert answered < 1.0, answered
    assert "Traceback" not in text and "Aborted" not in text

    p = spawn(args, tmp_path / "cache", log)
    assert p.wait(timeout=900) == 0, log.read_text()[-3000:]
    assert rows(out / "vreact.db", "select count(*) as n from attempts where outcome != 'running'") == [
        {"n": 2}
    ]
    assert_records_whole(out)


def test_a_stopped_run_says_what_it_waits_for_while_the_in_process_reply_ends(monkeypatch, capsys):
    """A stopped run's process waits for the in-process model's reply in flight (it cannot be
    cut): it says so at once, names the model, and says it again while it still waits; no reply
    starts after it (one waiting for the model would hold the exit for another)."""
    from vreact.cli._run import _let_generations_end
    from vreact.model import _llamacpp

    monkeypatch.setattr(_llamacpp, "SAY_EVERY", 0.2)
    _llamacpp._GENERATING.append(("llamacpp/qwen2.5-coder-1.5b", time.monotonic() - 12, 768))
    ends = threading.Timer(0.5, _llamacpp._GENERATING.clear)
    ends.start()
    try:
        started = time.monotonic()
        _let_generations_end()
        waited = time.monotonic() - started
        assert _llamacpp._CLOSING.is_set()
    finally:
        ends.cancel()
        _llamacpp._GENERATING.clear()
        _llamacpp._CLOSING.clear()
    assert 0.4 < waited < 2.0, waited
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == (
        "waiting for llamacpp/qwen2.5-coder-1.5b to end the reply it is writing (12 s in, at most 768"
        " tokens), which cannot be cut, before the model is freed; Ctrl-C again to stop now"
    )
    assert len(lines) >= 2 and all(
        line.startswith("still waiting for llamacpp/qwen2.5-coder-1.5b") for line in lines[1:]
    )


def test_no_reply_waits_nothing_and_says_nothing(capsys):
    from vreact.cli._run import _let_generations_end
    from vreact.model import _llamacpp

    try:
        started = time.monotonic()
        _let_generations_end()
        assert time.monotonic() - started < 0.2
    finally:
        _llamacpp._CLOSING.clear()
    assert capsys.readouterr().err == ""
