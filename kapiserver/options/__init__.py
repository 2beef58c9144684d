"""Options: declared by the core and by plugins, read from a YAML file and from flags.

Every option has a kebab-case name that is both its flag (``--secure-port``) and its key
in the config file (``secure-port: 6443``); kube-apiserver's flag names are used where
one exists. Flags override the file. ``load`` validates everything with marshmallow and
raises one ``ConfigError`` listing every problem, each prefixed with ``--option-name``.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

import yaml
from marshmallow import EXCLUDE, Schema, ValidationError, fields

from ..errors import ConfigError


@dataclass(frozen=True)
class Option:
    """One declared option: its name, marshmallow field, help text and who declared it."""

    name: str
    field: fields.Field
    help: str
    owner: str = "kapiserver"

    @property
    def attr(self) -> str:
        return self.name.replace("-", "_")

    @property
    def is_flag(self) -> bool:
        return isinstance(self.field, fields.Boolean)

    @property
    def is_list(self) -> bool:
        return isinstance(self.field, fields.List)


class OptionRegistry:
    """The set of options known to this server (core plus ``kapiserver_add_options``)."""

    def __init__(self):
        self.options: dict[str, Option] = {}
        self._owner = "kapiserver"

    def add(self, name: str, field: fields.Field, help: str) -> None:
        """Declare option ``name`` (kebab-case) converted and validated by ``field``."""
        if name in self.options:
            raise ConfigError(f"--{name}: declared twice, by {self.options[name].owner} "
                              f"and {self._owner}")
        self.options[name] = Option(name, field, help, self._owner)

    def declared_by(self, owner: str) -> "OptionRegistry":
        """Return this registry with ``owner`` recorded as the declarer of what it adds."""
        view = OptionRegistry.__new__(OptionRegistry)
        view.options = self.options
        view._owner = owner
        return view

    def schema(self) -> Schema:
        fields_ = {}
        for option in self.options.values():
            field = option.field
            field.data_key = option.name
            fields_[option.attr] = field
        return Schema.from_dict(fields_, name="KapiserverOptions")(unknown=EXCLUDE)


class Config:
    """Validated option values, as attributes with underscores (``config.secure_port``).

    ``given`` holds the names of the options set by the file or by flags, so a plugin can
    tell an explicit value from a default.
    """

    def __init__(self, values: dict, given: frozenset = frozenset(), config_file: str = ""):
        self.__dict__.update(values)
        self._values = dict(values)
        self.given = given
        self.config_file = config_file

    def get(self, name: str, default=None):
        """Return the value of option ``name`` (kebab-case or underscored)."""
        return self._values.get(name.replace("-", "_"), default)

    def as_dict(self) -> dict:
        """Return every option's value keyed by its kebab-case name."""
        return {k.replace("_", "-"): v for k, v in self._values.items()}


def add_arguments(parser: argparse.ArgumentParser, registry: OptionRegistry) -> None:
    """Add one flag per option; flags that are not given leave the file's value alone."""
    parser.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS,
                        help="YAML file of options (keys are the flag names); flags override it")
    for option in sorted(registry.options.values(), key=lambda o: o.name):
        kwargs = {"dest": option.attr, "default": argparse.SUPPRESS, "help": option.help}
        if option.is_flag:
            # Go's bool flags: --anonymous-auth alone means true, =false turns it off.
            kwargs.update(nargs="?", const="true", metavar="BOOL")
        elif option.is_list:
            kwargs.update(action="append", metavar="A,B")
        else:
            kwargs["metavar"] = option.name.split("-")[-1].upper()
        parser.add_argument(f"--{option.name}", **kwargs)


def read_config_file(path: str) -> dict:
    """Read the YAML config file; raise ``ConfigError`` on an unreadable or malformed one."""
    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f)
    except OSError as err:
        raise ConfigError(f"--config: {path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"--config: {path}: invalid YAML: {err}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"--config: {path}: must be a mapping of option names to values")
    return data


def load(registry: OptionRegistry, file_values: dict, flag_values: dict,
         config_file: str = "", extra_checks=()) -> Config:
    """Validate file and flag values together (flags win) into a ``Config``.

    ``flag_values`` is keyed by attribute name (argparse ``dest``); ``file_values`` by
    option name. ``extra_checks`` are callables ``check(config) -> list[str]`` run on the
    provisional config (invalid values replaced by defaults) so that every error, of any
    kind, is reported in one ``ConfigError``.
    """
    errors = []
    merged = {}
    by_attr = {o.attr: o for o in registry.options.values()}
    for key, value in file_values.items():
        option = registry.options.get(key) or by_attr.get(key)
        if option is None:
            errors.append(f"--{key}: unknown option in {config_file or 'the config file'}")
            continue
        merged[option.name] = value
    for attr, value in flag_values.items():
        merged[by_attr[attr].name] = value
    schema = registry.schema()
    try:
        values = schema.load(merged)
    except ValidationError as err:
        values = err.valid_data or {}
        for attr, messages in sorted(err.messages.items()):
            name = by_attr[attr].name if attr in by_attr else attr
            for message in _flatten(messages):
                errors.append(f"--{name}: {message}")
    for option in registry.options.values():
        if option.attr not in values:
            default = option.field.load_default
            values[option.attr] = default() if callable(default) else default
    config = Config(values, frozenset(merged), config_file)
    for check in extra_checks:
        errors.extend(check(config))
    if errors:
        raise ConfigError(errors)
    return config


def _flatten(messages):
    if isinstance(messages, dict):
        for value in messages.values():
            yield from _flatten(value)
    elif isinstance(messages, list):
        for value in messages:
            yield from _flatten(value)
    else:
        yield str(messages)


def default_data_dir() -> str:
    return os.path.join(os.getcwd(), ".kapiserver")
