"""The sandbox's own runner: run by the system's Python in isolated mode inside bubblewrap, it
imports nothing of vreact (only its standard library is there).

Three processes. The first is the PID namespace's init (bubblewrap runs it as PID 1,
``--as-pid-1``, so that bubblewrap itself waits for it and no process of the sandbox outlives
its bubblewrap, orphaned: ``init``); it forks the checker and does nothing but reap until the
checker ends. The checker forks the program's process before it reads anything, so nothing the
checker later holds was ever in the program's memory; it then turns itself non-dumpable, so the
program cannot read its memory or its files through /proc.
The checker reads the request (stdin), sends the program alone to the program's process, and
runs every check itself: a visible example's call and a hidden test's ``check(candidate)`` call
the program through a proxy that sends the arguments and receives the return value as a plain
Python literal (an object of any other type, such as one whose ``__eq__`` is always true, is no
value), so every comparison is the checker's and the hidden test is never in the program's
process. The checker's reply is one line on stdout after the request's marker, a random token
the program never sees: output without it is no result.

It starts in about 20 ms: it imports only what the interpreter has built in, and ``ctypes``
(``typing``, ``ast``, ``json``, ``traceback``, ``contextlib`` and ``signal`` would more than
double that: they pull in ``re`` and ``enum``). Every message, the request, the pipes' lines
and the reply, is a Python literal (``repr``), read back by ``literal`` over the compiler's own
syntax tree (``_ast``).
"""

from __future__ import annotations

import _ast
import _signal
import ctypes
import io
import os
import select
import sys
import time

TYPE_CHECKING = False  # typing alone would add 14 ms to every start
if TYPE_CHECKING:
    from typing import Any

#: The program's stdout and stderr, in the sandbox's own /tmp (the file-size limit caps it).
OUT = "/tmp/program.out"
SHOWN = 4000  # characters of the program's output a reply carries
PR_SET_DUMPABLE = 4


def literal(text: str) -> Any:
    """A Python literal, as ``ast.literal_eval`` reads one: numbers, strings, bytes, booleans,
    None, and tuples, lists, dicts and sets of them (``set()`` too), signed numbers and complex
    sums; ``ValueError`` for anything else."""
    try:
        tree = compile(text.strip(), "<value>", "eval", _ast.PyCF_ONLY_AST)
        return _node(tree.body)  # type: ignore[attr-defined]
    except (SyntaxError, MemoryError, RecursionError, TypeError) as e:
        raise ValueError("not a plain value") from e


def _node(n: Any) -> Any:
    if isinstance(n, _ast.Constant):
        return n.value
    if isinstance(n, _ast.Name) and n.id in ("inf", "nan"):  # repr's floats, inside a value too
        return float(n.id)
    if isinstance(n, _ast.Tuple):
        return tuple(map(_node, n.elts))
    if isinstance(n, _ast.List):
        return list(map(_node, n.elts))
    if isinstance(n, _ast.Set):
        return set(map(_node, n.elts))
    if isinstance(n, _ast.Dict) and None not in n.keys:
        return {_node(k): _node(v) for k, v in zip(n.keys, n.values)}  # noqa: B905 (any python3)
    called = n.func.id if isinstance(n, _ast.Call) and isinstance(n.func, _ast.Name) else None
    if called == "set" and not n.args and not n.keywords:
        return set()
    if isinstance(n, _ast.UnaryOp) and isinstance(n.op, (_ast.UAdd, _ast.USub)):
        value = _node(n.operand)
        if type(value) in (int, float, complex):
            return +value if isinstance(n.op, _ast.UAdd) else -value
    if isinstance(n, _ast.BinOp) and isinstance(n.op, (_ast.Add, _ast.Sub)):
        left, right = _node(n.left), _node(n.right)
        if type(left) in (int, float) and type(right) is complex:
            return left + right if isinstance(n.op, _ast.Add) else left - right
    raise ValueError("not a plain value")


