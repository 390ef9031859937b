"""Start-up time: the minimum of ``--runs`` process walls for ``vreact --help`` and for
``vreact validate`` on the shipped declarative files, next to the minimum for
``python -c "import pydantic"`` on the same machine, and their ratio (issue 14, target 5:
under twice pydantic's). Then ``python -X importtime`` of each command: the modules that
take the most time, self and cumulative, as the profile of what is left.

    .venv/bin/python benchmarks/startup.py [--tree DIR] [--runs 5] [--top 15]

``--tree`` is the checkout whose ``vreact`` is timed (default: this one), put first on
PYTHONPATH, so an older checkout can be measured with the same script for a BEFORE figure;
the script checks that the processes really import that tree's ``vreact``. The figure line
is printed last.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: The shipped files ``vreact validate`` knows (spec, verifiers, roles, experiments).
SHIPPED = ("specs", "verifiers", "memory", "experiments")

#: How the console script starts the command line (see pyproject.toml's [project.scripts]).
CLI = "import sys; sys.argv[0] = 'vreact'; from vreact.cli import main; main()"


def shipped_files(tree: Path) -> list[str]:
    return [str(p.relative_to(tree)) for d in SHIPPED for p in sorted((tree / d).glob("*.yaml"))]


def environment(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("PYTHONSTARTUP", None)
    return env


def wall(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """The process's wall time and its CPU time (user + system), in seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return took, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def minima(
    commands: dict[str, list[str]], env: dict[str, str], cwd: Path, runs: int
) -> dict[str, tuple[float, float]]:
    """The minimum wall and CPU time of each command over ``runs`` processes, the commands
    taking turns (so a neighbour's load falls on all of them alike), after one warm-up run
    each (page cache, .pyc files)."""
    for argv in commands.values():
        wall(argv, env, cwd)
    seen: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            seen[name].append(wall(argv, env, cwd))
    return {name: (min(w for w, _ in t), min(c for _, c in t)) for name, t in seen.items()}


def import_profile(argv: list[str], env: dict[str, str], cwd: Path, top: int) -> list[str]:
    """The ``-X importtime`` lines of the ``top`` slowest modules by self time, and the
    total."""
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]], env=env, cwd=cwd, capture_output=True, text=True
    )
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, name = line.removeprefix("import time:").split("|", 2)
        rows.append((int(self_us), int(cumulative_us), name.rstrip()))
    total = sum(s for s, _, _ in rows)
    lines = [f"  {len(rows)} modules, {total / 1e3:.0f} ms of imports (self times summed)"]
    lines.append(f"  {'self ms':>8} {'cumul ms':>9}  module (top by self time)")
    for s, c, name in sorted(rows, reverse=True)[:top]:
        lines.append(f"  {s / 1e3:8.1f} {c / 1e3:9.1f}  {name.strip()}")
    heavy = {}
    for s, _, name in rows:
        package = name.strip().split(".")[0]
        if package in HEAVY:
            heavy[package] = heavy.get(package, 0) + s
    if heavy:
        names = ", ".join(f"{p} {s / 1e3:.0f} ms" for p, s in sorted(heavy.items(), key=lambda x: -x[1]))
        lines.append(f"  heavy packages imported (their modules' self times): {names}")
    else:
        lines.append(f"  none of {', '.join(HEAVY)} imported")
    return lines


#: Packages a command should import only when it uses them.
HEAVY = (
    "networkx",
    "numpy",
    "openai",
    "anthropic",
    "httpx",
    "sqlite_utils",
    "rank_bm25",
    "jsonschema",
    "rich",
    "yaml",
    "llama_cpp",
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", type=Path, default=REPO, help="the checkout to time (default: this one)")
    ap.add_argument("--runs", type=int, default=5, help="processes per command; the minimum is reported")
    ap.add_argument("--top", type=int, default=15, help="modules listed per profile")
    args = ap.parse_args()
    tree = args.tree.resolve()
    env = environment(tree)
    py = sys.executable

    where = subprocess.run(
        [py, "-c", "import vreact; print(vreact.__file__)"], env=env, cwd=tree, capture_output=True, text=True
    ).stdout.strip()
    if not Path(where).resolve().is_relative_to(tree):
        raise SystemExit(f"the processes import vreact from {where}, not from {tree}")
    files = shipped_files(tree)
    commands = {
        "vreact --help": [py, "-c", CLI, "--help"],
        "vreact validate": [py, "-c", CLI, "validate", *files],
        'python -c "import pydantic"': [py, "-c", "import pydantic"],
    }
    print(f"vreact from {where}; python {sys.version.split()[0]}; {os.cpu_count()} cpu(s)")
    print(f"vreact validate: {len(files)} shipped files ({', '.join(SHIPPED)})")
    print(f"minimum of {args.runs} processes each, taking turns (after one warm-up run each):")
    measured = minima(commands, env, tree, args.runs)
    walls = {name: w for name, (w, _) in measured.items()}
    base = walls['python -c "import pydantic"']
    cpu_base = measured['python -c "import pydantic"'][1]
    print(f"  {'command':<30} {'wall ms':>8} {'x pydantic':>10} {'cpu ms':>7} {'x pydantic':>10}")
    for name, (took, cpu) in measured.items():
        print(f"  {name:<30} {took * 1000:8.0f} {took / base:10.2f} {cpu * 1000:7.0f} {cpu / cpu_base:10.2f}")
    for name in ("vreact --help", "vreact validate"):
        print(f"\nimport profile of {name} (python -X importtime):")
        print("\n".join(import_profile(commands[name], env, tree, args.top)))
    help_x, validate_x = walls["vreact --help"] / base, walls["vreact validate"] / base
    print(
        f"\nstart-up: vreact --help {walls['vreact --help'] * 1000:.0f} ms ({help_x:.2f} x), "
        f"vreact validate {walls['vreact validate'] * 1000:.0f} ms ({validate_x:.2f} x) "
        f"vs import pydantic {base * 1000:.0f} ms; target < 2 x: "
        f"{'met' if max(help_x, validate_x) < 2 else 'not met'}"
    )


if __name__ == "__main__":
    main()
