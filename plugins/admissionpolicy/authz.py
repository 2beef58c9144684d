"""The CEL authorization library at runtime (``apiserver/pkg/cel/library/authz.go``):
``authorizer.group('apps').resource('deployments').namespace('ns').check('create')``, with
the server's own authorizer deciding.

The checker knows the library's types as empty messages (``admissionregistration.cel``);
at runtime each is a message of the same name that carries what the chain of calls built
so far — the user (as JSON), then the path or the group, resource, subresource, namespace,
name and selectors — so that ``check`` can put an authorization request together.
``authorizer`` is bound to the requesting user's ``Authorizer``; ``authorizer.requestResource``
to the ``ResourceCheck`` of the request's own resource.

Departure: field and label selectors are accepted but not passed on (kapiserver's
authorizers see no selectors).
"""

from __future__ import annotations

import json

from kapiserver.apimachinery.validation import name_is_dns_label, name_is_dns_subdomain
from kapiserver.authentication import UserInfo
from kapiserver.authorization import Attributes, Decision
from kapiserver_plugins.admissionregistration.cel import AUTHZ_PACKAGE
from kapiserver_plugins.apiextensions.cel.library import LibraryError

_FIELDS = {
    "Authorizer": ("user",),
    "PathCheck": ("user", "path"),
    "GroupCheck": ("user", "group"),
    "ResourceCheck": ("user", "group", "resource", "subresource", "namespace", "name",
                      "field_selector", "label_selector"),
    "Decision": ("decision", "reason", "error"),
}


def descriptor_file():
    """The runtime messages (all string fields)."""
    from google.protobuf import descriptor_pb2

    F = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="kapiserver_authorization_runtime.proto",
                                               package=AUTHZ_PACKAGE, syntax="proto3")
    for name, fields in _FIELDS.items():
        message = proto.message_type.add(name=name)
        for number, field in enumerate(fields, 1):
            message.field.add(name=field, number=number, label=F.LABEL_OPTIONAL,
                              type=F.TYPE_STRING)
    return proto


def encode_user(user: UserInfo | None) -> str:
    if user is None:
        return "{}"
    return json.dumps({"name": user.name, "uid": user.uid, "groups": list(user.groups),
                       "extra": {k: list(v) for k, v in (user.extra or {}).items()}})


def _decode_user(text: str) -> UserInfo:
    data = json.loads(text or "{}")
    return UserInfo(data.get("name", ""), data.get("uid", ""), tuple(data.get("groups", ())),
                    {k: tuple(v) for k, v in (data.get("extra") or {}).items()})