def value_of(text: str) -> object:
    """A plain Python literal (``literal``; ``inf`` and ``nan`` too), or ``ValueError``."""
    try:
        return literal(text)
    except ValueError:
        pass
    name = text.strip()
    if name in ("inf", "-inf", "nan"):
        return float(name)
    raise ValueError("not a plain value")


#: An int of more bits than this crosses the pipes in hex (``dump``): its decimal text takes
#: time that grows with the square of its length (seconds for a million digits), its hex does not.
HEX_BITS = 4096


def dump(value: object) -> str:
    """``repr(value)``, but each large int inside a list, tuple, set or dict written in hex: the
    same value back from ``literal``, in linear time."""
    t = type(value)
    if t is int:
        return hex(value) if value.bit_length() > HEX_BITS else repr(value)  # type: ignore[attr-defined, arg-type]
    if t is list:
        return "[" + ", ".join(map(dump, value)) + "]"  # type: ignore[call-overload]
    if t is tuple:
        items = list(map(dump, value))  # type: ignore[call-overload]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if t is set and value:
        return "{" + ", ".join(map(dump, value)) + "}"  # type: ignore[call-overload]
    if t is dict:
        return "{" + ", ".join(f"{dump(k)}: {dump(v)}" for k, v in value.items()) + "}"  # type: ignore[attr-defined]
    return repr(value)


def line_of(tb: Any) -> int | None:
    """The last line of the program (``<program>``) in a traceback."""
    found = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<program>":
            found = tb.tb_lineno
        tb = tb.tb_next
    return found


# --- the program's process ------------------------------------------------------------------


def program_process(requests: int, replies: int) -> None:
    """Read the program, run it, then answer calls until the checker closes the pipe. Every
    reply is one JSON line; nothing the program does can reach the checker another way."""
    out = os.open(OUT, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", buffering=0), write_through=True)
    sys.stderr = sys.stdout
    reader = os.fdopen(requests, "r")
    write, repr_, type_, clock, dump_ = os.write, repr, type, time.perf_counter, dump

    def reply(data: dict[str, object]) -> None:
        write(replies, (repr_(data) + "\n").encode())

    def failure(e: BaseException) -> str:
        return f"{type_(e).__name__}: {e}"[:SHOWN]

    request = literal(reader.readline())
    namespace: dict[str, object] = {"__name__": "__main__"}
    try:
        code = compile(request["program"], "<program>", "exec")
    except SyntaxError as e:
        reply({"loaded": False, "error": f"SyntaxError: {e.msg}", "line": e.lineno})
        return
    try:
        if request.get("mode") == "run":  # a snippet: the value of its last expression
            tree: Any = compile(request["program"], "<program>", "exec", _ast.PyCF_ONLY_AST)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], _ast.Expr) else None
            exec(compile(tree, "<program>", "exec"), namespace)
            value = None
            if last is not None:
                value = eval(compile(_ast.Expression(last.value), "<program>", "eval"), namespace)
            reply({"loaded": True, "value": None if value is None else repr_(value)[:SHOWN]})
            return
        exec(code, namespace)
    except BaseException as e:
        reply(
            {"loaded": False, "error": f"{type_(e).__name__}: {e}"[:SHOWN], "line": line_of(e.__traceback__)}
        )
        return
    entry = request.get("entry_point")
    if entry is not None and not callable(namespace.get(entry)):
        reply(
            {"loaded": False, "error": f"NameError: the program defines no function {entry!r}", "line": None}
        )
        return
    reply({"loaded": True})
    for line in reader:
        call = literal(line)
        try:
            args: Any = value_of(call["args"])
            start = clock()
            result = namespace[entry](*args)  # type: ignore[index, operator]
            seconds = clock() - start
            reply({"ok": True, "value": dump_(result), "seconds": seconds})
        except BaseException as e:
            reply(
                {"ok": False, "error": f"{type_(e).__name__}: {e}"[:SHOWN], "line": line_of(e.__traceback__)}
            )


