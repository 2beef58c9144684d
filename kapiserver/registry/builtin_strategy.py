"""BuiltinStrategy: the Strategy of a kind kube-apiserver serves from Go types.

What upstream gets from its Go types and generated code, a built-in kind gets here from
data: objects are normalized as Go's JSON round trip leaves them (fields in struct order,
empty ``omitempty`` fields gone, non-pointer structs present); strategic merge keys and
field-ownership list types come from the kind's OpenAPI extensions; the status
subresource and the Table columns from ``builtin_resources.json``. A kind's own module
subclasses it and writes only what is truly its own: ``set_defaults`` (``SetDefaults_*``),
``on_create``/``on_update`` (``PrepareForCreate``/``PrepareForUpdate``), ``validate`` and
``validate_update``, ``table_cells`` and ``selectable_fields``.

``status_strategy()`` gives the strategy of ``<resource>/status`` (upstream's
``statusStrategy``: only the status is written) and ``scale`` (``ScaleAccessor``) says how
``<resource>/scale`` reads and writes replicas.
"""

from __future__ import annotations

import copy
import functools

from . import builtin
from .strategy import Strategy


@functools.lru_cache(maxsize=256)
def builtin_merge_keys(group: str, version: str, kind: str) -> dict:
    """Strategic merge keys of a built-in kind, from its OpenAPI extensions (cached)."""
    from ..openapi import extensions, schemas

    definitions, models = schemas.builtin_index()
    model = models.get((group, version, kind))
    if model is None:
        return {}
    return dict(extensions.derive(definitions, model).merge_keys)


def normalize(obj: dict, api_version: str, kind: str) -> None:
    """Rewrite ``obj`` in place as Go's JSON decode and encode of its kind leave it."""
    from ..runtime.protobuf import default_codec

    codec = default_codec()
    if not codec.known(api_version, kind):
        return
    normalized = codec.normalize(obj)
    # The store keeps a reference to the object's metadata across strategy calls: refill
    # that same dict rather than replace it.
    meta = obj.get("metadata")
    obj.clear()
    obj.update(normalized)
    if isinstance(meta, dict) and isinstance(normalized.get("metadata"), dict):
        meta.clear()
        meta.update(normalized["metadata"])
        obj["metadata"] = meta


class ScaleAccessor:
    """How ``<resource>/scale`` reads and writes a kind's replicas (``ScaleREST``).

    ``spec_path`` and ``status_path`` name the replica counts; ``selector(obj)`` is the
    ``status.selector`` string of the Scale (a label selector in its text form).
    """

    def __init__(self, spec_path: str = "spec.replicas", status_path: str = "status.replicas"):
        self.spec_path = spec_path.split(".")
        self.status_path = status_path.split(".")

    @staticmethod
    def _get(obj, path):
        for part in path:
            if not isinstance(obj, dict):
                return None
            obj = obj.get(part)
        return obj

    def spec_replicas(self, obj: dict) -> int:
        value = self._get(obj, self.spec_path)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def status_replicas(self, obj: dict) -> int:
        value = self._get(obj, self.status_path)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def set_replicas(self, obj: dict, replicas: int) -> None:
        target = obj
        for part in self.spec_path[:-1]:
            if not isinstance(target.get(part), dict):
                target[part] = {}
            target = target[part]
        target[self.spec_path[-1]] = replicas

    def selector(self, obj: dict) -> str:
        """The selector of the Scale's status: the text of the ``metav1.LabelSelector`` at
        ``spec.selector`` by default (``LabelSelectorAsSelector(...).String()``)."""
        from ..apimachinery.labels import selector_from_label_selector

        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        selector = spec.get("selector")
        return str(selector_from_label_selector(selector)) if isinstance(selector, dict) else ""


