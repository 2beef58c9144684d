"""Compiling the CEL expressions of admission policies and webhook match conditions, as
``k8s.io/apiserver/pkg/admission/plugin/cel`` compiles them when they are written.

The environment is upstream's: ``object``, ``oldObject`` and ``params`` are ``dyn``;
``request`` is an ``AdmissionRequest`` object and ``namespaceObject`` a ``Namespace`` one,
so an unknown field of theirs is a compile error; ``authorizer`` and
``authorizer.requestResource`` carry the authorization library's checks; ``variables`` has
one member per variable composed so far; Kubernetes' CEL libraries (lists, strings, regex,
URLs, quantities, IPs, CIDRs, sets, format) are the apiextensions plugin's. An expression
must also give the type its field asks for (``must evaluate to bool``).

Only compiling is here: evaluating policies belongs to the ValidatingAdmissionPolicy
admission plugin (``admissionpolicy``), which plans what :func:`check_expression` checked.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

#: cel-go's names of the result types an expression may be asked for.
BOOL, STRING, NULL, ANY = "bool", "string", "null_type", "any"
_STRINGS = {"type": "array", "items": {"type": "string"}}
_GVK = {"type": "object", "properties": {"group": {"type": "string"},
                                         "version": {"type": "string"},
                                         "kind": {"type": "string"}}}
_GVR = {"type": "object", "properties": {"group": {"type": "string"},
                                         "version": {"type": "string"},
                                         "resource": {"type": "string"}}}
#: ``BuildRequestType``: the fields of ``request``.
REQUEST_SCHEMA = {"type": "object", "properties": {
    "kind": _GVK, "resource": _GVR, "subResource": {"type": "string"},
    "requestKind": _GVK, "requestResource": _GVR, "requestSubResource": {"type": "string"},
    "name": {"type": "string"}, "namespace": {"type": "string"},
    "operation": {"type": "string"},
    "userInfo": {"type": "object", "properties": {
        "username": {"type": "string"}, "uid": {"type": "string"}, "groups": _STRINGS,
        "extra": {"type": "object", "additionalProperties": _STRINGS}}},
    "dryRun": {"type": "boolean"},
    "options": {"x-kubernetes-int-or-string": True},
}}
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
#: ``BuildNamespaceType``: the fields of ``namespaceObject``.
NAMESPACE_SCHEMA = {"type": "object", "properties": {
    "metadata": {"type": "object", "properties": {
        "name": {"type": "string"}, "generateName": {"type": "string"},
        "namespace": {"type": "string"}, "labels": _STRING_MAP, "annotations": _STRING_MAP,
        "uid": {"type": "string"}, "creationTimestamp": {"type": "string",
                                                         "format": "date-time"},
        "deletionGracePeriodSeconds": {"type": "integer"},
        "deletionTimestamp": {"type": "string", "format": "date-time"},
        "generation": {"type": "integer"}, "resourceVersion": {"type": "string"},
        "finalizers": _STRINGS}},
    "spec": {"type": "object", "properties": {"finalizers": _STRINGS}},
    "status": {"type": "object", "properties": {
        "conditions": {"type": "array", "items": {"type": "object", "properties": {
            "type": {"type": "string"}, "status": {"type": "string"},
            "lastTransitionTime": {"type": "string", "format": "date-time"},
            "reason": {"type": "string"}, "message": {"type": "string"}}}},
        "phase": {"type": "string"}}},
}}
#: The authorization library's types (``apiserver/pkg/cel/library/authz.go``).
AUTHZ_PACKAGE = "kubernetes.authorization"
AUTHZ_TYPES = ("Authorizer", "PathCheck", "GroupCheck", "ResourceCheck", "Decision")


@dataclass(frozen=True)
class CompileError:
    """``apiservercel.Error``: ``kind`` is ``required``, ``invalid`` or ``internal``."""

    kind: str
    detail: str


def _authz_file():
    from google.protobuf import descriptor_pb2

    proto = descriptor_pb2.FileDescriptorProto(name="kapiserver_authorization.proto",
                                               package=AUTHZ_PACKAGE, syntax="proto3")
    for name in AUTHZ_TYPES:
        proto.message_type.add(name=name)
    return proto


def _authz_declarations(cel) -> list:
    """``authz.go``'s functions, for the checker."""
    T, O, D = cel.Type, cel.Overload, cel.FunctionDecl
    t = {name: T(f"{AUTHZ_PACKAGE}.{name}") for name in AUTHZ_TYPES}
    S = T.STRING

    def member(name, overload, result, *args):
        return D(name, [O(overload, result, list(args), is_member=True)])

    resource_check = t["ResourceCheck"]
    return [
        member("path", "authorizer_path", t["PathCheck"], t["Authorizer"], S),
        member("group", "authorizer_group", t["GroupCheck"], t["Authorizer"], S),
        member("serviceAccount", "authorizer_serviceaccount", t["Authorizer"], t["Authorizer"],
               S, S),
        member("resource", "groupcheck_resource", resource_check, t["GroupCheck"], S),
        member("subresource", "resourcecheck_subresource", resource_check, resource_check, S),
        member("namespace", "resourcecheck_namespace", resource_check, resource_check, S),
        member("name", "resourcecheck_name", resource_check, resource_check, S),
        member("fieldSelector", "resourcecheck_fieldselector", resource_check, resource_check,
               S),
        member("labelSelector", "resourcecheck_labelselector", resource_check, resource_check,
               S),
        D("check", [O("pathcheck_check", t["Decision"], [t["PathCheck"], S], is_member=True),
                    O("resourcecheck_check", t["Decision"], [resource_check, S],
                      is_member=True)]),
        member("errored", "decision_errored", T.BOOL, t["Decision"]),
        member("error", "decision_error", S, t["Decision"]),
        member("allowed", "decision_allowed", T.BOOL, t["Decision"]),
        member("reason", "decision_reason", S, t["Decision"]),
    ]