# --- the checker ----------------------------------------------------------------------------


class Stopped(Exception):
    """The program's process ended, or did not answer within the call's time."""


class Program:
    """The checker's side of the pipes to the program's process."""

    def __init__(self, pid: int, requests: int, replies: int, call_seconds: float) -> None:
        self.pid, self.requests, self.call_seconds = pid, requests, call_seconds
        self.replies = os.fdopen(replies, "rb")
        self.calls = 0
        self.ended = False
        self.seconds = 0.0  # the last call's own time, as the program's process measured it

    def send(self, data: dict[str, object]) -> None:
        try:
            os.write(self.requests, (repr(data) + "\n").encode())
        except OSError:
            raise Stopped("the program's process ended") from None

    def receive(self) -> dict[str, object]:
        ready, _, _ = select.select([self.replies], [], [], self.call_seconds)
        if not ready:
            raise Stopped(f"no answer within {self.call_seconds:g} s")
        line = self.replies.readline()
        if not line:
            raise Stopped("the program's process ended")
        try:
            data = literal(line.decode("utf-8", "replace"))
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise Stopped("the program's process answered something not its runner's")
        return data

    def end(self) -> None:
        """Close its pipes and kill its process (it may be gone already), and reap it; once."""
        if self.ended:
            return
        self.ended = True
        for close in (lambda: os.close(self.requests), self.replies.close):
            try:  # noqa: SIM105 (contextlib would cost the start its imports)
                close()
            except OSError:
                pass
        try:  # noqa: SIM105
            os.kill(self.pid, _signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)

    def __call__(self, *args: object) -> object:
        """The proxy a check calls as the program's function: a plain value back, or the
        program's exception as a ``ProgramError``."""
        self.calls += 1
        self.send({"args": dump(args)})
        data = self.receive()
        if not data.get("ok"):
            raise ProgramError(str(data.get("error")), data.get("line"))
        self.seconds = float(data.get("seconds") or 0.0)  # type: ignore[arg-type]
        try:
            return value_of(str(data.get("value")))
        except ValueError:
            raise ProgramError(f"returned no plain value: {str(data.get('value'))[:200]}", None) from None


#: The checker's ends of every program process's pipes made so far: a process forked later closes
#: them, so no program holds another's pipes.
_HELD: list[int] = []


def start_program(call_seconds: float, dumpable: bool = True) -> Program:
    """A program's process, forked with its two pipes: it waits for its program (``send``), holding
    no other program's pipe. Not ``dumpable``: no other process of the user may trace it or read
    it through /proc (a spare one for a batch, waiting while other candidates run)."""
    to_program_r, to_program_w = os.pipe()
    from_program_r, from_program_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(to_program_w)
        os.close(from_program_r)
        for fd in _HELD:
            try:  # noqa: SIM105 (contextlib would cost the start its imports)
                os.close(fd)
            except OSError:
                pass
        if not dumpable:
            ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        try:  # its stdout, the checker's reply channel, becomes its own output file
            program_process(to_program_r, from_program_w)
        finally:
            os._exit(0)
    os.close(to_program_r)
    os.close(from_program_w)
    _HELD.extend((to_program_w, from_program_r))
    return Program(pid, to_program_w, from_program_r, call_seconds)


class ProgramError(Exception):
    def __init__(self, message: str, line: object) -> None:
        super().__init__(message)
        self.line = line if isinstance(line, int) else None


def examples(program: Program, cases: list[list[str]], out: list[dict[str, object]]) -> None:
    """Each visible example into ``out``: its call's arguments and its expected value
    (literals), compared here, type first; one the program does not answer in time ends them."""
    for args_text, expected_text in cases:
        args, expected = value_of(args_text), value_of(expected_text)
        try:
            actual = program(*args)  # type: ignore[misc]
        except ProgramError as e:
            out.append({"passed": False, "error": str(e), "line": e.line})
            continue
        except Stopped as e:
            out.append({"passed": False, "error": f"stopped: {e}"})
            raise
        same = type(actual) is type(expected) and actual == expected
        out.append({"passed": same, "actual": repr(actual)[:SHOWN]})