class BuiltinStrategy(Strategy):
    """A built-in kind's strategy; see the module docstring for what a subclass adds."""

    #: ``<resource>/scale`` reads and writes replicas so (``None``: no scale subresource).
    scale: ScaleAccessor | None = None

    def __init__(self, spec, ttl: float = 0):
        super().__init__(spec, ttl)
        info = builtin.resource_info(spec.group, spec.version, spec.resource)
        self.status_subresource = "status" in info.get("subresources", {})

    # -- data derived from the kind's definitions ---------------------------------------

    @functools.cached_property
    def merge_keys(self) -> dict:
        return builtin_merge_keys(self.spec.group, self.spec.version, self.spec.kind)

    def normalize(self, obj: dict) -> None:
        """``obj`` as Go's JSON round trip of the kind leaves it (in place)."""
        normalize(obj, self.spec.api_version, self.spec.kind)

    def table_columns(self) -> list[dict]:
        return builtin.table_columns(self.spec)

    # -- hooks for the kind's own module --------------------------------------------------

    def set_defaults(self, obj: dict) -> None:
        """Upstream's ``SetDefaults_*`` of the kind and of what it embeds."""

    def on_create(self, obj: dict) -> None:
        """The kind's ``PrepareForCreate`` beyond clearing the status."""

    def on_update(self, new: dict, old: dict) -> None:
        """The kind's ``PrepareForUpdate`` beyond keeping the status."""

    # -- the Strategy ----------------------------------------------------------------------

    # Objects are normalized as they are decoded, after the kind's defaults (when it has
    # any: else the decoded form stands) and after its preparation (which also writes
    # what preparing removed, like a status Go writes whatever its value).

    def apply_defaults(self, obj: dict) -> None:
        self.normalize(obj)  # the decoding (what the REST handler does for other kinds)
        if self._overrides("set_defaults"):
            self.set_defaults(obj)
            self.normalize(obj)

    def prepare_for_create(self, obj: dict) -> None:
        super().prepare_for_create(obj)
        self.on_create(obj)
        self.normalize(obj)

    def prepare_for_update(self, new: dict, old: dict) -> None:
        super().prepare_for_update(new, old)
        self.on_update(new, old)
        self.normalize(new)

    def _overrides(self, hook: str) -> bool:
        return getattr(type(self), hook) is not getattr(BuiltinStrategy, hook)

    # -- subresources ------------------------------------------------------------------------

    def status_strategy(self) -> Strategy:
        """The strategy of ``<resource>/status`` (a ``StatusStrategy`` over this one)."""
        return StatusStrategy(self)

    def prepare_status_update(self, new: dict, old: dict) -> None:
        """Upstream's ``statusStrategy.PrepareForUpdate``: a status write keeps everything
        but the status and the metadata from the stored object. Kinds whose status
        strategy also keeps metadata (labels, owner references) extend it."""
        status = new.get("status")
        for key in list(new):
            if key not in ("metadata", "status", "kind", "apiVersion"):
                del new[key]
        for key, value in old.items():
            if key not in ("metadata", "status", "kind", "apiVersion"):
                new[key] = copy.deepcopy(value)
        if status is None:
            new.pop("status", None)

    def validate_status_update(self, new: dict, old: dict) -> list:
        """The field errors of a status write (``ValidateXStatusUpdate``): metadata, then
        the kind's status rules (``validate_status``)."""
        from ..apimachinery import validation

        check = (validation.validate_core_object_meta_update if self.spec.group == ""
                 else validation.validate_object_meta_update)
        return check(new.get("metadata") or {}, old.get("metadata") or {}) + \
            self.validate_status(new, old)

    def validate_status(self, new: dict, old: dict) -> list:
        """The kind's own status rules."""
        return []


class StatusStrategy(Strategy):
    """``<resource>/status`` of a built-in kind: the object's status is written, nothing
    else (upstream's ``<kind>StatusStrategy``); defaults, table and the rest are the
    main strategy's."""

    def __init__(self, main: BuiltinStrategy):
        super().__init__(main.spec, main.ttl)
        self.main = main
        self.has_generation = main.has_generation
        self.status_subresource = True

    # The main strategy's, derived on the kind's first patch or write, not at install.

    @property
    def merge_keys(self) -> dict | None:
        return self.main.merge_keys

    @property
    def list_types(self):
        return self.main.list_types

    @property
    def apply_shape(self):
        return self.main.apply_shape

    def apply_defaults(self, obj: dict) -> None:
        self.main.apply_defaults(obj)

    def prepare_for_update(self, new: dict, old: dict) -> None:
        self.main.prepare_status_update(new, old)
        self.main.normalize(new)

    def validate_update(self, new: dict, old: dict) -> list:
        return self.main.validate_status_update(new, old)

    def spec_changed(self, new: dict, old: dict) -> bool:
        return False

    def selectable_fields(self, obj: dict) -> dict:
        return self.main.selectable_fields(obj)

    def table_columns(self) -> list[dict]:
        return self.main.table_columns()

    def table_cells(self, obj: dict) -> list:
        return self.main.table_cells(obj)

    def name_validator(self):
        return self.main.name_validator()

    def deletion_pending(self, obj: dict) -> bool:
        return self.main.deletion_pending(obj)

    def to_storage(self, obj: dict) -> dict:
        return self.main.to_storage(obj)

    def from_storage(self, obj: dict) -> dict:
        return self.main.from_storage(obj)
