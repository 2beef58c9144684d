"""ResourceSpec: what discovery, the REST handler and the store need to know of a resource."""

from __future__ import annotations

from dataclasses import dataclass, field

from .keys import key_prefix

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass
class ResourceSpec:
    """One resource of one group version (``configmaps`` in ``v1``).

    ``verbs`` are listed in discovery and are the only ones served; ``short_names`` and
    ``categories`` let ``kubectl get cm`` and ``kubectl get all`` find it.

    ``openapi_definitions`` and ``openapi_model`` give ``/openapi/v2`` and ``/openapi/v3``
    the schema of a kind kapiserver does not ship (built-in kinds need neither); a
    resource without one is described as an object that keeps unknown fields. The same
    schema decides which fields the kind has (``fieldValidation``: unknown ones are dropped,
    warned about or refused) unless the protobuf tables know the kind.
    """

    group: str
    version: str
    kind: str
    resource: str
    singular: str
    namespaced: bool
    verbs: tuple[str, ...] = ALL_VERBS
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    list_kind: str = ""
    #: Field selectors upstream supports for this resource besides metadata.name/namespace.
    selectable_fields: tuple[str, ...] = ()
    storage_version_hash: str = ""
    subresources: dict = field(default_factory=dict)
    #: OpenAPI v3 schemas by definition name (``com.example.v1.Widget``), as
    #: ``/openapi/v3`` serves them: references are ``#/components/schemas/<name>`` and may
    #: name the shipped definitions (``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta``).
    #: A kind's definition carries ``x-kubernetes-group-version-kind``.
    openapi_definitions: dict = field(default_factory=dict)
    #: The definitions ``/openapi/v2`` shows otherwise than v3 (still in v3's form; a custom
    #: resource's schema as upstream's ``ToStructuralOpenAPIV2`` leaves it).
    openapi_v2_definitions: dict = field(default_factory=dict)
    #: The definition name of ``kind``; by default the one whose
    #: ``x-kubernetes-group-version-kind`` names this group, version and kind.
    openapi_model: str = ""
    #: The definitions whose Go types decode themselves (``UnmarshalJSON``), which their
    #: schemas cannot show: each name maps to the definition its value is decoded into
    #: without strictness (unknown fields inside dropped, never reported), or to ``None``
    #: when the JSON is kept as sent (see ``runtime.unknown_fields.SchemaFields``).
    openapi_unmarshalers: dict = field(default_factory=dict)

    def __post_init__(self):
        if not self.list_kind:
            self.list_kind = f"{self.kind}List"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def key_prefix(self, namespace: str = "") -> str:
        """The storage prefix, in kube-apiserver's layout (``registry.keys``):
        ``/registry/<resource prefix>/[namespace/]``."""
        return key_prefix(self.group, self.resource, namespace if self.namespaced else "")

    def key(self, namespace: str, name: str) -> str:
        return f"{self.key_prefix(namespace)}{name}"
