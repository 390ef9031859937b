"""``vreact plugins``: what is registered, and where each came from."""

from __future__ import annotations

import click

from vreact.cli._common import console, plugin_option


@click.command()
@plugin_option
def plugins() -> None:
    """List the registered task families, gates, pipeline members, tools and judges' prompts and
    where each came from (built in, or the plugin that registered it)."""
    from vreact.families import family_names, family_of
    from vreact.pipeline import member_class, member_names
    from vreact.spec import loaded
    from vreact.tools import tool_names, tool_of
    from vreact.verify.gates import gate_factory, gate_names, prompt_names, prompt_of

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

    for kind, names, module_of in (
        ("family", family_names(), lambda n: type(family_of(n)).__module__),
        ("gate", gate_names(), lambda n: gate_factory(n).factory.__module__),
        ("member", member_names(), lambda n: member_class(n).__module__),
        ("tool", tool_names(), lambda n: tool_of(n).fn.__module__),
        ("prompt", prompt_names(), lambda n: prompt_of(n).__module__),
    ):
        for name in names:
            console.print(
                f"{kind:7} {name:24} {source(module_of(name))}", highlight=False, markup=False, soft_wrap=True
            )
    for p in loaded():
        version = f" {p.version}" if p.version else ""
        console.print(
            f"plugin  {p.name:24} {p.module}{version} ({p.via})",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
