"""NamespaceLifecycle admission and the system namespaces every server starts with."""

from kapiserver import errors
from kapiserver.admission import CREATE, DELETE, AdmissionPlugin

#: Namespaces that exist from the start and may never be deleted (upstream's immortal set).
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class NamespaceLifecycle(AdmissionPlugin):
    """Refuse content in missing or terminating namespaces and deletion of system ones.

    Upstream's ``plugin/pkg/admission/namespace/lifecycle``, with its messages.
    """

    name = "NamespaceLifecycle"
    operations = frozenset({CREATE, DELETE})

    def __init__(self, server):
        self.server = server

    def validate(self, attributes):
        spec = attributes.resource
        if attributes.operation == DELETE:
            if spec.kind == "Namespace" and spec.group == "" and \
                    attributes.name in SYSTEM_NAMESPACES:
                raise errors.Forbidden.for_resource("", "namespaces", attributes.name,
                                                    "this namespace may not be deleted")
            return
        if not spec.namespaced:
            return
        namespaces = self.server.registries[("", "namespaces")]
        namespace = attributes.namespace
        try:
            obj = namespaces.get("", namespace)
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