def hidden(program: Program, setup: str, test: str, entry_point: str) -> dict[str, object]:
    """The hidden test, run here (never in the program's process): the problem's own code
    (``setup``: its helpers), the entry point's name bound to the proxy (a test may call it by
    name), then the test's ``check(candidate)`` with the proxy."""
    namespace: dict[str, object] = {"__name__": "__checks__"}
    exec(compile(setup, "<setup>", "exec"), namespace)
    namespace[entry_point] = program
    exec(compile(test, "<test>", "exec"), namespace)
    try:
        namespace["check"](program)  # type: ignore[operator]
    except ProgramError as e:
        return {"passed": False, "error": str(e), "line": e.line}
    except AssertionError as e:
        return {"passed": False, "error": f"AssertionError: {e}"[:SHOWN]}
    except Stopped:
        raise
    except Exception as e:
        return {"passed": False, "error": f"{type(e).__name__}: {e}"[:SHOWN]}
    return {"passed": True}


def oracle(program: Program, inputs: list[list[object]]) -> dict[str, object]:
    """The reference solution's output on each input (its ``repr``) and its own time: what a
    program is later compared with (``compare``); the first input it fails on ends it."""
    outputs, seconds = [], []
    for i, args in enumerate(inputs):
        try:
            outputs.append(dump(program(*args)))
        except ProgramError as e:
            return {"passed": False, "index": i, "error": str(e)}
        seconds.append(program.seconds)
    return {"passed": True, "outputs": outputs, "seconds": seconds}


#: How outputs are compared, as EvalPlus 0.3.1 compares them (``evalplus.eval.unsafe_execute``):
#: the tolerance a float answer gets when its problem sets none, and ``np.allclose``'s relative
#: tolerance as EvalPlus passes it.
FLOAT_ATOL = 1e-6
RTOL = 1e-07


def is_floats(x: object) -> bool:
    """A float, or a non-empty list or tuple of floats only (EvalPlus's ``is_floats``)."""
    if isinstance(x, float):
        return True
    return isinstance(x, (list, tuple)) and bool(x) and all(isinstance(i, float) for i in x)


def close(a: object, b: object, atol: float) -> bool:
    """``np.allclose(a, b, rtol=RTOL, atol=atol)`` on plain values: numbers (bools are not),
    and lists or tuples of them of the same length, element by element; NaN is never close."""
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))) or len(a) != len(b):
            return False
        return all(close(x, y, atol) for x, y in zip(a, b))  # noqa: B905 (any python3)
    if not all(type(v) in (int, float) for v in (a, b)):
        return False
    if a == b:  # the same infinity too
        return True
    return abs(a - b) <= atol + RTOL * abs(b)  # type: ignore[operator, arg-type]


def poly(xs: list[float], x: float) -> float:
    """HumanEval/32's polynomial at ``x`` (EvalPlus's own oracle for ``find_zero``)."""
    import math

    return sum(coeff * math.pow(x, i) for i, coeff in enumerate(xs))


