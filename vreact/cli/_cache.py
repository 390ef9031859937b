"""``vreact cache``: where the response cache is, and clearing it."""

from __future__ import annotations

from pathlib import Path

import click

from vreact.cli._common import cache_dir_option
from vreact.model import ResponseCache


@click.group()
def cache() -> None:
    """The response cache: reruns of the same requests make no model calls."""


@cache.command()
@cache_dir_option
def path(cache_dir: Path | None) -> None:
    """Print the cache file and how many responses it holds."""
    c = ResponseCache(cache_dir)
    click.echo(f"{c.path}  ({c.count()} responses)")


@cache.command()
@cache_dir_option
def clear(cache_dir: Path | None) -> None:
    """Delete every cached response."""
    c = ResponseCache(cache_dir)
    click.echo(f"cleared {c.clear()} responses from {c.path}")
