"""From a command line to a validated ``Config`` and a loaded ``PluginManager``.

Plugins are loaded first (they declare options), then the file and the flags are parsed
and validated together, so every problem is reported at once.
"""

from __future__ import annotations

import argparse
import os

from . import admission, controllers
from .audit.options import check_audit
from .errors import ConfigError
from .options import OptionRegistry, add_arguments, load, read_config_file
from .options.core import add_core_options, check_storage, check_tls_pair
from .plugin_manager import new_plugin_manager


def build_registry(pm) -> OptionRegistry:
    """The core's options plus every plugin's ``kapiserver_add_options``."""
    registry = OptionRegistry()
    add_core_options(registry)
    for impl in pm.hook.kapiserver_add_options.get_hookimpls():
        impl.function(options=registry.declared_by(f"plugin {impl.plugin_name}"))
    return registry


def check_choices(pm):
    """Return an option check naming unknown authorization modes, delegates, admission
    plugins, controllers, and every option conflict a plugin's factory hook reports
    (``ConfigError``)."""

    def check(config) -> list[str]:
        errors = []
        collected = {}
        for hook in ("kapiserver_authenticators", "kapiserver_authorizers",
                     "kapiserver_delegates", "kapiserver_admission_plugins",
                     "kapiserver_controllers"):
            try:
                collected[hook] = pm.collect(hook, config=config)
            except ConfigError as err:
                errors.extend(err.errors)
        if errors:
            return errors
        modes = collected["kapiserver_authorizers"]
        delegates = collected["kapiserver_delegates"]
        admission_plugins = collected["kapiserver_admission_plugins"]
        for option, chosen, valid in (("--authorization-mode", config.authorization_mode, modes),
                                      ("--delegation", config.delegation, delegates)):
            unknown = [n for n in chosen if n not in valid]
            if unknown:
                errors.append(f"{option}: unknown {', '.join(map(repr, unknown))}; "
                              f"valid choices: {', '.join(sorted(valid)) or '(none)'}")
            duplicates = sorted({n for n in chosen if chosen.count(n) > 1})
            if duplicates:
                errors.append(f"{option}: {', '.join(duplicates)} listed more than once")
        try:
            admission.select(admission_plugins, config.enable_admission_plugins,
                             config.disable_admission_plugins)
        except ConfigError as err:
            errors.extend(err.errors)
        try:
            controllers.select(collected["kapiserver_controllers"], config.controllers)
        except ConfigError as err:
            errors.extend(err.errors)
        return errors

    return check


def _pre_parse(argv):
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config", default="")
    pre.add_argument("--plugin", action="append", default=[])
    known, _ = pre.parse_known_args(argv)
    return known


def load_config(argv, prog: str = "kapiserver serve", entry_points: bool = True):
    """Parse ``argv`` (flags, ``--config FILE``) into ``(Config, PluginManager)``.

    Raises ``ConfigError`` listing every invalid option; argparse exits on malformed flags.
    """
    known = _pre_parse(argv)
    config_file = os.path.abspath(known.config) if known.config else ""
    file_values = read_config_file(config_file) if config_file else {}
    extra_plugins = [p for value in known.plugin for p in value.split(",") if p]
    from_file = file_values.get("plugin") or []
    if isinstance(from_file, str):
        from_file = from_file.split(",")
    extra_plugins += [p.strip() for p in from_file if p and p.strip() not in extra_plugins]
    pm = new_plugin_manager(extra_plugins, entry_points=entry_points)
    registry = build_registry(pm)
    parser = argparse.ArgumentParser(prog=prog, description="Serve the Kubernetes API over HTTPS.")
    add_arguments(parser, registry)
    args = vars(parser.parse_args(argv))
    args.pop("config", None)
    config = load(registry, file_values, args, config_file,
                  extra_checks=[check_tls_pair, check_storage, check_audit, check_choices(pm)])
    return config, pm

