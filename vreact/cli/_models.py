"""``vreact models``: the local models vreact knows by alias, and whether they are installed."""

from __future__ import annotations

import click

from vreact.cli._common import console, user_errors
from vreact.model import ModelConfigError
from vreact.model._local import LOCAL_MODELS, installed, local_model, local_path, models_dir
from vreact.terminal import Fitted


@click.command()
@click.option(
    "--path",
    "alias",
    metavar="ALIAS",
    default=None,
    help="print the GGUF file of ALIAS (joined and checked first), e.g. for llama_cpp.server --model",
)
def models(alias: str | None) -> None:
    """List the llamacpp/ aliases: size, installed or not, how to install, licence.

    Chunked weights are joined into the models folder ($VREACT_MODELS_DIR, else
    ~/.cache/vreact/models) on first use and checked against their pinned sha256."""
    if alias is not None:
        with user_errors(ModelConfigError):
            known = local_model(alias)
            if known is None:
                raise ModelConfigError(f"{alias!r} is not a local model alias ({', '.join(LOCAL_MODELS)})")
            click.echo(local_path(known))
        return
    rows = []
    for m in LOCAL_MODELS.values():
        size = m.size or (local_path(m).stat().st_size if m.locate and installed(m) else None)
        if not installed(m):
            state = "no"
        elif m.parts and (models_dir() / m.file_name).is_file():
            state = "yes (joined)"
        else:
            state = "yes"
        shown = f"{size / 1e6:,.0f} MB" if size else "-"
        rows.append((m.alias, shown, state, m.pip, m.licence, m.description))
    headers = ("alias", "size", "installed", "install with", "licence", "what")
    console.print(Fitted(f"Local models (llamacpp/ALIAS); joined weights in {models_dir()}", headers, rows))
    console.print("Any other GGUF file: --model llamacpp/PATH.gguf", highlight=False)
