"""JSON and YAML encodings byte-compatible with upstream's Go encoders."""

from __future__ import annotations

import json

import yaml

_GO_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                             "\u2028": "\\u2028", "\u2029": "\\u2029"})


def dumps_json(obj) -> bytes:
    """Encode as ``json.NewEncoder(w).Encode(obj)`` does: compact, HTML-escaped, newline."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return (text.translate(_GO_ESCAPES) + "\n").encode()


def dumps_json_indent(obj) -> bytes:
    """Encode as ``json.MarshalIndent(obj, "", "  ")`` does (no trailing newline)."""
    text = json.dumps(obj, indent=2, ensure_ascii=False)
    return text.translate(_GO_ESCAPES).encode()


class _Dumper(yaml.SafeDumper):
    """Block-style YAML with keys in the object's own order, as sigs.k8s.io/yaml writes."""


def _str_presenter(dumper, value):
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str_presenter)


def dumps_yaml(obj) -> bytes:
    """Encode as YAML (what ``application/yaml`` clients receive)."""
    return yaml.dump(obj, Dumper=_Dumper, default_flow_style=False, sort_keys=False,
                     allow_unicode=True).encode()
