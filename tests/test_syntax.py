"""Parsing from several threads at once: CPython 3.11's AST constructor keeps its recursion depth
in interpreter-wide state, so a parse that lets another thread parse in its middle (a finalizer
run by a garbage collection) fails with a SystemError. ``vreact.syntax`` takes one parse at a
time, and the product parses only through it."""

from __future__ import annotations

import ast
import gc
import re
import threading
from pathlib import Path

import pytest

from vreact import syntax

SOURCE = repr([[[[i, (i,)]]] for i in range(50)])


def test_a_parse_interrupted_by_another_threads_parse_still_succeeds():
    go, done = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def other() -> None:
        go.wait()

        def deeper(n: int) -> object:  # a different stack depth from the first thread's
            return deeper(n - 1) if n else syntax.literal_eval(SOURCE)

        try:
            deeper(30)
        except SystemError as e:
            errors.append(e)
        done.set()

    class Finalizer:
        """Run by the collection inside the first parse: it lets the other thread parse and
        waits for it (for a moment: under the lock the other thread waits for this parse)."""

        def __del__(self) -> None:
            go.set()
            done.wait(0.3)

    thread = threading.Thread(target=other)
    thread.start()
    threshold = gc.get_threshold()
    gc.disable()
    try:
        gc.collect()  # counts from zero
        f = Finalizer()
        f.cycle = f  # type: ignore[attr-defined]
        del f
        # The 50th allocation collects: past the lock, inside the parse, which builds hundreds.
        gc.set_threshold(50)
        gc.enable()
        try:
            tree = syntax.parse(SOURCE, mode="eval")
        except SystemError as e:
            errors.append(e)
            tree = None
    finally:
        gc.set_threshold(*threshold)
        gc.enable()
        go.set()
        thread.join()
    assert go.is_set() and done.is_set()
    assert errors == []
    assert tree is not None and syntax.literal_eval(tree) == eval(SOURCE)


def test_the_product_parses_only_through_the_lock():
    root = Path(__file__).resolve().parents[1] / "vreact"
    direct = re.compile(r"\bast\.(parse|literal_eval)\(|\bcompile\([^)]*PyCF_ONLY_AST")
    exempt = {"syntax.py", "sandbox/_harness.py"}  # the lock itself; the sandbox's own process
    found = [
        f"{path.relative_to(root)}:{n}"
        for path in root.rglob("*.py")
        if str(path.relative_to(root)) not in exempt
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if direct.search(line)
    ]
    assert found == []


def test_an_ellipsis_is_no_plain_value():
    """``...`` parses as a literal for Python, but no value vreact reads is one and the sandbox's
    reader takes none: anywhere in a value it is a ValueError; a string of dots is a string."""
    for text in ("...", "(...,)", "([1, ...], 2)", "{'a': ...}"):
        with pytest.raises(ValueError):
            syntax.literal_eval(text)
    with pytest.raises(ValueError):
        syntax.literal_eval(ast.parse("(1, ...)", mode="eval").body)
    assert syntax.literal_eval("('...', [1, 2])") == ("...", [1, 2])
    assert syntax.literal_eval(" 3") == 3
