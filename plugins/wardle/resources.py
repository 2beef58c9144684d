"""Flunders and Fischers: resources, defaulting, validation and OpenAPI schemas.

As upstream's sample-apiserver ``v1alpha1``: a Flunder's ``spec.reference`` names another
Flunder or a Fischer, as ``spec.referenceType`` says (``Flunder`` by default when a
reference is given); a Fischer lists ``disallowedFlunders``. Names need only be usable as
URL path segments (the generic registry's rule). Tables show Name and Created At
(``rest.NewDefaultTableConvertor``).
"""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import validate_path_segment_name
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.strategy import Strategy

GROUP = "wardle.example.com"
FLUNDER_TYPE, FISCHER_TYPE = "Flunder", "Fischer"
#: The package upstream's OpenAPI definitions are named after.
_MODEL = "io.k8s.sample-apiserver.pkg.apis.wardle.v1alpha1"
_REF = "#/components/schemas/"
_TYPE_META = {
    "apiVersion": {
        "description": "APIVersion defines the versioned schema of this representation of an "
                       "object. Servers should convert recognized schemas to the latest "
                       "internal value, and may reject unrecognized values. More info: "
                       "https://git.k8s.io/community/contributors/devel/sig-architecture/"
                       "api-conventions.md#resources",
        "type": "string"},
    "kind": {
        "description": "Kind is a string value representing the REST resource this object "
                       "represents. Servers may infer this from the endpoint the client "
                       "submits requests to. Cannot be updated. In CamelCase. More info: "
                       "https://git.k8s.io/community/contributors/devel/sig-architecture/"
                       "api-conventions.md#types-kinds",
        "type": "string"},
    "metadata": {"default": {}, "allOf": [
        {"$ref": _REF + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]},
}


def _gvk(kind: str) -> list[dict]:
    return [{"group": GROUP, "kind": kind, "version": "v1alpha1"}]


def _list(kind: str) -> dict:
    return {
        "description": f"{kind}List is a list of {kind} objects.",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": _TYPE_META["apiVersion"],
            "items": {"type": "array", "items": {
                "default": {}, "allOf": [{"$ref": f"{_REF}{_MODEL}.{kind}"}]}},
            "kind": _TYPE_META["kind"],
            "metadata": {"default": {}, "allOf": [
                {"$ref": _REF + "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}]},
        },
        "x-kubernetes-group-version-kind": _gvk(f"{kind}List")}


FLUNDER_DEFINITIONS = {
    f"{_MODEL}.Flunder": {
        "type": "object",
        "properties": {
            **_TYPE_META,
            "spec": {"default": {}, "allOf": [{"$ref": f"{_REF}{_MODEL}.FlunderSpec"}]},
            "status": {"default": {}, "allOf": [{"$ref": f"{_REF}{_MODEL}.FlunderStatus"}]},
        },
        "x-kubernetes-group-version-kind": _gvk("Flunder")},
    f"{_MODEL}.FlunderSpec": {
        "type": "object",
        "properties": {
            "reference": {"description": "A name of another flunder or fischer, depending on "
                                         "the reference type.", "type": "string"},
            "referenceType": {"description": "The reference type, defaults to \"Flunder\" if "
                                             "reference is set.", "type": "string"}}},
    f"{_MODEL}.FlunderStatus": {"type": "object"},
    f"{_MODEL}.FlunderList": _list("Flunder"),
}
FISCHER_DEFINITIONS = {
    f"{_MODEL}.Fischer": {
        "type": "object",
        "properties": {
            **_TYPE_META,
            "disallowedFlunders": {
                "description": "DisallowedFlunders holds a list of Flunder.Names that are "
                               "disallowed.",
                "type": "array", "items": {"type": "string", "default": ""}},
        },
        "x-kubernetes-group-version-kind": _gvk("Fischer")},
    f"{_MODEL}.FischerList": _list("Fischer"),
}

FLUNDERS = ResourceSpec(group=GROUP, version="v1alpha1", kind="Flunder", resource="flunders",
                        singular="flunder", namespaced=True,
                        openapi_definitions=FLUNDER_DEFINITIONS)
FISCHERS = ResourceSpec(group=GROUP, version="v1alpha1", kind="Fischer", resource="fischers",
                        singular="fischer", namespaced=False,
                        openapi_definitions=FISCHER_DEFINITIONS)


class _SampleStrategy(Strategy):
    """The generic registry's name rule, as every sample-apiserver resource has it."""

    def name_validator(self):
        return validate_path_segment_name


class FlunderStrategy(_SampleStrategy):
    """Defaulting (``SetDefaults_FlunderSpec``) and ``ValidateFlunder``."""

    def apply_defaults(self, obj):
        spec = obj.get("spec")
        if isinstance(spec, dict) and spec.get("reference") and not spec.get("referenceType"):
            spec["referenceType"] = FLUNDER_TYPE

    def prepare_for_create(self, obj):
        super().prepare_for_create(obj)
        _round_trip(obj)

    def prepare_for_update(self, new, old):
        super().prepare_for_update(new, old)
        _round_trip(new)

    def validate(self, obj):
        return super().validate(obj) + validate_flunder_spec(_spec(obj))


class FischerStrategy(_SampleStrategy):
    """No rules beyond metadata (upstream validates nothing else)."""


def _spec(obj: dict) -> dict:
    return obj["spec"] if isinstance(obj.get("spec"), dict) else {}


def _round_trip(obj: dict) -> None:
    """What upstream stores: its internal type has no room for a reference of an unknown
    type, so the conversion drops ``reference`` and ``referenceType`` then."""
    spec = _spec(obj)
    if spec.get("referenceType") not in (FLUNDER_TYPE, FISCHER_TYPE):
        spec.pop("reference", None)
        spec.pop("referenceType", None)


def validate_flunder_spec(spec: dict) -> list:
    """``ValidateFlunderSpec`` on the internal form a ``v1alpha1`` spec converts to.

    The field paths are the internal type's (``flunderReference``, ``fischerReference``),
    as upstream's messages name them.
    """
    path = FieldPath("spec")
    reference_type = spec.get("referenceType") or ""
    reference = spec.get("reference") or ""
    if reference_type == FISCHER_TYPE and not reference:
        return [FieldError.required(path.child("fischerReference"),
                                    "cannot be empty if referenceType is Fischer")]
    if reference_type == FLUNDER_TYPE and not reference:
        return [FieldError.required(path.child("flunderReference"),
                                    "cannot be empty if referenceType is Flunder")]
    return []
