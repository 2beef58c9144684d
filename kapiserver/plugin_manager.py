"""Loading plugins: the ``kapiserver`` entry-point group, extra modules, and their hooks."""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
from dataclasses import dataclass

import pluggy

from . import hookspecs
from .errors import ConfigError

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "kapiserver"
hookimpl = pluggy.HookimplMarker("kapiserver")


@dataclass(frozen=True)
class PluginInfo:
    """A loaded plugin: its registered name, module, and the distribution that ships it."""

    name: str
    module: str
    distribution: str
    version: str
    hooks: tuple[str, ...]


class PluginManager(pluggy.PluginManager):
    """pluggy's manager with kapiserver's hook specs and a record of where plugins came from."""

    def __init__(self):
        super().__init__("kapiserver")
        self.add_hookspecs(hookspecs)
        self._origins: dict[str, tuple[str, str]] = {}
        #: hook name -> {component name: plugin name}, filled by ``collect``.
        self.providers: dict[str, dict[str, str]] = {}

    def load_entry_points(self) -> None:
        """Import and register every ``kapiserver`` entry point; import errors propagate."""
        # A distribution's name and version parse its METADATA file on every access, and
        # one distribution ships many plugins (kapiserver's own: every built-in).
        origins: dict[int, tuple[str, str]] = {}
        for ep in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP),
                         key=lambda e: e.name):
            if self.has_plugin(ep.name):
                continue
            if id(ep.dist) not in origins:
                metadata = ep.dist.metadata if ep.dist else None
                origins[id(ep.dist)] = ((metadata["Name"], metadata["Version"])
                                        if metadata is not None else ("?", "?"))
            dist, version = origins[id(ep.dist)]
            try:
                plugin = ep.load()
            except Exception as err:
                raise ConfigError(f"plugin {ep.name!r} ({ep.value}) from {dist} {version} "
                                  f"failed to load: {type(err).__name__}: {err}") from err
            self.register(plugin, name=ep.name)
            self._origins[ep.name] = (dist, version)

    def load_modules(self, names) -> None:
        """Import and register plugin modules named by import path (``--plugin``)."""
        for name in names:
            if self.has_plugin(name):
                continue
            try:
                module = importlib.import_module(name)
            except Exception as err:
                raise ConfigError(f"--plugin: {name} failed to import: "
                                  f"{type(err).__name__}: {err}") from err
            self.register(module, name=name)
            self._origins[name] = _distribution_of(module)

    def plugin_infos(self) -> list[PluginInfo]:
        """Describe every registered plugin, sorted by name."""
        infos = []
        for name, plugin in self.list_name_plugin():
            dist, version = self._origins.get(name, ("?", "?"))
            hooks = tuple(sorted(h.name for h in self.get_hookcallers(plugin) or ()))
            infos.append(PluginInfo(name, getattr(plugin, "__name__", repr(plugin)),
                                    dist, version, hooks))
        return sorted(infos, key=lambda i: i.name)

    def collect(self, hook_name: str, **kwargs) -> dict:
        """Call a ``{name: factory}`` hook once per plugin and merge the answers.

        Raises ``ConfigError`` when two plugins provide the same name. Each factory is
        recorded with the plugin that provided it in ``self.providers[hook_name]``.
        """
        merged, providers = {}, {}
        for impl in getattr(self.hook, hook_name).get_hookimpls():
            result = impl.function(**{a: kwargs[a] for a in impl.argnames})
            for name, factory in (result or {}).items():
                if name in merged:
                    raise ConfigError(f"{hook_name}: {name!r} provided by both "
                                      f"{providers[name]} and {impl.plugin_name}")
                merged[name] = factory
                providers[name] = impl.plugin_name
        self.providers[hook_name] = providers
        return merged


def _distribution_of(module) -> tuple[str, str]:
    top = module.__name__.split(".")[0]
    for dist in importlib.metadata.packages_distributions().get(top, []):
        try:
            return dist, importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    return "(not installed)", "-"


def new_plugin_manager(extra_modules=(), entry_points: bool = True) -> PluginManager:
    """Build a plugin manager with installed plugins plus ``extra_modules``.

    ``check_pending`` makes a misspelt hook name in any plugin a start-up error.
    """
    pm = PluginManager()
    if entry_points:
        pm.load_entry_points()
    pm.load_modules(extra_modules)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as err:
        raise ConfigError(f"plugin {err.plugin!r}: {err}") from err
    return pm
