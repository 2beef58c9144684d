"""``--admission-control-config-file``: each admission plugin's own configuration.

Upstream's ``ReadAdmissionConfiguration`` (k8s.io/apiserver/pkg/admission/config.go): the
file is an ``AdmissionConfiguration`` of ``apiserver.config.k8s.io/v1`` (or ``v1alpha1``,
or the older ``apiserver.k8s.io/v1alpha1``), YAML or JSON, whose ``plugins`` name a plugin
and give its configuration inline (``configuration``) or in a file (``path``, relative to
the directory of this one). A plugin reads its part with :func:`plugin_configuration`, once,
when it is built.
"""

from __future__ import annotations

import os

import yaml

from ..errors import ConfigError

OPTION = "--admission-control-config-file"
API_VERSIONS = ("apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1alpha1",
                "apiserver.k8s.io/v1alpha1")
KIND = "AdmissionConfiguration"


def _read_yaml(path: str, what: str):
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.safe_load(f)
    except OSError as err:
        raise ConfigError(f"{OPTION}: unable to read {what} {path!r}: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{OPTION}: {what} {path!r} is not valid YAML or JSON: {err}") \
            from None


def load(path: str) -> dict:
    """The plugins' configurations in ``path``, ``{plugin name: dict}`` (``{}`` when
    ``path`` is empty). Raises ``ConfigError`` naming the option and what is wrong."""
    if not path:
        return {}
    document = _read_yaml(path, "admission configuration")
    if not isinstance(document, dict) or document.get("kind") != KIND or \
            document.get("apiVersion") not in API_VERSIONS:
        raise ConfigError(f"{OPTION}: {path!r} must be a {KIND} of one of "
                          f"{', '.join(API_VERSIONS)}")
    plugins = document.get("plugins") or []
    if not isinstance(plugins, list):
        raise ConfigError(f"{OPTION}: {path!r}: plugins must be a list")
    found: dict = {}
    base = os.path.dirname(os.path.abspath(path))
    for index, entry in enumerate(plugins):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) \
                or not entry["name"]:
            raise ConfigError(f"{OPTION}: {path!r}: plugins[{index}] needs a name")
        name = entry["name"]
        if entry.get("configuration") is not None:
            configuration = entry["configuration"]
        elif entry.get("path"):
            configuration = _read_yaml(os.path.join(base, entry["path"]),
                                       f"configuration of admission plugin {name}")
        else:
            continue  # named without a configuration: as if not named
        if not isinstance(configuration, dict):
            raise ConfigError(f"{OPTION}: the configuration of admission plugin {name} must "
                              "be an object")
        found[name] = configuration
    return found


def plugin_configuration(config, name: str) -> dict | None:
    """Admission plugin ``name``'s configuration from ``--admission-control-config-file``,
    or ``None`` when the file gives none. ``config`` is the server's ``Config``."""
    return load(config.get("admission_control_config_file") or "").get(name)
