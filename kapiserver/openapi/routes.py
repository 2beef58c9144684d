"""The routes of an API server as its OpenAPI documents describe them.

Mirrors what upstream's ``endpoints/installer.go`` registers with go-restful for each
resource (actions, paths, parameters, responses, media types) and how
``endpoints/openapi.GetOperationIDAndTags`` names the operations; the v2 and v3 renderers
turn these neutral ``Operation`` records into either document.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import schemas

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
STATUS = META + "Status"
DELETE_OPTIONS = META + "DeleteOptions"
PATCH = META + "Patch"
WATCH_EVENT = META + "WatchEvent"

#: What an object-returning route produces, in upstream's order (v2 ``produces``).
OBJECT_MEDIA = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")
#: What list and watch routes produce.
STREAM_MEDIA = OBJECT_MEDIA + ("application/json;stream=watch",
                               "application/vnd.kubernetes.protobuf;stream=watch")
PATCH_MEDIA = ("application/json-patch+json", "application/merge-patch+json",
               "application/strategic-merge-patch+json", "application/apply-patch+yaml")
ANY_MEDIA = ("*/*",)
JSON_MEDIA = ("application/json",)
#: What a connect route and other non-object answers are described as (go-restful's
#: ``Writes("string")``).
STRING = {"type": "string"}
#: ``rest.StorageMetadata.ProducesObject``: what a handler's ``produces_object`` names.
PRODUCED_OBJECTS = {"string": STRING}
#: What upstream's CRD OpenAPI builder (apiextensions ``controller/openapi/builder``) gives a
#: custom resource's routes: JSON and YAML only, and no strategic merge patch, which is how
#: kubectl's apply tells a custom resource from a built-in.
CR_MEDIA = ("application/json", "application/yaml")
CR_PATCH_MEDIA = ("application/json-patch+json", "application/merge-patch+json",
                  "application/apply-patch+yaml")
#: the ``info`` of a v3 document of custom resources
CRD_INFO = {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"}

LIST_OPTIONS = ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit",
                "resourceVersion", "resourceVersionMatch", "sendInitialEvents",
                "timeoutSeconds", "watch")
DELETE_PARAMS = ("dryRun", "gracePeriodSeconds",
                 "ignoreStoreReadErrorWithClusterBreakingPotential", "orphanDependents",
                 "propagationPolicy")
#: deletecollection takes the delete options and the list options that are not watch's.
DELETECOLLECTION_PARAMS = DELETE_PARAMS + tuple(
    p for p in LIST_OPTIONS if p not in ("allowWatchBookmarks", "watch"))
GET_PARAMS = ("resourceVersion",)
WRITE_PARAMS = ("dryRun", "fieldManager", "fieldValidation")
PATCH_PARAMS = ("dryRun", "fieldManager.patch", "fieldValidation", "force")

OK, CREATED, ACCEPTED = (200, "OK"), (201, "Created"), (202, "Accepted")


@dataclass(frozen=True)
class Operation:
    """One route: an HTTP method on a path, as upstream's go-restful route describes it.

    ``parameters`` are v3 parameter objects (path and query; the body is ``body``);
    ``responses`` are ``(code, description, model)``, the model a definition name or an
    inline schema (``STRING``); ``produces`` and ``consumes`` are media types in upstream's
    order (no ``consumes``: the route declares none, as upstream's non-resource routes).
    """

    method: str
    operation_id: str
    description: str
    tag: str
    parameters: tuple
    responses: tuple
    produces: tuple
    consumes: tuple
    body: str = ""
    body_required: bool = False
    action: str = ""
    gvk: tuple = ()  # (group, version, kind)


def valid_operation_id(text: str, capitalize_first: bool) -> str:
    """``openapi.ToValidOperationID``: letters, ``_`` and non-leading digits survive; a
    dropped character capitalises the next kept one."""
    out = []
    capitalize = capitalize_first
    for i, char in enumerate(text):
        if char.isalpha() or char == "_" or (i and char.isdigit()):
            out.append(char.upper() if capitalize else char)
            capitalize = False
        else:
            capitalize = True
    return "".join(out)


def _trimmed(group: str) -> str:
    return (group or "core").removesuffix(".k8s.io")


def group_version_prefix(group: str, version: str) -> tuple[str, str]:
    """``(operation id infix, tag)`` of a group version: ``("CoreV1", "core_v1")``."""
    trimmed = _trimmed(group)
    return (valid_operation_id(trimmed, True) + valid_operation_id(version, True),
            valid_operation_id(trimmed, False) + "_" + valid_operation_id(version, False))


def document_key(group: str, version: str = "") -> str:
    """The v3 document a group version's (or group's) paths belong to: ``api/v1``."""
    if not group:
        return f"api/{version}" if version else "api"
    return f"apis/{group}/{version}" if version else f"apis/{group}"


def article(noun: str) -> str:
    """``getArticleForNoun``: plurals get none, then ``a`` or ``an``."""
    if noun.endswith("s") and not noun.endswith("ss"):
        return " "
    return " an " if noun[:1].lower() in "aeiou" else " a "


class RouteTable:
    """The operations of every path, grouped by the v3 document that serves them.

    ``parameters`` is the shared parameter table (``schemas.builtin()["parameters"]``);
    ``model(spec)`` and ``list_model(spec)`` give the definition names of a spec's kind and
    list kind; ``options_parameters`` maps the definition name of an options kind
    (``io.k8s.api.core.v1.PodExecOptions``) to the query parameters upstream derives from
    its fields (``AddObjectParams``).
    """

    def __init__(self, parameters: dict, model, list_model,
                 options_parameters: dict | None = None):
        self._parameters = parameters
        self._model = model
        self._list_model = list_model
        self._options_parameters = options_parameters or {}
        #: document key -> path -> [Operation]
        self.documents: dict[str, dict[str, list[Operation]]] = {}
        #: the keys of the documents of custom resources (``add_custom_resource_version``)
        self.custom_resource_documents: set[str] = set()

    def add(self, document: str, path: str, operation: Operation) -> None:
        self.documents.setdefault(document, {}).setdefault(path, []).append(operation)

    def _params(self, names) -> tuple:
        return tuple(self._parameters[name] for name in names)

    # -- discovery and version -----------------------------------------------------------

    def add_root(self, has_core: bool, has_named: bool) -> None:
        """``/version/``, and ``/api/`` and ``/apis/`` when groups of their kind exist."""
        self.add("version", "/version/", Operation(
            "get", "getCodeVersion", "get the code version", "version", (),
            ((*OK, "io.k8s.apimachinery.pkg.version.Info"),), JSON_MEDIA, JSON_MEDIA))
        if has_core:
            self.add("api", "/api/", Operation(
                "get", "getCoreAPIVersions", "get available API versions", "core", (),
                ((*OK, META + "APIVersions"),), OBJECT_MEDIA, OBJECT_MEDIA))
        if has_named:
            self.add("apis", "/apis/", Operation(
                "get", "getAPIVersions", "get available API versions", "apis", (),
                ((*OK, META + "APIGroupList"),), OBJECT_MEDIA, OBJECT_MEDIA))

    def add_issuer_discovery(self) -> None:
        """Service-account issuer discovery (``routes.OpenIDMetadataServer``): the OpenID
        configuration and the key set, each its own document."""
        self.add(".well-known/openid-configuration", "/.well-known/openid-configuration/",
                 Operation("get", "getServiceAccountIssuerOpenIDConfiguration",
                           "get service account issuer OpenID configuration, also known as "
                           "the 'OIDC discovery doc'", "WellKnown", (), ((*OK, STRING),),
                           JSON_MEDIA, ()))
        self.add("openid/v1/jwks", "/openid/v1/jwks/", Operation(
            "get", "getServiceAccountIssuerOpenIDKeyset",
            "get service account issuer OpenID JSON Web Key Set (contains public token "
            "verification keys)", "openid", (), ((*OK, STRING),),
            ("application/jwk-set+json",), ()))

    def add_group(self, group: str) -> None:
        """``/apis/<group>/``: the group's ``APIGroup`` document."""
        trimmed = _trimmed(group)
        self.add(document_key(group), f"/apis/{group}/", Operation(
            "get", f"get{valid_operation_id(trimmed, True)}APIGroup",
            "get information of a group", valid_operation_id(trimmed, False), (),
            ((*OK, META + "APIGroup"),), OBJECT_MEDIA, OBJECT_MEDIA))

    def add_group_version(self, group: str, version: str, resources: dict) -> None:
        """``/<prefix>/`` (the ``APIResourceList``) and every resource of the version.

        ``resources`` maps ``"configmaps"`` or ``"namespaces/status"`` to handlers with a
        ``spec`` (``ResourceSpec``) and optionally ``verbs``, as discovery reads them. What
        upstream's installer learns from a storage's interfaces, a handler may say with
        these attributes:

        * ``connect_methods``: the HTTP methods of a connect subresource
          (``rest.Connecter.ConnectMethods``: ``pods/exec``, ``nodes/proxy``); its
          ``spec.kind`` is its options kind, whose fields are its query parameters;
          ``connect_subpath`` (true for the proxies) adds the ``/{path}`` routes.
        * ``get_options_kind``: the options kind of a GET that takes options
          (``rest.GetterWithOptions``: ``pods/log`` reads ``PodLogOptions``).
        * ``produces_mime_types`` and ``produces_object`` (``rest.StorageMetadata``): media
          types produced before the usual ones, and what the answer is instead of the kind
          (``"string"``).
        * ``delete_returns_object`` (``rest.MayReturnFullObjectDeleter``), on the handler
          or its store's strategy; without it, the strategy's ``return_deleted_object``.
        """
        infix, tag = group_version_prefix(group, version)
        document = document_key(group, version)
        prefix = f"/{document}"
        self.add(document, prefix + "/", Operation(
            "get", f"get{infix}APIResources", "get available resources", tag, (),
            ((*OK, META + "APIResourceList"),), OBJECT_MEDIA, OBJECT_MEDIA))
        for path in sorted(resources):
            handler = resources[path]
            spec = getattr(handler, "spec", None)
            if spec is None:
                continue
            verbs = set(getattr(handler, "verbs", None) or spec.verbs)
            resource, _, subresource = path.partition("/")
            # A subresource's path and names are its parent's (serviceaccounts/token is
            # "createCoreV1NamespacedServiceAccountToken"), its bodies its own kind's.
            parent = getattr(resources.get(resource), "spec", None) or spec
            if getattr(handler, "connect_methods", None):
                self._add_connect(document, prefix, infix, tag, parent, spec, resource,
                                  subresource, handler)
                continue
            self._add_resource(document, prefix, infix, tag, parent, spec, resource,
                               subresource, verbs, handler)

    def _options(self, spec, kind: str) -> tuple:
        """The query parameters of the options kind ``kind`` of ``spec``'s group version."""
        return tuple(self._options_parameters.get(
            schemas.untyped_name(spec.group, spec.version, kind), ()))

    def _add_connect(self, document, prefix, infix, tag, parent, spec, resource, subresource,
                     handler) -> None:
        """The ``CONNECT`` actions of a connect subresource: one route per method, at the
        item path and (``connect_subpath``) at ``/{path}`` below it."""
        kind = parent.kind
        gvk = (spec.group, spec.version, spec.kind)
        scope = "Namespaced" if parent.namespaced else ""
        ns_path = "/namespaces/{namespace}" if parent.namespaced else ""
        path = f"{prefix}{ns_path}/{resource}/{{name}}" + (f"/{subresource}" if subresource
                                                            else "")
        params = (self._params(("namespace",)) if parent.namespaced else ()) + (
            _name_param(spec.kind),)
        options = self._options(spec, spec.kind)
        produced = PRODUCED_OBJECTS.get(getattr(handler, "produces_object", None) or "string",
                                        STRING)
        routes = [(path, params, "")]
        if getattr(handler, "connect_subpath", False):
            routes.append((path + "/{path}", params + (PATH_PARAM,), "WithPath"))
        what = f"{subresource} of {kind}" if subresource else kind
        sub = valid_operation_id(subresource, True)
        for route, route_params, suffix in routes:
            for method in handler.connect_methods:
                self.add(document, route, Operation(
                    method.lower(),
                    # GetOperationIDAndTags puts the group version after the verb.
                    "connect" + infix + method.capitalize() + scope + kind + sub + suffix,
                    f"connect {method} requests to {what}", tag, route_params + options,
                    ((*OK, produced),), ANY_MEDIA, ANY_MEDIA, action="connect", gvk=gvk))

    def _add_resource(self, document, prefix, infix, tag, parent, spec, resource, subresource,
                      verbs, handler) -> None:
        kind = parent.kind
        model = self._model(spec)
        delete_returns_object = _delete_returns_object(handler)
        gvk = (spec.group, spec.version, spec.kind)
        scope = "Namespaced" if parent.namespaced else ""
        # Upstream names the path's name after the storage's own kind (TokenRequest).
        name_param = _name_param(spec.kind)
        scope_params = self._params(("namespace",)) if parent.namespaced else ()
        ns_path = "/namespaces/{namespace}" if parent.namespaced else ""
        collection = f"{prefix}{ns_path}/{resource}"
        item = collection + "/{name}"
        common = self._params(("pretty",))

        def op(method, verb, suffix, description, path_params, params, responses, media,
               action, body="", body_required=False, consumes=ANY_MEDIA):
            operation_id = verb + infix + valid_operation_id(suffix, True)
            return Operation(method, operation_id, description, tag,
                             path_params + common + self._params(params), responses, media,
                             consumes, body, body_required, action, gvk)

        if subresource:
            sub = valid_operation_id(subresource, True)
            path = f"{item}/{subresource}"
            params = scope_params + (name_param,)
            if "get" in verbs:
                # A GET with options (pods/log) takes its options' fields as parameters and
                # may answer something else than its kind, in more media types.
                options_kind = getattr(handler, "get_options_kind", None)
                options = self._options(spec, options_kind) if options_kind else ()
                produced = PRODUCED_OBJECTS.get(getattr(handler, "produces_object", None),
                                                model)
                media = tuple(getattr(handler, "produces_mime_types", ())) + OBJECT_MEDIA
                self.add(document, path, op(
                    "get", "read", scope + kind + sub,
                    f"read {subresource} of the specified {kind}", params + options, (),
                    ((*OK, produced),), media, "get"))
            if "update" in verbs:
                self.add(document, path, op(
                    "put", "replace", scope + kind + sub,
                    f"replace {subresource} of the specified {kind}", params, WRITE_PARAMS,
                    ((*OK, model), (*CREATED, model)), OBJECT_MEDIA, "put", model, True))
            if "patch" in verbs:
                self.add(document, path, op(
                    "patch", "patch", scope + kind + sub,
                    f"partially update {subresource} of the specified {kind}", params,
                    PATCH_PARAMS, ((*OK, model), (*CREATED, model)), OBJECT_MEDIA, "patch",
                    PATCH, True, PATCH_MEDIA))
            if "create" in verbs:
                self.add(document, path, op(
                    "post", "create", scope + kind + sub,
                    f"create {subresource} of{article(kind)}{kind}", params, WRITE_PARAMS,
                    ((*OK, model), (*CREATED, model), (*ACCEPTED, model)), OBJECT_MEDIA,
                    "post", model, True))
            return

        item_params = scope_params + (name_param,)
        list_model = self._list_model(spec) if verbs & {"list", "watch"} else ""
        # A storage that cannot watch lists "objects of kind", not "list or watch".
        list_doc = (f"list or watch objects of kind {kind}" if "watch" in verbs
                    else f"list objects of kind {kind}")
        if "list" in verbs:
            self.add(document, collection, op(
                "get", "list", scope + kind, list_doc,
                scope_params, LIST_OPTIONS, ((*OK, list_model),), STREAM_MEDIA, "list"))
        if "create" in verbs:
            self.add(document, collection, op(
                "post", "create", scope + kind, f"create{article(kind)}{kind}", scope_params,
                WRITE_PARAMS, ((*OK, model), (*CREATED, model), (*ACCEPTED, model)),
                OBJECT_MEDIA, "post", model, True))
        if "deletecollection" in verbs:
            self.add(document, collection, op(
                "delete", "delete", "collection" + scope + kind,
                f"delete collection of {kind}", scope_params, DELETECOLLECTION_PARAMS,
                ((*OK, STATUS),), OBJECT_MEDIA, "deletecollection", DELETE_OPTIONS))
        if "get" in verbs:
            self.add(document, item, op(
                "get", "read", scope + kind, f"read the specified {kind}", item_params, (),
                ((*OK, model),), OBJECT_MEDIA, "get"))
        if "update" in verbs:
            self.add(document, item, op(
                "put", "replace", scope + kind, f"replace the specified {kind}", item_params,
                WRITE_PARAMS, ((*OK, model), (*CREATED, model)), OBJECT_MEDIA, "put", model,
                True))
        if "delete" in verbs:
            deleted = model if delete_returns_object else STATUS
            self.add(document, item, op(
                "delete", "delete", scope + kind, f"delete{article(kind)}{kind}", item_params,
                DELETE_PARAMS, ((*OK, deleted), (*ACCEPTED, deleted)), OBJECT_MEDIA, "delete",
                DELETE_OPTIONS))
        if "patch" in verbs:
            self.add(document, item, op(
                "patch", "patch", scope + kind, f"partially update the specified {kind}",
                item_params, PATCH_PARAMS, ((*OK, model), (*CREATED, model)), OBJECT_MEDIA,
                "patch", PATCH, True, PATCH_MEDIA))
        if "watch" in verbs:
            watch = f"{prefix}/watch{ns_path}/{resource}"
            self.add(document, watch, op(
                "get", "watch", scope + kind + "List",
                f"watch individual changes to a list of {kind}. deprecated: use the 'watch' "
                "parameter with a list operation instead.", scope_params, LIST_OPTIONS,
                ((*OK, WATCH_EVENT),), STREAM_MEDIA, "watchlist"))
            self.add(document, watch + "/{name}", op(
                "get", "watch", scope + kind,
                f"watch changes to an object of kind {kind}. deprecated: use the 'watch' "
                "parameter with a list operation instead, filtered to a single item with the "
                "'fieldSelector' parameter.", item_params, LIST_OPTIONS,
                ((*OK, WATCH_EVENT),), STREAM_MEDIA, "watch"))
        if parent.namespaced:
            # Upstream also serves namespaced lists and watches across all namespaces.
            if "list" in verbs:
                self.add(document, f"{prefix}/{resource}", op(
                    "get", "list", kind + "ForAllNamespaces", list_doc, (), LIST_OPTIONS,
                    ((*OK, list_model),), STREAM_MEDIA, "list"))
            if "watch" in verbs:
                self.add(document, f"{prefix}/watch/{resource}", op(
                    "get", "watch", kind + "ListForAllNamespaces",
                    f"watch individual changes to a list of {kind}. deprecated: use the "
                    "'watch' parameter with a list operation instead.", (), LIST_OPTIONS,
                    ((*OK, WATCH_EVENT),), STREAM_MEDIA, "watchlist"))


    # -- custom resources ------------------------------------------------------------------

    def add_custom_resource_version(self, group: str, version: str, resources: dict) -> None:
        """The paths of one served version of custom resources, as upstream's CRD OpenAPI
        builder declares them (``generateBuilder``): no ``APIResourceList`` and no watch
        paths, every verb, the ``status`` and ``scale`` subresources."""
        infix, tag = group_version_prefix(group, version)
        document = document_key(group, version)
        self.custom_resource_documents.add(document)
        for path in sorted(resources):
            spec = getattr(resources[path], "spec", None)
            if spec is None:
                continue
            resource, _, subresource = path.partition("/")
            parent = getattr(resources.get(resource), "spec", None) or spec
            self._add_custom_resource(document, infix, tag, parent, spec, resource,
                                      subresource)

    def _add_custom_resource(self, document, infix, tag, parent, spec, resource,
                             subresource) -> None:
        kind = parent.kind
        model = self._model(spec)
        gvk = (parent.group, parent.version, kind)
        scope = "Namespaced" if parent.namespaced else ""
        prefix = f"/{document}"
        ns_path = "/namespaces/{namespace}" if parent.namespaced else ""
        collection = f"{prefix}{ns_path}/{resource}"
        name_param = {"name": "name", "in": "path", "description": f"name of the {kind}",
                      "required": True, "schema": {"type": "string", "uniqueItems": True}}
        scope_params = self._params(("namespace",)) if parent.namespaced else ()
        item_params = scope_params + (name_param,)
        common = self._params(("pretty",))

        def op(method, verb, suffix, description, path_params, params, responses, action,
               body="", body_required=False, consumes=CR_MEDIA):
            return Operation(method, verb + infix + valid_operation_id(suffix, True),
                             description, tag, path_params + common + self._params(params),
                             responses, CR_MEDIA, consumes, body, body_required, action, gvk)

        if subresource:
            path = f"{collection}/{{name}}/{subresource}"
            sub = valid_operation_id(subresource, True)
            self.add(document, path, op(
                "get", "read", scope + kind + sub, f"read {subresource} of the specified {kind}",
                item_params, GET_PARAMS, ((*OK, model),), "get"))
            self.add(document, path, op(
                "put", "replace", scope + kind + sub,
                f"replace {subresource} of the specified {kind}", item_params, WRITE_PARAMS,
                ((*OK, model), (*CREATED, model)), "put", model, True))
            self.add(document, path, op(
                "patch", "patch", scope + kind + sub,
                f"partially update {subresource} of the specified {kind}", item_params,
                PATCH_PARAMS, ((*OK, model),), "patch", PATCH, True, CR_PATCH_MEDIA))
            return
        list_model = self._list_model(spec)
        if parent.namespaced:
            self.add(document, f"{prefix}/{resource}", op(
                "get", "list", kind + "ForAllNamespaces", f"list objects of kind {kind}", (),
                LIST_OPTIONS, ((*OK, list_model),), "list"))
        self.add(document, collection, op(
            "get", "list", scope + kind, f"list objects of kind {kind}", scope_params,
            LIST_OPTIONS, ((*OK, list_model),), "list"))
        self.add(document, collection, op(
            "post", "create", scope + kind, f"create{article(kind)}{kind}", scope_params,
            WRITE_PARAMS, ((*OK, model), (*CREATED, model), (*ACCEPTED, model)), "post",
            model, True))
        # Upstream's builder gives deletecollection the list options and no body.
        self.add(document, collection, op(
            "delete", "delete", "collection" + scope + kind, f"delete collection of {kind}",
            scope_params, LIST_OPTIONS, ((*OK, STATUS),), "deletecollection"))
        item = collection + "/{name}"
        self.add(document, item, op(
            "get", "read", scope + kind, f"read the specified {kind}", item_params, GET_PARAMS,
            ((*OK, model),), "get"))
        self.add(document, item, op(
            "put", "replace", scope + kind, f"replace the specified {kind}", item_params,
            WRITE_PARAMS, ((*OK, model), (*CREATED, model)), "put", model, True))
        self.add(document, item, op(
            "delete", "delete", scope + kind, f"delete{article(kind)}{kind}", item_params,
            DELETE_PARAMS, ((*OK, STATUS), (*ACCEPTED, STATUS)), "delete", DELETE_OPTIONS))
        self.add(document, item, op(
            "patch", "patch", scope + kind, f"partially update the specified {kind}",
            item_params, PATCH_PARAMS, ((*OK, model),), "patch", PATCH, True, CR_PATCH_MEDIA))


def _name_param(kind: str) -> dict:
    return {"name": "name", "in": "path", "description": f"name of the {kind}",
            "required": True, "schema": {"type": "string", "uniqueItems": True}}


#: The ``{path}`` of a connect subresource's sub-path routes.
PATH_PARAM = {"name": "path", "in": "path", "description": "path to the resource",
              "required": True, "schema": {"type": "string", "uniqueItems": True}}


def _delete_returns_object(handler) -> bool:
    """Whether DELETE is documented as answering the deleted object (upstream:
    ``MayReturnFullObjectDeleter``): the handler's or its strategy's
    ``delete_returns_object``, else whether the strategy's store returns it."""
    strategy = getattr(getattr(handler, "store", None), "strategy", None)
    for owner in (handler, strategy):
        says = getattr(owner, "delete_returns_object", None)
        if says is not None:
            return bool(says)
    return bool(getattr(strategy, "return_deleted_object", False))


def referenced(operations) -> set:
    """The definition names the operations' bodies and responses refer to."""
    names = set()
    for operation in operations:
        if operation.body:
            names.add(operation.body)
        names.update(model for _, _, model in operation.responses if isinstance(model, str))
    return names

