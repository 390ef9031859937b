"""Plugins: a user's module that registers gates and pipeline members with the same decorators
the built-in ones use (``@vreact.gate``, ``@vreact.member``). A plugin is loaded by name
(``plugins: [my_lab.gates]`` in an experiment or verifiers file, ``--plugin my_lab.gates``), by
file (``plugins: [./gates.py]``, relative to the file that names it), or, installed as a package,
through the entry-point group ``vreact.plugins`` without being named. What was loaded is kept,
with versions, so a run's records say which plugins made it."""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from vreact.families import load_built_in

#: The entry-point group an installed package registers its plugin module in.
GROUP = "vreact.plugins"


class PluginError(ValueError):
    """A plugin that cannot be loaded: one line naming it."""


@dataclass(frozen=True)
class Plugin:
    """A loaded plugin: what named it, the module, and its version (a package's version, or a
    file's sha256)."""

    name: str
    module: str
    version: str | None = None
    via: str = "name"  # name | file | entry point

    def record(self) -> dict[str, str | None]:
        return {"name": self.name, "version": self.version}


_LOADED: dict[str, Plugin] = {}
_entry_points_loaded = False


def load_plugin(ref: str, base: Path | None = None) -> Plugin:
    """Import the plugin ``ref`` once: a module name, or a ``.py`` file (relative to ``base``).
    The built-in families load first, so what a plugin registers under a name of theirs wins."""
    load_built_in()
    if ref.endswith(".py"):
        path = (base / ref if base is not None and not Path(ref).is_absolute() else Path(ref)).resolve()
        if str(path) not in _LOADED:  # a file is one plugin wherever it is named from
            _LOADED[str(path)] = _from_file(ref, path)
        return _LOADED[str(path)]
    if ref not in _LOADED:
        _LOADED[ref] = Plugin(ref, _import(ref).__name__, _version_of(ref))
    return _LOADED[ref]


def load_entry_points() -> list[Plugin]:
    """Every installed package's plugin (group ``vreact.plugins``), loaded once."""
    global _entry_points_loaded
    if not _entry_points_loaded:
        _entry_points_loaded = True
        load_built_in()  # first, as for a plugin named by --plugin
        for ep in importlib.metadata.entry_points(group=GROUP):
            if ep.name in _LOADED:
                continue
            try:
                module = ep.load()
            except Exception as e:
                raise PluginError(
                    f"plugin {ep.name!r} (entry point {ep.value}): {type(e).__name__}: {e}"
                ) from None
            dist = ep.dist
            version = dist.version if dist is not None else None
            _LOADED[ep.name] = Plugin(ep.name, getattr(module, "__name__", ep.value), version, "entry point")
    return [p for p in _LOADED.values() if p.via == "entry point"]


def sources() -> list[tuple[str, str]]:
    """(name, source text) of each plugin loaded from a single file or module (not from an
    installed package's entry point): what another process needs to load them the same."""
    out = []
    for plugin in _LOADED.values():
        module = sys.modules.get(plugin.module)
        path = getattr(module, "__file__", None)
        if plugin.via != "entry point" and path and path.endswith(".py"):
            out.append((plugin.name, Path(path).read_text(encoding="utf-8")))
    return out


def loaded() -> list[Plugin]:
    """The plugins loaded in this process, in the order they were."""
    return list(_LOADED.values())


def _import(ref: str) -> ModuleType:
    """A plugin module by name, found as ``python -m`` finds one: on the path, else in the
    current folder (which a console script, unlike ``python -m``, does not put on the path)."""
    try:
        return importlib.import_module(ref)
    except ModuleNotFoundError as e:
        here = os.getcwd()
        if e.name != ref.split(".")[0] or here in sys.path or "" in sys.path:
            raise PluginError(f"plugin {ref!r}: {type(e).__name__}: {e}") from None
        sys.path.insert(0, here)  # kept: the plugin may import its neighbours later
        return _import(ref)
    except Exception as e:  # a plugin that fails to import: one line naming it
        raise PluginError(f"plugin {ref!r}: {type(e).__name__}: {e}") from None


def _from_file(ref: str, path: Path) -> Plugin:
    if not path.is_file():
        raise PluginError(f"plugin {ref!r}: no such file {path}")
    name = f"vreact_plugin_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[name]
        raise PluginError(f"plugin {ref!r}: {type(e).__name__}: {e}") from None
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return Plugin(ref, name, f"sha256:{digest}", "file")


def _version_of(module: str) -> str | None:
    """The version of the installed distribution that provides ``module``'s top package."""
    top = module.split(".")[0]
    for dist in importlib.metadata.packages_distributions().get(top, []):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None
