"""``vreact plugins``: what is registered, and where each came from."""

from __future__ import annotations

import click

from vreact.cli._common import console, plugin_option


@click.command()
@plugin_option
def plugins() -> None:
    """List the registered task families, gates, pipeline members, tools, judges' prompts and
    model providers, and where each came from (built in, or the plugin that registered it)."""
    import vreact.families
    import vreact.model
    import vreact.pipeline
    import vreact.tools
    import vreact.verify.gates  # noqa: F401  (the modules that hold the registries)
    from vreact.registry import REGISTRIES, loaded

    by_module = {p.module: p for p in loaded()}

    def source(module: str) -> str:
        if module.startswith("vreact."):
            return "built in"
        plugin = by_module.get(module) or next(
            (p for m, p in by_module.items() if module.startswith(m + ".")), None
        )
        if plugin is None:
            return module
        version = f" {plugin.version}" if plugin.version else ""
        return f"plugin {plugin.name}{version} ({plugin.via})"

    kinds = {r.kind.split()[-1]: r for r in REGISTRIES.values()}  # family, gate, member, prompt, ...
    for kind, registry in sorted(kinds.items()):
        for name in registry.names():
            console.print(
                f"{kind:8} {name:24} {source(registry.module_of(name))}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
    for p in loaded():
        version = f" {p.version}" if p.version else ""
        console.print(
            f"plugin   {p.name:24} {p.module}{version} ({p.via})",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
