"""Which FlowSchema a request matches (``util/flowcontrol/rule.go``), its flow
distinguisher and the hash that shuffle-shards its flow (``apf_controller.go``)."""

from __future__ import annotations

import hashlib

SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _contains(value: str, items: list, wildcard: str) -> bool:
    """``containsString``: ``value`` is listed, or the list is the wildcard alone."""
    if len(items) == 1 and items[0] == wildcard:
        return True
    return value in items


def _subject_matches(user, subject: dict) -> bool:
    kind = subject.get("kind")
    if kind == "User":
        member = subject.get("user")
        return isinstance(member, dict) and member.get("name") in ("*", user.name)
    if kind == "Group":
        member = subject.get("group")
        if not isinstance(member, dict):
            return False
        seek = member.get("name")
        return seek == "*" or seek in user.groups
    if kind == "ServiceAccount":
        member = subject.get("serviceAccount")
        if not isinstance(member, dict):
            return False
        namespace, name = member.get("namespace") or "", member.get("name") or ""
        if not user.name.startswith(SERVICE_ACCOUNT_PREFIX):
            return False
        rest = user.name[len(SERVICE_ACCOUNT_PREFIX):]
        if name == "*":
            # serviceAccountMatchesNamespace: the namespace part, then a colon.
            return rest.startswith(namespace) and rest[len(namespace):].startswith(":")
        return rest == f"{namespace}:{name}"
    return False


def _resource_rule_matches(info, rule: dict) -> bool:
    if not _contains(info.verb, _list(rule.get("verbs")), "*"):
        return False
    resource = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
    if not _contains(resource, _list(rule.get("resources")), "*"):
        return False
    if not _contains(info.api_group, _list(rule.get("apiGroups")), "*"):
        return False
    if not info.namespace:
        return rule.get("clusterScope") is True
    return _contains(info.namespace, _list(rule.get("namespaces")), "*")


def _url_matches(urls: list, path: str) -> bool:
    """``matchPolicyRuleNonResourceURL``: ``*``, the path itself, or a path below a rule's
    (``/healthz`` and ``/healthz/*`` both match ``/healthz/etcd``)."""
    for rule_path in urls:
        if not isinstance(rule_path, str):
            continue
        if rule_path == "*" or rule_path == path:
            return True
        prefix = rule_path[:-1] if rule_path.endswith("*") else rule_path
        if not prefix.endswith("/"):
            prefix += "/"
        if path.startswith(prefix):
            return True
    return False


def _policy_rule_matches(user, info, rule: dict) -> bool:
    if not any(_subject_matches(user, _dict(s)) for s in _list(rule.get("subjects"))):
        return False
    if info.is_resource_request:
        return any(_resource_rule_matches(info, _dict(r))
                   for r in _list(rule.get("resourceRules")))
    return any(_contains(info.verb, _list(_dict(r).get("verbs")), "*")
               and _url_matches(_list(_dict(r).get("nonResourceURLs")), info.path)
               for r in _list(rule.get("nonResourceRules")))


def matches(spec: dict, user, info) -> bool:
    """Whether a FlowSchema's ``spec`` matches the request of ``user`` (a ``UserInfo``)
    described by ``info`` (a ``RequestInfo``): any of its rules does."""
    return any(_policy_rule_matches(user, info, _dict(rule)) for rule in _list(spec.get("rules")))


def flow_distinguisher(spec: dict, user, info) -> str:
    """``computeFlowDistinguisher``: the user's name (``ByUser``), the request's namespace
    (``ByNamespace``), or nothing."""
    method = _dict(spec.get("distinguisherMethod")).get("type")
    if method == "ByUser":
        return user.name
    if method == "ByNamespace":
        return info.namespace
    return ""


def hash_flow(schema_name: str, distinguisher: str) -> int:
    """``hashFlowID``: the first 8 bytes of SHA-256(schema NUL distinguisher), little-endian."""
    digest = hashlib.sha256(f"{schema_name}\0{distinguisher}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def matching_order(obj: dict) -> tuple:
    """``FlowSchemaSequence``: by matchingPrecedence, then by name."""
    precedence = _dict(obj.get("spec")).get("matchingPrecedence")
    return (precedence if isinstance(precedence, int) else 0,
            str(_dict(obj.get("metadata")).get("name") or ""))
