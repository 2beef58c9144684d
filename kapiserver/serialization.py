"""JSON and YAML encodings byte-compatible with upstream's Go encoders."""

from __future__ import annotations

import functools
import json

import yaml

#: What Go's JSON encoder escapes beyond what ``json.dumps`` does (its HTML escaping).
GO_ESCAPES = _GO_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
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
    """Block-style YAML as sigs.k8s.io/yaml writes it (JSON, then go-yaml v2's encoder)."""


_STR = "tag:yaml.org,2002:str"


def _str_presenter(dumper, value):
    if "\n" in value:
        return dumper.represent_scalar(_STR, value, style="|")
    # go-yaml double-quotes a string that would read back as another type ("1", "true",
    # "", timestamps); the emitter single-quotes the rest that cannot be plain.
    if dumper.resolve(yaml.ScalarNode, value, (True, False)) != _STR:
        return dumper.represent_scalar(_STR, value, style='"')
    return dumper.represent_scalar(_STR, value)


def go_yaml_key_less(a: str, b: str) -> bool:
    """go-yaml v2's map key order (``keyList.Less``): runs of digits compare as numbers,
    and a non-letter sorts before a letter."""
    for i in range(min(len(a), len(b))):
        ca, cb = a[i], b[i]
        if ca == cb:
            continue
        al, bl = ca.isalpha(), cb.isalpha()
        if al and bl:
            return ca < cb
        if al or bl:
            return bl
        an = bn = 0
        if ca == "0" or cb == "0":
            j = i - 1
            while j >= 0 and a[j].isdigit():
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(a) and a[ai].isdigit():
            an = an * 10 + int(a[ai])
            ai += 1
        bi = i
        while bi < len(b) and b[bi].isdigit():
            bn = bn * 10 + int(b[bi])
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return ca < cb
    return len(a) < len(b)


_go_yaml_key = functools.cmp_to_key(
    lambda a, b: -1 if go_yaml_key_less(a, b) else (1 if go_yaml_key_less(b, a) else 0))


def _dict_presenter(dumper, value):
    items = sorted(value.items(), key=lambda item: _go_yaml_key(str(item[0])))
    return dumper.represent_mapping("tag:yaml.org,2002:map", items)


_Dumper.add_representer(str, _str_presenter)
_Dumper.add_representer(dict, _dict_presenter)


def dumps_yaml(obj) -> bytes:
    """Encode as YAML (what ``application/yaml`` clients receive): keys in go-yaml's
    order, quoting as go-yaml quotes."""
    return yaml.dump(obj, Dumper=_Dumper, default_flow_style=False, sort_keys=False,
                     allow_unicode=True).encode()
