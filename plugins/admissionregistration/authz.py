"""Who may point an admission policy at params: upstream's ``validatingadmissionpolicy`` and
``validatingadmissionpolicybinding`` ``authz.go``.

A policy naming a ``paramKind`` may only be written by someone who can ``get`` every object
of that kind; a binding naming a ``paramRef`` by someone who can ``get`` the object it refers
to (of the kind its policy names, or of anything when that cannot be told). Members of
``system:masters`` pass. A refusal is reported, once the object is otherwise valid, as a
``Forbidden`` cause at ``spec.paramKind`` or ``spec.paramRef`` of a 422.
"""

from __future__ import annotations

from kapiserver.authorization import Attributes, Decision

from .common import dict_of, str_of


def user_text(user) -> str:
    """A ``*user.DefaultInfo`` as ``%v`` prints it: ``&{alice  [devs] map[]}``."""
    extra = " ".join(f"{key}:[{' '.join(values)}]" for key, values in sorted(user.extra.items()))
    return f"&{{{user.name} {user.uid} [{' '.join(user.groups)}] map[{extra}]}}"


def parse_group_version(text: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``."""
    if not text or text == "/":
        return "", ""
    if text.count("/") > 1:
        return None
    if "/" not in text:
        return "", text
    group, version = text.split("/")
    return group, version


def resolve_resource(server, group: str, version: str, kind: str) -> str | None:
    """The resource serving ``kind`` in ``group/version`` here (built-in, custom or
    aggregated as discovery knows it), or None."""
    for served in server.discovery.groups:
        if served.name != group:
            continue
        for path, handler in (served.versions.get(version) or {}).items():
            spec = getattr(handler, "spec", None)
            if "/" not in path and spec is not None and spec.kind == kind:
                return path
    return None


class ParamAuthorization:
    """The check of one kind: ``__call__(server, user, obj, old)`` returns why the user
    may not write ``obj``, or ""."""

    def __init__(self, field: str):
        self.field = field

    def _allowed(self, server, user, group, version, resource, namespace, name) -> bool:
        attributes = Attributes(user=user, verb="get", resource_request=True,
                                namespace=namespace, api_group=group, api_version=version,
                                resource=resource, name=name)
        decision, _ = server.authorizer.authorize(attributes)
        return decision is Decision.ALLOW


class PolicyParamAuthorization(ParamAuthorization):
    """A policy's ``paramKind``: ``get`` on all objects of that kind."""

    def __init__(self):
        super().__init__("paramKind")

    def __call__(self, server, user, obj, old) -> str:
        kind = dict_of(obj.get("spec")).get("paramKind")
        if not isinstance(kind, dict):
            return ""
        if old is not None and dict_of(old.get("spec")).get("paramKind") == kind:
            return ""
        api_version, name = str_of(kind.get("apiVersion")), str_of(kind.get("kind"))
        group = version = resource = "*"
        parsed = parse_group_version(api_version)
        if parsed is not None:
            group, version = parsed
            resource = resolve_resource(server, group, version, name) or "*"
        if self._allowed(server, user, group, version, resource, "*", "*"):
            return ""
        return (f'user {user_text(user)} must have "get" permission on all objects of the '
                f"referenced paramKind (kind={name}, apiVersion={api_version})")


class BindingParamAuthorization(ParamAuthorization):
    """A binding's ``paramRef``: ``get`` on the object it refers to."""

    def __init__(self):
        super().__init__("paramRef")

    def __call__(self, server, user, obj, old) -> str:
        spec = dict_of(obj.get("spec"))
        ref = spec.get("paramRef")
        if not isinstance(ref, dict):
            return ""
        if old is not None:
            old_spec = dict_of(old.get("spec"))
            if old_spec.get("paramRef") == ref and \
                    old_spec.get("policyName") == spec.get("policyName"):
                return ""
        group = version = resource = "*"
        problem = ""
        policy_name = str_of(spec.get("policyName"))
        policies = server.registries[("admissionregistration.k8s.io",
                                      "validatingadmissionpolicies")]
        try:
            policy = policies.get("", policy_name)
        except Exception:  # noqa: BLE001 - any failure to read it is reported the same way
            problem = f"unable to get policy {policy_name} to determine minimum required " \
                      "permissions"
        else:
            kind = dict_of(policy.get("spec")).get("paramKind")
            if isinstance(kind, dict):
                shown = f"&{{{str_of(kind.get('apiVersion'))} {str_of(kind.get('kind'))}}}"
                parsed = parse_group_version(str_of(kind.get("apiVersion")))
                if parsed is None:
                    problem = f"unable to parse paramKind {shown} to determine minimum " \
                              "required permissions"
                else:
                    found = resolve_resource(server, *parsed, str_of(kind.get("kind")))
                    if found is None:
                        problem = f"unable to resolve paramKind {shown} to determine minimum " \
                                  "required permissions"
                    else:
                        (group, version), resource = parsed, found
        if self._allowed(server, user, group, version, resource,
                         str_of(ref.get("namespace")), str_of(ref.get("name"))):
            return ""
        if problem:
            return f'{problem} and user {user_text(user)} does not have "get" permission ' \
                   "for all groups, versions and kinds"
        return f'user {user_text(user)} does not have "get" permission on the object ' \
               "referenced by paramRef"
