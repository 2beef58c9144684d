"""PolicyRule semantics: request matching, coverage (escalation) and upstream's wording.

Mirrors ``plugin/pkg/auth/authorizer/rbac`` (``RuleAllows`` and the ``rbacv1helpers``
matchers) and ``pkg/registry/rbac/validation`` (``Covers``, ``BreakdownRule``,
``CompactRules``, ``CompactString``, ``ConfirmNoEscalation``'s message). Rules are the
JSON dicts of ``rbac.authorization.k8s.io/v1`` ``PolicyRule``; ``CompiledRule`` holds one
as frozensets so a decision costs a few set lookups.
"""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import go_quote

ALL = "*"
#: What the aggregationRule check requires: upstream's ``fullAuthority``.
FULL_AUTHORITY = ({"verbs": [ALL], "apiGroups": [ALL], "resources": [ALL]},
                  {"verbs": [ALL], "nonResourceURLs": [ALL]})


def _strings(rule: dict, key: str) -> list[str]:
    values = rule.get(key) or []
    return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []


class CompiledRule:
    """One ``PolicyRule`` ready for matching (``RuleAllows``)."""

    __slots__ = ("rule", "verbs", "groups", "resources", "names", "urls", "url_prefixes",
                 "any_verb", "any_group", "any_resource", "any_url", "sub_wildcards")

    def __init__(self, rule: dict):
        self.rule = rule
        self.verbs = frozenset(_strings(rule, "verbs"))
        self.groups = frozenset(_strings(rule, "apiGroups"))
        self.resources = frozenset(_strings(rule, "resources"))
        self.names = frozenset(_strings(rule, "resourceNames"))
        urls = _strings(rule, "nonResourceURLs")
        self.urls = frozenset(urls)
        self.url_prefixes = tuple(u.rstrip("*") for u in urls if u.endswith("*"))
        self.any_verb = ALL in self.verbs
        self.any_group = ALL in self.groups
        self.any_resource = ALL in self.resources
        self.any_url = ALL in self.urls
        #: the subresources of ``*/sub`` entries
        self.sub_wildcards = frozenset(r[2:] for r in self.resources if r.startswith("*/"))

    def allows(self, attributes) -> bool:
        """``RuleAllows``: verb, then group, resource and name, or the non-resource URL."""
        if not (self.any_verb or attributes.verb in self.verbs):
            return False
        if attributes.resource_request:
            if not (self.any_group or attributes.api_group in self.groups):
                return False
            sub = attributes.subresource
            combined = f"{attributes.resource}/{sub}" if sub else attributes.resource
            if not (self.any_resource or combined in self.resources
                    or (sub and sub in self.sub_wildcards)):
                return False
            # create/list/watch/deletecollection carry no name: named rules never match.
            return not self.names or attributes.name in self.names
        path = attributes.path
        return (self.any_url or path in self.urls
                or any(path.startswith(prefix) for prefix in self.url_prefixes))


def compile_rules(rules) -> tuple[CompiledRule, ...]:
    return tuple(CompiledRule(r) for r in rules or () if isinstance(r, dict))


# -- coverage (policy_comparator.go) -------------------------------------------------------

def breakdown_rule(rule: dict) -> list[dict]:
    """``BreakdownRule``: one rule per group × resource × verb (× name), then URL × verb."""
    subrules = []
    verbs, names = _strings(rule, "verbs"), _strings(rule, "resourceNames")
    for group in _strings(rule, "apiGroups"):
        for resource in _strings(rule, "resources"):
            for verb in verbs:
                base = {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
                if names:
                    subrules += [{**base, "resourceNames": [n]} for n in names]
                else:
                    subrules.append(base)
    for url in _strings(rule, "nonResourceURLs"):
        subrules += [{"nonResourceURLs": [url], "verbs": [verb]} for verb in verbs]
    return subrules


def _resource_covers_all(owner: list[str], wanted: list[str]) -> bool:
    if ALL in owner or set(wanted) <= set(owner):
        return True
    for path in wanted:
        if path in owner:
            continue
        if "/" not in path:
            return False
        if "*/" + path.split("/", 1)[1] not in owner:
            return False
    return True


def _url_covers(owner: str, path: str) -> bool:
    return owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))