def compare(program: Program, request: dict[str, Any]) -> dict[str, object]:
    """A program on each input against the reference's output, as EvalPlus compares: equal, or,
    when not, a float answer (or one whose problem sets ``atol``) of the same type within the
    tolerance (``close``), the tolerance a float answer sets kept for the inputs after it, as
    EvalPlus keeps it; ``find_zero`` (HumanEval/32) by the polynomial's value at the root it
    returns. Each call has its own time (``limits``); the first input that fails ends it."""
    inputs, expected, limits = request["inputs"], request["expected"], request["limits"]
    atol = float(request.get("atol") or 0)
    find_zero = request.get("entry_point") == "find_zero"
    for i, args in enumerate(inputs):
        program.call_seconds = limits[i]
        try:
            out = program(*args)
        except ProgramError as e:
            return {"passed": False, "index": i, "error": str(e)}
        except Stopped as e:
            return {"passed": False, "index": i, "error": f"stopped: {e}"}
        try:
            if find_zero:
                ok = abs(poly(*args, out)) <= atol  # type: ignore[misc, arg-type, call-arg]
            else:
                exp = value_of(expected[i])
                ok = out == exp
                if atol == 0 and is_floats(exp):
                    atol = FLOAT_ATOL
                if not ok and atol != 0:
                    ok = type(out) is type(exp) and close(out, exp, atol)
            ok = ok is True
        except Exception:
            ok = False
        if not ok:
            return {"passed": False, "index": i, "actual": repr(out)[:200]}
    return {"passed": True, "inputs": len(inputs)}


#: How much of one behaviour a reply shows (the checker compares them whole: ``labels``).
SHOWN_BEHAVIOUR = 200


def canonical(value: object) -> str:
    """A plain value as text that two equal values of the same types share: ``repr``, but a set's
    elements and a dict's items sorted (their order is the hash's, not the program's)."""
    t = type(value)
    if t is list or t is tuple:
        items = [canonical(v) for v in value]  # type: ignore[attr-defined]
        return ("[%s]" if t is list else "(%s)") % ", ".join(items)
    if t is set or t is frozenset:
        return "{" + ", ".join(sorted(canonical(v) for v in value)) + "}"  # type: ignore[attr-defined]
    if t is dict:
        pairs = sorted(canonical(k) + ": " + canonical(v) for k, v in value.items())  # type: ignore[attr-defined]
        return "{" + ", ".join(pairs) + "}"
    return repr(value)


def behaviour(program: Program, args: list[object]) -> tuple[str, str]:
    """What the program does on one input, as text: ``= value`` (``canonical``), ``raised
    TypeName``, or ``no value`` (an object that is no plain value); and the returned value's
    type's name (empty when none was returned). ``Stopped`` goes up."""
    try:
        value = program(*args)
    except ProgramError as e:
        said = str(e)
        if said.startswith("returned no plain value"):
            return "no value", ""
        return "raised " + said.split(":", 1)[0], ""
    return "= " + canonical(value), type(value).__name__


def clear_between(keep: set[int]) -> None:
    """Inside bubblewrap (this checker the child of the namespace's init), between two programs:
    every other process of the namespace killed but the ones in ``keep`` (those waiting for a
    program), a daemonised grandchild of the last one too; the work folder, ``/tmp`` and
    ``/dev/shm`` emptied; System V shared memory, semaphores and message queues removed (POSIX
    queues cannot be made: ``RLIMIT_MSGQUEUE`` is 0; ``/`` is read-only). So no program reaches the
    next through a process, a file or an IPC object. Run without bubblewrap there is no namespace
    of its own to clear: nothing is done."""
    if os.getppid() != 1:
        return
    spared = {1, os.getpid(), *keep}
    for _ in range(200):
        others = [int(e) for e in os.listdir("/proc") if e.isdigit() and int(e) not in spared]
        if not others:
            break
        for pid in others:
            try:  # noqa: SIM105 (contextlib would cost the start its imports)
                os.kill(pid, _signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.002)
    for top in ("/tmp", "/work", "/dev/shm"):
        for here, folders, files in os.walk(top, topdown=False):
            for name in files:
                try:  # noqa: SIM105
                    os.unlink(os.path.join(here, name))
                except OSError:
                    pass
            for name in folders:
                try:  # noqa: SIM105
                    os.rmdir(os.path.join(here, name))
                except OSError:
                    pass
    libc = ctypes.CDLL(None)
    for kind, remove in (("shm", libc.shmctl), ("sem", libc.semctl), ("msg", libc.msgctl)):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                ids = [int(line.split()[1]) for line in f.readlines()[1:] if line.split()]
        except (OSError, ValueError, IndexError):
            continue
        for ipc in ids:
            remove(ipc, 0, None)  # IPC_RMID (semctl's semnum 0)


