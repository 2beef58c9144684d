"""Type checking of a policy's expressions against the kinds it matches (upstream's
``validating.TypeChecker``): warnings for ``status.typeChecking.expressionWarnings``.

The kinds are those the ``matchConstraints.resourceRules`` name without wildcards
(subresources skipped; at most 10, ordered by group, version and kind); each kind's schema
comes from the OpenAPI definitions (built-in kinds) or the resource's own (custom
resources), with references inlined, and types ``object`` and ``oldObject`` (and the
``paramKind``'s, ``params``) in a checker environment otherwise the policy's. Each
validation's ``expression`` and ``messageExpression`` is checked once per kind; one that
does not check gives a warning listing, per kind, ``<group/version, Kind=kind>: <issues>``.
Type checking never changes what a policy does.
"""

from __future__ import annotations

import functools
import logging

from . import params

log = logging.getLogger(__name__)

MAX_TYPES = 10
_REF = "#/components/schemas/"
_ANY = {"x-kubernetes-int-or-string": True}  # what CEL types as dyn
_DYN_DEFINITIONS = ("io.k8s.apimachinery.pkg.util.intstr.IntOrString",
                    "io.k8s.apimachinery.pkg.api.resource.Quantity",
                    "io.k8s.apimachinery.pkg.runtime.RawExtension",
                    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON")
_MAX_DEPTH = 24


@functools.lru_cache(maxsize=1)
def _builtin_definitions() -> dict:
    from kapiserver.openapi import schemas

    return schemas.builtin()["definitions"]


def _definition_for(definitions: dict, gvk) -> dict | None:
    for schema in definitions.values():
        for entry in schema.get("x-kubernetes-group-version-kind") or ():
            if (entry.get("group", ""), entry.get("version"), entry.get("kind")) == gvk:
                return schema
    return None


def structural(schema, definitions: dict, depth: int = 0):
    """``schema`` with its references inlined, in the form CEL types read; what CEL cannot
    type (int-or-string, quantities, raw objects, recursion) is ``dyn``."""
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return dict(_ANY)
    ref = schema.get("$ref")
    if ref is None and len(schema.get("allOf") or ()) == 1:
        ref = (schema["allOf"][0] or {}).get("$ref")
    if isinstance(ref, str):
        name = ref[len(_REF):] if ref.startswith(_REF) else ref
        if name in _DYN_DEFINITIONS or name not in definitions:
            return dict(_ANY)
        return structural(definitions[name], definitions, depth + 1)
    if schema.get("x-kubernetes-int-or-string") or "oneOf" in schema or \
            schema.get("x-kubernetes-preserve-unknown-fields"):
        return dict(_ANY)
    kind = schema.get("type")
    out = {k: schema[k] for k in ("type", "format", "maxLength", "maxItems", "maxProperties",
                                  "enum", "required", "x-kubernetes-list-type",
                                  "x-kubernetes-list-map-keys",
                                  "x-kubernetes-embedded-resource") if k in schema}
    if kind == "array":
        out["items"] = structural(schema.get("items"), definitions, depth + 1)
    elif kind == "object" or "properties" in schema:
        out["type"] = "object"
        if isinstance(schema.get("additionalProperties"), dict):
            out["additionalProperties"] = structural(schema["additionalProperties"],
                                                     definitions, depth + 1)
        elif schema.get("properties"):
            out["properties"] = {k: structural(v, definitions, depth + 1)
                                 for k, v in schema["properties"].items()}
        else:
            return dict(_ANY)
    elif kind is None:
        return dict(_ANY)
    return out


def resolve_schema(server, gvk) -> dict | None:
    """The structural schema of kind ``gvk`` (``(group, version, kind)``), or None."""
    definitions = _builtin_definitions()
    found = _definition_for(definitions, gvk)
    if found is not None:
        return structural(found, definitions)
    for registry in list(server.registries.values()):
        spec = registry.spec
        if (spec.group, spec.version, spec.kind) == gvk and spec.openapi_definitions:
            merged = {**definitions, **spec.openapi_definitions}
            own = (spec.openapi_definitions.get(spec.openapi_model)
                   if spec.openapi_model else _definition_for(spec.openapi_definitions, gvk))
            if own is not None:
                return structural(own, merged)
    return None


def kinds_to_check(server, policy: dict) -> list[tuple]:
    """``typesToCheck``: the kinds the resource rules name, sorted."""
    spec = policy.get("spec") or {}
    rules = (spec.get("matchConstraints") or {}).get("resourceRules") or []
    found = set()
    by_resource = {}
    for registry in list(server.registries.values()):
        s = registry.spec
        by_resource[(s.group, s.version, s.resource)] = (s.group, s.version, s.kind)
    for rule in rules:
        if not isinstance(rule, dict):
            continue
        groups = list(rule.get("apiGroups") or ())
        versions = list(rule.get("apiVersions") or ())
        if any("*" in g for g in groups) or any("*" in v for v in versions):
            continue
        resources = [r for r in rule.get("resources") or () if "*" not in r and "/" not in r]
        count = 0
        for group in sorted(groups):
            for version in sorted(versions):
                for resource in sorted(resources):
                    gvk = by_resource.get((group, version, resource))
                    if gvk is None:
                        continue
                    found.add(gvk)
                    count += 1
                    if count == MAX_TYPES:
                        return sorted(found)
    return sorted(found)


def gvk_text(gvk) -> str:
    group, version, kind = gvk
    return f"{group}/{version}, Kind={kind}"


def check(server, policy: dict) -> list[dict]:
    """``TypeChecker.Check``: the policy's expression warnings (``fieldRef``, ``warning``)."""
    from kapiserver_plugins.admissionregistration.cel import typed_environment
    from kapiserver_plugins.apiextensions.cel.compiler import compile_issues

    spec = policy.get("spec") or {}
    kinds = []
    for gvk in kinds_to_check(server, policy):
        schema = resolve_schema(server, gvk)
        if schema is not None:
            kinds.append((gvk, schema))
    if not kinds:
        return []
    param_kind = spec.get("paramKind") if isinstance(spec.get("paramKind"), dict) else None
    params_schema = None
    if param_kind is not None:
        group, version = params.parse_group_version(param_kind.get("apiVersion") or "")
        params_schema = resolve_schema(server, (group, version, param_kind.get("kind") or ""))
    variables = [v.get("name") or "" for v in spec.get("variables") or ()
                 if isinstance(v, dict)]
    declared = tuple(variables) if variables else None
    environments = [(gvk, typed_environment(params_schema is not None, True, declared, schema,
                                            params_schema)) for gvk, schema in kinds]
    warnings = []
    for i, validation in enumerate(spec.get("validations") or ()):
        if not isinstance(validation, dict):
            continue
        for field in ("expression", "messageExpression"):
            source = validation.get(field) or ""
            if not source:
                continue
            results = []
            for gvk, env in environments:
                try:
                    env.compile(source)
                except RuntimeError as err:
                    results.append(f"{gvk_text(gvk)}: {_first_issues(compile_issues(err))}\n")
            if results:
                warnings.append({"fieldRef": f"spec.validations[{i}].{field}",
                                 "warning": "\n".join(results)})
    return warnings


def _first_issues(text: str) -> str:
    """The issues cel-go reports: cel-cpp adds one for each select on an expression that
    already failed (``expression of type '*error*' ...``), which cel-go does not."""
    issues = text.split("\nERROR: ")
    kept = [issue for issue in issues if "'*error*'" not in issue.split("\n", 1)[0]]
    return "\nERROR: ".join(kept or issues)