def rule_covers(owner: dict, sub: dict) -> bool:
    """``ruleCovers``: does ``owner`` grant everything the broken-down ``sub`` grants?"""
    o_verbs, s_verbs = _strings(owner, "verbs"), _strings(sub, "verbs")
    o_groups, s_groups = _strings(owner, "apiGroups"), _strings(sub, "apiGroups")
    o_names, s_names = _strings(owner, "resourceNames"), _strings(sub, "resourceNames")
    o_urls = _strings(owner, "nonResourceURLs")
    verbs = ALL in o_verbs or set(s_verbs) <= set(o_verbs)
    groups = ALL in o_groups or set(s_groups) <= set(o_groups)
    resources = _resource_covers_all(_strings(owner, "resources"), _strings(sub, "resources"))
    urls = all(any(_url_covers(o, p) for o in o_urls) for p in _strings(sub, "nonResourceURLs"))
    names = not o_names or (bool(s_names) and set(s_names) <= set(o_names))
    return verbs and groups and resources and names and urls


def covers(owner_rules: list[dict], servant_rules: list[dict]) -> tuple[bool, list[dict]]:
    """``Covers``: True when ``owner_rules`` grant all of ``servant_rules``; the uncovered."""
    uncovered = [sub for rule in servant_rules for sub in breakdown_rule(rule)
                 if not any(rule_covers(owner, sub) for owner in owner_rules)]
    return not uncovered, uncovered


def compact_rules(rules: list[dict]) -> list[dict]:
    """``CompactRules``: merge the verbs of simple rules (one group, one resource, at most
    one name, nothing else) naming the same thing."""
    compacted, simple = [], {}
    for rule in rules:
        groups, resources = _strings(rule, "apiGroups"), _strings(rule, "resources")
        names = _strings(rule, "resourceNames")
        is_simple = (len(names) <= 1 and not rule.get("nonResourceURLs") and len(groups) == 1
                     and len(resources) == 1)
        if not is_simple:
            compacted.append(rule)
            continue
        key = (groups[0], resources[0], tuple(names))
        if key in simple:
            simple[key]["verbs"] = simple[key]["verbs"] + _strings(rule, "verbs")
        else:
            simple[key] = {**rule, "verbs": list(_strings(rule, "verbs"))}
    return compacted + list(simple.values())


def _go_q_slice(values: list[str]) -> str:
    return "[" + " ".join(go_quote(v) for v in values) + "]"


def compact_string(rule: dict) -> str:
    """``CompactString``: ``{APIGroups:["" "apps"], Resources:["pods"], Verbs:["get"]}``."""
    parts = []
    for key, label in (("apiGroups", "APIGroups"), ("resources", "Resources"),
                       ("nonResourceURLs", "NonResourceURLs"),
                       ("resourceNames", "ResourceNames"), ("verbs", "Verbs")):
        values = _strings(rule, key)
        if values:
            parts.append(f"{label}:{_go_q_slice(values)}")
    return "{" + ", ".join(parts) + "}"


def escalation_message(user, missing: list[dict], resolution_errors: list[str]) -> str:
    """``ConfirmNoEscalation``'s refusal, missing rules compacted, sorted, one a line."""
    lines = sorted({compact_string(r) for r in compact_rules(missing)})
    message = (f"user {go_quote(user.name)} (groups={_go_q_slice(list(user.groups))}) is "
               "attempting to grant RBAC permissions not currently held:\n" + "\n".join(lines))
    if resolution_errors:
        # %v of a []error holding RulesFor's one aggregate error
        message += f"; resolution errors: [{aggregate_errors(resolution_errors)}]"
    return message


def aggregate_errors(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message, or ``[a, b]`` deduplicated."""
    unique = list(dict.fromkeys(messages))
    if len(unique) <= 1:
        return unique[0] if unique else ""
    return "[" + ", ".join(unique) + "]"