#: How many times one program may be stopped (not answering in time) before it is stopped on every
#: input left: each stop costs the call's time and a new process.
STOPS = 2  # vreact.sandbox.STOPS, which tells the runner how many spare processes to fork


def _loaded(program: Program, text: str, request: dict[str, Any]) -> dict[str, object]:
    program.send({"program": text, "entry_point": request.get("entry_point"), "mode": "check"})
    return program.receive()


def behaviours(ready: list[Program], request: dict[str, Any]) -> dict[str, object]:
    """Several programs (``programs``), each in a program's process of its own, one after the
    other, on every input: what each does (``behaviour``) and the type of what it returned, the
    stated inputs (the first, one per ``expected`` value) it fails, and, per input, a label per
    program, equal where the two behaved the same. Each runs in a process forked before the
    request was read (``ready``: the checker's memory it starts from holds no program, no input
    and no reply's marker), none holding another's pipes, the waiting ones untraceable; between
    two, nothing of the last is left (``clear_between``). A program that does not answer in time
    is ``stopped`` on that input, its process killed and the next ready one given it for the next
    input; after ``STOPS`` stops (or with no process left), it is stopped on every input left."""
    inputs, out = request["inputs"], []
    # the stated examples' expected values, for the first inputs: each as the behaviour it asks
    expected = ["= " + canonical(value_of(e)) for e in request.get("expected") or []]
    whole: list[list[str]] = []
    ready = list(ready)
    for text in request["programs"]:
        if not ready:
            out.append({"loaded": False, "error": "stopped: no program process left to run it in"})
            whole.append([])
            continue
        program = ready.pop(0)
        try:
            loaded = _loaded(program, text, request)
            if not loaded.get("loaded"):
                out.append({"loaded": False, "error": loaded.get("error"), "line": loaded.get("line")})
                whole.append([])
                continue
            done: list[str] = []
            types: list[str] = []
            said: dict[str, object] = {"loaded": True}
            stops = 0
            while len(done) < len(inputs):
                try:
                    did, typed = behaviour(program, inputs[len(done)])
                except Stopped as e:
                    did, typed = "stopped", ""
                    stops += 1
                    said.update(stopped=str(e), stops=stops)
                    program.end()
                    clear_between({p.pid for p in ready})
                    if stops < STOPS and ready:
                        program = ready.pop()
                        try:
                            again = bool(_loaded(program, text, request).get("loaded"))
                        except Stopped:
                            again = False
                        stops = stops if again else STOPS
                    else:
                        stops = STOPS
                    if stops >= STOPS:
                        done.extend(["stopped"] * (len(inputs) - len(done)))
                        types.extend([""] * (len(inputs) - len(types)))
                        break
                done.append(did)
                types.append(typed)
            said["shown"] = [b[:SHOWN_BEHAVIOUR] for b in done]
            said["types"] = types
            said["fails"] = [j for j, e in enumerate(expected) if done[j] != e]
            out.append(said)
            whole.append(done)
        except Stopped as e:
            out.append({"loaded": False, "error": f"stopped: {e}"})
            whole.append([])
        finally:  # before the next runs: nothing of this one is left for it
            program.end()
            clear_between({p.pid for p in ready})
    labels = []
    for j in range(len(inputs)):
        seen: dict[str, int] = {}
        labels.append([seen.setdefault(w[j], len(seen)) if w else -1 for w in whole])
    return {"behaviours": out, "labels": labels}


