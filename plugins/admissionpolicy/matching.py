"""Which requests a policy's ``matchConstraints`` or a binding's ``matchResources`` select
(upstream's ``policy/matching``): the namespace and object selectors, ``resourceRules``
(operations, groups, versions, resources with subresources, ``resourceNames``) less
``excludeResourceRules``, and with ``matchPolicy: Equivalent`` a rule naming another
version of the resource (the policy then sees the objects in that version).

Rules are matched by the webhooks' ``rules.Matcher`` (``admissionwebhooks.predicates``),
which the two plugins share upstream too.
"""

from __future__ import annotations

from kapiserver import errors
from kapiserver.apimachinery import labels
from kapiserver_plugins.admissionwebhooks import predicates


class Criteria:
    """One ``MatchResources``, parsed once."""

    __slots__ = ("namespace_selector", "object_selector", "selector_error", "rules",
                 "excluded", "equivalent")

    def __init__(self, match: dict):
        self.selector_error = ""
        self.namespace_selector = self._selector(match.get("namespaceSelector"))
        self.object_selector = self._selector(match.get("objectSelector"))
        self.rules = [r for r in match.get("resourceRules") or () if isinstance(r, dict)]
        self.excluded = [r for r in match.get("excludeResourceRules") or ()
                         if isinstance(r, dict)]
        # An unset matchPolicy does no fuzzy matching (the API defaults it to Equivalent).
        self.equivalent = match.get("matchPolicy") == "Equivalent"

    def _selector(self, value):
        try:
            return labels.selector_from_label_selector(value or {})
        except labels.SelectorError as err:
            self.selector_error = str(err)
            return labels.nothing()

    def matches(self, attributes, namespaces):
        """``Matcher.Matches``: ``(gvr, gvk)`` the request matched as (its own, or an
        equivalent resource's), or None. Raises the ``StatusError`` of a selector that
        fails (a missing namespace is its 404), but only for a request the rules select."""
        namespace_error = object_error = None
        try:
            if not predicates.matches_namespace(self, attributes, namespaces):
                return None
        except errors.StatusError as err:
            namespace_error = err
        try:
            if not predicates.matches_object(self, attributes):
                return None
        except errors.StatusError as err:
            object_error = err
        if _matches_rules(self.excluded, self.equivalent, attributes) is not None:
            return None
        if not self.rules:
            matched = (attributes.gvr, attributes.gvk)
        else:
            matched = _matches_rules(self.rules, self.equivalent, attributes)
        if matched is None:
            return None
        if namespace_error is not None:
            raise namespace_error
        if object_error is not None:
            raise object_error
        return matched


def _named(rule: dict, attributes) -> bool:
    names = rule.get("resourceNames") or ()
    # An empty list names every object; a create relying on generateName has no name.
    return not names or attributes.name in names


def _matches_rules(rules: list, equivalent: bool, attributes):
    for rule in rules:
        if predicates.rule_matches(rule, attributes, attributes.gvr) and \
                _named(rule, attributes):
            return attributes.gvr, attributes.gvk
    if not equivalent:
        return None
    equivalents = predicates.EQUIVALENTS.get(attributes.gvr, ())
    for rule in rules:
        for group, version, resource, kind in equivalents:
            if predicates.rule_matches(rule, attributes, (group, version, resource)) and \
                    _named(rule, attributes):
                return (group, version, resource), (group, version, kind)
    return None
