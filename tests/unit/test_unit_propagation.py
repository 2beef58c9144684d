"""Deletion propagation: which garbage-collector finalizers a DELETE leaves on an object."""

import pytest

from kapiserver.registry.propagation import (DELETE_DEPENDENTS, ORPHAN_DEPENDENTS, UNSUPPORTED,
                                             gc_finalizers, validate_delete_options,
                                             validate_dry_run)


@pytest.mark.parametrize("finalizers, options, default, expected", [
    # nothing asked: the kind's default, unless the object says otherwise
    ([], None, DELETE_DEPENDENTS, None),
    ([], {}, ORPHAN_DEPENDENTS, ["orphan"]),
    (["orphan"], {}, DELETE_DEPENDENTS, None),
    (["foregroundDeletion"], {}, ORPHAN_DEPENDENTS, None),
    # the policy overrides the object's finalizers and the default
    ([], {"propagationPolicy": "Orphan"}, DELETE_DEPENDENTS, ["orphan"]),
    ([], {"propagationPolicy": "Foreground"}, DELETE_DEPENDENTS, ["foregroundDeletion"]),
    ([], {"propagationPolicy": "Background"}, ORPHAN_DEPENDENTS, None),
    (["a", "orphan"], {"propagationPolicy": "Foreground"}, DELETE_DEPENDENTS,
     ["a", "foregroundDeletion"]),
    (["foregroundDeletion", "b"], {"propagationPolicy": "Background"}, DELETE_DEPENDENTS,
     ["b"]),
    # the deprecated option: true orphans, false deletes in the background
    ([], {"orphanDependents": True}, DELETE_DEPENDENTS, ["orphan"]),
    (["orphan"], {"orphanDependents": False}, ORPHAN_DEPENDENTS, []),
    (["foregroundDeletion"], {"orphanDependents": False}, DELETE_DEPENDENTS, []),
    # events: nothing is touched
    ([], {"propagationPolicy": "Orphan"}, UNSUPPORTED, None),
    (["orphan"], {"propagationPolicy": "Background"}, UNSUPPORTED, []),
])
def test_finalizers(finalizers, options, default, expected):
    assert gc_finalizers(finalizers, options, default) == expected


def test_both_options_and_an_unknown_policy_are_refused_as_upstream_words_it():
    errors = validate_delete_options({"propagationPolicy": "Sideways", "orphanDependents": True})
    assert [str(e) for e in errors] == [
        'propagationPolicy: Invalid value: "Sideways": orphanDependents and '
        'deletionPropagation cannot be both set',
        'propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", '
        '"Background", "Orphan", "nil"']
    assert validate_delete_options({"propagationPolicy": "Orphan"}) == []
    assert [str(e) for e in validate_dry_run(["All", "x"])] == [
        'dryRun: Unsupported value: []string{"All", "x"}: supported values: "All"']


def test_orphaning_by_default_is_for_requests_only():
    from kapiserver.registry.strategy import Strategy

    class OrphanByDefault(Strategy):
        default_garbage_collection_policy = ORPHAN_DEPENDENTS

    strategy = OrphanByDefault(spec=None)
    job = {"metadata": {"name": "j"}}
    assert strategy.gc_finalizers(job, {}) == ["orphan"]  # a DELETE that says nothing
    assert strategy.gc_finalizers(job, None) is None  # a delete from inside the server
