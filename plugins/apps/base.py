"""The base of the apps kinds' strategies."""

import functools

from kapiserver.fieldmanager import ListTypes, for_kind
from kapiserver.registry.builtin_strategy import BuiltinStrategy


class AppsStrategy(BuiltinStrategy):
    """A ``BuiltinStrategy`` whose normalizing keeps the object's ``metadata`` dict, and
    whose field ownership tracks the pod template at ``template_path`` as upstream's.

    The generic store holds on to ``obj["metadata"]`` across defaulting and
    ``prepare_for_create`` (it sets the uid, creationTimestamp and generation there), while
    ``BuiltinStrategy.normalize`` rebuilds the whole object: normalize into that same dict.
    """

    #: Where the kind embeds a pod template (``None``: it has none).
    template_path: str | None = None

    def normalize(self, obj: dict) -> None:
        meta = obj.get("metadata")
        super().normalize(obj)
        normalized = obj.get("metadata")
        if isinstance(meta, dict) and isinstance(normalized, dict) and normalized is not meta:
            meta.clear()
            meta.update(normalized)
            obj["metadata"] = meta

    @functools.cached_property
    def list_types(self):
        table = for_kind(self.spec.api_version, self.spec.kind)
        if self.template_path is None:
            return table
        # What the derived table lacks of a pod spec: Go's zero PodSpec writes
        # "containers": null (no omitempty), so a create modifies the list rather than
        # adding it (no "." of its own); and the defaulted securityContext is an empty
        # struct behind a pointer, which Go keeps and field ownership records.
        spec = f"{self.template_path}.spec"
        return table | ListTypes(defaults={f"{spec}.containers": None},
                                 verbatim=(f"{spec}.securityContext",))
