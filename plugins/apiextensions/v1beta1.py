"""CRDs stored as ``apiextensions.k8s.io/v1beta1``, read as ``v1``.

kube-apiserver 1.32 still writes CustomResourceDefinitions to etcd in their v1beta1 form
(the group's storage version): the schema, subresources and printer columns may sit in
``spec`` for every version at once, and a webhook conversion's settings directly under
``spec.conversion``. Upstream's conversion (``v1beta1`` → internal → ``v1``) moves them
into each version; an etcd that kube-apiserver filled is read through it.
"""

from __future__ import annotations

import copy

V1 = "apiextensions.k8s.io/v1"
V1BETA1 = "apiextensions.k8s.io/v1beta1"


def _columns(columns) -> list:
    """v1beta1 printer columns (``JSONPath``) in v1's form (``jsonPath``)."""
    out = []
    for column in columns or []:
        column = dict(column)
        if "JSONPath" in column:
            column["jsonPath"] = column.pop("JSONPath")
        out.append(column)
    return out


def crd_from_storage(obj: dict) -> dict:
    """``obj`` in v1's form; a v1 object is returned as it is."""
    if obj.get("apiVersion") != V1BETA1:
        return obj
    obj = copy.deepcopy(obj)
    obj["apiVersion"] = V1
    spec = obj.setdefault("spec", {})
    validation = spec.pop("validation", None)
    subresources = spec.pop("subresources", None)
    columns = spec.pop("additionalPrinterColumns", None)
    version = spec.pop("version", None)
    versions = spec.get("versions") or ([{"name": version, "served": True, "storage": True}]
                                        if version else [])
    for entry in versions:
        if validation is not None and "schema" not in entry:
            entry["schema"] = copy.deepcopy(validation)
        if subresources is not None and "subresources" not in entry:
            entry["subresources"] = copy.deepcopy(subresources)
        if "additionalPrinterColumns" in entry:
            entry["additionalPrinterColumns"] = _columns(entry["additionalPrinterColumns"])
        elif columns is not None:
            entry["additionalPrinterColumns"] = _columns(columns)
    spec["versions"] = versions
    conversion = spec.get("conversion")
    if isinstance(conversion, dict) and conversion.get("strategy") == "Webhook":
        webhook = {}
        if "webhookClientConfig" in conversion:
            webhook["clientConfig"] = conversion.pop("webhookClientConfig")
        if "conversionReviewVersions" in conversion:
            webhook["conversionReviewVersions"] = conversion.pop("conversionReviewVersions")
        if webhook:
            conversion["webhook"] = webhook
    elif isinstance(conversion, dict):
        conversion.pop("webhookClientConfig", None)
        conversion.pop("conversionReviewVersions", None)
    return obj
