"""Names of every kind, in one shape. Gates, judges' prompts, pipeline members, tools, task
families and model providers are each a :class:`Registry`: registered with a decorator that
takes the name first, looked up with one rule (a name not registered yet loads what is
installed, then is refused with the closest names), listed with ``names()``. Here too are the
plugins that add to them: a user's module named by file or name, or an installed package's entry
point, kept with its version so a run's records say which plugins made it."""

from __future__ import annotations

import difflib
import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Generic, TypeVar

#: The entry-point group an installed package registers a task family's module in (vreact's own
#: families are registered there too).
FAMILY_GROUP = "vreact.families"
#: The entry-point group an installed package registers its plugin module in.
PLUGIN_GROUP = "vreact.plugins"

T = TypeVar("T")
F = TypeVar("F")


#: Up to this many known names are listed beside the closest one; more only when none is close.
LISTED = 10


def suggestion(name: str, known: Iterable[str], listed: bool = True) -> str:
    """What follows a refusal of ``name``: ``; did you mean 'a'?`` (the closest of ``known``),
    then `` (known: ...)`` when few are known or none is close (never when not ``listed``)."""
    known = sorted(set(known))
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    if listed and (not close or len(known) <= LISTED):
        hint += f" (known: {', '.join(known) or 'none'})"
    return hint


class UnknownName(ValueError):
    """A name its registry does not hold, even with what is installed loaded: one line that says
    which kind and gives the closest names."""

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        self.kind, self.name = kind, name
        super().__init__(f"unknown {kind} {name!r}{suggestion(name, known)}")


class Registry(Generic[T]):
    """The items of one kind by name. The last registration of a name wins, so a plugin (loaded
    after the installed families) may replace a built-in item."""

    def __init__(self, kind: str, unknown: type[UnknownName] = UnknownName) -> None:
        self.kind = kind
        self.unknown = unknown
        self._items: dict[str, T] = {}
        self._modules: dict[str, str] = {}
        REGISTRIES[kind] = self

    def register(
        self, name: str | None = None, make: Callable[[str, Any], T] | None = None
    ) -> Callable[[F], F]:
        """A decorator: what it decorates is registered as ``name`` (default: its ``__name__``),
        made into the item by ``make(name, it)`` (default: the item is itself)."""

        def decorate(obj: F) -> F:
            key = str(name or getattr(obj, "__name__", ""))
            item: T = make(key, obj) if make is not None else obj  # type: ignore[assignment]
            self.add(key, item, getattr(obj, "__module__", ""))
            return obj

        return decorate

    def add(self, name: str, item: T, module: str = "") -> None:
        """Register ``item`` as ``name`` (``module``: where it was defined, for ``vreact plugins``)."""
        self._items[name] = item
        self._modules[name] = module

    def __getitem__(self, name: str) -> T:
        """The item registered as ``name``; a name not registered yet loads what is installed
        (:func:`load_installed`), then raises this registry's :class:`UnknownName`."""
        if name not in self._items:
            load_installed()
        if name not in self._items:
            raise self.unknown(self.kind, name, self._items)
        return self._items[name]

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is registered so far (nothing is loaded for it)."""
        return name in self._items

    def names(self) -> list[str]:
        """Every name, what is installed loaded first."""
        load_installed()
        return sorted(self._items)

    def registered(self) -> dict[str, T]:
        """The items registered so far, by name (nothing is loaded for it)."""
        return self._items

    def module_of(self, name: str) -> str:
        """The module that defined the item registered as ``name``."""
        self[name]
        return self._modules[name]


#: Every registry by the kind it holds, in the order they were made.
REGISTRIES: dict[str, Registry[Any]] = {}


# --- what is installed -------------------------------------------------------------------


@functools.cache
def installed(group: str) -> dict[str, str]:
    """The installed entry points of ``group``, by name -> the module each names."""
    return {ep.name: ep.value for ep in importlib.metadata.entry_points(group=group)}


_installing = False
_installed = False


def load_installed() -> None:
    """Load what is installed, once: the task families (each registers its gates, prompts,
    members and tools as it loads), then the plugin packages. Every registry calls it before it
    says a name is unknown. A plugin comes after the families, so its registration of a name
    replaces a built-in one."""
    global _installing, _installed
    if _installed or _installing:
        return
    _installing = True
    try:
        for name, module in installed(FAMILY_GROUP).items():
            try:
                importlib.import_module(module)
            except Exception as e:
                raise PluginError(
                    f"family {name!r} (entry point {module}): {type(e).__name__}: {e}"
                ) from None
        _load_plugin_packages()
        _installed = True
    finally:
        _installing = False


# --- plugins -------------------------------------------------------------------------------


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


def load_plugin(ref: str, base: Path | None = None) -> Plugin:
    """Import the plugin ``ref`` once: a module name, or a ``.py`` file (relative to ``base``).
    What is installed loads first, so what a plugin registers under a name of theirs wins."""
    load_installed()
    if ref.endswith(".py"):
        path = (base / ref if base is not None and not Path(ref).is_absolute() else Path(ref)).resolve()
        if str(path) not in _LOADED:  # a file is one plugin wherever it is named from
            _LOADED[str(path)] = _from_file(ref, path)
        return _LOADED[str(path)]
    if ref not in _LOADED:
        _LOADED[ref] = Plugin(ref, _import(ref).__name__, _version_of(ref))
    return _LOADED[ref]


def load_entry_points() -> list[Plugin]:
    """Every installed package's plugin (group ``vreact.plugins``), the installed families first,
    loaded once."""
    load_installed()
    return [p for p in _LOADED.values() if p.via == "entry point"]


def _load_plugin_packages() -> None:
    for ep in importlib.metadata.entry_points(group=PLUGIN_GROUP):
        if ep.name in _LOADED:
            continue
        try:
            module = ep.load()
        except Exception as e:
            raise PluginError(
                f"plugin {ep.name!r} (entry point {ep.value}): {type(e).__name__}: {e}"
            ) from None
        version = ep.dist.version if ep.dist is not None else None
        _LOADED[ep.name] = Plugin(ep.name, getattr(module, "__name__", ep.value), version, "entry point")


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
