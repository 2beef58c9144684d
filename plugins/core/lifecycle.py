"""NamespaceLifecycle admission and the system namespaces every server starts with."""

import os

from kapiserver import errors
from kapiserver.admission import CREATE, DELETE, AdmissionPlugin
from kapiserver.admission.informers import informers_for

#: Seconds a namespace read from the main server is believed (upstream reads an informer).
REMOTE_NAMESPACE_TTL = 1.0

#: Namespaces that exist from the start and may never be deleted (upstream's immortal set).
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


#: ``accessReviewResources``: asked about a namespace, not written into it — they may name
#: one that does not exist.
ACCESS_REVIEW_RESOURCES = frozenset({("authorization.k8s.io", "localsubjectaccessreviews")})


class NamespaceLifecycle(AdmissionPlugin):
    """Refuse content in missing or terminating namespaces and deletion of system ones.

    Upstream's ``plugin/pkg/admission/namespace/lifecycle``, with its messages; like it, a
    mutating plugin (``Admit``), so it refuses before the plugins after it (ServiceAccount,
    LimitRanger) look anything up in such a namespace. The namespaces are this server's, or, with ``--kubeconfig`` (an extension server), the
    main server's, as an upstream extension server's informer reads them.
    """

    name = "NamespaceLifecycle"
    operations = frozenset({CREATE, DELETE})

    def __init__(self, server):
        self.server = server
        kubeconfig = server.config.get("kubeconfig")
        self.remote = RemoteNamespaces(server.config) if kubeconfig else None

    def _namespace(self, name: str) -> dict:
        if self.remote is not None:
            return self.remote.get(name)
        # Upstream reads a namespace lister; here the informer has caught up with every
        # write made before the request (no namespace created just before is missed).
        obj = informers_for(self.server).informer("", "namespaces").get("", name)
        if obj is None:
            raise errors.NotFound.for_object("", "namespaces", name)
        return obj

    def admit(self, attributes):
        spec = attributes.resource
        if attributes.operation == DELETE:
            if spec.kind == "Namespace" and spec.group == "" and \
                    attributes.name in SYSTEM_NAMESPACES:
                raise errors.Forbidden.for_resource("", "namespaces", attributes.name,
                                                    "this namespace may not be deleted")
            return
        if not spec.namespaced or (spec.group, spec.resource) in ACCESS_REVIEW_RESOURCES:
            return
        namespace = attributes.namespace
        try:
            obj = self._namespace(namespace)
        except errors.NotFound:
            raise errors.NotFound.for_object("", "namespaces", namespace) from None
        if (obj.get("status") or {}).get("phase") == "Terminating":
            name = (attributes.object.get("metadata") or {}).get("name", "")
            error = errors.Forbidden.for_resource(
                spec.group, spec.resource, name,
                f"unable to create new content in namespace {namespace} because it is being "
                "terminated")
            error.details["causes"] = [{"reason": "NamespaceTerminating",
                                        "message": f"namespace {namespace} is being terminated",
                                        "field": "metadata.namespace"}]
            raise error


class RemoteNamespaces:
    """The main server's namespaces, read through ``--kubeconfig`` (cached briefly)."""

    def __init__(self, config):
        from kapiserver.webhookclient import TTLCache, WebhookClient

        self.client = WebhookClient.from_kubeconfig(
            config.kubeconfig, os.path.join(config.data_dir, "webhooks"), "kubeconfig")
        self.cache = TTLCache()

    def get(self, name: str) -> dict:
        from kapiserver.webhookclient import WebhookError

        cached = self.cache.get(name)
        if cached is not None:
            namespace = cached[1]
        else:
            try:
                namespace = self.client.for_path(f"/api/v1/namespaces/{name}").get()
            except WebhookError as err:
                if err.status_code != 404:
                    raise errors.InternalError(f"unable to read namespace {name} on the main "
                                               f"server: {err}") from None
                namespace = None
            self.cache.put(name, namespace, REMOTE_NAMESPACE_TTL)
        if namespace is None:
            raise errors.NotFound.for_object("", "namespaces", name)
        return namespace


def ensure_system_namespaces(server) -> None:
    """Create the system namespaces that are missing (post-start hook; any worker may race)."""
    namespaces = server.registries[("", "namespaces")]
    manage = namespaces.field_manager("kube-apiserver")
    for name in SYSTEM_NAMESPACES:
        try:
            namespaces.get("", name)
        except errors.NotFound:
            try:
                namespaces.create({"apiVersion": "v1", "kind": "Namespace",
                                   "metadata": {"name": name}}, manage=manage)
            except errors.AlreadyExists:
                pass