class Library:
    """The implementations, bound to one server's authorizer (and, by :meth:`bind`, to the
    runtime environment's descriptor pool)."""

    def __init__(self, authorizer):
        self.authorizer = authorizer
        self.classes: dict = {}

    def bind(self, pool) -> None:
        """Make values with the message classes of ``pool`` (the runtime environment's,
        which holds :func:`descriptor_file`)."""
        from google.protobuf import message_factory

        self.classes = {name: message_factory.GetMessageClass(
            pool.FindMessageTypeByName(f"{AUTHZ_PACKAGE}.{name}")) for name in _FIELDS}

    # -- values bound in the activation --

    def authorizer_value(self, user: UserInfo | None):
        return self.classes["Authorizer"](user=encode_user(user))

    def request_resource(self, user: UserInfo | None, attributes):
        """``NewResourceAuthorizerVal``: the request's group, resource, subresource,
        namespace and name."""
        group, _, resource = attributes.gvr
        return self.classes["ResourceCheck"](
            user=encode_user(user), group=group, resource=resource,
            subresource=attributes.subresource or "", namespace=attributes.namespace or "",
            name=attributes.name or "")

    # -- the library's functions --

    def path(self, authz, path):
        if not path.strip():
            raise LibraryError("path must not be empty")
        return self.classes["PathCheck"](user=authz.user, path=path)

    def group(self, authz, group):
        return self.classes["GroupCheck"](user=authz.user, group=group)

    def service_account(self, authz, namespace, name):
        if name_is_dns_subdomain(name):
            raise LibraryError("Invalid service account name")
        if name_is_dns_label(namespace):
            raise LibraryError("Invalid service account namespace")
        user = UserInfo(f"system:serviceaccount:{namespace}:{name}", "",
                        ("system:serviceaccounts", f"system:serviceaccounts:{namespace}"))
        return self.classes["Authorizer"](user=encode_user(user))

    def resource(self, group_check, resource):
        if not resource.strip():
            raise LibraryError("resource must not be empty")
        return self.classes["ResourceCheck"](user=group_check.user, group=group_check.group,
                                             resource=resource)

    def _with(self, check, **changes):
        copy = self.classes["ResourceCheck"]()
        copy.CopyFrom(check)
        for key, value in changes.items():
            setattr(copy, key, value)
        return copy

    def subresource(self, check, value):
        return self._with(check, subresource=value)

    def namespace(self, check, value):
        return self._with(check, namespace=value)

    def name(self, check, value):
        return self._with(check, name=value)

    def field_selector(self, check, value):
        return self._with(check, field_selector=value)

    def label_selector(self, check, value):
        return self._with(check, label_selector=value)

    def path_check(self, check, verb):
        return self._decide(Attributes(user=_decode_user(check.user), verb=verb,
                                       resource_request=False, path=check.path))

    def resource_check(self, check, verb):
        return self._decide(Attributes(
            user=_decode_user(check.user), verb=verb, resource_request=True,
            namespace=check.namespace, api_group=check.group, api_version="*",
            resource=check.resource, subresource=check.subresource, name=check.name))

    def check(self, target, verb):
        if "path" in target.DESCRIPTOR.fields_by_name:
            return self.path_check(target, verb)
        return self.resource_check(target, verb)

    def _decide(self, attributes: Attributes):
        try:
            decision, reason = self.authorizer.authorize(attributes)
            error = ""
        except Exception as err:  # an authorizer's failure is the decision's error
            decision, reason, error = Decision.DENY, "", str(err) or type(err).__name__
        return self.classes["Decision"](decision=decision.name, reason=reason or "",
                                        error=error)

    @staticmethod
    def errored(decision):
        return bool(decision.error)

    @staticmethod
    def error(decision):
        return decision.error

    @staticmethod
    def allowed(decision):
        return decision.decision == Decision.ALLOW.name

    @staticmethod
    def reason(decision):
        return decision.reason

    def declarations(self, wrap) -> list:
        """The runtime ``FunctionDecl`` s; ``wrap`` turns library errors into CEL errors."""
        from cel_expr_python import cel

        T, O, D = cel.Type, cel.Overload, cel.FunctionDecl
        t = {name: T(f"{AUTHZ_PACKAGE}.{name}") for name in _FIELDS}
        S = T.STRING
        rc = t["ResourceCheck"]

        def member(name, oid, result, params, impl):
            return D(name, [O(oid, result, params, is_member=True, impl=wrap(impl))])

        return [
            member("path", "authorizer_path", t["PathCheck"], [t["Authorizer"], S], self.path),
            member("group", "authorizer_group", t["GroupCheck"], [t["Authorizer"], S],
                   self.group),
            member("serviceAccount", "authorizer_serviceaccount", t["Authorizer"],
                   [t["Authorizer"], S, S], self.service_account),
            member("resource", "groupcheck_resource", rc, [t["GroupCheck"], S], self.resource),
            member("subresource", "resourcecheck_subresource", rc, [rc, S], self.subresource),
            member("namespace", "resourcecheck_namespace", rc, [rc, S], self.namespace),
            member("name", "resourcecheck_name", rc, [rc, S], self.name),
            member("fieldSelector", "resourcecheck_fieldselector", rc, [rc, S],
                   self.field_selector),
            member("labelSelector", "resourcecheck_labelselector", rc, [rc, S],
                   self.label_selector),
            # cel-cpp's runtime dispatches on kinds: one overload serves both checks.
            member("check", "resourcecheck_check", t["Decision"], [rc, S], self.check),
            member("errored", "decision_errored", T.BOOL, [t["Decision"]], self.errored),
            member("error", "decision_error", S, [t["Decision"]], self.error),
            member("allowed", "decision_allowed", T.BOOL, [t["Decision"]], self.allowed),
            member("reason", "decision_reason", S, [t["Decision"]], self.reason),
        ]
