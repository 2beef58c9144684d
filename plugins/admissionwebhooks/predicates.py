"""Which webhooks a request concerns (upstream's ``webhook/predicates``: ``rules``,
``namespace``, ``object``) and ``matchPolicy: Equivalent``'s other versions of a resource.

Equivalent resources are those kapiserver serves in more than one version over one
storage: ``autoscaling/v1`` and ``autoscaling/v2`` HorizontalPodAutoscalers, core ``v1``
and ``events.k8s.io/v1`` Events. A webhook whose rules name only the other version is
sent the object converted to it, and its patch is applied there and converted back.
"""

from __future__ import annotations

from kapiserver import errors

NAMESPACES = ("", "v1", "namespaces")

#: Kinds upstream never sends to webhooks (``IsExemptAdmissionConfigurationResource``):
#: a broken webhook must not lock its own configuration.
EXEMPT_KINDS = frozenset({"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
                          "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
                          "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"})

_HPA = "horizontalpodautoscalers"
#: (group, version, resource) -> the equivalent resources, in upstream's order, with
#: their kinds (``EquivalentResourceRegistry``).
EQUIVALENTS = {
    ("autoscaling", "v1", _HPA): (("autoscaling", "v2", _HPA, "HorizontalPodAutoscaler"),),
    ("autoscaling", "v2", _HPA): (("autoscaling", "v1", _HPA, "HorizontalPodAutoscaler"),),
    ("", "v1", "events"): (("events.k8s.io", "v1", "events", "Event"),),
    ("events.k8s.io", "v1", "events"): (("", "v1", "events", "Event"),),
}


def is_exempt(attributes) -> bool:
    group, _, kind = attributes.gvk
    return group == "admissionregistration.k8s.io" and kind in EXEMPT_KINDS


def _exact_or_wildcard(items, requested: str) -> bool:
    return any(item == "*" or item == requested for item in items or ())


def rule_matches(rule: dict, attributes, gvr) -> bool:
    """``rules.Matcher.Matches`` of one rule for the request on resource ``gvr``."""
    group, version, resource = gvr
    scope = rule.get("scope") or "*"
    if scope == "Namespaced":
        if gvr == NAMESPACES or not attributes.namespace:
            return False
    elif scope == "Cluster":
        if not (gvr == NAMESPACES or not attributes.namespace):
            return False
    elif scope != "*":
        return False
    if not _exact_or_wildcard(rule.get("operations"), attributes.operation):
        return False
    if not _exact_or_wildcard(rule.get("apiGroups"), group):
        return False
    if not _exact_or_wildcard(rule.get("apiVersions"), version):
        return False
    subresource = attributes.subresource
    for entry in rule.get("resources") or ():
        res, _, sub = entry.partition("/")
        if (res == "*" or res == resource) and (sub == "*" or sub == subresource):
            return True
    return False


def invocation_for(webhook, attributes):
    """``(gvr, gvk)`` the webhook is called with, or None when its rules miss the
    request; a rule for an equivalent resource counts under ``matchPolicy: Equivalent``."""
    for rule in webhook.rules:
        if rule_matches(rule, attributes, attributes.gvr):
            return attributes.gvr, attributes.gvk
    if webhook.match_policy != "Equivalent":
        return None
    equivalents = EQUIVALENTS.get(attributes.gvr, ())
    for rule in webhook.rules:
        for group, version, resource, kind in equivalents:
            if rule_matches(rule, attributes, (group, version, resource)):
                return (group, version, resource), (group, version, kind)
    return None


def matches_namespace(webhook, attributes, namespaces) -> bool:
    """``MatchNamespaceSelector``; ``namespaces(name)`` reads a namespace (``NotFound``
    when missing: the request fails with that 404, as upstream's)."""
    if not attributes.namespace and attributes.gvr[2] != "namespaces":
        return True  # cluster-scoped objects other than namespaces are never exempted
    if webhook.selector_error:
        raise errors.InternalError.wrap(webhook.selector_error)
    if webhook.namespace_selector.empty:
        return True
    if attributes.gvr[2] == "namespaces" and attributes.gvr[0] == "" and \
            not attributes.subresource and attributes.operation in ("CREATE", "UPDATE"):
        # The namespace being written: its own new labels.
        labels = _labels(attributes.object)
    else:
        labels = _labels(namespaces(attributes.namespace))
    return webhook.namespace_selector.matches(labels)


def matches_object(webhook, attributes) -> bool:
    """``MatchObjectSelector``: the new or the old object's labels."""
    if webhook.selector_error:
        raise errors.InternalError.wrap(webhook.selector_error)
    selector = webhook.object_selector
    if selector.empty:
        return True
    return any(obj is not None and selector.matches(_labels(obj))
               for obj in (attributes.object, attributes.old_object))


def _labels(obj) -> dict:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    found = meta.get("labels") if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else {}


def convert(obj, from_gv: tuple[str, str], to_gv: tuple[str, str]):
    """``obj`` (not modified) in group version ``to_gv``; equal versions give ``obj``."""
    if obj is None or from_gv == to_gv:
        return obj
    if from_gv[0] == "autoscaling" and to_gv[0] == "autoscaling":
        from kapiserver_plugins.autoscaling import conversion

        converted = conversion.to_v2(obj) if to_gv[1] == "v2" else conversion.to_v1(obj)
        converted["apiVersion"] = f"autoscaling/{to_gv[1]}"
        converted.setdefault("kind", obj.get("kind", "HorizontalPodAutoscaler"))
        return converted
    from kapiserver_plugins.events import events

    if to_gv == ("events.k8s.io", "v1"):
        return events.from_v1(obj)
    return events.to_v1(obj)
