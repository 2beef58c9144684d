"""Leases: ``ValidateLeaseSpec`` and the NAME/HOLDER/AGE table.

``strategy`` and ``preferredHolder`` belong to coordinated leader election, a 1.32 alpha
feature that is off: as upstream's strategy does, they are dropped unless the stored
lease already uses them.
"""

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import is_qualified_name
from kapiserver.registry.printers import AGE_COLUMN, NAME_COLUMN, age
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.strategy import Strategy

LEASES = ResourceSpec(group="coordination.k8s.io", version="v1", kind="Lease", resource="leases",
                      singular="lease", namespaced=True, storage_version_hash="gqkMMb/YqFM=")
#: ``validLeaseStrategies``.
STRATEGIES = ("OldestEmulationVersion",)
HOLDER_COLUMN = {"name": "Holder", "type": "string", "format": "",
                 "description": "holderIdentity contains the identity of the holder of a "
                                "current lease. If Coordinated Leader Election is used, the "
                                "holder identity must be equal to the elected "
                                "LeaseCandidate.metadata.name field.",
                 "priority": 0}
_COORDINATED = ("strategy", "preferredHolder")


def _spec(obj: dict) -> dict:
    return obj["spec"] if isinstance(obj.get("spec"), dict) else {}


def _drop_disabled_fields(obj: dict, old: dict | None) -> None:
    # CoordinatedLeaderElection is disabled: keep its fields only where already in use.
    if old is not None and any(_spec(old).get(f) for f in _COORDINATED):
        return
    for field in _COORDINATED:
        _spec(obj).pop(field, None)


def validate_lease_spec(spec: dict) -> list:
    """``ValidateLeaseSpec``."""
    path = FieldPath("spec")
    errs = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, (int, float)) and duration <= 0:
        errs.append(FieldError.invalid(path.child("leaseDurationSeconds"), duration,
                                       "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, (int, float)) and transitions < 0:
        errs.append(FieldError.invalid(path.child("leaseTransitions"), transitions,
                                       "must be greater than or equal to 0"))
    strategy = spec.get("strategy")
    if isinstance(strategy, str):
        if "/" not in strategy:
            if strategy not in STRATEGIES:
                errs.append(FieldError.not_supported(path.child("strategy").child("strategy"),
                                                     strategy, STRATEGIES))
        else:
            errs += [FieldError.invalid(path.child("strategy").child("strategy"), strategy, msg)
                     for msg in is_qualified_name(strategy)]
    if spec.get("preferredHolder") and not strategy:
        errs.append(FieldError.forbidden(path.child("preferredHolder"),
                                         "may only be specified if `strategy` is defined"))
    return errs


class LeaseStrategy(Strategy):
    """``pkg/registry/coordination/lease`` strategy and ``ValidateLease``."""

    def prepare_for_create(self, obj):
        super().prepare_for_create(obj)
        _drop_disabled_fields(obj, None)

    def prepare_for_update(self, new, old):
        super().prepare_for_update(new, old)
        _drop_disabled_fields(new, old)

    def validate(self, obj):
        return super().validate(obj) + validate_lease_spec(_spec(obj))

    def table_columns(self):
        return [NAME_COLUMN, HOLDER_COLUMN, AGE_COLUMN]

    def table_cells(self, obj):
        meta = obj.get("metadata") or {}
        return [meta.get("name", ""), _spec(obj).get("holderIdentity") or "",
                age(meta.get("creationTimestamp"))]