def _plain_fields(decl):
    """Name an object type's fields as their properties: the request's and the namespace's
    types are upstream's own, not CRD schemas, so ``namespace`` needs no escaping."""
    from kapiserver_plugins.apiextensions.cel import types

    if decl.kind == types.OBJECT:
        decl.fields = {prop: (prop, _plain_fields(sub)) for prop, sub in decl.fields.values()}
    elif decl.kind in (types.LIST, types.MAP):
        _plain_fields(decl.elem)
    return decl


def _conditional(overload: str, *types: str) -> str:
    def arg(name):
        param = "\n            is_type_param: true" if name == "A" else ""
        return f'          - type_name: "{name}"{param}\n'

    *args, result = types
    param = "\n          is_type_param: true" if result == "A" else ""
    return (f'      - id: "{overload}"\n        args:\n' + "".join(arg(a) for a in args)
            + f'        return:\n          type_name: "{result}"{param}\n')


#: The conditional with cel-go's typing: ``c ? 'text' : null`` is a nullable string (the
#: usual audit annotation value), which cel-cpp's own declaration refuses.
_CONDITIONAL_YAML = (
    'functions:\n  - name: "_?_:_"\n    overloads:\n'
    + _conditional("conditional", "bool", "A", "A", "A")
    + _conditional("conditional_string_null", "bool", "string", "null_type",
                   "google.protobuf.StringValue")
    + _conditional("conditional_null_string", "bool", "null_type", "string",
                   "google.protobuf.StringValue"))


@functools.lru_cache(maxsize=64)
def _environment(params: bool, authorizer: bool, variables: tuple | None):
    """The checker environment for one set of declared variables (cached: building one
    takes milliseconds, and policies share a handful)."""
    return typed_environment(params, authorizer, variables)


