"""The internal view of a v1 CRD spec that upstream's validation runs on.

Upstream validates the internal ``apiextensions`` types, converted from v1 by
``Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec``:
when every version has the same ``schema`` (or ``subresources``, ``additionalPrinterColumns``,
``selectableFields`` with the same schema) the value moves to the top-level field and the
versions keep none. That is why errors in a single-version CRD's schema are reported at
``spec.validation.openAPIV3Schema`` and not ``spec.versions[0].schema.openAPIV3Schema``,
and conversion settings at ``spec.conversion.webhookClientConfig``.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field, replace

__all__ = ["InternalSpec", "to_internal", "walk_schemas", "schema_has"]


def as_dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def as_list(value) -> list:
    return value if isinstance(value, list) else []


def as_str(value) -> str:
    return value if isinstance(value, str) else ""


@dataclass
class InternalSpec:
    """``apiextensions.CustomResourceDefinitionSpec`` (only what validation reads)."""

    group: str = ""
    names: dict = field(default_factory=dict)
    scope: str = ""
    version: str = ""
    #: each: name, served, storage, deprecated, deprecationWarning, schema, subresources,
    #: additionalPrinterColumns, selectableFields (None where hoisted or unset)
    versions: list | None = None
    validation: dict | None = None
    subresources: dict | None = None
    columns: list | None = None
    selectable_fields: list | None = None
    #: strategy, webhookClientConfig (url, service, caBundle as bytes), conversionReviewVersions
    conversion: dict | None = None
    preserve_unknown_fields: bool = False


def _client_config(config: dict) -> dict:
    out = {"url": config.get("url"), "service": config.get("service"), "caBundle": None}
    bundle = config.get("caBundle")
    if isinstance(bundle, str) and bundle:
        try:
            out["caBundle"] = base64.b64decode(bundle, validate=True)
        except (binascii.Error, ValueError):
            out["caBundle"] = bundle.encode()
    return out


def _conversion(conversion) -> dict | None:
    # Convert_v1_CustomResourceConversion_To_apiextensions_CustomResourceConversion
    if not isinstance(conversion, dict):
        return None
    webhook = conversion.get("webhook")
    out = {"strategy": as_str(conversion.get("strategy")), "webhookClientConfig": None,
           "conversionReviewVersions": None}
    if isinstance(webhook, dict):
        out["conversionReviewVersions"] = webhook.get("conversionReviewVersions")
        if isinstance(webhook.get("clientConfig"), dict):
            out["webhookClientConfig"] = _client_config(webhook["clientConfig"])
    return out


def _same(values: list) -> bool:
    first = values[0]
    return all(value == first for value in values)


def to_internal(spec) -> InternalSpec:
    """The internal spec of a (defaulted) v1 ``spec``, per-version fields hoisted."""
    spec = as_dict(spec)
    versions = spec.get("versions")
    internal = InternalSpec(
        group=as_str(spec.get("group")), names=as_dict(spec.get("names")),
        scope=as_str(spec.get("scope")), conversion=_conversion(spec.get("conversion")),
        preserve_unknown_fields=spec.get("preserveUnknownFields") is True)
    if not isinstance(versions, list):
        return internal
    internal.versions = [dict(as_dict(v)) for v in versions]
    for version in internal.versions:
        # A nil and an empty slice are the same to Semantic.DeepEqual.
        for key in ("additionalPrinterColumns", "selectableFields"):
            version[key] = version.get(key) or None
    if not internal.versions:
        return internal
    internal.version = as_str(internal.versions[0].get("name"))
    schemas = [v.get("schema") for v in internal.versions]
    subresources = [v.get("subresources") for v in internal.versions]
    columns = [v.get("additionalPrinterColumns") for v in internal.versions]
    selectable = [v.get("selectableFields") for v in internal.versions]
    same_schema = _same(schemas)
    if same_schema:
        internal.validation = schemas[0]
    if _same(subresources):
        internal.subresources = subresources[0]
    if _same(columns):
        internal.columns = columns[0]
    hoist_selectable = same_schema and _same(selectable)
    if hoist_selectable:
        internal.selectable_fields = selectable[0]
    for version in internal.versions:
        if same_schema:
            version["schema"] = None
        if _same(subresources):
            version["subresources"] = None
        if _same(columns):
            version["additionalPrinterColumns"] = None
        if hoist_selectable:
            version["selectableFields"] = None
    return internal


def openapi_schema(validation) -> dict | None:
    """``validation.OpenAPIV3Schema`` of a ``CustomResourceValidation`` (or None)."""
    schema = as_dict(validation).get("openAPIV3Schema")
    return schema if isinstance(schema, dict) else None


def all_schemas(spec: InternalSpec) -> list[dict]:
    """Every ``openAPIV3Schema`` of ``spec``: top-level, then per version."""
    out = []
    if openapi_schema(spec.validation) is not None:
        out.append(openapi_schema(spec.validation))
    for version in spec.versions or []:
        if openapi_schema(version.get("schema")) is not None:
            out.append(openapi_schema(version.get("schema")))
    return out


def walk_schemas(s):
    """``SchemaHas``'s walk: ``s`` and every schema nested in it, depth first."""
    if not isinstance(s, dict):
        return
    yield s
    items = s.get("items")
    if isinstance(items, dict):
        yield from walk_schemas(items)
    for item in as_list(items):
        yield from walk_schemas(item)
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in as_list(s.get(key)):
            yield from walk_schemas(sub)
    yield from walk_schemas(s.get("not"))
    for key in ("properties", "patternProperties", "definitions"):
        for sub in as_dict(s.get(key)).values():
            yield from walk_schemas(sub)
    for key in ("additionalProperties", "additionalItems"):
        if isinstance(s.get(key), dict):
            yield from walk_schemas(s[key])
    for dependency in as_dict(s.get("dependencies")).values():
        if isinstance(dependency, dict):
            yield from walk_schemas(dependency)


def schema_has(schema, predicate) -> bool:
    """``SchemaHas``: whether ``predicate`` holds for ``schema`` or any schema in it."""
    return any(predicate(s) for s in walk_schemas(schema))


def spec_has(spec: InternalSpec, predicate) -> bool:
    """``HasSchemaWith``: whether any schema of ``spec`` has a node matching ``predicate``."""
    return any(schema_has(s, predicate) for s in all_schemas(spec))


@dataclass
class Options:
    """upstream's ``validationOptions``: what create demands, relaxed on update where the
    stored CRD already breaks a rule ("ratcheting")."""

    allow_defaults: bool = True
    disallow_defaults_reason: str = ""
    require_recognized_conversion_review_version: bool = True
    require_immutable_names: bool = False
    require_open_api_schema: bool = True
    require_valid_property_type: bool = True
    require_structural_schema: bool = True
    require_pruned_defaults: bool = True
    require_atomic_set_type: bool = True
    require_map_list_keys_map_set_validation: bool = True
    allow_invalid_ca_bundle: bool = True
    #: versions whose schema an update leaves as it was: their rules' per-expression cost
    #: limit is not enforced again
    unchanged_versions: frozenset = frozenset()
    suppress_per_expression_cost: bool = False

    def for_version(self, name: str) -> "Options":
        """``suppressExpressionCostForUnchangedSchema``."""
        if name in self.unchanged_versions:
            return replace(self, suppress_per_expression_cost=True)
        return self