def checks(program: Program, request: dict[str, Any], reply: dict[str, object]) -> None:
    """One program loaded, then run as the request's mode asks, into ``reply``."""
    program.send({k: request.get(k) for k in ("program", "entry_point", "mode")})
    loaded = program.receive()
    reply.update(loaded=bool(loaded.get("loaded")), error=loaded.get("error"), line=loaded.get("line"))
    if request.get("mode") == "run":
        reply["value"] = loaded.get("value")
    elif loaded.get("loaded") and request.get("mode") == "oracle":
        reply["inputs"] = oracle(program, request["inputs"])
    elif loaded.get("loaded") and request.get("mode") == "inputs":
        reply["inputs"] = compare(program, request)
    elif loaded.get("loaded"):
        reply["examples"] = []
        examples(program, request.get("examples") or [], reply["examples"])  # type: ignore[arg-type]
        if request.get("test"):
            reply["test"] = hidden(
                program, request.get("setup") or "", request["test"], request["entry_point"]
            )


def output() -> str:
    try:
        with open(OUT, "rb") as f:
            return f.read(SHOWN).decode("utf-8", "replace")
    except OSError:
        return ""


def limit(argv: list[str]) -> None:
    """The run's limits from the command line (``RESOURCE=VALUE``, numbered as ``resource``
    numbers them), each soft and hard, before anything of the program runs; one that cannot be
    set ends the run, unmarked (a run without its limits is no result)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for pair in argv:
        which, value = map(int, pair.split("="))
        if libc.setrlimit(which, (ctypes.c_ulong * 2)(value, value)) != 0:
            sys.stderr.write(f"cannot set limit {which} to {value}: errno {ctypes.get_errno()}\n")
            os._exit(3)


def init() -> None:
    """As PID 1 of the sandbox's namespace: fork the checker (which returns here to run the
    rest), then reap every process of the namespace until the checker ends, and end with its
    status; the kernel then kills whatever of the namespace is left, and bubblewrap, this
    process's parent, reaps it. What bubblewrap's own init would do, but as the process
    bubblewrap started, so bubblewrap waits for it instead of leaving it orphaned (to be reaped
    by whichever subreaper or init is above, or by none). Non-dumpable before the fork, with its
    standard streams closed once the checker has them: the program can neither read the request
    through this process's descriptors nor write to the reply channel. As PID 1 it receives no
    signal from inside the namespace that it has no handler for (SIGINT's handler is dropped),
    so the program cannot end it."""
    libc = ctypes.CDLL(None)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    checker = os.fork()
    if checker == 0:
        libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # as before: the program's process is dumpable
        return
    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    while True:
        pid, status = os.wait()
        if pid == checker:
            os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


#: The command line's word that says how many spare program processes a batch needs.
SPARE = "spare="  # vreact.sandbox.SPARE


def main() -> None:
    spare = [int(a[len(SPARE) :]) for a in sys.argv[1:] if a.startswith(SPARE)]
    limit([a for a in sys.argv[1:] if not a.startswith(SPARE)])
    if os.getpid() == 1:  # inside bubblewrap (``--as-pid-1``); run without it, no init is needed
        init()
    program = start_program(3.0)  # before the checker has read anything
    # a batch's other program processes too, each waiting, untraceable, for a program of its own
    spares = [start_program(3.0, dumpable=False) for _ in range(sum(spare))]
    ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # no /proc/<checker> for the program
    if hasattr(sys, "set_int_max_str_digits"):  # a stated or cached value of any size is read
        sys.set_int_max_str_digits(0)
    request = literal(sys.stdin.readline())
    marker = request.pop("marker")
    program.call_seconds = float(request.get("call_seconds", 3))
    start = time.monotonic()
    reply: dict[str, object] = {}
    for p in spares:
        p.call_seconds = program.call_seconds
    try:
        if request.get("mode") == "behaviours":
            reply.update(behaviours([program, *spares], request))
        else:
            checks(program, request, reply)
    except Stopped as e:
        reply["stopped"] = str(e)
    finally:
        for p in (program, *spares):
            p.end()
    reply["output"] = output()
    reply["seconds"] = round(time.monotonic() - start, 4)
    sys.stdout.write(marker + repr(reply) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
