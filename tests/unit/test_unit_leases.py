"""Unit tests of the lease strategy."""

from kapiserver.apimachinery.field_errors import aggregate_message
from kapiserver_plugins.coordination.leases import LEASES, LeaseStrategy, validate_lease_spec

STRATEGY = LeaseStrategy(LEASES)


def test_spec_validation():
    assert validate_lease_spec({"leaseDurationSeconds": 1, "leaseTransitions": 0}) == []
    assert aggregate_message(validate_lease_spec({"strategy": "Newest"})) == (
        'spec.strategy.strategy: Unsupported value: "Newest": supported values: '
        '"OldestEmulationVersion"')
    assert aggregate_message(validate_lease_spec({"preferredHolder": "me"})) == (
        "spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined")
    assert validate_lease_spec({"strategy": "example.com/mine", "preferredHolder": "x"}) == []


def test_coordinated_election_fields_dropped_unless_in_use():
    lease = {"metadata": {"name": "l"}, "spec": {"strategy": "OldestEmulationVersion",
                                                 "preferredHolder": "x", "holderIdentity": "h"}}
    STRATEGY.prepare_for_create(lease)
    assert lease["spec"] == {"holderIdentity": "h"}
    old = {"metadata": {"name": "l"}, "spec": {"strategy": "OldestEmulationVersion"}}
    new = {"metadata": {"name": "l"}, "spec": {"strategy": "OldestEmulationVersion",
                                               "preferredHolder": "y"}}
    STRATEGY.prepare_for_update(new, old)
    assert new["spec"]["preferredHolder"] == "y"


def test_table():
    lease = {"metadata": {"name": "l"}, "spec": {"holderIdentity": "me"}}
    assert STRATEGY.table_cells(lease) == ["l", "me", "<unknown>"]
    assert [c["name"] for c in STRATEGY.table_columns()] == ["Name", "Holder", "Age"]