def typed_environment(params: bool, authorizer: bool, variables: tuple | None,
                      object_schema: dict | None = None, params_schema: dict | None = None):
    """A checker environment where ``object`` and ``oldObject`` (and ``params``) have the
    types of these structural schemas instead of ``dyn``, as upstream's type checking of
    policies declares them (not cached: one per kind checked)."""
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_optional

    from kapiserver_plugins.apiextensions.cel import (declarations, format_library, library,
                                                      types)

    pool = types.new_pool([*library.library_files(), _authz_file()])
    roots = []
    for name, schema in (("kapiserverAdmissionRequest", REQUEST_SCHEMA),
                         ("kapiserverNamespace", NAMESPACE_SCHEMA)):
        decl = _plain_fields(types.decl_type(schema))
        types.assign_names(decl, name)
        roots.append(decl)
    declared = {"object": cel.Type.DYN, "oldObject": cel.Type.DYN,
                "request": types.cel_type(roots[0]), "namespaceObject": types.cel_type(roots[1])}
    typed = {}
    for names, schema in ((("object", "oldObject"), object_schema),
                          (("params",), params_schema if params else None)):
        decl = types.decl_type(schema, True) if schema is not None else None
        if decl is not None:
            types.assign_names(decl, types.unique_type_name() + names[0])
            roots.append(decl)
            typed.update({name: decl for name in names})
    if variables is not None:
        schema = {"type": "object", "properties": {
            name: {"x-kubernetes-int-or-string": True} for name in variables}}
        decl = types.decl_type(schema)
        types.assign_names(decl, "kapiserverVariables")
        roots.append(decl)
        declared["variables"] = types.cel_type(decl)
    types.add_to_pool(pool, roots, "kapiserver_admission.proto")
    if params:
        declared["params"] = cel.Type.DYN
    declared.update({name: types.cel_type(decl) for name, decl in typed.items()})
    functions = declarations.checker_declarations()
    if authorizer:
        declared["authorizer"] = cel.Type(f"{AUTHZ_PACKAGE}.Authorizer")
        declared["authorizer.requestResource"] = cel.Type(f"{AUTHZ_PACKAGE}.ResourceCheck")
        functions = functions + _authz_declarations(cel)
    exclusions = "".join(f'    - name: "{op}"\n'
                         for op in (*declarations.EXCLUDED_STDLIB, "_?_:_"))
    config = ("stdlib:\n  exclude_functions:\n" + exclusions
              + format_library.checker_config_yaml()
              + _CONDITIONAL_YAML.replace("functions:\n", "", 1))
    return cel.NewEnv(pool, config=cel.NewEnvConfigFromYaml(config), variables=declared,
                      functions=functions, extensions=[ext_optional.ExtOptional()])


def _type_name(cel_type) -> str:
    from cel_expr_python import cel

    names = {str(cel.Type.BOOL): BOOL, str(cel.Type.STRING): STRING, str(cel.Type.NULL): NULL}
    return names.get(str(cel_type), str(cel_type))


def check_expression(source: str, result_types: tuple[str, ...], *, params: bool = False,
                     authorizer: bool = False, variables: tuple[str, ...] | None = None):
    """Check ``source`` in the environment of these declarations: ``(expression, None)``
    with cel-expr-python's checked ``Expression`` (its ``serialize()`` is the checked AST
    a runtime environment plans), or ``(None, CompileError)`` worded as upstream's
    ``CompileCELExpression``. ``variables`` are the names of the variables composed so far
    (None: the expression sees no ``variables``)."""
    from kapiserver_plugins.apiextensions.cel.compiler import compile_issues

    env = _environment(params, authorizer, variables)
    try:
        expr = env.compile(source)
    except RuntimeError as err:
        return None, CompileError("invalid", "compilation failed: " + compile_issues(err))
    if ANY in result_types or _type_name(expr.return_type()) in result_types:
        return expr, None
    if len(result_types) == 1:
        return None, CompileError("invalid", f"must evaluate to {result_types[0]}")
    return None, CompileError("invalid", "must evaluate to one of ["
                              + " ".join(result_types) + "]")


def compile_expression(source: str, result_types: tuple[str, ...], *, params: bool = False,
                       authorizer: bool = False,
                       variables: tuple[str, ...] | None = None) -> CompileError | None:
    """``CompileCELExpression``: None when ``source`` compiles to one of ``result_types``
    (``ANY`` takes whatever it gives), else the error as upstream words it."""
    return check_expression(source, result_types, params=params, authorizer=authorizer,
                            variables=variables)[1]
